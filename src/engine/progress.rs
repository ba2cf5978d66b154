//! Progress events from the engine. The CLI draws them as bars on a
//! terminal; tests and `--json` runs ignore them.

use crate::results::CaseRecord;

/// Receives progress events; every method has an empty default.
pub trait Progress {
    /// A case is about to start (`index` from 0 of `total`).
    fn case_started(&self, _index: usize, _total: usize, _label: &str) {}
    /// A trial ended; `counted` is how many counted trials exist now (0 for
    /// the warm-up), `primary` the primary metric's value and unit.
    fn trial_finished(&self, _counted: u32, _warmup: bool, _primary: f64, _unit: &str) {}
    /// The case ended (successfully or not).
    fn case_finished(&self, _record: &CaseRecord) {}
}

/// Progress that shows nothing.
pub struct Silent;
impl Progress for Silent {}

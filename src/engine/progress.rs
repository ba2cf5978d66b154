//! Progress events from the engine. The CLI draws them as bars on a
//! terminal; tests and `--json` runs ignore them.

use super::estimate::PlanEstimate;
use crate::results::CaseRecord;

/// Receives progress events; every method has an empty default.
pub trait Progress {
    /// The run is about to start with this plan of its time.
    fn planned(&self, _estimate: &PlanEstimate) {}
    /// A round over `cases` cases is about to start (`round` from 0).
    fn round_started(&self, _round: u32, _cases: usize) {}
    /// A case's round is about to start (`index` from 0 of `total` in this
    /// round).
    fn case_started(&self, _index: usize, _total: usize, _label: &str) {}
    /// A trial ended; `counted` is how many counted trials exist now (0 for
    /// the warm-up), `primary` the primary metric's value and unit.
    fn trial_finished(&self, _counted: u32, _warmup: bool, _primary: f64, _unit: &str) {}
    /// The case's round ended (successfully or not); `record` holds every
    /// round of the case so far.
    fn case_finished(&self, _record: &CaseRecord) {}
}

/// Progress that shows nothing.
pub struct Silent;
impl Progress for Silent {}

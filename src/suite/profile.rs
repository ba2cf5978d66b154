//! What a profile is: a named list of cases with the repetition rule it
//! runs under, built in (`profiles.rs`) or read from a battery file
//! (`battery.rs`).

use crate::engine::{Methodology, Workload};

use super::battery_file::BatteryFile;

/// One line of a profile: a workload and the parameters it sets (each
/// value may be a comma-separated sweep, as on the command line). The
/// workload is the registry's own value, not its id, so that the compiler
/// checks every profile's names.
#[derive(Clone)]
pub struct Entry {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// `name=value[,value...]` assignments.
    pub params: Vec<String>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("workload", &self.workload.id())
            .field("params", &self.params)
            .finish()
    }
}

/// A named list of cases with the repetition rule it runs under.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Name used on the command line.
    pub name: String,
    /// What the profile is for.
    pub summary: String,
    /// The cases.
    pub entries: Vec<Entry>,
    /// The repetition rule (command-line flags override it).
    pub methodology: Methodology,
    /// The battery file it was read from; `None` for a built-in one.
    pub file: Option<BatteryFile>,
}

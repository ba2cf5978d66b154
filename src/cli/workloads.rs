//! `sledge workloads` and `sledge profiles`.

use super::output::{ExitStatus, print};
use crate::{report, suite, workloads};

/// Prints every workload with its parameters.
pub fn execute() -> anyhow::Result<ExitStatus> {
    print(&report::listing::workloads(&workloads::all()))?;
    Ok(ExitStatus::Success)
}

/// Prints the built-in profiles.
pub fn execute_profiles() -> anyhow::Result<ExitStatus> {
    print(&report::listing::profiles(&suite::profiles::all()))?;
    Ok(ExitStatus::Success)
}

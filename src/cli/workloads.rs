//! `sledge workloads` and `sledge profiles`.

use super::output::{ExitStatus, print};
use crate::{report, suite, workloads};

/// Prints every workload with its parameters.
pub fn execute() -> anyhow::Result<ExitStatus> {
    print(&report::listing::workloads(&workloads::all()))?;
    Ok(ExitStatus::Success)
}

/// Prints the built-in profiles and the user's battery files.
pub fn execute_profiles() -> anyhow::Result<ExitStatus> {
    let (profiles, unreadable) = suite::profiles::all_with_files();
    print(&report::listing::profiles(&profiles))?;
    for why in unreadable {
        crate::say!("warning: battery file {why}");
    }
    Ok(ExitStatus::Success)
}

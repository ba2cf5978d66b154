//! `sledge probe`.

use clap::Args;

use super::output::{ExitStatus, print};
use crate::visible::Escaped;
use crate::{probe, report};

/// Options of `sledge probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Print the inventory as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the host inventory.
pub fn execute(args: ProbeArgs) -> anyhow::Result<ExitStatus> {
    let cwd = std::env::current_dir()?;
    let host = probe::probe(&cwd);
    if args.json {
        print(&(serde_json::to_string_pretty(&host)? + "\n"))?;
    } else {
        print(&report::listing::host(&Escaped::new(host)))?;
    }
    Ok(ExitStatus::Success)
}

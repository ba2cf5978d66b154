//! `sledge probe`.

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, print};
use crate::probe;
use crate::report::export::{Format, View};

/// Options of `sledge probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    format: FormatArgs<ProbeFormats>,
}

/// The formats of `sledge probe`: `--json`.
#[derive(Debug)]
pub struct ProbeFormats;

impl FormatSet for ProbeFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print the inventory as JSON",
    }];
}

/// Prints the host inventory.
pub fn execute(args: ProbeArgs) -> anyhow::Result<ExitStatus> {
    let cwd = std::env::current_dir()?;
    let host = probe::probe(&cwd);
    print(&args.format.format().render(&View::Host(&host))?)?;
    Ok(ExitStatus::Success)
}

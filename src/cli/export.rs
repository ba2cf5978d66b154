//! `sledge export RUN... [-o FILE]`.

use std::path::PathBuf;

use clap::Args;

use super::open_runs::{OpenRuns, open_runs};
use super::output::{ExitStatus, print};
use super::output_file::write_file_atomically;
use crate::report::portable;
use crate::store::StoreLocation;

/// Options of `sledge export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The runs: ids, `last`, `last~N` or UUIDs.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Write the document to FILE instead of standard output (`-` is
    /// standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Indent the JSON for people to read (about twice the size). Without
    /// it the document is compact: one line.
    #[arg(long)]
    pretty: bool,
}

/// Writes the runs as one portable JSON document.
pub fn execute(args: ExportArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let OpenRuns { output, runs, .. } = open_runs(store, &args.runs, args.output)?;
    let exported = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let document = portable::export(&runs, &exported, args.pretty)?;
    match output {
        Some(path) => {
            write_file_atomically(&path, &document)?;
            crate::say!(
                "exported {} run{} to {}",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                path.display()
            );
        }
        None => print(&document)?,
    }
    Ok(ExitStatus::Success)
}

//! `sledge report RUN... -o report.html`.

use std::path::PathBuf;

use clap::Args;

use super::open_runs::{OpenRuns, open_runs};
use super::output::{ExitStatus, print};
use super::output_file::write_file_atomically;
use crate::analysis::pivot_grouping::PivotChoice;
use crate::analysis::report_view::report_view;
use crate::report::html;
use crate::store::StoreLocation;

/// Options of `sledge report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The runs (ids, `last`, `last~N` or UUIDs); the first is the baseline
    /// the others are compared with.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Write the HTML to FILE instead of standard output (`-` is standard
    /// output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Show each sweep over two parameters as a table and one chart, ROW
    /// down (a line each) and COLUMN across (`size,concurrency`), for
    /// every workload that varies both [default: `auto`, each workload's
    /// own table]
    #[arg(long, value_name = "ROW,COLUMN")]
    pivot: Option<PivotChoice>,
    /// Add a history section: for each case of the runs, every stored run
    /// of it on the same host over time, with its change points (as
    /// `sledge history` finds them).
    #[arg(long)]
    history: bool,
}

/// Writes one self-contained HTML report of the runs.
pub fn execute(args: ReportArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let OpenRuns {
        store,
        output,
        ids,
        runs,
    } = open_runs(store, &args.runs, args.output)?;
    let defaults: Vec<_> = runs.iter().map(crate::suite::defaults_for).collect();
    let generated = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let noise = crate::analysis::noise_history::StoreNoise::new(&store, ids);
    let choice = args.pivot.unwrap_or_default();
    let histories = if args.history {
        crate::analysis::change_points::for_runs(&store, &runs)?
    } else {
        Vec::new()
    };
    let view = report_view(&runs, &defaults, &noise, &choice, &histories);
    let page = html::render(&view, &generated)?;
    if choice != PivotChoice::Natural && !view.has_pivot_tables() {
        crate::say!(
            "note: --pivot {choice}: no run has two values at least of both parameters, so there is no table"
        );
    }
    match output {
        Some(path) => {
            write_file_atomically(&path, &page)?;
            crate::say!(
                "wrote the report of {} run{} to {}",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                path.display()
            );
        }
        None => print(&page)?,
    }
    Ok(ExitStatus::Success)
}

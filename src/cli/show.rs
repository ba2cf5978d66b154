//! `sledge show RUN`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, MetricsShown, RunView, open_existing_store, print, run_text};
use crate::report;
use crate::visible::Escaped;

/// Options of `sledge show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: an id from `sledge list`, `last`, or `last~N`.
    #[arg(default_value = "last")]
    run: String,
    /// Print the run as JSON (the documented shape).
    #[arg(long, group = "format")]
    json: bool,
    /// Print one CSV row per metric.
    #[arg(long, group = "format")]
    csv: bool,
    /// Print a Markdown table.
    #[arg(long, group = "format")]
    markdown: bool,
    /// Every case, one line each with its headline, scaling blocks for
    /// sweeps, and every warning whole, instead of the one-screen
    /// scorecard.
    #[arg(long)]
    full: bool,
    /// The metrics: `headline` (the first metric of each case: the
    /// scorecard, or with --full a line per case) or `all` (every metric
    /// of every case).
    #[arg(long, value_enum, default_value_t)]
    metrics: MetricsShown,
}

/// Prints one stored run.
pub fn execute(args: ShowArgs, store: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let store = open_existing_store(store)?;
    let id = store.resolve_run(&args.run)?;
    let run = store.load_run(id)?;
    let text = if args.json {
        report::export::json(&run)?
    } else {
        // Every other format is for people: the run's text escaped.
        let run = Escaped::new(run);
        if args.csv {
            report::export::csv(&run)?
        } else if args.markdown {
            report::export::markdown(&run)
        } else {
            run_text(&run, RunView::from_flags(args.full, args.metrics))
        }
    };
    print(&text)?;
    Ok(ExitStatus::Success)
}

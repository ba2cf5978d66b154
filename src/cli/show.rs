//! `sledge show RUN`.

use std::path::PathBuf;

use clap::Args;

use super::output::{
    ExitStatus, MetricsShown, RunView, open_existing_store, print, run_text, warn_if_no_pivot_table,
};
use crate::report;
use crate::report::pivot::PivotChoice;
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
    /// Show each sweep over two parameters as a table, ROW down and
    /// COLUMN across (`algorithm,block_size`), for every workload that
    /// varies both; `auto`: each workload's own table (its sweeps over
    /// them show one anyway). With --csv the tables replace the rows.
    #[arg(long, value_name = "ROW,COLUMN", conflicts_with = "json")]
    pivot: Option<PivotChoice>,
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
            match &args.pivot {
                Some(choice) => {
                    warn_if_no_pivot_table(&run, choice);
                    report::pivot::csv(&report::pivot::tables(&run, choice))?
                }
                None => report::export::csv(&run)?,
            }
        } else if args.markdown {
            let choice = args.pivot.clone().unwrap_or_default();
            if args.pivot.is_some() {
                warn_if_no_pivot_table(&run, &choice);
            }
            let mut text = report::export::markdown(&run);
            text.push_str(&report::pivot::markdown(&report::pivot::tables(
                &run, &choice,
            )));
            text
        } else {
            run_text(
                &run,
                RunView::from_flags(args.full, args.metrics),
                args.pivot.as_ref(),
            )
        }
    };
    print(&text)?;
    Ok(ExitStatus::Success)
}

//! `sledge show RUN`.

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, MetricsShown, open_existing_store, print, run_in, run_view};
use crate::analysis::pivot_grouping::PivotChoice;
use crate::report::export::{Format, RunShown};
use crate::store::StoreLocation;

/// Options of `sledge show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: an id from `sledge list`, `last`, or `last~N`.
    #[arg(default_value = "last")]
    run: String,
    #[command(flatten)]
    format: FormatArgs<ShowFormats>,
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

/// The formats of `sledge show`: all three, one at a time.
#[derive(Debug)]
pub struct ShowFormats;

impl FormatSet for ShowFormats {
    const FLAGS: &'static [FormatFlag] = &[
        FormatFlag {
            format: Format::Json,
            help: "Print the run as JSON (the documented shape)",
        },
        FormatFlag {
            format: Format::Csv,
            help: "Print one CSV row per metric",
        },
        FormatFlag {
            format: Format::Markdown,
            help: "Print a Markdown table",
        },
    ];
}

/// Prints one stored run.
pub fn execute(args: ShowArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let store = open_existing_store(store)?;
    let id = store.resolve_run(&args.run)?;
    let run = store.load_run(id)?;
    let shown = RunShown {
        view: run_view(args.full, args.metrics),
        pivot: args.pivot.as_ref(),
    };
    let text = run_in(&run, args.format.format(), shown)?;
    print(&text)?;
    Ok(ExitStatus::Success)
}

//! `sledge history WORKLOAD [--host H] [-p k=v ...]`.

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, UsageError, open_existing_store, print};
use crate::analysis::history_request::{BadHistoryRequest, HistoryRequest};
use crate::report::export::{Format, View};
use crate::store::StoreLocation;

/// Options of `sledge history`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each case's runs on the host, oldest first, as a sparkline and a table, with \
its change points: where the series moved to another level and stayed, found \
by E-Divisive means (Matteson and James) with Welch's t-test between the two \
sides as its significance test (candidates at p < 0.001, kept at p < \
0.0003 against their final neighbours), as Hunter / Apache Otava do; at \
least 3 runs on each side. Each change point gives the medians before and \
after, their ratio, and the inventory facts that differ between the run \
before it and the run after it (kernel, microcode, mitigations, transparent \
huge pages, governor, sledge and workload versions...).

Examples:
  sledge history cpu.primes
  sledge history memory.stream -p threads=1 --host db1
  sledge history cpu.primes --json")]
pub struct HistoryArgs {
    /// The workload (`cpu.primes`); `-p` narrows it to some of its cases.
    workload: String,
    /// The host: its name, or for a fleet's runs the name `--hosts` gave it
    /// [default: this machine's host name].
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Only the cases with this parameter value (`-p threads=1`; a count
    /// given as `all` is `all`); repeat for several.
    #[arg(short, long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// The metric to follow [default: each case's headline metric].
    #[arg(long, value_name = "NAME")]
    metric: Option<String>,
    #[command(flatten)]
    format: FormatArgs<HistoryFormats>,
}

/// The formats of `sledge history`: `--json`.
#[derive(Debug)]
pub struct HistoryFormats;

impl FormatSet for HistoryFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print the history as JSON",
    }];
}

/// Prints a host's history of a workload's cases.
pub fn execute(args: HistoryArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let request = HistoryRequest::new(args.workload, args.host, &args.params, args.metric)
        .map_err(|bad| UsageError(bad.0))?;
    let store = open_existing_store(store)?;
    let history =
        request
            .load(&store)
            .map_err(|err| match err.downcast::<BadHistoryRequest>() {
                Ok(bad) => UsageError(bad.0).into(),
                Err(err) => err,
            })?;
    print(&args.format.format().render(&View::History(&history))?)?;
    Ok(ExitStatus::Success)
}

//! `sledge history WORKLOAD [--host H] [-p k=v ...]`.

use std::collections::BTreeMap;

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, UsageError, open_existing_store, print};
use crate::report::export::Format;
use crate::report::history::{self, HistoryRun};
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
        conflicts_with: &[],
    }];
}

/// Prints a host's history of a workload's cases.
pub fn execute(args: HistoryArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let filter = parse_filter(&args.workload, &args.params)?;
    let store = open_existing_store(store)?;
    let runs = store.runs_with_workload(&args.workload)?;
    if runs.is_empty() {
        return Err(UsageError(match crate::workloads::find(&args.workload) {
            Some(_) => format!("no stored run has a case of `{}`", args.workload),
            None => format!(
                "`{}` is not a workload, and no stored run has it: `sledge workloads` lists them",
                args.workload
            ),
        })
        .into());
    }
    let host = args.host.clone().unwrap_or_else(crate::probe::hostname);
    let on_host: Vec<_> = runs
        .iter()
        .filter(|r| r.host() == host || r.hostname == host)
        .collect();
    if on_host.is_empty() {
        let mut hosts: BTreeMap<&str, usize> = BTreeMap::new();
        for run in &runs {
            *hosts.entry(run.host()).or_default() += 1;
        }
        let hosts: Vec<String> = hosts
            .iter()
            .map(|(name, n)| format!("{name} ({n} run{})", if *n == 1 { "" } else { "s" }))
            .collect();
        return Err(UsageError(format!(
            "no stored run of `{}` on host `{host}`; its runs are on {}: choose one with --host",
            args.workload,
            hosts.join(", ")
        ))
        .into());
    }
    let mut loaded = Vec::with_capacity(on_host.len());
    for run in on_host {
        loaded.push(HistoryRun {
            run: store.load_run_of_workload(run.id, &args.workload)?,
            imported: run.imported,
        });
    }
    let history = history::build(
        &host,
        &args.workload,
        &loaded,
        &filter,
        args.metric.as_deref(),
    );
    if history.cases.is_empty() {
        return Err(UsageError(nothing_matched(&args, &host, &loaded, &filter)).into());
    }
    print(&args.format.format().exporter().history(&history)?)?;
    Ok(ExitStatus::Success)
}

/// `-p NAME=VALUE` pairs as a filter; a name the workload (when this
/// sledge knows it) does not have is refused, naming those it has.
fn parse_filter(workload: &str, pairs: &[String]) -> Result<BTreeMap<String, String>, UsageError> {
    let known: Option<Vec<&str>> =
        crate::workloads::find(workload).map(|w| w.params().iter().map(|p| p.name).collect());
    let mut filter = BTreeMap::new();
    for pair in pairs {
        let Some((name, value)) = pair.split_once('=').filter(|(n, _)| !n.trim().is_empty()) else {
            return Err(UsageError(format!(
                "-p `{pair}`: give NAME=VALUE, for example -p threads=1"
            )));
        };
        let name = name.trim();
        if let Some(known) = &known
            && !known.contains(&name)
        {
            return Err(UsageError(format!(
                "-p `{pair}`: `{workload}` has no parameter `{name}`; its parameters: {}",
                known.join(", ")
            )));
        }
        filter.insert(name.to_string(), value.trim().to_string());
    }
    Ok(filter)
}

/// Why no case was left: the filter or the metric matched nothing; says
/// what there is.
fn nothing_matched(
    args: &HistoryArgs,
    host: &str,
    runs: &[HistoryRun],
    filter: &BTreeMap<String, String>,
) -> String {
    let filtered = history::build(host, &args.workload, runs, filter, None);
    if let Some(metric) = args
        .metric
        .as_deref()
        .filter(|_| !filtered.cases.is_empty())
    {
        let mut names: Vec<&str> = runs
            .iter()
            .flat_map(|r| &r.run.cases)
            .flat_map(|c| &c.metrics)
            .map(|m| m.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        return format!(
            "no case of `{}` on host `{host}` has a metric `{metric}`; its metrics: {}",
            args.workload,
            names.join(", ")
        );
    }
    let cases: Vec<String> = history::build(host, &args.workload, runs, &BTreeMap::new(), None)
        .cases
        .iter()
        .map(|c| crate::results::case_label(&c.workload, &c.params))
        .collect();
    let wanted: Vec<String> = filter.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "no case of `{}` on host `{host}` has {}; its cases there: {}",
        args.workload,
        wanted.join(" "),
        cases.join("; ")
    )
}

//! `sledge fleet run --hosts user@h1,user@h2 [RUN ARGS...]`, and
//! `sledge fleet outliers RUN...`: the hosts outside their fleet's spread.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, UsageError, open_existing_store, open_store, print, resolve_runs};
use crate::engine::CancelToken;
use crate::fleet::{self, HostResult, Order, Progress};
use crate::remote::{OutputLine, SshOptions, parse_host_list};
use crate::report::export::Format;
use crate::report::fleet_outliers::{self, fleet_outliers};
use crate::store::StoreLocation;
use crate::visible::escape;

/// The longest connect timeout accepted, in seconds.
const MAX_CONNECT_TIMEOUT_SECS: u64 = 600;

/// Options of `sledge fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    command: FleetCommand,
}

#[derive(Debug, Subcommand)]
enum FleetCommand {
    /// Run a selection on every host over SSH and bring each host's run
    /// into this store.
    ///
    /// The fleet's own options come first; everything from the first
    /// target on is given to `sledge run` on each host:
    /// `sledge fleet run --hosts root@h1,root@h2 cpu.primes -p threads=1,2`.
    Run(FleetRunArgs),
    /// Name the outlier hosts among stored runs of several hosts: for
    /// hosts sharing a CPU model (three or more), a host whose value of a
    /// case lies more than 3.5 modified z-scores from the fleet's median,
    /// with its ratio to the median and the inventory facts that set it
    /// apart (`fleet run` shows this after its runs land).
    Outliers(FleetOutliersArgs),
}

/// Options of `sledge fleet outliers`.
#[derive(Debug, Args)]
struct FleetOutliersArgs {
    /// The runs (ids, `last`, `last~N` or UUIDs), one per host; of several
    /// runs of one host the latest counts.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    #[command(flatten)]
    format: FormatArgs<OutliersFormats>,
}

/// The formats of `sledge fleet outliers`: `--json`.
#[derive(Debug)]
struct OutliersFormats;

impl FormatSet for OutliersFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print JSON (docs/json.md) instead of text",
        conflicts_with: &[],
    }];
}

/// Options of `sledge fleet run`.
#[derive(Debug, Args)]
struct FleetRunArgs {
    /// The hosts, comma-separated: `[user@]host[:port],...`. Each needs
    /// OpenSSH's server, a login this machine's ssh can make without a
    /// password, Linux on this sledge's architecture, and a writable
    /// --remote-dir.
    #[arg(long, value_name = "LIST")]
    hosts: String,
    /// Run every host at once (the default).
    #[arg(long, conflicts_with = "serial")]
    parallel: bool,
    /// Run the hosts one after another (when they share something that
    /// would disturb the measurement: a switch, a storage array).
    #[arg(long)]
    serial: bool,
    /// The private key to log in with (ssh -i); else ssh's agent and
    /// configuration decide.
    #[arg(short = 'i', long, value_name = "FILE")]
    identity: Option<PathBuf>,
    /// A known_hosts file to check the hosts' keys against instead of
    /// ssh's own; new hosts are added to it, a changed key is refused.
    #[arg(long, value_name = "FILE")]
    known_hosts: Option<PathBuf>,
    /// Seconds to wait for each host's SSH connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    connect_timeout: u64,
    /// The directory on each host for sledge's copy and the runs' scratch
    /// directories (a relative path is from the login directory).
    #[arg(long, value_name = "DIR", default_value = crate::remote::DEFAULT_DIR)]
    remote_dir: String,
    /// What each host runs, exactly as for `sledge run`: profiles,
    /// workloads, --param, --rounds, ... [default: quick]
    #[arg(
        value_name = "RUN ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    run: Vec<String>,
}

/// Runs `sledge fleet`.
pub fn execute(args: FleetArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    match args.command {
        FleetCommand::Run(args) => execute_run(args, store),
        FleetCommand::Outliers(args) => execute_outliers(args, store),
    }
}

fn execute_outliers(
    args: FleetOutliersArgs,
    store_location: Option<StoreLocation>,
) -> anyhow::Result<ExitStatus> {
    let store = open_existing_store(store_location)?;
    let ids = resolve_runs(&store, &args.runs)?;
    let runs = ids
        .iter()
        .map(|&id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    let view = fleet_outliers(&runs);
    print(&args.format.format().exporter().fleet_outliers(&view)?)?;
    Ok(ExitStatus::Success)
}

/// The outlier view of the runs that landed, when three or more did.
fn landed_outliers(reports: &[fleet::HostReport], store: &crate::store::Store) -> Option<String> {
    let ids: Vec<i64> = reports
        .iter()
        .filter_map(|r| match r.result {
            HostResult::Landed { id, .. } => Some(id),
            HostResult::Failed(_) => None,
        })
        .collect();
    if ids.len() < crate::stats::MIN_HOSTS {
        return None;
    }
    let runs = match ids
        .iter()
        .map(|&id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(runs) => runs,
        Err(err) => {
            eprintln!("warning: cannot read the landed runs for the outlier view: {err}");
            return None;
        }
    };
    let view = fleet_outliers(&runs);
    (!view.populations.is_empty()).then(|| fleet_outliers::render(&view))
}

fn execute_run(
    args: FleetRunArgs,
    store_location: Option<StoreLocation>,
) -> anyhow::Result<ExitStatus> {
    // Every mistake is found before any host is touched.
    let hosts = parse_host_list(&args.hosts).map_err(|e| UsageError(format!("--hosts: {e}")))?;
    check_run_args(&args.run)?;
    if args.connect_timeout == 0 || args.connect_timeout > MAX_CONNECT_TIMEOUT_SECS {
        return Err(UsageError(format!(
            "--connect-timeout {}: expected seconds from 1 to {MAX_CONNECT_TIMEOUT_SECS}",
            args.connect_timeout
        ))
        .into());
    }
    if let Some(identity) = &args.identity
        && !identity.is_file()
    {
        return Err(UsageError(format!("--identity {}: no such file", identity.display())).into());
    }
    let remote_dir = crate::remote::remote_dir(&args.remote_dir)
        .map_err(|e| UsageError(format!("--remote-dir {e}")))?;

    let mut store = open_store(store_location)?;
    store.check_integrity()?;
    let settings = fleet::FleetSettings {
        ssh: SshOptions {
            identity: args.identity.clone(),
            known_hosts: args.known_hosts.clone(),
            connect_timeout: Duration::from_secs(args.connect_timeout),
        },
        remote_dir,
        run_args: args.run.clone(),
        binary: crate::remote::ThisBinary::current()?,
        env: fleet::forwarded_env(),
    };
    let order = if args.serial {
        Order::Serial
    } else {
        Order::Parallel
    };
    let (cancel, hurry) = (CancelToken::new(), CancelToken::new());
    fleet::interrupt::install(&cancel, &hurry);

    let started = Instant::now();
    // What a host says is shown escaped: it is another machine's text.
    let mut show = |progress: Progress| match progress {
        Progress::Note { host, text } => eprintln!("[{}] {}", host.label(), escape(text)),
        Progress::Output { host, line } => match line {
            OutputLine::Stdout(text) => println!("[{}] {}", host.label(), escape(text)),
            OutputLine::Stderr(text) => eprintln!("[{}] {}", host.label(), escape(text)),
        },
        Progress::Done { report } => match &report.result {
            HostResult::Landed { id, status, .. } => eprintln!(
                "[{}] its run is stored as run {id} ({}, {:.1} s)",
                report.host.label(),
                status.as_str(),
                report.seconds
            ),
            HostResult::Failed(reason) => {
                eprintln!("[{}] failed: {}", report.host.label(), escape(reason))
            }
        },
    };
    let reports = fleet::run(
        &hosts, &settings, order, &mut store, &cancel, &hurry, &mut show,
    );
    print(&summary(
        &reports,
        started.elapsed().as_secs_f64(),
        &store.path().display().to_string(),
    ))?;
    if let Some(outliers) = landed_outliers(&reports, &store) {
        print(&outliers)?;
    }
    for report in &reports {
        if let Some(left) = &report.left_behind {
            eprintln!(
                "warning: could not remove {left}; the next fleet run on that host removes it"
            );
        }
    }
    Ok(if cancel.is_cancelled() {
        eprintln!("interrupted: the runs that came back are stored");
        ExitStatus::Interrupted
    } else if reports.iter().all(fleet::HostReport::complete) {
        ExitStatus::Success
    } else if reports
        .iter()
        .any(|r| matches!(r.result, HostResult::Landed { .. }))
    {
        ExitStatus::PartialFleet
    } else {
        ExitStatus::Failure
    })
}

/// Checks the arguments meant for `sledge run` on the hosts as this
/// sledge would take them: their syntax, the targets and parameters.
fn check_run_args(run: &[String]) -> anyhow::Result<()> {
    if let Some(word) = run
        .iter()
        .find(|w| *w == "--store" || w.starts_with("--store="))
    {
        return Err(UsageError(format!(
            "{word} after the targets: each host's run goes to a store of its own and comes back \
             into this one; give --store before `fleet` to choose this one"
        ))
        .into());
    }
    let words = ["sledge", "run"]
        .into_iter()
        .map(str::to_string)
        .chain(run.iter().cloned());
    let parsed = super::Cli::try_parse_from(words).map_err(|e| {
        let text = e.to_string();
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        UsageError(format!(
            "the arguments for `sledge run` on the hosts: {first}"
        ))
    })?;
    match parsed.command {
        super::Command::Run(run_args) => Ok(run_args
            .request()?
            .check_elsewhere()
            .map_err(super::run_args::usage)?),
        _ => unreachable!("parsed as `sledge run`"),
    }
}

/// The closing table: one line per host.
fn summary(reports: &[fleet::HostReport], seconds: f64, store: &str) -> String {
    let landed = reports
        .iter()
        .filter(|r| matches!(r.result, HostResult::Landed { .. }))
        .count();
    let complete = reports.iter().filter(|r| r.complete()).count();
    let failed = reports.len() - landed;
    let mut out = format!(
        "fleet run on {} host{}: {landed} run{} stored ({complete} complete), {failed} host{} failed, {seconds:.1} s\n",
        reports.len(),
        plural(reports.len()),
        plural(landed),
        plural(failed),
    );
    let width = reports
        .iter()
        .map(|r| r.host.label().len())
        .max()
        .unwrap_or(0);
    for report in reports {
        let label = report.host.label();
        let what = match &report.result {
            HostResult::Landed {
                id,
                status,
                already_stored,
                ..
            } => format!(
                "run {id} · {} · {:.1} s{}",
                status.as_str(),
                report.seconds,
                if *already_stored {
                    " (was already stored)"
                } else {
                    ""
                }
            ),
            HostResult::Failed(reason) => format!("failed: {}", escape(reason)),
        };
        out.push_str(&format!("  {label:<width$}  {what}\n"));
    }
    if landed > 0 {
        out.push_str(&format!("stored in {store}\n"));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's reason may quote what the host said: its control
    /// characters are shown escaped.
    #[test]
    fn a_hosts_reason_is_shown_escaped() {
        let report = fleet::HostReport {
            host: "root@db1".parse().unwrap(),
            result: HostResult::Failed("the remote said \x1b[2J\r\u{202e}gone".into()),
            interrupted: false,
            seconds: 1.0,
            left_behind: None,
        };
        let text = summary(&[report], 1.0, "results.db");
        assert!(
            text.contains("failed: the remote said \\x1b[2J\\r\\u{202e}gone"),
            "{text}"
        );
        assert!(!text.contains(['\x1b', '\r', '\u{202e}']), "{text:?}");
    }
}

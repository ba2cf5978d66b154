//! `sledge fleet run --hosts user@h1,user@h2 [RUN ARGS...]`, and
//! `sledge fleet outliers RUN...`: the hosts outside their fleet's spread.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, UsageError, open_existing_store, print, resolve_runs};
use super::run_args::{RunArgs, usage};
use crate::analysis::host_outliers::fleet_outliers;
use crate::fleet::{self, FleetOutcome, FleetRequest, HostResult, Progress};
use crate::remote::{OutputLine, SshHost, parse_host_list};
use crate::report::export::{Format, View};
use crate::store::StoreLocation;
use crate::suite::BadRequest;
use crate::visible::escape;

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
    /// A build of this sledge for hosts of another architecture, as
    /// `uname -m` names them: ARCH=PATH (`i686=./sledge-i686`);
    /// repeatable. A host runs this sledge when it is of this sledge's
    /// architecture, else the build given for its own.
    #[arg(long, value_name = "ARCH=PATH", value_parser = binary_for)]
    binary_for: Vec<(String, PathBuf)>,
    /// Measure each host's network to HOST (`[user@]host[:port]`, not
    /// among --hosts): sledge starts its net server on HOST over ssh, and
    /// each host runs the `net.*` workloads given against it, one host
    /// after another, so that `fleet outliers` finds a host with a slow
    /// link.
    #[arg(long, value_name = "HOST", conflicts_with = "parallel")]
    pairs: Option<String>,
    /// What each host runs, exactly as for `sledge run`: profiles,
    /// workloads, --param, --rounds, ... [default: quick]
    #[arg(
        value_name = "RUN ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    run: Vec<String>,
}

/// `--binary-for ARCH=PATH`.
fn binary_for(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((arch, path))
            if !arch.is_empty()
                && arch.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !path.is_empty() =>
        {
            Ok((arch.to_string(), PathBuf::from(path)))
        }
        _ => Err(format!(
            "`{text}` is not ARCH=PATH: an architecture as `uname -m` prints it and a sledge built for it (for example i686=./sledge-i686)"
        )),
    }
}

/// How this sledge reads the words after `sledge run`: the command line's
/// own parser, which the dispatcher hands in because the command line
/// names this file's options (and so cannot be named back from here).
pub type RunArgsParser = fn(&[String]) -> Result<RunArgs, clap::Error>;

/// Runs `sledge fleet`; `parse_run` checks the arguments meant for the
/// hosts' `sledge run`.
pub fn execute(
    args: FleetArgs,
    store: Option<StoreLocation>,
    parse_run: RunArgsParser,
) -> anyhow::Result<ExitStatus> {
    match args.command {
        FleetCommand::Run(args) => execute_run(args, store, parse_run),
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
    print(&args.format.format().render(&View::FleetOutliers(&view))?)?;
    Ok(ExitStatus::Success)
}

fn execute_run(
    args: FleetRunArgs,
    store_location: Option<StoreLocation>,
    parse_run: RunArgsParser,
) -> anyhow::Result<ExitStatus> {
    // Every mistake is found before any host is touched.
    let hosts = parse_host_list(&args.hosts).map_err(|e| UsageError(format!("--hosts: {e}")))?;
    let pairs = match &args.pairs {
        Some(text) => Some(pairs_host(text, &hosts, &args.run, parse_run)?),
        None => {
            check_run_args(&args.run, parse_run)?;
            None
        }
    };
    let request = FleetRequest {
        hosts,
        serial: args.serial,
        identity: args.identity,
        known_hosts: args.known_hosts,
        connect_timeout_secs: args.connect_timeout,
        remote_dir: args.remote_dir,
        run_args: args.run,
        store: store_location,
        binaries_for: args.binary_for,
        pairs,
    };
    let done = fleet::execute(&request, &mut show_progress).map_err(|err| {
        match err.downcast::<BadRequest>() {
            Ok(bad) => usage(bad).into(),
            Err(err) => err,
        }
    })?;
    // The fleet's closing tables are for the person who started it: each
    // host's run is in the store for programs (`show --json`).
    print(&Format::Table.render(&View::FleetRun(&done.summary()))?)?;
    match done.landed_outliers() {
        Ok(Some(view)) => print(&Format::Table.render(&View::FleetOutliers(&view))?)?,
        Ok(None) => {}
        Err(err) => {
            crate::say!("warning: cannot read the landed runs for the outlier view: {err}")
        }
    }
    for report in &done.reports {
        if let Some(left) = &report.left_behind {
            crate::say!(
                "warning: could not remove {left}; the next fleet run on that host removes it"
            );
        }
    }
    Ok(match done.outcome() {
        FleetOutcome::Interrupted => {
            crate::say!("interrupted: the runs that came back are stored");
            ExitStatus::Interrupted
        }
        FleetOutcome::Complete => ExitStatus::Success,
        FleetOutcome::Partial => ExitStatus::PartialFleet,
        FleetOutcome::Failed => ExitStatus::Failure,
    })
}

/// Shows a step of the fleet run as it happens. What a host says is shown
/// escaped: it is another machine's text.
fn show_progress(progress: Progress) {
    match progress {
        Progress::Note { host, text } => crate::say!("[{}] {}", host.label(), escape(text)),
        Progress::Output { host, line } => match line {
            OutputLine::Stdout(text) => {
                let _ =
                    crate::visible::print_text(&format!("[{}] {}\n", host.label(), escape(text)));
            }
            OutputLine::Stderr(text) => crate::say!("[{}] {}", host.label(), escape(text)),
        },
        Progress::Done { report } => match &report.result {
            HostResult::Landed { id, status, .. } => crate::say!(
                "[{}] its run is stored as run {id} ({}, {:.1} s)",
                report.host.label(),
                status.as_str(),
                report.seconds
            ),
            HostResult::Failed(reason) => {
                crate::say!("[{}] failed: {}", report.host.label(), escape(reason))
            }
        },
    }
}

/// The reference host of `--pairs`, checked: a host apart from the
/// measured ones, and run arguments that take the peer it gives (`net.*`
/// workloads, no `peer` of their own).
fn pairs_host(
    text: &str,
    hosts: &[SshHost],
    run: &[String],
    parse_run: RunArgsParser,
) -> anyhow::Result<SshHost> {
    let host: SshHost = text
        .parse()
        .map_err(|e| UsageError(format!("--pairs: {e}")))?;
    if hosts.contains(&host) {
        return Err(UsageError(format!(
            "--pairs {text}: the reference host is also in --hosts; it is measured against, not measured"
        ))
        .into());
    }
    if run.iter().any(|arg| arg.contains("peer=")) {
        return Err(UsageError(format!(
            "--pairs {text}: the run arguments give a peer of their own; --pairs gives each host's"
        ))
        .into());
    }
    // A stand-in for the address the reference's server will have: the
    // run arguments must take it (only `net.*` workloads do).
    let mut with_peer = run.to_vec();
    with_peer.extend(["-p".to_string(), "peer=192.0.2.1:5201".to_string()]);
    check_run_args(&with_peer, parse_run).map_err(|e| match e.downcast::<UsageError>() {
        Ok(UsageError(why)) => UsageError(format!(
            "--pairs {text}: {why} (with --pairs the hosts run net.* workloads)"
        ))
        .into(),
        Err(e) => e,
    })?;
    Ok(host)
}

/// Checks the arguments meant for `sledge run` on the hosts as this
/// sledge would take them: their syntax, the targets and parameters.
fn check_run_args(run: &[String], parse_run: RunArgsParser) -> anyhow::Result<()> {
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
    let run_args = parse_run(run).map_err(|e| {
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
    // This side's store is not the hosts' (each runs into its own).
    Ok(run_args.request(None)?.check_elsewhere().map_err(usage)?)
}

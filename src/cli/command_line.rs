//! The command line's grammar: [`Cli`] and its [`Command`]s as clap
//! derives them, the one definition the binary parses with and the help,
//! the manual pages and the shell completions are generated from. Each
//! subcommand's options are defined in that subcommand's file; what runs
//! a parsed command is the dispatcher's (`execute` in `mod.rs`).

use clap::{Parser, Subcommand};

use super::named_store::store_location;
use super::{
    ab, calibrate, compare, completions, delete, export, fleet, history, http, import, list, man,
    net_serve, plan, probe, report, run, show,
};
use crate::store::StoreLocation;

/// sledge: how fast is this server, really?
///
/// Runs server benchmarks (CPU, scheduler, memory, ...) with honest
/// statistics: a warm-up, repeated trials until the 95% confidence interval
/// is tight, outliers flagged, disturbed trials marked. Every run is stored
/// and can be shown again or compared with another run.
#[derive(Debug, Parser)]
#[command(name = "sledge", version, propagate_version = true)]
pub struct Cli {
    /// Results database [default: $SLEDGE_STORE, else
    /// $XDG_DATA_HOME/sledge/results.db, else
    /// ~/.local/share/sledge/results.db]. Only the default location's
    /// directory is created; a path given here must be in an existing
    /// directory. A `postgres://` or `postgresql://` URL stores the runs
    /// in that PostgreSQL database instead (its password is never shown).
    // SLEDGE_STORE is read by `store_arg` (named_store.rs), not by clap,
    // whose message for an empty variable would name `--store`.
    #[arg(long, global = true, value_name = "PATH|URL", value_parser = store_location())]
    pub store: Option<StoreLocation>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a profile or workloads, store the results and print them.
    ///
    /// With no target, runs the `quick` profile. Targets are profile names
    /// (`quick`, `standard`, `seeds`), workload ids (`cpu.primes`) or
    /// families (`cpu`). `--param threads=1,2,4` sweeps a parameter.
    Run(run::RunArgs),
    /// Say what a run would do before it runs: per case the rounds, the
    /// time and the precision expected, and the total wall time.
    ///
    /// Takes `run`'s targets and options (`sledge plan seeds`, `sledge
    /// plan cpu -p threads=1,all --ci-target 0.01`) and reads this host's
    /// history of each case in the store where there is one (else the
    /// workloads' trial lengths). With `--detect 5%`, also how many rounds
    /// a comparison needs to see a 5% change. Nothing is run or stored.
    Plan(plan::PlanArgs),
    /// Compare two settings of this host (a knob, a sysctl, CPUs, a
    /// cgroup, an environment, a wrapper, two builds) in interleaved
    /// rounds, so that a noisy host still gives a clear answer.
    ///
    /// Takes `run`'s targets and options; A and B run the same cases, each
    /// round of a case running both sides back to back in a random order
    /// (or at once with --duet), and each case is judged on its per-round
    /// ratios B/A. Both sides are stored as two runs linked as a pair.
    Ab(Box<ab::AbArgs>),
    /// List every workload with its parameters, defaults and allowed values.
    Workloads,
    /// List the built-in profiles and their cases.
    Profiles,
    /// Show the host inventory that is stored with every run.
    Probe(probe::ProbeArgs),
    /// List the stored runs, newest first.
    List(list::ListArgs),
    /// Show one stored run (RUN is an id, `last`, or `last~N`).
    Show(show::ShowArgs),
    /// Run a profile or workloads several times to measure how much each
    /// case moves between runs on this host (the noise floor comparisons
    /// use).
    Calibrate(calibrate::CalibrateArgs),
    /// Compare stored runs with a baseline: ratio, CI and verdict per case.
    Compare(compare::CompareArgs),
    /// A host's runs of a workload's cases over time, with the change
    /// points in each case's series and what the host's inventory says
    /// changed at each of them.
    History(history::HistoryArgs),
    /// Load any HTTP/1.1 server like wrk or ab (or run the built-in one with --serve).
    Http(http::HttpArgs),
    /// Internal: runs one round of one case, as `sledge run` asks (a job on
    /// stdin, JSON events on stdout).
    #[command(name = "__round", hide = true)]
    Round,
    /// Internal: one client host's generator of `sledge http --from` (the
    /// coordinator's messages on stdin, answers on stdout).
    #[command(name = "__http-agent", hide = true)]
    HttpAgent,
    /// Internal: the server side of the `net.*` workloads on a peer
    /// (`peer=HOST:PORT`); serves until SIGINT or SIGTERM.
    #[command(name = "__net-serve", hide = true)]
    NetServe(net_serve::NetServeArgs),
    /// Write stored runs as one portable JSON document, to carry them to
    /// another machine's store (`sledge import`).
    Export(export::ExportArgs),
    /// Add the runs of export documents to the store; a run already stored
    /// (same UUID) is not added again.
    Import(import::ImportArgs),
    /// Run on many hosts over SSH, every host's run brought into this
    /// store.
    Fleet(fleet::FleetArgs),
    /// Remove stored runs (asks first on a terminal unless --yes); a run
    /// a live sledge is still running is refused.
    Delete(delete::DeleteArgs),
    /// Write one self-contained HTML report of runs: hosts side by side,
    /// comparisons with the first run, charts (no network, no script).
    Report(report::ReportArgs),
    /// Print a shell's completion script.
    ///
    /// Install it where the shell looks for it (the Debian package does
    /// this for bash, zsh and fish):
    ///
    ///   bash:  sledge completions bash > /etc/bash_completion.d/sledge
    ///          (or ~/.local/share/bash-completion/completions/sledge)
    ///   zsh:   sledge completions zsh > /usr/local/share/zsh/site-functions/_sledge
    ///          (or a directory of your own in $fpath, before compinit)
    ///   fish:  sledge completions fish > ~/.config/fish/completions/sledge.fish
    ///   elvish: sledge completions elvish > ~/.config/elvish/lib/sledge.elv
    ///          and `use sledge` in rc.elv
    ///   powershell: sledge completions powershell >> $PROFILE
    ///
    /// A new shell then completes sledge's subcommands and options.
    #[command(about = "Print a shell's completion script", verbatim_doc_comment)]
    Completions(completions::CompletionsArgs),
    /// Print the manual page, or write every page into a directory.
    ///
    /// `sledge man | man -l -` reads it now; `sledge man --dir DIR`
    /// writes `sledge.1` and a page per subcommand (`sledge-run.1`, ...)
    /// into DIR, for instance `/usr/local/share/man/man1` (then `man
    /// sledge-run`). The Debian package installs them.
    Man(man::ManArgs),
}

/// `run`, the words after `sledge run`, read as this sledge's command line
/// reads them: how `sledge fleet` checks the arguments it hands to the
/// hosts' `sledge run` before any host is touched.
pub fn parse_run_args(run: &[String]) -> Result<run::RunArgs, clap::Error> {
    let words = ["sledge", "run"]
        .into_iter()
        .map(str::to_string)
        .chain(run.iter().cloned());
    match Cli::try_parse_from(words)?.command {
        Command::Run(run_args) => Ok(run_args),
        _ => unreachable!("parsed as `sledge run`"),
    }
}

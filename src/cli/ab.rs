//! `sledge ab`: the same cases under two settings of this host, in
//! interleaved rounds, judged on the per-round paired ratios.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::format_args::{FormatFlag, FormatSet};
use super::output::{ExitStatus, MetricsShown, UsageError, print};
use super::run_args::{RUN_JSON, RunArgs, usage};
use super::run_progress::RunProgress;
use crate::analysis::verdicts::{self, CompareOptions, NoNoiseHistory};
use crate::report::compare_table::MetricSelection;
use crate::report::export::{ComparisonShown, Format, View};
use crate::store::StoreLocation;
use crate::suite::ab::{AbRequest, KnobSpec, SideRequest};

/// Options of `sledge ab`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each round of each case runs A then B, or B then A (drawn at random and \
recorded), each in a fresh process, so both sides share every moment of \
the host; with --duet they run at the same time on the two halves of the \
CPUs, swapped every round. The verdict rests on the per-round ratios B/A: \
their geometric mean with a paired 95% CI, faster or slower when the CI \
excludes 1 and the change exceeds 2%. A case gets more rounds while that \
CI is wider than the target (--ci-target) and its budget allows (the \
budgets count both sides' time); the rule looks at the width only, never at \
the ratio, so stopping cannot favour a verdict.

A knob is written before each of its side's rounds and put back at the end, \
also after a failure or Ctrl-C; a killed sledge's next run or ab says which \
knob it left changed. Before anything runs, every knob is checked (it exists, \
is writable, takes both values: each is written once and the original put \
back).

Both sides are stored as runs linked as one pair: `sledge compare A B`, \
`sledge show` and `sledge report` read them back, paired.

Examples:
  sledge ab --knob /sys/kernel/mm/transparent_hugepage/enabled=always,never \\
      memory.latency -p size=64M,1G
  sledge ab --knob vm.swappiness=10,60 quick
  sledge ab --b-cgroup /sys/fs/cgroup/slow cpu.primes -p threads=1
  sledge ab --a-sledge ./sledge-old --b-sledge ./sledge-new crypto
  sledge ab --duet --b-env MALLOC_ARENA_MAX=1 cpu.primes -p threads=1")]
pub struct AbArgs {
    #[command(flatten)]
    run: RunArgs<AbFormats>,
    /// A sysfs file or sysctl and its value for A and for B:
    /// PATH_OR_SYSCTL=A_VALUE,B_VALUE (`vm.swappiness=10,60`); repeatable.
    #[arg(long = "knob", value_name = "KNOB=A,B", value_parser = KnobSpec::parse)]
    knobs: Vec<KnobSpec>,
    /// A shell command run before each of A's rounds.
    #[arg(long, value_name = "CMD")]
    a_setup: Option<String>,
    /// A shell command run before each of B's rounds.
    #[arg(long, value_name = "CMD")]
    b_setup: Option<String>,
    /// A shell command run once at the end, also after a failure or
    /// Ctrl-C: puts back what the setup commands changed.
    #[arg(long, value_name = "CMD")]
    restore: Option<String>,
    /// How long a setup or restore command may run, in seconds (above 0,
    /// at most 86400) [default: 600]: one still running then is killed
    /// with everything it started, and its round fails. Each command runs
    /// as a process group of its own; what it leaves running when it ends
    /// is killed too.
    #[arg(long, value_name = "SECONDS", value_parser = setup_seconds)]
    setup_timeout: Option<Duration>,
    /// An environment variable for A's rounds: NAME=VALUE; repeatable.
    #[arg(long, value_name = "NAME=VALUE", value_parser = env_var)]
    a_env: Vec<(String, String)>,
    /// An environment variable for B's rounds: NAME=VALUE; repeatable.
    #[arg(long, value_name = "NAME=VALUE", value_parser = env_var)]
    b_env: Vec<(String, String)>,
    /// The CPUs A's rounds run on, as a list (`0`, `0-3,6`).
    #[arg(long, value_name = "LIST", value_parser = cpu_list)]
    a_cpus: Option<CpuList>,
    /// The CPUs B's rounds run on.
    #[arg(long, value_name = "LIST", value_parser = cpu_list)]
    b_cpus: Option<CpuList>,
    /// A cgroup directory (v1 or v2) A's rounds run in.
    #[arg(long, value_name = "PATH")]
    a_cgroup: Option<PathBuf>,
    /// A cgroup directory (v1 or v2) B's rounds run in.
    #[arg(long, value_name = "PATH")]
    b_cgroup: Option<PathBuf>,
    /// A command A's rounds run under, as a prefix (`nice -n 10`,
    /// `numactl --membind=1`); it must run the rest of its command line.
    #[arg(long, value_name = "CMD", value_parser = command_words)]
    a_wrap: Option<CommandWords>,
    /// A command B's rounds run under, as a prefix.
    #[arg(long, value_name = "CMD", value_parser = command_words)]
    b_wrap: Option<CommandWords>,
    /// Another sledge build to run A's rounds with.
    #[arg(long, value_name = "PATH")]
    a_sledge: Option<PathBuf>,
    /// Another sledge build to run B's rounds with.
    #[arg(long, value_name = "PATH")]
    b_sledge: Option<PathBuf>,
    /// Run A and B at the same time, each on one half of the CPUs (swapped
    /// every round), for cases whose threads fit in a half; the others run
    /// in turn, and the output says why.
    #[arg(long)]
    duet: bool,
}

/// The formats of `sledge ab`: `run`'s `--json`, and Markdown and
/// `compare`'s JUnit for the comparison.
#[derive(Debug)]
pub struct AbFormats;

impl FormatSet for AbFormats {
    const FLAGS: &'static [FormatFlag] = &[
        RUN_JSON,
        FormatFlag {
            format: Format::Markdown,
            help: "Print the comparison as Markdown",
        },
        FormatFlag {
            format: Format::Junit,
            help: "Print the comparison as a JUnit XML report: a test case per case, each \
                   verdict in its output",
        },
    ];
}

/// `--setup-timeout`: seconds above 0 and at most a day.
fn setup_seconds(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "`{text}` is not a time limit: give seconds above 0 and at most 86400, for example 600"
        )),
    }
}

/// `NAME=VALUE` for `--a-env` and `--b-env`.
fn env_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value))
            if !name.is_empty() && !name.contains(char::is_whitespace) && !name.contains('\0') =>
        {
            Ok((name.to_string(), value.to_string()))
        }
        _ => Err(format!(
            "`{text}` is not NAME=VALUE (for example MALLOC_ARENA_MAX=2)"
        )),
    }
}

/// A list of CPUs as one value. A newtype, not `Vec<usize>`: clap's derive
/// reads an `Option<Vec<T>>` field as a flag given many times, each value a
/// `T`, and a parser that returns the whole `Vec` for one value would not
/// match that field (a panic on every use).
#[derive(Debug, Clone)]
struct CpuList(Vec<usize>);

/// A command's words as one value (a newtype for the reason [`CpuList`]
/// is one).
#[derive(Debug, Clone)]
struct CommandWords(Vec<String>);

/// `--a-cpus`, `--b-cpus`: a list such as `0-3,6`.
fn cpu_list(text: &str) -> Result<CpuList, String> {
    crate::sys::affinity::parse_cpu_list(text).map(CpuList)
}

/// A command's words, split as a shell would (quotes kept together).
fn command_words(text: &str) -> Result<CommandWords, String> {
    match shlex::split(text) {
        Some(words) if !words.is_empty() => Ok(CommandWords(words)),
        _ => Err(format!(
            "`{text}` is not a command (empty, or an unclosed quote); for example \"nice -n 10\""
        )),
    }
}

impl AbArgs {
    /// The comparison asked for, as the suite checks it.
    fn request(&self) -> AbRequest {
        AbRequest {
            sides: [
                SideRequest {
                    env: self.a_env.clone(),
                    cpus: self.a_cpus.clone().map(|list| list.0),
                    cgroup: self.a_cgroup.clone(),
                    wrap: self.a_wrap.clone().map(|words| words.0),
                    sledge: self.a_sledge.clone(),
                    setup: self.a_setup.clone(),
                },
                SideRequest {
                    env: self.b_env.clone(),
                    cpus: self.b_cpus.clone().map(|list| list.0),
                    cgroup: self.b_cgroup.clone(),
                    wrap: self.b_wrap.clone().map(|words| words.0),
                    sledge: self.b_sledge.clone(),
                    setup: self.b_setup.clone(),
                },
            ],
            knobs: self.knobs.clone(),
            restore: self.restore.clone(),
            setup_limit: self
                .setup_timeout
                .unwrap_or(crate::suite::ab::ab_request::DEFAULT_SETUP_LIMIT),
            duet: self.duet,
        }
    }
}

/// Runs the comparison, stores both sides and prints the paired verdicts.
pub fn execute(args: AbArgs, store_location: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let (request, prepared) = super::run_steps::prepare(&args.run, store_location)?;
    let options = args
        .request()
        .options(request.run_options(&prepared), &mut |line: String| {
            // Each is one line quoting the command line's paths and
            // values: a line break in them is escaped too.
            crate::say!("{}", crate::visible::escape(&line))
        })
        .map_err(usage)?;
    let (mut store, cancel) = super::run_steps::open_for_runs(&request, &prepared)?;
    let progress = RunProgress::new(
        prepared.plan.cases.len() * prepared.methodology.min_rounds as usize * 2,
        std::io::stderr().is_terminal(),
    );
    let done =
        crate::suite::ab::execute_ab(&prepared.plan, options, &mut store, &cancel, &progress)
            .map_err(
                |err| match err.downcast_ref::<crate::suite::CaseCannotRun>() {
                    Some(cannot) => UsageError(cannot.to_string()).into(),
                    None => err,
                },
            )?;
    for line in &done.duet_refused {
        crate::say!("note: {line}");
    }
    for failure in &done.restore_failures {
        crate::say!("warning: {failure}");
    }
    let [a, b] = &done.runs;
    let comparison = verdicts::compare_many(
        a,
        std::slice::from_ref(b),
        &NoNoiseHistory,
        CompareOptions::default(),
    );
    let metrics = match args.run.metrics() {
        MetricsShown::Headline => MetricSelection::Headline,
        MetricsShown::All => MetricSelection::All,
    };
    // `ab` has no regression gate: nothing fails in its JUnit report.
    print(
        &args
            .run
            .format()
            .render(&View::Comparison(ComparisonShown {
                comparison: &comparison,
                metrics,
                fail_if_slower: None,
            }))?,
    )?;
    crate::say!(
        "stored as runs {} (A) and {} (B) in {}; `sledge compare {} {}` shows them again",
        a.id,
        b.id,
        crate::visible::escape(&store.path().display().to_string()),
        a.id,
        b.id
    );
    let status = super::run_steps::exit_status(a);
    if !done.restore_failures.is_empty() && status == ExitStatus::Success {
        return Ok(ExitStatus::Failure);
    }
    Ok(status)
}

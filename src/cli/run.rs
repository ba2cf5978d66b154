//! `sledge run`: plan, probe, idle check, run, store, print.

use std::io::IsTerminal;
use std::time::Duration;

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, MetricsShown, UsageError, open_store, print, run_in, run_view};
use super::run_progress::RunProgress;
use crate::engine::methodology::{SINGLE_ROUND_MAX_TRIALS, SINGLE_ROUND_MIN_TRIALS};
use crate::engine::{self, Methodology};
use crate::report::export::{Format, RunShown};
use crate::report::pivot::PivotChoice;
use crate::results::RunStatus;
use crate::store::StoreLocation;
use crate::suite::RunOptions;
use crate::visible;
use crate::{report, suite};

/// The longest case budget accepted: a week.
const MAX_BUDGET_SECS: u64 = 7 * 24 * 3600;

/// The most rounds a case may be given (`--rounds`, `--max-rounds`): ten
/// times the default's most, each a fresh process.
const MAX_ROUNDS: u32 = 100;

/// The most warm-up trials per round (`--warmup`); the default is one.
const MAX_WARMUP: u32 = 20;

/// The most counted trials per round (`--min-trials`, `--max-trials`):
/// ten times the most of `--rounds 1`.
const MAX_TRIALS: u32 = 100;

/// The longest note accepted, in characters.
const MAX_NOTE_CHARS: usize = 500;

/// Options of `sledge run` (and of `sledge calibrate`, which repeats it).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Profiles, workloads or families to run [default: quick]
    #[arg(value_name = "PROFILE|WORKLOAD")]
    targets: Vec<String>,
    /// Set a parameter: `name=value`, or `name=v1,v2,...` to sweep it.
    /// Applies to every selected workload that has the parameter;
    /// `WORKLOAD:name=...` to that workload alone (it wins over `name=`
    /// there): -p crypto.speed:block_size=16,8192. A value
    /// that holds a comma goes in double quotes (`""` for a quote inside
    /// them): -p 'dir="/mnt/a,b",/mnt/c' is two directories. Every value of
    /// every case is checked before the first case runs.
    #[arg(short, long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Restrict the run to the first N CPUs this process may use (pins the
    /// process, so every worker thread stays on them).
    #[arg(long, value_name = "N")]
    cpus: Option<usize>,
    #[command(flatten)]
    format: FormatArgs<RunFormats>,
    /// Print every case, one line each with its headline, scaling blocks
    /// for sweeps, and every warning whole, instead of the one-screen
    /// scorecard.
    #[arg(long)]
    full: bool,
    /// The metrics: `headline` (the first metric of each case: the
    /// scorecard, or with --full a line per case) or `all` (every metric
    /// of every case).
    #[arg(long, value_enum, default_value_t)]
    metrics: MetricsShown,
    /// Rounds per case, exactly, from 1 to 100: each round is a fresh
    /// process (fresh files, fresh memory) at its own moment of the run,
    /// the cases' order shuffled between rounds [default: at least 3, more
    /// while the CI is wide, at most 10 (quick: 5)]. With 1, the older rule
    /// applies: one round of 3 to 10 trials until the CI of the trials is
    /// tight (a weaker CI: it misses the variance between processes).
    #[arg(long, value_name = "N", value_parser = count_in::<1, MAX_ROUNDS>)]
    rounds: Option<u32>,
    /// Rounds per case at most, when more are needed for a tight CI, from
    /// 1 to 100.
    #[arg(long, value_name = "N", value_parser = count_in::<1, MAX_ROUNDS>)]
    max_rounds: Option<u32>,
    /// Warm-up trials at the start of every round, not counted, from 0 to
    /// 20 [default: 1]
    #[arg(long, value_name = "N", value_parser = count_in::<0, MAX_WARMUP>)]
    warmup: Option<u32>,
    /// Counted trials per round at least, from 1 to 100 [default: 1; 3
    /// with --rounds 1]
    #[arg(long, value_name = "N", value_parser = count_in::<1, MAX_TRIALS>)]
    min_trials: Option<u32>,
    /// Counted trials per round at most, from 1 to 100; in between, the
    /// number is planned from the variance earlier runs of the case
    /// measured on this host (2 without history) [default: 5; 10 with
    /// --rounds 1]
    #[arg(long, value_name = "N", value_parser = count_in::<1, MAX_TRIALS>)]
    max_trials: Option<u32>,
    /// A case is measured enough once its 95% CI half-width is within this
    /// share of its mean, above 0 and below 1 [default: 0.02]
    #[arg(long, value_name = "SHARE", value_parser = share)]
    ci_target: Option<f64>,
    /// Time budget per case in seconds, above 0 and at most 604800 (a
    /// week); no extra round starts past it [default: 120, quick profile 8]
    #[arg(long, value_name = "SECONDS", value_parser = budget_secs)]
    budget: Option<Duration>,
    /// Skip the one-second check for other busy processes before the run.
    #[arg(long)]
    no_idle_check: bool,
    /// A free note stored with the run; repeatable (`--note price=2400EUR
    /// --note "rack 3"`): plain text on one line (no control characters
    /// or bidi controls), at most 500 characters. A `price=` note (an
    /// amount and its currency) lets `compare` show performance per unit
    /// of price.
    #[arg(long = "note", value_name = "TEXT")]
    notes: Vec<String>,
    /// Show each sweep over two parameters as a table, ROW down and
    /// COLUMN across (`size,concurrency`), for every workload that varies
    /// both; `auto`: each workload's own table (shown anyway). A pair
    /// that no selected workload has both of is refused before the run.
    #[arg(long, value_name = "ROW,COLUMN")]
    pivot: Option<PivotChoice>,
}

/// The formats of `sledge run` (and of `plan` and `ab`, which take its
/// options): `--json` alone.
#[derive(Debug)]
pub struct RunFormats;

impl FormatSet for RunFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print the stored run as JSON instead of a table",
        conflicts_with: &[],
    }];
}

impl RunArgs {
    /// The format `--json` chose.
    pub(super) fn format(&self) -> Format {
        self.format.format()
    }

    /// Which metrics the table shows (`--metrics`).
    pub(super) fn metrics(&self) -> MetricsShown {
        self.metrics
    }

    /// How the run printed at its end is shown: the view (`--full`,
    /// `--metrics`) and the pivot tables (`--pivot`).
    pub(super) fn shown(&self) -> RunShown<'_> {
        RunShown {
            view: run_view(self.full, self.metrics),
            pivot: self.pivot.as_ref(),
        }
    }

    /// Whether to check for other busy processes first (no
    /// `--no-idle-check`).
    pub(super) fn idle_check(&self) -> bool {
        !self.no_idle_check
    }

    /// The notes, checked (see [`RunArgs::checked_notes`]).
    pub(super) fn notes(&self) -> Result<Vec<String>, UsageError> {
        self.checked_notes()
    }

    /// The notes, trimmed, each checked: plain text on one line (no
    /// control character or bidi control, the first one found named with
    /// its place), at most [`MAX_NOTE_CHARS`] long, and a `price=` note
    /// that reads as a price.
    fn checked_notes(&self) -> Result<Vec<String>, UsageError> {
        self.notes
            .iter()
            .map(|note| {
                let note = note.trim();
                if note.is_empty() {
                    return Err(UsageError(
                        "--note needs some text, for example --note \"rack 3\"".to_string(),
                    ));
                }
                if let Some((at, c)) = note.chars().enumerate().find(|&(_, c)| visible::is_hidden(c)) {
                    return Err(UsageError(format!(
                        "--note \"{}\": character {} is {} ({}); a note is plain text on one line, without control characters (tabs, line breaks, escape sequences) or bidi controls",
                        visible::escape(note),
                        at + 1,
                        hidden_char_name(c),
                        visible::escape(c.encode_utf8(&mut [0; 4]))
                    )));
                }
                let length = note.chars().count();
                if length > MAX_NOTE_CHARS {
                    return Err(UsageError(format!(
                        "--note: the note is {length} characters long; a note may have at most {MAX_NOTE_CHARS}"
                    )));
                }
                if let Some(price) = report::price::price_note(note)
                    && report::price::parse_price(price).is_none()
                {
                    return Err(UsageError(format!(
                        "--note {note}: a price note needs an amount above 0 and its currency, \
                         for example price=2400EUR or \"price=1999.90 USD\""
                    )));
                }
                Ok(note.to_string())
            })
            .collect()
    }

    /// The profile's methodology with the flags given applied. Each flag's
    /// own range is checked as it is parsed; here, flags that contradict
    /// each other are refused by name, and a flag given alone moves the
    /// bound it would cross (`--max-rounds 2` lowers the default minimum
    /// of 3 rounds).
    fn methodology(&self, base: Methodology) -> anyhow::Result<Methodology> {
        let mut m = base;
        if let Some(v) = self.rounds {
            m.min_rounds = v;
            m.max_rounds = v;
            if v == 1 {
                m.min_trials = SINGLE_ROUND_MIN_TRIALS;
                m.max_trials = SINGLE_ROUND_MAX_TRIALS;
            }
        }
        if let Some(v) = self.max_rounds {
            if let Some(rounds) = self.rounds
                && v < rounds
            {
                return Err(UsageError(format!(
                    "--max-rounds {v} is below --rounds {rounds}, which fixes the number of rounds; give one of them"
                ))
                .into());
            }
            m.max_rounds = v;
            m.min_rounds = m.min_rounds.min(v);
        }
        if let Some(v) = self.warmup {
            m.warmup_trials = v;
        }
        if let (Some(min), Some(max)) = (self.min_trials, self.max_trials)
            && max < min
        {
            return Err(UsageError(format!(
                "--max-trials {max} is below --min-trials {min}: give a maximum at least the minimum"
            ))
            .into());
        }
        if let Some(v) = self.min_trials {
            m.min_trials = v;
            m.max_trials = m.max_trials.max(v);
        }
        if let Some(v) = self.max_trials {
            m.max_trials = v;
            m.min_trials = m.min_trials.min(v);
        }
        if let Some(v) = self.ci_target {
            m.ci_target = v;
        }
        if let Some(v) = self.budget {
            m.case_budget = v;
        }
        m.validate().map_err(|e| UsageError(e.to_string()))?;
        Ok(m)
    }
}

/// What a [hidden](visible::is_hidden) character is, in words.
fn hidden_char_name(c: char) -> &'static str {
    match c {
        '\t' => "a tab",
        '\n' => "a line break",
        '\r' => "a carriage return",
        '\x1b' => "an escape (the start of a terminal escape sequence)",
        '\u{2028}' | '\u{2029}' => "a line or paragraph separator",
        c if c.is_control() => "a control character",
        _ => "a bidi control (it reorders the text shown after it)",
    }
}

/// A count for a repetition flag: a whole number from `MIN` to `MAX`
/// (clap names the flag and the value given).
fn count_in<const MIN: u32, const MAX: u32>(text: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|v| (MIN..=MAX).contains(v))
        .ok_or_else(|| format!("expected a whole number from {MIN} to {MAX}"))
}

/// A share for `--ci-target`: above 0 and below 1.
fn share(text: &str) -> Result<f64, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|v: &f64| *v > 0.0 && *v < 1.0)
        .ok_or_else(|| "expected a share above 0 and below 1 (0.02 is 2%)".to_string())
}

/// A case budget for `--budget`: seconds above 0 and at most a week.
fn budget_secs(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse()
        .ok()
        .and_then(|v: f64| Duration::try_from_secs_f64(v).ok())
        .filter(|d| !d.is_zero() && *d <= Duration::from_secs(MAX_BUDGET_SECS))
        .ok_or_else(|| {
            format!("expected a number of seconds above 0 and at most {MAX_BUDGET_SECS} (a week)")
        })
}

/// Runs the plan and stores every finished case as it ends.
pub fn execute(args: RunArgs, store_location: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let (plan, methodology, cpus) = prepare(&args)?;
    let (mut store, cancel) = open_for_runs(store_location, &plan)?;
    let run = match run_once(&args, &plan, &methodology, &cpus, &mut store, &cancel) {
        Ok(run) => run,
        Err(err) => {
            // The store failed midway: show what it still holds, then fail.
            if let Some(failed) = err.downcast_ref::<suite::StoreFailedMidRun>()
                && let Ok(stored) = store.load_run(failed.run_id)
            {
                print(&run_in(&stored, Format::Table, args.shown())?)?;
                eprintln!(
                    "the cases above are stored as run {} in {}",
                    stored.id,
                    store.path().display()
                );
            }
            // The store was lost and the run went on into a local file:
            // show the run from there; the error says how to move it.
            if let Some(lost) = err.downcast_ref::<suite::StoreLostMidRun>()
                && let Ok(stored) = crate::store::Store::open_existing(&lost.file)
                    .and_then(|fallback| fallback.load_run(lost.run_id))
            {
                print(&run_in(&stored, Format::Table, args.shown())?)?;
            }
            return Err(err);
        }
    };

    let format = args.format();
    print(&run_in(&run, format, args.shown())?)?;
    // JSON output is for programs: the run's id is in it.
    if format != Format::Json {
        eprintln!("stored as run {} in {}", run.id, store.path().display());
    }
    Ok(exit_status(&run))
}

/// Pins the process to the CPUs asked for and turns the arguments into a
/// plan and its methodology; every mistake here is a usage error.
pub(super) fn prepare(args: &RunArgs) -> anyhow::Result<(suite::Plan, Methodology, Vec<usize>)> {
    let cpus =
        crate::sys::affinity::restrict_to(args.cpus).map_err(|e| UsageError(format!("{e:#}")))?;
    let plan = suite::plan(&args.targets, &args.params, cpus.len())
        .map_err(|e| UsageError(e.to_string()))?;
    let methodology = args.methodology(plan.methodology.clone())?;
    args.checked_notes()?;
    check_pivot(args.pivot.as_ref(), &plan)?;
    Ok((plan, methodology, cpus))
}

/// Refuses a `--pivot ROW,COLUMN` that no workload of the plan could
/// make a table of: one without both parameters (a typo, most often).
fn check_pivot(choice: Option<&PivotChoice>, plan: &suite::Plan) -> Result<(), UsageError> {
    let Some(PivotChoice::Given { row, column }) = choice else {
        return Ok(());
    };
    let mut workloads: Vec<&dyn crate::engine::Workload> = Vec::new();
    for case in &plan.cases {
        if !workloads.iter().any(|w| w.id() == case.workload.id()) {
            workloads.push(case.workload);
        }
    }
    let has =
        |w: &&dyn crate::engine::Workload, name: &str| w.params().iter().any(|p| p.name == name);
    if workloads.iter().any(|w| has(w, row) && has(w, column)) {
        return Ok(());
    }
    let listed: Vec<String> = workloads
        .iter()
        .map(|w| {
            let names: Vec<&str> = w.params().iter().map(|p| p.name).collect();
            format!("{}: {}", w.id(), names.join(", "))
        })
        .collect();
    Err(UsageError(format!(
        "--pivot {row},{column}: no selected workload has both parameters; theirs are:\n{}",
        listed.join("\n")
    )))
}

/// Checks `args` as [`prepare`] does, without pinning this process: for a
/// run that happens elsewhere (`fleet run`), with this host's CPU count.
pub(super) fn check_plan(args: &RunArgs) -> anyhow::Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let plan =
        suite::plan(&args.targets, &args.params, cpus).map_err(|e| UsageError(e.to_string()))?;
    args.methodology(plan.methodology.clone())?;
    args.checked_notes()?;
    Ok(())
}

/// The plan, methodology and CPU count of the run `args` describe on this
/// host, checked as [`prepare`] checks them but without pinning this
/// process: what `sledge plan` shows.
pub(super) fn plan_only(args: &RunArgs) -> anyhow::Result<(suite::Plan, Methodology, usize)> {
    let allowed = crate::sys::affinity::allowed_cpus()?.len();
    let cpus = match args.cpus {
        None => allowed,
        Some(n) if (1..=allowed).contains(&n) => n,
        Some(n) => {
            return Err(UsageError(format!(
                "--cpus {n} is not possible: this process may use {allowed} CPU(s); allowed is 1 to {allowed}"
            ))
            .into());
        }
    };
    let plan =
        suite::plan(&args.targets, &args.params, cpus).map_err(|e| UsageError(e.to_string()))?;
    let methodology = args.methodology(plan.methodology.clone())?;
    Ok((plan, methodology, cpus))
}

/// One run of `plan`, every round in a fresh process, progress bars on a
/// terminal; the run as stored.
pub(super) fn run_once(
    args: &RunArgs,
    plan: &suite::Plan,
    methodology: &Methodology,
    cpus: &[usize],
    store: &mut crate::store::Store,
    cancel: &engine::CancelToken,
) -> anyhow::Result<crate::results::RunRecord> {
    let progress = RunProgress::new(
        plan.cases.len() * methodology.min_rounds as usize,
        std::io::stderr().is_terminal(),
    );
    let options = RunOptions {
        cpus: cpus.to_vec(),
        methodology: methodology.clone(),
        idle_check: !args.no_idle_check,
        command_line: crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>()),
        notes: args.checked_notes()?,
    };
    let executor = suite::subprocess::Subprocess::current()?;
    suite::execute(plan, options, store, &executor, cancel, &progress).map_err(|err| {
        // A case that cannot run is the command line's mistake (or asks
        // for more than this host has): exit status 2, like a bad value.
        match err.downcast_ref::<suite::CaseCannotRun>() {
            Some(cannot) => UsageError(cannot.to_string()).into(),
            None => err,
        }
    })
}

/// The exit status a run ended with, saying so on stderr when interrupted.
pub(super) fn exit_status(run: &crate::results::RunRecord) -> ExitStatus {
    match run.status {
        RunStatus::Complete => ExitStatus::Success,
        RunStatus::Partial => {
            eprintln!("interrupted: the finished cases are stored; the run is marked partial");
            ExitStatus::Interrupted
        }
        RunStatus::Failed | RunStatus::Running | RunStatus::Abandoned => ExitStatus::Failure,
    }
}

/// Opens the store for runs of `plan`: checks it for damage (a damaged
/// store would fail when the first case is stored, after that case had
/// run), marks runs whose sledge is gone abandoned, removes what killed
/// sledges left where `plan` writes, and installs the interrupt handler;
/// returns the store and the token Ctrl-C cancels.
pub(super) fn open_for_runs(
    store_location: Option<StoreLocation>,
    plan: &suite::Plan,
) -> anyhow::Result<(crate::store::Store, engine::CancelToken)> {
    let mut store = open_store(store_location)?;
    store.check_integrity()?;
    mark_abandoned(&mut store)?;
    remove_leftovers(plan);
    for left in crate::suite::ab::knob::left_changed(&crate::suite::ab::knob::journal_dir()) {
        eprintln!("warning: {left}");
    }
    let cancel = engine::CancelToken::new();
    suite::interrupt::install_for_run(&cancel, store.location().clone());
    Ok((store, cancel))
}

/// Removes what killed sledges left in the directories `plan` writes to
/// (and the temporary directory), saying so.
fn remove_leftovers(plan: &suite::Plan) {
    for removed in suite::leftovers::sweep(&suite::leftovers::plan_dirs(plan)) {
        eprintln!(
            "note: removed {} left behind by a sledge that is gone (pid {})",
            removed.path.display(),
            removed.owner_pid
        );
    }
}

/// Marks the runs whose sledge is gone as `abandoned`, saying so.
fn mark_abandoned(store: &mut crate::store::Store) -> anyhow::Result<()> {
    for id in store.mark_abandoned_runs()? {
        eprintln!(
            "note: run {id} was left `running` by a sledge that is gone (killed or rebooted); marked abandoned, its stored cases kept"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_taken_within_their_range_bounds_included() {
        assert_eq!(count_in::<0, 20>("0"), Ok(0));
        assert_eq!(count_in::<0, 20>(" 20 "), Ok(20));
        assert!(count_in::<0, 20>("21").is_err());
        assert!(count_in::<1, 100>("0").is_err());
        assert!(count_in::<1, 100>("2.5").is_err());
        assert_eq!(share("0.5"), Ok(0.5));
        assert!(share("0").is_err() && share("1").is_err() && share("inf").is_err());
        assert_eq!(
            budget_secs("604800"),
            Ok(Duration::from_secs(MAX_BUDGET_SECS))
        );
        assert!(budget_secs("604800.5").is_err() && budget_secs("-1").is_err());
    }
}

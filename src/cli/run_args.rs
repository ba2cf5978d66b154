//! The arguments every command that runs cases shares (`run`, `ab`,
//! `calibrate`, `plan`, `fleet run`): the selection, the repetition
//! settings, the CPUs, the notes and how the run is shown; each value is
//! checked against its range as it is parsed, and together they make a
//! [`RunRequest`].
//!
//! The format flags are a parameter ([`FormatSet`]): `run` offers
//! `--json`, `ab` `--json` and `--markdown`, and one [`FormatArgs`] holds
//! whichever a command has, so no command merges two sets by hand.

use std::time::Duration;

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{MetricsShown, UsageError, run_view};
use crate::analysis::pivot_grouping::PivotChoice;
use crate::engine::methodology::MAX_ROUNDS;
use crate::report::export::{Format, RunShown};
use crate::store::StoreLocation;
use crate::suite::run_request::{BadRequest, Repetition, RunRequest};

/// The longest case budget accepted: a week.
const MAX_BUDGET_SECS: u64 = 7 * 24 * 3600;

/// The most warm-up trials per round (`--warmup`); the default is one.
const MAX_WARMUP: u32 = 20;

/// The most counted trials per round (`--min-trials`, `--max-trials`):
/// ten times the most of `--rounds 1`.
const MAX_TRIALS: u32 = 100;

/// Options of `sledge run` (and of `sledge calibrate`, which repeats it);
/// `F` names the format flags the command offers.
#[derive(Debug, Args)]
pub struct RunArgs<F: FormatSet = RunFormats> {
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
    format: FormatArgs<F>,
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
    pub(super) pivot: Option<PivotChoice>,
}

/// The formats of `sledge run` (and of `plan` and `ab`, which take its
/// options): `--json` alone.
#[derive(Debug)]
pub struct RunFormats;

impl FormatSet for RunFormats {
    const FLAGS: &'static [FormatFlag] = &[RUN_JSON];
}

/// `run`'s `--json`, which the commands that take its options keep.
pub const RUN_JSON: FormatFlag = FormatFlag {
    format: Format::Json,
    help: "Print the stored run as JSON instead of a table",
};

impl<F: FormatSet> RunArgs<F> {
    /// The format the flags chose.
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

    /// The run request these arguments make for the runs to go to
    /// `store`, its notes checked.
    pub(super) fn request(&self, store: Option<StoreLocation>) -> Result<RunRequest, UsageError> {
        let repetition = Repetition {
            rounds: self.rounds,
            max_rounds: self.max_rounds,
            warmup: self.warmup,
            min_trials: self.min_trials,
            max_trials: self.max_trials,
            ci_target: self.ci_target,
            budget: self.budget,
        };
        RunRequest::new(
            self.targets.clone(),
            self.params.clone(),
            self.cpus,
            repetition,
            !self.no_idle_check,
            &self.notes,
            store,
        )
        .map_err(usage)
    }
}

/// A mistake in a run request is the command line's: exit status 2.
pub(super) fn usage(err: BadRequest) -> UsageError {
    UsageError(err.0)
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

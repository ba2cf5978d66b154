//! `sledge compare BASE CAND [CAND...]`.

use clap::{Args, ValueEnum};

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, UsageError, open_existing_store, print};
use crate::analysis::noise_history::StoreNoise;
use crate::analysis::verdicts::{self, CompareOptions, NoNoiseHistory, NoiseHistory};
use crate::report::compare_table::MetricSelection;
use crate::report::export::{ComparisonShown, Format, View};
use crate::results::{RunRecord, RunStatus};
use crate::store::StoreLocation;
use crate::visible;

/// Options of `sledge compare`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each candidate is compared with the baseline case by case (same workload, \
version and parameters; threads=all matches across CPU counts): the ratio \
candidate / baseline of the headline metric with its 95% CI, a verdict, and \
the rule it rests on. The CI comes from the rounds of both runs, widened to \
the host's run-to-run noise when earlier runs of the case on the same host \
measured it (`sledge calibrate` builds that history on purpose; imported runs \
are never part of it, and a history scattering by more than 25% is used at \
25% and called suspect). A `no difference` verdict says which change it \
rules out (the larger side of its CI: `no difference, within ±3.1%`), and the \
summary counts those that could not have seen a change of --detect (5%). \
Flagged trials (busy, steal, swap, throttled) are left out: a case is judged \
on its unflagged trials when each side that had flagged ones kept 3 rounds \
with unflagged trials (3 unflagged trials for a run of one round), and not \
judged otherwise.

Exit status: 0, or 3 with --fail-if-slower when a headline metric is judged \
slower by more than the given percentage (1 on errors, 2 on bad usage).

Examples:
  sledge compare last~1 last
  sledge compare 12 13 14 --metrics all
  sledge compare base.id last --fail-if-slower 5      (a CI gate)
  sledge compare 12 13 --detect 2                     (could each case have seen 2%?)")]
pub struct CompareArgs {
    /// The baseline run (id, `last`, `last~N`).
    baseline: String,
    /// The candidate runs, each compared against the baseline.
    #[arg(required = true)]
    candidates: Vec<String>,
    /// Which metrics to show: each case's headline metric, or all.
    #[arg(long, value_enum, default_value_t = Metrics::Headline)]
    metrics: Metrics,
    /// Judge cases on all their trials, flagged ones (busy, steal, swap, throttled) included,
    /// instead of on their unflagged trials, or not at all when too few are left.
    #[arg(long)]
    trust_flagged: bool,
    /// The change a `no difference` verdict is asked about: the summary counts those whose
    /// CI leaves a change of PCT percent open, so could not have seen it.
    #[arg(long, value_name = "PCT", value_parser = change_to_detect, default_value = "5")]
    detect: f64,
    /// Ignore earlier runs: judge on the two runs' own rounds only.
    #[arg(long)]
    no_history: bool,
    /// Exit with status 3 when any headline metric is judged slower by more
    /// than PCT percent (for example 5).
    #[arg(long, value_name = "PCT", value_parser = percentage)]
    fail_if_slower: Option<f64>,
    #[command(flatten)]
    format: FormatArgs<CompareFormats>,
}

/// The formats of `sledge compare`: JSON, Markdown or JUnit.
#[derive(Debug)]
pub struct CompareFormats;

impl FormatSet for CompareFormats {
    const FLAGS: &'static [FormatFlag] = &[
        FormatFlag {
            format: Format::Json,
            help: "Print the comparison as JSON",
        },
        FormatFlag {
            format: Format::Markdown,
            help: "Print the comparison as Markdown",
        },
        FormatFlag {
            format: Format::Junit,
            help: "Print the comparison as a JUnit XML report: a test case per case, failed \
                   where --fail-if-slower fails it",
        },
    ];
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Metrics {
    Headline,
    All,
}

/// A change for --detect: a percentage above 0 and at most 100, as a
/// share (`5` or `5%` gives 0.05).
fn change_to_detect(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "`{text}` is not a change to detect: give a percentage above 0 and at most 100, for example 5 or 5%"
        )),
    }
}

/// A percentage for --fail-if-slower: a number from 0 to 100.
fn percentage(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{text}` is not a percentage: give a number from 0 to 100, for example 5"
        )),
    }
}

/// Prints the comparison of stored runs.
pub fn execute(args: CompareArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let store = open_existing_store(store)?;
    let baseline = store.load_run(store.resolve_run(&args.baseline)?)?;
    let mut candidates = Vec::with_capacity(args.candidates.len());
    for reference in &args.candidates {
        candidates.push(store.load_run(store.resolve_run(reference)?)?);
    }
    for run in std::iter::once(&baseline).chain(&candidates) {
        comparable(run)?;
    }
    let exclude: Vec<i64> = std::iter::once(baseline.id)
        .chain(candidates.iter().map(|c| c.id))
        .collect();
    let history = StoreNoise::new(&store, exclude);
    let noise: &dyn NoiseHistory = if args.no_history {
        &NoNoiseHistory
    } else {
        &history
    };
    let options = CompareOptions {
        trust_flagged: args.trust_flagged,
        detect: args.detect,
    };
    let comparison = verdicts::compare_many(&baseline, &candidates, noise, options);
    let metrics = match args.metrics {
        Metrics::Headline => MetricSelection::Headline,
        Metrics::All => MetricSelection::All,
    };
    print(
        &args
            .format
            .format()
            .render(&View::Comparison(ComparisonShown {
                comparison: &comparison,
                metrics,
                fail_if_slower: args.fail_if_slower,
            }))?,
    )?;
    if let Some(pct) = args.fail_if_slower {
        let found = verdicts::regressions(&comparison, pct);
        if !found.is_empty() {
            for (run, case, ratio) in &found {
                crate::say!(
                    "regression: run {run}: {}: ratio {ratio:.3}, judged slower by more than {pct}%",
                    visible::escape(case)
                );
            }
            return Ok(ExitStatus::Regression);
        }
    }
    Ok(ExitStatus::Success)
}

/// Refuses a run that cannot be compared yet, saying why: one still
/// `running` (its cases are not all there, or its sledge died without
/// saying so), or one without a single stored case.
fn comparable(run: &RunRecord) -> Result<(), UsageError> {
    // Every status is named, so that a new one must be decided on here.
    match run.status {
        RunStatus::Running => {
            return Err(UsageError(format!(
                "run {} has not finished: it is still `running` (started {}, {} case(s) stored so far), or the sledge that ran it was killed; compare it once it is complete, partial or failed",
                run.id,
                run.started,
                run.cases.len()
            )));
        }
        RunStatus::Abandoned => {
            return Err(UsageError(format!(
                "run {} never finished: the sledge that ran it is gone (killed, or the machine rebooted) and it is marked `abandoned` ({} case(s) stored); run it again to compare it",
                run.id,
                run.cases.len()
            )));
        }
        RunStatus::Complete | RunStatus::Partial | RunStatus::Failed => {}
    }
    if run.cases.is_empty() {
        return Err(UsageError(format!(
            "run {} has no stored case to compare (its status is {})",
            run.id,
            run.status.as_str()
        )));
    }
    Ok(())
}

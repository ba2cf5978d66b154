//! Comparing runs: each candidate against a baseline, cases matched by
//! workload, version and parameters; per metric the ratio, its CI and a
//! verdict, with the rule that decided it; per candidate a geometric mean
//! and counts; the host differences that may explain it all.
//!
//! **What a verdict rests on** (`stats::compare_sides`): the round means of
//! both sides (the hierarchical CI), widened to the host's run-to-run noise
//! where earlier runs of the case measured it, and never narrower than a
//! 2% change. A side with a single round has only trials to offer, and its
//! verdicts are marked as weaker. **Disturbed data is left out**: when a
//! trial the statistics use was flagged (steal, swap, busy, throttled) on
//! a side, that side is judged on its unflagged trials alone, if enough
//! of them are left ([`MIN_UNFLAGGED_ROUNDS`], or [`MIN_UNFLAGGED_TRIALS`]
//! for a one-round side), and the verdict says so (`judged_on`); with
//! fewer, the verdict is withheld, with the reason, unless the user trusts
//! flagged trials, which then count like any other. On a shared host (a
//! CI runner) some trial of nearly every case may be flagged: withholding
//! every such case would leave nothing judged. **What a no-difference
//! verdict rules out**: the larger side of its CI (`no difference, within
//! ±3.1%`), and the summary counts the no-difference cases whose CI
//! leaves a change of [`CompareOptions::detect`] (5% unless the user says)
//! open: they could not have seen it. **Price**: when both runs carry a
//! `price=` note in one currency, each ratio and the summary also come per
//! unit of price (`price_ratio.rs`).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

pub use super::host_facts::HostDifference;
use super::host_facts::host_differences;
use super::price_ratio::{PriceComparison, compare_prices};
use crate::engine::methodology::SINGLE_ROUND_MIN_TRIALS;
use crate::results::{CaseRecord, MetricRecord, RunRecord, Unit};
use crate::stats::{self, CiBasis, Comparison, Direction, RunNoise, Side, Verdict, VerdictBasis};
use crate::store::later_params;
use crate::visible::EscapeText;

/// Where the run-to-run noise of a case on a run's host comes from (the
/// store's earlier runs, through the suite).
pub trait NoiseHistory {
    /// Per metric name, how much `case` of `run` moves between runs on
    /// `run`'s host; metrics without enough history are absent.
    fn noise(&self, run: &RunRecord, case: &CaseRecord) -> HashMap<String, RunNoise>;
}

/// No history at all: verdicts rest on the runs alone.
pub struct NoNoiseHistory;

impl NoiseHistory for NoNoiseHistory {
    fn noise(&self, _run: &RunRecord, _case: &CaseRecord) -> HashMap<String, RunNoise> {
        HashMap::new()
    }
}

/// Choices about a comparison.
#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    /// Judge cases on all their trials, flagged ones included, instead of
    /// on their unflagged trials (or not at all when too few are left).
    pub trust_flagged: bool,
    /// The change, as a share (0.05 for 5%), that the summary asks of
    /// every no-difference verdict whether it could have seen it: a
    /// verdict whose CI leaves a larger change open could not
    /// ([`ComparisonSummary::could_not_detect`]).
    pub detect: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            trust_flagged: false,
            detect: DEFAULT_DETECT,
        }
    }
}

/// The change a no-difference verdict is asked about when the user names
/// none (`sledge compare --detect`): 5%, the smallest change a comparison
/// without history may call a change at all
/// ([`NO_HISTORY_THRESHOLD`](crate::stats::NO_HISTORY_THRESHOLD)).
pub const DEFAULT_DETECT: f64 = 0.05;

/// The fewest rounds with unflagged trials that a side with flagged
/// trials must keep to be judged on those trials alone. It is the number
/// of rounds a run gives every case (`Methodology::min_rounds`, 3 by
/// default), the fewest a run's own interval is meant to rest on: with
/// two round means a side's spread is a single difference (one degree of
/// freedom, where t(0.975) is 12.7), and one round that happened to land
/// high or low would decide the verdict.
pub const MIN_UNFLAGGED_ROUNDS: usize = 3;

/// The same for a side measured in a single round, whose units are its
/// trials: as many unflagged trials as such a run takes at least
/// ([`SINGLE_ROUND_MIN_TRIALS`]).
pub const MIN_UNFLAGGED_TRIALS: usize = SINGLE_ROUND_MIN_TRIALS as usize;

/// A baseline against one or more candidates.
#[derive(Debug, Clone, Serialize)]
pub struct MultiComparison {
    /// The baseline run's id.
    pub baseline: i64,
    /// One comparison per candidate, in the order given.
    pub candidates: Vec<RunComparison>,
}

/// The comparison of a candidate run against a baseline run.
#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    /// The baseline run's id.
    pub baseline: i64,
    /// The candidate run's id.
    pub candidate: i64,
    /// What differs between the two runs' hosts and software.
    pub host_differences: Vec<HostDifference>,
    /// Cases present in both runs, in the baseline's order.
    pub cases: Vec<CaseComparison>,
    /// Cases present in only one run, failed, or at different workload
    /// versions: why each was not compared.
    pub unmatched: Vec<String>,
    /// The headline metrics over all matched cases.
    pub summary: ComparisonSummary,
    /// Both runs' prices, when both have a `price=` note in one currency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<PriceComparison>,
    /// The two runs are the sides of one `sledge ab` (A the baseline, B
    /// the candidate), judged on their per-round paired ratios.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paired: bool,
    /// A's setting, then B's, as the pair's runs stored them (the
    /// `ab_setting` note: a knob's value, another sledge build and its
    /// architecture); only for a paired comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sides: Option<[String; 2]>,
}

/// One case present in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CaseComparison {
    /// Workload id.
    pub workload: String,
    /// Parameters as `k=v k=v` (a count given as `all` reads `all`).
    pub params: String,
    /// Disturbances in the trials the baseline's statistics use, as
    /// `busy 2/6`; empty when clean.
    pub baseline_disturbed: Vec<String>,
    /// The same for the candidate.
    pub candidate_disturbed: Vec<String>,
    /// One entry per metric present in both, headline first.
    pub metrics: Vec<MetricComparison>,
}

impl CaseComparison {
    /// The flagged trials of each side that has some, each side named as
    /// given: `base busy 1/6`, `cand steal 2/9, busy 1/9`.
    pub fn disturbed_sides(&self, baseline: &str, candidate: &str) -> Vec<String> {
        let mut sides = Vec::new();
        if !self.baseline_disturbed.is_empty() {
            sides.push(format!("{baseline} {}", self.baseline_disturbed.join(", ")));
        }
        if !self.candidate_disturbed.is_empty() {
            sides.push(format!(
                "{candidate} {}",
                self.candidate_disturbed.join(", ")
            ));
        }
        sides
    }

    /// The headline metric's comparison (the case's first metric).
    pub fn headline(&self) -> Option<&MetricComparison> {
        self.metrics.first()
    }
}

/// One metric of a matched case.
#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    /// Metric name.
    pub name: String,
    /// Unit.
    pub unit: Unit,
    /// Which way is better.
    pub direction: Direction,
    /// Baseline value: the mean of its round means (of the unflagged
    /// trials' round means when `judged_on` is `unflagged`, so that the
    /// two means give the ratio).
    pub baseline_mean: f64,
    /// Candidate value, the same way.
    pub candidate_mean: f64,
    /// Ratio candidate / baseline with its CI, p-value, verdict and the
    /// rule that decided; absent when a side has no usable samples or a
    /// mean of 0 (no ratio).
    pub comparison: Option<Comparison>,
    /// Why there is no comparison, when there is none: `no samples`, or
    /// which side's mean is 0 (a metric at 0 on both sides, such as an
    /// error count, is measured, just not a ratio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
    /// For a `no_difference` verdict, the change it rules out, as a share:
    /// the larger distance of the ratio's CI ends from 1
    /// ([`Comparison::widest_change`]); 0.031 reads "no difference, within
    /// ±3.1%". Absent for faster and slower, and where the CI is no
    /// interval (a single value on each side: nothing was tested).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_difference_within: Option<f64>,
    /// Whether the verdict stands: false when trials it rests on were
    /// flagged, too few unflagged ones were left to judge on (see
    /// `not_judged`) and flagged trials are not trusted. The comparison is
    /// still given, on all the trials, for information.
    pub judged: bool,
    /// Which trials the comparison rests on: `all` the trials the
    /// statistics use (no side flagged, flagged trials trusted, or not
    /// judged), or only the `unflagged` ones (a side had flagged trials,
    /// and each such side kept enough rounds without them).
    pub judged_on: JudgedOn,
    /// Why the verdict is withheld, when it is: which side kept too few
    /// rounds (or, for a one-round side, trials) without flagged trials,
    /// as `only 2 rounds of the candidate with unflagged trials, 3 needed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
    /// Earlier runs the baseline side's noise history rests on (0: none).
    pub baseline_history_runs: usize,
    /// The same for the candidate side.
    pub candidate_history_runs: usize,
    /// The ratio per unit of price (see
    /// [`ratio_per_price`](super::price_ratio::ratio_per_price)), when both
    /// runs have a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_per_price: Option<f64>,
    /// For the two sides of one `sledge ab` pair, the rounds whose ratio
    /// the comparison rests on (basis `paired`); 0 otherwise.
    #[serde(skip_serializing_if = "is_zero")]
    pub paired_rounds: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Which trials a comparison rests on. Serialized as `"all"` or
/// `"unflagged"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgedOn {
    /// Every trial the statistics use.
    #[default]
    All,
    /// The unflagged trials only: the flagged ones were left out.
    Unflagged,
}

impl MetricComparison {
    /// The verdict that stands: `None` when not judged or not comparable.
    pub fn verdict(&self) -> Option<Verdict> {
        self.comparison
            .as_ref()
            .filter(|_| self.judged)
            .map(|c| c.verdict)
    }
}

/// The headline metrics of one candidate over all matched cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ComparisonSummary {
    /// Geometric mean of the headline ratios over the judged cases, turned
    /// so that above 1 means the candidate is better (for a lower-is-better
    /// metric the ratio is inverted); `None` without judged cases.
    pub geometric_mean: Option<f64>,
    /// Its 95% CI from the cases' own intervals, taken as errors that move
    /// together (see [`summarize`]): never narrower than a typical case's.
    pub geometric_mean_ci: Option<(f64, f64)>,
    /// Cases judged faster.
    pub faster: usize,
    /// Cases judged slower.
    pub slower: usize,
    /// Cases judged with no significant difference.
    pub no_difference: usize,
    /// The change, as a share, the no-difference cases are asked about
    /// ([`CompareOptions::detect`]; 0.05 unless `--detect` says).
    pub detect: f64,
    /// No-difference cases that could not have seen a change of `detect`:
    /// their CI leaves a larger change open (`no_difference_within` above
    /// `detect`), or they have no interval at all.
    pub could_not_detect: usize,
    /// Cases not judged (flagged trials with too few unflagged ones left,
    /// or nothing to compare).
    pub not_judged: usize,
    /// Judged cases whose verdict rests on their unflagged trials alone.
    pub judged_on_unflagged: usize,
    /// Verdicts that rest only on within-run trials (weaker).
    pub weak: usize,
    /// The geometric mean per unit of price (above 1 = the candidate gives
    /// more for its price), when both runs have a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geometric_mean_per_price: Option<f64>,
    /// Its 95% CI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geometric_mean_per_price_ci: Option<(f64, f64)>,
}

/// A comparison's text escaped for the human formats
/// ([`crate::visible`]): it is made from the runs' own text (host facts,
/// workloads, parameters, metric names, a price's currency). The
/// comparison itself is made from the runs as stored, so that cases match
/// and the store's noise history is found by what was stored.
impl EscapeText for MultiComparison {
    fn escape_text(&mut self) {
        let MultiComparison {
            baseline: _,
            candidates,
        } = self;
        candidates.escape_text();
    }
}

impl EscapeText for RunComparison {
    fn escape_text(&mut self) {
        let RunComparison {
            baseline: _,
            candidate: _,
            host_differences,
            cases,
            unmatched,
            summary: _,
            price,
            paired: _,
            sides,
        } = self;
        if let Some(sides) = sides {
            for side in sides {
                side.escape_text();
            }
        }
        host_differences.escape_text();
        cases.escape_text();
        unmatched.escape_text();
        if let Some(PriceComparison {
            currency,
            baseline: _,
            candidate: _,
        }) = price
        {
            currency.escape_text();
        }
    }
}

impl EscapeText for CaseComparison {
    fn escape_text(&mut self) {
        let CaseComparison {
            workload,
            params,
            baseline_disturbed,
            candidate_disturbed,
            metrics,
        } = self;
        workload.escape_text();
        params.escape_text();
        baseline_disturbed.escape_text();
        candidate_disturbed.escape_text();
        metrics.escape_text();
    }
}

impl EscapeText for MetricComparison {
    fn escape_text(&mut self) {
        let MetricComparison {
            name,
            unit,
            direction: _,
            baseline_mean: _,
            candidate_mean: _,
            comparison: _,
            no_difference_within: _,
            judged: _,
            judged_on: _,
            // sledge's own words and numbers.
            not_judged: _,
            baseline_history_runs: _,
            candidate_history_runs: _,
            ratio_per_price: _,
            paired_rounds: _,
            not_compared,
        } = self;
        name.escape_text();
        unit.escape_text();
        not_compared.escape_text();
    }
}

/// Parameters whose value `all` (one per CPU) is resolved to a number at
/// run time; see [`reads_all`].
const PER_CPU_PARAMS: &[&str] = &["threads", "copies", "clients", "jobs"];

/// Whether parameter `name` of `case` (stored as `value`) of `run` reads
/// `all`: it was given as `all` (one per CPU the run may use), which the
/// case records. An explicit count does not, also where it equals the
/// run's CPU count: `threads=2` on 2 CPUs is not `threads=all`. A case
/// stored before sledge recorded this has only the count: there a per-CPU
/// count equal to the run's CPUs (more than one) reads `all`, as it did
/// then, since nothing tells the two apart.
pub(crate) fn reads_all(case: &CaseRecord, run: &RunRecord, name: &str, value: &str) -> bool {
    match &case.given_as_all {
        Some(names) => names.iter().any(|n| n == name),
        None => {
            run.cpus.len() > 1
                && PER_CPU_PARAMS.contains(&name)
                && value == run.cpus.len().to_string()
        }
    }
}

/// What a case is matched on: its workload and parameters, in two forms.
struct MatchKey {
    workload: String,
    /// As stored, except that a parameter given as `all` reads `all` (see
    /// [`reads_all`]). So `threads=all` on a 2-CPU VM matches
    /// `threads=all` on an 8-CPU box ("one core vs all cores" across
    /// machines), while an explicit count matches only the same explicit
    /// count.
    shown: BTreeMap<String, String>,
    /// As stored, counts given as `all` included: between runs with as
    /// many CPUs `all` is that count, so `threads=all` and `threads=2` on
    /// two 2-CPU runs are one case.
    stored: BTreeMap<String, String>,
}

/// The key `case` of `run` is matched on. A parameter a workload gained
/// later, at its default, counts as absent, so runs stored before it came
/// still match (see [`crate::store::later_params`]); which parameters came
/// later is the workload's to say.
fn match_key(case: &CaseRecord, run: &RunRecord) -> MatchKey {
    let later = crate::workloads::later_params_of(&case.workload);
    let stored = later_params::comparable(later, &case.params);
    let shown = stored
        .iter()
        .map(|(k, v)| {
            let all = reads_all(case, run, k, v);
            (k.clone(), if all { "all".to_string() } else { v.clone() })
        })
        .collect();
    MatchKey {
        workload: case.workload.clone(),
        shown,
        stored,
    }
}

/// A key's workload and one of its parameter forms, for lookups.
type KeyForm<'a> = (&'a str, &'a BTreeMap<String, String>);

impl MatchKey {
    fn by_shown(&self) -> KeyForm<'_> {
        (&self.workload, &self.shown)
    }

    fn by_stored(&self) -> KeyForm<'_> {
        (&self.workload, &self.stored)
    }
}

/// The first case of each key, by its shown form and by its stored form.
#[allow(clippy::type_complexity)]
fn first_by_key(keys: &[MatchKey]) -> (HashMap<KeyForm<'_>, usize>, HashMap<KeyForm<'_>, usize>) {
    let (mut shown, mut stored) = (HashMap::new(), HashMap::new());
    for (i, key) in keys.iter().enumerate() {
        shown.entry(key.by_shown()).or_insert(i);
        stored.entry(key.by_stored()).or_insert(i);
    }
    (shown, stored)
}

/// Compares every candidate against `baseline`.
pub fn compare_many(
    baseline: &RunRecord,
    candidates: &[RunRecord],
    noise: &dyn NoiseHistory,
    options: CompareOptions,
) -> MultiComparison {
    MultiComparison {
        baseline: baseline.id,
        candidates: candidates
            .iter()
            .map(|c| compare_runs(baseline, c, noise, options))
            .collect(),
    }
}

/// Compares `candidate` against `baseline`.
pub fn compare_runs(
    baseline: &RunRecord,
    candidate: &RunRecord,
    noise: &dyn NoiseHistory,
    options: CompareOptions,
) -> RunComparison {
    let mut cases = Vec::new();
    let mut unmatched = Vec::new();
    let candidate_keys: Vec<_> = candidate
        .cases
        .iter()
        .map(|c| match_key(c, candidate))
        .collect();
    let baseline_keys: Vec<_> = baseline
        .cases
        .iter()
        .map(|c| match_key(c, baseline))
        .collect();
    let same_cpus = baseline.cpus.len() == candidate.cpus.len();
    // The two sides of one `sledge ab` pair ran in the same rounds: each
    // case is judged on its per-round ratios.
    let paired = crate::results::ab_pair(baseline, candidate);
    // Each key's first case in the candidate, and the keys the baseline
    // has: a lookup per case, not a scan of the other run. A key matches
    // by its shown form, or by its stored form between runs with as many
    // CPUs (see [`MatchKey`]).
    let (candidate_shown, candidate_stored) = first_by_key(&candidate_keys);
    let (baseline_shown, baseline_stored) = first_by_key(&baseline_keys);
    for (a, key) in baseline.cases.iter().zip(&baseline_keys) {
        let by_shown = candidate_shown.get(&key.by_shown()).copied();
        let by_stored = same_cpus
            .then(|| candidate_stored.get(&key.by_stored()).copied())
            .flatten();
        let first = match (by_shown, by_stored) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        match first.map(|i| &candidate.cases[i]) {
            Some(b) if b.workload_version != a.workload_version => unmatched.push(format!(
                "{}: workload version {} in run {} but {} in run {}; not comparable",
                a.label(),
                a.workload_version,
                baseline.id,
                b.workload_version,
                candidate.id
            )),
            Some(b) if a.error.is_some() || b.error.is_some() => unmatched.push(format!(
                "{}: failed in run {}; not compared",
                a.label(),
                if a.error.is_some() {
                    baseline.id
                } else {
                    candidate.id
                }
            )),
            Some(b) => cases.push(compare_case(
                (baseline, a),
                (candidate, b),
                &key.shown,
                noise,
                options,
                paired,
            )),
            None => unmatched.push(format!("{}: only in run {}", a.label(), baseline.id)),
        }
    }
    for (b, key) in candidate.cases.iter().zip(&candidate_keys) {
        let known = baseline_shown.contains_key(&key.by_shown())
            || (same_cpus && baseline_stored.contains_key(&key.by_stored()));
        if !known {
            unmatched.push(format!("{}: only in run {}", b.label(), candidate.id));
        }
    }
    let summary = summarize(&cases, options.detect);
    let mut comparison = RunComparison {
        baseline: baseline.id,
        candidate: candidate.id,
        host_differences: host_differences(baseline, candidate),
        cases,
        unmatched,
        summary,
        price: None,
        paired,
        sides: paired
            .then(|| {
                let setting =
                    |r: &RunRecord| crate::results::ab_setting(&r.notes).map(str::to_string);
                Some([setting(baseline)?, setting(candidate)?])
            })
            .flatten(),
    };
    if let Some(prices) = compare_prices(baseline, candidate) {
        apply_prices(&mut comparison, prices);
    }
    comparison
}

/// Adds the per-price figures to a comparison: each metric's ratio per
/// unit of price and the geometric mean of the headlines per unit of price.
fn apply_prices(comparison: &mut RunComparison, prices: PriceComparison) {
    for case in &mut comparison.cases {
        for metric in &mut case.metrics {
            set_metric_per_price(metric, &prices);
        }
    }
    set_summary_per_price(&mut comparison.summary, &prices);
    comparison.price = Some(prices);
}

fn set_metric_per_price(metric: &mut MetricComparison, prices: &PriceComparison) {
    metric.ratio_per_price = metric
        .comparison
        .as_ref()
        .map(|c| super::price_ratio::ratio_per_price(c.ratio, metric.direction, prices));
}

/// The summary's geometric mean is already oriented "above 1 = candidate
/// better", so per unit of price it scales by the price ratio, CI and all.
fn set_summary_per_price(summary: &mut ComparisonSummary, prices: &PriceComparison) {
    let cheaper = prices.baseline / prices.candidate;
    summary.geometric_mean_per_price = summary.geometric_mean.map(|g| g * cheaper);
    summary.geometric_mean_per_price_ci = summary
        .geometric_mean_ci
        .map(|(lo, hi)| (lo * cheaper, hi * cheaper));
}

fn compare_case(
    (base_run, a): (&RunRecord, &CaseRecord),
    (cand_run, b): (&RunRecord, &CaseRecord),
    key: &BTreeMap<String, String>,
    noise: &dyn NoiseHistory,
    options: CompareOptions,
    paired: bool,
) -> CaseComparison {
    let base_noise = noise.noise(base_run, a);
    let cand_noise = noise.noise(cand_run, b);
    let baseline_disturbed = disturbed(a);
    let candidate_disturbed = disturbed(b);
    let clean = baseline_disturbed.is_empty() && candidate_disturbed.is_empty();
    let metrics = a
        .metrics
        .iter()
        .filter_map(|ma| {
            let mb = b.metrics.iter().find(|m| m.name == ma.name)?;
            if paired {
                return Some(paired_metric(ma, a, mb, b, clean || options.trust_flagged));
            }
            let footing = if clean || options.trust_flagged {
                Footing::All
            } else {
                let base = unflagged_units(ma, a, !baseline_disturbed.is_empty(), "baseline");
                let cand = unflagged_units(mb, b, !candidate_disturbed.is_empty(), "candidate");
                match (base, cand) {
                    (Ok(base), Ok(cand)) => Footing::Unflagged(base, cand),
                    (base, cand) => Footing::Withheld(
                        [base.err(), cand.err()]
                            .into_iter()
                            .flatten()
                            .collect::<Vec<_>>()
                            .join("; "),
                    ),
                }
            };
            let (judged_on, not_judged, (base_units, base_basis), (cand_units, cand_basis)) =
                match footing {
                    Footing::All => (JudgedOn::All, None, units(ma, a), units(mb, b)),
                    Footing::Unflagged(base, cand) => (JudgedOn::Unflagged, None, base, cand),
                    Footing::Withheld(why) => {
                        (JudgedOn::All, Some(why), units(ma, a), units(mb, b))
                    }
                };
            let base_history = base_noise.get(&ma.name);
            let cand_history = cand_noise.get(&ma.name);
            let comparison = stats::compare_sides(
                Side {
                    units: &base_units,
                    basis: base_basis,
                    history: base_history,
                },
                Side {
                    units: &cand_units,
                    basis: cand_basis,
                    history: cand_history,
                },
                ma.direction,
            );
            let not_compared = comparison
                .is_none()
                .then(|| why_not_compared(&base_units, &cand_units));
            // Both sides a single value: the "interval" is the ratio
            // itself, and says nothing about what was ruled out.
            let tested = base_units.len() >= 2 || cand_units.len() >= 2;
            let no_difference_within = comparison
                .as_ref()
                .filter(|c| c.verdict == Verdict::NoDifference && tested)
                .map(Comparison::widest_change);
            let (baseline_mean, candidate_mean) = match judged_on {
                JudgedOn::All => (ma.summary.mean, mb.summary.mean),
                JudgedOn::Unflagged => (mean(&base_units), mean(&cand_units)),
            };
            Some(MetricComparison {
                name: ma.name.clone(),
                unit: ma.unit.clone(),
                direction: ma.direction,
                baseline_mean,
                candidate_mean,
                comparison,
                not_compared,
                no_difference_within,
                judged: not_judged.is_none(),
                judged_on,
                not_judged,
                baseline_history_runs: base_history.map_or(0, |h| h.runs),
                candidate_history_runs: cand_history.map_or(0, |h| h.runs),
                ratio_per_price: None,
                paired_rounds: 0,
            })
        })
        .collect();
    CaseComparison {
        workload: a.workload.clone(),
        params: key
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
        baseline_disturbed,
        candidate_disturbed,
        metrics,
    }
}

/// What a metric's comparison rests on.
enum Footing {
    /// Every trial the statistics use, on both sides.
    All,
    /// Each side's unflagged trials (all of them on a side without flags).
    Unflagged((Vec<f64>, CiBasis), (Vec<f64>, CiBasis)),
    /// Too few unflagged trials on a side: why.
    Withheld(String),
}

/// A side's independent units from its unflagged trials, when it has
/// flagged ones (`flagged`) and enough rounds are left without them: at
/// least [`MIN_UNFLAGGED_ROUNDS`] rounds with an unflagged trial, or for a
/// side of a single round, [`MIN_UNFLAGGED_TRIALS`] unflagged trials. A
/// round keeps its unflagged trials: its mean is that of those. A side
/// without flagged trials loses nothing and needs nothing more than it
/// would on its own. Otherwise why not, naming the side as `side`.
fn unflagged_units(
    metric: &MetricRecord,
    case: &CaseRecord,
    flagged: bool,
    side: &str,
) -> Result<(Vec<f64>, CiBasis), String> {
    if !flagged {
        return Ok(units(metric, case));
    }
    let used_rounds = rounds_of(metric, case, false).len();
    let kept = rounds_of(metric, case, true);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if used_rounds >= 2 {
        let n = kept.len();
        if n < MIN_UNFLAGGED_ROUNDS {
            return Err(format!(
                "only {n} round{} of the {side} with unflagged trials, {MIN_UNFLAGGED_ROUNDS} needed",
                plural(n)
            ));
        }
    } else {
        let n: usize = kept.iter().map(Vec::len).sum();
        if n < MIN_UNFLAGGED_TRIALS {
            return Err(format!(
                "only {n} unflagged trial{} of the {side}, {MIN_UNFLAGGED_TRIALS} needed",
                plural(n)
            ));
        }
    }
    Ok(units_of(kept))
}

/// A side's independent units: its round means when it has two rounds or
/// more, else its trials (runs from before rounds, or `--rounds 1`).
fn units(metric: &MetricRecord, case: &CaseRecord) -> (Vec<f64>, CiBasis) {
    units_of(rounds_of(metric, case, false))
}

/// The values of the trials the statistics use (not replaced), and only
/// the unflagged ones if `unflagged_only`, grouped by round; rounds left
/// without a value are dropped.
fn rounds_of(metric: &MetricRecord, case: &CaseRecord, unflagged_only: bool) -> Vec<Vec<f64>> {
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    for (trial, value) in case.trials.iter().zip(&metric.samples) {
        if trial.replaced || (unflagged_only && !trial.health.flags.is_empty()) {
            continue;
        }
        let round = trial.round as usize;
        if rounds.len() <= round {
            rounds.resize(round + 1, Vec::new());
        }
        rounds[round].push(*value);
    }
    rounds.retain(|r| !r.is_empty());
    rounds
}

/// Round means when there are two rounds or more, else the one round's
/// values.
fn units_of(rounds: Vec<Vec<f64>>) -> (Vec<f64>, CiBasis) {
    if rounds.len() >= 2 {
        let means = rounds.iter().map(|r| mean(r)).collect();
        (means, CiBasis::Rounds)
    } else {
        (rounds.into_iter().flatten().collect(), CiBasis::Trials)
    }
}

/// The plain mean of `values` (NaN for none).
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// A metric of a case measured by both sides of a `sledge ab` pair,
/// judged on its per-round paired ratios ([`stats::compare_paired`]): the
/// rounds both sides have, each side's round mean over its unflagged
/// trials unless `all_trials` (no side flagged, or flagged trials
/// trusted). With flagged trials left out, at least
/// [`MIN_UNFLAGGED_ROUNDS`] pairs must remain for a verdict.
fn paired_metric(
    ma: &MetricRecord,
    a: &CaseRecord,
    mb: &MetricRecord,
    b: &CaseRecord,
    all_trials: bool,
) -> MetricComparison {
    let pairs = |unflagged_only: bool| {
        let base = rounds_by_index(ma, a, unflagged_only);
        let cand = rounds_by_index(mb, b, unflagged_only);
        base.iter()
            .filter_map(|(round, x)| Some((*x, *cand.get(round)?)))
            .unzip::<f64, f64, Vec<f64>, Vec<f64>>()
    };
    let (mut base_units, mut cand_units) = pairs(!all_trials);
    let (mut judged_on, mut not_judged) = if all_trials {
        (JudgedOn::All, None)
    } else {
        (JudgedOn::Unflagged, None)
    };
    if !all_trials && base_units.len() < MIN_UNFLAGGED_ROUNDS {
        not_judged = Some(format!(
            "only {} round{} with unflagged trials on both sides, {MIN_UNFLAGGED_ROUNDS} needed",
            base_units.len(),
            if base_units.len() == 1 { "" } else { "s" }
        ));
        judged_on = JudgedOn::All;
        (base_units, cand_units) = pairs(false);
    }
    let comparison = stats::compare_paired(&base_units, &cand_units, ma.direction);
    let not_compared = comparison
        .is_none()
        .then(|| why_not_compared(&base_units, &cand_units));
    let no_difference_within = comparison
        .as_ref()
        .filter(|c| c.verdict == Verdict::NoDifference && base_units.len() >= 2)
        .map(Comparison::widest_change);
    MetricComparison {
        name: ma.name.clone(),
        unit: ma.unit.clone(),
        direction: ma.direction,
        baseline_mean: mean(&base_units),
        candidate_mean: mean(&cand_units),
        comparison,
        not_compared,
        no_difference_within,
        judged: not_judged.is_none(),
        judged_on,
        not_judged,
        baseline_history_runs: 0,
        candidate_history_runs: 0,
        ratio_per_price: None,
        paired_rounds: base_units.len(),
    }
}

/// A case's round means of `metric` by round number, over the trials
/// the statistics use (only the unflagged ones if `unflagged_only`);
/// rounds without such a trial are absent.
fn rounds_by_index(
    metric: &MetricRecord,
    case: &CaseRecord,
    unflagged_only: bool,
) -> BTreeMap<u32, f64> {
    let mut sums: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
    for (trial, value) in case.trials.iter().zip(&metric.samples) {
        if trial.replaced || (unflagged_only && !trial.health.flags.is_empty()) {
            continue;
        }
        let entry = sums.entry(trial.round).or_default();
        entry.0 += value;
        entry.1 += 1;
    }
    sums.into_iter()
        .map(|(round, (sum, n))| (round, sum / n as f64))
        .collect()
}

/// Why two sides' units gave no comparison (`stats::compare` returns none
/// for an empty side, a value that is not finite, a mean of 0, or an
/// overflow). A mean of 0 is data, not its absence: it says which side.
fn why_not_compared(base: &[f64], cand: &[f64]) -> String {
    if base.is_empty() || cand.is_empty() {
        "no samples".to_string()
    } else if base.iter().chain(cand).any(|v| !v.is_finite()) {
        "a value is not a finite number".to_string()
    } else {
        match (mean(base) == 0.0, mean(cand) == 0.0) {
            (true, true) => "0 on both sides: no ratio".to_string(),
            (true, false) => "the baseline is 0: no ratio".to_string(),
            (false, true) => "the candidate is 0: no ratio".to_string(),
            (false, false) => "the ratio is out of range".to_string(),
        }
    }
}

/// `busy 2/6`-style notes for the flagged trials a case's statistics use.
fn disturbed(case: &CaseRecord) -> Vec<String> {
    let used = case.used_trials();
    case.disturbances()
        .into_iter()
        .map(|(kind, count)| format!("{kind} {count}/{used}"))
        .collect()
}

/// Counts and the geometric mean of the headline ratios.
///
/// The interval of the geometric mean is the mean of the cases' own
/// half-widths on the log scale, the interval it would have if every
/// case's error were the same error. That is the honest assumption here:
/// the cases of one run share its moment (the host's drift, its
/// neighbours, the memory placement of that boot), so a run that was slow
/// is slow in most of its cases at once. Taking the cases as independent
/// shrinks the interval by the square root of their number and, measured
/// on an A/A pair of quick runs (71 cases) without history, gave 0.890
/// [0.863, 0.919]: a machine "11% slower" than itself. Where a case's
/// interval rests on the host's run-to-run history, its half-width
/// already holds that drift, and so does the mean of them.
///
/// A no-difference case whose CI leaves open a change larger than
/// `detect` (a share) could not have seen such a change, and is counted
/// as such.
fn summarize(cases: &[CaseComparison], detect: f64) -> ComparisonSummary {
    let mut summary = ComparisonSummary {
        detect,
        ..ComparisonSummary::default()
    };
    let (mut log_sum, mut half_sum, mut n) = (0.0, 0.0, 0usize);
    for case in cases {
        let Some(headline) = case.headline() else {
            summary.not_judged += 1;
            continue;
        };
        match headline.verdict() {
            None => {
                summary.not_judged += 1;
                continue;
            }
            Some(Verdict::Faster) => summary.faster += 1,
            Some(Verdict::Slower) => summary.slower += 1,
            Some(Verdict::NoDifference) => {
                summary.no_difference += 1;
                if headline.no_difference_within.is_none_or(|w| w > detect) {
                    summary.could_not_detect += 1;
                }
            }
        }
        if headline.judged_on == JudgedOn::Unflagged {
            summary.judged_on_unflagged += 1;
        }
        let c = headline
            .comparison
            .as_ref()
            .expect("judged implies compared");
        if c.basis == VerdictBasis::Trials {
            summary.weak += 1;
        }
        if c.ratio.is_nan() || c.ratio <= 0.0 {
            continue;
        }
        // Better-is-above-1 orientation; the CI is symmetric on the log
        // scale.
        let sign = match headline.direction {
            Direction::Higher => 1.0,
            Direction::Lower => -1.0,
        };
        log_sum += sign * c.ratio.ln();
        half_sum += (c.ratio_ci_high / c.ratio).ln();
        n += 1;
    }
    if n > 0 {
        let mean = log_sum / n as f64;
        let half = half_sum / n as f64;
        summary.geometric_mean = Some(mean.exp());
        summary.geometric_mean_ci = Some(((mean - half).exp(), (mean + half).exp()));
    }
    summary
}

/// The headline verdicts that fail a `--fail-if-slower PCT` gate: judged
/// slower with a loss above `pct` percent (ratio below `1 - pct/100` for a
/// higher-is-better metric, above `1 + pct/100` for a lower-is-better one),
/// as `(candidate id, case label, ratio)`.
pub fn regressions(comparison: &MultiComparison, pct: f64) -> Vec<(i64, String, f64)> {
    let mut found = Vec::new();
    for run in &comparison.candidates {
        for case in &run.cases {
            let Some(headline) = case.headline() else {
                continue;
            };
            if headline.verdict() != Some(Verdict::Slower) {
                continue;
            }
            let ratio = headline.comparison.as_ref().map_or(1.0, |c| c.ratio);
            let loss = match headline.direction {
                Direction::Higher => 1.0 - ratio,
                Direction::Lower => ratio - 1.0,
            };
            if loss * 100.0 > pct {
                found.push((
                    run.candidate,
                    format!("{} {}", case.workload, case.params),
                    ratio,
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{Disturbance, TrialHealth};
    use crate::results::{RunStatus, TrialRecord};

    /// A case given `threads` as `all`, which `cpus` resolved.
    fn all_case(cpus: usize, rounds: &[&[f64]]) -> CaseRecord {
        CaseRecord {
            given_as_all: Some(vec!["threads".into()]),
            ..case(&cpus.to_string(), rounds)
        }
    }

    /// A case whose rounds have these trial values (`threads` as given).
    fn case(threads: &str, rounds: &[&[f64]]) -> CaseRecord {
        let mut trials = Vec::new();
        let mut samples = Vec::new();
        for (round, values) in rounds.iter().enumerate() {
            for v in *values {
                trials.push(TrialRecord {
                    index: trials.len() as u32,
                    round: round as u32,
                    replaced: false,
                    seconds: 0.5,
                    health: TrialHealth::default(),
                });
                samples.push(*v);
            }
        }
        let grouped: Vec<Vec<f64>> = rounds.iter().map(|r| r.to_vec()).collect();
        let (summary, levels) = stats::summarize_rounds(&grouped).unwrap();
        CaseRecord {
            workload: "cpu.primes".into(),
            workload_version: 1,
            params: [("threads".to_string(), threads.to_string())].into(),
            given_as_all: Some(vec![]),
            warnings: vec![],
            error: None,
            rounds: vec![],
            trials,
            metrics: vec![MetricRecord {
                name: "events_per_sec".into(),
                unit: "events/s".into(),
                direction: Direction::Higher,
                summary,
                levels: Some(levels),
                outliers: vec![false; samples.len()],
                samples,
            }],
            latency_histogram: None,
            values: None,
        }
    }

    fn run(id: i64, cpus: usize, cases: Vec<CaseRecord>) -> RunRecord {
        RunRecord {
            id,
            uuid: String::new(),
            started: String::new(),
            finished: None,
            sledge_version: "0".into(),
            profile: "quick".into(),
            command_line: String::new(),
            status: RunStatus::Complete,
            cpus: (0..cpus).collect(),
            notes: vec![],
            warnings: vec![],
            host: Default::default(),
            cases,
        }
    }

    fn plain(a: &RunRecord, b: &RunRecord) -> RunComparison {
        compare_runs(a, b, &NoNoiseHistory, CompareOptions::default())
    }

    #[test]
    fn all_cpu_cases_match_across_hosts_with_different_cpu_counts() {
        let vm = run(
            1,
            2,
            vec![
                case("1", &[&[100.0], &[101.0], &[99.0]]),
                all_case(2, &[&[200.0], &[202.0], &[198.0]]),
            ],
        );
        let host = run(
            2,
            8,
            vec![
                case("1", &[&[120.0], &[121.0], &[119.0]]),
                all_case(8, &[&[800.0], &[808.0], &[792.0]]),
            ],
        );
        let cmp = plain(&vm, &host);
        assert!(cmp.unmatched.is_empty(), "{:?}", cmp.unmatched);
        assert_eq!(cmp.cases.len(), 2);
        assert_eq!(cmp.cases[1].params, "threads=all");
        let all_cores = cmp.cases[1].metrics[0].comparison.as_ref().unwrap();
        assert!((all_cores.ratio - 4.0).abs() < 1e-9);
        assert_eq!(all_cores.verdict, Verdict::Faster);
        assert_eq!(all_cores.basis, VerdictBasis::Rounds);
        assert_eq!(cmp.host_differences[0].what, "CPUs used");
        assert_eq!(cmp.summary.faster, 2);
        // Geometric mean of 1.2 and 4.
        let g = cmp.summary.geometric_mean.unwrap();
        assert!((g - (1.2f64 * 4.0).sqrt()).abs() < 1e-9, "{g}");
        let (lo, hi) = cmp.summary.geometric_mean_ci.unwrap();
        assert!(lo < g && g < hi);
    }

    #[test]
    fn an_explicit_count_equal_to_the_cpus_matches_only_that_count() {
        // `threads=1,2` on 2 CPUs, `threads=2,all` on 4: the explicit 2s
        // are one case, and `all` (4) has no partner.
        let rounds: &[&[f64]] = &[&[100.0], &[101.0], &[99.0]];
        let two_cpus = run(1, 2, vec![case("1", rounds), case("2", rounds)]);
        let four_cpus = run(2, 4, vec![case("2", rounds), all_case(4, rounds)]);
        let cmp = plain(&two_cpus, &four_cpus);
        let matched: Vec<&str> = cmp.cases.iter().map(|c| c.params.as_str()).collect();
        assert_eq!(matched, ["threads=2"], "{:?}", cmp.unmatched);
        assert_eq!(
            cmp.unmatched,
            [
                "cpu.primes threads=1: only in run 1",
                "cpu.primes threads=4: only in run 2"
            ]
        );
        // `all` meets `all` whatever the CPU counts.
        let all_two = run(3, 2, vec![all_case(2, rounds)]);
        let cmp = plain(&all_two, &four_cpus);
        assert_eq!(cmp.cases.len(), 1);
        assert_eq!(cmp.cases[0].params, "threads=all");
        assert_eq!(cmp.unmatched, ["cpu.primes threads=2: only in run 2"]);
        // With as many CPUs, `all` is that count: one case either way.
        for (a, b) in [(&two_cpus, &all_two), (&all_two, &two_cpus)] {
            let cmp = plain(a, b);
            assert_eq!(cmp.cases.len(), 1, "{:?}", cmp.unmatched);
            assert_eq!(cmp.unmatched, ["cpu.primes threads=1: only in run 1"]);
        }
    }

    #[test]
    fn cases_stored_before_all_was_recorded_read_a_count_equal_to_the_cpus_as_all() {
        let rounds: &[&[f64]] = &[&[100.0], &[101.0], &[99.0]];
        let legacy = |threads: &str| CaseRecord {
            given_as_all: None,
            ..case(threads, rounds)
        };
        let old = run(1, 2, vec![legacy("1"), legacy("2")]);
        let new = run(2, 8, vec![case("1", rounds), all_case(8, rounds)]);
        let cmp = plain(&old, &new);
        assert!(cmp.unmatched.is_empty(), "{:?}", cmp.unmatched);
        assert_eq!(cmp.cases[1].params, "threads=all");
    }

    #[test]
    fn the_geometric_means_interval_is_as_wide_as_its_cases_not_narrower() {
        // Four cases measured alike: the same ratio, the same interval.
        // Their errors are taken to move together (one run, one moment),
        // so the geometric mean is as uncertain as any one of them; taken
        // as independent, its interval would be half as wide (sqrt 4).
        let rounds_a: &[&[f64]] = &[&[100.0], &[104.0], &[96.0]];
        let rounds_b: &[&[f64]] = &[&[110.0], &[114.4], &[105.6]];
        let threads = ["1", "2", "3", "4"];
        let a = run(1, 2, threads.iter().map(|t| case(t, rounds_a)).collect());
        let b = run(2, 2, threads.iter().map(|t| case(t, rounds_b)).collect());
        let cmp = plain(&a, &b);
        assert_eq!(cmp.cases.len(), 4);
        let one = cmp.cases[0].metrics[0].comparison.as_ref().unwrap();
        let (lo, hi) = cmp.summary.geometric_mean_ci.unwrap();
        let g = cmp.summary.geometric_mean.unwrap();
        assert!((g - 1.1).abs() < 1e-9, "{g}");
        assert!((lo - one.ratio_ci_low).abs() < 1e-9, "{lo} vs {one:?}");
        assert!((hi - one.ratio_ci_high).abs() < 1e-9, "{hi} vs {one:?}");
    }

    #[test]
    fn a_later_parameter_at_its_default_matches_runs_from_before_it() {
        let http = |clients_from: Option<&str>, values: &[&[f64]]| {
            let mut c = case("1", values);
            c.workload = "http.static".into();
            if let Some(v) = clients_from {
                c.params.insert("clients_from".into(), v.into());
            }
            c
        };
        let rounds: &[&[f64]] = &[&[100.0], &[101.0], &[99.0]];
        // Stored before `clients_from` existed, and after, at its default.
        let old = run(1, 2, vec![http(None, rounds)]);
        let new = run(2, 2, vec![http(Some("local"), rounds)]);
        for (a, b) in [(&old, &new), (&new, &old)] {
            let cmp = plain(a, b);
            assert!(cmp.unmatched.is_empty(), "{:?}", cmp.unmatched);
            assert_eq!(cmp.cases.len(), 1);
            let same = cmp.cases[0].metrics[0].comparison.as_ref().unwrap();
            assert!((same.ratio - 1.0).abs() < 1e-9);
        }
        // Any other value is another case.
        let remote = run(3, 2, vec![http(Some("root@h1"), rounds)]);
        let cmp = plain(&old, &remote);
        assert!(cmp.cases.is_empty());
        assert_eq!(cmp.unmatched.len(), 2, "{:?}", cmp.unmatched);
    }

    #[test]
    fn failed_and_missing_cases_are_listed_not_compared() {
        let mut failed = case("1", &[&[1.0, 1.0]]);
        failed.error = Some("boom".into());
        let a = run(1, 2, vec![failed, case("3", &[&[1.0, 1.0]])]);
        let b = run(2, 2, vec![case("1", &[&[1.0, 1.0]])]);
        let cmp = plain(&a, &b);
        assert!(cmp.cases.is_empty());
        assert_eq!(cmp.unmatched.len(), 2);
        assert!(cmp.unmatched[0].contains("failed in run 1"));
        assert!(cmp.unmatched[1].contains("only in run 1"));
    }

    #[test]
    fn one_round_runs_give_weaker_verdicts() {
        let a = run(1, 1, vec![case("1", &[&[100.0, 101.0, 99.0]])]);
        let b = run(2, 1, vec![case("1", &[&[120.0, 121.0, 119.0]])]);
        let cmp = plain(&a, &b);
        let c = cmp.cases[0].metrics[0].comparison.as_ref().unwrap();
        assert_eq!(
            (c.verdict, c.basis),
            (Verdict::Faster, VerdictBasis::Trials)
        );
        assert_eq!(cmp.summary.weak, 1);
    }

    #[test]
    fn flagged_trials_withhold_the_verdict_unless_trusted() {
        let a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let mut busy_case = case("1", &[&[150.0], &[151.0], &[149.0]]);
        busy_case.trials[1].health.flags = vec![Disturbance::BusyHost];
        let b = run(2, 1, vec![busy_case]);
        let cmp = plain(&a, &b);
        let compared = &cmp.cases[0];
        assert_eq!(compared.candidate_disturbed, vec!["busy 1/3".to_string()]);
        assert!(compared.baseline_disturbed.is_empty());
        assert!(!compared.metrics[0].judged);
        assert_eq!(compared.metrics[0].verdict(), None);
        // Two rounds are left without the flagged trial: too few.
        assert_eq!(
            compared.metrics[0].not_judged.as_deref(),
            Some("only 2 rounds of the candidate with unflagged trials, 3 needed")
        );
        // The comparison itself is still there, for information.
        assert_eq!(
            compared.metrics[0].comparison.as_ref().unwrap().verdict,
            Verdict::Faster
        );
        assert_eq!((cmp.summary.faster, cmp.summary.not_judged), (0, 1));
        assert_eq!(cmp.summary.geometric_mean, None);
        let trusted = compare_runs(
            &a,
            &b,
            &NoNoiseHistory,
            CompareOptions {
                trust_flagged: true,
                ..CompareOptions::default()
            },
        );
        assert_eq!(trusted.cases[0].metrics[0].verdict(), Some(Verdict::Faster));
        // A flagged trial that was replaced is not in the data used.
        let mut replaced = case("1", &[&[100.0, 100.0], &[101.0], &[99.0]]);
        replaced.trials[0].health.flags = vec![Disturbance::Steal];
        assert_eq!(disturbed(&replaced), vec!["steal 1/4".to_string()]);
        replaced.trials[0].replaced = true;
        assert!(disturbed(&replaced).is_empty());
    }

    /// Flags the trials at `indexes` of `case` busy.
    fn busy(mut case: CaseRecord, indexes: &[usize]) -> CaseRecord {
        for &i in indexes {
            case.trials[i].health.flags = vec![Disturbance::BusyHost];
        }
        case
    }

    /// Round means 100, 101, 99, 100 and 100: mean 100, sd 0.707.
    const FIVE_ROUNDS: &[&[f64]] = &[&[100.0], &[101.0], &[99.0], &[100.0], &[100.0]];

    #[test]
    fn a_no_difference_verdict_carries_the_larger_side_of_its_ci() {
        // Round means 100, 101, 99 against 100.5, 101.5, 99.5: each side
        // sd 1 over 3 rounds (squared standard error 1/3), Welch df 4.
        let a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let b = run(2, 1, vec![case("1", &[&[100.5], &[101.5], &[99.5]])]);
        let cmp = plain(&a, &b);
        let m = &cmp.cases[0].metrics[0];
        let c = m.comparison.as_ref().unwrap();
        assert_eq!(m.verdict(), Some(Verdict::NoDifference));
        // ln-ratio half-width t(0.975, 4) · √(1/3 / 100² + 1/3 / 100.5²);
        // the interval is symmetric on the log scale around 1.005, so its
        // upper side is the larger: 1.005 · e^half − 1 ≈ 2.8%.
        let half =
            2.776_445 * ((1.0 / 3.0) / 100f64.powi(2) + (1.0 / 3.0) / 100.5f64.powi(2)).sqrt();
        let within = m.no_difference_within.unwrap();
        assert!(
            (within - (1.005 * half.exp() - 1.0)).abs() < 1e-5,
            "{within}"
        );
        assert!((within - (c.ratio_ci_high - 1.0)).abs() < 1e-12, "{c:?}");
        assert!(within > 1.0 - c.ratio_ci_low);
        let json = serde_json::to_value(m).unwrap();
        assert_eq!(json["no_difference_within"].as_f64(), Some(within));
        assert_eq!(json["judged_on"], "all");
        // Faster or slower: nothing to say.
        let faster = run(3, 1, vec![case("1", &[&[120.0], &[121.0], &[119.0]])]);
        let cmp = plain(&a, &faster);
        let m = &cmp.cases[0].metrics[0];
        assert_eq!(m.verdict(), Some(Verdict::Faster));
        assert_eq!(m.no_difference_within, None);
        assert!(
            serde_json::to_value(m)
                .unwrap()
                .get("no_difference_within")
                .is_none()
        );
    }

    #[test]
    fn the_summary_counts_the_no_difference_cases_blind_to_the_change_asked_about() {
        // threads=1: tight rounds, no difference within ±2.8%. threads=2:
        // rounds 10% apart, no difference but within about ±27%. threads=3:
        // 20% faster.
        let a = run(
            1,
            1,
            vec![
                case("1", &[&[100.0], &[101.0], &[99.0]]),
                case("2", &[&[90.0], &[110.0], &[100.0]]),
                case("3", &[&[100.0], &[101.0], &[99.0]]),
            ],
        );
        let b = run(
            2,
            1,
            vec![
                case("1", &[&[100.5], &[101.5], &[99.5]]),
                case("2", &[&[92.0], &[112.0], &[102.0]]),
                case("3", &[&[120.0], &[121.0], &[119.0]]),
            ],
        );
        let detecting = |detect: f64| {
            compare_runs(
                &a,
                &b,
                &NoNoiseHistory,
                CompareOptions {
                    detect,
                    ..CompareOptions::default()
                },
            )
        };
        let cmp = plain(&a, &b);
        let within: Vec<Option<f64>> = cmp
            .cases
            .iter()
            .map(|c| c.metrics[0].no_difference_within)
            .collect();
        assert!(
            within[0].unwrap() < 0.05 && within[1].unwrap() > 0.2,
            "{within:?}"
        );
        assert_eq!(within[2], None);
        let s = &cmp.summary;
        assert_eq!((s.faster, s.no_difference, s.detect), (1, 2, 0.05));
        assert_eq!(s.could_not_detect, 1);
        let json = serde_json::to_value(s).unwrap();
        assert_eq!(
            (json["could_not_detect"].as_u64(), json["detect"].as_f64()),
            (Some(1), Some(0.05))
        );
        // Asked about 1%, neither could have seen it; about 50%, both.
        assert_eq!(detecting(0.01).summary.could_not_detect, 2);
        assert_eq!(detecting(0.5).summary.could_not_detect, 0);
        assert_eq!(detecting(0.5).summary.detect, 0.5);
    }

    #[test]
    fn flagged_trials_in_one_of_five_rounds_leave_the_case_judged_on_the_other_four() {
        let a = run(1, 1, vec![case("1", FIVE_ROUNDS)]);
        // The flagged round went to 500; the four others average 120.
        let cand = busy(
            case("1", &[&[120.0], &[121.0], &[500.0], &[119.0], &[120.0]]),
            &[2],
        );
        let b = run(2, 1, vec![cand]);
        let cmp = plain(&a, &b);
        let compared = &cmp.cases[0];
        assert_eq!(compared.candidate_disturbed, ["busy 1/5"]);
        let m = &compared.metrics[0];
        assert!(m.judged);
        assert_eq!(m.judged_on, JudgedOn::Unflagged);
        assert_eq!(m.not_judged, None);
        let c = m.comparison.as_ref().unwrap();
        assert!((c.ratio - 1.2).abs() < 1e-12, "{c:?}");
        assert_eq!(
            (c.verdict, c.basis),
            (Verdict::Faster, VerdictBasis::Rounds)
        );
        // The means shown are the ones the ratio comes from.
        assert_eq!((m.baseline_mean, m.candidate_mean), (100.0, 120.0));
        assert_eq!(serde_json::to_value(m).unwrap()["judged_on"], "unflagged");
        let s = &cmp.summary;
        assert_eq!((s.faster, s.not_judged, s.judged_on_unflagged), (1, 0, 1));
        assert!((s.geometric_mean.unwrap() - 1.2).abs() < 1e-12);

        // A round keeps its unflagged trials: the flagged 500 is left out
        // and its round mean is the 120 beside it.
        let two = busy(
            case(
                "1",
                &[&[120.0], &[121.0], &[500.0, 120.0], &[119.0], &[120.0]],
            ),
            &[2],
        );
        let cmp = plain(&a, &run(2, 1, vec![two]));
        let c = cmp.cases[0].metrics[0].comparison.as_ref().unwrap();
        assert!((c.ratio - 1.2).abs() < 1e-12, "{c:?}");

        // The host's run-to-run noise still widens the band: 5% better on
        // the unflagged rounds is inside a 4% history's.
        let b5 = busy(
            case("1", &[&[105.0], &[105.5], &[300.0], &[104.5], &[105.0]]),
            &[2],
        );
        let noise = FixedNoise(RunNoise {
            runs: 10,
            sd_log: 0.04,
            df: 6.2,
            shifts: 0,
        });
        let cmp = compare_runs(&a, &run(2, 1, vec![b5]), &noise, CompareOptions::default());
        let m = &cmp.cases[0].metrics[0];
        let c = m.comparison.as_ref().unwrap();
        assert!((c.ratio - 1.05).abs() < 1e-12, "{c:?}");
        assert_eq!(
            (m.judged_on, m.verdict()),
            (JudgedOn::Unflagged, Some(Verdict::NoDifference))
        );
        assert_eq!(
            (c.basis, m.candidate_history_runs),
            (VerdictBasis::History, 10)
        );

        // One round of several trials: three unflagged trials are enough.
        let a1 = run(1, 1, vec![case("1", &[&[100.0, 101.0, 99.0]])]);
        let b1 = busy(case("1", &[&[120.0, 500.0, 121.0, 119.0]]), &[1]);
        let cmp = plain(&a1, &run(2, 1, vec![b1]));
        let m = &cmp.cases[0].metrics[0];
        let c = m.comparison.as_ref().unwrap();
        assert_eq!(
            (m.judged_on, c.basis),
            (JudgedOn::Unflagged, VerdictBasis::Trials)
        );
        assert!((c.ratio - 1.2).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn flags_in_three_of_four_rounds_withhold_the_verdict_and_say_why() {
        // The fewest rounds left is the rounds a run gives every case, and
        // a one-round side's the trials such a run takes.
        let method = crate::engine::Methodology::default();
        assert_eq!(MIN_UNFLAGGED_ROUNDS, method.min_rounds as usize);
        assert_eq!(MIN_UNFLAGGED_TRIALS, 3);
        let a = run(
            1,
            1,
            vec![case("1", &[&[100.0], &[101.0], &[99.0], &[100.0]])],
        );
        let cand = busy(
            case("1", &[&[120.0], &[121.0], &[119.0], &[120.0]]),
            &[0, 1, 3],
        );
        let cmp = plain(&a, &run(2, 1, vec![cand]));
        let m = &cmp.cases[0].metrics[0];
        assert!(!m.judged);
        assert_eq!(m.verdict(), None);
        assert_eq!(m.judged_on, JudgedOn::All);
        assert_eq!(
            m.not_judged.as_deref(),
            Some("only 1 round of the candidate with unflagged trials, 3 needed")
        );
        // For information, the comparison on all the trials.
        assert!((m.comparison.as_ref().unwrap().ratio - 1.2).abs() < 1e-12);
        assert_eq!(
            (cmp.summary.not_judged, cmp.summary.judged_on_unflagged),
            (1, 0)
        );
        let json = serde_json::to_value(m).unwrap();
        assert_eq!(
            json["not_judged"],
            "only 1 round of the candidate with unflagged trials, 3 needed"
        );
        // Both sides short, and a one-round side counted in trials.
        let a1 = busy(case("1", &[&[100.0, 101.0, 99.0]]), &[0, 1]);
        let b1 = busy(case("1", &[&[120.0], &[121.0], &[119.0]]), &[1]);
        let cmp = plain(&run(1, 1, vec![a1]), &run(2, 1, vec![b1]));
        assert_eq!(
            cmp.cases[0].metrics[0].not_judged.as_deref(),
            Some(
                "only 1 unflagged trial of the baseline, 3 needed; \
                 only 2 rounds of the candidate with unflagged trials, 3 needed"
            )
        );
    }

    #[test]
    fn trusted_flagged_trials_are_judged_on_all_the_trials() {
        let a = run(1, 1, vec![case("1", FIVE_ROUNDS)]);
        let cand = busy(
            case("1", &[&[120.0], &[121.0], &[500.0], &[119.0], &[120.0]]),
            &[2],
        );
        let b = run(2, 1, vec![cand]);
        let trusted = compare_runs(
            &a,
            &b,
            &NoNoiseHistory,
            CompareOptions {
                trust_flagged: true,
                ..CompareOptions::default()
            },
        );
        let m = &trusted.cases[0].metrics[0];
        assert!(m.judged);
        assert_eq!(m.judged_on, JudgedOn::All);
        // The flagged 500 counts: (120 + 121 + 500 + 119 + 120) / 5 = 196.
        let c = m.comparison.as_ref().unwrap();
        assert!((c.ratio - 1.96).abs() < 1e-12, "{c:?}");
        assert_eq!(trusted.summary.judged_on_unflagged, 0);
    }

    #[test]
    fn prices_in_one_currency_give_per_price_ratios() {
        let mut a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let mut b = run(2, 1, vec![case("1", &[&[120.0], &[121.0], &[119.0]])]);
        a.notes = vec!["price=2000EUR".into()];
        b.notes = vec!["rack 3".into(), "price=3000 EUR".into()];
        let cmp = plain(&a, &b);
        let prices = cmp.price.as_ref().unwrap();
        assert_eq!((prices.baseline, prices.candidate), (2000.0, 3000.0));
        // 1.2x the events for 1.5x the money: 0.8x the events per euro.
        let per_price = cmp.cases[0].metrics[0].ratio_per_price.unwrap();
        assert!((per_price - 0.8).abs() < 1e-9, "{per_price}");
        let g = cmp.summary.geometric_mean_per_price.unwrap();
        assert!((g - 0.8).abs() < 1e-9, "{g}");
        let price = cmp.host_differences.iter().find(|d| d.what == "price");
        assert_eq!(price.unwrap().candidate, "3000 EUR");
        b.notes = vec!["price=3000USD".into()];
        let cmp = plain(&a, &b);
        assert!(cmp.price.is_none());
        assert_eq!(cmp.cases[0].metrics[0].ratio_per_price, None);
    }

    #[test]
    fn a_database_servers_settings_are_host_differences() {
        let mut a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let mut b = a.clone();
        b.id = 2;
        let settings = |sync: &str| {
            BTreeMap::from([
                ("server_version".to_string(), "15.20".to_string()),
                ("synchronous_commit".to_string(), sync.to_string()),
            ])
        };
        a.host.databases = BTreeMap::from([("postgres://a/test".into(), settings("on"))]);
        b.host.databases = BTreeMap::from([("postgres://b/test".into(), settings("off"))]);
        let differences = plain(&a, &b).host_differences;
        let sync: Vec<_> = differences
            .iter()
            .filter(|d| d.what.starts_with("database "))
            .map(|d| (d.what.as_str(), d.baseline.as_str(), d.candidate.as_str()))
            .collect();
        // One server on each side: the setting alone, whatever the URL.
        assert_eq!(sync, [("database synchronous_commit", "on", "off")]);
        // Two servers: each setting names its server.
        b.host
            .databases
            .insert("mysql://c/test".into(), settings("on"));
        let differences = plain(&a, &b).host_differences;
        assert!(
            differences
                .iter()
                .any(|d| d.what == "database postgres://b/test synchronous_commit")
        );
    }

    #[test]
    fn a_fact_one_side_lacks_reads_as_not_set_or_unknown() {
        let mut a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let mut b = a.clone();
        b.id = 2;
        a.notes = vec!["price=5EUR".into()];
        a.host.os.kernel = "6.1.0".into();
        let differences = plain(&a, &b).host_differences;
        let find = |what: &str| {
            let d = differences.iter().find(|d| d.what == what).unwrap();
            (d.baseline.as_str(), d.candidate.as_str())
        };
        assert_eq!(find("price"), ("5 EUR", "not set"));
        assert_eq!(find("kernel"), ("6.1.0", "unknown"));
    }

    #[test]
    fn the_limits_of_the_runs_cgroups_are_named_with_where_they_are_set() {
        use crate::probe::{CgroupLimits, CpuQuota, MemoryLimit};
        let mut a = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let mut b = a.clone();
        b.id = 2;
        a.host.cgroup = Some(CgroupLimits::default());
        let quota = |cgroup: &str| CpuQuota {
            cpus: 0.85,
            quota_us: 85_000,
            period_us: 100_000,
            cgroup: cgroup.into(),
        };
        b.host.cgroup = Some(CgroupLimits {
            cpu_quota: Some(quota("/sledge-quota")),
            cpuset: Some("1".into()),
            memory_limit: Some(MemoryLimit {
                bytes: 2 << 30,
                cgroup: "/jobs".into(),
            }),
        });
        let differences = plain(&a, &b).host_differences;
        let found: Vec<(&str, &str, &str)> = differences
            .iter()
            .map(|d| (d.what.as_str(), d.baseline.as_str(), d.candidate.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("CPU quota", "none", "0.85 CPUs (cgroup /sledge-quota)"),
                ("cpuset", "all CPUs", "1"),
                ("memory limit", "none", "2 GiB (cgroup /jobs)"),
            ]
        );
        // The same quota on another cgroup is no difference.
        a.host.cgroup = b.host.cgroup.clone();
        if let Some(limits) = &mut a.host.cgroup {
            limits.cpu_quota = Some(quota("/docker/4f1e"));
        }
        assert_eq!(plain(&a, &b).host_differences, []);
        // A run stored before the limits were recorded: unknown.
        a.host.cgroup = None;
        let differences = plain(&a, &b).host_differences;
        assert_eq!(
            (differences[0].baseline.as_str(), differences.len()),
            ("unknown", 3)
        );
    }

    #[test]
    fn a_metric_at_zero_is_not_compared_as_if_it_had_no_samples() {
        let zeros: &[&[f64]] = &[&[0.0], &[0.0], &[0.0]];
        let some: &[&[f64]] = &[&[2.0], &[3.0], &[1.0]];
        let why = |a: &[&[f64]], b: &[&[f64]]| {
            let cmp = plain(
                &run(1, 1, vec![case("1", a)]),
                &run(2, 1, vec![case("1", b)]),
            );
            let m = &cmp.cases[0].metrics[0];
            assert!(m.comparison.is_none());
            m.not_compared.clone().unwrap()
        };
        assert_eq!(why(zeros, zeros), "0 on both sides: no ratio");
        assert_eq!(why(zeros, some), "the baseline is 0: no ratio");
        assert_eq!(why(some, zeros), "the candidate is 0: no ratio");
        let mut empty = case("1", some);
        empty.metrics[0].samples.clear();
        let cmp = plain(&run(1, 1, vec![case("1", some)]), &run(2, 1, vec![empty]));
        assert_eq!(
            cmp.cases[0].metrics[0].not_compared.as_deref(),
            Some("no samples")
        );
    }

    struct FixedNoise(RunNoise);

    impl NoiseHistory for FixedNoise {
        fn noise(&self, _run: &RunRecord, case: &CaseRecord) -> HashMap<String, RunNoise> {
            case.metrics
                .iter()
                .map(|m| (m.name.clone(), self.0.clone()))
                .collect()
        }
    }

    #[test]
    fn the_host_history_widens_the_band_and_is_named() {
        // Rounds alone call 8% faster (their whole interval lies beyond
        // the no-history 5%); a 4% run-to-run noise from 10 runs makes it
        // no difference, on the history's basis.
        let a = run(1, 1, vec![case("1", &[&[100.0], &[100.5], &[99.5]])]);
        let b = run(2, 1, vec![case("1", &[&[108.0], &[108.5], &[107.5]])]);
        assert_eq!(plain(&a, &b).summary.faster, 1);
        let noise = FixedNoise(RunNoise {
            runs: 10,
            sd_log: 0.04,
            df: 6.2,
            shifts: 0,
        });
        let cmp = compare_runs(&a, &b, &noise, CompareOptions::default());
        let m = &cmp.cases[0].metrics[0];
        let c = m.comparison.as_ref().unwrap();
        assert_eq!(
            (c.verdict, c.basis),
            (Verdict::NoDifference, VerdictBasis::History)
        );
        assert_eq!(
            (m.baseline_history_runs, m.candidate_history_runs),
            (10, 10)
        );
        assert_eq!(cmp.summary.no_difference, 1);
    }

    #[test]
    fn the_gate_finds_judged_losses_beyond_the_threshold() {
        let base = run(1, 1, vec![case("1", &[&[100.0], &[101.0], &[99.0]])]);
        let slower = run(2, 1, vec![case("1", &[&[90.0], &[91.0], &[89.0]])]);
        let cmp = compare_many(
            &base,
            &[slower.clone(), base.clone()],
            &NoNoiseHistory,
            CompareOptions::default(),
        );
        let found = regressions(&cmp, 5.0);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 2);
        assert!((found[0].2 - 0.9).abs() < 1e-9);
        // A 10% loss does not fail a 15% gate.
        assert!(regressions(&cmp, 15.0).is_empty());
        // A loss judged on the unflagged rounds fails it like any other.
        let base = run(1, 1, vec![case("1", FIVE_ROUNDS)]);
        let flagged = busy(
            case("1", &[&[80.0], &[81.0], &[300.0], &[79.0], &[80.0]]),
            &[2],
        );
        let cmp = compare_many(
            &base,
            &[run(3, 1, vec![flagged])],
            &NoNoiseHistory,
            CompareOptions::default(),
        );
        let found = regressions(&cmp, 5.0);
        assert_eq!(found.len(), 1, "{cmp:?}");
        assert!((found[0].2 - 0.8).abs() < 1e-12);
    }
}

//! A run's plan as `sledge plan` prints it, and the one line `sledge run`
//! says on stderr before it starts: what each case will cost, what
//! precision it is expected to reach, and, with `--detect`, what a
//! comparison would need to see a change of that size.

use comfy_table::{Cell, CellAlignment};
use serde::Serialize;

use super::listing::new_table;
use crate::engine::Methodology;
use crate::engine::estimate::{CaseEstimate, DEFAULT_TRIAL_SECONDS, PlanEstimate};
use crate::engine::precision::{DETECT_POWER, Detectable, percent};

/// `2 min 50 s`, `45 s`, `1 h 12 min`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// The line `sledge run` prints before its first round.
pub fn estimate_line(estimate: &PlanEstimate) -> String {
    let n = estimate.cases.len();
    format!(
        "plan: {}, about {}{} ({}; `sledge plan` shows each case)",
        super::format::count(n, "case", "cases"),
        duration(estimate.seconds),
        if estimate.budget_bound {
            ", the run's time budget"
        } else {
            ""
        },
        history_words(estimate)
    )
}

fn history_words(estimate: &PlanEstimate) -> String {
    let known = estimate.with_history();
    let mut words = match (known, estimate.cases.len()) {
        (0, _) => {
            "no history of these cases on this host: costs from the workloads' defaults".to_string()
        }
        (k, n) if k == n => "every case from this host's history".to_string(),
        (k, n) => format!(
            "{k} of {} from this host's history",
            super::format::count(n, "case", "cases")
        ),
    };
    let guessed = estimate.guessed();
    if guessed > 0 {
        words.push_str(&format!(
            "; {guessed} of unknown length counted at {DEFAULT_TRIAL_SECONDS:.0} s a trial, so it may take much longer"
        ));
    }
    words
}

/// The plan as a table: one row per case, then the total.
pub fn render(estimate: &PlanEstimate, method: &Methodology, detect: Option<f64>) -> String {
    let mut header = vec![
        "case",
        "rounds×trials",
        "round",
        "time",
        "expected ± 95% CI",
    ];
    let detect_header = detect.map(|effect| {
        format!(
            "to see a {} change ({:.0}% power)",
            super::format::percent_given(effect),
            DETECT_POWER * 100.0
        )
    });
    if let Some(h) = &detect_header {
        header.push(h);
    }
    let mut table = new_table(header);
    for case in &estimate.cases {
        let mut row = vec![
            Cell::new(&case.label),
            Cell::new(format!("{}×{}", case.rounds, case.trials_per_round))
                .set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.2} s", case.round_seconds)).set_alignment(CellAlignment::Right),
            Cell::new(if case.guessed {
                format!("{}?", duration(case.seconds))
            } else {
                duration(case.seconds)
            })
            .set_alignment(CellAlignment::Right),
            Cell::new(expected_text(case, method.ci_target)),
        ];
        if detect.is_some() {
            row.push(Cell::new(detect_text(case)));
        }
        table.add_row(row);
    }
    let mut out = format!(
        "plan: {} · about {} · target ±{} (rounds {} to {}, {} s a case at most{}) · {}\n",
        super::format::count(estimate.cases.len(), "case", "cases"),
        duration(estimate.seconds),
        percent(method.ci_target),
        method.min_rounds,
        method.max_rounds,
        method.case_budget.as_secs(),
        method
            .run_budget
            .map(|b| format!(", extra rounds within {} in all", duration(b.as_secs_f64())))
            .unwrap_or_default(),
        history_words(estimate)
    );
    out.push_str(&table.to_string());
    out.push('\n');
    let missing: Vec<&CaseEstimate> = estimate
        .cases
        .iter()
        .filter(|c| c.reaches(method.ci_target) == Some(false))
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "{} of {} {} not expected to reach ±{}: their rounds scatter too much for the rounds their budget allows (`--budget`, `--max-rounds` give them more)\n",
            missing.len(),
            super::format::count(estimate.cases.len(), "case", "cases"),
            if missing.len() == 1 { "is" } else { "are" },
            percent(method.ci_target)
        ));
    }
    if estimate.budget_bound {
        out.push_str(
            "the run's time budget cuts the extra rounds the cases would want; each gets a share\n",
        );
    }
    if estimate.with_history() < estimate.cases.len() {
        out.push_str("cases without history here: time from the workload's trial length (or its amount of work at a typical server's rate), precision unknown until a first run\n");
    }
    if estimate.guessed() > 0 {
        out.push_str("`?`: the workload cannot say how long a trial runs, 1 s assumed\n");
    }
    for case in estimate.cases.iter().filter(|c| c.once_seconds > 0.0) {
        out.push_str(&format!(
            "{}: {} of its time is untimed work before its first round (a source to unpack into the cache), done once\n",
            case.label,
            duration(case.once_seconds)
        ));
    }
    if detect.is_some()
        && estimate
            .cases
            .iter()
            .any(|c| matches!(c.detect, Some(Detectable::RunToRun(_))))
    {
        out.push_str("run to run: two runs of the case differ by more than that change allows, whatever their rounds; `sledge ab` interleaves both sides in one run instead\n");
    }
    out
}

fn expected_text(case: &CaseEstimate, target: f64) -> String {
    match case.expected_ci {
        Some(ci) if ci <= target => format!("±{}", percent(ci)),
        Some(ci) => format!("±{} (wider than the target)", percent(ci)),
        None => "unknown (no history)".to_string(),
    }
}

fn detect_text(case: &CaseEstimate) -> String {
    match &case.detect {
        None => "unknown (no history)".to_string(),
        Some(Detectable::Rounds(r)) => format!(
            "{r} rounds a side, {} for both",
            duration(case.detect_seconds().unwrap_or(0.0))
        ),
        Some(Detectable::RunToRun(sd)) => format!("no: runs differ by {}", percent(*sd)),
        Some(Detectable::MoreThan(r)) => format!("more than {r} rounds a side"),
    }
}

/// The plan as JSON.
#[derive(Debug, Serialize)]
pub struct PlanJson<'a> {
    /// The precision target (a share of the mean).
    pub ci_target: f64,
    /// The effect asked for with `--detect`, a share.
    pub detect: Option<f64>,
    /// The run's wall time, seconds.
    pub seconds: f64,
    /// Whether the run's budget cuts the extra rounds.
    pub budget_bound: bool,
    /// Per case.
    pub cases: Vec<CaseJson<'a>>,
}

/// One case of [`PlanJson`].
#[derive(Debug, Serialize)]
pub struct CaseJson<'a> {
    /// The case as a user would type it.
    pub case: &'a str,
    /// Earlier runs on this host the figures rest on.
    pub history_runs: usize,
    /// The trial length is a guess (1 s): the time may be far off.
    pub guessed: bool,
    /// Rounds planned.
    pub rounds: u32,
    /// Counted trials per round.
    pub trials_per_round: u32,
    /// One round, seconds.
    pub round_seconds: f64,
    /// Untimed work done once, in the first round (a source unpacked into
    /// the cache), seconds; part of `seconds`.
    pub once_seconds: f64,
    /// The case, seconds.
    pub seconds: f64,
    /// Relative CI half-width expected (null without history).
    pub expected_ci: Option<f64>,
    /// Rounds per side to see the `--detect` change at 90% power (null
    /// when unknown or out of reach).
    pub detect_rounds: Option<u32>,
    /// Why `detect_rounds` is null when history exists: `run_to_run` or
    /// `more_than_max`.
    pub detect_limit: Option<&'static str>,
    /// Both sides of such a comparison, seconds.
    pub detect_seconds: Option<f64>,
}

/// The plan as a JSON document.
pub fn json(
    estimate: &PlanEstimate,
    method: &Methodology,
    detect: Option<f64>,
) -> anyhow::Result<String> {
    let doc = PlanJson {
        ci_target: method.ci_target,
        detect,
        seconds: estimate.seconds,
        budget_bound: estimate.budget_bound,
        cases: estimate
            .cases
            .iter()
            .map(|c| CaseJson {
                case: &c.label,
                history_runs: c.history_runs,
                guessed: c.guessed,
                rounds: c.rounds,
                trials_per_round: c.trials_per_round,
                round_seconds: c.round_seconds,
                once_seconds: c.once_seconds,
                seconds: c.seconds,
                expected_ci: c.expected_ci,
                detect_rounds: match c.detect {
                    Some(Detectable::Rounds(r)) => Some(r),
                    _ => None,
                },
                detect_limit: match c.detect {
                    Some(Detectable::RunToRun(_)) => Some("run_to_run"),
                    Some(Detectable::MoreThan(_)) => Some("more_than_max"),
                    _ => None,
                },
                detect_seconds: c.detect_seconds(),
            })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(
        label: &str,
        history: bool,
        expected: Option<f64>,
        detect: Option<Detectable>,
    ) -> CaseEstimate {
        CaseEstimate {
            label: label.to_string(),
            history_runs: usize::from(history) * 3,
            guessed: label == "disk",
            trials_per_round: 1,
            round_seconds: 0.5,
            once_seconds: 0.0,
            rounds: 8,
            seconds: 4.0,
            round_sd: expected.map(|e| e * 2.0),
            expected_ci: expected,
            detect,
        }
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(44.6), "45 s");
        assert_eq!(duration(170.0), "2 min 50 s");
        assert_eq!(duration(4.0 * 3600.0 + 20.0 * 60.0), "4 h 20 min");
    }

    #[test]
    fn the_table_says_cost_precision_and_what_a_comparison_needs() {
        let estimate = PlanEstimate {
            cases: vec![
                case(
                    "cpu.primes threads=1",
                    true,
                    Some(0.021),
                    Some(Detectable::Rounds(6)),
                ),
                case(
                    "http.static",
                    true,
                    Some(0.08),
                    Some(Detectable::RunToRun(0.04)),
                ),
                case("disk", false, None, None),
            ],
            seconds: 14.0,
            budget_bound: false,
        };
        let method = Methodology {
            ci_target: 0.03,
            ..Methodology::default()
        };
        let text = render(&estimate, &method, Some(0.05));
        assert!(
            text.starts_with("plan: 3 cases · about 14 s · target ±3.0%"),
            "{text}"
        );
        assert!(
            text.contains("2 of 3 cases from this host's history"),
            "{text}"
        );
        assert!(text.contains("±2.1%"), "{text}");
        assert!(text.contains("±8.0% (wider than the target)"), "{text}");
        assert!(text.contains("unknown (no history)"), "{text}");
        assert!(text.contains("6 rounds a side, 6 s for both"), "{text}");
        assert!(text.contains("no: runs differ by 4.0%"), "{text}");
        assert!(
            text.contains("1 of 3 cases is not expected to reach ±3.0%"),
            "{text}"
        );
        assert!(text.contains("4 s?"), "{text}");
        assert!(
            text.contains("1 of unknown length counted at 1 s a trial"),
            "{text}"
        );
        assert_eq!(
            estimate_line(&estimate),
            "plan: 3 cases, about 14 s (2 of 3 cases from this host's history; 1 of unknown length counted at 1 s a trial, so it may take much longer; `sledge plan` shows each case)"
        );
        let json: serde_json::Value =
            serde_json::from_str(&json(&estimate, &method, Some(0.05)).unwrap()).unwrap();
        assert_eq!(json["cases"][0]["detect_rounds"], 6);
        assert_eq!(json["cases"][1]["detect_limit"], "run_to_run");
        assert_eq!(json["cases"][2]["expected_ci"], serde_json::Value::Null);
    }
}

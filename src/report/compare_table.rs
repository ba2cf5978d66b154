//! Comparisons as text: one block per candidate (what differs between the
//! hosts, one line per case, a summary line), on a terminal or in
//! Markdown.

use std::collections::BTreeMap;

use comfy_table::{Cell, CellAlignment, Color};

use super::format;
use super::listing::new_table;
use crate::analysis::verdicts::{
    CaseComparison, JudgedOn, MIN_UNFLAGGED_ROUNDS, MIN_UNFLAGGED_TRIALS, MetricComparison,
    MultiComparison, RunComparison,
};
use crate::analysis::{
    MAX_RUN_NOISE_SD_LOG, NO_HISTORY_THRESHOLD, NOISE_THRESHOLD, Verdict, VerdictBasis,
};
use crate::results::energy_companion;
use crate::visible::Escaped;

/// Which metrics a table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetricSelection {
    /// The headline metric of each case, and its per-joule companion where
    /// both runs measured energy.
    #[default]
    Headline,
    /// Every metric.
    All,
}

/// The comparison as terminal tables with a legend.
pub fn render(c: &Escaped<MultiComparison>, metrics: MetricSelection) -> String {
    let mut out = String::new();
    for run in &c.candidates {
        out.push_str(&header(run));
        let mut table = new_table(columns(run));
        table.set_width(format::REPORT_WIDTH as u16);
        for row in rows(run, metrics) {
            table.add_row(
                row.cells
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        let cell = Cell::new(text);
                        let cell = if (1..=3).contains(&i) || i == 5 {
                            cell.set_alignment(CellAlignment::Right)
                        } else {
                            cell
                        };
                        match (i, row.verdict) {
                            (4, Some(Verdict::Faster)) => cell.fg(Color::Green),
                            (4, Some(Verdict::Slower)) => cell.fg(Color::Red),
                            _ => cell,
                        }
                    })
                    .collect::<Vec<_>>(),
            );
        }
        out.push_str(&table.to_string());
        out.push('\n');
        out.push_str(&format::wrap(&footer(run), format::REPORT_WIDTH));
        out.push('\n');
    }
    out.push_str(&format::wrap(&legend(&c.candidates), format::REPORT_WIDTH));
    out
}

/// The comparison as GitHub-flavoured Markdown.
pub fn markdown(c: &Escaped<MultiComparison>, metrics: MetricSelection) -> String {
    let mut out = String::new();
    for run in &c.candidates {
        out.push_str(&if run.paired {
            format!(
                "## B (run {}) against A (run {}), paired in the same rounds\n\n",
                run.candidate, run.baseline
            )
        } else {
            format!("## Run {} against run {}\n\n", run.candidate, run.baseline)
        });
        if run.sides.is_some() {
            out.push_str(&sides_text(run, "- "));
            out.push('\n');
        }
        for d in &run.host_differences {
            out.push_str(&format!(
                "- differs: {}: {} → {}\n",
                format::markdown_cell(&d.what),
                format::markdown_cell(&d.baseline),
                format::markdown_cell(&d.candidate)
            ));
        }
        if !run.host_differences.is_empty() {
            out.push('\n');
        }
        let columns = columns(run);
        out.push_str(&format!("| {} |\n", columns.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(columns.len())));
        for row in rows(run, metrics) {
            // A cell's second line (the verdict's note) follows after `; `.
            let cells: Vec<String> = row
                .cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let joint = if i == 0 { " " } else { "; " };
                    format::markdown_cell(&c.replace('\n', joint))
                })
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
        out.push_str(&footer(run).replace('\n', "\n\n"));
    }
    out.push_str(&legend(&c.candidates));
    out
}

const COLUMNS: [&str; 5] = [
    "case",
    "baseline",
    "candidate",
    "ratio [95% CI]",
    "verdict (basis)",
];

/// The table's columns: [`COLUMNS`], and the ratio per unit of price when
/// both runs have a price.
fn columns(run: &RunComparison) -> Vec<&'static str> {
    let mut columns = COLUMNS.to_vec();
    if run.price.is_some() {
        columns.push("per price");
    }
    columns
}

/// The metrics a row block shows for `case`.
fn shown_metrics(case: &CaseComparison, metrics: MetricSelection) -> Vec<&MetricComparison> {
    match metrics {
        MetricSelection::All => case.metrics.iter().collect(),
        MetricSelection::Headline => {
            let Some(headline) = case.headline() else {
                return Vec::new();
            };
            let companion = energy_companion(&headline.name, &headline.unit, headline.direction)
                .and_then(|c| case.metrics.iter().find(|m| m.name == c.name));
            std::iter::once(headline).chain(companion).collect()
        }
    }
}

struct Row {
    cells: Vec<String>,
    verdict: Option<Verdict>,
}

fn header(run: &RunComparison) -> String {
    let mut out = if run.paired {
        format!(
            "A = baseline: run {} · B = candidate: run {} · ratio = B / A, round by round (`sledge ab`: both sides ran in the same rounds)\n{}",
            run.baseline,
            run.candidate,
            sides_text(run, "")
        )
    } else {
        format!(
            "baseline: run {} · candidate: run {} · ratio = candidate / baseline\n",
            run.baseline, run.candidate
        )
    };
    for d in &run.host_differences {
        out.push_str(&format!(
            "differs: {}: {} → {}\n",
            d.what, d.baseline, d.candidate
        ));
    }
    out
}

/// Each side's setting of a paired comparison, one line each (`A: sledge
/// ./sledge-i686 (i686, 32-bit)`), each line begun with `bullet`.
fn sides_text(run: &RunComparison, bullet: &str) -> String {
    match &run.sides {
        Some([a, b]) => format!("{bullet}A: {a}\n{bullet}B: {b}\n"),
        None => String::new(),
    }
}

fn rows(run: &RunComparison, metrics: MetricSelection) -> Vec<Row> {
    let varying = varying_params(&run.cases);
    let mut rows = Vec::new();
    for case in &run.cases {
        let shown = shown_metrics(case, metrics);
        let named = metrics == MetricSelection::All || shown.len() > 1;
        for (i, m) in shown.into_iter().enumerate() {
            let first = i == 0;
            let name = if named {
                format!(" · {}", m.name)
            } else {
                String::new()
            };
            let name = if first || name.is_empty() {
                name
            } else {
                format!("  {}", name.trim_start_matches(" · "))
            };
            let case_cell = if first {
                // The workload and each parameter on a line of their own,
                // so that a narrow column never breaks a name mid-word.
                let params = shown_params(case, &varying);
                std::iter::once(case.workload.as_str())
                    .chain(params.split_whitespace())
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                String::new()
            };
            let mut cells = vec![
                case_cell + &name,
                format!("{} {}", format::value(m.baseline_mean), m.unit),
                format::value(m.candidate_mean),
                ratio_text(m),
                if m.judged && m.comparison.is_some() {
                    let verdict = format!("{} ({})", verdict_text(case, m), basis_text(m));
                    match m.judged_on {
                        JudgedOn::All => verdict,
                        JudgedOn::Unflagged => format!(
                            "{verdict}\njudged on unflagged trials ({} left out)",
                            case.disturbed_sides("base", "cand").join("; ")
                        ),
                    }
                } else {
                    verdict_text(case, m)
                },
            ];
            if run.price.is_some() {
                cells.push(m.ratio_per_price.map_or("-".to_string(), format::ratio));
            }
            rows.push(Row {
                cells,
                verdict: m.verdict(),
            });
        }
    }
    rows
}

/// Per workload, the parameters whose value differs between its matched
/// cases: the only ones worth a column.
fn varying_params(cases: &[CaseComparison]) -> BTreeMap<String, Vec<String>> {
    let mut values: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for case in cases {
        for pair in case.params.split(' ').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let seen = values
                .entry((case.workload.clone(), k.to_string()))
                .or_default();
            if !seen.iter().any(|s| s == v) {
                seen.push(v.to_string());
            }
        }
    }
    let mut varying: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((workload, name), seen) in values {
        if seen.len() > 1 {
            varying.entry(workload).or_default().push(name);
        }
    }
    varying
}

fn shown_params(case: &CaseComparison, varying: &BTreeMap<String, Vec<String>>) -> String {
    let Some(names) = varying.get(&case.workload) else {
        return String::new();
    };
    case.params
        .split(' ')
        .filter(|p| {
            let name = p.split_once('=').map_or(*p, |(k, _)| k);
            names.iter().any(|n| n == name)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn ratio_text(m: &MetricComparison) -> String {
    match &m.comparison {
        Some(c) => format!(
            "{} [{}, {}]",
            format::ratio(c.ratio),
            format::ratio(c.ratio_ci_low),
            format::ratio(c.ratio_ci_high)
        ),
        None => "-".to_string(),
    }
}

fn verdict_text(case: &CaseComparison, m: &MetricComparison) -> String {
    let Some(c) = &m.comparison else {
        return m
            .not_compared
            .as_deref()
            .unwrap_or("no samples")
            .to_string();
    };
    if !m.judged {
        let mut sides = case.disturbed_sides("base", "cand");
        sides.extend(m.not_judged.clone());
        return format!("not judged: {}", sides.join("; "));
    }
    // Flagged data the user chose to trust is judged, and says so.
    let disturbed = !(case.baseline_disturbed.is_empty() && case.candidate_disturbed.is_empty());
    let flagged = if disturbed && m.judged_on == JudgedOn::All {
        " (flagged)"
    } else {
        ""
    };
    let word = match c.verdict {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoDifference => "no difference",
    };
    let within = match (c.verdict, m.no_difference_within) {
        (Verdict::NoDifference, Some(w)) => format!(", within {}", format::within(w)),
        _ => String::new(),
    };
    format!("{word}{within}{flagged}")
}

fn basis_text(m: &MetricComparison) -> String {
    let Some(c) = &m.comparison else {
        return String::new();
    };
    let basis = match c.basis {
        VerdictBasis::Paired => format!("paired ×{}", m.paired_rounds),
        VerdictBasis::History => format!(
            "history ×{}",
            m.baseline_history_runs.max(m.candidate_history_runs)
        ),
        VerdictBasis::Rounds => {
            if m.baseline_history_runs == 0 && m.candidate_history_runs == 0 {
                "rounds, no history".to_string()
            } else {
                "rounds".to_string()
            }
        }
        VerdictBasis::Trials => "trials, weak".to_string(),
    };
    if c.history_suspect {
        format!("{basis}, history suspect")
    } else {
        basis
    }
}

fn footer(run: &RunComparison) -> String {
    let s = &run.summary;
    let mut out = String::new();
    for line in &run.unmatched {
        out.push_str(&format!("unmatched: {line}\n"));
    }
    let geo = match (s.geometric_mean, s.geometric_mean_ci) {
        (Some(g), Some((lo, hi))) => format!(
            "geometric mean of the headline ratios (above 1 = candidate better): {} [{}, {}]",
            format::ratio(g),
            format::ratio(lo),
            format::ratio(hi)
        ),
        _ => "no judged case for a geometric mean".to_string(),
    };
    let blind = if s.no_difference > 0 {
        format!(
            " ({} could not have seen a {} change)",
            s.could_not_detect,
            format::percent_given(s.detect)
        )
    } else {
        String::new()
    };
    out.push_str(&format!(
        "summary, run {}: {geo}; {} faster, {} slower, {} no difference{blind}, {} not judged{}{}\n",
        run.candidate,
        s.faster,
        s.slower,
        s.no_difference,
        s.not_judged,
        if s.judged_on_unflagged > 0 {
            format!(
                "; {} judged on unflagged trials only",
                s.judged_on_unflagged
            )
        } else {
            String::new()
        },
        if s.weak > 0 {
            format!("; {} verdicts on within-run trials only (weak)", s.weak)
        } else {
            String::new()
        }
    ));
    if let Some(line) = price_line(run) {
        out.push_str(&line);
    }
    out
}

/// The summary per unit of price, when both runs have one.
fn price_line(run: &RunComparison) -> Option<String> {
    let price = run.price.as_ref()?;
    let s = &run.summary;
    // The amounts as the notes gave them: 1999.90 must not read 2000.
    let money = |amount: f64| format!("{amount} {}", price.currency);
    let geo = match (s.geometric_mean_per_price, s.geometric_mean_per_price_ci) {
        (Some(g), Some((lo, hi))) => {
            format!(
                "geometric mean of the headline ratios per unit of price: {} [{}, {}]",
                format::ratio(g),
                format::ratio(lo),
                format::ratio(hi)
            )
        }
        _ => "no judged case for a geometric mean".to_string(),
    };
    Some(format!(
        "per price, run {} ({}) against run {} ({}): {geo}\n",
        run.candidate,
        money(price.candidate).trim_end(),
        run.baseline,
        money(price.baseline).trim_end(),
    ))
}

/// The legend: the paired one when every comparison is of the two sides
/// of one `sledge ab`, the rule of two runs otherwise.
fn legend(runs: &[RunComparison]) -> String {
    if !runs.is_empty() && runs.iter().all(|r| r.paired) {
        return paired_legend();
    }
    format!(
        "verdict: faster or slower when the ratio's whole 95% CI lies beyond ±{} \
         (±{} with no history of the case on this host: history measures the drift between runs); \
         basis: `rounds` = the round means of both runs (each round a fresh process); `history ×N` \
         = the host's run-to-run noise over N earlier runs of the case was wider than the rounds' \
         CI, so it decided; `history suspect` = those runs scatter by more than {}, which no \
         honest history of one case on one host does, so they were taken at {}; `trials, weak` \
         = a run of one round, whose CI misses the variance between processes. `no difference, \
         within ±x%`: the larger side of the ratio's CI, the change the verdict rules out; the \
         summary counts the ones that could not have seen the change --detect names. Flagged \
         trials (busy, steal, swap, throttled) are left out: `judged on unflagged trials` when \
         each side that had them kept {} rounds with unflagged trials ({} unflagged trials for a \
         run of one round), `not judged` when not; --trust-flagged judges on all trials.\n",
        format::percent(NOISE_THRESHOLD),
        format::percent(NO_HISTORY_THRESHOLD),
        format::percent(MAX_RUN_NOISE_SD_LOG.exp() - 1.0),
        format::percent(MAX_RUN_NOISE_SD_LOG.exp() - 1.0),
        MIN_UNFLAGGED_ROUNDS,
        MIN_UNFLAGGED_TRIALS,
    )
}

fn paired_legend() -> String {
    format!(
        "verdict: faster or slower when the ratio's 95% CI excludes 1 and the change exceeds {}; \
         basis: `paired ×N` = the geometric mean of N per-round ratios B/A with a paired t \
         interval: A and B ran in the same rounds (one after the other in a random order, or at \
         once with --duet), so the host's drift cancels in each ratio and no history is needed. \
         `no difference, within ±x%`: the larger side of the ratio's CI, the change the verdict \
         rules out. Flagged trials (busy, steal, swap, throttled) are left out: a round counts \
         when both sides kept an unflagged trial in it, and {} such rounds are needed for a \
         verdict; --trust-flagged (in `compare`) judges on all trials.\n",
        format::percent(NOISE_THRESHOLD),
        MIN_UNFLAGGED_ROUNDS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::verdicts::{ComparisonSummary, HostDifference};
    use crate::analysis::{Comparison, Direction};

    fn metric(verdict: Verdict, basis: VerdictBasis, judged: bool) -> MetricComparison {
        MetricComparison {
            name: "events_per_sec".into(),
            unit: "events/s".into(),
            direction: Direction::Higher,
            baseline_mean: 100.0,
            candidate_mean: 89.0,
            comparison: Some(Comparison {
                ratio: 0.89,
                ratio_ci_low: 0.85,
                ratio_ci_high: 0.93,
                p_value: 0.001,
                verdict,
                basis,
                history_suspect: false,
            }),
            not_compared: None,
            no_difference_within: None,
            judged,
            judged_on: JudgedOn::All,
            not_judged: None,
            baseline_history_runs: if basis == VerdictBasis::History { 8 } else { 0 },
            candidate_history_runs: 0,
            ratio_per_price: None,
            paired_rounds: 0,
        }
    }

    fn comparison() -> MultiComparison {
        let case = |threads: &str, m: MetricComparison, disturbed: Vec<String>| CaseComparison {
            workload: "cpu.primes".into(),
            params: format!("max_prime=10000 threads={threads}"),
            baseline_disturbed: vec![],
            candidate_disturbed: disturbed,
            metrics: vec![m],
        };
        MultiComparison {
            baseline: 1,
            candidates: vec![RunComparison {
                baseline: 1,
                candidate: 2,
                host_differences: vec![HostDifference {
                    what: "kernel".into(),
                    baseline: "6.1".into(),
                    candidate: "6.2".into(),
                }],
                cases: vec![
                    case(
                        "1",
                        metric(Verdict::Slower, VerdictBasis::History, true),
                        vec![],
                    ),
                    case(
                        "all",
                        metric(Verdict::Slower, VerdictBasis::Rounds, false),
                        vec!["busy 2/6".into()],
                    ),
                ],
                unmatched: vec!["memory.block: only in run 1".into()],
                summary: ComparisonSummary {
                    geometric_mean: Some(0.89),
                    geometric_mean_ci: Some((0.85, 0.93)),
                    slower: 1,
                    not_judged: 1,
                    ..ComparisonSummary::default()
                },
                price: None,
                paired: false,
                sides: None,
            }],
        }
    }

    #[test]
    fn a_suspect_history_is_named_beside_the_verdict() {
        let mut cmp = comparison();
        let plain = markdown(&Escaped::new(cmp.clone()), MetricSelection::Headline);
        assert!(!plain.contains("history ×8, history suspect"), "{plain}");
        let headline = &mut cmp.candidates[0].cases[0].metrics[0];
        headline.comparison.as_mut().unwrap().history_suspect = true;
        let text = render(&Escaped::new(cmp.clone()), MetricSelection::Headline);
        let verdict = &rows(&cmp.candidates[0], MetricSelection::Headline)[0].cells[4];
        assert!(verdict.contains("history suspect)"), "{verdict}");
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("scatter by more than 25.0%"), "{text}");
        let md = markdown(&Escaped::new(cmp), MetricSelection::Headline);
        assert!(md.contains("history ×8, history suspect"), "{md}");
    }

    #[test]
    fn the_table_names_the_rule_and_the_disturbed_side() {
        let text = render(&Escaped::new(comparison()), MetricSelection::Headline);
        assert!(text.contains("differs: kernel: 6.1 → 6.2"), "{text}");
        assert!(text.contains("history ×8"), "{text}");
        assert!(text.contains("not judged"), "{text}");
        let md = markdown(&Escaped::new(comparison()), MetricSelection::Headline);
        assert!(md.contains("| not judged: cand busy 2/6 |"), "{md}");
        assert!(text.contains("0.890 [0.850, 0.930]"), "{text}");
        // Only the varying parameter is shown.
        assert!(
            text.contains("threads=all") && !text.contains("max_prime"),
            "{text}"
        );
        assert!(text.contains("summary, run 2: geometric mean"), "{text}");
        assert!(
            text.contains("1 slower, 0 no difference, 1 not judged"),
            "{text}"
        );
        assert!(
            text.contains("unmatched: memory.block: only in run 1"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    }

    #[test]
    fn the_headline_view_shows_the_per_joule_companion_too() {
        let mut c = comparison();
        let mut per_joule = metric(Verdict::Faster, VerdictBasis::Rounds, true);
        per_joule.name = "events_per_joule".into();
        per_joule.unit = "events/J".into();
        let mut other = metric(Verdict::Slower, VerdictBasis::Rounds, true);
        other.name = "events".into();
        c.candidates[0].cases[0].metrics.push(other);
        c.candidates[0].cases[0].metrics.push(per_joule);
        let text = render(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(text.contains("events_per_joule"), "{text}");
        assert!(text.contains("100 events/J"), "{text}");
        assert!(!text.contains("· events "), "{text}");
        // A case without energy shows its headline alone, unnamed.
        let md = markdown(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(md.contains("| cpu.primes threads=all |"), "{md}");
    }

    #[test]
    fn prices_add_a_column_and_a_summary_line() {
        let mut c = comparison();
        let run = &mut c.candidates[0];
        run.price = Some(crate::analysis::price_ratio::PriceComparison {
            currency: "EUR".into(),
            baseline: 2000.0,
            candidate: 2500.0,
        });
        run.cases[0].metrics[0].ratio_per_price = Some(0.712);
        run.summary.geometric_mean_per_price = Some(0.712);
        run.summary.geometric_mean_per_price_ci = Some((0.68, 0.744));
        let text = render(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(text.contains("per price"), "{text}");
        assert!(text.contains("0.712"), "{text}");
        assert!(
            text.contains("per price, run 2 (2500 EUR) against run 1 (2000 EUR): geometric mean"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let md = markdown(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(md.contains("| verdict (basis) | per price |"), "{md}");
    }

    /// `text` with the table's borders and line breaks read as spaces, so
    /// that a cell's text reads whole wherever the table wrapped it.
    fn words(text: &str) -> String {
        text.replace(['│', '┆'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_case_column_puts_the_workload_and_each_parameter_on_a_line() {
        let mut c = comparison();
        for (case, params) in c.candidates[0].cases.iter_mut().zip([
            "algorithm=aes-256-gcm block_size=8192",
            "algorithm=sha256 block_size=16",
        ]) {
            case.workload = "crypto.speed".to_string();
            case.params = params.to_string();
        }
        let cell = &rows(&c.candidates[0], MetricSelection::Headline)[0].cells[0];
        assert_eq!(cell, "crypto.speed\nalgorithm=aes-256-gcm\nblock_size=8192");
        let text = render(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(text.contains("│ crypto.speed "), "{text}");
        assert!(!text.contains("algorit\n"), "{text}");
        let md = markdown(&Escaped::new(c), MetricSelection::Headline);
        assert!(
            md.contains("| crypto.speed algorithm=aes-256-gcm block_size=8192 |"),
            "{md}"
        );
    }

    #[test]
    fn a_no_difference_verdict_says_what_it_rules_out() {
        let mut c = comparison();
        let run = &mut c.candidates[0];
        let same = &mut run.cases[0].metrics[0];
        let cmp = same.comparison.as_mut().unwrap();
        (cmp.ratio, cmp.ratio_ci_low, cmp.ratio_ci_high) = (0.998, 0.969, 1.024);
        cmp.verdict = Verdict::NoDifference;
        cmp.basis = VerdictBasis::Rounds;
        same.baseline_history_runs = 0;
        same.no_difference_within = Some(0.031);
        run.summary = ComparisonSummary {
            no_difference: 1,
            detect: 0.05,
            could_not_detect: 0,
            not_judged: 1,
            ..ComparisonSummary::default()
        };
        let text = render(&Escaped::new(c.clone()), MetricSelection::Headline);
        let read = words(&text);
        let verdict = &rows(&c.candidates[0], MetricSelection::Headline)[0].cells[4];
        assert_eq!(
            verdict, "no difference, within ±3.1% (rounds, no history)",
            "{text}"
        );
        assert!(
            read.contains("1 no difference (0 could not have seen a 5% change), 1 not judged"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let md = markdown(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(
            md.contains("| no difference, within ±3.1% (rounds, no history) |"),
            "{md}"
        );
        // A wider interval, asked about 2%: it could not have seen that.
        let run = &mut c.candidates[0];
        run.cases[0].metrics[0].no_difference_within = Some(0.123);
        run.summary.detect = 0.02;
        run.summary.could_not_detect = 1;
        let md = markdown(&Escaped::new(c), MetricSelection::Headline);
        assert!(md.contains("no difference, within ±12.3% ("), "{md}");
        assert!(
            md.contains("1 no difference (1 could not have seen a 2% change)"),
            "{md}"
        );
    }

    #[test]
    fn a_case_judged_on_its_unflagged_trials_says_so_and_why_not_when_not() {
        let mut c = comparison();
        let run = &mut c.candidates[0];
        // The disturbed case, judged on the trials left.
        let case = &mut run.cases[1];
        case.candidate_disturbed = vec!["busy 2/12".into()];
        case.metrics[0].judged = true;
        case.metrics[0].judged_on = JudgedOn::Unflagged;
        run.summary.judged_on_unflagged = 1;
        let text = render(&Escaped::new(c.clone()), MetricSelection::Headline);
        let read = words(&text);
        assert!(
            read.contains("judged on unflagged trials (cand busy 2/12 left out)"),
            "{text}"
        );
        assert!(!read.contains("(flagged)"), "{text}");
        assert!(
            read.contains("; 1 judged on unflagged trials only"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let md = markdown(&Escaped::new(c.clone()), MetricSelection::Headline);
        assert!(
            md.contains(
                "| slower (rounds, no history); judged on unflagged trials (cand busy 2/12 left out) |"
            ),
            "{md}"
        );
        // Too few rounds left: not judged, with the reason.
        let m = &mut c.candidates[0].cases[1].metrics[0];
        m.judged = false;
        m.judged_on = JudgedOn::All;
        m.not_judged =
            Some("only 2 rounds of the candidate with unflagged trials, 3 needed".into());
        let md = markdown(&Escaped::new(c), MetricSelection::Headline);
        assert!(
            md.contains(
                "| not judged: cand busy 2/12; only 2 rounds of the candidate with unflagged trials, 3 needed |"
            ),
            "{md}"
        );
    }

    #[test]
    fn markdown_is_a_table_per_candidate() {
        let text = markdown(&Escaped::new(comparison()), MetricSelection::All);
        assert!(text.contains("## Run 2 against run 1"), "{text}");
        assert!(text.contains("| case | baseline | candidate |"), "{text}");
        assert!(
            text.contains("| cpu.primes threads=1 · events_per_sec |"),
            "{text}"
        );
    }
}

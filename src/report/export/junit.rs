//! `--junit`: a comparison as a JUnit XML report, for the CI systems that
//! read one (Jenkins, GitLab, the test reporters of GitHub Actions): a
//! `<testsuite>` per candidate run compared with the baseline, a
//! `<testcase>` per case (classname the workload, name its parameters),
//! judged on its headline metric as `--fail-if-slower` judges it.
//!
//! A case fails when the command fails for it: its headline is judged
//! slower by more than `--fail-if-slower`'s percentage (the same
//! [`regressions`] that set the exit status). Without that flag nothing
//! fails, as the command exits 0 whatever the verdicts; every case's
//! verdict is in its `<system-out>` either way. A case without a verdict
//! (no ratio, or not judged for lack of unflagged trials) and a case the
//! runs do not share (only in one run, failed in one, another workload
//! version) is skipped, saying why.
//!
//! The text is the stored text, as in JSON (its readers are programs),
//! escaped as XML. The characters XML 1.0 forbids (the C0 controls but
//! tab, line feed and carriage return; U+FFFE and U+FFFF) would make the
//! report unreadable to every parser, and those it discourages (DEL, the
//! C1 controls) reach terminals raw through the readers that print the
//! report: both are replaced by U+FFFD.

use std::fmt::Write as _;

use super::view::{ComparisonShown, View};
use crate::analysis::verdicts::{CaseComparison, MetricComparison, RunComparison, regressions};
use crate::stats::{Direction, Verdict, VerdictBasis};

/// `view` as a JUnit report: a comparison only (`None` for any other
/// view).
pub(super) fn render(view: &View<'_>) -> Option<anyhow::Result<String>> {
    Some(match *view {
        View::Comparison(shown) => Ok(report(shown)),
        View::Run { .. }
        | View::History(_)
        | View::Runs { .. }
        | View::Host(_)
        | View::Plan { .. }
        | View::FleetOutliers(_)
        | View::FleetRun(_)
        | View::Calibration(_)
        | View::HttpLoad(_)
        | View::HttpHosts(_) => return None,
    })
}

/// How one case came out.
enum Outcome {
    Passed,
    /// Slower beyond the gate: the failure's message.
    Failed(String),
    /// No verdict, or not in both runs: why.
    Skipped(String),
}

/// One `<testcase>`.
struct TestCase {
    classname: String,
    name: String,
    outcome: Outcome,
    /// The verdict in words, for `<system-out>`; empty for none.
    out: String,
}

/// One `<testsuite>`: a candidate against the baseline.
struct TestSuite {
    name: String,
    properties: Vec<(&'static str, String)>,
    cases: Vec<TestCase>,
}

impl TestSuite {
    fn failures(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped(_)))
    }

    fn count(&self, which: impl Fn(&Outcome) -> bool) -> usize {
        self.cases.iter().filter(|c| which(&c.outcome)).count()
    }
}

/// The whole report.
fn report(shown: ComparisonShown<'_>) -> String {
    let suites: Vec<TestSuite> = shown
        .comparison
        .candidates
        .iter()
        .map(|run| suite(run, shown))
        .collect();
    let total = |f: fn(&TestSuite) -> usize| suites.iter().map(f).sum::<usize>();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"sledge\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
        total(|s| s.cases.len()),
        total(TestSuite::failures),
        total(TestSuite::skipped)
    );
    for suite in &suites {
        write_suite(&mut xml, suite);
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// The suite of one candidate: its matched cases, then those the two
/// runs do not share.
fn suite(run: &RunComparison, shown: ComparisonShown<'_>) -> TestSuite {
    let failing: Vec<(i64, String, f64)> = shown
        .fail_if_slower
        .map(|pct| regressions(shown.comparison, pct))
        .unwrap_or_default();
    let mut properties = vec![
        ("baseline", run.baseline.to_string()),
        ("candidate", run.candidate.to_string()),
    ];
    if let Some([a, b]) = &run.sides {
        properties.push(("A", a.clone()));
        properties.push(("B", b.clone()));
    }
    if let Some(pct) = shown.fail_if_slower {
        properties.push(("fail-if-slower", format!("{pct}%")));
    }
    let mut cases: Vec<TestCase> = run
        .cases
        .iter()
        .map(|case| {
            // The label `regressions` names a case by.
            let label = format!("{} {}", case.workload, case.params);
            let failed = failing
                .iter()
                .any(|(candidate, found, _)| *candidate == run.candidate && *found == label);
            matched_case(case, failed.then_some(shown.fail_if_slower).flatten())
        })
        .collect();
    cases.extend(run.unmatched.iter().map(|line| unmatched_case(line)));
    TestSuite {
        name: format!("run {} against run {}", run.candidate, run.baseline),
        properties,
        cases,
    }
}

/// A case both runs have, judged on its headline; `failed_beyond` is the
/// gate's percentage when the gate fails it.
fn matched_case(case: &CaseComparison, failed_beyond: Option<f64>) -> TestCase {
    let name = if case.params.is_empty() {
        case.workload.clone()
    } else {
        case.params.clone()
    };
    let (outcome, out) = match case.headline() {
        None => (Outcome::Skipped("no metric".to_string()), String::new()),
        Some(headline) => {
            let said = verdict(case, headline);
            let outcome = match (headline.verdict(), failed_beyond) {
                (None, _) => Outcome::Skipped(said.clone()),
                (Some(_), Some(pct)) => Outcome::Failed(format!(
                    "slower by {:.1}%, more than --fail-if-slower {pct}%: {said}",
                    loss(headline) * 100.0
                )),
                (Some(_), None) => Outcome::Passed,
            };
            (outcome, said)
        }
    };
    TestCase {
        classname: case.workload.clone(),
        name,
        outcome,
        out,
    }
}

/// A case the runs do not share, from its line in `unmatched`
/// (`cpu.primes threads=2: only in run 2`): skipped, saying why.
fn unmatched_case(line: &str) -> TestCase {
    // The reasons hold no `: `; a label's parameters may.
    let (label, why) = line.rsplit_once(": ").unwrap_or((line, "not compared"));
    // A workload's id holds no space.
    let (workload, params) = label.split_once(' ').unwrap_or((label, ""));
    TestCase {
        classname: workload.to_string(),
        name: if params.is_empty() { workload } else { params }.to_string(),
        outcome: Outcome::Skipped(why.to_string()),
        out: String::new(),
    }
}

/// How much worse the candidate is, as a share of the baseline (negative
/// when better), as the gate measures it.
fn loss(metric: &MetricComparison) -> f64 {
    let ratio = metric.comparison.as_ref().map_or(1.0, |c| c.ratio);
    match metric.direction {
        Direction::Higher => 1.0 - ratio,
        Direction::Lower => ratio - 1.0,
    }
}

/// The headline's verdict in one line: `events_per_sec: slower, ratio
/// 0.800, 95% CI 0.790 to 0.810 (rounds)`, or why there is none.
fn verdict(case: &CaseComparison, metric: &MetricComparison) -> String {
    let Some(c) = &metric.comparison else {
        return format!(
            "{}: not compared: {}",
            metric.name,
            metric.not_compared.as_deref().unwrap_or("no samples")
        );
    };
    let word = if metric.judged {
        match c.verdict {
            Verdict::Faster => "faster".to_string(),
            Verdict::Slower => "slower".to_string(),
            Verdict::NoDifference => match metric.no_difference_within {
                Some(within) => format!("no difference, within ±{:.1}%", within * 100.0),
                None => "no difference".to_string(),
            },
        }
    } else {
        let mut why = case.disturbed_sides("baseline", "candidate");
        why.extend(metric.not_judged.clone());
        format!("not judged: {}", why.join("; "))
    };
    let basis = match c.basis {
        VerdictBasis::Paired => "paired",
        VerdictBasis::History => "history",
        VerdictBasis::Rounds => "rounds",
        VerdictBasis::Trials => "trials",
    };
    format!(
        "{}: {word}, ratio {:.3}, 95% CI {:.3} to {:.3} ({basis})",
        metric.name, c.ratio, c.ratio_ci_low, c.ratio_ci_high
    )
}

fn write_suite(xml: &mut String, suite: &TestSuite) {
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
        attribute(&suite.name),
        suite.cases.len(),
        suite.failures(),
        suite.skipped()
    );
    if !suite.properties.is_empty() {
        xml.push_str("    <properties>\n");
        for (name, value) in &suite.properties {
            let _ = writeln!(
                xml,
                "      <property name=\"{}\" value=\"{}\"/>",
                attribute(name),
                attribute(value)
            );
        }
        xml.push_str("    </properties>\n");
    }
    for case in &suite.cases {
        let _ = write!(
            xml,
            "    <testcase classname=\"{}\" name=\"{}\"",
            attribute(&case.classname),
            attribute(&case.name)
        );
        if matches!(case.outcome, Outcome::Passed) && case.out.is_empty() {
            xml.push_str("/>\n");
            continue;
        }
        xml.push_str(">\n");
        match &case.outcome {
            Outcome::Passed => {}
            Outcome::Failed(message) => {
                let _ = writeln!(
                    xml,
                    "      <failure message=\"{}\" type=\"regression\">{}</failure>",
                    attribute(message),
                    text(message)
                );
            }
            Outcome::Skipped(why) => {
                let _ = writeln!(xml, "      <skipped message=\"{}\"/>", attribute(why));
            }
        }
        if !case.out.is_empty() {
            let _ = writeln!(xml, "      <system-out>{}</system-out>", text(&case.out));
        }
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n");
}

/// `value` for an attribute in double quotes: the markup escaped, and
/// tab, line feed and carriage return as references, which a parser's
/// normalisation of attribute values would otherwise turn into spaces.
fn attribute(value: &str) -> String {
    escape(value, true)
}

/// `value` as element content: the markup escaped, a carriage return as a
/// reference (a parser would read it as a line feed).
fn text(value: &str) -> String {
    escape(value, false)
}

fn escape(value: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if unfit_for_xml(c) => out.push(char::REPLACEMENT_CHARACTER),
            c => out.push(c),
        }
    }
    out
}

/// A character XML 1.0 forbids (the C0 controls but tab, line feed and
/// carriage return, which are handled before; U+FFFE, U+FFFF) or
/// discourages (DEL, the C1 controls).
fn unfit_for_xml(c: char) -> bool {
    c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c) || c == '\u{fffe}' || c == '\u{ffff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_every_character_xml_cannot_carry_are_escaped() {
        assert_eq!(
            attribute("a<b>&\"c\" 'd'\t\n\r"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#9;&#10;&#13;"
        );
        assert_eq!(text("a<b>&\"c\"\t\n\r"), "a&lt;b&gt;&amp;\"c\"\t\n&#13;");
        let hostile = "\x1b]0;owned\x07\0\x08\x7f\u{9b}31m\u{fffe}\u{ffff}ok";
        let escaped = text(hostile);
        assert_eq!(
            escaped,
            "\u{fffd}]0;owned\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}31m\u{fffd}\u{fffd}ok"
        );
        // What XML 1.0 allows passes through: text beyond the BMP, the
        // bidi controls (the readers that show text handle those).
        assert_eq!(text("µs 🦀 \u{202e}"), "µs 🦀 \u{202e}");
    }

    #[test]
    fn an_unmatched_case_is_skipped_with_its_reason() {
        let case = unmatched_case("command cmd=echo a: b: only in run 2");
        assert_eq!(case.classname, "command");
        assert_eq!(case.name, "cmd=echo a: b");
        assert!(matches!(&case.outcome, Outcome::Skipped(why) if why == "only in run 2"));
        let case = unmatched_case("cpu.primes: failed in run 1; not compared");
        assert_eq!(
            (case.classname.as_str(), case.name.as_str()),
            ("cpu.primes", "cpu.primes")
        );
    }
}

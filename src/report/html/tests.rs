//! Unit tests of the HTML report.

use super::*;
use crate::analysis::pivot_grouping::PivotChoice;
use crate::analysis::report_view::report_view;
use crate::analysis::verdicts::NoNoiseHistory;
use crate::report::fixtures::demo_run;

/// The time every test's page says it was made.
const GENERATED: &str = "2026-03-01T12:00:00Z";

/// The page of `runs`: natural pivot tables, no history.
fn report(runs: &[RunRecord]) -> String {
    let view = report_view(runs, &[], &NoNoiseHistory, &PivotChoice::Natural, &[]);
    render(&view, GENERATED).unwrap()
}

#[test]
fn the_page_is_self_contained() {
    let page = report(&[demo_run(1, "alpha", 1.0), demo_run(2, "beta", 1.3)]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        page.contains("default-src 'none'"),
        "a CSP forbids fetching"
    );
    for external in [
        "<script", "<link", "src=", "url(", "@import", "http://", "https://",
    ] {
        let found = page.to_lowercase().contains(external);
        // The SVG namespace is an identifier, not a fetch.
        let only_namespace = external == "http://"
            && page.matches("http://").count()
                == page.matches("http://www.w3.org/2000/svg").count();
        assert!(!found || only_namespace, "{external} in the page");
    }
}

#[test]
fn hosts_sit_side_by_side_with_differences_marked() {
    let mut b = demo_run(2, "beta", 1.3);
    b.host.os.kernel = "6.12.0-other".into();
    let page = report(&[demo_run(1, "alpha", 1.0), b]);
    let hosts = &page[page.find("id=\"hosts\"").unwrap()..page.find("id=\"comparison\"").unwrap()];
    let row = |fact: &str| {
        hosts
            .lines()
            .find(|l| l.contains(&format!("<th>{fact}</th>")))
            .unwrap_or_else(|| panic!("no {fact} row: {hosts}"))
            .to_string()
    };
    assert!(row("Host").contains("class=\"differs\""), "{}", row("Host"));
    assert!(row("Kernel").contains("≠") && row("Kernel").contains("6.12.0-other"));
    assert!(!row("CPU").contains("differs"), "{}", row("CPU"));
    assert!(!row("Started").contains("differs"), "each run's own start");
}

#[test]
fn comparison_tables_come_from_compare_runs() {
    let page = report(&[
        demo_run(1, "alpha", 1.0),
        demo_run(2, "beta", 2.0),
        demo_run(3, "gamma", 1.0),
    ]);
    assert!(page.contains("<h3>run 2 against run 1 (baseline)</h3>"));
    assert!(page.contains("<h3>run 3 against run 1 (baseline)</h3>"));
    // Twice as fast: a 2.000 ratio called faster; same speed: no difference.
    let two = &page[page.find("run 2 against").unwrap()..page.find("run 3 against").unwrap()];
    assert!(
        two.contains("2.000 [") && two.contains("class=\"faster\">faster"),
        "{two}"
    );
    // memory.latency is lower-is-better: half the latency is faster too.
    assert!(two.contains("ns_per_load (ns)"), "{two}");
    let three = &page[page.find("run 3 against").unwrap()..page.find("id=\"charts\"").unwrap()];
    assert!(
        three.contains("no significant difference") && !three.contains("class=\"slower\""),
        "{three}"
    );
    assert!(
        three.contains("unmatched: fileio mode=rndrw: failed in run 1"),
        "{three}"
    );
}

#[test]
fn verdicts_say_what_they_rule_out_and_which_trials_they_rest_on() {
    // The same speed, but the candidate's cpu.primes threads=1 has a
    // fourth trial and its first one was flagged: judged on the three left.
    let mut b = demo_run(2, "beta", 1.0);
    let case = &mut b.cases[0];
    case.trials.push(crate::results::TrialRecord {
        index: 3,
        round: 0,
        replaced: false,
        seconds: 0.5,
        health: crate::monitor::TrialHealth::default(),
    });
    case.metrics[0].samples.push(801.0);
    case.trials[0].health.flags = vec![crate::monitor::Disturbance::BusyHost];
    let page = report(&[demo_run(1, "alpha", 1.0), b]);
    let row = |params: &str| {
        page.lines()
            .find(|l| l.contains(&format!("<td>{params}</td>")))
            .unwrap_or_else(|| panic!("no row {params}: {page}"))
            .to_string()
    };
    let unflagged = row("max_prime=10000 threads=1 time=0.5");
    assert!(
        unflagged.contains("no significant difference, within ±"),
        "{unflagged}"
    );
    assert!(
        unflagged.contains("judged on unflagged trials (candidate busy 1/4 left out)"),
        "{unflagged}"
    );
    // Two of three trials flagged on both sides: one left, 3 needed.
    let withheld = row("max_prime=10000 threads=4 time=0.5");
    assert!(
        withheld.contains(
            "not judged: baseline busy 2/3; candidate busy 2/3; only 1 unflagged trial of the \
             baseline, 3 needed; only 1 unflagged trial of the candidate, 3 needed"
        ),
        "{withheld}"
    );
    assert!(
        page.contains("no difference (") && page.contains("could not have seen a 5% change)"),
        "{page}"
    );
    assert!(
        page.contains("; 1 judged on unflagged trials only</p>"),
        "{page}"
    );
}

#[test]
fn charts_cover_cases_sweeps_and_latency() {
    let page = report(&[demo_run(1, "alpha", 1.0), demo_run(2, "beta", 1.3)]);
    let charts = &page[page.find("id=\"charts\"").unwrap()..page.find("id=\"summary\"").unwrap()];
    // 14 cases with a headline: a bar chart each; the failed one a figure
    // that says so; scaling charts for cpu.primes, two crypto sweeps and
    // http.static; a latency spectrum per HTTP case.
    assert_eq!(
        charts.matches("<figure class=\"case\">").count(),
        15,
        "bar charts and the failed case"
    );
    assert!(
        charts.contains("<p class=\"note failed\">failed in run 1: no space left on device</p>"),
        "{charts}"
    );
    assert_eq!(charts.matches("scaling over").count(), 4, "scaling charts");
    assert_eq!(
        charts.matches("latency percentiles").count(),
        3,
        "latency spectra"
    );
    assert_eq!(charts.matches("<svg").count(), 14 + 4 + 3);
    // The USL fit and its peak are drawn and told.
    assert!(charts.contains("peak "), "{charts}");
    assert!(charts.contains("USL λ="), "{charts}");
    // The HTTP rates span 90 to 27,000 req/s: the scaling chart is on log
    // axes (powers of ten are labelled).
    let http = &charts[charts.find("scaling over concurrency").unwrap()..];
    assert!(
        http.contains(">\n1000\n<") || http.contains(">\n10000\n<"),
        "{http}"
    );
}

#[test]
fn strings_from_the_store_are_escaped() {
    let hostile = "<script>alert(1)</script>";
    let mut run = demo_run(1, hostile, 1.0);
    run.command_line = format!("sledge run {hostile}");
    run.warnings.push(format!("warning {hostile}"));
    run.cases[0].params.insert("dir".into(), hostile.into());
    run.cases[0].warnings.push(hostile.into());
    run.cases[0].metrics[0].unit = hostile.into();
    run.host.cpu.model = "\"><img src=x onerror=alert(1)>".into();
    let page = report(&[run, demo_run(2, "beta", 1.0)]);
    assert!(
        !page.to_lowercase().contains("<script"),
        "a script tag got through"
    );
    assert!(!page.contains("<img"), "an img tag got through");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn hostile_text_is_escaped_in_every_section_that_shows_it() {
    use crate::analysis::change_points::{self, HistoryRun};
    use crate::report::fixtures::{case, metric, run};
    const HOSTILE: &str = "<script>alert(1)</script>";
    const ESCAPED: &str = "&lt;script&gt;alert(1)&lt;/script&gt;";
    // Three hosts of one CPU model, the third slow, for the fleet section;
    // hostile in each a host name, the CPU model, a parameter, a unit, a
    // warning and a failed case's error.
    let runs: Vec<RunRecord> = [1000.0, 990.0, 300.0]
        .iter()
        .enumerate()
        .map(|(i, &mean)| {
            let samples = [mean, mean * 1.001, mean * 0.999];
            let mut primes = case(
                "cpu.primes",
                &[("threads", "1"), ("dir", HOSTILE)],
                metric(
                    "events_per_sec",
                    HOSTILE,
                    crate::analysis::Direction::Higher,
                    &samples,
                ),
            );
            primes.warnings.push(format!("warning {HOSTILE}"));
            let mut failed = primes.clone();
            failed.workload = "fileio".into();
            failed.metrics.clear();
            failed.error = Some(format!("error {HOSTILE}"));
            let mut run = run(
                i as i64 + 1,
                &format!("h{i}{HOSTILE}"),
                2,
                vec![primes, failed],
            );
            run.host.cpu.model = format!("CPU {HOSTILE}");
            run.warnings.push(format!("run warning {HOSTILE}"));
            run
        })
        .collect();
    let stored: Vec<HistoryRun> = runs
        .iter()
        .map(|run| HistoryRun {
            run: run.clone(),
            imported: false,
        })
        .collect();
    let histories = [change_points::build(
        &runs[0].host.hostname,
        "cpu.primes",
        &stored,
        &BTreeMap::new(),
        None,
    )];
    let view = report_view(
        &runs,
        &[],
        &NoNoiseHistory,
        &PivotChoice::Natural,
        &histories,
    );
    let page = render(&view, GENERATED).unwrap();
    assert!(!page.to_lowercase().contains("<script"), "{page}");
    let sections: Vec<&str> = page.split("<section id=\"").skip(1).collect();
    let ids: Vec<&str> = sections
        .iter()
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "hosts",
            "comparison",
            "fleet-outliers",
            "charts",
            "history",
            "summary"
        ]
    );
    // What each section shows of the hostile text.
    let shown = [
        ("hosts", "h0"),
        ("comparison", "dir="),
        ("fleet-outliers", "h2"),
        ("charts", "error "),
        ("history", "on h0"),
        ("summary", "run warning "),
    ];
    for ((id, before), section) in shown.iter().zip(&sections) {
        assert!(
            section.contains(&format!("{before}{ESCAPED}")),
            "{id}: no {before}{ESCAPED} in {section}"
        );
    }
}

/// The line of `page`'s hosts table for `fact`.
fn host_row(page: &str, fact: &str) -> String {
    let hosts = &page[page.find("id=\"hosts\"").unwrap()..page.find("id=\"comparison\"").unwrap()];
    hosts
        .lines()
        .find(|l| l.contains(&format!("<th>{fact}</th>")))
        .unwrap_or_else(|| panic!("no {fact} row: {hosts}"))
        .to_string()
}

#[test]
fn fleet_clones_that_share_a_host_name_are_told_apart() {
    let mut a = demo_run(1, "vm", 1.0);
    let mut b = demo_run(2, "vm", 1.0);
    a.notes = vec!["fleet_host=198.18.1.2".into()];
    b.notes = vec!["rack 3".into(), "fleet_host=198.18.2.2".into()];
    let page = report(&[a, b]);
    let row = host_row(&page, "Host");
    assert!(
        row.contains("<td>vm (fleet host 198.18.1.2)</td><td>vm (fleet host 198.18.2.2)</td>"),
        "{row}"
    );
    assert!(row.contains("class=\"differs\""), "{row}");
    // A run made elsewhere has just its host name.
    let page = report(&[demo_run(1, "vm", 1.0)]);
    assert!(host_row(&page, "Host").contains("<td>vm</td>"));
}

#[test]
fn a_missing_side_of_a_host_difference_reads_not_set() {
    let mut a = demo_run(1, "alpha", 1.0);
    a.notes = vec!["price=5EUR".into()];
    let page = report(&[a, demo_run(2, "alpha", 1.0)]);
    assert!(page.contains("<li>price: 5 EUR → not set</li>"), "{page}");
}

/// The captions of the bar charts of `page`.
fn bar_captions(page: &str) -> Vec<String> {
    page.split("<figure class=\"case\"><figcaption>")
        .skip(1)
        .map(|f| f.split(" <span").next().unwrap().to_string())
        .collect()
}

#[test]
fn bar_charts_name_the_thread_count_the_scaling_axis_shows() {
    // On 2 CPUs, threads=2 is every CPU: matched across runs as `all`, and
    // titled with the count.
    let captions = bar_captions(&report(&[demo_run(1, "alpha", 1.0)]));
    assert_eq!(
        captions[..4],
        ["threads=1", "threads=2", "threads=3", "threads=4"],
        "{captions:?}"
    );
    assert!(!captions.iter().any(|c| c.contains("=all")), "{captions:?}");
    // A 4-CPU run's threads=4 is matched with the 2-CPU run's threads=2.
    let mut big = demo_run(2, "beta", 2.0);
    big.cpus = (0..4).collect();
    let captions = bar_captions(&report(&[demo_run(1, "alpha", 1.0), big]));
    assert!(
        captions.contains(&"threads=all (2 in run 1, 4 in run 2)".to_string()),
        "{captions:?}"
    );
}

#[test]
fn a_sweep_that_stops_early_says_it_is_partial() {
    let mut run = demo_run(1, "alpha", 1.0);
    // cpu.primes at 3 and 4 threads failed: the sweep has two steps left.
    for case in &mut run.cases[2..4] {
        case.error = Some("out of memory".into());
        case.metrics.clear();
    }
    let page = report(&[run]);
    let scaling = &page[page.find("scaling over threads").unwrap()..];
    let row = scaling
        .lines()
        .find(|l| l.starts_with("<tr><td><span class=\"swatch\""))
        .unwrap();
    assert!(
        row.contains("<td class=\"num\">1, 2, 3 (failed), 4 (failed)</td>"),
        "{row}"
    );
    assert!(
        row.contains("partial: 1.99× (99% efficiency) at threads=2; threads=3, 4 failed"),
        "{row}"
    );
    let svg = &scaling[..scaling.find("</svg>").unwrap()];
    assert_eq!(svg.matches(">\nfailed\n<").count(), 2, "{svg}");
    // The failed cases keep their figures, saying so.
    assert_eq!(
        page.matches("failed in run 1: out of memory").count(),
        2,
        "{page}"
    );
}

#[test]
fn a_two_parameter_sweep_is_one_table_and_one_chart_comparing_the_runs() {
    use crate::report::fixtures::pivot_run;
    let mut other = pivot_run(2, "beta", 1.5);
    // Another host: copies=all is 4 there, and still matches.
    other.cpus = (0..4).collect();
    for case in &mut other.cases {
        if case.params.get("copies").is_some_and(|c| c == "2") {
            case.params.insert("copies".into(), "4".into());
        }
    }
    let mut first = pivot_run(1, "alpha", 1.0);
    // 2M pages at 300 req/s: the means span 200x, for a log axis.
    for run in [&mut first, &mut other] {
        let big = run
            .cases
            .iter_mut()
            .find(|c| c.params.get("size").is_some_and(|s| s == "2M"))
            .unwrap();
        big.metrics[0] = crate::report::fixtures::metric(
            "requests_per_sec",
            "req/s",
            crate::analysis::Direction::Higher,
            &[300.0, 306.0, 294.0],
        );
    }
    let page = report(&[first, other]);
    let charts = &page[page.find("id=\"charts\"").unwrap()..page.find("id=\"summary\"").unwrap()];
    let captions: Vec<&str> = charts
        .split("<figure class=\"wide pivot\"><figcaption>")
        .skip(1)
        .map(|f| f.split(" <span").next().unwrap())
        .collect();
    assert_eq!(
        captions,
        [
            "algorithm by block_size · copies=1",
            "algorithm by block_size · copies=all",
            "size by concurrency"
        ]
    );
    // Its cases get no bar chart of their own: every case is in a table.
    assert_eq!(
        charts.matches("<figure class=\"case\">").count(),
        0,
        "{charts}"
    );
    // A row per row value and run, the first naming the row.
    assert!(
        charts.contains("<tr><th rowspan=\"2\">sha256</th><td><span class=\"swatch\""),
        "{charts}"
    );
    assert!(
        charts.contains("<p class=\"note failed\">size=200K concurrency=16: failed in run 1: connection refused</p>"),
        "{charts}"
    );
    // One line per row and run, and the rates of http.static span more
    // than 100×: a log axis (1000 labelled, which a linear axis up to
    // 90,000 would not label).
    let http = &charts[charts.find("size by concurrency").unwrap()..];
    let svg = &http[..http.find("</svg>").unwrap()];
    for label in ["run 1 · 1", "run 2 · 200K", "run 2 · 2M"] {
        assert!(svg.contains(&format!(">\n{label}\n<")), "{label}: {svg}");
    }
    assert!(svg.contains(">\n1000\n<"), "{svg}");
}

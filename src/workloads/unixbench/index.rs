//! UnixBench's System Benchmarks Index, computed from a stored run and
//! printed the way UnixBench prints it at the end of a run: the section
//! the `unixbench.*` workloads add to a run's report ([`SystemIndex`],
//! through [`Workload::run_section`]), beside the baselines it divides by.
//!
//! Each test's index is its score divided by the score of UnixBench's
//! baseline machine, times 10 (so the baseline rates 10.0); the overall
//! index is the geometric mean of the tests' indexes, times 10, once for the
//! run's 1-copy cases and once per other number of copies. The arithmetic
//! is UnixBench's `Run` (`indexResults`): a test whose ratio to its
//! baseline is not above 0.000001 adds nothing to the sum of logarithms
//! but still counts in the mean. A test's score is the mean over the case's
//! trials (UnixBench takes the geometric mean of its passes after dropping
//! the worst third).
//!
//! [`Workload::run_section`]: crate::engine::Workload::run_section

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::engine::{IndexEntry, IndexEntryOf, RunSection};
use crate::results::{CaseRecord, RunRecord};
use crate::visible::Escaped;

/// One test of the index: UnixBench's name for it, the title `Run` prints,
/// its unit and the baseline machine's score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexTest {
    /// The name in `index.base` and `Run` (`dhry2reg`).
    pub name: &'static str,
    /// The title `Run` prints (`Dhrystone 2 using register variables`).
    pub title: &'static str,
    /// UnixBench's unit for the score.
    pub unit: &'static str,
    /// The baseline machine's score.
    pub baseline: f64,
}

const fn test(
    name: &'static str,
    title: &'static str,
    unit: &'static str,
    baseline: f64,
) -> IndexTest {
    IndexTest {
        name,
        title,
        unit,
        baseline,
    }
}

/// The twelve tests of the System Benchmarks Index with their baselines,
/// from byte-unixbench 6.0.0's `UnixBench/pgms/index.base` ("Scores from
/// George, a SPARCstation 20-61"; shell1's was extrapolated to match it in
/// UnixBench 5.0), in that file's order; titles from its `Run` script.
pub const SYSTEM_TESTS: [IndexTest; 12] = [
    test(
        "dhry2reg",
        "Dhrystone 2 using register variables",
        "lps",
        116700.0,
    ),
    test(
        "whetstone-double",
        "Double-Precision Whetstone",
        "MWIPS",
        55.0,
    ),
    test("execl", "Execl Throughput", "lps", 43.0),
    test(
        "fstime",
        "File Copy 1024 bufsize 2000 maxblocks",
        "KBps",
        3960.0,
    ),
    test(
        "fsbuffer",
        "File Copy 256 bufsize 500 maxblocks",
        "KBps",
        1655.0,
    ),
    test(
        "fsdisk",
        "File Copy 4096 bufsize 8000 maxblocks",
        "KBps",
        5800.0,
    ),
    test("pipe", "Pipe Throughput", "lps", 12440.0),
    test("context1", "Pipe-based Context Switching", "lps", 4000.0),
    test("spawn", "Process Creation", "lps", 126.0),
    test("shell8", "Shell Scripts (8 concurrent)", "lpm", 6.0),
    test("syscall", "System Call Overhead", "lps", 15000.0),
    test("shell1", "Shell Scripts (1 concurrent)", "lpm", 42.4),
];

/// Ratios at or below this add nothing to the geometric mean (`Run`'s
/// `$ratio > 0.000001`).
const SMALLEST_RATIO: f64 = 0.000001;

/// The test of the index with this name.
pub fn index_test(name: &str) -> Option<&'static IndexTest> {
    SYSTEM_TESTS.iter().find(|t| t.name == name)
}

/// A test's index: its score over the baseline's, times 10.
pub fn test_index(score: f64, baseline: f64) -> f64 {
    score / baseline * 10.0
}

/// The overall index of several tests' scores over their baselines
/// (`ratios`, not yet times 10): 10 times their geometric mean, as `Run`
/// computes it. `None` without ratios.
pub fn overall_index(ratios: &[f64]) -> Option<f64> {
    if ratios.is_empty() {
        return None;
    }
    let sum: f64 = ratios
        .iter()
        .filter(|&&r| r > SMALLEST_RATIO)
        .map(|r| r.ln())
        .sum();
    Some((sum / ratios.len() as f64).exp() * 10.0)
}

/// How a UnixBench case reads in the table: `Run`'s title and, for the
/// twelve index tests, the test.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseTest {
    /// The title `Run` prints for it (or would, for a variant it lacks).
    pub title: String,
    /// The index test, when the case is one.
    pub test: Option<&'static IndexTest>,
}

/// Which UnixBench test a case is, as its workload says
/// ([`Workload::index_entry`]) from the values the case ran with (`cpus`:
/// the run's CPU count), asked through `index_entry_of` (the registry's
/// answer, handed down by the report); `None` for a case of any other
/// workload, of one this sledge does not have, or with parameters it no
/// longer accepts.
///
/// [`Workload::index_entry`]: crate::engine::Workload::index_entry
pub fn case_test(case: &CaseRecord, cpus: usize, index_entry_of: IndexEntryOf) -> Option<CaseTest> {
    Some(match index_entry_of(case, cpus)? {
        IndexEntry::Test(name) => match index_test(name) {
            Some(test) => CaseTest {
                title: test.title.to_string(),
                test: Some(test),
            },
            None => CaseTest {
                title: name.to_string(),
                test: None,
            },
        },
        IndexEntry::Variant(title) => CaseTest { title, test: None },
    })
}

/// One row of an index table.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRow {
    /// `Run`'s title for the test.
    pub title: String,
    /// The baseline score, for an index test.
    pub baseline: Option<f64>,
    /// The case's score (the mean of its trials' headline metric).
    pub result: f64,
    /// The test's index, for an index test.
    pub index: Option<f64>,
}

/// The index table of the run's cases with one number of copies.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexTable {
    /// The copies of every case in the table.
    pub copies: u64,
    /// The rows, sorted by title as `Run` sorts them.
    pub rows: Vec<IndexRow>,
    /// The overall index over the index tests present.
    pub score: Option<f64>,
    /// How many of the twelve index tests are present.
    pub indexed: usize,
}

impl IndexTable {
    /// Whether every test of the index is present (`Run` says "Partial
    /// Index" otherwise).
    pub fn full(&self) -> bool {
        self.indexed == SYSTEM_TESTS.len()
    }
}

/// The index tables of a run: one per number of copies among its
/// successful `unixbench.*` cases, fewest copies first. When a test ran
/// more than once with the same copies (a sweep of `time`, say), every
/// case gets a row and the first one counts in the overall index.
/// `index_entry_of` says what each case stands for ([`case_test`]).
pub fn index_tables(run: &RunRecord, index_entry_of: IndexEntryOf) -> Vec<IndexTable> {
    let mut by_copies: BTreeMap<u64, Vec<(&CaseRecord, CaseTest)>> = BTreeMap::new();
    for case in &run.cases {
        if case.error.is_some() || case.metrics.is_empty() {
            continue;
        }
        let cpus = run.cpus.len().max(1);
        let Some(test) = case_test(case, cpus, index_entry_of) else {
            continue;
        };
        let copies = case
            .params
            .get("copies")
            .and_then(|c| c.parse().ok())
            .unwrap_or(1);
        by_copies.entry(copies).or_default().push((case, test));
    }
    by_copies
        .into_iter()
        .map(|(copies, cases)| {
            let mut seen: Vec<&str> = Vec::new();
            let mut ratios = Vec::new();
            let mut rows: Vec<IndexRow> = cases
                .into_iter()
                .map(|(case, test)| {
                    let result = case.metrics[0].summary.mean;
                    let baseline = test.test.map(|t| t.baseline);
                    if let Some(t) = test.test
                        && !seen.contains(&t.name)
                    {
                        seen.push(t.name);
                        ratios.push(result / t.baseline);
                    }
                    IndexRow {
                        title: test.title,
                        baseline,
                        result,
                        index: baseline.map(|b| test_index(result, b)),
                    }
                })
                .collect();
            rows.sort_by(|a, b| a.title.cmp(&b.title));
            IndexTable {
                copies,
                rows,
                score: overall_index(&ratios),
                indexed: seen.len(),
            }
        })
        .collect()
}

/// UnixBench's index as a section of a run's report: the section every
/// `unixbench.*` workload hands back.
pub struct SystemIndex;

impl RunSection for SystemIndex {
    fn id(&self) -> &'static str {
        "unixbench.index"
    }

    fn text(&self, run: &Escaped<RunRecord>, index_entry_of: IndexEntryOf) -> String {
        render(run, index_entry_of)
    }

    fn line(&self, run: &Escaped<RunRecord>, index_entry_of: IndexEntryOf) -> Option<String> {
        line(run, index_entry_of)
    }
}

/// `UnixBench index: 1 copy 1234.5, 2 copies 2345.6 (partial: 1 of 12
/// tests)`: the overall index per number of copies, for the scorecard.
pub fn line(run: &RunRecord, index_entry_of: IndexEntryOf) -> Option<String> {
    let tables = index_tables(run, index_entry_of);
    let scores: Vec<String> = tables
        .iter()
        .filter_map(|t| {
            let score = t.score?;
            let copies = if t.copies == 1 { "copy" } else { "copies" };
            Some(format!("{} {copies} {score:.1}", t.copies))
        })
        .collect();
    if scores.is_empty() {
        return None;
    }
    let indexed = tables.iter().map(|t| t.indexed).max().unwrap_or(0);
    let partial = if indexed < SYSTEM_TESTS.len() {
        format!(" (partial: {indexed} of {} tests)", SYSTEM_TESTS.len())
    } else {
        String::new()
    };
    Some(format!("UnixBench index: {}{partial}", scores.join(", ")))
}

/// The tables as UnixBench prints them (`Run`'s `logIndexCat` formats),
/// each under a line naming the copies; empty without UnixBench cases.
pub fn render(run: &Escaped<RunRecord>, index_entry_of: IndexEntryOf) -> String {
    let mut out = String::new();
    for table in index_tables(run, index_entry_of) {
        let copies = if table.copies == 1 {
            "1 parallel copy".to_string()
        } else {
            format!("{} parallel copies", table.copies)
        };
        let _ = writeln!(
            out,
            "\nUnixBench index: running {copies} of tests; {} CPUs in the run\n\
             (baselines: UnixBench 6.0 pgms/index.base)",
            run.cpus.len()
        );
        let head = if table.full() {
            "System Benchmarks Index Values"
        } else {
            "System Benchmarks Partial Index"
        };
        let _ = writeln!(
            out,
            "{head:<40} {:>12} {:>12} {:>8}",
            "BASELINE", "RESULT", "INDEX"
        );
        for row in &table.rows {
            match (row.baseline, row.index) {
                (Some(baseline), Some(index)) => {
                    let _ = writeln!(
                        out,
                        "{:<40} {baseline:>12.1} {:>12.1} {index:>8.1}",
                        row.title, row.result
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "{:<40} {:>12} {:>12.1} {:>8}",
                        row.title, "---", row.result, "---"
                    );
                }
            }
        }
        let title = if table.full() {
            "System Benchmarks Index Score"
        } else {
            "System Benchmarks Index Score (Partial Only)"
        };
        let _ = writeln!(out, "{:<40} {:>12} {:>12} {:>8}", "", "", "", "========");
        match table.score {
            Some(score) => {
                let _ = writeln!(out, "{title:<66} {score:>8.1}");
            }
            None => {
                let _ = writeln!(out, "{title:<66} {:>8}", "---");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{MetricRecord, RunStatus};
    use crate::stats::{self, Direction};
    use crate::workloads::index_entry_of;

    /// `index.base` as published (name|time|unit|sum|score|iterations), the
    /// twelve system-category lines.
    const INDEX_BASE: &str = "\
dhry2reg|10|lps|116700|116700|2
whetstone-double|10|MWIPS|55.0|55.0|2
execl|20|lps|43.0|43.0|1
fstime|20|KBps|3960|3960|1
fsbuffer|20|KBps|1655|1655|1
fsdisk|20|KBps|5800|5800|1
pipe|10|lps|12440|12440|2
context1|10|lps|4000|4000|2
spawn|20|lps|126|126|1
shell8|60|lpm|6|6|1
syscall|10|lps|15000|15000|2
shell1|60|lpm|42.4|42.4|1";

    #[test]
    fn baselines_are_index_base_s() {
        let lines: Vec<&str> = INDEX_BASE.lines().collect();
        assert_eq!(lines.len(), SYSTEM_TESTS.len());
        for (line, test) in lines.iter().zip(SYSTEM_TESTS.iter()) {
            let fields: Vec<&str> = line.split('|').collect();
            assert_eq!(fields[0], test.name);
            assert_eq!(fields[2], test.unit);
            assert_eq!(fields[4].parse::<f64>().unwrap(), test.baseline);
        }
    }

    #[test]
    fn the_baseline_machine_rates_ten() {
        for test in SYSTEM_TESTS {
            assert_eq!(test_index(test.baseline, test.baseline), 10.0);
        }
        let ratios = vec![1.0; SYSTEM_TESTS.len()];
        assert!((overall_index(&ratios).unwrap() - 10.0).abs() < 1e-12);
        assert_eq!(overall_index(&[]), None);
    }

    /// UnixBench's USAGE shows a dual-processor system's index values,
    /// single and dual copies, and the index scores 678.2 and 1026.2.
    #[test]
    fn the_overall_index_is_usage_s_example() {
        let single = [
            562.5, 320.0, 450.4, 759.4, 535.8, 1261.8, 481.0, 326.8, 917.2, 1064.9, 1567.7, 944.2,
        ];
        let dual = [
            1110.3, 640.4, 880.3, 595.9, 438.8, 1043.4, 979.3, 1229.0, 1714.1, 1566.3, 1709.9,
            1445.5,
        ];
        for (indexes, published) in [(single, 678.2), (dual, 1026.2)] {
            let ratios: Vec<f64> = indexes.iter().map(|i| i / 10.0).collect();
            let overall = overall_index(&ratios).unwrap();
            // The published index values are rounded to 0.1, the scores
            // were computed from the unrounded ones.
            assert!(
                (overall - published).abs() < 0.1,
                "{overall} vs {published}"
            );
        }
    }

    #[test]
    fn a_vanishing_ratio_counts_but_adds_nothing() {
        // Run skips log(ratio) for a ratio <= 1e-6 but still divides by
        // the number of tests: [4, ~0] gives exp(ln 4 / 2) * 10 = 20.
        let overall = overall_index(&[4.0, 1e-9]).unwrap();
        assert!((overall - 20.0).abs() < 1e-9);
    }

    #[test]
    fn cases_map_to_unixbench_s_tests() {
        let name = |w: &str, p: &[(&str, &str)]| {
            case_test(&case(w, p, &[1.0]), 2, index_entry_of)
                .and_then(|t| t.test)
                .map(|t| t.name)
        };
        assert_eq!(name("unixbench.dhrystone", &[]), Some("dhry2reg"));
        assert_eq!(
            name("unixbench.fcopy", &[("buffer", "1K"), ("max_blocks", "0")]),
            Some("fstime")
        );
        assert_eq!(
            name(
                "unixbench.fcopy",
                &[("buffer", "256"), ("max_blocks", "500")]
            ),
            Some("fsbuffer")
        );
        assert_eq!(
            name("unixbench.fcopy", &[("buffer", "4K"), ("max_blocks", "0")]),
            Some("fsdisk")
        );
        assert_eq!(
            name(
                "unixbench.fcopy",
                &[("buffer", "4K"), ("max_blocks", "100")]
            ),
            None
        );
        assert_eq!(
            name("unixbench.syscall", &[("calls", "mix")]),
            Some("syscall")
        );
        assert_eq!(name("unixbench.syscall", &[("calls", "getpid")]), None);
        assert_eq!(
            name("unixbench.shell", &[("concurrent", "8")]),
            Some("shell8")
        );
        assert_eq!(name("unixbench.shell", &[("concurrent", "16")]), None);
        assert_eq!(
            case_test(&case("cpu.primes", &[], &[1.0]), 2, index_entry_of),
            None
        );
        let odd = case_test(
            &case(
                "unixbench.fcopy",
                &[("buffer", "512"), ("max_blocks", "0")],
                &[1.0],
            ),
            2,
            index_entry_of,
        )
        .unwrap();
        assert_eq!(odd.title, "File Copy 512 bufsize 1000 maxblocks");
    }

    #[test]
    fn the_workloads_name_all_twelve_tests_of_the_index() {
        let cases: [(&str, &[(&str, &str)]); 12] = [
            ("unixbench.dhrystone", &[]),
            ("unixbench.whetstone", &[]),
            ("unixbench.execl", &[]),
            (
                "unixbench.fcopy",
                &[("buffer", "1K"), ("max_blocks", "2000")],
            ),
            ("unixbench.fcopy", &[("buffer", "256"), ("max_blocks", "0")]),
            (
                "unixbench.fcopy",
                &[("buffer", "4096"), ("max_blocks", "8000")],
            ),
            ("unixbench.pipe", &[]),
            ("unixbench.context", &[]),
            ("unixbench.spawn", &[]),
            ("unixbench.shell", &[("concurrent", "8")]),
            ("unixbench.syscall", &[("calls", "mix")]),
            ("unixbench.shell", &[("concurrent", "1")]),
        ];
        let named: Vec<&str> = cases
            .iter()
            .map(|(workload, pairs)| {
                case_test(&case(workload, pairs, &[1.0]), 2, index_entry_of)
                    .unwrap()
                    .test
                    .unwrap()
                    .name
            })
            .collect();
        let expected: Vec<&str> = SYSTEM_TESTS.iter().map(|t| t.name).collect();
        assert_eq!(named, expected);
    }

    #[test]
    fn a_case_its_workload_no_longer_accepts_is_left_out() {
        // concurrent is at most 64 now: a case stored with more is of
        // another version, which the index cannot place.
        let stored = case("unixbench.shell", &[("concurrent", "100")], &[1.0]);
        assert_eq!(case_test(&stored, 2, index_entry_of), None);
    }

    #[test]
    fn a_case_this_process_ran_is_placed_by_the_values_it_ran_with() {
        // The text says nothing the index knows; the values the record
        // keeps beside it say 8 concurrent shells: Shell Scripts (8).
        let workload = crate::workloads::find("unixbench.shell").unwrap();
        let values = crate::engine::test_fixtures::one_case(workload, &[("concurrent", "8")], 2);
        let mut ran = case("unixbench.shell", &[("concurrent", "100")], &[1.0]);
        ran.values = Some(values);
        let test = case_test(&ran, 2, index_entry_of).unwrap().test.unwrap();
        assert_eq!(test.name, "shell8");
    }

    #[test]
    fn every_unixbench_workload_adds_the_index_to_its_runs() {
        for workload in crate::workloads::family("unixbench") {
            let section = workload.run_section().map(|s| s.id());
            assert_eq!(section, Some("unixbench.index"), "{}", workload.id());
        }
    }

    fn case(workload: &str, params: &[(&str, &str)], samples: &[f64]) -> CaseRecord {
        CaseRecord {
            workload: workload.into(),
            workload_version: 1,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            given_as_all: None,
            warnings: vec![],
            error: None,
            rounds: vec![],
            trials: vec![],
            metrics: vec![MetricRecord {
                name: "loops_per_sec".into(),
                unit: "lps".into(),
                direction: Direction::Higher,
                summary: stats::summarize(samples).unwrap(),
                levels: None,
                samples: samples.to_vec(),
                outliers: vec![false; samples.len()],
            }],
            latency_histogram: None,
            values: None,
        }
    }

    fn run(cases: Vec<CaseRecord>) -> RunRecord {
        RunRecord {
            id: 1,
            uuid: String::new(),
            notes: vec![],
            started: String::new(),
            finished: None,
            sledge_version: "0".into(),
            profile: "unixbench".into(),
            command_line: String::new(),
            status: RunStatus::Complete,
            cpus: vec![0, 1],
            warnings: vec![],
            host: Default::default(),
            cases,
        }
    }

    #[test]
    fn tables_group_by_copies_and_print_as_unixbench_does() {
        let mut failed = case("unixbench.spawn", &[("copies", "1")], &[1.0]);
        failed.error = Some("boom".into());
        let r = run(vec![
            case("unixbench.pipe", &[("copies", "2")], &[24880.0, 24880.0]),
            case("unixbench.pipe", &[("copies", "1")], &[12440.0, 12440.0]),
            case(
                "unixbench.dhrystone",
                &[("copies", "1")],
                &[1167000.0, 1167000.0],
            ),
            case(
                "unixbench.syscall",
                &[("copies", "1"), ("calls", "getpid")],
                &[5.0, 5.0],
            ),
            failed,
            case("cpu.primes", &[("threads", "1")], &[1.0]),
        ]);
        let tables = index_tables(&r, index_entry_of);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].copies, 1);
        assert_eq!(tables[0].indexed, 2);
        assert!(!tables[0].full());
        // Pipe at the baseline (10) and Dhrystone at 10x (100): sqrt(10 * 100).
        assert!((tables[0].score.unwrap() - 1000f64.sqrt()).abs() < 1e-9);
        let titles: Vec<&str> = tables[0].rows.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Dhrystone 2 using register variables",
                "Pipe Throughput",
                "System Call Overhead (getpid)"
            ]
        );
        assert_eq!(tables[1].copies, 2);
        assert!((tables[1].score.unwrap() - 20.0).abs() < 1e-9);

        let text = render(&Escaped::new(r.clone()), index_entry_of);
        assert!(text.contains("running 1 parallel copy of tests"), "{text}");
        // The summary's width holds here too.
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        assert!(
            text.contains("running 2 parallel copies of tests"),
            "{text}"
        );
        let expected = [
            "System Benchmarks Partial Index              BASELINE       RESULT    INDEX",
            "Dhrystone 2 using register variables         116700.0    1167000.0    100.0",
            "Pipe Throughput                               12440.0      12440.0     10.0",
            "System Call Overhead (getpid)                     ---          5.0      ---",
            "                                                                   ========",
            "System Benchmarks Index Score (Partial Only)                           31.6",
        ]
        .join("\n");
        assert!(text.contains(&expected), "{text}");
        assert_eq!(render(&Escaped::new(run(vec![])), index_entry_of), "");
    }

    #[test]
    fn a_full_set_is_called_index_values() {
        let cases = vec![
            case("unixbench.dhrystone", &[("copies", "1")], &[116700.0]),
            case("unixbench.whetstone", &[("copies", "1")], &[55.0]),
            case("unixbench.execl", &[("copies", "1")], &[43.0]),
            case(
                "unixbench.fcopy",
                &[("copies", "1"), ("buffer", "1K"), ("max_blocks", "0")],
                &[3960.0],
            ),
            case(
                "unixbench.fcopy",
                &[("copies", "1"), ("buffer", "256"), ("max_blocks", "0")],
                &[1655.0],
            ),
            case(
                "unixbench.fcopy",
                &[("copies", "1"), ("buffer", "4K"), ("max_blocks", "0")],
                &[5800.0],
            ),
            case("unixbench.pipe", &[("copies", "1")], &[12440.0]),
            case("unixbench.context", &[("copies", "1")], &[4000.0]),
            case("unixbench.spawn", &[("copies", "1")], &[126.0]),
            case(
                "unixbench.shell",
                &[("copies", "1"), ("concurrent", "8")],
                &[6.0],
            ),
            case(
                "unixbench.syscall",
                &[("copies", "1"), ("calls", "mix")],
                &[15000.0],
            ),
            case(
                "unixbench.shell",
                &[("copies", "1"), ("concurrent", "1")],
                &[42.4],
            ),
        ];
        let tables = index_tables(&run(cases), index_entry_of);
        assert!(tables[0].full());
        assert!((tables[0].score.unwrap() - 10.0).abs() < 1e-9);
        let text = render(&Escaped::new(run(vec![])), index_entry_of);
        assert!(text.is_empty());
    }
}

//! Parsers of the classic tools' outputs: what fio, pgbench, sysbench,
//! redis-benchmark, wrk, ab, stress-ng and iperf3 print, read into
//! metrics named as the tool names them, with their units and which way
//! is better. A command workload picks one by its program's name or by
//! `-p parser=NAME`.
//!
//! Each parser is a module of its own, tested on output the real tool
//! printed (the fixtures beside them), so that what sledge stores is what
//! the tool printed; every fixture is also refused by every other parser,
//! so that no parser reads another tool's report as its own.
//! `docs/tool-parsers.md` lists each parser's metrics. Every parser reads
//! standard output: stress-ng, which writes its metrics to standard
//! error, is run with `--stdout`, as its `needs()` says.

mod ab;
mod figures;
mod fio;
mod iperf3;
mod json_report;
mod pgbench;
mod redis_benchmark;
mod stress_ng;
mod sysbench;
mod tool_parser;
mod wrk;

pub use tool_parser::ToolParser;

/// Every parser.
pub fn all() -> Vec<&'static dyn ToolParser> {
    vec![
        &fio::Fio,
        &pgbench::Pgbench,
        &sysbench::Sysbench,
        &redis_benchmark::RedisBenchmark,
        &wrk::Wrk,
        &ab::ApacheBench,
        &stress_ng::StressNg,
        &iperf3::Iperf3,
    ]
}

/// The parser named `name`.
pub fn by_name(name: &str) -> Option<&'static dyn ToolParser> {
    all().into_iter().find(|p| p.name() == name)
}

/// The parser for a program (its file name, without the directory).
pub fn for_program(program: &str) -> Option<&'static dyn ToolParser> {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    all().into_iter().find(|p| p.programs().contains(&name))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::engine::Metric;
    use crate::stats::Direction;

    /// The value of the one metric named `name`, after checking its unit.
    pub fn figure(metrics: &[Metric], name: &str, unit: &str) -> f64 {
        let found: Vec<&Metric> = metrics.iter().filter(|m| m.name == name).collect();
        assert_eq!(found.len(), 1, "one `{name}` in {metrics:?}");
        assert_eq!(found[0].unit, unit, "the unit of `{name}`");
        found[0].value
    }

    /// The metrics' names, in order.
    pub fn names(metrics: &[Metric]) -> Vec<&str> {
        metrics.iter().map(|m| m.name.as_str()).collect()
    }

    /// Every fixture: the parser of the tool that printed it, and whether
    /// it holds figures (the rest are failed runs, which every parser must
    /// refuse).
    const FIXTURES: &[(&str, &str, bool)] = &[
        ("ab", include_str!("fixtures/ab.stdout"), true),
        (
            "ab",
            include_str!("fixtures/ab-length-failures.stdout"),
            true,
        ),
        ("ab", include_str!("fixtures/ab-non2xx.stdout"), true),
        ("fio", include_str!("fixtures/fio-randread.stdout"), true),
        (
            "fio",
            include_str!("fixtures/fio-randrw-2jobs.stdout"),
            true,
        ),
        (
            "fio",
            include_str!("fixtures/fio-randwrite-grouped.stdout"),
            true,
        ),
        ("fio", include_str!("fixtures/fio-job-error.stdout"), false),
        ("fio", include_str!("fixtures/fio-two-groups.stdout"), false),
        ("iperf3", include_str!("fixtures/iperf3-tcp.stdout"), true),
        ("iperf3", include_str!("fixtures/iperf3-udp.stdout"), true),
        (
            "iperf3",
            include_str!("fixtures/iperf3-refused.stdout"),
            false,
        ),
        (
            "pgbench",
            include_str!("fixtures/pgbench-tpcb.stdout"),
            true,
        ),
        (
            "pgbench",
            include_str!("fixtures/pgbench-tpcb-r-progress.stdout"),
            true,
        ),
        (
            "pgbench",
            include_str!("fixtures/pgbench-select-only-r.stdout"),
            true,
        ),
        (
            "pgbench",
            include_str!("fixtures/pgbench-select-only-t.stdout"),
            true,
        ),
        (
            "pgbench",
            include_str!("fixtures/pgbench-serializable-failures.stdout"),
            true,
        ),
        (
            "redis-benchmark",
            include_str!("fixtures/redis-benchmark-csv.stdout"),
            true,
        ),
        (
            "redis-benchmark",
            include_str!("fixtures/redis-benchmark-csv-lrange.stdout"),
            true,
        ),
        (
            "stress-ng",
            include_str!("fixtures/stress-ng-metrics-brief.stderr"),
            true,
        ),
        (
            "stress-ng",
            include_str!("fixtures/stress-ng-metrics-stdout.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-cpu.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-memory.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-threads-p99.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-mutex.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-fileio-rndrw.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-oltp-read-write-pgsql.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-oltp-read-only-pgsql.stdout"),
            true,
        ),
        (
            "sysbench",
            include_str!("fixtures/sysbench-oltp-point-select-mariadb.stdout"),
            true,
        ),
        ("wrk", include_str!("fixtures/wrk.stdout"), true),
        (
            "wrk",
            include_str!("fixtures/wrk-latency-non2xx.stdout"),
            true,
        ),
        (
            "wrk",
            include_str!("fixtures/wrk-latency-socket-errors.stdout"),
            true,
        ),
    ];

    #[test]
    fn every_parser_is_registered_once_and_its_programs_are_unique() {
        let parsers = all();
        let mut names = HashSet::new();
        let mut programs = HashSet::new();
        for parser in &parsers {
            assert!(names.insert(parser.name()), "`{}` twice", parser.name());
            assert!(
                !parser.programs().is_empty(),
                "{} has no program",
                parser.name()
            );
            assert!(
                !parser.needs().is_empty(),
                "{} needs nothing",
                parser.name()
            );
            for program in parser.programs() {
                assert!(programs.insert(*program), "program `{program}` twice");
                let chosen = for_program(&format!("/usr/bin/{program}")).expect(program);
                assert_eq!(chosen.name(), parser.name());
            }
            assert_eq!(
                by_name(parser.name()).map(|p| p.name()),
                Some(parser.name())
            );
        }
        assert_eq!(
            names,
            HashSet::from([
                "fio",
                "pgbench",
                "sysbench",
                "redis-benchmark",
                "wrk",
                "ab",
                "stress-ng",
                "iperf3"
            ])
        );
        assert!(by_name("hyperfine").is_none());
        assert!(for_program("/usr/bin/true").is_none());
    }

    #[test]
    fn every_fixture_is_read_by_its_own_parser_and_refused_by_every_other() {
        for (tool, text, has_figures) in FIXTURES {
            for parser in all() {
                let parsed = parser.parse(text);
                if parser.name() == *tool && *has_figures {
                    let metrics = parsed.unwrap_or_else(|e| panic!("{tool}: {e}"));
                    assert!(!metrics.is_empty(), "{tool}: no metrics");
                    let unique: HashSet<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
                    assert_eq!(unique.len(), metrics.len(), "{tool}: a name twice");
                    for metric in &metrics {
                        assert!(metric.value.is_finite(), "{tool}: {metric:?}");
                        assert!(
                            metric
                                .unit
                                .natural_direction()
                                .is_none_or(|d| d == metric.direction),
                            "{tool}: {metric:?}"
                        );
                    }
                    assert_eq!(metrics[0].direction, Direction::Higher, "{tool}'s headline");
                } else {
                    assert!(
                        parsed.is_err(),
                        "{} read {tool}'s output: {parsed:?}",
                        parser.name()
                    );
                }
            }
        }
    }
}

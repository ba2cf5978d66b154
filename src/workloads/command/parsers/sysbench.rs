//! sysbench 1.0's report of a `run`: the built-in tests (`cpu`, `memory`,
//! `threads`, `mutex`, `fileio`) and the OLTP scripts (`oltp_read_write`,
//! `oltp_read_only`, `oltp_point_select`, ... against PostgreSQL or
//! MySQL/MariaDB).
//!
//! The headline comes first and depends on the test, which sysbench's
//! report shows by its sections:
//! - OLTP (`SQL statistics:`): `transactions_per_sec` (tx/s),
//!   `queries_per_sec` (queries/s), then `ignored_errors` and `reconnects`
//!   as counts (lower is better; sysbench's per-second figures of them
//!   would be rates, which sledge ranks higher-is-better).
//! - cpu: `events_per_sec` as printed (`events per second:`).
//! - memory: `mib_per_sec` (`MiB/sec`) and `operations_per_sec` (ops/s).
//! - fileio: `mib_per_sec`, the sum of the read and written MiB/s, as
//!   sledge's own `fileio` heads its cases, then `reads_per_sec`,
//!   `writes_per_sec`, `fsyncs_per_sec`, `read_mib_per_sec`,
//!   `written_mib_per_sec`.
//! - threads and mutex print no rate: `events_per_sec` is their total
//!   events over their total time, as sysbench computes the cpu test's.
//!
//! Then for every test: `total_time` (s), `events` (total number of
//! events), `latency_min`, `latency_avg`, `latency_max` and the percentile
//! sysbench printed, named from its label (`95th percentile:` is
//! `latency_p95`, `--percentile=99` gives `latency_p99`), all in ms.

use super::figures::{after_label, labelled_number, leading_number, number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// sysbench's report.
pub struct Sysbench;

const TOOL: &str = "sysbench";

impl ToolParser for Sysbench {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn programs(&self) -> &'static [&'static str] {
        &["sysbench"]
    }

    fn needs(&self) -> &'static str {
        "a `run` of a built-in test (cpu, memory, threads, mutex, fileio) or of an OLTP script"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        // Read first, so that a failed run (no summary) says so before a
        // section-specific line is looked for.
        let total_time = total_time(stdout)?;
        let events = labelled_number(stdout, TOOL, "total number of events:")?;
        let mut metrics = if stdout.contains("SQL statistics:") {
            oltp(stdout)?
        } else if stdout.contains("CPU speed:") {
            let rate = labelled_number(stdout, TOOL, "events per second:")?;
            vec![Metric::higher("events_per_sec", "events/s", rate)]
        } else if stdout.contains("Running memory speed test") {
            memory(stdout)?
        } else if stdout.contains("File operations:") {
            fileio(stdout)?
        } else if total_time > 0.0 {
            vec![Metric::higher(
                "events_per_sec",
                "events/s",
                events / total_time,
            )]
        } else {
            Vec::new()
        };
        metrics.push(Metric::lower("total_time", "s", total_time));
        metrics.push(Metric::higher("events", "events", events));
        metrics.extend(latency(stdout)?);
        Ok(metrics)
    }
}

/// `total time:  1.0073s`.
fn total_time(stdout: &str) -> Result<f64, String> {
    let field = after_label(stdout, "total time:").ok_or(
        "no `total time:` line in sysbench's output: its `General statistics` are missing \
         (did the run fail, or was it `prepare` or `cleanup`?)",
    )?;
    leading_number(field.trim_end_matches('s'), "sysbench's `total time`")
}

/// The number in parentheses of a line like `243    (119.56 per sec.)`.
fn in_parentheses(field: &str, what: &str) -> Result<f64, String> {
    let inside = field
        .split_once('(')
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("{what}: expected `N (R per sec.)`, found `{field}`"))?;
    leading_number(inside, what)
}

/// A labelled line's `(R per sec.)` figure.
fn labelled_rate(stdout: &str, label: &str) -> Result<f64, String> {
    let field = after_label(stdout, label)
        .ok_or_else(|| format!("no `{label}` line in sysbench's output"))?;
    in_parentheses(field, &format!("sysbench's `{label}`"))
}

fn oltp(stdout: &str) -> Result<Vec<Metric>, String> {
    Ok(vec![
        Metric::higher(
            "transactions_per_sec",
            "tx/s",
            labelled_rate(stdout, "transactions:")?,
        ),
        Metric::higher(
            "queries_per_sec",
            "queries/s",
            labelled_rate(stdout, "queries:")?,
        ),
        Metric::lower(
            "ignored_errors",
            "errors",
            labelled_number(stdout, TOOL, "ignored errors:")?,
        ),
        Metric::lower(
            "reconnects",
            "reconnects",
            labelled_number(stdout, TOOL, "reconnects:")?,
        ),
    ])
}

fn memory(stdout: &str) -> Result<Vec<Metric>, String> {
    // `1330.70 MiB transferred (1323.21 MiB/sec)`.
    let transferred = stdout
        .lines()
        .find(|line| line.contains(" MiB transferred ("))
        .ok_or("no `MiB transferred (N MiB/sec)` line in sysbench's memory report")?;
    Ok(vec![
        Metric::higher(
            "mib_per_sec",
            "MiB/s",
            in_parentheses(transferred, "sysbench's MiB/sec")?,
        ),
        Metric::higher(
            "operations_per_sec",
            "ops/s",
            labelled_rate(stdout, "Total operations:")?,
        ),
    ])
}

fn fileio(stdout: &str) -> Result<Vec<Metric>, String> {
    let figure = |label: &str| labelled_number(stdout, TOOL, label);
    let read = figure("read, MiB/s:")?;
    let written = figure("written, MiB/s:")?;
    Ok(vec![
        Metric::higher("mib_per_sec", "MiB/s", read + written),
        Metric::higher("reads_per_sec", "reads/s", figure("reads/s:")?),
        Metric::higher("writes_per_sec", "writes/s", figure("writes/s:")?),
        Metric::higher("fsyncs_per_sec", "fsyncs/s", figure("fsyncs/s:")?),
        Metric::higher("read_mib_per_sec", "MiB/s", read),
        Metric::higher("written_mib_per_sec", "MiB/s", written),
    ])
}

/// The `Latency (ms):` section: min, avg, max and the percentile line,
/// whatever level its label names.
fn latency(stdout: &str) -> Result<Vec<Metric>, String> {
    let (_, section) = stdout
        .split_once("Latency (ms):")
        .ok_or("no `Latency (ms):` section in sysbench's output")?;
    let mut metrics = Vec::new();
    for (label, name) in [
        ("min:", "latency_min"),
        ("avg:", "latency_avg"),
        ("max:", "latency_max"),
    ] {
        let ms = labelled_number(section, TOOL, label)?;
        metrics.push(Metric::lower(name, "ms", ms));
    }
    // `95th percentile:`; absent with `--percentile=0`.
    for line in section.lines() {
        if let Some((level, value)) = line.trim().split_once("th percentile:") {
            let level = number(level)
                .map(|_| level.replace('.', "_"))
                .ok_or_else(|| format!("sysbench's percentile line `{}`", line.trim()))?;
            let ms = leading_number(value, "sysbench's latency percentile")?;
            metrics.push(Metric::lower(format!("latency_p{level}"), "ms", ms));
            break;
        }
    }
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    const LATENCY: [&str; 4] = ["latency_min", "latency_avg", "latency_max", "latency_p95"];

    #[test]
    fn cpu_gives_its_printed_events_per_second_and_latencies() {
        let metrics = Sysbench
            .parse(include_str!("fixtures/sysbench-cpu.stdout"))
            .expect("sysbench's report");
        let mut expected = vec!["events_per_sec", "total_time", "events"];
        expected.extend(LATENCY);
        assert_eq!(names(&metrics), expected);
        assert_eq!(figure(&metrics, "events_per_sec", "events/s"), 265.56);
        assert_eq!(figure(&metrics, "total_time", "s"), 1.0073);
        assert_eq!(figure(&metrics, "events", "events"), 268.0);
        assert_eq!(figure(&metrics, "latency_avg", "ms"), 7.43);
        assert_eq!(figure(&metrics, "latency_p95", "ms"), 29.19);
        assert_eq!(figure(&metrics, "latency_max", "ms"), 45.77);
    }

    #[test]
    fn memory_gives_mib_per_second_and_operations_per_second() {
        let metrics = Sysbench
            .parse(include_str!("fixtures/sysbench-memory.stdout"))
            .expect("sysbench's report");
        assert_eq!(metrics[0].name, "mib_per_sec");
        assert_eq!(figure(&metrics, "mib_per_sec", "MiB/s"), 1323.21);
        assert_eq!(figure(&metrics, "operations_per_sec", "ops/s"), 1354972.07);
        assert_eq!(figure(&metrics, "events", "events"), 1362636.0);
        assert_eq!(figure(&metrics, "latency_max", "ms"), 20.05);
    }

    #[test]
    fn the_percentile_is_named_from_its_label() {
        let metrics = Sysbench
            .parse(include_str!("fixtures/sysbench-threads-p99.stdout"))
            .expect("sysbench's report");
        assert_eq!(figure(&metrics, "latency_p99", "ms"), 12.75);
        assert!(!names(&metrics).contains(&"latency_p95"));
        // threads prints no rate: its events over its time.
        assert_eq!(
            figure(&metrics, "events_per_sec", "events/s"),
            507.0 / 1.0006
        );
    }

    #[test]
    fn mutex_gives_its_total_time_and_latencies() {
        let metrics = Sysbench
            .parse(include_str!("fixtures/sysbench-mutex.stdout"))
            .expect("sysbench's report");
        assert_eq!(figure(&metrics, "total_time", "s"), 1.1077);
        assert_eq!(figure(&metrics, "events", "events"), 2.0);
        assert_eq!(figure(&metrics, "latency_avg", "ms"), 1101.26);
        assert_eq!(figure(&metrics, "latency_p95", "ms"), 1109.09);
    }

    #[test]
    fn fileio_gives_operations_and_throughput_headed_by_their_sum() {
        let metrics = Sysbench
            .parse(include_str!("fixtures/sysbench-fileio-rndrw.stdout"))
            .expect("sysbench's report");
        assert_eq!(
            names(&metrics)[..6],
            [
                "mib_per_sec",
                "reads_per_sec",
                "writes_per_sec",
                "fsyncs_per_sec",
                "read_mib_per_sec",
                "written_mib_per_sec"
            ]
        );
        assert_eq!(figure(&metrics, "mib_per_sec", "MiB/s"), 35.64 + 23.76);
        assert_eq!(figure(&metrics, "reads_per_sec", "reads/s"), 2280.83);
        assert_eq!(figure(&metrics, "fsyncs_per_sec", "fsyncs/s"), 154.0);
        assert_eq!(figure(&metrics, "written_mib_per_sec", "MiB/s"), 23.76);
        assert_eq!(figure(&metrics, "events", "events"), 4054.0);
    }

    #[test]
    fn oltp_read_write_on_postgresql_counts_its_ignored_errors() {
        let metrics = Sysbench
            .parse(include_str!(
                "fixtures/sysbench-oltp-read-write-pgsql.stdout"
            ))
            .expect("sysbench's report");
        let mut expected = vec![
            "transactions_per_sec",
            "queries_per_sec",
            "ignored_errors",
            "reconnects",
            "total_time",
            "events",
        ];
        expected.extend(LATENCY);
        assert_eq!(names(&metrics), expected);
        assert_eq!(figure(&metrics, "transactions_per_sec", "tx/s"), 119.56);
        assert_eq!(figure(&metrics, "queries_per_sec", "queries/s"), 2417.8);
        assert_eq!(figure(&metrics, "ignored_errors", "errors"), 3.0);
        assert_eq!(figure(&metrics, "reconnects", "reconnects"), 0.0);
        assert_eq!(figure(&metrics, "latency_p95", "ms"), 36.24);
    }

    #[test]
    fn oltp_read_only_on_postgresql() {
        let metrics = Sysbench
            .parse(include_str!(
                "fixtures/sysbench-oltp-read-only-pgsql.stdout"
            ))
            .expect("sysbench's report");
        assert_eq!(figure(&metrics, "transactions_per_sec", "tx/s"), 199.53);
        assert_eq!(figure(&metrics, "queries_per_sec", "queries/s"), 3192.43);
        assert_eq!(figure(&metrics, "events", "events"), 204.0);
    }

    #[test]
    fn oltp_point_select_on_mariadb() {
        let metrics = Sysbench
            .parse(include_str!(
                "fixtures/sysbench-oltp-point-select-mariadb.stdout"
            ))
            .expect("sysbench's report");
        assert_eq!(figure(&metrics, "transactions_per_sec", "tx/s"), 7761.17);
        assert_eq!(figure(&metrics, "total_time", "s"), 1.0045);
        assert_eq!(figure(&metrics, "latency_p95", "ms"), 0.33);
        assert_eq!(figure(&metrics, "latency_min", "ms"), 0.04);
    }

    #[test]
    fn output_without_general_statistics_says_the_run_did_not_report() {
        let err = Sysbench
            .parse(include_str!("fixtures/pgbench-tpcb.stdout"))
            .unwrap_err();
        assert!(err.starts_with("no `total time:` line"), "{err}");
    }
}

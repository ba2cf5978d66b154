//! pgbench's summary, as PostgreSQL 15's pgbench prints it (and the two
//! `tps` lines of pgbench 13 and older).
//!
//! `tps` (tx/s, pgbench's `tps = N (without initial connection time)`,
//! which older versions call `excluding connections establishing`) first;
//! `tps_including_connections` where an older pgbench printed that line
//! too; `transactions` (actually processed; of `N/M` with `-t`, the N);
//! `failed_transactions` (pgbench 15, lower is better); `latency_average`
//! (ms; with failures pgbench 15 counts their time in it and says
//! `(including failures)`); `latency_stddev` (ms, printed with `-P` or
//! `--rate`); `initial_connection_time` (ms, pgbench 14 on).
//!
//! `-r`'s per-statement latencies and `-P`'s progress lines (on stderr)
//! are not stored: a statement's text makes no metric name, and the
//! summary already holds the run's figures.

use super::figures::{after_label, leading_number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// pgbench's summary.
pub struct Pgbench;

const TOOL: &str = "pgbench";

impl ToolParser for Pgbench {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn programs(&self) -> &'static [&'static str] {
        &["pgbench"]
    }

    fn needs(&self) -> &'static str {
        "a benchmark run (not -i), with its summary on standard output"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let (tps, including) = tps_lines(stdout)?;
        let mut metrics = vec![Metric::higher("tps", "tx/s", tps)];
        if let Some(including) = including {
            metrics.push(Metric::higher(
                "tps_including_connections",
                "tx/s",
                including,
            ));
        }
        // `-t` runs print the processed count over the planned one: `200/200`.
        let processed = after_label(stdout, "number of transactions actually processed:")
            .ok_or("no `number of transactions actually processed:` line in pgbench's output")?;
        let processed = leading_number(
            processed.split('/').next().unwrap_or(processed),
            "pgbench's number of transactions actually processed",
        )?;
        metrics.push(Metric::higher("transactions", "transactions", processed));
        if let Some(failed) = after_label(stdout, "number of failed transactions:") {
            let failed = leading_number(failed, "pgbench's number of failed transactions")?;
            metrics.push(Metric::lower("failed_transactions", "transactions", failed));
        }
        for (label, name) in [
            ("latency average =", "latency_average"),
            ("latency stddev =", "latency_stddev"),
            ("initial connection time =", "initial_connection_time"),
        ] {
            if let Some(field) = after_label(stdout, label) {
                let ms = milliseconds(field, label)?;
                metrics.push(Metric::lower(name, "ms", ms));
            }
        }
        Ok(metrics)
    }
}

/// The `tps` without connection time, and the one including it where
/// pgbench printed both (13 and older).
fn tps_lines(stdout: &str) -> Result<(f64, Option<f64>), String> {
    let mut without = None;
    let mut including = None;
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("tps = ") else {
            continue;
        };
        let tps = leading_number(rest, "pgbench's tps")?;
        if rest.contains("(including connections establishing)") {
            including = Some(tps);
        } else {
            // `(without initial connection time)` (14 on) or
            // `(excluding connections establishing)` (13 and older).
            without = Some(tps);
        }
    }
    let tps = without.ok_or(
        "no `tps = N (without initial connection time)` line in pgbench's output: \
         did the run end before its summary?",
    )?;
    Ok((tps, including))
}

/// A figure pgbench prints as `16.097 ms`: anything but `ms` after the
/// number is a format this parser does not know.
fn milliseconds(field: &str, label: &str) -> Result<f64, String> {
    let what = format!("pgbench's `{}`", label.trim_end_matches(" ="));
    let value = leading_number(field, &what)?;
    match field.split_whitespace().nth(1) {
        Some("ms") => Ok(value),
        _ => Err(format!("{what}: expected a time in ms, found `{field}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn the_default_tpcb_summary_gives_tps_latency_and_connection_time() {
        let metrics = Pgbench
            .parse(include_str!("fixtures/pgbench-tpcb.stdout"))
            .expect("pgbench's summary");
        assert_eq!(
            names(&metrics),
            [
                "tps",
                "transactions",
                "failed_transactions",
                "latency_average",
                "initial_connection_time"
            ]
        );
        assert_eq!(figure(&metrics, "tps", "tx/s"), 124.244432);
        assert_eq!(figure(&metrics, "transactions", "transactions"), 246.0);
        assert_eq!(figure(&metrics, "failed_transactions", "transactions"), 0.0);
        assert_eq!(figure(&metrics, "latency_average", "ms"), 16.097);
        assert_eq!(figure(&metrics, "initial_connection_time", "ms"), 45.254);
    }

    #[test]
    fn select_only_with_per_statement_latencies_reads_the_same_summary() {
        let metrics = Pgbench
            .parse(include_str!("fixtures/pgbench-select-only-r.stdout"))
            .expect("pgbench's summary");
        assert_eq!(metrics.len(), 5, "the -r table adds nothing: {metrics:?}");
        assert_eq!(figure(&metrics, "tps", "tx/s"), 4393.458753);
        assert_eq!(figure(&metrics, "latency_average", "ms"), 0.455);
        assert_eq!(figure(&metrics, "transactions", "transactions"), 8609.0);
    }

    #[test]
    fn progress_reports_add_the_latency_stddev() {
        let metrics = Pgbench
            .parse(include_str!("fixtures/pgbench-tpcb-r-progress.stdout"))
            .expect("pgbench's summary");
        assert_eq!(figure(&metrics, "latency_stddev", "ms"), 14.812);
        assert_eq!(figure(&metrics, "latency_average", "ms"), 16.676);
        assert_eq!(figure(&metrics, "tps", "tx/s"), 119.377437);
    }

    #[test]
    fn a_fixed_transaction_count_reads_the_processed_part_of_n_of_m() {
        let metrics = Pgbench
            .parse(include_str!("fixtures/pgbench-select-only-t.stdout"))
            .expect("pgbench's summary");
        assert_eq!(figure(&metrics, "transactions", "transactions"), 200.0);
        assert_eq!(figure(&metrics, "tps", "tx/s"), 3003.814845);
    }

    #[test]
    fn serialization_failures_are_counted_and_the_latency_read_before_its_note() {
        let text = include_str!("fixtures/pgbench-serializable-failures.stdout");
        assert!(text.contains("latency average = 9.573 ms (including failures)"));
        let metrics = Pgbench.parse(text).expect("pgbench's summary");
        let failed = metrics
            .iter()
            .find(|m| m.name == "failed_transactions")
            .expect("failed_transactions");
        assert_eq!(failed.value, 622.0);
        assert_eq!(failed.direction, crate::stats::Direction::Lower);
        assert_eq!(figure(&metrics, "latency_average", "ms"), 9.573);
        assert_eq!(figure(&metrics, "tps", "tx/s"), 94.586434);
    }

    #[test]
    fn pgbench_13_s_two_tps_lines_are_told_apart() {
        // PostgreSQL 13's pgbench printed these two lines where 15 prints
        // one (its printResults: `tps = %f (including connections
        // establishing)` then `(excluding ...)`); the rest of the summary
        // is this machine's pgbench 15.
        let summary = include_str!("fixtures/pgbench-tpcb.stdout").replace(
            "tps = 124.244432 (without initial connection time)",
            "tps = 120.120000 (including connections establishing)\n\
             tps = 124.244432 (excluding connections establishing)",
        );
        let metrics = Pgbench.parse(&summary).expect("pgbench's summary");
        assert_eq!(figure(&metrics, "tps", "tx/s"), 124.244432);
        assert_eq!(
            figure(&metrics, "tps_including_connections", "tx/s"),
            120.12
        );
    }

    #[test]
    fn another_tool_s_output_is_no_pgbench_summary() {
        let err = Pgbench
            .parse(include_str!(
                "fixtures/sysbench-oltp-read-write-pgsql.stdout"
            ))
            .unwrap_err();
        assert!(err.starts_with("no `tps = N"), "{err}");
    }
}

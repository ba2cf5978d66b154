//! stress-ng's metrics table (`--metrics-brief` or `--metrics`).
//!
//! Per stressor, in the order of the table (the first stressor's bogo
//! ops per second of real time is the headline):
//! `<stressor>_bogo_ops_per_sec_real`, `<stressor>_bogo_ops_per_sec_usr_sys`
//! (bogo ops/s over real time and over user plus system time) and
//! `<stressor>_bogo_ops` (the count), a stressor's `-` becoming `_`
//! (`af-alg` gives `af_alg_bogo_ops`). `--metrics` adds columns (CPU used,
//! RSS) and miscellaneous per-stressor figures, which are not stored.
//!
//! Debian's stress-ng 0.15 writes its messages, the table included, to
//! standard error; `--stdout` sends them to standard output, where a
//! command's figures are read. The parser reads the table from either
//! text.

use std::collections::HashSet;

use super::figures::{metric_word, number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// stress-ng's `--metrics-brief` table.
pub struct StressNg;

/// The numeric columns every version's table starts with: bogo ops, real,
/// usr and sys seconds, bogo ops/s (real time), bogo ops/s (usr+sys time).
const COLUMNS: usize = 6;

impl ToolParser for StressNg {
    fn name(&self) -> &'static str {
        "stress-ng"
    }

    fn programs(&self) -> &'static [&'static str] {
        &["stress-ng"]
    }

    fn needs(&self) -> &'static str {
        "--metrics-brief (or --metrics) and --stdout, since stress-ng writes its metrics to \
         standard error otherwise"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let mut metrics = Vec::new();
        let mut stressors = HashSet::new();
        let mut in_table = false;
        for line in stdout.lines() {
            // `stress-ng: metrc: [27350] cpu   704   2.01 ...`.
            let Some(message) = line
                .strip_prefix("stress-ng:")
                .and_then(|rest| rest.split_once("] "))
                .map(|(_, message)| message)
            else {
                continue;
            };
            if message.contains("bogo ops") {
                in_table = true;
                continue;
            }
            let fields: Vec<&str> = message.split_whitespace().collect();
            let Some((name, figures)) = row(&fields).filter(|_| in_table) else {
                continue;
            };
            let stressor = metric_word(name);
            if !stressors.insert(stressor.clone()) {
                return Err(format!("stress-ng's metrics list stressor `{name}` twice"));
            }
            let [ops, _real, _usr, _sys, per_real, per_usr_sys] = figures;
            metrics.push(Metric::higher(
                format!("{stressor}_bogo_ops_per_sec_real"),
                "bogo ops/s",
                per_real,
            ));
            metrics.push(Metric::higher(
                format!("{stressor}_bogo_ops_per_sec_usr_sys"),
                "bogo ops/s",
                per_usr_sys,
            ));
            metrics.push(Metric::higher(
                format!("{stressor}_bogo_ops"),
                "bogo ops",
                ops,
            ));
        }
        if metrics.is_empty() {
            return Err(format!(
                "no metrics table (`stressor  bogo ops  real time ...`) in stress-ng's output: \
                 it needs {}",
                self.needs()
            ));
        }
        Ok(metrics)
    }
}

/// A table row: a stressor's name and its first six figures, or `None`
/// for any other line (a miscellaneous metric has words after its first
/// figure).
fn row<'a>(fields: &[&'a str]) -> Option<(&'a str, [f64; COLUMNS])> {
    let (name, rest) = fields.split_first()?;
    if rest.len() < COLUMNS || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut figures = [0.0; COLUMNS];
    for (slot, field) in figures.iter_mut().zip(rest) {
        *slot = number(field)?;
    }
    Some((name, figures))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn metrics_brief_on_stderr_gives_each_stressor_s_bogo_ops() {
        let metrics = StressNg
            .parse(include_str!("fixtures/stress-ng-metrics-brief.stderr"))
            .expect("stress-ng's table");
        assert_eq!(
            names(&metrics),
            [
                "cpu_bogo_ops_per_sec_real",
                "cpu_bogo_ops_per_sec_usr_sys",
                "cpu_bogo_ops",
                "vm_bogo_ops_per_sec_real",
                "vm_bogo_ops_per_sec_usr_sys",
                "vm_bogo_ops"
            ]
        );
        assert_eq!(
            figure(&metrics, "cpu_bogo_ops_per_sec_real", "bogo ops/s"),
            350.6
        );
        assert_eq!(
            figure(&metrics, "cpu_bogo_ops_per_sec_usr_sys", "bogo ops/s"),
            1060.97
        );
        assert_eq!(figure(&metrics, "vm_bogo_ops", "bogo ops"), 5312.0);
        assert_eq!(
            figure(&metrics, "vm_bogo_ops_per_sec_real", "bogo ops/s"),
            2629.98
        );
    }

    #[test]
    fn full_metrics_on_stdout_skip_the_extra_columns_and_miscellaneous_figures() {
        let metrics = StressNg
            .parse(include_str!("fixtures/stress-ng-metrics-stdout.stdout"))
            .expect("stress-ng's table");
        assert_eq!(metrics.len(), 6, "{metrics:?}");
        assert_eq!(figure(&metrics, "matrix_bogo_ops", "bogo ops"), 600.0);
        assert_eq!(
            figure(&metrics, "matrix_bogo_ops_per_sec_usr_sys", "bogo ops/s"),
            2698.04
        );
        assert_eq!(
            figure(&metrics, "cpu_bogo_ops_per_sec_real", "bogo ops/s"),
            306.15
        );
    }

    #[test]
    fn an_empty_stdout_says_where_stress_ng_writes_its_metrics() {
        // What stdout holds when stress-ng runs without --stdout.
        let err = StressNg.parse("").unwrap_err();
        assert!(err.contains("--stdout"), "{err}");
    }
}

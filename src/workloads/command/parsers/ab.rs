//! ApacheBench's report (`ab`, Debian's `apache2-utils`).
//!
//! `requests_per_sec` (req/s, `Requests per second:`) first, then
//! `time_per_request` (ms, the mean), `time_per_request_all_concurrent`
//! (ms, `mean, across all concurrent requests`), `transfer_rate` (MiB/s:
//! ab's `Kbytes/sec` are KiB, its total bytes over 1024), `time_taken` (s),
//! `complete_requests`, `failed_requests` and `non_2xx_responses` (lower
//! is better; 0 when ab prints no such line, which it prints only when
//! one is non-zero) and the table of requests served within a time,
//! `served_within_p50` ... `served_within_p100` (ms; absent with `-d`).

use super::figures::{after_label, labelled_number, leading_number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// ApacheBench's report.
pub struct ApacheBench;

const TOOL: &str = "ab";

/// The levels of ab's `Percentage of the requests served within a
/// certain time (ms)` table.
const SERVED_WITHIN: [&str; 9] = [
    "50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "100%",
];

const KIB_PER_MIB: f64 = 1024.0;

impl ToolParser for ApacheBench {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn programs(&self) -> &'static [&'static str] {
        &["ab", "ab2"]
    }

    fn needs(&self) -> &'static str {
        "its standard report (-d leaves out the percentile table)"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let figure = |label: &str| labelled_number(stdout, TOOL, label);
        let (mean, across) = times_per_request(stdout)?;
        let mut metrics = vec![
            Metric::higher("requests_per_sec", "req/s", figure("Requests per second:")?),
            Metric::lower("time_per_request", "ms", mean),
            Metric::lower("time_per_request_all_concurrent", "ms", across),
            Metric::higher(
                "transfer_rate",
                "MiB/s",
                figure("Transfer rate:")? / KIB_PER_MIB,
            ),
            Metric::lower("time_taken", "s", figure("Time taken for tests:")?),
            Metric::higher(
                "complete_requests",
                "requests",
                figure("Complete requests:")?,
            ),
            Metric::lower("failed_requests", "requests", figure("Failed requests:")?),
        ];
        let non_2xx = match after_label(stdout, "Non-2xx responses:") {
            Some(field) => leading_number(field, "ab's non-2xx responses")?,
            None => 0.0,
        };
        metrics.push(Metric::lower("non_2xx_responses", "responses", non_2xx));
        if let Some((_, table)) = stdout.split_once("Percentage of the requests served within") {
            for percent in SERVED_WITHIN {
                let ms = labelled_number(table, TOOL, percent)?;
                let name = format!("served_within_p{}", percent.trim_end_matches('%'));
                metrics.push(Metric::lower(name, "ms", ms));
            }
        }
        Ok(metrics)
    }
}

/// The two `Time per request:` lines: the mean, then the mean across all
/// concurrent requests.
fn times_per_request(stdout: &str) -> Result<(f64, f64), String> {
    let mut mean = None;
    let mut across = None;
    for line in stdout.lines() {
        let Some(field) = line.strip_prefix("Time per request:") else {
            continue;
        };
        let value = leading_number(field, "ab's time per request")?;
        if field.contains("across all concurrent requests") {
            across = Some(value);
        } else {
            mean = Some(value);
        }
    }
    match (mean, across) {
        (Some(mean), Some(across)) => Ok((mean, across)),
        _ => Err(
            "no pair of `Time per request:` lines (mean; across all concurrent requests) \
             in ab's output"
                .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn the_standard_report_gives_rates_times_and_the_served_within_table() {
        let metrics = ApacheBench
            .parse(include_str!("fixtures/ab.stdout"))
            .expect("ab's report");
        let mut expected = vec![
            "requests_per_sec",
            "time_per_request",
            "time_per_request_all_concurrent",
            "transfer_rate",
            "time_taken",
            "complete_requests",
            "failed_requests",
            "non_2xx_responses",
        ];
        let served: Vec<String> = SERVED_WITHIN
            .iter()
            .map(|p| format!("served_within_p{}", p.trim_end_matches('%')))
            .collect();
        expected.extend(served.iter().map(String::as_str));
        assert_eq!(names(&metrics), expected);
        assert_eq!(figure(&metrics, "requests_per_sec", "req/s"), 2667.69);
        assert_eq!(figure(&metrics, "time_per_request", "ms"), 1.499);
        assert_eq!(
            figure(&metrics, "time_per_request_all_concurrent", "ms"),
            0.375
        );
        assert_eq!(figure(&metrics, "transfer_rate", "MiB/s"), 5945.0 / 1024.0);
        assert_eq!(figure(&metrics, "time_taken", "s"), 0.75);
        assert_eq!(figure(&metrics, "served_within_p75", "ms"), 1.0);
        assert_eq!(figure(&metrics, "served_within_p99", "ms"), 12.0);
        assert_eq!(figure(&metrics, "served_within_p100", "ms"), 20.0);
    }

    #[test]
    fn length_failures_are_counted() {
        // Responses of varying length (nginx's `$connection_requests`),
        // which ab counts as failed against the first one's length.
        let metrics = ApacheBench
            .parse(include_str!("fixtures/ab-length-failures.stdout"))
            .expect("ab's report");
        let failed = metrics
            .iter()
            .find(|m| m.name == "failed_requests")
            .expect("failed_requests");
        assert_eq!(failed.value, 482.0);
        assert_eq!(failed.direction, crate::stats::Direction::Lower);
        assert_eq!(figure(&metrics, "requests_per_sec", "req/s"), 24768.42);
        assert_eq!(figure(&metrics, "complete_requests", "requests"), 500.0);
    }

    #[test]
    fn non_2xx_responses_are_counted() {
        let metrics = ApacheBench
            .parse(include_str!("fixtures/ab-non2xx.stdout"))
            .expect("ab's report");
        assert_eq!(figure(&metrics, "non_2xx_responses", "responses"), 500.0);
        assert_eq!(figure(&metrics, "failed_requests", "requests"), 0.0);
        assert_eq!(figure(&metrics, "requests_per_sec", "req/s"), 15707.96);
    }

    #[test]
    fn wrk_s_report_is_no_ab_report() {
        let err = ApacheBench
            .parse(include_str!("fixtures/wrk.stdout"))
            .unwrap_err();
        assert!(
            err.starts_with("no pair of `Time per request:` lines"),
            "{err}"
        );
    }
}

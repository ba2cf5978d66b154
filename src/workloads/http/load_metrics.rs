//! What a trial of any HTTP workload stores from one load: the rate,
//! the transfer, the latency percentiles, the errors, and in an open loop
//! the requested and achieved rates, written once for every workload
//! that runs the generator.

use crate::engine::Metric;
use crate::http::{ErrorCounts, LoadReport};

const MIB: f64 = 1024.0 * 1024.0;

/// The metrics every HTTP workload stores, the headline
/// (`requests_per_sec`) first. Latency counts from when each request was
/// due in an open loop (coordinated omission corrected), from when it was
/// sent in a closed one; an open loop adds the latency from the send too.
pub fn load_metrics(report: &LoadReport) -> Vec<Metric> {
    let l = &report.latency;
    let mut metrics = vec![
        Metric::higher("requests_per_sec", "req/s", report.requests_per_sec),
        Metric::higher("transfer", "MiB/s", report.bytes_per_sec / MIB),
        Metric::lower("latency_mean", "ms", l.mean_ms),
        Metric::lower("latency_p50", "ms", l.p50_ms),
        Metric::lower("latency_p90", "ms", l.p90_ms),
        Metric::lower("latency_p99", "ms", l.p99_ms),
        Metric::lower("latency_p99_9", "ms", l.p99_9_ms),
        Metric::lower("latency_max", "ms", l.max_ms),
        Metric::lower("errors", "requests", report.errors.total() as f64),
    ];
    if let Some(requested) = report.requested_rate {
        metrics.push(Metric::higher("requested_rate", "req/s", requested));
        metrics.push(Metric::higher(
            "achieved_rate",
            "req/s",
            report.achieved_rate,
        ));
        if let Some(sent) = &report.latency_from_send {
            metrics.push(Metric::lower("latency_from_send_mean", "ms", sent.mean_ms));
            metrics.push(Metric::lower("latency_from_send_p99", "ms", sent.p99_ms));
        }
        metrics.push(Metric::lower("late", "requests", report.late as f64));
        metrics.push(Metric::lower("dropped", "requests", report.dropped as f64));
        // httperf's test duration: the schedule's length plus the last
        // response.
        metrics.push(Metric::lower("duration", "s", report.seconds));
    }
    metrics
}

/// The errors by kind, every kind always (a count of 0 is a figure of the
/// trial too, and a kind missing from some trials would have fewer
/// samples than the others). They are the kinds `sledge http` prints:
/// a request that ended without a complete response (the connection
/// refused, reset or closed early, no response within the timeout, a
/// response that does not parse, another socket error), and a complete
/// response whose status is 4xx or 5xx (wrk's "Non-2xx or 3xx
/// responses": interim 1xx responses are skipped, never counted).
pub fn error_kind_metrics(errors: &ErrorCounts) -> Vec<Metric> {
    [
        ("errors_refused", errors.refused),
        ("errors_reset", errors.reset),
        ("errors_timeout", errors.timeout),
        ("errors_protocol", errors.protocol),
        ("errors_other", errors.other),
        ("errors_4xx", errors.status_4xx),
        ("errors_5xx", errors.status_5xx),
    ]
    .into_iter()
    .map(|(name, count)| Metric::lower(name, "requests", count as f64))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::tally::Tally;
    use crate::http::{LoadConfig, Rate, parse_targets};

    fn report(open: bool) -> LoadReport {
        let mut config = LoadConfig::closed(
            parse_targets(&["http://127.0.0.1:1/".to_string()]).unwrap(),
            4,
        );
        if open {
            config.rate = Some(Rate::Total(100.0));
        }
        let mut tally = Tally {
            sent: 12,
            bytes: 4 * MIB as u64,
            errors: ErrorCounts {
                timeout: 2,
                refused: 6,
                ..ErrorCounts::default()
            },
            ..Tally::default()
        };
        for (status, ms) in [(200, 1), (200, 3), (404, 5), (503, 7)] {
            tally.record_response(status, ms * 1_000_000, open.then_some(ms * 500_000));
        }
        LoadReport::from_tally(&config, tally, 2.0)
    }

    fn value(metrics: &[Metric], name: &str) -> f64 {
        metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn a_closed_loop_stores_its_rate_latency_and_errors() {
        let metrics = load_metrics(&report(false));
        assert_eq!(metrics[0].name, "requests_per_sec");
        assert_eq!(metrics[0].value, 2.0, "4 responses in 2 s");
        assert_eq!(value(&metrics, "transfer"), 2.0);
        // HdrHistogram keeps three significant digits.
        let mean = value(&metrics, "latency_mean");
        assert!((mean - 4.0).abs() < 0.01, "{mean}");
        // 2 without a response, 1 4xx and 1 5xx.
        assert_eq!(value(&metrics, "errors"), 10.0);
        assert!(!metrics.iter().any(|m| m.name == "requested_rate"));
    }

    #[test]
    fn an_open_loop_adds_its_rates_and_the_latency_from_the_send() {
        let metrics = load_metrics(&report(true));
        assert_eq!(value(&metrics, "requested_rate"), 100.0);
        assert_eq!(value(&metrics, "achieved_rate"), 6.0, "12 sent in 2 s");
        let from_send = value(&metrics, "latency_from_send_mean");
        assert!((from_send - 2.0).abs() < 0.01, "{from_send}");
        assert_eq!(value(&metrics, "duration"), 2.0);
    }

    #[test]
    fn every_error_kind_is_stored_zero_or_not() {
        let metrics = error_kind_metrics(&report(false).errors);
        let counts: Vec<(&str, f64)> = metrics.iter().map(|m| (m.name.as_str(), m.value)).collect();
        assert_eq!(
            counts,
            [
                ("errors_refused", 6.0),
                ("errors_reset", 0.0),
                ("errors_timeout", 2.0),
                ("errors_protocol", 0.0),
                ("errors_other", 0.0),
                ("errors_4xx", 1.0),
                ("errors_5xx", 1.0),
            ]
        );
    }
}

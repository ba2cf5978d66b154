//! wrk's report.
//!
//! `requests_per_sec` (req/s, `Requests/sec:`) first, `transfer_per_sec`
//! (`Transfer/sec:`, in MiB/s: wrk's `KB`, `MB`, `GB` are powers of 1024,
//! its `format_binary` in `units.c`), `requests` (completed), the
//! `Latency` row's `latency_avg`, `latency_stdev` and `latency_max`, and
//! with `--latency` its distribution's `latency_p50`, `latency_p75`,
//! `latency_p90` and `latency_p99`, every time in ms (wrk writes `us`,
//! `ms`, `s`, and `m` and `h` past a minute).
//!
//! Errors, lower is better, stored as 0 when wrk prints no line for them
//! (it prints one only when one is non-zero) so that every trial of a case
//! has the same metrics: `socket_errors_connect`, `socket_errors_read`,
//! `socket_errors_write`, `socket_errors_timeout` (`Socket errors:`) and
//! `non_2xx_3xx_responses` (`Non-2xx or 3xx responses:`).

use super::figures::{after_label, labelled_number, leading_number, number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// wrk's report.
pub struct Wrk;

const TOOL: &str = "wrk";

/// The percentiles of `--latency`'s distribution, as wrk labels them.
const PERCENTILES: [&str; 4] = ["50%", "75%", "90%", "99%"];

const SOCKET_ERRORS: [&str; 4] = ["connect", "read", "write", "timeout"];

impl ToolParser for Wrk {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn programs(&self) -> &'static [&'static str] {
        &["wrk"]
    }

    fn needs(&self) -> &'static str {
        "its standard report (--latency adds the percentiles)"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let requests_per_sec = labelled_number(stdout, TOOL, "Requests/sec:")?;
        let transfer = after_label(stdout, "Transfer/sec:")
            .ok_or("no `Transfer/sec:` line in wrk's output")?;
        let mut metrics = vec![
            Metric::higher("requests_per_sec", "req/s", requests_per_sec),
            Metric::higher("transfer_per_sec", "MiB/s", mebibytes(transfer)?),
            Metric::higher("requests", "requests", completed_requests(stdout)?),
        ];
        let latency =
            after_label(stdout, "Latency ").ok_or("no `Latency` row in wrk's `Thread Stats`")?;
        let columns: Vec<&str> = latency.split_whitespace().collect();
        for (column, name) in ["latency_avg", "latency_stdev", "latency_max"]
            .into_iter()
            .enumerate()
        {
            let field = columns.get(column).copied().unwrap_or("");
            metrics.push(Metric::lower(name, "ms", milliseconds(field)?));
        }
        if let Some((_, distribution)) = stdout.split_once("Latency Distribution") {
            for percent in PERCENTILES {
                let field = after_label(distribution, percent).ok_or_else(|| {
                    format!("no `{percent}` line in wrk's `Latency Distribution`")
                })?;
                let name = format!("latency_p{}", percent.trim_end_matches('%'));
                metrics.push(Metric::lower(name, "ms", milliseconds(field)?));
            }
        }
        let socket_errors = socket_errors(stdout)?;
        for (kind, count) in SOCKET_ERRORS.iter().zip(socket_errors) {
            metrics.push(Metric::lower(
                format!("socket_errors_{kind}"),
                "errors",
                count,
            ));
        }
        let non_2xx = match after_label(stdout, "Non-2xx or 3xx responses:") {
            Some(field) => leading_number(field, "wrk's non-2xx or 3xx responses")?,
            None => 0.0,
        };
        metrics.push(Metric::lower("non_2xx_3xx_responses", "responses", non_2xx));
        Ok(metrics)
    }
}

/// `39186 requests in 1.00s, 85.47MB read`.
fn completed_requests(stdout: &str) -> Result<f64, String> {
    let line = stdout
        .lines()
        .find(|line| line.contains(" requests in "))
        .ok_or("no `N requests in T, S read` line in wrk's output")?;
    leading_number(line, "wrk's completed requests")
}

/// `Socket errors: connect 0, read 14532, write 0, timeout 0`, all zero
/// where wrk printed no such line.
fn socket_errors(stdout: &str) -> Result<[f64; 4], String> {
    let mut counts = [0.0; 4];
    let Some(field) = after_label(stdout, "Socket errors:") else {
        return Ok(counts);
    };
    for part in field.split(',') {
        let (kind, count) = part
            .trim()
            .split_once(' ')
            .ok_or_else(|| format!("wrk's socket errors `{field}`"))?;
        let slot = SOCKET_ERRORS
            .iter()
            .position(|known| *known == kind)
            .ok_or_else(|| {
                format!("wrk's socket errors name `{kind}`, not one of {SOCKET_ERRORS:?}")
            })?;
        counts[slot] = leading_number(count, "wrk's socket errors")?;
    }
    Ok(counts)
}

/// The first word of `field`, and its number and unit (`1.23`, `ms` of
/// `1.23ms`): wrk writes them together.
fn number_and_unit(field: &str) -> (&str, &str, &str) {
    let token = field.split_whitespace().next().unwrap_or("");
    let split = token
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(token.len());
    let (digits, unit) = token.split_at(split);
    (token, digits, unit)
}

/// A time as wrk prints it (`456.78us`, `1.23ms`, `1.20s`, `2.00m`), in ms.
fn milliseconds(field: &str) -> Result<f64, String> {
    let (token, digits, unit) = number_and_unit(field);
    let scale = match unit {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        "h" => 3600e3,
        _ => {
            return Err(format!(
                "wrk's time `{token}`: expected a number with us, ms, s, m or h"
            ));
        }
    };
    number(digits)
        .map(|value| value * scale)
        .ok_or_else(|| format!("wrk's time `{token}` is no number"))
}

/// A size per second as wrk prints it (`85.37MB`, `0.00B`), in MiB.
fn mebibytes(field: &str) -> Result<f64, String> {
    let (token, digits, unit) = number_and_unit(field);
    let power = match unit {
        "B" => -2,
        "KB" => -1,
        "MB" => 0,
        "GB" => 1,
        "TB" => 2,
        "PB" => 3,
        _ => {
            return Err(format!(
                "wrk's size `{token}`: expected a number with B, KB, MB, GB, TB or PB"
            ));
        }
    };
    number(digits)
        .map(|value| value * 1024f64.powi(power))
        .ok_or_else(|| format!("wrk's size `{token}` is no number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn the_standard_report_gives_rates_latencies_and_zero_errors() {
        let metrics = Wrk
            .parse(include_str!("fixtures/wrk.stdout"))
            .expect("wrk's report");
        assert_eq!(
            names(&metrics),
            [
                "requests_per_sec",
                "transfer_per_sec",
                "requests",
                "latency_avg",
                "latency_stdev",
                "latency_max",
                "socket_errors_connect",
                "socket_errors_read",
                "socket_errors_write",
                "socket_errors_timeout",
                "non_2xx_3xx_responses"
            ]
        );
        assert_eq!(figure(&metrics, "requests_per_sec", "req/s"), 39140.17);
        assert_eq!(figure(&metrics, "transfer_per_sec", "MiB/s"), 85.37);
        assert_eq!(figure(&metrics, "requests", "requests"), 39186.0);
        assert_eq!(figure(&metrics, "latency_avg", "ms"), 0.86);
        assert_eq!(figure(&metrics, "latency_stdev", "ms"), 1.91);
        assert_eq!(figure(&metrics, "latency_max", "ms"), 15.38);
        assert_eq!(figure(&metrics, "non_2xx_3xx_responses", "responses"), 0.0);
    }

    #[test]
    fn latency_distribution_in_microseconds_and_milliseconds_and_non_2xx() {
        let metrics = Wrk
            .parse(include_str!("fixtures/wrk-latency-non2xx.stdout"))
            .expect("wrk's report");
        assert_eq!(figure(&metrics, "latency_p50", "ms"), 141.0 * 1e-3);
        assert_eq!(figure(&metrics, "latency_p75", "ms"), 3.53);
        assert_eq!(figure(&metrics, "latency_p90", "ms"), 8.04);
        assert_eq!(figure(&metrics, "latency_p99", "ms"), 15.81);
        assert_eq!(
            figure(&metrics, "non_2xx_3xx_responses", "responses"),
            21569.0
        );
        assert_eq!(figure(&metrics, "transfer_per_sec", "MiB/s"), 6.31);
    }

    #[test]
    fn read_errors_of_a_server_that_drops_connections_are_counted() {
        // nginx's `return 444` closes every connection unanswered.
        let metrics = Wrk
            .parse(include_str!("fixtures/wrk-latency-socket-errors.stdout"))
            .expect("wrk's report");
        assert_eq!(figure(&metrics, "socket_errors_read", "errors"), 14532.0);
        assert_eq!(figure(&metrics, "socket_errors_connect", "errors"), 0.0);
        assert_eq!(figure(&metrics, "requests_per_sec", "req/s"), 0.0);
        assert_eq!(figure(&metrics, "transfer_per_sec", "MiB/s"), 0.0);
        assert_eq!(figure(&metrics, "latency_p99", "ms"), 0.0);
    }

    #[test]
    fn wrk_s_units_convert_as_its_units_c_defines_them() {
        assert_eq!(milliseconds("1.20s"), Ok(1200.0));
        assert_eq!(milliseconds("2.00m"), Ok(120e3));
        assert_eq!(mebibytes("512.00KB"), Ok(0.5));
        assert_eq!(mebibytes("1.50GB"), Ok(1536.0));
        assert!(
            milliseconds("3.0xs")
                .unwrap_err()
                .contains("expected a number with us")
        );
    }

    #[test]
    fn ab_s_report_is_no_wrk_report() {
        let err = Wrk.parse(include_str!("fixtures/ab.stdout")).unwrap_err();
        assert_eq!(err, "no `Requests/sec:` line in wrk's output");
    }
}

//! iperf3's JSON report (`iperf3 -c HOST -J`).
//!
//! `receiver_bitrate` first (what arrived, in Mbit/s: iperf3's
//! `bits_per_second` over 10^6, the unit its text report uses), then
//! `sender_bitrate` (Mbit/s); over TCP `retransmits` (the sender's, where
//! the kernel reports them), over UDP (`-u`) `jitter_ms` (ms),
//! `lost_percent` (%) and `lost_packets`, all lower is better; then
//! `cpu_host_total` and `cpu_remote_total` (% CPU of the client and the
//! server, lower is better for the same traffic). All from the report's
//! `end` section: its `sum_sent` and `sum_received`, which sum the
//! parallel streams of `-P`.
//!
//! An iperf3 that failed prints a JSON report with an `error`: its text
//! is the parse error.

use serde_json::{Map, Value};

use super::json_report::{first_object, number_at};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// iperf3's `-J`.
pub struct Iperf3;

const TOOL: &str = "iperf3";

const BITS_PER_MBIT: f64 = 1e6;

impl ToolParser for Iperf3 {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn programs(&self) -> &'static [&'static str] {
        &["iperf3"]
    }

    fn needs(&self) -> &'static str {
        "-J (--json), run as the client (-c)"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let report = first_object(stdout, TOOL)?;
        if let Some(error) = report.get("error") {
            let text = error
                .as_str()
                .map_or_else(|| error.to_string(), String::from);
            return Err(format!("iperf3 reported an error: {text}"));
        }
        let end = report
            .get("end")
            .ok_or("iperf3's JSON has no `end` section")?;
        let udp = is_udp(&report);
        // iperf3 before 3.8 gives UDP's figures in `end.sum` alone.
        let received = if udp && end.get("sum_received").is_none() {
            "/sum"
        } else {
            "/sum_received"
        };
        let sent = if udp && end.get("sum_sent").is_none() {
            "/sum"
        } else {
            "/sum_sent"
        };
        let field = |pointer: &str| number_at(end, pointer, TOOL);
        let mut metrics = vec![
            Metric::higher(
                "receiver_bitrate",
                "Mbit/s",
                field(&format!("{received}/bits_per_second"))? / BITS_PER_MBIT,
            ),
            Metric::higher(
                "sender_bitrate",
                "Mbit/s",
                field(&format!("{sent}/bits_per_second"))? / BITS_PER_MBIT,
            ),
        ];
        if udp {
            // The receiver measures jitter and loss; `sum_sent` has zeros.
            metrics.push(Metric::lower(
                "jitter_ms",
                "ms",
                field(&format!("{received}/jitter_ms"))?,
            ));
            metrics.push(Metric::lower(
                "lost_percent",
                "%",
                field(&format!("{received}/lost_percent"))?,
            ));
            metrics.push(Metric::lower(
                "lost_packets",
                "packets",
                field(&format!("{received}/lost_packets"))?,
            ));
        } else if let Some(retransmits) = end.pointer("/sum_sent/retransmits") {
            // Absent where the kernel gives no TCP_INFO (not Linux).
            let count = retransmits
                .as_f64()
                .ok_or("iperf3's `end.sum_sent.retransmits` is no number")?;
            metrics.push(Metric::lower("retransmits", "segments", count));
        }
        metrics.push(Metric::lower(
            "cpu_host_total",
            "%",
            field("/cpu_utilization_percent/host_total")?,
        ));
        metrics.push(Metric::lower(
            "cpu_remote_total",
            "%",
            field("/cpu_utilization_percent/remote_total")?,
        ));
        Ok(metrics)
    }
}

/// Whether the test ran over UDP, as its `start.test_start.protocol` says.
fn is_udp(report: &Map<String, Value>) -> bool {
    report
        .get("start")
        .and_then(|start| start.pointer("/test_start/protocol"))
        .and_then(Value::as_str)
        == Some("UDP")
}

#[cfg(test)]
// The figures are written as iperf3 printed them, digit for digit.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn a_report_cut_in_half_says_it_ends_early() {
        let whole = include_str!("fixtures/iperf3-tcp.stdout");
        let err = Iperf3.parse(&whole[..whole.len() / 2]).unwrap_err();
        assert!(
            err.starts_with("iperf3's JSON ends early at line "),
            "{err}"
        );
    }

    #[test]
    fn tcp_gives_both_bitrates_retransmits_and_cpu() {
        let metrics = Iperf3
            .parse(include_str!("fixtures/iperf3-tcp.stdout"))
            .expect("iperf3's report");
        assert_eq!(
            names(&metrics),
            [
                "receiver_bitrate",
                "sender_bitrate",
                "retransmits",
                "cpu_host_total",
                "cpu_remote_total"
            ]
        );
        assert_eq!(
            figure(&metrics, "receiver_bitrate", "Mbit/s"),
            16015372374.425592 / 1e6
        );
        assert_eq!(
            figure(&metrics, "sender_bitrate", "Mbit/s"),
            16091420121.560749 / 1e6
        );
        assert_eq!(figure(&metrics, "retransmits", "segments"), 16.0);
        assert_eq!(figure(&metrics, "cpu_host_total", "%"), 22.012402385424473);
        assert_eq!(
            figure(&metrics, "cpu_remote_total", "%"),
            39.419424850786761
        );
    }

    #[test]
    fn udp_gives_the_receiver_s_jitter_and_loss() {
        let metrics = Iperf3
            .parse(include_str!("fixtures/iperf3-udp.stdout"))
            .expect("iperf3's report");
        assert_eq!(
            names(&metrics),
            [
                "receiver_bitrate",
                "sender_bitrate",
                "jitter_ms",
                "lost_percent",
                "lost_packets",
                "cpu_host_total",
                "cpu_remote_total"
            ]
        );
        assert_eq!(
            figure(&metrics, "receiver_bitrate", "Mbit/s"),
            100124690.16930579 / 1e6
        );
        assert_eq!(figure(&metrics, "jitter_ms", "ms"), 0.00452009141361664);
        assert_eq!(figure(&metrics, "lost_percent", "%"), 0.0);
        assert_eq!(figure(&metrics, "cpu_host_total", "%"), 3.1536428931275973);
    }

    #[test]
    fn udp_figures_only_in_end_sum_as_before_iperf3_3_8_are_read_there() {
        let mut report: Value =
            serde_json::from_str(include_str!("fixtures/iperf3-udp.stdout")).expect("JSON");
        let end = report["end"].as_object_mut().expect("end");
        end.remove("sum_sent");
        end.remove("sum_received");
        let metrics = Iperf3.parse(&report.to_string()).expect("iperf3's report");
        assert_eq!(
            figure(&metrics, "receiver_bitrate", "Mbit/s"),
            100130496.90776286 / 1e6
        );
        assert_eq!(figure(&metrics, "jitter_ms", "ms"), 0.00452009141361664);
    }

    #[test]
    fn a_refused_connection_is_iperf3_s_own_error() {
        let err = Iperf3
            .parse(include_str!("fixtures/iperf3-refused.stdout"))
            .unwrap_err();
        assert_eq!(
            err,
            "iperf3 reported an error: unable to connect to server: Connection refused"
        );
    }
}

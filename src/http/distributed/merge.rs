//! What several client hosts measured, and their exact sum.
//!
//! Percentiles do not average: the mean of three hosts' p99 is not the
//! p99 of their requests. Each host sends its raw histograms, and the
//! merged figures come from the histograms added count for count and the
//! counters summed, as if one generator had seen every request.

use serde::Serialize;

use super::clock_offset::ClockOffset;
use crate::http::tally::Tally;
use crate::http::{LoadConfig, LoadReport, Rate};

/// One client host's part of a load.
#[derive(Debug, Serialize)]
pub struct HostLoad {
    /// The host as given (`user@host`).
    pub host: String,
    /// Its clock against the coordinator's, once measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockOffset>,
    /// How long after the agreed instant its load started, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_late_s: Option<f64>,
    /// What it measured; `None` when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<LoadReport>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// A load from several client hosts. Also the `--json` shape of
/// `sledge http --from`.
#[derive(Debug, Serialize)]
pub struct DistributedReport {
    /// Each host's part, in the order given.
    pub hosts: Vec<HostLoad>,
    /// The hosts that finished, merged exactly; `None` if none did.
    pub merged: Option<LoadReport>,
    /// Hosts that failed (their load is not in `merged`).
    pub failed_hosts: usize,
    /// The load was stopped early (Ctrl-C).
    pub interrupted: bool,
}

/// The exact sum of `parts`: counters added, histograms added, the time
/// the longest part's (they all started at one instant).
pub fn merge(parts: &[&LoadReport]) -> Option<LoadReport> {
    let first = parts.first()?;
    let mut tally = Tally::default();
    for part in parts {
        tally.merge(&part.tally);
    }
    let seconds = parts.iter().map(|p| p.seconds).fold(0.0, f64::max);
    let connections = parts.iter().map(|p| p.connections).sum();
    let shape = LoadConfig {
        threads: parts.iter().map(|p| p.threads).sum(),
        keep_alive: first.keep_alive,
        rate: first
            .requested_rate
            .map(|_| Rate::Total(parts.iter().filter_map(|p| p.requested_rate).sum())),
        ..LoadConfig::closed(Vec::new(), connections)
    };
    Some(LoadReport::from_tally(&shape, tally, seconds))
}

#[cfg(test)]
mod tests {
    use super::super::protocol::AgentResult;
    use super::*;

    /// A host's report with the given latencies (µs), sent over the wire
    /// and read back as the coordinator does.
    fn host_report(latencies_us: &[u64], seconds: f64) -> LoadReport {
        let mut tally = Tally::default();
        for &us in latencies_us {
            tally.sent += 1;
            tally.record_response(200, us * 1000, None);
        }
        tally.bytes = 100 * latencies_us.len() as u64;
        let wire = AgentResult::of(&tally, seconds, 0.0, 1, false).unwrap();
        let line = serde_json::to_string(&wire).unwrap();
        let back: AgentResult = serde_json::from_str(&line).unwrap();
        LoadReport::from_tally(
            &LoadConfig::closed(Vec::new(), 2),
            back.tally().unwrap(),
            seconds,
        )
    }

    #[test]
    fn the_merged_p99_is_the_p99_of_all_latencies_together() {
        // Three hosts far apart: a fast one, a slow one and one in between,
        // with different request counts.
        let fast: Vec<u64> = (1..=3000).map(|i| 100 + i % 400).collect();
        let middle: Vec<u64> = (1..=1000).map(|i| 2_000 + i).collect();
        let slow: Vec<u64> = (1..=500).map(|i| 40_000 + 10 * i).collect();
        let parts = [
            host_report(&fast, 2.0),
            host_report(&middle, 2.1),
            host_report(&slow, 1.9),
        ];
        let merged = merge(&parts.iter().collect::<Vec<_>>()).unwrap();

        // One histogram of every latency, recorded in one place.
        let mut all = Tally::default();
        let everything: Vec<u64> = [&fast[..], &middle[..], &slow[..]].concat();
        for &us in &everything {
            all.record_response(200, us * 1000, None);
        }
        assert_eq!(merged.tally.latency, all.latency, "count for count");
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                merged.tally.latency.value_at_quantile(q),
                all.latency.value_at_quantile(q),
                "quantile {q}"
            );
        }
        assert_eq!(
            merged.latency.p99_ms,
            crate::http::LatencySummary::of(&all.latency).p99_ms
        );

        // And against the sorted latencies themselves: the 99th percentile
        // of 4,500 requests is the 4,455th, which is a slow host's.
        let mut sorted = everything.clone();
        sorted.sort_unstable();
        let exact_us = sorted[(0.99 * sorted.len() as f64).ceil() as usize - 1];
        let merged_us = merged.latency.p99_ms * 1000.0;
        assert!(
            (merged_us - exact_us as f64).abs() <= exact_us as f64 * 1e-3,
            "merged p99 {merged_us} µs, exact {exact_us} µs"
        );
        // Averaging the hosts' p99 would be far off.
        let averaged = parts.iter().map(|p| p.latency.p99_ms).sum::<f64>() / 3.0;
        assert!((averaged * 1000.0 - exact_us as f64).abs() > 10_000.0);

        // Counters are sums; the time is the longest host's.
        assert_eq!(merged.responses, 4500);
        assert_eq!(
            merged.responses,
            parts.iter().map(|p| p.responses).sum::<u64>()
        );
        assert_eq!(merged.sent, 4500);
        assert_eq!(merged.bytes, 450_000);
        assert_eq!(merged.connections, 6);
        assert_eq!(merged.seconds, 2.1);
        assert_eq!(merged.latency.count, 4500);
    }

    #[test]
    fn an_open_loop_merges_its_requested_rates() {
        let mut parts = [host_report(&[100, 200], 1.0), host_report(&[300], 1.0)];
        for p in &mut parts {
            p.requested_rate = Some(10.0);
        }
        let merged = merge(&parts.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(merged.requested_rate, Some(20.0));
        assert_eq!(merged.mode, "open");
        assert!(merge(&[]).is_none());
    }
}

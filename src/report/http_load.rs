//! The text and the JSON of an ad-hoc HTTP load (`sledge http`), from
//! this host or from several client hosts merged (`--from`), and the
//! reasons a load counts as failed.

use std::fmt::Write as _;

use crate::http::distributed::DistributedReport;
use crate::http::{self, LoadReport};
use crate::visible;

/// Why a run counts as failed: not one request got a complete response
/// with a status below 400 (a server that is down, silent, or answers
/// only errors). `None` when at least one succeeded. Every request sent
/// is counted once: a complete response, an error without one, or still
/// waiting when the run ended.
pub fn nothing_succeeded(r: &LoadReport) -> Option<String> {
    let e = &r.errors;
    let succeeded = r.responses - e.status_4xx - e.status_5xx;
    (succeeded == 0).then(|| {
        format!(
            "no request succeeded: {} sent, {} complete responses ({} 4xx, {} 5xx), {} without a response (refused {}, reset {}, timeout {}, protocol {}, other {}, still waiting when the run ended {})",
            r.sent,
            r.responses,
            e.status_4xx,
            e.status_5xx,
            e.without_response() + r.unanswered,
            e.refused,
            e.reset,
            e.timeout,
            e.protocol,
            e.other,
            r.unanswered
        )
    })
}

/// One load as `sledge http` shows it: the report with the URLs it ran
/// against, the generator's peak memory and whether Ctrl-C cut it short.
pub struct LoadShown<'a> {
    /// The URLs, as given.
    pub urls: &'a [String],
    /// What the load measured.
    pub report: &'a LoadReport,
    /// The generator's peak resident set, bytes, where known.
    pub peak_rss: Option<u64>,
    /// Whether Ctrl-C ended the load early.
    pub interrupted: bool,
}

impl LoadShown<'_> {
    /// The text `sledge http` prints ([`format_report`]), with a last line
    /// when the figures cover only the part before Ctrl-C.
    pub fn text(&self) -> String {
        let mut text = format_report(self.urls, self.report, self.peak_rss);
        if self.interrupted {
            let _ = writeln!(
                text,
                "interrupted (Ctrl-C): these figures cover the first {:.3} s only",
                self.report.seconds
            );
        }
        text
    }

    /// The JSON `sledge http --json` prints: the report's fields, with
    /// `urls`, `peak_rss_bytes` and `interrupted` beside them.
    pub fn json(&self) -> serde_json::Result<String> {
        json_with_urls(self.report, self.urls, |value| {
            value["peak_rss_bytes"] = serde_json::json!(self.peak_rss);
            value["interrupted"] = serde_json::json!(self.interrupted);
        })
    }
}

/// The figures of one load, as `sledge http` prints them: the URLs, the
/// set-up, throughput, latency percentiles, errors, and the generator's
/// own load and memory where known.
pub fn format_report(urls: &[String], r: &LoadReport, peak_rss: Option<u64>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} URL(s): {}", urls.len(), urls.join(" "));
    let _ = writeln!(
        s,
        "{} loop, {} connection(s), {} thread(s), keep-alive {}",
        r.mode,
        r.connections,
        r.threads,
        if r.keep_alive { "on" } else { "off" }
    );
    let unanswered = if r.unanswered > 0 {
        format!(", {} still waiting when the run ended", r.unanswered)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{} responses in {:.3} s ({} sent{unanswered}), {:.1} MiB read",
        r.responses,
        r.seconds,
        r.sent,
        r.bytes as f64 / 1048576.0
    );
    let _ = writeln!(s, "  requests/s    {:>12.1}", r.requests_per_sec);
    let _ = writeln!(
        s,
        "  transfer      {:>12.2} MiB/s",
        r.bytes_per_sec / 1048576.0
    );
    if let Some(requested) = r.requested_rate {
        let _ = writeln!(
            s,
            "  rate          {:>12.1} requested, {:.1} achieved (req/s); {} late, {} dropped",
            requested, r.achieved_rate, r.late, r.dropped
        );
        if server_set_the_pace(r) {
            let busy = r
                .generator_busy
                .map_or("its busy share unknown".to_string(), |b| {
                    format!("{:.0}% busy", b * 100.0)
                });
            let _ = writeln!(
                s,
                "  behind        {:.1}% of the requested rate was sent: the server's responses set the pace, not the generator ({busy})",
                100.0 * r.achieved_rate / requested
            );
            let _ = writeln!(
                s,
                "                every connection was waiting on a response when {} requests fell due; more connections (-c) show whether the server has capacity left",
                r.late
            );
        }
    }
    let _ = writeln!(
        s,
        "  {:<12}{:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "(ms)", "mean", "p50", "p90", "p99", "p99.9", "max", "n"
    );
    let mut row = |name: &str, l: &http::LatencySummary| {
        let _ = writeln!(
            s,
            "  {:<12}{:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10}",
            name, l.mean_ms, l.p50_ms, l.p90_ms, l.p99_ms, l.p99_9_ms, l.max_ms, l.count
        );
    };
    if let Some(sent) = &r.latency_from_send {
        row("latency/due", &r.latency);
        row("latency/sent", sent);
    } else {
        row("latency", &r.latency);
    }
    row("connect", &r.connect);
    let e = &r.errors;
    let _ = writeln!(s, "  errors        {:>12} ({})", e.total(), e.by_kind());
    if let Some(busy) = r.generator_busy {
        let _ = writeln!(
            s,
            "  generator     {:>11.0}% busy{}",
            busy * 100.0,
            if r.generator_bound {
                ": the generator may have set the rate, not the server (add threads, or connections with --rate)"
            } else {
                ""
            }
        );
    }
    if let Some(rss) = peak_rss {
        let _ = writeln!(s, "  peak RSS      {:>12.1} MiB", rss as f64 / 1048576.0);
    }
    s
}

/// Open loop: under 99% of the requested rate went out, requests waited
/// for a free connection, and the generator was not busy enough to have
/// been the cause. Then its connections were all waiting on the server:
/// the server's response times, not the generator, set the rate. (A busy
/// generator is said apart, by `generator_bound`.)
fn server_set_the_pace(r: &LoadReport) -> bool {
    r.requested_rate
        .is_some_and(|requested| r.achieved_rate < 0.99 * requested)
        && r.late > 0
        && !r.generator_bound
}

/// One load from several client hosts as `sledge http --from` shows it:
/// each host's report and the merged one, with the URLs they ran against.
pub struct HostsShown<'a> {
    /// The URLs, as given.
    pub urls: &'a [String],
    /// What every host measured, and the merge.
    pub report: &'a DistributedReport,
}

impl HostsShown<'_> {
    /// The text `sledge http --from` prints ([`format_hosts`]).
    pub fn text(&self) -> String {
        format_hosts(self.urls, self.report)
    }

    /// The JSON `sledge http --from --json` prints: the merged report's
    /// fields (each host's among them), with `urls` beside them.
    pub fn json(&self) -> serde_json::Result<String> {
        json_with_urls(self.report, self.urls, |_| {})
    }
}

/// Why a load from several client hosts counts as failed, a line each:
/// every client host that failed and how many did (the merged figures
/// then cover the others only), else that no request succeeded on any.
/// Empty when the load succeeded. A host's reason may quote its agent, so
/// it is escaped.
pub fn hosts_failures(r: &DistributedReport) -> Vec<String> {
    let mut lines: Vec<String> = r
        .hosts
        .iter()
        .filter_map(|host| {
            let why = host.failure.as_ref()?;
            Some(format!(
                "client host {}: {}",
                host.host,
                visible::escape(why)
            ))
        })
        .collect();
    if !lines.is_empty() {
        lines.push(format!(
            "{} of {} client hosts failed; the merged figures cover the others only",
            r.failed_hosts,
            r.hosts.len()
        ));
        return lines;
    }
    r.merged
        .as_ref()
        .and_then(nothing_succeeded)
        .into_iter()
        .collect()
}

/// `report`'s fields as indented JSON with a final newline, `urls` beside
/// them and whatever `more` adds.
fn json_with_urls(
    report: &impl serde::Serialize,
    urls: &[String],
    more: impl FnOnce(&mut serde_json::Value),
) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(report)?;
    value["urls"] = serde_json::json!(urls);
    more(&mut value);
    Ok(serde_json::to_string_pretty(&value)? + "\n")
}

/// One line per host (its clock, its start, its own figures), then the
/// merged report.
pub fn format_hosts(urls: &[String], r: &DistributedReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} client host(s), started together; clock offset to this host (± half the round trip)",
        r.hosts.len()
    );
    let _ = writeln!(
        s,
        "  {:<24} {:>20} {:>9} {:>11} {:>11} {:>9} {:>7}",
        "host", "clock offset ms", "late ms", "responses", "requests/s", "p99 ms", "errors"
    );
    for h in &r.hosts {
        let clock = h.clock.map_or_else(
            || "-".to_string(),
            |c| {
                format!(
                    "{:+.3} ± {:.3}",
                    c.offset_ns as f64 / 1e6,
                    c.round_trip_ns as f64 / 2e6
                )
            },
        );
        match (&h.report, &h.failure) {
            (Some(l), _) => {
                let _ = writeln!(
                    s,
                    "  {:<24} {:>20} {:>9.1} {:>11} {:>11.1} {:>9.3} {:>7}",
                    h.host,
                    clock,
                    h.started_late_s.unwrap_or(0.0) * 1e3,
                    l.responses,
                    l.requests_per_sec,
                    l.latency.p99_ms,
                    l.errors.total()
                );
            }
            (None, why) => {
                let _ = writeln!(
                    s,
                    "  {:<24} {:>20} failed: {}",
                    h.host,
                    clock,
                    visible::escape(why.as_deref().unwrap_or("no result"))
                );
            }
        }
    }
    match &r.merged {
        Some(merged) => {
            let finished = r.hosts.len() - r.failed_hosts;
            let _ = writeln!(
                s,
                "merged over {finished} host(s): counters summed, histograms added (exact percentiles)"
            );
            s.push_str(&format_report(urls, merged, None));
        }
        None => {
            let _ = writeln!(s, "no host finished: nothing to merge");
        }
    }
    if r.interrupted {
        let _ = writeln!(
            s,
            "interrupted (Ctrl-C): these figures cover the load until the stop"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::distributed::HostLoad;
    use crate::http::tally::Tally;
    use crate::http::{LoadConfig, Rate};

    /// An open loop at 1,000 requests/s over 1 s that sent `sent`, of which
    /// `late` waited for a connection, its thread busy `busy` of the time.
    fn open_loop(sent: u64, late: u64, busy: f64) -> LoadReport {
        let mut config = LoadConfig::closed(Vec::new(), 10);
        config.rate = Some(Rate::Total(1000.0));
        let mut tally = Tally::default();
        for _ in 0..sent {
            tally.sent += 1;
            tally.record_response(200, 1_000_000, Some(500_000));
        }
        tally.late = late;
        tally.wall_ns = 1_000_000_000;
        tally.busy_ns = (busy * 1e9) as u64;
        LoadReport::from_tally(&config, tally, 1.0)
    }

    /// A shortfall with an idle generator is put on the server; one with a
    /// busy generator, or none, is not.
    #[test]
    fn a_shortfall_is_put_on_the_server_only_when_the_generator_was_idle() {
        let urls = ["http://127.0.0.1:1/".to_string()];
        let behind = format_report(&urls, &open_loop(800, 300, 0.4), None);
        assert!(behind.contains("  behind        80.0% of the requested rate was sent: the server's responses set the pace, not the generator (40% busy)"), "{behind}");
        assert!(
            behind
                .contains("every connection was waiting on a response when 300 requests fell due"),
            "{behind}"
        );
        let busy = format_report(&urls, &open_loop(800, 300, 0.95), None);
        assert!(!busy.contains("behind"), "{busy}");
        assert!(
            busy.contains("the generator may have set the rate"),
            "{busy}"
        );
        let on_time = format_report(&urls, &open_loop(1000, 0, 0.4), None);
        assert!(!on_time.contains("behind"), "{on_time}");
    }

    /// A host's failure may quote what its agent said: its control
    /// characters are shown escaped.
    #[test]
    fn a_hosts_failure_is_shown_escaped() {
        let report = DistributedReport {
            hosts: vec![HostLoad {
                host: "root@c1".into(),
                clock: None,
                started_late_s: None,
                report: None,
                failure: Some("its agent said \x1b]0;t\x07\x08\u{2066}".into()),
            }],
            merged: None,
            failed_hosts: 1,
            interrupted: false,
        };
        let text = format_hosts(&["http://10.0.0.1/".into()], &report);
        assert!(
            text.contains("its agent said \\x1b]0;t\\x07\\x08\\u{2066}"),
            "{text}"
        );
        assert!(
            !text.contains(['\x1b', '\x07', '\x08', '\u{2066}']),
            "{text:?}"
        );
    }
}

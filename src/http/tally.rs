//! What one generator thread counted, and how threads' counts merge.
//!
//! Everything a run reports is a counter or an HdrHistogram, so memory
//! stays the same whatever the number of requests, and the threads'
//! tallies merge exactly once at the end.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Requests that failed, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// The server refused the connection (nothing listening).
    pub refused: u64,
    /// The connection was reset or closed before the response was complete.
    pub reset: u64,
    /// No complete response within the timeout (connects included).
    pub timeout: u64,
    /// The response could not be parsed.
    pub protocol: u64,
    /// Other socket errors (unreachable network, out of ports, ...).
    pub other: u64,
    /// Complete responses with a 4xx status.
    pub status_4xx: u64,
    /// Complete responses with a 5xx status.
    pub status_5xx: u64,
}

impl ErrorCounts {
    /// Requests that ended without a complete response (the status
    /// classes are complete responses, counted among them too).
    pub fn without_response(&self) -> u64 {
        self.refused + self.reset + self.timeout + self.protocol + self.other
    }

    /// All errors together.
    pub fn total(&self) -> u64 {
        self.without_response() + self.status_4xx + self.status_5xx
    }

    /// Each kind's count in words, as every text that shows them says it:
    /// `refused 1, reset 0, timeout 2, protocol 0, other 0, 4xx 3, 5xx 0`.
    pub fn by_kind(&self) -> String {
        format!(
            "refused {}, reset {}, timeout {}, protocol {}, other {}, 4xx {}, 5xx {}",
            self.refused,
            self.reset,
            self.timeout,
            self.protocol,
            self.other,
            self.status_4xx,
            self.status_5xx
        )
    }

    /// Adds another count to this one, kind by kind.
    pub fn add(&mut self, o: &ErrorCounts) {
        self.refused += o.refused;
        self.reset += o.reset;
        self.timeout += o.timeout;
        self.protocol += o.protocol;
        self.other += o.other;
        self.status_4xx += o.status_4xx;
        self.status_5xx += o.status_5xx;
    }
}

/// The counters and histograms of one generator thread.
#[derive(Debug)]
pub struct Tally {
    /// Requests whose first byte was written (or attempted).
    pub sent: u64,
    /// Complete responses, whatever their status.
    pub responses: u64,
    /// Bytes read from the server, heads included.
    pub bytes: u64,
    /// Errors by kind.
    pub errors: ErrorCounts,
    /// Requests still waiting for their response when the run ended (its
    /// duration, or a Ctrl-C): every sent request is a response, an error
    /// of one kind, or this.
    pub unanswered: u64,
    /// Open loop: requests sent more than one interval after they were due.
    pub late: u64,
    /// Open loop: requests never sent because they were already older
    /// than the timeout when their connection became free.
    pub dropped: u64,
    /// Latency from when each request was due (open loop) or sent (closed
    /// loop) until its response was complete, ns.
    pub latency: Histogram<u64>,
    /// Open loop: latency from when each request was sent, ns.
    pub latency_sent: Histogram<u64>,
    /// Time to establish each connection, ns.
    pub connect: Histogram<u64>,
    /// CPU time the generator threads used, ns (user and system).
    pub busy_ns: u64,
    /// Wall time the generator threads ran, ns: with `busy_ns`, how busy
    /// they were, which tells a generator that set the rate from a server
    /// that did.
    pub wall_ns: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            sent: 0,
            responses: 0,
            bytes: 0,
            errors: ErrorCounts::default(),
            unanswered: 0,
            late: 0,
            dropped: 0,
            latency: super::histogram::histogram(),
            latency_sent: super::histogram::histogram(),
            connect: super::histogram::histogram(),
            busy_ns: 0,
            wall_ns: 0,
        }
    }
}

impl Tally {
    /// Adds another thread's tally to this one.
    pub fn merge(&mut self, o: &Tally) {
        self.sent += o.sent;
        self.responses += o.responses;
        self.bytes += o.bytes;
        self.errors.add(&o.errors);
        self.unanswered += o.unanswered;
        self.late += o.late;
        self.dropped += o.dropped;
        // Histograms with the same bounds always merge.
        let _ = self.latency.add(&o.latency);
        let _ = self.latency_sent.add(&o.latency_sent);
        let _ = self.connect.add(&o.connect);
        self.busy_ns += o.busy_ns;
        self.wall_ns += o.wall_ns;
    }

    /// The share (0..=1) of their running time the generator threads were
    /// busy; `None` when nothing ran.
    pub fn busy_share(&self) -> Option<f64> {
        (self.wall_ns > 0).then(|| (self.busy_ns as f64 / self.wall_ns as f64).min(1.0))
    }

    /// Counts a complete response. `latency_sent_ns` is `None` in a closed
    /// loop, where both latencies are the same and one histogram suffices.
    #[inline]
    pub fn record_response(&mut self, status: u16, latency_ns: u64, latency_sent_ns: Option<u64>) {
        self.responses += 1;
        match status {
            400..=499 => self.errors.status_4xx += 1,
            500..=599 => self.errors.status_5xx += 1,
            _ => {}
        }
        let _ = self.latency.record(latency_ns.max(1));
        if let Some(sent) = latency_sent_ns {
            let _ = self.latency_sent.record(sent.max(1));
        }
    }
}

/// Latency figures of one histogram, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p99_9_ms: f64,
    /// Largest, ms.
    pub max_ms: f64,
}

impl LatencySummary {
    /// Summarizes a histogram of nanoseconds.
    pub fn of(h: &Histogram<u64>) -> Self {
        const MS: f64 = 1e6;
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |q: f64| h.value_at_quantile(q) as f64 / MS;
        LatencySummary {
            count: h.len(),
            mean_ms: h.mean() / MS,
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            p99_9_ms: q(0.999),
            max_ms: h.max() as f64 / MS,
        }
    }
}

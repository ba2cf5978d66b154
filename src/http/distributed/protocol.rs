//! The messages between the coordinator of a load from several hosts and
//! its agents: one JSON object per line, over the agent's stdin and stdout
//! (a local pipe or an ssh session alike, so nothing but the OpenSSH
//! client and a shell is needed between the hosts).
//!
//! The exchange: `hello` (the agent's share of the load) → `ready` (the
//! agent parsed it and reached the server); `ping` → `pong` a few times
//! (the clock offset); `start` (one instant for all) → `result` (counters
//! and raw histograms). `stop`, or the end of stdin, cuts the load short.

use std::time::Duration;

use anyhow::{Context, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use serde::{Deserialize, Serialize};

use crate::http::tally::{ErrorCounts, Tally};
use crate::http::{LoadConfig, Rate};

/// Bumped whenever a message changes shape; an agent refuses another one,
/// so hosts with different sledges fail at the hello, not with garbage.
pub const PROTOCOL_VERSION: u32 = 1;

/// One host's share of the load, as the coordinator sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentLoad {
    /// URLs, requested in turn.
    pub urls: Vec<String>,
    /// Connections of this host.
    pub connections: usize,
    /// Generator threads; `None`: one per CPU of the agent's host, at most
    /// one per connection.
    pub threads: Option<usize>,
    /// Keep connections open between requests.
    pub keep_alive: bool,
    /// Closed loop: think time up to this many seconds.
    pub think_s: f64,
    /// Open loop: this host's rate.
    pub rate: Option<WireRate>,
    /// Request timeout, seconds; `None`: none.
    pub timeout_s: Option<f64>,
    /// How long the load lasts, seconds.
    pub duration_s: f64,
    /// This host's request count, if the load stops at one.
    pub requests: Option<u64>,
}

/// An open-loop rate on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireRate {
    /// Requests/s over all of the host's connections.
    Total(f64),
    /// Requests/s per connection.
    PerConnection(f64),
}

impl AgentLoad {
    /// The load of `config` (its connections per host, its rate and
    /// request count for all hosts together) as a template for
    /// [`super::share::split`]; `threads` per host, `None` for one per CPU
    /// of each host.
    pub fn from_config(config: &LoadConfig, threads: Option<usize>) -> AgentLoad {
        AgentLoad {
            urls: config.targets.iter().map(|t| t.url.clone()).collect(),
            connections: config.connections,
            threads,
            keep_alive: config.keep_alive,
            think_s: config.think.as_secs_f64(),
            rate: config.rate.map(|r| match r {
                Rate::Total(r) => WireRate::Total(r),
                Rate::PerConnection(r) => WireRate::PerConnection(r),
            }),
            timeout_s: config.timeout.map(|t| t.as_secs_f64()),
            duration_s: config.duration.map_or(0.0, |d| d.as_secs_f64()),
            requests: config.requests,
        }
    }

    /// The generator configuration of this share, with `threads` generator
    /// threads when the coordinator left them to the agent.
    pub fn to_config(&self, default_threads: usize) -> anyhow::Result<LoadConfig> {
        let targets = crate::http::parse_targets(&self.urls)?;
        let seconds = |what: &str, s: f64| {
            Duration::try_from_secs_f64(s).map_err(|_| anyhow!("{what} {s} s is not a duration"))
        };
        Ok(LoadConfig {
            threads: self
                .threads
                .unwrap_or(default_threads)
                .clamp(1, self.connections.max(1)),
            keep_alive: self.keep_alive,
            think: seconds("think time", self.think_s)?,
            rate: self.rate.map(|r| match r {
                WireRate::Total(r) => Rate::Total(r),
                WireRate::PerConnection(r) => Rate::PerConnection(r),
            }),
            timeout: self.timeout_s.map(|t| seconds("timeout", t)).transpose()?,
            duration: Some(seconds("duration", self.duration_s)?),
            requests: self.requests,
            ..LoadConfig::closed(targets, self.connections)
        })
    }
}

/// From the coordinator to an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    /// The agent's share of the load.
    Hello {
        /// The coordinator's [`PROTOCOL_VERSION`].
        protocol: u32,
        /// What to run.
        load: AgentLoad,
    },
    /// Asks for the agent's clock now.
    Ping {
        /// Echoed in the pong.
        seq: u32,
    },
    /// Start the load at `at_unix_ns` on the coordinator's clock, which is
    /// `at_unix_ns + offset_ns` on the agent's.
    Start {
        /// The agreed instant, ns since the Unix epoch, coordinator's clock.
        at_unix_ns: i64,
        /// The agent's clock minus the coordinator's, ns.
        offset_ns: i64,
    },
    /// Stop the load now and send what was measured.
    Stop,
}

/// From an agent to the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    /// The share is valid and the server accepts connections.
    Ready {
        /// The agent's [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The agent's sledge version.
        version: String,
        /// Generator threads the agent will run.
        threads: usize,
    },
    /// The answer to a ping.
    Pong {
        /// The ping's number.
        seq: u32,
        /// The agent's clock when it read the ping, ns since the epoch.
        agent_unix_ns: i64,
    },
    /// What the agent measured.
    Result(Box<AgentResult>),
    /// Why the agent cannot go on.
    Error {
        /// The error chain.
        message: String,
    },
}

/// One agent's counters and raw histograms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    /// Wall time of the agent's load, s.
    pub seconds: f64,
    /// How long after the agreed instant the load started, s, on the
    /// agent's clock corrected by the measured offset.
    pub started_late_s: f64,
    /// Generator threads that ran.
    pub threads: usize,
    /// Stopped early (a `stop`, or the coordinator went away).
    pub interrupted: bool,
    /// Requests started.
    pub sent: u64,
    /// Complete responses.
    pub responses: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Errors by kind.
    pub errors: ErrorCounts,
    /// Requests still waiting for their response when the load ended
    /// (absent from older agents).
    #[serde(default)]
    pub unanswered: u64,
    /// Open loop: late requests.
    pub late: u64,
    /// Open loop: dropped requests.
    pub dropped: u64,
    /// Latency histogram, ns: HdrHistogram V2, base64.
    pub latency: String,
    /// Latency from send, ns (open loop): HdrHistogram V2, base64.
    pub latency_sent: String,
    /// Connect time histogram, ns: HdrHistogram V2, base64.
    pub connect: String,
    /// CPU time of the agent's generator threads, ns (absent from older
    /// agents).
    #[serde(default)]
    pub busy_ns: u64,
    /// Wall time of the agent's generator threads, ns.
    #[serde(default)]
    pub wall_ns: u64,
}

impl AgentResult {
    /// The wire form of a finished load.
    pub fn of(
        tally: &Tally,
        seconds: f64,
        started_late_s: f64,
        threads: usize,
        interrupted: bool,
    ) -> anyhow::Result<AgentResult> {
        Ok(AgentResult {
            seconds,
            started_late_s,
            threads,
            interrupted,
            sent: tally.sent,
            responses: tally.responses,
            bytes: tally.bytes,
            errors: tally.errors,
            unanswered: tally.unanswered,
            late: tally.late,
            dropped: tally.dropped,
            latency: encode_histogram(&tally.latency)?,
            latency_sent: encode_histogram(&tally.latency_sent)?,
            connect: encode_histogram(&tally.connect)?,
            busy_ns: tally.busy_ns,
            wall_ns: tally.wall_ns,
        })
    }

    /// The counters and histograms back as a tally, every histogram with
    /// the generator's own bounds (so that tallies of all hosts add).
    pub fn tally(&self) -> anyhow::Result<Tally> {
        Ok(Tally {
            sent: self.sent,
            responses: self.responses,
            bytes: self.bytes,
            errors: self.errors,
            unanswered: self.unanswered,
            late: self.late,
            dropped: self.dropped,
            latency: decode_histogram(&self.latency).context("the latency histogram")?,
            latency_sent: decode_histogram(&self.latency_sent)
                .context("the latency-from-send histogram")?,
            connect: decode_histogram(&self.connect).context("the connect-time histogram")?,
            busy_ns: self.busy_ns,
            wall_ns: self.wall_ns,
        })
    }
}

/// A histogram as HdrHistogram's V2 serialization (every count, no
/// compression: the varint encoding is already small), in base64.
pub fn encode_histogram(h: &Histogram<u64>) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut bytes)
        .map_err(|e| anyhow!("cannot serialize a histogram: {e:?}"))?;
    Ok(BASE64.encode(bytes))
}

/// The inverse of [`encode_histogram`], into a histogram with the
/// generator's bounds; a value outside them is an error, not a silent loss.
/// The bytes come from another host, so they are checked before
/// HdrHistogram's deserializer sees them (`stats::read_histogram`).
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = BASE64.decode(text).context("not base64")?;
    let read = crate::stats::read_histogram(&bytes)
        .map_err(|e| anyhow!("not an HdrHistogram V2 serialization: {e}"))?;
    let mut h = crate::http::histogram::histogram();
    h.add(&read)
        .map_err(|e| anyhow!("a histogram out of the generator's bounds: {e:?}"))?;
    Ok(h)
}

/// One message as a line of JSON, newline included.
pub fn to_line<T: Serialize>(message: &T) -> String {
    let mut line = serde_json::to_string(message).expect("protocol messages serialize");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_survives_the_wire_count_for_count() {
        let mut h = crate::http::histogram::histogram();
        for v in [1u64, 7, 1_000, 1_234_567, 9_000_000_000] {
            h.record_n(v, v % 5 + 1).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.len(), h.len());
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
    }

    #[test]
    fn garbage_is_not_a_histogram() {
        let err = decode_histogram("not base64!").unwrap_err();
        assert!(format!("{err:#}").contains("base64"), "{err:#}");
        let err = decode_histogram(&BASE64.encode(b"hello")).unwrap_err();
        assert!(format!("{err:#}").contains("HdrHistogram"), "{err:#}");
    }

    #[test]
    fn a_zero_run_whose_negation_overflows_is_an_error_not_a_panic() {
        // Found by fuzzing (fuzz/README.md): a V2 header, then one count
        // of nine 0xff bytes, which zig-zag decodes to i64::MIN zero
        // counts; the deserializer negates that (an overflow).
        let err = decode_histogram(
            "HISTEwAAAAkAAAAAAAAAAwAAAAAAAAABAAADRjG4oAQ/8AAAAAAAAP///////////w==",
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("its run of zero counts at payload byte 0"),
            "{err:#}"
        );
    }

    #[test]
    fn messages_are_one_line_of_tagged_json() {
        let line = to_line(&ToAgent::Start {
            at_unix_ns: 5,
            offset_ns: -3,
        });
        assert_eq!(
            line,
            "{\"type\":\"start\",\"at_unix_ns\":5,\"offset_ns\":-3}\n"
        );
        let back: ToAgent = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(
            back,
            ToAgent::Start {
                at_unix_ns: 5,
                offset_ns: -3
            }
        );
    }

    #[test]
    fn a_share_becomes_a_valid_generator_configuration() {
        let load = AgentLoad {
            urls: vec!["http://127.0.0.1:9/".into()],
            connections: 3,
            threads: None,
            keep_alive: true,
            think_s: 0.0,
            rate: Some(WireRate::Total(30.0)),
            timeout_s: Some(1.0),
            duration_s: 2.0,
            requests: Some(90),
        };
        let config = load.to_config(8).unwrap();
        assert_eq!(config.threads, 3, "at most one thread per connection");
        assert_eq!(config.rate, Some(Rate::Total(30.0)));
        assert_eq!(config.requests, Some(90));
        config.validate().unwrap();
    }
}

//! An ad-hoc load as `sledge http` is asked for it (URLs, connections,
//! threads, duration or request count, rate, think time, timeout, and the
//! method, headers and body of the requests), turned
//! into a checked [`LoadConfig`] with the defaults of wrk where nothing
//! is given.
//!
//! Every mistake is the command line's ([`BadLoad`]), named with its flag,
//! so that whatever asks for a load gets the same refusals and defaults.

use std::path::PathBuf;
use std::time::Duration;

use super::load::{LoadConfig, Rate};
use super::request_bytes::{Header, Method, RequestSpec, read_body};

/// How long a run lasts without -d or -n.
const DEFAULT_DURATION: f64 = 10.0;
/// How long a run with -n but without -d may last at most, so that a
/// server that accepts and never answers cannot hang it.
const MAX_DURATION_WITH_REQUESTS: f64 = 600.0;

/// The request timeout without --timeout, seconds: wrk's, so that a server
/// that accepts and never answers costs each connection 2 s, not the run.
const DEFAULT_TIMEOUT: f64 = 2.0;

/// The longest duration an option takes, seconds.
const MAX_SECONDS: f64 = u32::MAX as f64;

/// A mistake in a load request, named with the flag it is about.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadLoad(pub String);

/// A load as asked for, each value as given.
#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    /// The URLs, requested in turn.
    pub urls: Vec<String>,
    /// Concurrent connections (`-c`).
    pub connections: usize,
    /// Generator threads (`-t`) [default: one per CPU, at most one per
    /// connection].
    pub threads: Option<usize>,
    /// Seconds to run (`-d`).
    pub duration: Option<f64>,
    /// Requests to stop after (`-n`).
    pub requests: Option<u64>,
    /// Open a new connection for every request (`--no-keepalive`).
    pub no_keepalive: bool,
    /// Closed loop: think time up to this many seconds (`--think`).
    pub think: Option<f64>,
    /// Open loop: requests per second in total (`--rate`).
    pub rate: Option<f64>,
    /// Open loop: requests per second per connection
    /// (`--rate-per-client`).
    pub rate_per_client: Option<f64>,
    /// Seconds before a request is a timeout, 0 for none (`--timeout`).
    pub timeout: Option<f64>,
    /// The method, `GET` unless given (`--method`).
    pub method: Option<String>,
    /// Headers to add, each `Name: value` (`-H`).
    pub headers: Vec<String>,
    /// A file whose bytes are every request's body (`--body-file`).
    pub body_file: Option<PathBuf>,
}

impl LoadRequest {
    /// The load's configuration, checked ([`LoadConfig::validate`]). A
    /// mistake is a [`BadLoad`]; reading this process's CPUs may fail
    /// otherwise.
    pub fn config(&self) -> anyhow::Result<LoadConfig> {
        let request = self.request()?;
        let targets = super::url::parse_targets_for(&self.urls, &request)
            .map_err(|e| BadLoad(e.to_string()))?;
        let cpus = crate::sys::affinity::allowed_cpus()?.len();
        let threads = self
            .threads
            .unwrap_or(cpus)
            .clamp(1, self.connections.max(1));
        let rate = match (self.rate, self.rate_per_client) {
            (Some(r), _) => Some(Rate::Total(r)),
            (None, Some(r)) => Some(Rate::PerConnection(r)),
            (None, None) => None,
        };
        let duration = match (self.duration, self.requests) {
            (Some(d), _) => d,
            (None, None) => DEFAULT_DURATION,
            (None, Some(_)) => MAX_DURATION_WITH_REQUESTS,
        };
        // 0 means no timeout, as the workloads' `timeout` parameter does.
        let timeout = match self.timeout.unwrap_or(DEFAULT_TIMEOUT) {
            t if t > 0.0 => Some(duration_of("--timeout", t)?),
            _ => None,
        };
        let config = LoadConfig {
            threads,
            keep_alive: !self.no_keepalive,
            think: duration_of("--think", self.think.unwrap_or(0.0))?,
            rate,
            timeout,
            duration: Some(duration_of("--duration", duration)?),
            requests: self.requests,
            ..LoadConfig::closed(targets, self.connections)
        };
        config.validate().map_err(|e| BadLoad(format!("{e:#}")))?;
        Ok(config)
    }

    /// The requests' method, headers and body; a mistake names its flag.
    fn request(&self) -> Result<RequestSpec, BadLoad> {
        let method = match &self.method {
            Some(name) => Method::parse(name).map_err(|e| BadLoad(format!("--method: {e}")))?,
            None => Method::Get,
        };
        let headers = self
            .headers
            .iter()
            .map(|text| Header::parse(text).map_err(|e| BadLoad(format!("-H: {e}"))))
            .collect::<Result<_, _>>()?;
        let body = match &self.body_file {
            Some(path) => read_body(path).map_err(|e| BadLoad(format!("--body-file: {e}")))?,
            None => Vec::new(),
        };
        Ok(RequestSpec {
            method,
            headers,
            body,
        })
    }
}

/// `secs` of option `option` as a duration, or a mistake naming the
/// allowed range.
fn duration_of(option: &str, secs: f64) -> Result<Duration, BadLoad> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|_| secs <= MAX_SECONDS)
        .ok_or_else(|| {
            BadLoad(format!(
                "{option} {secs}: expected from 0 to {MAX_SECONDS} seconds"
            ))
        })
}

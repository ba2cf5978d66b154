//! The load parameters every HTTP workload shares, declared once so that
//! `concurrency`, `think` or `timeout` mean the same against the built-in
//! server and against any URL, and the one place they become a checked
//! [`LoadConfig`].

use std::time::Duration;

use anyhow::bail;

use crate::engine::{ParamKind, ParamRole, ParamSpec};
use crate::http::{LoadConfig, Rate};
use crate::workloads::common::params;

/// `concurrency`: connections (clients), swept as 1,10,100,200,500.
pub fn concurrency() -> ParamSpec {
    ParamSpec {
        name: "concurrency",
        role: ParamRole::Other,
        help: "concurrent connections (ab's -c, wrk's -c)",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000,
        },
        default: "10",
    }
}

/// `keepalive`: reuse connections or open one per request (ab without -k).
pub fn keepalive() -> ParamSpec {
    ParamSpec {
        name: "keepalive",
        role: ParamRole::Other,
        help: "keep connections open between requests (false: one connection per request, as ab without -k)",
        kind: ParamKind::Bool,
        default: "true",
    }
}

/// `requests`: the request count of a trial (ab's -n).
pub fn requests() -> ParamSpec {
    ParamSpec {
        name: "requests",
        role: ParamRole::Other,
        help: "requests per trial (ab's -n); the trial also stops at `time`; 0 = only the time limit",
        kind: ParamKind::Int {
            min: 0,
            max: u64::MAX / 2,
        },
        default: "100000",
    }
}

/// `think`: the closed loop's think time.
pub fn think() -> ParamSpec {
    ParamSpec {
        name: "think",
        role: ParamRole::Other,
        help: "closed loop: think time between a client's requests, uniformly random up to this (siege's realistic mode); 0 = benchmark mode",
        kind: ParamKind::Seconds {
            min: 0.0,
            max: 3600.0,
        },
        default: "0",
    }
}

/// `rate_per_client`: the open loop's rate per connection.
pub fn rate_per_client() -> ParamSpec {
    ParamSpec {
        name: "rate_per_client",
        role: ParamRole::Other,
        help: "open loop: requests per second per client (httperf's --rate per client machine), at least 1/3600 (one request per hour); 0 = closed loop",
        kind: ParamKind::Float { min: 0.0, max: 1e7 },
        default: "0",
    }
}

/// `timeout`: when a request without a response is an error, `default`
/// seconds unless given.
pub fn timeout(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "timeout",
        role: ParamRole::Other,
        help: "a request without a complete response by then is an error (httperf's --timeout); 0 = none",
        kind: ParamKind::Seconds {
            min: 0.0,
            max: 3600.0,
        },
        default,
    }
}

/// The load parameters' values, as a workload read them.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    pub concurrency: u64,
    pub keepalive: bool,
    /// 0: only the time limit.
    pub requests: u64,
    /// Seconds; 0 for none.
    pub think: f64,
    /// The open loop's rate, `None` for a closed loop.
    pub rate: Option<Rate>,
    /// Seconds; 0 for none.
    pub timeout: f64,
    /// A trial's length, seconds.
    pub time: f64,
}

impl LoadSettings {
    /// The generator's configuration, without targets (they are known
    /// once the case is prepared), with `threads` pinned to `cpus` when
    /// given; a setting the generator cannot run is an error that names
    /// the parameter.
    pub fn config(&self, threads: usize, cpus: Option<Vec<usize>>) -> anyhow::Result<LoadConfig> {
        if self.rate.is_some() && self.think > 0.0 {
            let rate = match self.rate {
                Some(Rate::Total(_)) => "rate",
                _ => "rate_per_client",
            };
            bail!("think applies to the closed loop and {rate} to the open loop; set one of them");
        }
        let load = LoadConfig {
            think: Duration::from_secs_f64(self.think),
            rate: self.rate,
            timeout: (self.timeout > 0.0).then(|| Duration::from_secs_f64(self.timeout)),
            threads,
            keep_alive: self.keepalive,
            requests: (self.requests > 0).then_some(self.requests),
            duration: Some(params::trial_time(self.time)),
            cpus,
            ..LoadConfig::closed(Vec::new(), self.concurrency as usize)
        };
        // A rate too small or too large for the open loop's schedule fails
        // the case here, with the allowed range.
        load.validate_settings()?;
        Ok(load)
    }
}

/// The open loop's rate of a workload's `rate_per_client` and (where it
/// has one) `rate` in total, 0 meaning not set; both set is an error.
pub fn open_loop_rate(rate_per_client: f64, rate: f64) -> anyhow::Result<Option<Rate>> {
    Ok(match (rate_per_client > 0.0, rate > 0.0) {
        (true, true) => bail!(
            "rate is the total and rate_per_client the rate of each connection; set one of them"
        ),
        (true, false) => Some(Rate::PerConnection(rate_per_client)),
        (false, true) => Some(Rate::Total(rate)),
        (false, false) => None,
    })
}

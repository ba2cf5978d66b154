//! `sledge http --from HOSTS`: the load of `sledge http` generated from
//! several client hosts at once, their results merged exactly.

use std::fmt::Write as _;
use std::time::Duration;

use super::http::{HttpArgs, format_report, nothing_succeeded};
use super::output::{Cancelled, ExitStatus, UsageError, print};
use crate::engine::CancelToken;
use crate::http::LoadConfig;
use crate::http::distributed::{
    self, AgentLoad, DistributedReport, LocalAgents, SshAgents, Transport, share,
};
use crate::remote::{self, SshOptions, ThisBinary};
use crate::visible;

/// Runs `config` (checked already) from every host of `hosts` and prints
/// each host's figures and the merged ones.
pub fn execute(
    args: &HttpArgs,
    hosts: &str,
    config: &LoadConfig,
    cancel: &CancelToken,
) -> anyhow::Result<ExitStatus> {
    let hosts = remote::parse_host_list(hosts).map_err(|e| UsageError(e.to_string()))?;
    // Unless given, each host runs one thread per CPU of its own.
    let load = AgentLoad {
        urls: args.urls.clone(),
        ..AgentLoad::from_config(config, args.threads)
    };
    // Every host's share must make sense on its own (a total rate split
    // over many hosts and connections can fall below the minimum).
    let labels: Vec<String> = hosts.iter().map(ToString::to_string).collect();
    for share in share::split(&load, hosts.len()).map_err(|e| UsageError(format!("{e:#}")))? {
        share
            .to_config(share.connections)
            .and_then(|c| c.validate())
            .map_err(|e| UsageError(format!("each client host's share: {e:#}")))?;
    }
    let transport: Box<dyn Transport> = if args.from_local {
        Box::new(LocalAgents {
            program: std::env::current_exe()?,
        })
    } else {
        // Loopback (or the unspecified address) on a client host is that
        // host itself, not the server.
        if let Some(t) = config
            .targets
            .iter()
            .find(|t| crate::http::url::reaches_itself(t.addr.ip()))
        {
            return Err(UsageError(format!(
                "{} is a loopback address ({}): from the client hosts it would reach each host itself; give an address of the server they can reach",
                t.url,
                t.addr.ip()
            ))
            .into());
        }
        let options = SshOptions {
            identity: args.identity.clone(),
            known_hosts: args.known_hosts.clone(),
            connect_timeout: Duration::from_secs(args.connect_timeout),
        };
        let agents = match &args.remote_sledge {
            Some(program) => SshAgents::connect(&hosts, &options, program)?,
            None => {
                let dir = remote::remote_dir(&args.remote_dir)
                    .map_err(|e| UsageError(format!("--remote-dir {e}")))?;
                SshAgents::connect_copying(
                    &hosts,
                    &options,
                    &ThisBinary::current()?,
                    &dir,
                    &|host, text| eprintln!("[{host}] {text}"),
                )?
            }
        };
        Box::new(agents)
    };
    let report = match distributed::run(transport.as_ref(), &labels, &load, cancel) {
        Err(e) if e.is::<Cancelled>() => {
            eprintln!("interrupted (Ctrl-C) before the start: nothing was sent to the server");
            return Ok(ExitStatus::Interrupted);
        }
        other => other?,
    };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["urls"] = serde_json::json!(args.urls);
        print(&(serde_json::to_string_pretty(&value)? + "\n"))?;
    } else {
        print(&format_hosts(&args.urls, &report))?;
    }
    if report.interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    let mut failed = false;
    for host in &report.hosts {
        if let Some(why) = &host.failure {
            eprintln!("error: client host {}: {}", host.host, visible::escape(why));
            failed = true;
        }
    }
    if failed {
        eprintln!(
            "error: {} of {} client hosts failed; the merged figures cover the others only",
            report.failed_hosts,
            report.hosts.len()
        );
        return Ok(ExitStatus::Failure);
    }
    match report.merged.as_ref().and_then(nothing_succeeded) {
        Some(why) => {
            eprintln!("error: {why}");
            Ok(ExitStatus::Failure)
        }
        None => Ok(ExitStatus::Success),
    }
}

/// One line per host (its clock, its start, its own figures), then the
/// merged report.
fn format_hosts(urls: &[String], r: &DistributedReport) -> String {
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

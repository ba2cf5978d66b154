//! `sledge http --from HOSTS`: the load of `sledge http` generated from
//! several client hosts at once, their results merged exactly.

use std::time::Duration;

use super::http_args::HttpArgs;
use super::output::{Cancelled, ExitStatus, UsageError, print};
use crate::engine::CancelToken;
use crate::http::LoadConfig;
use crate::http::distributed::{self, AgentLoad, LocalAgents, SshAgents, Transport, share};
use crate::remote::{self, SshOptions, ThisBinary};
use crate::report::http_load::{format_hosts, hosts_json, nothing_succeeded};
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
        print(&hosts_json(&args.urls, &report)?)?;
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

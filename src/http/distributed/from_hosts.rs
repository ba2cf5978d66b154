//! `sledge http --from HOSTS`: the client hosts as given, checked (each
//! host's share of the load makes sense on its own, the server's address
//! is one they can reach), reached (over ssh, or as child processes for
//! tests) and run together ([`super::run`]).
//!
//! Every mistake is the command line's ([`BadLoad`]), found before any
//! host is reached.

use std::path::PathBuf;
use std::time::Duration;

use super::merge::DistributedReport;
use super::protocol::AgentLoad;
use super::transport::{LocalAgents, SshAgents, Transport};
use crate::engine::CancelToken;
use crate::http::{BadLoad, LoadConfig};
use crate::remote::{self, SshHost, SshOptions, ThisBinary};

/// The client hosts and how to reach them, as given.
#[derive(Debug, Clone, Default)]
pub struct FromHosts {
    /// `user@host[:port],...`.
    pub hosts: String,
    /// The names only label agents started here as child processes (the
    /// same protocol over pipes; for tests).
    pub local: bool,
    /// The private key to log in with (`ssh -i`).
    pub identity: Option<PathBuf>,
    /// A known_hosts file of this load's own.
    pub known_hosts: Option<PathBuf>,
    /// Seconds to wait for each host's SSH connection.
    pub connect_timeout_secs: u64,
    /// The directory on each host for the copy of this sledge, as given.
    pub remote_dir: String,
    /// A sledge already on every host, run instead of a copy of this one.
    pub remote_sledge: Option<String>,
}

/// Runs `config` (checked already) against `urls` from every host of
/// `from`, `threads` on each (`None`: one per CPU of each host), and
/// returns each host's figures and the merged ones. `note` hears each
/// host's steps of copying this sledge there. A stop before the start is
/// [`crate::engine::Cancelled`].
pub fn run_from(
    from: &FromHosts,
    urls: &[String],
    threads: Option<usize>,
    config: &LoadConfig,
    cancel: &CancelToken,
    note: &(dyn Fn(&SshHost, &str) + Sync),
) -> anyhow::Result<DistributedReport> {
    let hosts = remote::parse_host_list(&from.hosts).map_err(|e| BadLoad(e.to_string()))?;
    let load = AgentLoad {
        urls: urls.to_vec(),
        ..AgentLoad::from_config(config, threads)
    };
    // Every host's share must make sense on its own (a total rate split
    // over many hosts and connections can fall below the minimum).
    let labels: Vec<String> = hosts.iter().map(ToString::to_string).collect();
    for share in super::share::split(&load, hosts.len()).map_err(|e| BadLoad(format!("{e:#}")))? {
        share
            .to_config(share.connections)
            .and_then(|c| c.validate())
            .map_err(|e| BadLoad(format!("each client host's share: {e:#}")))?;
    }
    let transport = transport(from, &hosts, config, note)?;
    super::coordinator::run(transport.as_ref(), &labels, &load, cancel)
}

/// How the agents are reached: child processes of this one, or ssh to
/// each host, which runs the sledge given or a copy of this one.
fn transport(
    from: &FromHosts,
    hosts: &[SshHost],
    config: &LoadConfig,
    note: &(dyn Fn(&SshHost, &str) + Sync),
) -> anyhow::Result<Box<dyn Transport>> {
    if from.local {
        return Ok(Box::new(LocalAgents {
            program: std::env::current_exe()?,
        }));
    }
    // Loopback (or the unspecified address) on a client host is that host
    // itself, not the server.
    if let Some(t) = config
        .targets
        .iter()
        .find(|t| crate::http::url::reaches_itself(t.addr.ip()))
    {
        return Err(BadLoad(format!(
            "{} is a loopback address ({}): from the client hosts it would reach each host itself; give an address of the server they can reach",
            t.url,
            t.addr.ip()
        ))
        .into());
    }
    let options = SshOptions {
        identity: from.identity.clone(),
        known_hosts: from.known_hosts.clone(),
        connect_timeout: Duration::from_secs(from.connect_timeout_secs),
    };
    let agents = match &from.remote_sledge {
        Some(program) => SshAgents::connect(hosts, &options, program)?,
        None => {
            let dir = remote::remote_dir(&from.remote_dir)
                .map_err(|e| BadLoad(format!("--remote-dir {e}")))?;
            SshAgents::connect_copying(hosts, &options, &ThisBinary::current()?, &dir, note)?
        }
    };
    Ok(Box::new(agents))
}

//! What `sledge fleet run` was asked to do, checked before any host is
//! touched (the connect timeout, the key file, the remote directory), and
//! the whole fleet run it asks for: the store readied, the interrupt
//! handler installed, every host's part run ([`super::run`]).
//!
//! The arguments meant for `sledge run` on the hosts are checked by the
//! command line, which alone can parse them as `sledge run` would.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::finished::FleetRun;
use super::order::Order;
use super::progress::Progress;
use super::settings::FleetSettings;
use crate::engine::CancelToken;
use crate::remote::{SshHost, SshOptions, ThisBinary};
use crate::store::{Store, StoreLocation};
use crate::suite::BadRequest;
use crate::workloads::net::ssh_server::SshServer;

/// The longest connect timeout accepted, in seconds.
const MAX_CONNECT_TIMEOUT_SECS: u64 = 600;

/// A fleet run as asked for.
#[derive(Debug, Clone)]
pub struct FleetRequest {
    /// The hosts, in the order given.
    pub hosts: Vec<SshHost>,
    /// Run the hosts one after another rather than at once.
    pub serial: bool,
    /// The private key to log in with (`--identity`).
    pub identity: Option<PathBuf>,
    /// A known_hosts file of this fleet's own (`--known-hosts`).
    pub known_hosts: Option<PathBuf>,
    /// Seconds to wait for each host's SSH connection.
    pub connect_timeout_secs: u64,
    /// The directory on each host, as given (`--remote-dir`).
    pub remote_dir: String,
    /// The arguments of `sledge run` on every host, already checked.
    pub run_args: Vec<String>,
    /// The store the hosts' runs come into; `None` for the default.
    pub store: Option<StoreLocation>,
    /// Builds of this sledge for hosts of other architectures
    /// (`--binary-for ARCH=PATH`), as `uname -m` names the hosts.
    pub binaries_for: Vec<(String, PathBuf)>,
    /// `--pairs HOST`: the reference host every host's `net.*` workloads
    /// run against, its server started here over ssh for the fleet run;
    /// the hosts then run one after another.
    pub pairs: Option<SshHost>,
}

impl FleetRequest {
    /// The settings the hosts are reached and run with, every mistake
    /// named with its flag; the hosts are not touched.
    fn settings(&self) -> Result<(SshOptions, String), BadRequest> {
        let secs = self.connect_timeout_secs;
        if secs == 0 || secs > MAX_CONNECT_TIMEOUT_SECS {
            return Err(BadRequest(format!(
                "--connect-timeout {secs}: expected seconds from 1 to {MAX_CONNECT_TIMEOUT_SECS}"
            )));
        }
        if let Some(identity) = &self.identity
            && !identity.is_file()
        {
            return Err(BadRequest(format!(
                "--identity {}: no such file",
                identity.display()
            )));
        }
        let remote_dir = crate::remote::remote_dir(&self.remote_dir)
            .map_err(|e| BadRequest(format!("--remote-dir {e}")))?;
        let ssh = SshOptions {
            identity: self.identity.clone(),
            known_hosts: self.known_hosts.clone(),
            connect_timeout: Duration::from_secs(secs),
        };
        Ok((ssh, remote_dir))
    }
}

/// Runs the fleet `request` asks for into its store, checked for damage
/// first (a damaged store would fail at the first import, after that
/// host's run). Ctrl-C asks every remote run to stop; a second one hurries
/// them. `progress` hears each step as it happens.
pub fn execute(
    request: &FleetRequest,
    progress: &mut dyn FnMut(Progress),
) -> anyhow::Result<FleetRun> {
    let (ssh, remote_dir) = request.settings()?;
    let mut store = match &request.store {
        Some(location) => Store::open_at(location)?,
        None => Store::open_default()?,
    };
    store.check_integrity()?;
    let mut settings = FleetSettings {
        ssh: ssh.clone(),
        remote_dir: remote_dir.clone(),
        run_args: request.run_args.clone(),
        binaries: std::iter::once(ThisBinary::current())
            .chain(request.binaries_for.iter().map(|(arch, path)| {
                ThisBinary::other_build(arch, path).map_err(|e| {
                    BadRequest(format!("--binary-for {arch}={}: {e:#}", path.display())).into()
                })
            }))
            .collect::<anyhow::Result<_>>()?,
        env: super::settings::forwarded_env(),
    };
    // The reference host's server runs until the last host is done; each
    // host's run is given its address as the peer.
    let reference = match &request.pairs {
        Some(host) => {
            let server = SshServer::start_with(host, &ssh, &remote_dir, &settings.binaries)?;
            settings
                .run_args
                .extend(["-p".to_string(), format!("peer={}", server.addr())]);
            Some(server)
        }
        None => None,
    };
    // Pairs share the reference host's link: one at a time.
    let order = if request.serial || reference.is_some() {
        Order::Serial
    } else {
        Order::Parallel
    };
    let (cancel, hurry) = (CancelToken::new(), CancelToken::new());
    super::interrupt::install(&cancel, &hurry);
    let started = Instant::now();
    let reports = super::coordinator::run(
        &request.hosts,
        &settings,
        order,
        &mut store,
        &cancel,
        &hurry,
        progress,
    );
    drop(reference);
    Ok(FleetRun {
        reports,
        seconds: started.elapsed().as_secs_f64(),
        interrupted: cancel.is_cancelled(),
        store,
    })
}

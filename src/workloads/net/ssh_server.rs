//! `peer=USER@HOST[:SSHPORT]`: the server side started on the peer over
//! ssh, as `clients_from` reaches its client hosts. sledge connects (ssh's
//! options from the environment, see [`crate::remote::ssh_options_from_env`]),
//! copies itself there unless the same bytes are there already (into the
//! directory `clients_from` and `sledge fleet run` use), starts
//! `sledge __net-serve --listen ADDR:0 --until-eof` and reads the port the
//! kernel gave it from its first line. The data connections go to the
//! peer's host name or address as this host resolves it.
//!
//! The remote server stops at the end of its standard input, which is a
//! pipe from this sledge: closed at the case's cleanup (after a failure
//! and a Ctrl-C too), and also when the connection drops or this sledge
//! dies, since sshd then closes it. Nothing stays running on the peer;
//! the copy of sledge stays, as `clients_from`'s does, for the next run.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use super::server::LISTENING;
use crate::remote::{
    self, Connection, OutputLine, Placement, RemoteProcess, SshHost, SshOptions, ThisBinary,
    ensure_binary,
};

/// Space the peer must keep free besides the copy of sledge: the server
/// writes nothing, so only a margin for the host's own sake.
const SERVER_FREE_BYTES: u64 = 16 << 20;
/// How long the started server may take to say where it listens.
const START_WAIT: Duration = Duration::from_secs(20);
/// How long it may take to stop once its input is closed.
const STOP_WAIT: Duration = Duration::from_secs(5);
/// Lines of its standard error kept for an error message.
const STDERR_KEPT: usize = 5;

/// `sledge __net-serve` running on a peer, stopped when dropped.
pub struct SshServer {
    addr: SocketAddr,
    process: RemoteProcess,
    /// Dropped after the process: closing it ends every session on it.
    _connection: Connection,
}

impl SshServer {
    /// Connects to `host` with the ssh options and the directory a `run`
    /// takes from the environment, copies sledge there if needed and
    /// starts the server. Every error names the host.
    pub fn start(host: &SshHost) -> anyhow::Result<SshServer> {
        Self::start_with(
            host,
            &remote::ssh_options_from_env(),
            &remote::remote_dir_from_env()?,
            &[ThisBinary::current()?],
        )
    }

    /// As [`Self::start`], with the ssh options, the directory for the
    /// copy and the builds of sledge given (as `sledge fleet run` has
    /// them).
    pub fn start_with(
        host: &SshHost,
        options: &SshOptions,
        dir: &str,
        binaries: &[ThisBinary],
    ) -> anyhow::Result<SshServer> {
        let ip = resolve(host)?;
        let connection =
            Connection::open(host, options).map_err(|e| anyhow!("peer={host}: {e}"))?;
        let place = Placement {
            dir,
            extra_free_bytes: SERVER_FREE_BYTES,
            purpose: "a net server",
        };
        let installed = ensure_binary(&connection, binaries, place, &mut |_| {})
            .map_err(|why| anyhow!("peer={host}: {why}"))?;
        // Every address of the peer's family: the data connections go to
        // the address this host resolves, which need not be the one the
        // peer would name.
        let listen = if ip.is_ipv6() { "[::]:0" } else { "0.0.0.0:0" };
        let command = remote::command_line(&[
            installed.binary.as_str(),
            "__net-serve",
            "--listen",
            listen,
            "--until-eof",
        ]);
        let mut process = connection
            .spawn_with_input(&command)
            .map_err(|e| anyhow!("peer={host}: {e}"))?;
        let port = match listening_port(&process) {
            Ok(port) => port,
            Err(why) => {
                process.close_input();
                process.kill_local();
                return Err(anyhow!(
                    "peer={host}: the net server did not start there: {why}"
                ));
            }
        };
        Ok(SshServer {
            addr: SocketAddr::new(ip, port),
            process,
            _connection: connection,
        })
    }

    /// Where the server listens, as this host reaches it.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for SshServer {
    /// Closes the server's input, which stops it, and waits (bounded) for
    /// it to end before the connection closes.
    fn drop(&mut self) {
        self.process.close_input();
        let deadline = Instant::now() + STOP_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.process.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.process.kill_local();
    }
}

/// The peer's address as this host reaches it: where the data
/// connections go.
fn resolve(host: &SshHost) -> anyhow::Result<IpAddr> {
    (host.host.as_str(), 0)
        .to_socket_addrs()
        .with_context(|| {
            format!(
                "peer={host}: {} does not resolve to an address here (the data connections go to it)",
                host.host
            )
        })?
        .next()
        .map(|a| a.ip())
        .ok_or_else(|| anyhow!("peer={host}: {} resolves to no address", host.host))
}

/// The port from the server's first line, or why there is none (what it
/// said on standard error, or that it said nothing in time).
fn listening_port(process: &RemoteProcess) -> Result<u16, String> {
    let deadline = Instant::now() + START_WAIT;
    let mut said = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match process.next_line(left) {
            Ok(OutputLine::Stdout(line)) => {
                if let Some(addr) = line.strip_prefix(LISTENING) {
                    return addr
                        .trim()
                        .parse::<SocketAddr>()
                        .map(|a| a.port())
                        .map_err(|_| format!("it said {line:?}, which names no address"));
                }
                said.push(line);
            }
            Ok(OutputLine::Stderr(line)) => said.push(line),
            Err(RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "it did not say where it listens within {} s{}",
                    START_WAIT.as_secs(),
                    quoted(&said)
                ));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(format!("it ended{}", quoted(&said)));
            }
        }
    }
}

/// The last lines a process said, for an error message.
fn quoted(said: &[String]) -> String {
    let last: Vec<String> = said
        .iter()
        .rev()
        .take(STDERR_KEPT)
        .rev()
        .map(|l| crate::visible::escape(l).into_owned())
        .collect();
    if last.is_empty() {
        " without a word".to_string()
    } else {
        format!(": {}", last.join(" | "))
    }
}

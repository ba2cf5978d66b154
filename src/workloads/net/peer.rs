//! Where a `net.*` case's server side runs (the `peer` parameter), and
//! that server side while the case runs: sledge's own on loopback, one
//! started by hand on the peer, or one sledge starts on the peer over ssh
//! ([`super::ssh_server`]).

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::{anyhow, bail};

use super::server::Server;
use super::ssh_server::SshServer;
use crate::remote::SshHost;

/// Where a case's server side runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// Inside this sledge, on 127.0.0.1 and this port (0: the kernel's
    /// pick).
    Local { port: u16 },
    /// A `sledge __net-serve` already listening there.
    Serve(SocketAddr),
    /// A host reached over ssh, where sledge copies itself and starts
    /// `sledge __net-serve` for the case.
    Ssh(SshHost),
}

impl Peer {
    /// Reads the `peer` parameter.
    pub fn parse(workload: &str, text: &str, port: u16) -> anyhow::Result<Self> {
        if text == "local" {
            return Ok(Peer::Local { port });
        }
        if text.contains('@') {
            let host = text.parse::<SshHost>().map_err(|e| {
                anyhow!(
                    "{workload}: peer={text}: {e} (a peer reached over ssh is USER@HOST[:SSHPORT])"
                )
            })?;
            return Ok(Peer::Ssh(host));
        }
        let addr = text
            .to_socket_addrs()
            .map_err(|e| {
                anyhow!(
                    "{workload}: peer={text} is not `local`, USER@HOST[:SSHPORT] (a host reached over ssh) or HOST:PORT of a running `sledge __net-serve` ({e})"
                )
            })?
            .next()
            .ok_or_else(|| anyhow!("{workload}: peer={text} names no address"))?;
        Ok(Peer::Serve(addr))
    }
}

/// The server side a case talks to while it runs.
pub struct Target {
    pub addr: SocketAddr,
    /// What this sledge started for the case and stops after it.
    _started: Started,
}

/// The server a [`Target`] started; each stops when it is dropped.
enum Started {
    Nothing,
    Own(#[allow(dead_code)] Server),
    OverSsh(#[allow(dead_code)] SshServer),
}

impl Target {
    /// Starts the local server or the peer's over ssh, or takes the
    /// address of the peer's running one.
    pub fn start(peer: &Peer) -> anyhow::Result<Self> {
        match peer {
            Peer::Local { port } => {
                let server = Server::start(SocketAddr::from(([127, 0, 0, 1], *port)))?;
                Ok(Target {
                    addr: server.addr(),
                    _started: Started::Own(server),
                })
            }
            Peer::Serve(addr) => Ok(Target {
                addr: *addr,
                _started: Started::Nothing,
            }),
            Peer::Ssh(host) => {
                let server = SshServer::start(host)?;
                Ok(Target {
                    addr: server.addr(),
                    _started: Started::OverSsh(server),
                })
            }
        }
    }

    /// Stops what it started (as dropping it does).
    pub fn stop(self) {
        drop(self);
    }
}

/// A case's peer and, between its prepare and its cleanup, the server
/// side it talks to: what every `net.*` case holds alike.
pub struct PeerSide {
    workload: &'static str,
    peer: Peer,
    target: Option<Target>,
}

impl PeerSide {
    /// Reads the `peer` parameter (and `port`, for `peer=local`).
    pub fn parse(workload: &'static str, peer: &str, port: u64) -> anyhow::Result<Self> {
        let port = u16::try_from(port)
            .map_err(|_| anyhow!("{workload}: port={port} is not a port (0 to 65535)"))?;
        Ok(PeerSide {
            workload,
            peer: Peer::parse(workload, peer, port)?,
            target: None,
        })
    }

    /// Starts the server side (a case's prepare).
    pub fn start(&mut self) -> anyhow::Result<()> {
        self.target = Some(Target::start(&self.peer)?);
        Ok(())
    }

    /// Where the server side listens, once started.
    pub fn addr(&self) -> anyhow::Result<SocketAddr> {
        match &self.target {
            Some(target) => Ok(target.addr),
            None => bail!("{}: trial before prepare", self.workload),
        }
    }

    /// Stops what [`Self::start`] started (a case's cleanup).
    pub fn stop(&mut self) {
        if let Some(target) = self.target.take() {
            target.stop();
        }
    }
}

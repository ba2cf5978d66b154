//! The network between this host and a peer, as iperf3 and netperf
//! measure it: `net.stream` (bulk TCP, iperf3's default test), `net.rr`
//! and `net.crr` (netperf's TCP_RR and TCP_CRR) and `net.udp` (a paced UDP
//! stream, iperf3 `-u`).
//!
//! The server side is sledge's own ([`server`]): inside this process on
//! 127.0.0.1 for `peer=local`, `sledge __net-serve` that sledge starts on
//! the peer over ssh for `peer=USER@HOST` ([`ssh_server`]), or one started
//! by hand for `peer=HOST:PORT` ([`peer`]). Client and server speak the small protocol of
//! [`proto`]: a control connection per test, which brings the server's
//! own counts and CPU time back to the client.

pub mod client;
pub mod crr;
pub mod peer;
pub mod proto;
pub mod rr;
pub mod server;
pub mod sock;
pub mod ssh_server;
pub mod stream;
pub mod udp;

use crate::engine::{ParamKind, ParamRole, ParamSpec};

/// `peer`: where the server side runs.
pub fn peer_param() -> ParamSpec {
    ParamSpec {
        name: "peer",
        role: ParamRole::Other,
        help: "the server side: `local` (inside sledge, over loopback), USER@HOST[:SSHPORT] (sledge copied there over ssh and its server started for the case) or HOST:PORT of a running `sledge __net-serve`",
        kind: ParamKind::Text,
        default: "local",
    }
}

/// `port`: the port of the local server.
pub fn port_param() -> ParamSpec {
    ParamSpec {
        name: "port",
        role: ParamRole::Other,
        help: "the port the local server (peer=local) listens on; 0 = one the kernel picks",
        kind: ParamKind::Int {
            min: 0,
            max: 65_535,
        },
        default: "0",
    }
}

/// `streams`: parallel connections (iperf3's -P).
pub fn streams_param() -> ParamSpec {
    ParamSpec {
        name: "streams",
        role: ParamRole::Other,
        help: "parallel connections, each with a thread at either end (iperf3's -P)",
        kind: ParamKind::Int { min: 1, max: 128 },
        default: "1",
    }
}

/// `sock_buf`: SO_SNDBUF and SO_RCVBUF at both ends.
pub fn sock_buf_param() -> ParamSpec {
    ParamSpec {
        name: "sock_buf",
        role: ParamRole::Other,
        help: "SO_SNDBUF and SO_RCVBUF at both ends (iperf3's -w); 0 = the kernel's autotuning",
        kind: ParamKind::Size {
            min: 0,
            max: 1 << 30,
            power_of_two: false,
        },
        default: "0",
    }
}

/// A request or response size parameter.
pub fn message_param(name: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        role: ParamRole::Other,
        help,
        kind: ParamKind::Size {
            min: 1,
            max: u64::from(server::MAX_MESSAGE),
            power_of_two: false,
        },
        default: "1",
    }
}

/// The server and load threads of a case run on both ends: more CPUs
/// than the parameters count.
pub fn cpus_used() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests;

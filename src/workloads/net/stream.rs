//! `net.stream`: bulk TCP throughput, iperf3's default test.
//!
//! Each stream is one connection with a thread at either end; the sender
//! writes `msg_size` bytes at a time for `time`, the receiver reads and
//! discards. Throughput counts what the receiver got: for a stream to the
//! peer, the peer's count over the sender's time (every byte written is
//! received, and the test checks that it was); for a stream from the
//! peer, what arrived here before the end of the trial. Retransmits are
//! the senders' `tcpi_total_retrans`; CPU per gigabit is the thread CPU
//! time of the senders and of the receivers over the data moved.

use std::io::{ErrorKind, Read};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};

use super::client::{TestConn, gone, join, wait_until};
use super::peer::PeerSide;
use super::proto::{Hello, Mode};
use super::sock::{
    SockOpts, allowed_congestion, available_congestion, thread_cpu_ns, total_retrans,
    try_congestion, write_until,
};
use crate::engine::{
    CancelToken, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::workloads::common::params;

const ID: &str = "net.stream";

/// The `net.stream` workload.
pub struct NetStream;

crate::param_choice! {
    /// Which way the data goes.
    pub enum Direction {
        /// From this host to the peer (iperf3's default).
        Send = "send",
        /// From the peer to this host (iperf3's -R).
        Receive = "receive",
        /// Both at once, `streams` each way (iperf3's --bidir).
        Both = "both",
    }
}

impl Workload for NetStream {
    fn id(&self) -> &'static str {
        ID
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "bulk TCP throughput to or from a peer; compatible with iperf3's default test (Gbit/s, retransmits, CPU per Gbit)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        StreamParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = StreamParams::from_set(p);
        let peer = PeerSide::parse(ID, &p.peer, p.port)?;
        let direction = Direction::from_word(&p.direction).ok_or_else(|| {
            anyhow!(
                "{ID}: direction={} is not one of {:?}",
                p.direction,
                Direction::NAMES
            )
        })?;
        let congestion = check_congestion(ID, &p.congestion)?;
        Ok(Box::new(StreamCase {
            peer,
            direction,
            streams: p.streams as u32,
            msg_size: p.msg_size as u32,
            opts: SockOpts {
                sock_buf: p.sock_buf as u32,
                congestion,
                nagle: true,
            },
            time: p.time,
        }))
    }
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        super::cpus_used()
    }
}

/// The congestion control a `congestion` parameter names (empty for
/// `default`), refused where this host does not allow it.
pub fn check_congestion(workload: &str, name: &str) -> anyhow::Result<String> {
    if name == "default" {
        return Ok(String::new());
    }
    if name.is_empty()
        || name.len() > 15
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        bail!(
            "{workload}: congestion={name:?} is not the name of a congestion control (e.g. cubic, bbr, reno) or `default`"
        );
    }
    // Asked of the kernel on a socket of this host's, for root as for
    // anyone: a name it cannot set would otherwise fail the first trial,
    // after the peer's server waited for it.
    if let Err(e) = try_congestion(name) {
        let list =
            |names: Option<Vec<String>>| names.map_or("unknown".to_string(), |n| n.join(", "));
        bail!(
            "{workload}: congestion={name} cannot be set on this host ({e}); loaded: {}; allowed without root: {} \
             (/proc/sys/net/ipv4/tcp_available_congestion_control and tcp_allowed_congestion_control; root may load others)",
            list(available_congestion()),
            list(allowed_congestion())
        );
    }
    Ok(name.to_string())
}

crate::workload_params! {
    /// The parameters of `net.stream`.
    pub struct StreamParams {
        peer: String = super::peer_param(),
        streams: u64 = super::streams_param(),
        direction: String = ParamSpec {
            name: "direction",
            role: ParamRole::Other,
            help: "send: to the peer; receive: from it (iperf3's -R); both: `streams` each way (--bidir)",
            kind: ParamKind::Choice(Direction::NAMES),
            default: "send",
        },
        msg_size: u64 = ParamSpec {
            name: "msg_size",
            role: ParamRole::Other,
            help: "bytes per write (iperf3's -l; its default for TCP)",
            kind: ParamKind::Size {
                min: 1,
                max: 16 << 20,
                power_of_two: false,
            },
            default: "128K",
        },
        sock_buf: u64 = super::sock_buf_param(),
        congestion: String = ParamSpec {
            name: "congestion",
            role: ParamRole::Other,
            help: "TCP congestion control at both ends (iperf3's -C), e.g. cubic or bbr; `default` = the system's",
            kind: ParamKind::Text,
            default: "default",
        },
        port: u64 = super::port_param(),
        time: Duration = params::time("10"),
    }
}

struct StreamCase {
    peer: PeerSide,
    direction: Direction,
    streams: u32,
    msg_size: u32,
    opts: SockOpts,
    time: Duration,
}

impl Case for StreamCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.start()
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let addr = self.peer.addr()?;
        let (up, down) = match self.direction {
            Direction::Send => (self.streams, 0),
            Direction::Receive => (0, self.streams),
            Direction::Both => (self.streams, self.streams),
        };
        let hello = Hello {
            mode: Mode::Stream,
            up,
            down,
            msg_size: self.msg_size,
            req_size: 0,
            resp_size: 0,
            sock_buf: self.opts.sock_buf,
            drop_every: 0,
            congestion: self.opts.congestion.clone(),
        };
        let totals = run_stream(addr, &hello, &self.opts, self.time, &ctx.cancel)?;
        Ok(TrialOutput {
            metrics: totals.metrics(),
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.stop();
        Ok(())
    }
}

/// What a stream trial moved, both ends together.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StreamTotals {
    /// Bits per second the receivers got, summed over the streams.
    pub bits_per_sec: f64,
    /// Bytes the senders wrote (to the peer: all of it received).
    pub bytes_sent_up: u64,
    /// Bytes the peer received of them.
    pub bytes_received_up: u64,
    /// Bytes received here from the peer before the trial's end.
    pub bytes_received_down: u64,
    pub retransmits: u64,
    pub sender_cpu_ns: u64,
    pub receiver_cpu_ns: u64,
}

impl StreamTotals {
    fn gigabits(&self) -> f64 {
        (self.bytes_received_up + self.bytes_received_down) as f64 * 8.0 / 1e9
    }

    fn metrics(&self) -> Vec<Metric> {
        let gbit = self.gigabits().max(f64::MIN_POSITIVE);
        vec![
            Metric::higher("gbit_per_sec", "Gbit/s", self.bits_per_sec / 1e9),
            Metric::lower("retransmits", "segments", self.retransmits as f64),
            Metric::lower(
                "sender_cpu_per_gbit",
                "CPU ms/Gbit",
                self.sender_cpu_ns as f64 / 1e6 / gbit,
            ),
            Metric::lower(
                "receiver_cpu_per_gbit",
                "CPU ms/Gbit",
                self.receiver_cpu_ns as f64 / 1e6 / gbit,
            ),
            Metric::higher("gbit_moved", "Gbit", self.gigabits()),
        ]
    }
}

/// What one client thread did.
#[derive(Default)]
struct Side {
    bytes: u64,
    seconds: f64,
    cpu_ns: u64,
    retrans: u64,
}

/// Runs one stream test against the server at `addr`.
pub fn run_stream(
    addr: std::net::SocketAddr,
    hello: &Hello,
    opts: &SockOpts,
    time: Duration,
    cancel: &CancelToken,
) -> anyhow::Result<StreamTotals> {
    let mut test = TestConn::open(addr, hello)?;
    let mut connections = Vec::new();
    for index in 0..hello.data_connections() {
        connections.push(test.data(index, opts)?);
    }
    test.ready()?;
    let start = Instant::now();
    let deadline = start + time;
    let mut senders = Vec::new();
    let mut receivers = Vec::new();
    for (index, stream) in connections.into_iter().enumerate() {
        let cancel = cancel.clone();
        let msg = hello.msg_size;
        if (index as u32) < hello.up {
            senders.push(
                std::thread::Builder::new()
                    .name("net-send".into())
                    .spawn(move || send(&stream, msg, start, deadline, &cancel, addr))?,
            );
        } else {
            receivers.push(
                std::thread::Builder::new()
                    .name("net-receive".into())
                    .spawn(move || receive(&stream, msg, start, deadline, &cancel, addr))?,
            );
        }
    }
    // Every thread is joined before an error returns: none is left
    // running behind the trial.
    let sent: Vec<anyhow::Result<Side>> = senders.into_iter().map(join).collect();
    let server = if sent.iter().all(|s| s.is_ok()) {
        wait_until(deadline, cancel);
        test.stop()
    } else {
        // A failed sender (the peer gone) fails the trial now, not at its
        // deadline; closing the control connection ends the server's
        // side of the test, so that the receivers end too.
        drop(test);
        Err(anyhow!("a sender failed"))
    };
    let received: Vec<anyhow::Result<Side>> = receivers.into_iter().map(join).collect();
    let sent = sent.into_iter().collect::<anyhow::Result<Vec<Side>>>()?;
    let received = received
        .into_iter()
        .collect::<anyhow::Result<Vec<Side>>>()?;
    let server = server?;
    if server.len() != hello.data_connections() as usize {
        bail!(
            "the peer {addr} reported {} streams, not {}",
            server.len(),
            hello.data_connections()
        );
    }
    let mut totals = StreamTotals::default();
    for (side, peer) in sent.iter().zip(&server) {
        totals.bytes_sent_up += side.bytes;
        totals.bytes_received_up += peer.count;
        totals.bits_per_sec += peer.count as f64 * 8.0 / side.seconds.max(1e-9);
        totals.retransmits += side.retrans;
        totals.sender_cpu_ns += side.cpu_ns;
        totals.receiver_cpu_ns += peer.cpu_ns;
    }
    for (side, peer) in received.iter().zip(&server[hello.up as usize..]) {
        totals.bytes_received_down += side.bytes;
        totals.bits_per_sec += side.bytes as f64 * 8.0 / side.seconds.max(1e-9);
        totals.retransmits += peer.retrans;
        totals.sender_cpu_ns += peer.cpu_ns;
        totals.receiver_cpu_ns += side.cpu_ns;
    }
    if totals.bytes_sent_up != totals.bytes_received_up {
        bail!(
            "the peer {addr} received {} bytes of the {} sent: TCP lost data, or the peer stopped early",
            totals.bytes_received_up,
            totals.bytes_sent_up
        );
    }
    Ok(totals)
}

/// Writes until the deadline, then closes its side.
fn send(
    stream: &TcpStream,
    msg: u32,
    start: Instant,
    deadline: Instant,
    cancel: &CancelToken,
    addr: std::net::SocketAddr,
) -> anyhow::Result<Side> {
    let cpu = thread_cpu_ns();
    let buf = vec![0xa5u8; msg as usize];
    let (bytes, failed) = write_until(stream, &buf, || {
        Instant::now() >= deadline || cancel.is_cancelled()
    });
    if let Some(e) = failed {
        return Err(gone(addr, "sending", e));
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_ns = thread_cpu_ns().saturating_sub(cpu);
    let retrans = total_retrans(stream);
    stream
        .shutdown(Shutdown::Write)
        .map_err(|e| gone(addr, "ending the stream", e))?;
    Ok(Side {
        bytes,
        seconds,
        cpu_ns,
        retrans,
    })
}

/// Reads until the peer closes its side; counts what arrived before the
/// deadline.
fn receive(
    mut stream: &TcpStream,
    msg: u32,
    start: Instant,
    deadline: Instant,
    cancel: &CancelToken,
    addr: std::net::SocketAddr,
) -> anyhow::Result<Side> {
    let cpu = thread_cpu_ns();
    let mut buf = vec![0u8; msg as usize];
    let mut bytes = 0u64;
    let mut side: Option<Side> = None;
    loop {
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(gone(addr, "receiving", e)),
        };
        if side.is_none() && (Instant::now() >= deadline || cancel.is_cancelled()) {
            side = Some(Side {
                bytes,
                seconds: start.elapsed().as_secs_f64(),
                cpu_ns: thread_cpu_ns().saturating_sub(cpu),
                retrans: 0,
            });
        }
        if n == 0 {
            break;
        }
        bytes += n as u64;
    }
    match side {
        Some(side) => Ok(side),
        None => Err(anyhow!(
            "the peer {addr} ended its stream before the trial's end (was it stopped or killed?)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_congestion_control_is_checked_with_the_kernel_before_any_trial() {
        // reno is built into every kernel and always allowed.
        assert_eq!(check_congestion("net.stream", "reno").unwrap(), "reno");
        assert_eq!(check_congestion("net.stream", "default").unwrap(), "");
        // A name no kernel has fails here, for root too, naming what
        // this host has.
        let err = check_congestion("net.stream", "nosuch")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("net.stream: congestion=nosuch cannot be set on this host (")
                && err.contains("; loaded: ")
                && err.contains("reno"),
            "{err}"
        );
        let err = check_congestion("net.stream", "a-b")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is not the name of a congestion control"),
            "{err}"
        );
    }

    #[test]
    fn socket_options_read_as_parameters_in_messages() {
        let opts = SockOpts {
            sock_buf: 0,
            congestion: String::new(),
            nagle: true,
        };
        assert_eq!(
            opts.to_string(),
            "sock_buf=auto congestion=default nagle=on"
        );
        let opts = SockOpts {
            sock_buf: 262_144,
            congestion: "bbr".to_string(),
            nagle: false,
        };
        assert_eq!(opts.to_string(), "sock_buf=262144 congestion=bbr nagle=off");
    }
}

//! `net.udp`: a UDP stream paced at `rate`, iperf3's `-u` test. Each
//! datagram carries its sequence number and the time it was sent; the
//! peer counts what arrived, what came out of order, and the jitter as
//! RFC 1889 defines it (and iperf3 reports it). Loss is what was sent
//! less what arrived.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};

use super::client::{TestConn, join, wait_until};
use super::peer::PeerSide;
use super::proto::{DATAGRAM_HEADER, Hello, Mode};
use crate::engine::{
    CancelToken, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::workloads::common::params;

const ID: &str = "net.udp";
/// The largest UDP payload over IPv4.
const MAX_DATAGRAM: u64 = 65_507;

/// The `net.udp` workload.
pub struct NetUdp;

impl Workload for NetUdp {
    fn id(&self) -> &'static str {
        ID
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a paced UDP stream to a peer; compatible with iperf3 -u (Mbit/s received, loss, jitter)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        UdpParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = UdpParams::from_set(p);
        let rate = parse_rate(&p.rate)
            .ok_or_else(|| anyhow!("{ID}: rate={} is not a rate in bits per second with an optional K, M or G (decimal, as iperf3's -b), from 1K to 100G", p.rate))?;
        // Jitter is the spread of the gaps between datagrams: a trial must
        // send two of them, or it measures nothing. The first leaves at
        // the start, so a gap shorter than the trial gives a second.
        let gap = p.msg_size as f64 * 8.0 / rate;
        if gap >= p.time.as_secs_f64() {
            bail!(
                "{ID}: rate={} sends a datagram of msg_size={} bytes every {gap:.3} s, one in a trial of time={} s; \
                 a trial needs two at least: raise rate or time, or lower msg_size",
                p.rate,
                p.msg_size,
                p.time.as_secs_f64()
            );
        }
        Ok(Box::new(UdpCase {
            peer: PeerSide::parse(ID, &p.peer, p.port)?,
            rate_bps: rate,
            msg_size: p.msg_size as u32,
            streams: p.streams as u32,
            time: p.time,
            drop_every: 0,
        }))
    }
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        super::cpus_used()
    }
}

crate::workload_params! {
    /// The parameters of `net.udp`.
    pub struct UdpParams {
        peer: String = super::peer_param(),
        rate: String = ParamSpec {
            name: "rate",
            role: ParamRole::Other,
            help: "bits per second to send, per stream, with K, M or G (decimal; iperf3's -b)",
            kind: ParamKind::Text,
            default: "1G",
        },
        msg_size: u64 = ParamSpec {
            name: "msg_size",
            role: ParamRole::Other,
            help: "bytes per datagram (iperf3's -l)",
            kind: ParamKind::Size {
                min: DATAGRAM_HEADER as u64,
                max: MAX_DATAGRAM,
                power_of_two: false,
            },
            default: "1460",
        },
        streams: u64 = super::streams_param(),
        port: u64 = super::port_param(),
        time: Duration = params::time("10"),
    }
}

/// A rate as iperf3's -b takes it: bits per second with K, M or G
/// (powers of 1000).
pub fn parse_rate(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, scale) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1e3),
        'm' | 'M' => (&text[..text.len() - 1], 1e6),
        'g' | 'G' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    let rate = number.parse::<f64>().ok()? * scale;
    (rate.is_finite() && (1e3..=100e9).contains(&rate)).then_some(rate)
}

/// A case of `net.udp`.
pub struct UdpCase {
    pub peer: PeerSide,
    pub rate_bps: f64,
    pub msg_size: u32,
    pub streams: u32,
    pub time: Duration,
    /// For tests: the server drops every n-th datagram.
    pub drop_every: u32,
}

impl Case for UdpCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.start()
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let addr = self.peer.addr()?;
        let totals = run_udp(addr, self, &ctx.cancel)?;
        Ok(totals.output(self.msg_size))
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.stop();
        Ok(())
    }
}

/// What a UDP trial did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct UdpTotals {
    pub sent: u64,
    pub received: u64,
    pub out_of_order: u64,
    /// The mean of the receivers' jitters, nanoseconds.
    pub jitter_ns: f64,
    pub seconds: f64,
}

impl UdpTotals {
    /// Datagrams sent and not received.
    pub fn lost(&self) -> u64 {
        self.sent.saturating_sub(self.received)
    }

    fn output(&self, msg_size: u32) -> TrialOutput {
        let bits = self.received as f64 * f64::from(msg_size) * 8.0;
        TrialOutput {
            metrics: vec![
                Metric::higher(
                    "mbit_per_sec",
                    "Mbit/s",
                    bits / self.seconds.max(1e-9) / 1e6,
                ),
                Metric::lower(
                    "loss",
                    "%",
                    100.0 * self.lost() as f64 / (self.sent.max(1)) as f64,
                ),
                Metric::lower("jitter", "ms", self.jitter_ns / 1e6),
                Metric::lower("lost", "datagrams", self.lost() as f64),
                Metric::lower("out_of_order", "datagrams", self.out_of_order as f64),
                Metric::higher("sent", "datagrams", self.sent as f64),
            ],
            latency_ns: None,
        }
    }
}

/// Runs one UDP test against the server at `addr`.
pub fn run_udp(
    addr: SocketAddr,
    case: &UdpCase,
    cancel: &CancelToken,
) -> anyhow::Result<UdpTotals> {
    let hello = Hello {
        mode: Mode::Udp,
        up: 0,
        down: 0,
        msg_size: case.msg_size,
        req_size: 0,
        resp_size: 0,
        sock_buf: 0,
        drop_every: case.drop_every,
        congestion: String::new(),
    };
    let mut test = TestConn::open(addr, &hello)?;
    let target = SocketAddr::new(addr.ip(), test.udp_port);
    test.ready()?;
    let start = Instant::now();
    let deadline = start + case.time;
    let mut threads = Vec::new();
    for _ in 0..case.streams {
        let cancel = cancel.clone();
        let (rate, size) = (case.rate_bps, case.msg_size);
        threads.push(
            std::thread::Builder::new()
                .name("net-udp".into())
                .spawn(move || send_paced(target, rate, size, start, deadline, &cancel))?,
        );
    }
    let sent: Vec<anyhow::Result<u64>> = threads.into_iter().map(join).collect();
    let seconds = start.elapsed().as_secs_f64();
    wait_until(deadline, cancel);
    let server = test.stop()?;
    let sent = sent.into_iter().sum::<anyhow::Result<u64>>()?;
    let Some(receiver) = server.first() else {
        bail!("the peer {addr} reported no UDP receiver");
    };
    Ok(UdpTotals {
        sent,
        received: receiver.count,
        out_of_order: receiver.retrans,
        jitter_ns: receiver.jitter_ns as f64,
        seconds,
    })
}

/// The longest a sender sleeps between looks at the deadline and the
/// cancel token.
const MAX_NAP: Duration = Duration::from_millis(20);

/// Sends datagrams of `size` bytes at `rate` bits per second until the
/// deadline: each leaves when the rate says it is due, so a late one is
/// followed at once by the next (iperf3's pacing).
fn send_paced(
    target: SocketAddr,
    rate: f64,
    size: u32,
    start: Instant,
    deadline: Instant,
    cancel: &CancelToken,
) -> anyhow::Result<u64> {
    let bind: SocketAddr = if target.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let socket = UdpSocket::bind(bind).map_err(|e| anyhow!("binding a UDP socket: {e}"))?;
    socket
        .connect(target)
        .map_err(|e| anyhow!("the peer {target} is unreachable over UDP: {e}"))?;
    let interval = f64::from(size) * 8.0 / rate;
    let mut datagram = vec![0u8; size as usize];
    let mut seq = 0u64;
    loop {
        let now = Instant::now();
        if now >= deadline || cancel.is_cancelled() {
            break;
        }
        let due = start + Duration::from_secs_f64(seq as f64 * interval);
        if due > now {
            // Never past the deadline, and in short naps so that a cancel
            // is seen: at a low rate the next datagram may be due long
            // after the trial ends.
            let wait = due.min(deadline) - now;
            // Sleeping is coarse (tens of microseconds late); spin the
            // last stretch.
            if wait > Duration::from_micros(200) {
                std::thread::sleep((wait - Duration::from_micros(100)).min(MAX_NAP));
            }
            continue;
        }
        datagram[0..8].copy_from_slice(&seq.to_le_bytes());
        let sent_ns = start.elapsed().as_nanos() as u64;
        datagram[8..16].copy_from_slice(&sent_ns.to_le_bytes());
        // A full socket buffer or a refused port drops the datagram, as
        // the network would: it counts as sent and lost.
        let _ = socket.send(&datagram);
        seq += 1;
    }
    Ok(seq)
}

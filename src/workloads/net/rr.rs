//! `net.rr`: netperf's TCP_RR. Each stream is one connection on which a
//! request of `req_size` bytes goes out and a response of `resp_size`
//! bytes comes back, one at a time, for `time`: transactions per second
//! and the latency of each (its round trip).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use hdrhistogram::Histogram;

use super::client::{TestConn, gone, join, wait_until};
use super::peer::PeerSide;
use super::proto::{Hello, Mode};
use super::sock::SockOpts;
use crate::engine::{
    CancelToken, Case, CaseEnv, Metric, ParamSet, ParamSpec, Params, TrialContext, TrialOutput,
    Workload,
};
use crate::workloads::common::params;

/// `net.rr` or `net.crr`: one workload but for the id, the summary and
/// whether each transaction opens its own connection.
pub struct RrWorkload {
    pub id: &'static str,
    pub summary: &'static str,
    /// A new connection per transaction (`net.crr`).
    pub connect_each: bool,
}

/// The `net.rr` workload.
pub const NET_RR: RrWorkload = RrWorkload {
    id: "net.rr",
    summary: "request/response on one TCP connection per stream; compatible with netperf TCP_RR (transactions/s, latency)",
    connect_each: false,
};

impl Workload for RrWorkload {
    fn id(&self) -> &'static str {
        self.id
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn params(&self) -> Vec<ParamSpec> {
        RrParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = RrParams::from_set(p);
        Ok(Box::new(RrCase {
            peer: PeerSide::parse(self.id, &p.peer, p.port)?,
            streams: p.streams as u32,
            req_size: p.req_size as u32,
            resp_size: p.resp_size as u32,
            time: p.time,
            connect_each: self.connect_each,
        }))
    }
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        super::cpus_used()
    }
    fn latency_spectrum(&self) -> bool {
        true
    }
}

crate::workload_params! {
    /// The parameters of `net.rr` and `net.crr`.
    pub struct RrParams {
        peer: String = super::peer_param(),
        streams: u64 = super::streams_param(),
        req_size: u64 = super::message_param("req_size", "bytes of each request (netperf's -r, first)"),
        resp_size: u64 = super::message_param("resp_size", "bytes of each response (netperf's -r, second)"),
        port: u64 = super::port_param(),
        time: Duration = params::time("10"),
    }
}

/// A case of `net.rr` or `net.crr`.
pub struct RrCase {
    pub peer: PeerSide,
    pub streams: u32,
    pub req_size: u32,
    pub resp_size: u32,
    pub time: Duration,
    /// A new connection per transaction (`net.crr`).
    pub connect_each: bool,
}

impl Case for RrCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.start()
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let totals = run_rr(
            self.peer.addr()?,
            self.streams,
            self.req_size,
            self.resp_size,
            self.connect_each,
            self.time,
            &ctx.cancel,
        )?;
        Ok(totals.output())
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.peer.stop();
        Ok(())
    }
}

/// What a request/response trial did.
#[derive(Debug)]
pub struct RrTotals {
    /// Transactions the client completed (a response read in full).
    pub transactions: u64,
    /// Transactions the server answered.
    pub answered: u64,
    pub seconds: f64,
    pub latency_ns: Histogram<u64>,
}

impl RrTotals {
    fn output(self) -> TrialOutput {
        let us = |q: f64| self.latency_ns.value_at_quantile(q) as f64 / 1e3;
        let metrics = vec![
            Metric::higher(
                "transactions_per_sec",
                "transactions/s",
                self.transactions as f64 / self.seconds.max(1e-9),
            ),
            Metric::lower("latency_p50", "µs", us(0.50)),
            Metric::lower("latency_p99", "µs", us(0.99)),
            Metric::lower("latency_avg", "µs", self.latency_ns.mean() / 1e3),
            Metric::higher("transactions", "transactions", self.transactions as f64),
        ];
        TrialOutput {
            metrics,
            latency_ns: Some(self.latency_ns),
        }
    }
}

/// A histogram for round trips from 1 ns to a minute.
fn histogram() -> anyhow::Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| anyhow!("making a latency histogram: {e}"))
}

/// Runs one request/response test against the server at `addr`.
pub fn run_rr(
    addr: SocketAddr,
    streams: u32,
    req_size: u32,
    resp_size: u32,
    connect_each: bool,
    time: Duration,
    cancel: &CancelToken,
) -> anyhow::Result<RrTotals> {
    let hello = Hello {
        mode: if connect_each { Mode::Crr } else { Mode::Rr },
        up: if connect_each { 0 } else { streams },
        down: 0,
        msg_size: 0,
        req_size,
        resp_size,
        sock_buf: 0,
        drop_every: 0,
        congestion: String::new(),
    };
    let mut test = TestConn::open(addr, &hello)?;
    let mut connections = Vec::new();
    if !connect_each {
        for index in 0..streams {
            connections.push(test.data(index, &SockOpts::default())?);
        }
    }
    test.ready()?;
    let start = Instant::now();
    let deadline = start + time;
    let mut threads = Vec::new();
    for index in 0..streams as usize {
        let cancel = cancel.clone();
        let connection = connections
            .get(index)
            .map(TcpStream::try_clone)
            .transpose()?;
        let crr_header = test.crr_header();
        threads.push(
            std::thread::Builder::new()
                .name("net-rr".into())
                .spawn(move || match connection {
                    Some(stream) => transact(&stream, req_size, resp_size, deadline, &cancel, addr),
                    None => transact_connecting(
                        addr,
                        &crr_header,
                        req_size,
                        resp_size,
                        deadline,
                        &cancel,
                    ),
                })?,
        );
    }
    let results: Vec<anyhow::Result<(u64, Histogram<u64>)>> =
        threads.into_iter().map(join).collect();
    let seconds = start.elapsed().as_secs_f64();
    for stream in &connections {
        let _ = stream.shutdown(Shutdown::Write);
    }
    let server = if results.iter().all(|r| r.is_ok()) {
        wait_until(deadline, cancel);
        test.stop()
    } else {
        Err(anyhow!("a client failed"))
    };
    let mut totals = RrTotals {
        transactions: 0,
        answered: 0,
        seconds,
        latency_ns: histogram()?,
    };
    for result in results {
        let (count, latency) = result?;
        totals.transactions += count;
        totals
            .latency_ns
            .add(&latency)
            .map_err(|e| anyhow!("merging latency histograms: {e}"))?;
    }
    totals.answered = server?.iter().map(|s| s.count).sum();
    if totals.answered != totals.transactions {
        bail!(
            "the peer {addr} answered {} transactions, the client completed {}",
            totals.answered,
            totals.transactions
        );
    }
    Ok(totals)
}

/// Request, response, again, on one connection, until the deadline.
fn transact(
    mut stream: &TcpStream,
    req_size: u32,
    resp_size: u32,
    deadline: Instant,
    cancel: &CancelToken,
    addr: SocketAddr,
) -> anyhow::Result<(u64, Histogram<u64>)> {
    let request = vec![0x71u8; req_size as usize];
    let mut response = vec![0u8; resp_size as usize];
    transactions_until(deadline, cancel, || {
        stream
            .write_all(&request)
            .map_err(|e| gone(addr, "sending a request", e))?;
        stream
            .read_exact(&mut response)
            .map_err(|e| gone(addr, "waiting for a response", e))
    })
}

/// Connect, request, response, close, again, until the deadline.
fn transact_connecting(
    addr: SocketAddr,
    header: &[u8],
    req_size: u32,
    resp_size: u32,
    deadline: Instant,
    cancel: &CancelToken,
) -> anyhow::Result<(u64, Histogram<u64>)> {
    // The header and the request go out in one write, as one segment.
    let mut request = header.to_vec();
    request.resize(header.len() + req_size as usize, 0x71);
    let mut response = vec![0u8; resp_size as usize];
    let opts = SockOpts::default();
    transactions_until(deadline, cancel, || {
        let mut stream = super::sock::connect(addr, &opts)?;
        stream
            .write_all(&request)
            .map_err(|e| gone(addr, "sending a request", e))?;
        stream
            .read_exact(&mut response)
            .map_err(|e| gone(addr, "waiting for a response", e))?;
        // The server closes first (so that TIME_WAIT is on its side, not
        // among this host's ephemeral ports): wait for its end.
        let mut end = [0u8; 1];
        let _ = stream.read(&mut end);
        Ok(())
    })
}

/// Runs `transaction` again and again until the deadline or a
/// cancellation: how many ran, and the latency of each.
fn transactions_until(
    deadline: Instant,
    cancel: &CancelToken,
    mut transaction: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<(u64, Histogram<u64>)> {
    let mut latency = histogram()?;
    let mut count = 0u64;
    loop {
        let begun = Instant::now();
        if begun >= deadline || cancel.is_cancelled() {
            break;
        }
        transaction()?;
        latency.saturating_record(begun.elapsed().as_nanos() as u64);
        count += 1;
    }
    Ok((count, latency))
}

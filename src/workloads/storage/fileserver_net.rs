//! `fileserver.net`: the file-server mix as request/response messages over
//! loopback TCP, tbench's idea: it measures the network stack and the
//! scheduler with a file server's message pattern, and no disk at all.
//!
//! Every operation is one request and one response on the client's own
//! connection. A request is a 16-byte header (operation, payload length,
//! response length) followed by the payload: the data of a write, or the
//! path of a path operation; the response is an 8-byte header followed by
//! the data of a read. The server answers from a thread per connection, as
//! `tbench_srv` answers from a process per connection, and touches no file.
//! It listens on 127.0.0.1 only, on a port the kernel picks.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use anyhow::{Context, anyhow, bail};

use super::fileserver::{clients_param, load_limits, warmup_param};
use super::fileserver_load::{Executor, LoadLimits, run_load};
use super::fileserver_mix::{self, Op};
use crate::engine::{Case, CaseEnv, ParamSet, ParamSpec, TrialContext, TrialOutput, Workload};
use crate::workloads::common::params;

const REQUEST_HEADER: usize = 16;
const RESPONSE_HEADER: usize = 8;
/// Largest payload either side sends (the mix's largest transfer is 64 KiB).
const MAX_PAYLOAD: usize = 1 << 20;

/// The `fileserver.net` workload.
pub struct FileServerNet;

impl Workload for FileServerNet {
    fn id(&self) -> &'static str {
        "fileserver.net"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "the fileserver mix as request/response messages over loopback TCP, in tbench's spirit (own numbers)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![clients_param(), params::time("10"), warmup_param()]
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(NetCase {
            limits: load_limits(p),
            script: fileserver_mix::script(),
            server: None,
        }))
    }
}

struct NetCase {
    limits: LoadLimits,
    script: Vec<Op>,
    server: Option<Server>,
}

impl Case for NetCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.server = Some(Server::start()?);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let addr = self
            .server
            .as_ref()
            .ok_or_else(|| anyhow!("fileserver.net: trial before prepare"))?
            .addr;
        run_load(&self.limits, &ctx.cancel, &self.script, |_| {
            NetClient::connect(addr)
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        if let Some(server) = self.server.take() {
            server.stop();
        }
        Ok(())
    }
}

/// The loopback server: an accept thread and a thread per connection.
struct Server {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    accept: JoinHandle<()>,
}

impl Server {
    fn start() -> anyhow::Result<Self> {
        let listener =
            TcpListener::bind("127.0.0.1:0").context("fileserver.net: binding 127.0.0.1")?;
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let flag = stopping.clone();
        let accept = std::thread::Builder::new()
            .name("fileserver.net-accept".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let _ = std::thread::Builder::new()
                            .name("fileserver.net-conn".into())
                            .spawn(move || serve(stream));
                    }
                }
            })
            .context("fileserver.net: starting the server thread")?;
        Ok(Server {
            addr,
            stopping,
            accept,
        })
    }

    /// Stops accepting; connection threads end when their clients hang up.
    fn stop(self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking accept with one last connection.
        let _ = TcpStream::connect(self.addr);
        let _ = self.accept.join();
    }
}

/// Answers requests on one connection until the client hangs up.
fn serve(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut header = [0u8; REQUEST_HEADER];
    let mut buf = vec![0u8; MAX_PAYLOAD];
    loop {
        if stream.read_exact(&mut header).is_err() {
            return;
        }
        let payload = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes")) as usize;
        let reply = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")) as usize;
        if payload > MAX_PAYLOAD || reply > MAX_PAYLOAD - RESPONSE_HEADER {
            return;
        }
        if stream.read_exact(&mut buf[..payload]).is_err() {
            return;
        }
        buf[..RESPONSE_HEADER].copy_from_slice(&[0, 0, 0, 0, header[0], 0, 0, 0]);
        if stream.write_all(&buf[..RESPONSE_HEADER + reply]).is_err() {
            return;
        }
    }
}

/// One client connection.
struct NetClient {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl NetClient {
    fn connect(addr: SocketAddr) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(addr)
            .with_context(|| format!("fileserver.net: connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(NetClient {
            stream,
            buf: vec![0x5a; MAX_PAYLOAD],
        })
    }
}

impl Drop for NetClient {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Executor for NetClient {
    fn execute(&mut self, op: &Op) -> anyhow::Result<()> {
        let (payload, reply) = match op {
            Op::Write { len, .. } => (*len, 0),
            Op::Read { len, .. } => (0, *len),
            Op::Mkdir { path }
            | Op::Open { path, .. }
            | Op::OpenMissing { path }
            | Op::QPathInfo { path }
            | Op::SFileInfo { path }
            | Op::Unlink { path }
            | Op::Find { dir: path } => (path.len(), 0),
            Op::Rename { from, to } => (from.len() + to.len(), 0),
            _ => (0, 0),
        };
        let mut header = [0u8; REQUEST_HEADER];
        header[0] = op.kind().index() as u8;
        header[4..8].copy_from_slice(&(payload as u32).to_le_bytes());
        header[8..12].copy_from_slice(&(reply as u32).to_le_bytes());
        let sent = self
            .stream
            .write_all(&header)
            .and_then(|()| self.stream.write_all(&self.buf[..payload]));
        let received = sent.and_then(|()| {
            self.stream
                .read_exact(&mut self.buf[..RESPONSE_HEADER + reply])
        });
        match received {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                bail!("fileserver.net: the server closed the connection")
            }
            Err(e) => Err(e).context("fileserver.net: request failed"),
        }
    }
}

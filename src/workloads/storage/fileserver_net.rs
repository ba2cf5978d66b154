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
//!
//! Throughput counts what `fileserver` counts: the data a write sends and
//! the data a read gets back. The server has no files and sends back the
//! length asked for; the script never reads past the end of a file, so
//! that is what `fileserver`'s reads return for the same script.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use super::fileserver::{clients_param, load_limits, warmup_param};
use super::fileserver_load::{Executor, LoadLimits, run_load};
use super::fileserver_mix::{self, Op};
use crate::engine::{
    Case, CaseEnv, ParamSet, ParamSpec, Params, TrialContext, TrialOutput, Workload,
};
use crate::sys::fd_limit::ensure_open_files;
use crate::workloads::common::params;

const REQUEST_HEADER: usize = 16;
const RESPONSE_HEADER: usize = 8;
/// Largest payload either side sends (the mix's largest transfer is 64 KiB).
const MAX_PAYLOAD: usize = 1 << 20;
/// Longest the accept loop waits for a connection before it looks at the
/// stop flag again: what bounds [`Server::stop`].
const ACCEPT_POLL: Duration = Duration::from_millis(50);
/// Descriptors needed beyond the two per client (its socket and the
/// server's): the listener, the results store, standard streams and the
/// like.
const SPARE_FDS: u64 = 64;

/// The `fileserver.net` workload.
pub struct FileServerNet;

impl Workload for FileServerNet {
    fn id(&self) -> &'static str {
        "fileserver.net"
    }
    fn version(&self) -> u32 {
        // 2: the script's reads no longer run past the end of a file, so
        // fewer bytes are read per loop than in version 1 (whose MB/s
        // also disagreed with `fileserver`'s for the same script).
        2
    }
    fn summary(&self) -> &'static str {
        "the fileserver mix as request/response messages over loopback TCP, in tbench's spirit (own numbers)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        FileServerNetParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = FileServerNetParams::from_set(p);
        let limits = load_limits(p.clients, p.warmup, p.time);
        // Every connection is a descriptor at each end, both in this
        // process.
        let needed = 2 * limits.clients as u64 + SPARE_FDS;
        ensure_open_files(needed).map_err(|e| {
            anyhow!(
                "fileserver.net: {} clients need {needed} open files (a socket at each end of every connection): {e:#}",
                limits.clients
            )
        })?;
        Ok(Box::new(NetCase {
            limits,
            script: fileserver_mix::script(),
            server: None,
        }))
    }

    /// A server and its load generator run together, each with threads
    /// of its own: more than the parameters count.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        None
    }
}

crate::workload_params! {
    /// The parameters of `fileserver.net`.
    pub struct FileServerNetParams {
        clients: u64 = clients_param(),
        time: f64 = params::time("10"),
        warmup: f64 = warmup_param(),
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
    /// Ends with the connections still open when it stopped.
    accept: JoinHandle<Vec<Connection>>,
}

/// One accepted connection and the thread answering it.
struct Connection {
    /// Shared with the thread, so that [`Server::stop`] can shut it down.
    stream: Arc<TcpStream>,
    thread: JoinHandle<()>,
}

impl Server {
    fn start() -> anyhow::Result<Self> {
        let listener =
            TcpListener::bind("127.0.0.1:0").context("fileserver.net: binding 127.0.0.1")?;
        // Non-blocking, so the accept loop never blocks for longer than
        // one ACCEPT_POLL and always sees the stop flag.
        listener
            .set_nonblocking(true)
            .context("fileserver.net: making the listener non-blocking")?;
        let addr = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let flag = stopping.clone();
        let accept = std::thread::Builder::new()
            .name("fileserver.net-accept".into())
            .spawn(move || accept_loop(&listener, &flag))
            .context("fileserver.net: starting the server thread")?;
        Ok(Server {
            addr,
            stopping,
            accept,
        })
    }

    /// Stops accepting, shuts down the connections still open and joins
    /// every thread. Bounded: the accept loop sees the flag within one
    /// [`ACCEPT_POLL`], and a shut-down socket ends any read or write its
    /// thread is blocked in.
    fn stop(self) {
        self.stopping.store(true, Ordering::SeqCst);
        let connections = self.accept.join().unwrap_or_default();
        for connection in &connections {
            let _ = connection.stream.shutdown(Shutdown::Both);
        }
        for connection in connections {
            let _ = connection.thread.join();
        }
    }
}

/// Accepts connections until `stopping`, each answered by its own thread;
/// returns those still open.
fn accept_loop(listener: &TcpListener, stopping: &AtomicBool) -> Vec<Connection> {
    let mut connections: Vec<Connection> = Vec::new();
    while !stopping.load(Ordering::SeqCst) {
        // Forget connections whose client hung up, closing our end, so
        // that descriptors do not pile up from trial to trial.
        connections.retain(|c| !c.thread.is_finished());
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(false).is_err() {
                    continue;
                }
                let stream = Arc::new(stream);
                let theirs = stream.clone();
                let spawned = std::thread::Builder::new()
                    .name("fileserver.net-conn".into())
                    .spawn(move || serve(&theirs));
                match spawned {
                    Ok(thread) => connections.push(Connection { stream, thread }),
                    // The client sees the connection close and says so.
                    Err(_) => {
                        let _ = stream.shutdown(Shutdown::Both);
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait_for_connection(listener),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Out of descriptors or the like: try again later, without
            // spinning.
            Err(_) => std::thread::sleep(ACCEPT_POLL),
        }
    }
    connections
}

/// Waits until a connection is pending on `listener` or [`ACCEPT_POLL`]
/// has passed.
fn wait_for_connection(listener: &TcpListener) {
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for a descriptor that stays open during
    // the call. Errors (EINTR) just end the wait early.
    unsafe { libc::poll(&mut fd, 1, ACCEPT_POLL.as_millis() as libc::c_int) };
}

/// Answers requests on one connection until the client hangs up or the
/// server shuts the connection down.
fn serve(stream: &TcpStream) {
    let mut stream = stream;
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
    fn execute(&mut self, op: &Op) -> anyhow::Result<u64> {
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
            // The data of a write went out, the data of a read came back.
            Ok(()) => Ok(match op {
                Op::Write { .. } => payload as u64,
                Op::Read { .. } => reply as u64,
                _ => 0,
            }),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                bail!("fileserver.net: the server closed the connection")
            }
            Err(e) => Err(e).context("fileserver.net: request failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_read_counts_what_comes_back_and_stop_is_bounded_with_connections_open() {
        let server = Server::start().unwrap();
        let mut client = NetClient::connect(server.addr).unwrap();
        let read = Op::Read {
            handle: 0,
            offset: 0,
            len: 4096,
        };
        assert_eq!(client.execute(&read).unwrap(), 4096);
        // A client that connects and then sends nothing: its connection
        // thread is blocked in a read when the server stops.
        let idle = TcpStream::connect(server.addr).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        server.stop();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        // The server's ends are shut down: both clients see the end.
        let mut byte = [0u8; 1];
        assert_eq!((&idle).read(&mut byte).unwrap_or(0), 0);
        let err = client.execute(&read).unwrap_err();
        assert!(err.to_string().contains("fileserver.net"), "{err:#}");
    }

    #[test]
    fn an_impossible_number_of_clients_names_the_open_file_limit() {
        let w = FileServerNet;
        let mut assignments = std::collections::BTreeMap::new();
        assignments.insert("clients".to_string(), vec!["4096".to_string()]);
        let params =
            crate::engine::params::resolve_cases(w.id(), &w.params(), &assignments, 1).unwrap();
        let env = CaseEnv {
            cpus: vec![0],
            total_cache_bytes: 0,
            memory_bytes: 0,
        };
        // 4096 clients need 8256 descriptors: fine where the hard limit
        // allows it (then the soft limit is raised), else a clear error.
        match w.build(&params[0], &env) {
            Ok(_) => {}
            Err(e) => {
                let e = format!("{e:#}");
                assert!(e.contains("RLIMIT_NOFILE") && e.contains("8256"), "{e}");
            }
        }
    }
}

//! The server side of the `net.*` workloads: a listener whose accept
//! thread hands each control connection a thread of its own, which runs
//! the test it describes (see [`super::proto`]). Runs inside sledge for
//! `peer=local`, and alone as `sledge __net-serve` on a peer.
//!
//! Stopping is bounded: every socket a test uses is registered, and
//! [`Server::stop`] shuts them all down, which ends any read or write a
//! worker is blocked in; then it joins every thread.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::proto::{Header, Hello, Kind, Mode, READY, STOP, Welcome, WorkerStats, write_stats};
use super::sock::{IO_TIMEOUT, SockOpts, thread_cpu_ns, timed_out, total_retrans, write_until};

/// Longest the accept loop waits before it looks at the stop flag again.
const ACCEPT_POLL_MS: i32 = 50;
/// How long a test waits for its data connections.
const DATA_WAIT: Duration = Duration::from_secs(10);
/// How often the UDP receiver looks at its test's stop flag.
const UDP_POLL: Duration = Duration::from_millis(20);
/// Most data connections one test may ask for.
pub const MAX_CONNECTIONS: u32 = 1024;
/// Largest message, request or response a test may ask for.
pub const MAX_MESSAGE: u32 = 64 << 20;

/// What `sledge __net-serve`'s line on standard output starts with,
/// before the address it listens on (how sledge learns the port a server
/// it started on a peer got).
pub const LISTENING: &str = "sledge net server listening on ";

/// A running server.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// What the accept thread and the tests' threads share.
struct Shared {
    stopping: AtomicBool,
    next_test: AtomicU32,
    tests: Mutex<HashMap<u32, Slot>>,
    /// Every socket in use, by a key, so that stopping can shut them down.
    sockets: Mutex<HashMap<u64, TcpStream>>,
    next_socket: AtomicU64,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// A test waiting for or running its data connections.
struct Slot {
    data: Sender<(u32, TcpStream)>,
    crr_done: Arc<AtomicU64>,
    req_size: u32,
    resp_size: u32,
    opts: SockOpts,
}

/// Removes a socket from the registry when its user is done with it.
struct Registered {
    shared: Arc<Shared>,
    key: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut sockets) = self.shared.sockets.lock() {
            sockets.remove(&self.key);
        }
    }
}

impl Shared {
    fn register(self: &Arc<Self>, stream: &TcpStream) -> std::io::Result<Registered> {
        let key = self.next_socket.fetch_add(1, Ordering::SeqCst);
        let clone = stream.try_clone()?;
        if let Ok(mut sockets) = self.sockets.lock() {
            sockets.insert(key, clone);
        }
        if self.stopping.load(Ordering::SeqCst) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        Ok(Registered {
            shared: self.clone(),
            key,
        })
    }

    fn spawn(&self, name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let handle = std::thread::Builder::new().name(name.into()).spawn(f)?;
        if let Ok(mut threads) = self.threads.lock() {
            threads.retain(|t| !t.is_finished());
            threads.push(handle);
        }
        Ok(())
    }
}

impl Server {
    /// Listens on `addr` (port 0: one the kernel picks) and starts the
    /// accept thread.
    pub fn start(addr: SocketAddr) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            if e.kind() == ErrorKind::AddrInUse {
                anyhow::anyhow!(
                    "the port {} of {} is in use by another program; choose another with port=N, or port=0 to let the kernel pick one",
                    addr.port(),
                    addr.ip()
                )
            } else {
                anyhow::Error::new(e).context(format!("listening on {addr}"))
            }
        })?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            next_test: AtomicU32::new(1),
            tests: Mutex::new(HashMap::new()),
            sockets: Mutex::new(HashMap::new()),
            next_socket: AtomicU64::new(0),
            threads: Mutex::new(Vec::new()),
        });
        let for_thread = shared.clone();
        let accept = std::thread::Builder::new()
            .name("net-accept".into())
            .spawn(move || accept_loop(&listener, &for_thread))
            .context("starting the net server's thread")?;
        Ok(Server {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, shuts down every socket in use and joins every
    /// thread.
    pub fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // Until no thread is left: a test's thread may register a socket
        // or start a worker while the first ones are being shut down.
        loop {
            if let Ok(sockets) = self.shared.sockets.lock() {
                for socket in sockets.values() {
                    let _ = socket.shutdown(Shutdown::Both);
                }
            }
            let threads: Vec<JoinHandle<()>> = match self.shared.threads.lock() {
                Ok(mut threads) => threads.drain(..).collect(),
                Err(_) => Vec::new(),
            };
            if threads.is_empty() {
                break;
            }
            for thread in threads {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stopping.load(Ordering::SeqCst) {
        let mut poll = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, valid for the call.
        let ready = unsafe { libc::poll(&mut poll, 1, ACCEPT_POLL_MS) };
        if ready <= 0 {
            continue;
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
        let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
        let _ = stream.set_nodelay(true);
        let mut header = [0u8; Header::LEN];
        if (&stream).read_exact(&mut header).is_err() {
            continue;
        }
        let Ok(header) = Header::decode(&header) else {
            continue;
        };
        match header.kind {
            Kind::Control => {
                let for_test = shared.clone();
                let _ = shared.spawn("net-test", move || {
                    let _ = serve_test(stream, &for_test);
                });
            }
            Kind::Data => {
                if let Ok(tests) = shared.tests.lock()
                    && let Some(slot) = tests.get(&header.test)
                {
                    let _ = slot.data.send((header.index, stream));
                }
            }
            // Answered here, one after the other, as netserver answers
            // TCP_CRR from one process: a thread per connection would
            // cost more than the transaction.
            Kind::Crr => {
                let slot = shared.tests.lock().ok().and_then(|tests| {
                    tests.get(&header.test).map(|slot| {
                        (
                            slot.req_size,
                            slot.resp_size,
                            slot.crr_done.clone(),
                            slot.opts.clone(),
                        )
                    })
                });
                if let Some((req, resp, done, opts)) = slot {
                    let _ = opts.apply_stream(&stream);
                    if answer_once(&stream, req, resp).is_ok() {
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        }
    }
}

/// Reads one request and writes one response.
fn answer_once(mut stream: &TcpStream, req: u32, resp: u32) -> std::io::Result<()> {
    let mut request = vec![0u8; req as usize];
    stream.read_exact(&mut request)?;
    stream.write_all(&vec![0u8; resp as usize])
}

/// Runs the test a control connection asks for, from its hello to its
/// results.
fn serve_test(mut control: TcpStream, shared: &Arc<Shared>) -> anyhow::Result<()> {
    let _registered = shared.register(&control)?;
    let mut hello = [0u8; Hello::LEN];
    control.read_exact(&mut hello)?;
    let hello = Hello::decode(&hello)?;
    let id = shared.next_test.fetch_add(1, Ordering::SeqCst);
    let refusal = refuse(&hello);
    let udp = if refusal.is_none() && hello.mode == Mode::Udp {
        let ip = control.local_addr()?.ip();
        Some(UdpSocket::bind(SocketAddr::new(ip, 0))?)
    } else {
        None
    };
    let udp_port = match &udp {
        Some(socket) => socket.local_addr()?.port(),
        None => 0,
    };
    let opts = SockOpts {
        sock_buf: hello.sock_buf,
        congestion: hello.congestion.clone(),
        // A bulk stream's sender leaves Nagle on, as iperf3 does.
        nagle: hello.mode == Mode::Stream,
    };
    let (tx, rx) = channel();
    let crr_done = Arc::new(AtomicU64::new(0));
    if let Ok(mut tests) = shared.tests.lock() {
        tests.insert(
            id,
            Slot {
                data: tx,
                crr_done: crr_done.clone(),
                req_size: hello.req_size,
                resp_size: hello.resp_size,
                opts: opts.clone(),
            },
        );
    }
    // The slot is there before the client hears of the test: its data
    // connections may arrive at once.
    let welcome = Welcome {
        test: id,
        udp_port,
        refusal: refusal.clone().unwrap_or_default(),
    };
    let result = match refusal {
        Some(refusal) => control
            .write_all(&welcome.encode())
            .map_err(anyhow::Error::from)
            .and_then(|()| Err(anyhow::anyhow!("{refusal}"))),
        None => control
            .write_all(&welcome.encode())
            .map_err(anyhow::Error::from)
            .and_then(|()| run_test(&mut control, shared, &hello, &opts, &rx, udp, &crr_done)),
    };
    if let Ok(mut tests) = shared.tests.lock() {
        tests.remove(&id);
    }
    result
}

/// Why the server will not run a test, if it will not.
fn refuse(hello: &Hello) -> Option<String> {
    if hello.data_connections() > MAX_CONNECTIONS {
        return Some(format!(
            "{} data connections asked for, at most {MAX_CONNECTIONS}",
            hello.data_connections()
        ));
    }
    if [hello.msg_size, hello.req_size, hello.resp_size]
        .iter()
        .any(|size| *size > MAX_MESSAGE)
    {
        return Some(format!("a message larger than {MAX_MESSAGE} bytes"));
    }
    None
}

/// What one worker of a test does.
#[derive(Clone, Copy)]
enum Work {
    Sink,
    Source,
    Respond,
}

#[allow(clippy::too_many_arguments)]
fn run_test(
    control: &mut TcpStream,
    shared: &Arc<Shared>,
    hello: &Hello,
    opts: &SockOpts,
    rx: &Receiver<(u32, TcpStream)>,
    udp: Option<UdpSocket>,
    crr_done: &AtomicU64,
) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers: Vec<JoinHandle<WorkerStats>> = Vec::new();
    let mut registered = Vec::new();
    let wanted = match hello.mode {
        Mode::Stream | Mode::Rr => hello.data_connections(),
        Mode::Crr | Mode::Udp => 0,
    };
    let mut streams: Vec<Option<TcpStream>> = (0..wanted).map(|_| None).collect();
    let deadline = Instant::now() + DATA_WAIT;
    let mut got = 0;
    while got < wanted {
        let left = deadline.saturating_duration_since(Instant::now());
        let (index, stream) = rx
            .recv_timeout(left)
            .context("waiting for the test's data connections")?;
        if let Some(place) = streams.get_mut(index as usize)
            && place.is_none()
        {
            *place = Some(stream);
            got += 1;
        }
    }
    for (index, stream) in streams.into_iter().enumerate() {
        let Some(stream) = stream else { continue };
        opts.apply_stream(&stream)?;
        registered.push(shared.register(&stream)?);
        let work = match hello.mode {
            Mode::Rr => Work::Respond,
            _ if (index as u32) < hello.up => Work::Sink,
            _ => Work::Source,
        };
        let (msg, req, resp) = (hello.msg_size, hello.req_size, hello.resp_size);
        let stop = stop.clone();
        workers.push(
            std::thread::Builder::new()
                .name("net-worker".into())
                .spawn(move || match work {
                    Work::Sink => sink(&stream, msg),
                    Work::Source => source(&stream, msg, &stop),
                    Work::Respond => respond(&stream, req, resp),
                })?,
        );
    }
    if let Some(socket) = udp {
        let stop = stop.clone();
        let drop_every = hello.drop_every;
        workers.push(
            std::thread::Builder::new()
                .name("net-udp".into())
                .spawn(move || receive_datagrams(&socket, &stop, drop_every))?,
        );
    }
    control.write_all(&[READY])?;
    let mut byte = [0u8; 1];
    // The trial runs while this waits: no read timeout but the stop of
    // the whole server, which shuts the connection down.
    control.set_read_timeout(None)?;
    let stopped = control.read_exact(&mut byte);
    stop.store(true, Ordering::SeqCst);
    let mut stats: Vec<WorkerStats> = workers
        .into_iter()
        .map(|w| w.join().unwrap_or_default())
        .collect();
    drop(registered);
    stopped.context("waiting for the client's stop")?;
    if byte[0] != STOP {
        bail!("the client sent {} instead of its stop", byte[0]);
    }
    if hello.mode == Mode::Crr {
        stats.push(WorkerStats {
            count: crr_done.load(Ordering::SeqCst),
            ..WorkerStats::default()
        });
    }
    control.set_read_timeout(Some(IO_TIMEOUT))?;
    write_stats(control, &stats)?;
    Ok(())
}

/// Reads and discards until the client closes its side.
fn sink(mut stream: &TcpStream, msg: u32) -> WorkerStats {
    let cpu = thread_cpu_ns();
    let mut buf = vec![0u8; msg.max(1) as usize];
    let mut count = 0u64;
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => count += n as u64,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    WorkerStats {
        count,
        cpu_ns: thread_cpu_ns().saturating_sub(cpu),
        ..WorkerStats::default()
    }
}

/// Writes until the test stops (or the client is gone: the client sees
/// that itself), then closes its side.
fn source(stream: &TcpStream, msg: u32, stop: &AtomicBool) -> WorkerStats {
    let cpu = thread_cpu_ns();
    let buf = vec![0x5au8; msg.max(1) as usize];
    let (count, _) = write_until(stream, &buf, || stop.load(Ordering::SeqCst));
    let _ = stream.shutdown(Shutdown::Write);
    WorkerStats {
        count,
        cpu_ns: thread_cpu_ns().saturating_sub(cpu),
        retrans: total_retrans(stream),
        jitter_ns: 0,
    }
}

/// Answers requests until the client closes its side.
fn respond(mut stream: &TcpStream, req: u32, resp: u32) -> WorkerStats {
    let cpu = thread_cpu_ns();
    let mut request = vec![0u8; req as usize];
    let response = vec![0u8; resp as usize];
    let mut count = 0u64;
    while stream.read_exact(&mut request).is_ok() {
        if stream.write_all(&response).is_err() {
            break;
        }
        count += 1;
    }
    WorkerStats {
        count,
        cpu_ns: thread_cpu_ns().saturating_sub(cpu),
        ..WorkerStats::default()
    }
}

/// Receives the test's datagrams until it stops, counting them, those out
/// of order, and their jitter as RFC 1889 (and iperf3) define it: the
/// mean deviation of the difference in transit time of successive
/// datagrams, smoothed by 1/16.
fn receive_datagrams(socket: &UdpSocket, stop: &AtomicBool, drop_every: u32) -> WorkerStats {
    let cpu = thread_cpu_ns();
    let origin = Instant::now();
    let _ = socket.set_read_timeout(Some(UDP_POLL));
    let mut buf = vec![0u8; 65_536];
    let mut stats = WorkerStats::default();
    let mut seen = 0u64;
    let mut next_seq = 0u64;
    let mut last_transit: Option<f64> = None;
    let mut jitter = 0.0f64;
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if stopping {
            // Whatever is queued already arrived before the stop.
            let _ = socket.set_nonblocking(true);
        }
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) if stopping => break,
            Err(e) if timed_out(&e) => continue,
            Err(_) => break,
        };
        let arrival = origin.elapsed().as_nanos() as f64;
        seen += 1;
        if drop_every > 0 && seen.is_multiple_of(u64::from(drop_every)) {
            continue;
        }
        if n < super::proto::DATAGRAM_HEADER {
            continue;
        }
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&buf[0..8]);
        let seq = u64::from_le_bytes(seq);
        let mut sent = [0u8; 8];
        sent.copy_from_slice(&buf[8..16]);
        let sent = u64::from_le_bytes(sent) as f64;
        stats.count += 1;
        if seq < next_seq {
            stats.retrans += 1;
        } else {
            next_seq = seq + 1;
        }
        let transit = arrival - sent;
        if let Some(last) = last_transit {
            jitter += ((transit - last).abs() - jitter) / 16.0;
        }
        last_transit = Some(transit);
    }
    stats.jitter_ns = jitter as u64;
    stats.cpu_ns = thread_cpu_ns().saturating_sub(cpu);
    stats
}

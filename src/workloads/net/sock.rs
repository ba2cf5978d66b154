//! Socket options and per-thread CPU time for the `net.*` workloads.

use std::io::Write as _;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use anyhow::Context;
use socket2::{Domain, Protocol, Socket, Type};

/// The options both ends set on their TCP sockets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SockOpts {
    /// SO_SNDBUF and SO_RCVBUF; 0 leaves them to autotuning.
    pub sock_buf: u32,
    /// TCP_CONGESTION; empty: the system's default.
    pub congestion: String,
    /// Leaves Nagle's algorithm on (no TCP_NODELAY), as iperf3's default
    /// test does for its bulk streams: over a veth pair, TCP_NODELAY on a
    /// stream of 128 KiB writes doubled iperf3's own one-stream rate
    /// (23.7 against 52.3 Gbit/s), so a stream with it set is not
    /// iperf3's test. Request/response connections set TCP_NODELAY, as
    /// sockperf does, so that a small request is sent at once.
    pub nagle: bool,
}

impl SockOpts {
    /// Applies the options to a socket.
    pub fn apply(&self, socket: &Socket) -> std::io::Result<()> {
        if self.sock_buf > 0 {
            socket.set_send_buffer_size(self.sock_buf as usize)?;
            socket.set_recv_buffer_size(self.sock_buf as usize)?;
        }
        if !self.congestion.is_empty() {
            socket.set_tcp_congestion(self.congestion.as_bytes())?;
        }
        socket.set_tcp_nodelay(!self.nagle)?;
        Ok(())
    }

    /// Applies the options to an accepted stream.
    pub fn apply_stream(&self, stream: &TcpStream) -> std::io::Result<()> {
        let socket = socket2::SockRef::from(stream);
        if self.sock_buf > 0 {
            socket.set_send_buffer_size(self.sock_buf as usize)?;
            socket.set_recv_buffer_size(self.sock_buf as usize)?;
        }
        if !self.congestion.is_empty() {
            socket.set_tcp_congestion(self.congestion.as_bytes())?;
        }
        stream.set_nodelay(!self.nagle)
    }
}

/// `sock_buf=262144 congestion=bbr nagle=on`, as messages name them;
/// `sock_buf=0` and an empty congestion read as `auto` and `default`.
impl std::fmt::Display for SockOpts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.sock_buf {
            0 => write!(f, "sock_buf=auto")?,
            n => write!(f, "sock_buf={n}")?,
        }
        match self.congestion.as_str() {
            "" => write!(f, " congestion=default")?,
            name => write!(f, " congestion={name}")?,
        }
        write!(f, " nagle={}", if self.nagle { "on" } else { "off" })
    }
}

/// How long a connection attempt may take before the peer counts as
/// unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a read or write may block before the peer counts as gone:
/// what bounds every wait on the other end.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a stream's write may block before its loop looks at the
/// clock and the stop again.
pub const WRITE_POLL: Duration = Duration::from_millis(50);

/// Writes `buf` again and again until `done()`: the bytes queued, and
/// the error that ended the writing before that, if one did.
///
/// A write blocks until all of `buf` is queued, which through a small
/// window (a small `sock_buf`) can take seconds. With the socket's write
/// timeout at [`WRITE_POLL`], a blocked write returns what it queued by
/// then, or a timeout with nothing queued, and `done` is asked again: no
/// write runs more than [`WRITE_POLL`] past the end. A peer that takes
/// nothing for [`IO_TIMEOUT`] is gone. The timeout costs nothing while
/// no write waits that long, as none does at speed.
pub fn write_until(
    mut stream: &TcpStream,
    buf: &[u8],
    done: impl Fn() -> bool,
) -> (u64, Option<std::io::Error>) {
    if let Err(e) = stream.set_write_timeout(Some(WRITE_POLL)) {
        return (0, Some(e));
    }
    let mut bytes = 0u64;
    let mut stalled_since: Option<std::time::Instant> = None;
    while !done() {
        match stream.write(buf) {
            Ok(n) => {
                bytes += n as u64;
                stalled_since = None;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => {
                let since = *stalled_since.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() >= IO_TIMEOUT {
                    return (bytes, Some(e));
                }
            }
            Err(e) => return (bytes, Some(e)),
        }
    }
    (bytes, None)
}

/// Whether `e` is a socket timeout (SO_RCVTIMEO or SO_SNDTIMEO ran out,
/// which Linux reports as EAGAIN).
pub fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Connects to `addr` with the options set before the handshake (so
/// that the window scale follows the buffer size), and the I/O timeouts.
pub fn connect(addr: SocketAddr, opts: &SockOpts) -> anyhow::Result<TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .context("creating a TCP socket")?;
    opts.apply(&socket)
        .with_context(|| format!("setting the socket options ({opts})"))?;
    socket
        .connect_timeout(&addr.into(), CONNECT_TIMEOUT)
        .with_context(|| format!("connecting to the peer {addr}"))?;
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(stream)
}

/// The segments a TCP socket retransmitted in its life
/// (TCP_INFO's `tcpi_total_retrans`); 0 when the kernel will not say.
pub fn total_retrans(stream: &TcpStream) -> u64 {
    // SAFETY: tcp_info is plain data; getsockopt writes at most `len`
    // bytes into it and says how many.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        if rc == 0 {
            u64::from(info.tcpi_total_retrans)
        } else {
            0
        }
    }
}

/// CPU time the calling thread used so far, nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The congestion-control algorithms an unprivileged socket may choose
/// on this host, or `None` when the kernel does not list them.
pub fn allowed_congestion() -> Option<Vec<String>> {
    congestion_list("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
}

/// The congestion-control algorithms the kernel has loaded, or `None`
/// when it does not list them.
pub fn available_congestion() -> Option<Vec<String>> {
    congestion_list("/proc/sys/net/ipv4/tcp_available_congestion_control")
}

fn congestion_list(file: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(file).ok()?;
    Some(text.split_whitespace().map(str::to_string).collect())
}

/// Sets congestion control `name` on a socket that is never connected:
/// what the kernel will say of the trial's sockets. An unprivileged
/// process may choose only the allowed ones (EPERM), root any the kernel
/// has or can load (ENOENT for one it cannot).
pub fn try_congestion(name: &str) -> std::io::Result<()> {
    Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?
        .set_tcp_congestion(name.as_bytes())
}

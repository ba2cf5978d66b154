//! The `async` server model: one edge-triggered epoll loop per thread,
//! each with its own listening socket on the shared port (SO_REUSEPORT), so
//! the kernel spreads connections and the threads share nothing. This is
//! the event-driven design of nginx and Apache's event MPM.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::content::{Content, Reply};
use super::request;

const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
const FIRST_CONN: usize = 2;
/// Bytes read per `read`; requests are small, one buffer per thread.
const READ_BUFFER: usize = 16 * 1024;

struct Conn {
    stream: TcpStream,
    /// Bytes of a request that arrived in pieces.
    pending: Vec<u8>,
    /// A response the socket could not take at once.
    reply: Option<Reply>,
    keep_alive: bool,
}

/// The connection is finished (closed by the client, an error, or a
/// response that ends with a close).
struct Close;

pub(super) struct EventLoop {
    pub poll: Poll,
    pub listener: TcpListener,
    pub content: Arc<Content>,
    pub stop: Arc<AtomicBool>,
}

/// Creates the poll and its waker for one event-loop thread.
pub(super) fn new_poll() -> io::Result<(Poll, Arc<Waker>)> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    Ok((poll, waker))
}

impl EventLoop {
    /// Serves until the stop flag is set (and the waker woken).
    pub fn run(mut self) -> io::Result<()> {
        self.poll
            .registry()
            .register(&mut self.listener, LISTENER, Interest::READABLE)?;
        let mut conns: Vec<Option<Conn>> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let mut scratch = vec![0u8; READ_BUFFER];
        let mut events = Events::with_capacity(1024);
        while !self.stop.load(Ordering::Relaxed) {
            match self.poll.poll(&mut events, None) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                match event.token() {
                    WAKER => {}
                    LISTENER => self.accept(&mut conns, &mut free)?,
                    Token(t) => {
                        let idx = t - FIRST_CONN;
                        let Some(conn) = conns.get_mut(idx).and_then(Option::as_mut) else {
                            continue;
                        };
                        let mut outcome = Ok(());
                        if event.is_writable() {
                            outcome = self.on_writable(conn);
                        }
                        if outcome.is_ok() && (event.is_readable() || event.is_read_closed()) {
                            outcome = self.on_readable(conn, &mut scratch);
                        }
                        if outcome.is_err() {
                            conns[idx] = None;
                            free.push(idx);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn accept(&self, conns: &mut Vec<Option<Conn>>, free: &mut Vec<usize>) -> io::Result<()> {
        loop {
            let mut stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors or a connection aborted before accept:
                // skip it, keep serving the others.
                Err(_) => return Ok(()),
            };
            let _ = stream.set_nodelay(true);
            let idx = free.pop().unwrap_or_else(|| {
                conns.push(None);
                conns.len() - 1
            });
            self.poll.registry().register(
                &mut stream,
                Token(idx + FIRST_CONN),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            conns[idx] = Some(Conn {
                stream,
                pending: Vec::new(),
                reply: None,
                keep_alive: true,
            });
        }
    }

    fn on_readable(&self, conn: &mut Conn, scratch: &mut [u8]) -> Result<(), Close> {
        loop {
            let n = match conn.stream.read(scratch) {
                Ok(0) => return Err(Close),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(Close),
            };
            if conn.pending.is_empty() && conn.reply.is_none() {
                let used = self.serve(conn, &scratch[..n])?;
                conn.pending.extend_from_slice(&scratch[used..n]);
            } else {
                conn.pending.extend_from_slice(&scratch[..n]);
            }
            if n < scratch.len() {
                break;
            }
        }
        self.serve_pending(conn)
    }

    fn on_writable(&self, conn: &mut Conn) -> Result<(), Close> {
        self.flush(conn)?;
        self.serve_pending(conn)
    }

    fn serve_pending(&self, conn: &mut Conn) -> Result<(), Close> {
        if conn.reply.is_some() || conn.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut conn.pending);
        let used = self.serve(conn, &pending)?;
        conn.pending = pending;
        conn.pending.drain(..used);
        Ok(())
    }

    /// Answers the complete requests at the start of `buf`, in order, while
    /// the socket takes the answers; returns the bytes consumed.
    fn serve(&self, conn: &mut Conn, buf: &[u8]) -> Result<usize, Close> {
        let mut pos = 0;
        while conn.reply.is_none() {
            match request::parse(&buf[pos..]) {
                Ok(Some(head)) => {
                    let (reply, keep_alive) = self.content.reply(&head);
                    pos += head.len;
                    conn.reply = Some(reply);
                    conn.keep_alive = keep_alive;
                }
                Ok(None) => break,
                Err(request::BadRequest) => {
                    conn.reply = Some(self.content.bad_request());
                    conn.keep_alive = false;
                    pos = buf.len();
                }
            }
            self.flush(conn)?;
        }
        Ok(pos)
    }

    /// Writes the pending reply; closes after it when asked.
    fn flush(&self, conn: &mut Conn) -> Result<(), Close> {
        let Some(reply) = conn.reply.as_mut() else {
            return Ok(());
        };
        match self.content.write(&mut conn.stream, reply) {
            Ok(true) => {
                conn.reply = None;
                if conn.keep_alive { Ok(()) } else { Err(Close) }
            }
            Ok(false) => Ok(()),
            Err(_) => Err(Close),
        }
    }
}

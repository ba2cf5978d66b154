//! The `async` server model: one edge-triggered epoll loop per thread,
//! each with its own listening socket on the shared port (SO_REUSEPORT), so
//! the kernel spreads connections and the threads share nothing. This is
//! the event-driven design of nginx and Apache's event MPM.
//!
//! A request that waits on a database server goes to the blocking pool;
//! its connection reads on but answers nothing more until the page comes
//! back through the loop's completion list and waker (responses stay in
//! request order).

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::blocking::BlockingPool;
use super::content::{Content, Reply};
use super::request;

const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
const FIRST_CONN: usize = 2;
/// Bytes read per `read`; requests are small, one buffer per thread.
const READ_BUFFER: usize = 16 * 1024;

struct Conn {
    stream: TcpStream,
    /// Tells this connection from an earlier one in the same slot, so
    /// that a page finished after its client left goes nowhere.
    serial: u64,
    /// A page for this connection is in the blocking pool.
    waiting: bool,
    /// Bytes of a request that arrived in pieces.
    pending: Vec<u8>,
    /// A response the socket could not take at once.
    reply: Option<Reply>,
    keep_alive: bool,
}

/// The connection is finished (closed by the client, an error, or a
/// response that ends with a close).
struct Close;

/// A page the blocking pool finished, for the connection in `slot`.
struct Done {
    slot: usize,
    serial: u64,
    reply: Reply,
}

/// Where the pool's workers leave finished pages for one loop.
struct Completions {
    done: Mutex<Vec<Done>>,
    waker: Arc<Waker>,
}

pub(super) struct EventLoop {
    poll: Poll,
    listener: TcpListener,
    content: Arc<Content>,
    pool: Option<Arc<BlockingPool>>,
    completions: Arc<Completions>,
    stop: Arc<AtomicBool>,
    next_serial: u64,
}

/// Creates the poll and its waker for one event-loop thread.
pub(super) fn new_poll() -> io::Result<(Poll, Arc<Waker>)> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    Ok((poll, waker))
}

impl EventLoop {
    /// A loop on `poll` (whose waker is `waker`); `pool` takes the pages
    /// that wait on a database server.
    pub fn new(
        poll: Poll,
        listener: TcpListener,
        waker: Arc<Waker>,
        content: Arc<Content>,
        pool: Option<Arc<BlockingPool>>,
        stop: Arc<AtomicBool>,
    ) -> EventLoop {
        EventLoop {
            poll,
            listener,
            content,
            pool,
            completions: Arc::new(Completions {
                done: Mutex::new(Vec::new()),
                waker,
            }),
            stop,
            next_serial: 0,
        }
    }

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
                    WAKER => self.finish_pages(&mut conns, &mut free),
                    LISTENER => self.accept(&mut conns, &mut free)?,
                    Token(t) => {
                        let idx = t - FIRST_CONN;
                        let Some(conn) = conns.get_mut(idx).and_then(Option::as_mut) else {
                            continue;
                        };
                        let mut outcome = Ok(());
                        if event.is_writable() {
                            outcome = self.on_writable(conn, idx);
                        }
                        if outcome.is_ok() && (event.is_readable() || event.is_read_closed()) {
                            outcome = self.on_readable(conn, idx, &mut scratch);
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

    /// Sends the pages the pool finished, in the order they finished.
    fn finish_pages(&self, conns: &mut [Option<Conn>], free: &mut Vec<usize>) {
        let done = std::mem::take(
            &mut *self
                .completions
                .done
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for Done {
            slot,
            serial,
            reply,
        } in done
        {
            let Some(conn) = conns[slot].as_mut().filter(|c| c.serial == serial) else {
                continue;
            };
            conn.waiting = false;
            conn.reply = Some(reply);
            let outcome = self
                .flush(conn)
                .and_then(|()| self.serve_pending(conn, slot));
            if outcome.is_err() {
                conns[slot] = None;
                free.push(slot);
            }
        }
    }

    fn accept(&mut self, conns: &mut Vec<Option<Conn>>, free: &mut Vec<usize>) -> io::Result<()> {
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
            self.next_serial += 1;
            conns[idx] = Some(Conn {
                stream,
                serial: self.next_serial,
                waiting: false,
                pending: Vec::new(),
                reply: None,
                keep_alive: true,
            });
        }
    }

    fn on_readable(&self, conn: &mut Conn, slot: usize, scratch: &mut [u8]) -> Result<(), Close> {
        loop {
            let n = match conn.stream.read(scratch) {
                Ok(0) => return Err(Close),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(Close),
            };
            if conn.pending.is_empty() && conn.reply.is_none() && !conn.waiting {
                let used = self.serve(conn, slot, &scratch[..n])?;
                conn.pending.extend_from_slice(&scratch[used..n]);
            } else {
                conn.pending.extend_from_slice(&scratch[..n]);
            }
            if n < scratch.len() {
                break;
            }
        }
        self.serve_pending(conn, slot)
    }

    fn on_writable(&self, conn: &mut Conn, slot: usize) -> Result<(), Close> {
        self.flush(conn)?;
        self.serve_pending(conn, slot)
    }

    fn serve_pending(&self, conn: &mut Conn, slot: usize) -> Result<(), Close> {
        if conn.reply.is_some() || conn.waiting || conn.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut conn.pending);
        let used = self.serve(conn, slot, &pending)?;
        conn.pending = pending;
        conn.pending.drain(..used);
        Ok(())
    }

    /// Answers the complete requests at the start of `buf`, in order, while
    /// the socket takes the answers; returns the bytes consumed.
    fn serve(&self, conn: &mut Conn, slot: usize, buf: &[u8]) -> Result<usize, Close> {
        let mut pos = 0;
        while conn.reply.is_none() && !conn.waiting {
            match request::parse(&buf[pos..]) {
                Ok(Some(head)) if self.pool.is_some() && self.content.waits(&head) => {
                    pos += head.len;
                    conn.waiting = true;
                    conn.keep_alive = head.keep_alive;
                    self.hand_to_pool(slot, conn.serial, head.keep_alive);
                }
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

    /// Makes the page on a pool worker, which hands it back through the
    /// completion list and wakes this loop.
    fn hand_to_pool(&self, slot: usize, serial: u64, keep_alive: bool) {
        let (content, completions) = (self.content.clone(), self.completions.clone());
        let pool = self.pool.as_ref().expect("checked by the caller");
        pool.submit(move || {
            let reply = content.dynamic(keep_alive);
            completions
                .done
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Done {
                    slot,
                    serial,
                    reply,
                });
            let _ = completions.waker.wake();
        });
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

//! The `async` server model: one edge-triggered epoll loop per thread,
//! each with its own listening socket on the shared port (SO_REUSEPORT), so
//! the kernel spreads connections and the threads share nothing. This is
//! the event-driven design of nginx and Apache's event MPM.
//!
//! A request that waits on a database server goes to the blocking pool;
//! its connection reads on but answers nothing more until the page comes
//! back through the loop's completion list and waker (responses stay in
//! request order).
//!
//! Every connection has a deadline for what it waits for (the rest of a
//! request head, the next request, room to write a response; see
//! [`Limits`]), counted in ticks of a timerfd that fires a few times per
//! shortest timeout; at each tick a sweep closes the connections past
//! theirs. Nothing per request reads a clock or touches a timer, and
//! `epoll_wait` still blocks without a timeout, so the limits cost the hot
//! path a comparison or two. A client that sends requests without reading
//! the answers is read no further than [`PENDING_MAX`] bytes ahead, and
//! resumed once its answers go out.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use super::blocking::BlockingPool;
use super::content::{Content, Reply};
use super::limits::Limits;
use super::request_parser::{self, MAX_REQUEST_HEAD, Method};
use super::ticker::Ticker;

const LISTENER: Token = Token(0);
pub(super) const WAKER: Token = Token(1);
const TICKER: Token = Token(2);
const FIRST_CONN: usize = 3;
/// Bytes read per `read`; requests are small, one buffer per thread.
const READ_BUFFER: usize = 16 * 1024;
/// Unanswered request bytes read ahead of a response the client does not
/// take; beyond this the connection is not read until it does.
const PENDING_MAX: usize = 4 * MAX_REQUEST_HEAD;
/// Ticks per shortest timeout: a connection is closed at most half of its
/// timeout late (a deadline is rounded up to whole ticks, plus one).
const TICKS_PER_TIMEOUT: u32 = 4;
/// Bounds of the tick.
const TICK_MIN: Duration = Duration::from_millis(10);
const TICK_MAX: Duration = Duration::from_secs(1);

/// What a connection waits for, which decides its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    /// The (rest of the) head of a request: `header_timeout`.
    Head,
    /// The next request on a kept-alive connection: `idle_timeout`.
    Request,
    /// Room in the socket for a response: `send_timeout`.
    Room,
    /// A page from the blocking pool, bounded by the database's own
    /// timeouts: no deadline here.
    Page,
}

struct Conn {
    stream: TcpStream,
    /// Tells this connection from an earlier one in the same slot, so
    /// that a page finished after its client left goes nowhere.
    serial: u64,
    /// A page for this connection is in the blocking pool.
    waiting: bool,
    /// Bytes of a request that arrived in pieces.
    pending: Vec<u8>,
    /// Body bytes of the last request still to be read and dropped.
    skip: u64,
    /// A response the socket could not take at once.
    reply: Option<Reply>,
    keep_alive: bool,
    /// Reading stopped with [`PENDING_MAX`] bytes unanswered.
    paused: bool,
    awaiting: Awaiting,
    /// The tick at which the connection is closed unless what it awaits
    /// happens.
    deadline: u64,
    /// A request was answered (or handed to the pool) since the deadline
    /// was last set.
    progressed: bool,
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
    limits: Limits,
    /// Ticks so far: the loop's clock.
    tick: u64,
    tick_len: Duration,
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
        limits: Limits,
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
            limits,
            tick: 0,
            tick_len: (limits.shortest_timeout() / TICKS_PER_TIMEOUT).clamp(TICK_MIN, TICK_MAX),
        }
    }

    /// The tick by which `timeout` has surely passed from now.
    fn deadline_after(&self, timeout: Duration) -> u64 {
        let ticks = timeout.as_nanos().div_ceil(self.tick_len.as_nanos()) as u64;
        self.tick + ticks + 1
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
        let ticker = Ticker::new(self.tick_len)?;
        self.poll.registry().register(
            &mut SourceFd(&ticker.as_raw_fd()),
            TICKER,
            Interest::READABLE,
        )?;
        while !self.stop.load(Ordering::Relaxed) {
            match self.poll.poll(&mut events, None) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut ticked = false;
            for event in events.iter() {
                match event.token() {
                    TICKER => {
                        self.tick += ticker.take();
                        ticked = true;
                    }
                    WAKER => self.finish_pages(&mut conns, &mut free, &mut scratch),
                    LISTENER => self.accept(&mut conns, &mut free)?,
                    Token(t) => {
                        let idx = t - FIRST_CONN;
                        let Some(conn) = conns.get_mut(idx).and_then(Option::as_mut) else {
                            continue;
                        };
                        let mut outcome = Ok(());
                        if event.is_writable() {
                            outcome = self.on_writable(conn, idx, &mut scratch);
                        }
                        if outcome.is_ok() && (event.is_readable() || event.is_read_closed()) {
                            outcome = self.on_readable(conn, idx, &mut scratch);
                        }
                        match outcome {
                            Ok(()) => self.settle(conn),
                            Err(Close) => {
                                conns[idx] = None;
                                free.push(idx);
                            }
                        }
                    }
                }
            }
            if ticked {
                self.sweep(&mut conns, &mut free);
            }
        }
        Ok(())
    }

    /// Sets the connection's deadline for what it now awaits: anew when
    /// that changed or a request was answered, else it stands (a head
    /// arriving byte by byte does not push its deadline back).
    fn settle(&self, conn: &mut Conn) {
        let awaiting = if conn.waiting {
            Awaiting::Page
        } else if conn.reply.is_some() {
            Awaiting::Room
        } else if !conn.pending.is_empty() || conn.skip > 0 {
            Awaiting::Head
        } else {
            Awaiting::Request
        };
        if awaiting == conn.awaiting && !conn.progressed {
            return;
        }
        conn.awaiting = awaiting;
        conn.progressed = false;
        let limits = &self.limits;
        conn.deadline = match awaiting {
            Awaiting::Head => self.deadline_after(limits.header_timeout),
            Awaiting::Request => self.deadline_after(limits.idle_timeout),
            Awaiting::Room => self.deadline_after(limits.send_timeout),
            Awaiting::Page => u64::MAX,
        };
    }

    /// Closes the connections past their deadline.
    fn sweep(&self, conns: &mut [Option<Conn>], free: &mut Vec<usize>) {
        for (idx, slot) in conns.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|c| c.deadline <= self.tick) {
                *slot = None;
                free.push(idx);
            }
        }
    }

    /// Sends the pages the pool finished, in the order they finished.
    fn finish_pages(&self, conns: &mut [Option<Conn>], free: &mut Vec<usize>, scratch: &mut [u8]) {
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
            conn.progressed = true;
            conn.reply = Some(reply);
            let outcome = self
                .flush(conn)
                .and_then(|()| self.serve_pending(conn, slot))
                .and_then(|()| self.resume(conn, slot, scratch));
            match outcome {
                Ok(()) => self.settle(conn),
                Err(Close) => {
                    conns[slot] = None;
                    free.push(slot);
                }
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
                skip: 0,
                reply: None,
                keep_alive: true,
                paused: false,
                // The first request's head is due within the header
                // timeout of the accept, as in nginx.
                awaiting: Awaiting::Head,
                deadline: self.deadline_after(self.limits.header_timeout),
                progressed: false,
            });
        }
    }

    fn on_readable(&self, conn: &mut Conn, slot: usize, scratch: &mut [u8]) -> Result<(), Close> {
        loop {
            if conn.pending.len() >= PENDING_MAX {
                // Answers are not being taken: read on once they are.
                conn.paused = true;
                break;
            }
            let n = match conn.stream.read(scratch) {
                Ok(0) => return Err(Close),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(Close),
            };
            // The rest of a request body goes unread.
            let skipped = conn.skip.min(n as u64) as usize;
            conn.skip -= skipped as u64;
            let data = &scratch[skipped..n];
            if conn.pending.is_empty() && conn.reply.is_none() && !conn.waiting {
                let used = self.serve(conn, slot, data)?;
                conn.pending.extend_from_slice(&data[used..]);
            } else {
                conn.pending.extend_from_slice(data);
            }
            if n < scratch.len() {
                break;
            }
        }
        self.serve_pending(conn, slot)
    }

    fn on_writable(&self, conn: &mut Conn, slot: usize, scratch: &mut [u8]) -> Result<(), Close> {
        if conn.reply.is_some() {
            // The client took some of the response: its time starts anew.
            conn.progressed = true;
        }
        self.flush(conn)?;
        self.serve_pending(conn, slot)?;
        self.resume(conn, slot, scratch)
    }

    /// Reads a paused connection again once its backlog went out.
    fn resume(&self, conn: &mut Conn, slot: usize, scratch: &mut [u8]) -> Result<(), Close> {
        if conn.paused && conn.pending.len() < PENDING_MAX {
            conn.paused = false;
            return self.on_readable(conn, slot, scratch);
        }
        Ok(())
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
    /// the socket takes the answers; returns the bytes consumed (a body
    /// that goes beyond `buf` is left in `conn.skip`).
    fn serve(&self, conn: &mut Conn, slot: usize, buf: &[u8]) -> Result<usize, Close> {
        let mut pos = 0;
        // Nothing left in the buffer is no request yet: the common case
        // after each request, answered without a call to the parser.
        while pos < buf.len() && conn.reply.is_none() && !conn.waiting {
            let head = match request_parser::parse(&buf[pos..]) {
                Ok(Some(head)) => head,
                Ok(None) => break,
                Err(why) => {
                    let head_only = request_parser::asks_for_head(&buf[pos..]);
                    conn.reply = Some(self.content.rejected(why, head_only));
                    conn.keep_alive = false;
                    pos = buf.len();
                    self.flush(conn)?;
                    continue;
                }
            };
            conn.progressed = true;
            conn.keep_alive = head.keep_alive;
            if self.pool.is_some() && self.content.waits(&head) {
                conn.waiting = true;
                let head_only = head.method == Method::Head;
                self.hand_to_pool(slot, conn.serial, head.keep_alive, head_only);
            } else {
                let (reply, keep_alive) = self.content.reply(&head);
                conn.reply = Some(reply);
                conn.keep_alive = keep_alive;
            }
            let body_start = pos + head.len;
            let in_buf = (buf.len() - body_start) as u64;
            if head.body > in_buf {
                conn.skip = head.body - in_buf;
                pos = buf.len();
            } else {
                pos = body_start + head.body as usize;
            }
            self.flush(conn)?;
        }
        Ok(pos)
    }

    /// Makes the page on a pool worker, which hands it back through the
    /// completion list and wakes this loop.
    fn hand_to_pool(&self, slot: usize, serial: u64, keep_alive: bool, head_only: bool) {
        let (content, completions) = (self.content.clone(), self.completions.clone());
        let pool = self.pool.as_ref().expect("checked by the caller");
        pool.submit(move || {
            let reply = content.dynamic(keep_alive, head_only);
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

//! The `threads` server model: a thread per connection doing blocking
//! reads and writes, like Apache's prefork and worker MPMs. Its cost at
//! high concurrency (a stack and a scheduler entry per client) is what the
//! reference article compared with the event-driven model.

use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use super::content::Content;
use super::limits::Limits;
use super::request_parser::{self, MAX_REQUEST_HEAD};
use crate::sys::affinity;

/// How often a blocked connection thread looks at the stop flag and its
/// deadline.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// Stack of a connection thread: it holds the request buffer
/// ([`MAX_REQUEST_HEAD`]) and the body sink, 32 KiB, with room to spare.
/// Larger than that needs for a reason: glibc keeps the stacks of ended
/// threads for reuse up to 40 MiB of address space, each with the pages
/// its thread last touched (about 24 KiB) still resident, so the larger
/// the stack, the fewer are kept: about 4 MiB at 256 KiB, twice that at
/// 128 KiB. Only the touched pages of a live thread's stack are memory.
const CONN_STACK: usize = 256 * 1024;
/// Stack of a connection thread that makes dynamic pages from a database
/// server: room for the client's connect future.
const DB_CONN_STACK: usize = super::blocking::STACK;

/// Counts a connection thread while it lives; the last of a full house to
/// end wakes the acceptor.
struct Slot {
    live: Arc<AtomicUsize>,
    max: usize,
    waker: Arc<Waker>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.live.fetch_sub(1, Ordering::SeqCst) == self.max {
            let _ = self.waker.wake();
        }
    }
}

/// Accepts until stopped; each connection gets its own thread, at most
/// `limits.max_threads` at once (further connections wait in the listen
/// queue, as with Apache's `MaxRequestWorkers`). Joins them before
/// returning, waiting a little less than [`super::stop::STOP_DEADLINE`] (a
/// thread still in a database call then is left running).
pub(super) fn run(
    listener: TcpListener,
    mut poll: Poll,
    waker: Arc<Waker>,
    content: Arc<Content>,
    stop: Arc<AtomicBool>,
    cpus: Option<Vec<usize>>,
    limits: Limits,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    poll.registry().register(
        &mut SourceFd(&listener.as_raw_fd()),
        Token(0),
        Interest::READABLE,
    )?;
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    let mut events = Events::with_capacity(64);
    let stack = if content.dynamic_waits() {
        DB_CONN_STACK
    } else {
        CONN_STACK
    };
    let max = limits.max_threads.max(1);
    let live = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        match poll.poll(&mut events, Some(STOP_CHECK)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        // A thread that ended keeps its stack mapped until its handle is
        // let go: reaped at every wake-up (every STOP_CHECK at least), so
        // that a burst of connections that ended leaves nothing behind
        // while no new one comes.
        workers.retain(|w| !w.is_finished());
        // At the cap, connections stay queued; a thread that ends wakes
        // this loop (and the poll's timeout is the backstop).
        while live.load(Ordering::SeqCst) < max {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            live.fetch_add(1, Ordering::SeqCst);
            let slot = Slot {
                live: live.clone(),
                max,
                waker: waker.clone(),
            };
            let (content, stop, cpus) = (content.clone(), stop.clone(), cpus.clone());
            let spawned = std::thread::Builder::new()
                .name("sledge-conn".into())
                .stack_size(stack)
                .spawn(move || {
                    let _slot = slot;
                    if let Some(cpus) = cpus {
                        let _ = affinity::set_affinity(&cpus);
                    }
                    serve_connection(stream, &content, &stop, &limits);
                });
            // Out of threads: the connection is dropped (with its slot),
            // the client sees a reset, and the server goes on.
            if let Ok(handle) = spawned {
                workers.push(handle);
            }
        }
    }
    let deadline =
        Instant::now() + super::stop::STOP_DEADLINE.saturating_sub(Duration::from_secs(1));
    super::stop::join_until(workers, deadline);
    Ok(())
}

/// What a connection's read is waiting for, and since when.
enum Awaiting {
    /// A request head that has not started: the first one (due within the
    /// header timeout of the accept) or the next one on a kept-alive
    /// connection (the idle timeout). `since` is set lazily, at the first
    /// read that times out, so that a busy connection never reads the clock.
    Start { first: bool, since: Option<Instant> },
    /// The rest of a head whose first bytes came at `since`.
    Rest { since: Instant },
}

fn serve_connection(mut stream: TcpStream, content: &Content, stop: &AtomicBool, limits: &Limits) {
    let accepted = Instant::now();
    // Both timeouts let the thread look at the stop flag and its deadline:
    // a client that neither sends nor reads does not keep it (and stop())
    // waiting.
    if stream.set_nonblocking(false).is_err()
        || stream.set_read_timeout(Some(STOP_CHECK)).is_err()
        || stream.set_write_timeout(Some(STOP_CHECK)).is_err()
    {
        return;
    }
    let _ = stream.set_nodelay(true);
    // One byte more than a head may have, so that an over-long head is
    // answered with 400 rather than dropped. On the stack, not the heap:
    // glibc hands a thread's stack back to the kernel when the thread
    // ends, while heap memory freed on a connection thread stays in that
    // thread's malloc arena, 16 KiB per connection the server ever had
    // at once.
    let mut buf = [0u8; MAX_REQUEST_HEAD + 1];
    let mut filled = 0;
    let mut awaiting = Awaiting::Start {
        first: true,
        since: Some(accepted),
    };
    loop {
        loop {
            let (mut reply, keep_alive, used, body) = match request_parser::parse(&buf[..filled]) {
                Ok(Some(head)) => {
                    let (reply, keep_alive) = content.reply(&head);
                    (reply, keep_alive, head.len, head.body)
                }
                Ok(None) => break,
                Err(why) => {
                    let head_only = request_parser::asks_for_head(&buf[..filled]);
                    (content.rejected(why, head_only), false, filled, 0)
                }
            };
            awaiting = Awaiting::Start {
                first: false,
                since: None,
            };
            // The body is read and dropped before the answer, so that the
            // connection is at the next request afterwards.
            let in_buf = (filled - used) as u64;
            let consumed = if body <= in_buf {
                used + body as usize
            } else if skip_body(&mut stream, body - in_buf, stop, limits) {
                filled
            } else {
                return;
            };
            if !write_reply(&mut stream, content, &mut reply, stop, limits) || !keep_alive {
                return;
            }
            buf.copy_within(consumed..filled, 0);
            filled -= consumed;
        }
        // No complete request is buffered. Bytes of one have come: its
        // head is due within the header timeout of its first byte (of the
        // accept, for the first request). The clock is read only here,
        // for a head that arrives in pieces.
        if filled > 0 {
            if let Awaiting::Start { first, since } = awaiting {
                awaiting = Awaiting::Rest {
                    since: match (first, since) {
                        (true, Some(at)) => at,
                        _ => Instant::now(),
                    },
                };
            }
            if let Awaiting::Rest { since } = awaiting
                && since.elapsed() >= limits.header_timeout
            {
                return;
            }
        }
        if stop.load(Ordering::Relaxed) || filled == buf.len() {
            return;
        }
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return,
            Ok(n) => filled += n,
            Err(e) if waited(&e) => {
                // Waiting for a request to start: since the accept (the
                // first), or since the first read that timed out, which
                // came STOP_CHECK after the last response at the latest.
                if let Awaiting::Start { first, since } = &mut awaiting {
                    let now = Instant::now();
                    let at = *since.get_or_insert(earlier(now, STOP_CHECK));
                    let limit = if *first {
                        limits.header_timeout
                    } else {
                        limits.idle_timeout
                    };
                    if now.saturating_duration_since(at) >= limit {
                        return;
                    }
                }
            }
            Err(_) => return,
        }
    }
}

/// Reads and drops `left` body bytes; false when the client failed, went
/// quiet for the header timeout, or the server stops.
fn skip_body(stream: &mut TcpStream, mut left: u64, stop: &AtomicBool, limits: &Limits) -> bool {
    let mut sink = [0u8; 16 * 1024];
    let mut quiet_since = None;
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let want = left.min(sink.len() as u64) as usize;
        match stream.read(&mut sink[..want]) {
            Ok(0) => return false,
            Ok(n) => {
                left -= n as u64;
                quiet_since = None;
            }
            Err(e) if waited(&e) => {
                let since = *quiet_since.get_or_insert_with(|| earlier(Instant::now(), STOP_CHECK));
                if since.elapsed() >= limits.header_timeout {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

/// Writes the whole reply; false when the client failed, took nothing for
/// the send timeout, or the server stops.
fn write_reply(
    stream: &mut TcpStream,
    content: &Content,
    reply: &mut super::content::Reply,
    stop: &AtomicBool,
    limits: &Limits,
) -> bool {
    // A send timeout returns what is written so far (`Ok(false)`); go on
    // while the client takes some, until all is written.
    let mut stalled_since: Option<(Instant, u64)> = None;
    loop {
        match content.write(stream, reply) {
            Ok(true) => return true,
            Ok(false) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return false,
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let written = reply.written();
        match stalled_since {
            Some((since, at)) if at == written => {
                if since.elapsed() >= limits.send_timeout {
                    return false;
                }
            }
            _ => stalled_since = Some((earlier(Instant::now(), STOP_CHECK), written)),
        }
    }
}

/// Whether a read on a socket with a timeout only waited (the timeout,
/// or a signal) rather than failed.
fn waited(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// `by` before `now`, or `now` on a clock younger than that.
fn earlier(now: Instant, by: Duration) -> Instant {
    now.checked_sub(by).unwrap_or(now)
}

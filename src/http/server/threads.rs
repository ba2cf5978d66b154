//! The `threads` server model: a thread per connection doing blocking
//! reads and writes, like Apache's prefork and worker MPMs. Its cost at
//! high concurrency (a stack and a scheduler entry per client) is what the
//! reference article compared with the event-driven model.

use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::content::Content;
use super::request::{self, MAX_REQUEST_HEAD};
use crate::engine::affinity;

/// How often a blocked connection thread looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// Stack of a connection thread; it only holds a request buffer.
const CONN_STACK: usize = 128 * 1024;
/// Stack of a connection thread that makes dynamic pages from a database
/// server: room for the client's connect future.
const DB_CONN_STACK: usize = super::blocking::STACK;

/// Accepts until stopped; each connection gets its own thread. Joins them
/// before returning, waiting a little less than [`super::STOP_DEADLINE`]
/// (a thread still in a database call then is left running).
pub(super) fn run(
    listener: TcpListener,
    mut poll: Poll,
    content: Arc<Content>,
    stop: Arc<AtomicBool>,
    cpus: Option<Vec<usize>>,
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
    while !stop.load(Ordering::Relaxed) {
        match poll.poll(&mut events, Some(STOP_CHECK)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        loop {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            workers.retain(|w| !w.is_finished());
            let (content, stop, cpus) = (content.clone(), stop.clone(), cpus.clone());
            let spawned = std::thread::Builder::new()
                .name("sledge-conn".into())
                .stack_size(stack)
                .spawn(move || {
                    if let Some(cpus) = cpus {
                        let _ = affinity::set_affinity(&cpus);
                    }
                    serve_connection(stream, &content, &stop);
                });
            // Out of threads: the connection is dropped, the client sees a
            // reset, and the server goes on.
            if let Ok(handle) = spawned {
                workers.push(handle);
            }
        }
    }
    let deadline = Instant::now() + super::STOP_DEADLINE.saturating_sub(Duration::from_secs(1));
    super::join_until(workers, deadline);
    Ok(())
}

fn serve_connection(mut stream: TcpStream, content: &Content, stop: &AtomicBool) {
    // Both timeouts let the thread look at the stop flag: a client that
    // neither sends nor reads does not keep it (and stop()) waiting.
    if stream.set_nonblocking(false).is_err()
        || stream.set_read_timeout(Some(STOP_CHECK)).is_err()
        || stream.set_write_timeout(Some(STOP_CHECK)).is_err()
    {
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; MAX_REQUEST_HEAD];
    let mut filled = 0;
    loop {
        loop {
            let (mut reply, keep_alive, used) = match request::parse(&buf[..filled]) {
                Ok(Some(head)) => {
                    let (reply, keep_alive) = content.reply(&head);
                    (reply, keep_alive, head.len)
                }
                Ok(None) => break,
                Err(request::BadRequest) => (content.bad_request(), false, filled),
            };
            // A send timeout returns what is written so far (`Ok(false)`);
            // go on until all is written, the client fails or the server stops.
            loop {
                match content.write(&mut stream, &mut reply) {
                    Ok(true) => break,
                    Ok(false) if !stop.load(Ordering::Relaxed) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                        ) && !stop.load(Ordering::Relaxed) => {}
                    Ok(false) | Err(_) => return,
                }
            }
            if !keep_alive {
                return;
            }
            buf.copy_within(used..filled, 0);
            filled -= used;
        }
        if stop.load(Ordering::Relaxed) || filled == buf.len() {
            return;
        }
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return,
            Ok(n) => filled += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return,
        }
    }
}

//! Waiting on a generator thread's epoll set with a timeout finer than a
//! millisecond.
//!
//! mio's `Poll::poll` rounds a timeout up to whole milliseconds, the unit
//! of `epoll_wait`. An open loop of 50,000 requests/s over 100 connections
//! has a request due every 20 µs: woken a millisecond late, it sends its
//! requests in bursts, each up to a millisecond behind its due time, and
//! the latency it reports from the due time grows by as much.
//! `epoll_pwait2` (Linux 5.11) takes its timeout in nanoseconds. It is
//! called through `syscall(2)`, so that the binary does not need a C
//! library that wraps it; where the kernel lacks it, waits fall back to
//! `epoll_wait` with the timeout rounded up, as mio does.
//!
//! The connections stay registered through mio (`Registry::register`, an
//! edge-triggered read and write interest with the token as the event's
//! data); only the wait is done here, on the same epoll file descriptor.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set once the kernel answered `ENOSYS` to `epoll_pwait2`.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

/// The events one wait returned.
pub(crate) struct Ready {
    events: Vec<libc::epoll_event>,
    len: usize,
}

/// One connection's readiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyEvent {
    /// The token it was registered with.
    pub token: usize,
    /// The peer closed its side (or both sides are closed): mio's
    /// `is_read_closed`.
    pub read_closed: bool,
}

impl Ready {
    /// Room for up to `capacity` events per wait.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Ready {
            events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)],
            len: 0,
        }
    }

    /// Whether the last wait returned no event.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The events of the last wait.
    pub(crate) fn iter(&self) -> impl Iterator<Item = ReadyEvent> + '_ {
        self.events[..self.len].iter().map(|event| {
            let flags = event.events as libc::c_int;
            ReadyEvent {
                token: event.u64 as usize,
                read_closed: flags & libc::EPOLLHUP != 0
                    || (flags & libc::EPOLLIN != 0 && flags & libc::EPOLLRDHUP != 0),
            }
        })
    }

    /// Waits up to `timeout` for events on the epoll set `epoll_fd`.
    /// An interrupted wait returns no event.
    pub(crate) fn wait(&mut self, epoll_fd: RawFd, timeout: Duration) -> io::Result<()> {
        self.len = 0;
        let capacity = self.events.len() as libc::c_int;
        let n = if NO_PWAIT2.load(Ordering::Relaxed) {
            wait_ms(epoll_fd, &mut self.events, timeout)
        } else {
            let spec = libc::timespec {
                tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
                tv_nsec: timeout.subsec_nanos() as libc::c_long,
            };
            // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout,
            // sigmask, sigsetsize): `events` has room for `capacity`
            // entries, `spec` lives through the call, and a null signal
            // mask leaves the thread's mask alone.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    epoll_fd,
                    self.events.as_mut_ptr(),
                    capacity,
                    &spec as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            };
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                NO_PWAIT2.store(true, Ordering::Relaxed);
                wait_ms(epoll_fd, &mut self.events, timeout)
            } else {
                n as libc::c_int
            }
        };
        if n < 0 {
            let error = io::Error::last_os_error();
            return if error.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(error)
            };
        }
        self.len = n as usize;
        Ok(())
    }
}

/// `epoll_wait` with the timeout rounded up to whole milliseconds.
fn wait_ms(epoll_fd: RawFd, events: &mut [libc::epoll_event], timeout: Duration) -> libc::c_int {
    let ms = timeout
        .checked_add(Duration::from_nanos(999_999))
        .unwrap_or(timeout)
        .as_millis()
        .min(libc::c_int::MAX as u128) as libc::c_int;
    // SAFETY: `events` has room for its length in entries.
    unsafe {
        libc::epoll_wait(
            epoll_fd,
            events.as_mut_ptr(),
            events.len() as libc::c_int,
            ms,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::Instant;

    use mio::net::TcpStream;
    use mio::{Interest, Poll, Token};

    #[test]
    fn a_wait_returns_the_registered_token_and_the_close() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let poll = Poll::new().unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        poll.registry()
            .register(&mut client, Token(7), Interest::READABLE)
            .unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.write_all(b"x").unwrap();
        drop(server);
        let mut ready = Ready::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while !seen.iter().any(|e: &ReadyEvent| e.read_closed) && Instant::now() < deadline {
            ready
                .wait(poll.as_raw_fd(), Duration::from_millis(100))
                .unwrap();
            seen.extend(ready.iter());
        }
        assert!(!seen.is_empty());
        assert!(seen.iter().all(|e| e.token == 7), "{seen:?}");
        assert!(seen.iter().any(|e| e.read_closed), "{seen:?}");
    }

    #[test]
    fn a_wait_without_events_returns_none_after_its_timeout() {
        let poll = Poll::new().unwrap();
        let mut ready = Ready::with_capacity(4);
        let started = Instant::now();
        ready
            .wait(poll.as_raw_fd(), Duration::from_micros(300))
            .unwrap();
        assert!(ready.is_empty());
        // Not a timing assertion on precision: only that it did wait.
        assert!(started.elapsed() >= Duration::from_micros(300));
    }
}

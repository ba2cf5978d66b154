//! A periodic tick an epoll loop can wait on: a timerfd armed once.
//!
//! The event loop needs a coarse clock for its connections' deadlines. A
//! timeout on every `epoll_wait` would arm and cancel a kernel timer per
//! call, and reading the clock per wake-up costs as well; a timerfd that
//! fires every interval costs one wake-up per tick and nothing per request:
//! deadlines are counted in ticks.
//!
//! (Low-level OS code: it belongs in a `sys` layer with the rest of it.)

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A timerfd firing every `interval`, non-blocking.
pub(super) struct Ticker {
    fd: OwnedFd,
}

impl Ticker {
    /// Starts ticking every `interval` (at least 1 ms).
    pub fn new(interval: Duration) -> io::Result<Ticker> {
        // SAFETY: plain system call with constant flags.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: timerfd_create returned a fresh descriptor we now own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let interval = interval.max(Duration::from_millis(1));
        let spec = libc::timespec {
            tv_sec: interval.as_secs() as libc::time_t,
            tv_nsec: interval.subsec_nanos() as libc::c_long,
        };
        let value = libc::itimerspec {
            it_interval: spec,
            it_value: spec,
        };
        // SAFETY: the descriptor is a timerfd; `value` outlives the call.
        let rc = unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &value, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Ticker { fd })
    }

    /// Ticks since the last call (0 when none is due).
    pub fn take(&self) -> u64 {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into `count`, as timerfd(2) specifies.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        if n == std::mem::size_of::<u64>() as isize {
            count
        } else {
            0
        }
    }
}

impl AsRawFd for Ticker {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_accumulate_until_taken() {
        let slow = Ticker::new(Duration::from_secs(60)).unwrap();
        assert_eq!(slow.take(), 0, "none due yet");
        let fast = Ticker::new(Duration::from_millis(5)).unwrap();
        std::thread::sleep(Duration::from_millis(60));
        // Every interval that passed counts (timers never fire early),
        // however late this thread looks.
        let n = fast.take();
        assert!(n >= 10, "{n}");
    }
}

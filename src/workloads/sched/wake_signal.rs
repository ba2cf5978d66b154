//! A signal that interrupts a thread's blocking system call, so that a
//! thread blocked in `read`, `write`, `poll` or `waitpid` notices a stop
//! request.
//!
//! hackbench's tasks block in plain `read` and `write` calls, and its main
//! thread in `wait`: measuring the same thing means making the same calls,
//! not polling with timeouts. To stop them early (Ctrl-C, a failed peer)
//! sledge sets a flag and sends this signal to the blocked thread; its
//! handler does nothing and is installed without `SA_RESTART`, so the call
//! returns `EINTR` and the thread looks at the flag. A signal can arrive
//! just before the thread blocks, so senders repeat it until the thread
//! has stopped.
//!
//! It is a real-time signal that nothing else in sledge uses; the handler
//! is installed once per process and left in place (a no-op handler is
//! harmless to anyone who never sends the signal).

use std::io;
use std::sync::OnceLock;

/// Offset above `SIGRTMIN` of the signal used.
const OFFSET_ABOVE_SIGRTMIN: libc::c_int = 5;

extern "C" fn do_nothing(_: libc::c_int) {}

/// Installs the handler (once) and returns the signal number.
pub fn install() -> io::Result<libc::c_int> {
    static INSTALLED: OnceLock<Result<libc::c_int, i32>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let signal = libc::SIGRTMIN() + OFFSET_ABOVE_SIGRTMIN;
        // SAFETY: a zeroed sigaction is valid; the handler is a plain
        // extern "C" function that touches nothing.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = do_nothing as *const () as libc::sighandler_t;
            // No SA_RESTART: interrupted calls must return EINTR.
            action.sa_flags = 0;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        Ok(signal)
    });
    installed.map_err(io::Error::from_raw_os_error)
}

/// Interrupts `thread`'s current (or next) blocking call. The thread must
/// not have been joined yet.
pub fn poke(thread: libc::pthread_t) {
    if let Ok(signal) = install() {
        // SAFETY: the caller guarantees the thread id is still valid (not
        // joined); pthread_kill with a valid id has no other precondition.
        unsafe { libc::pthread_kill(thread, signal) };
    }
}

/// The calling thread's id, to [`poke`] it from another thread.
pub fn current_thread() -> libc::pthread_t {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn a_poke_interrupts_a_blocking_read() {
        install().unwrap();
        let (reader, _writer) = std::io::pipe().unwrap();
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel::<libc::pthread_t>();
        let (reader, stop) = (&reader, &stop);
        std::thread::scope(|s| {
            let blocked = s.spawn(move || {
                tx.send(current_thread()).unwrap();
                let mut byte = 0u8;
                loop {
                    let n = unsafe { libc::read(reader.as_raw_fd(), (&raw mut byte).cast(), 1) };
                    let errno = io::Error::last_os_error().raw_os_error();
                    if n < 0 && errno == Some(libc::EINTR) && stop.load(Ordering::SeqCst) {
                        return true;
                    }
                    if n >= 0 {
                        return false;
                    }
                }
            });
            let thread = rx.recv().unwrap();
            stop.store(true, Ordering::SeqCst);
            while !blocked.is_finished() {
                poke(thread);
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(blocked.join().unwrap(), "the read ended without EINTR");
        });
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

//! Low-level process functions of the UnixBench family: fork, exec, wait,
//! process groups, parent-death signals, pipes, polling, the monotonic
//! clock and sync, as thin wrappers over libc.
//!
//! They live here until the project's `sys` module exists. The UnixBench
//! programs fork and exec in their hot loops, so these wrappers add nothing
//! beyond the system call and an `EINTR` retry where the call may be
//! interrupted.

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// What `fork` returned, seen from each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forked {
    /// This is the new process.
    Child,
    /// This is the caller; the new process has this id.
    Parent(libc::pid_t),
}

/// `fork(2)`. Only call it from a single-threaded process (a UnixBench
/// copy is one): the child of a multi-threaded process may only make
/// async-signal-safe calls.
pub fn fork() -> io::Result<Forked> {
    // SAFETY: fork has no memory-safety preconditions; the callers run in
    // single-threaded copy processes (see the doc comment).
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Ends this process at once with `code`, without running exit handlers
/// or flushing buffers: what a forked child that did its job should do.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Waits for the child `pid` to end and returns its raw wait status
/// (`0` for a normal exit with code 0), retrying on `EINTR`.
pub fn wait_for(pid: libc::pid_t) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid, writable int.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(status);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// How a child that has ended ended, without reaping it
/// ([`crate::sys::child_process::ended_unreaped`]): `Some("exit code 1")`, or
/// `None` while it runs.
pub fn peek_exit(pid: libc::pid_t) -> Option<String> {
    use std::os::unix::process::ExitStatusExt as _;
    let status = crate::sys::child_process::ended_unreaped(pid).ok()??;
    Some(match status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("killed by signal {}", status.signal().unwrap_or(0)),
    })
}

/// Runs `attempt` again, for up to half a second, while it fails with
/// "text file busy". The program was just written: another thread that
/// forked while its file was open for writing leaves a child holding
/// that write until the child execs, and an exec of a file open for
/// writing fails with ETXTBSY meanwhile. Safe in a forked child: it
/// only sleeps and reads the clock.
pub fn while_text_busy<T>(mut attempt: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match attempt() {
            Err(e)
                if e.raw_os_error() == Some(libc::ETXTBSY)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return result,
        }
    }
}

/// `execv(2)`: replaces this process image; returns only on failure.
/// `argv` must not be empty (its first entry is the program's name).
pub fn execv(path: &CStr, argv: &[&CStr]) -> io::Error {
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(std::ptr::null());
    // SAFETY: `path` and every argument are NUL-terminated and outlive the
    // call; `pointers` is NULL-terminated as execv requires.
    unsafe { libc::execv(path.as_ptr(), pointers.as_ptr()) };
    io::Error::last_os_error()
}

/// [`execv`] of a program this process has just written into its scratch
/// directory: retried while the file is busy (see [`while_text_busy`]).
/// Returns only on failure.
pub fn execv_just_written(path: &CStr, argv: &[&CStr]) -> io::Error {
    match while_text_busy(|| Err::<std::convert::Infallible, _>(execv(path, argv))) {
        Err(e) => e,
        Ok(never) => match never {},
    }
}

/// A new pipe, both ends close-on-exec: `(read, write)`.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits until at least one of `fds` is readable (or at its end, or in
/// error), at most `timeout`; returns one flag per descriptor. An
/// interrupted wait returns all false.
pub fn poll_readable(fds: &[RawFd], timeout: Duration) -> io::Result<Vec<bool>> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `polls` holds `polls.len()` initialised pollfd structs.
    let r = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, millis) };
    if r < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(err);
    }
    Ok(polls.iter().map(|p| p.revents != 0).collect())
}

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock in every process of
/// the host, so a time can be handed across `exec`.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `sync(2)`: flushes every dirty page, as UnixBench does before each pass
/// of a test.
pub fn sync_all() {
    // SAFETY: sync has no arguments and cannot fail.
    unsafe { libc::sync() }
}

/// Whether a raw wait status is a normal exit with code 0.
pub fn exited_cleanly(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// A raw wait status in words: `exit code 3`, `killed by signal 9`.
pub fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit code {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("wait status {status:#x}")
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;

    #[test]
    fn text_busy_is_retried_and_other_errors_are_not() {
        let mut tries = 0;
        let result = while_text_busy(|| {
            tries += 1;
            if tries < 3 {
                Err(std::io::Error::from_raw_os_error(libc::ETXTBSY))
            } else {
                Ok(tries)
            }
        });
        assert_eq!(result.unwrap(), 3);
        let mut tries = 0;
        let result: std::io::Result<()> = while_text_busy(|| {
            tries += 1;
            Err(std::io::Error::from_raw_os_error(libc::EACCES))
        });
        assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EACCES));
        assert_eq!(tries, 1);
    }

    #[test]
    fn statuses_read_as_words() {
        assert!(exited_cleanly(0));
        assert!(!exited_cleanly(3 << 8));
        assert_eq!(describe_status(3 << 8), "exit code 3");
        assert_eq!(describe_status(9), "killed by signal 9");
    }

    #[test]
    fn pipes_carry_bytes_and_poll_sees_them() {
        let (read, write) = pipe().unwrap();
        assert_eq!(
            poll_readable(&[read.as_raw_fd()], Duration::from_millis(1)).unwrap(),
            vec![false]
        );
        std::io::Write::write_all(&mut std::fs::File::from(write), b"go\n").unwrap();
        assert_eq!(
            poll_readable(&[read.as_raw_fd()], Duration::from_secs(1)).unwrap(),
            vec![true]
        );
    }

    #[test]
    fn the_monotonic_clock_moves_forward() {
        let a = monotonic_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(monotonic_ns() >= a + 1_000_000);
    }
}

//! Forked worker processes, kept in a process group of their own so that
//! they can all be killed at once, and always reaped.
//!
//! hackbench's process mode is real `fork`s: a benchmark of the scheduler
//! and of process wake-ups must not quietly become one of threads. A
//! benchmark that forks must also never leave a process behind, whatever
//! happens: the user's Ctrl-C, a child that fails, a panic in the parent,
//! or the parent being killed outright. So:
//!
//! - every child joins one new process group (the first child leads it),
//!   which `kill(-pgid, SIGKILL)` reaches in one call, and which the
//!   terminal's Ctrl-C does not reach (the parent decides when they die);
//! - every child asks the kernel to kill it when the thread that forked it
//!   dies (`PR_SET_PDEATHSIG`), so even a `kill -9` of sledge leaves none;
//! - [`ProcessGroup`] knows which children are not reaped yet, kills the
//!   group only while one is (a reaped group's id may be reused by an
//!   unrelated process), and kills and reaps whatever is left when dropped.
//!
//! A forked child of a multi-threaded process may only call
//! async-signal-safe functions: another thread may have held the
//! allocator's lock at the moment of the fork. [`ProcessGroup::spawn`] is
//! therefore `unsafe`, and the bodies given to it do raw system calls only.
//!
//! The death-signal request is `sys::process`'s, shared with every family
//! that starts processes.

use std::collections::HashSet;
use std::io;
use std::time::{Duration, Instant};

/// Exit code of a child that found its parent gone before it started.
const EXIT_ORPHANED: i32 = 125;

/// How long [`ProcessGroup::kill_and_reap`] waits for killed children.
/// SIGKILL cannot be caught, but a process in uninterruptible sleep (a
/// stuck NFS read) only dies when the call returns.
const REAP_DEADLINE: Duration = Duration::from_secs(10);

/// Children forked into one process group, until they are reaped.
#[derive(Debug, Default)]
pub struct ProcessGroup {
    /// The group's id: the first child's pid.
    pgid: Option<libc::pid_t>,
    /// Children not reaped yet.
    live: HashSet<libc::pid_t>,
}

/// How a child ended, from `waitpid`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildStatus(pub libc::c_int);

impl ChildStatus {
    /// Exited normally with status 0.
    pub fn success(self) -> bool {
        libc::WIFEXITED(self.0) && libc::WEXITSTATUS(self.0) == 0
    }

    /// The exit status, if it exited (rather than being killed).
    pub fn code(self) -> Option<i32> {
        libc::WIFEXITED(self.0).then(|| libc::WEXITSTATUS(self.0))
    }

    /// The signal that killed it, if one did.
    pub fn signal(self) -> Option<i32> {
        libc::WIFSIGNALED(self.0).then(|| libc::WTERMSIG(self.0))
    }
}

impl std::fmt::Display for ChildStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code(), self.signal()) {
            (Some(EXIT_ORPHANED), _) => write!(f, "found its parent gone"),
            (Some(code), _) => write!(f, "exited with status {code}"),
            (_, Some(sig)) => write!(f, "was killed by {}", crate::sys::signal::describe(sig)),
            _ => write!(f, "ended with wait status {:#x}", self.0),
        }
    }
}

impl ProcessGroup {
    /// An empty group; the first [`spawn`](Self::spawn) creates it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Children forked and not reaped yet.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// Forks a child that joins the group, runs `body` and exits with the
    /// code it returns. The child gets the default action for SIGINT,
    /// SIGTERM and SIGHUP (not the parent's handlers: a child must never
    /// run sledge's Ctrl-C handler) and no blocked signals.
    ///
    /// # Safety
    ///
    /// `body` runs in the child of a possibly multi-threaded process: it
    /// must only call async-signal-safe functions (no allocation, no lock,
    /// no panic, no printing), and must not rely on other threads.
    pub unsafe fn spawn(&mut self, body: impl FnOnce() -> i32) -> io::Result<libc::pid_t> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let leader = self.pgid.unwrap_or(0);
        // SAFETY: fork is safe to call; the child below only does
        // async-signal-safe calls before `_exit`, as `body` promises to.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: all async-signal-safe; `_exit` skips atexit handlers
            // and destructors that belong to the parent.
            unsafe {
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                libc::setpgid(0, leader);
                // Fails only when the parent died before the request
                // (SIGKILL is always a valid signal to ask for).
                if crate::sys::child_process::die_with_parent(parent, libc::SIGKILL).is_err() {
                    libc::_exit(EXIT_ORPHANED);
                }
                libc::_exit(body());
            }
        }
        // Also from the parent, so the group exists by the time `spawn`
        // returns whoever runs first. EACCES/ESRCH (the child already
        // exited, or already did it) change nothing.
        // SAFETY: setpgid has no memory preconditions.
        unsafe { libc::setpgid(pid, if leader == 0 { pid } else { leader }) };
        self.pgid.get_or_insert(pid);
        self.live.insert(pid);
        Ok(pid)
    }

    /// Waits for the next child of the group to end. `Ok(None)` when the
    /// wait was interrupted by a signal (see
    /// [`wake_signal`](super::wake_signal)) or no child is left.
    pub fn wait_any(&mut self) -> io::Result<Option<(libc::pid_t, ChildStatus)>> {
        self.wait_with(0)
    }

    /// Like [`wait_any`](Self::wait_any) without blocking.
    pub fn try_wait_any(&mut self) -> io::Result<Option<(libc::pid_t, ChildStatus)>> {
        self.wait_with(libc::WNOHANG)
    }

    fn wait_with(&mut self, flags: libc::c_int) -> io::Result<Option<(libc::pid_t, ChildStatus)>> {
        let Some(pgid) = self.pgid else {
            return Ok(None);
        };
        if self.live.is_empty() {
            return Ok(None);
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status into our variable. `-pgid`
        // waits only for our own children in that group, never for
        // children other parts of the process started.
        let pid = unsafe { libc::waitpid(-pgid, &mut status, flags) };
        if pid < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EINTR) => Ok(None),
                // None of ours left (someone else reaped them?): forget them.
                Some(libc::ECHILD) => {
                    self.live.clear();
                    Ok(None)
                }
                _ => Err(err),
            };
        }
        if pid == 0 {
            return Ok(None);
        }
        self.live.remove(&pid);
        Ok(Some((pid, ChildStatus(status))))
    }

    /// Sends SIGKILL to the whole group, if any member is not reaped yet
    /// (only then is the group id certainly still ours).
    pub fn kill_all(&self) {
        if let Some(pgid) = self.pgid
            && !self.live.is_empty()
        {
            let _ = crate::sys::child_process::kill_group(pgid);
        }
    }

    /// Kills every child and reaps them, waiting at most [`REAP_DEADLINE`].
    /// Returns how many could not be reaped in time (0 normally).
    pub fn kill_and_reap(&mut self) -> usize {
        if self.live.is_empty() {
            return 0;
        }
        self.kill_all();
        let deadline = Instant::now() + REAP_DEADLINE;
        while !self.live.is_empty() && Instant::now() < deadline {
            match self.try_wait_any() {
                Ok(Some(_)) => continue,
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => break,
            }
        }
        self.live.len()
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let left = self.kill_and_reap();
        if left > 0 {
            crate::say!(
                "warning: {left} child process(es) did not die within {} s of SIGKILL",
                REAP_DEADLINE.as_secs()
            );
        }
    }
}

/// Checks, before anything starts, that `tasks` more tasks (processes if
/// `processes`, else threads) fit the kernel's and the user's limits:
/// `kernel.threads-max` for both, `RLIMIT_NPROC` (`ulimit -u`) for a user
/// without the capability to exceed it. A pids cgroup limit is not read;
/// hitting it fails the fork with a clear message and cleans up.
// `rlim_t` is u64 on 64-bit targets (the cast is a no-op there) and u32
// on i686.
#[allow(clippy::unnecessary_cast)]
pub fn check_task_limit(tasks: usize, processes: bool) -> anyhow::Result<()> {
    let running = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            // "0.00 0.01 0.05 2/345 6789": 345 tasks exist.
            let field = s.split_whitespace().nth(3)?;
            field.split_once('/')?.1.parse::<u64>().ok()
        })
        .unwrap_or(0);
    let threads_max = std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    if let Some(max) = threads_max
        && running + tasks as u64 > max
    {
        anyhow::bail!(
            "{tasks} tasks are needed but the kernel allows {max} in all (kernel.threads-max) and {running} exist; lower groups or fds"
        );
    }
    if processes {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and geteuid write/return plain values.
        let (got, root) = unsafe {
            (
                libc::getrlimit(libc::RLIMIT_NPROC, &mut limit) == 0,
                libc::geteuid() == 0,
            )
        };
        if got
            && !root
            && limit.rlim_cur != libc::RLIM_INFINITY
            && tasks as u64 >= limit.rlim_cur as u64
        {
            anyhow::bail!(
                "{tasks} processes are needed but this user may have {} (RLIMIT_NPROC, `ulimit -u`); raise it or lower groups or fds",
                limit.rlim_cur
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_task_count_is_refused_before_anything_starts() {
        let err = check_task_limit(usize::MAX / 4, true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("kernel.threads-max"), "{err}");
        check_task_limit(4, true).unwrap();
    }

    fn is_alive(pid: libc::pid_t) -> bool {
        // Signal 0 checks existence; a reaped child is gone.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn children_share_one_new_group_and_report_their_status() {
        let mut group = ProcessGroup::new();
        let a = unsafe { group.spawn(|| 0) }.unwrap();
        let b = unsafe { group.spawn(|| 7) }.unwrap();
        assert_eq!(group.live(), 2);
        let mut seen = Vec::new();
        while let Some((pid, status)) = group.wait_any().unwrap() {
            seen.push((pid, status.code()));
        }
        seen.sort();
        let mut expected = vec![(a, Some(0)), (b, Some(7))];
        expected.sort();
        assert_eq!(seen, expected);
        assert_eq!(group.live(), 0);
    }

    #[test]
    fn dropping_the_group_kills_and_reaps_sleeping_children() {
        let pids: Vec<libc::pid_t> = {
            let mut group = ProcessGroup::new();
            let pids: Vec<libc::pid_t> = (0..3)
                .map(|_| {
                    unsafe {
                        group.spawn(|| {
                            libc::pause();
                            0
                        })
                    }
                    .unwrap()
                })
                .collect();
            // The children are in a group of their own, led by the first.
            let pgid = unsafe { libc::getpgid(pids[0]) };
            assert_eq!(pgid, pids[0]);
            assert_ne!(pgid, unsafe { libc::getpgrp() });
            pids
        };
        for pid in pids {
            assert!(!is_alive(pid), "child {pid} survived the drop");
        }
    }

    #[test]
    fn statuses_describe_exits_and_signals() {
        let mut group = ProcessGroup::new();
        let child = unsafe {
            group.spawn(|| {
                libc::pause();
                0
            })
        }
        .unwrap();
        group.kill_all();
        let (pid, status) = loop {
            if let Some(done) = group.wait_any().unwrap() {
                break done;
            }
        };
        assert_eq!(pid, child);
        assert!(!status.success());
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert_eq!(status.to_string(), "was killed by signal 9 (SIGKILL)");
        assert_eq!(ChildStatus(3 << 8).to_string(), "exited with status 3");
    }
}

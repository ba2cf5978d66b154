//! A command run as a process group of its own, to its end, its time
//! limit or a stop request, leaving nothing of it behind.
//!
//! Every shell command sledge starts on a user's behalf (`sledge ab`'s
//! setup and restore commands) runs through here, so that one rule holds
//! for all of them:
//!
//! - **Its own group, dying with sledge**: the command leads a new process
//!   group and gets SIGKILL when sledge's starting thread ends
//!   (`PR_SET_PDEATHSIG`, [`own_group_dying_with_parent`]); whatever it
//!   starts (`sh -c 'sleep 9 & ...'`) is in the group.
//! - **Bounded**: a time limit, and a stop request (Ctrl-C) polled while
//!   it runs; either ends the whole group, SIGTERM first and SIGKILL after
//!   a short grace.
//! - **Nothing left behind**: when the command itself ends, whatever it
//!   left running in its group is killed, and the caller is told.
//! - **Killed on the way out**: groups still running are listed
//!   ([`kill_live_groups`]) for an exit that skips the normal path (the
//!   second Ctrl-C).
//!
//! The end is seen through a pidfd (Linux 5.3 and later), so the wall
//! time ends when the process does, not at the next poll; older kernels
//! fall back to checking every millisecond. The command is reaped with
//! `wait4`, which also gives its CPU time and peak memory.

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::child_process::{group_exists, kill_group, own_group_dying_with_parent};

/// How long a stopped group has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(500);

/// How often a stop request is looked at while the command runs.
const STOP_POLL: Duration = Duration::from_millis(20);

/// The process groups started here that are still running.
static LIVE_GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It ended by itself, with this status.
    Exited(ExitStatus),
    /// Its time limit passed; its group was killed.
    TimedOut,
    /// A stop was asked for; its group was killed.
    Stopped,
}

/// A command that ended, and what it cost.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    /// How it ended.
    pub ending: Ending,
    /// From just before it was started to its end.
    pub wall: Duration,
    /// CPU time in user mode, of the command and the children it waited
    /// for.
    pub user: Duration,
    /// CPU time in the kernel, likewise.
    pub system: Duration,
    /// The largest resident set of the command or of one of the children
    /// it waited for, in KiB.
    pub max_rss_kib: u64,
    /// Whether processes of its group were still running when it ended
    /// (killed then).
    pub left_running: bool,
}

/// A command started as a process group of its own.
#[derive(Debug)]
pub struct GroupChild {
    /// The started process (its pipes, for the caller to read).
    pub child: Child,
    started: Instant,
    pgid: libc::pid_t,
}

/// Starts `command` leading a process group of its own that dies with
/// sledge. The caller takes the child's pipes, if any, then calls
/// [`GroupChild::wait`].
pub fn spawn_group(command: &mut Command) -> io::Result<GroupChild> {
    let started = Instant::now();
    let child = own_group_dying_with_parent(command).spawn()?;
    let pgid = child.id() as libc::pid_t;
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(pgid);
    Ok(GroupChild {
        child,
        started,
        pgid,
    })
}

impl GroupChild {
    /// Waits for the command to end, for at most `limit`, stopping it as
    /// soon as `stop` says so; then kills whatever of its group is left.
    pub fn wait(self, limit: Duration, stop: &dyn Fn() -> bool) -> io::Result<Finished> {
        let deadline = self.started + limit;
        let pid = self.pgid;
        let ended = wait_for_end(pid, deadline, stop);
        let ending = match ended {
            Ok(None) => None,
            Ok(Some(why)) => Some(why),
            Err(err) => {
                end_group(pid);
                let _ = reap(pid);
                self.forget();
                return Err(err);
            }
        };
        if ending.is_some() {
            end_group(pid);
        }
        let reaped = reap(pid);
        let wall = self.started.elapsed();
        // The command is gone; anything of its group still running was
        // left behind by it.
        let left_running = ending.is_none() && group_has_live_members(pid);
        if left_running {
            let _ = kill_group(pid);
        }
        self.forget();
        let (status, usage) = reaped?;
        Ok(Finished {
            ending: ending.unwrap_or(Ending::Exited(status)),
            wall,
            user: duration_of(usage.ru_utime),
            system: duration_of(usage.ru_stime),
            max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
            left_running,
        })
    }

    fn forget(&self) {
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|g| *g != self.pgid);
    }
}

/// Runs `command` as [`spawn_group`] and [`GroupChild::wait`] do.
pub fn run_group(
    command: &mut Command,
    limit: Duration,
    stop: &dyn Fn() -> bool,
) -> io::Result<Finished> {
    spawn_group(command)?.wait(limit, stop)
}

/// Kills every group started here that is still running: for an exit
/// that skips the normal end (the second Ctrl-C).
pub fn kill_live_groups() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner()));
    for pgid in groups {
        let _ = kill_group(pgid);
    }
}

/// Waits until `pid` has ended (`None`: it ended by itself, not reaped
/// yet), the deadline passed or `stop` said so.
fn wait_for_end(
    pid: libc::pid_t,
    deadline: Instant,
    stop: &dyn Fn() -> bool,
) -> io::Result<Option<Ending>> {
    let pidfd = open_pidfd(pid);
    let result = loop {
        if stop() {
            break Ok(Some(Ending::Stopped));
        }
        let now = Instant::now();
        if now >= deadline {
            break Ok(Some(Ending::TimedOut));
        }
        let slice = (deadline - now).min(STOP_POLL);
        let ended = match pidfd {
            Some(fd) => poll_readable(fd, slice),
            None => {
                std::thread::sleep(slice.min(Duration::from_millis(1)));
                has_ended(pid)
            }
        };
        match ended {
            Ok(true) => break Ok(None),
            Ok(false) => {}
            Err(err) => break Err(err),
        }
    };
    if let Some(fd) = pidfd {
        // SAFETY: the descriptor was opened above and is closed once.
        unsafe { libc::close(fd) };
    }
    result
}

/// A pidfd for `pid`, or `None` where the kernel has none (before 5.3).
fn open_pidfd(pid: libc::pid_t) -> Option<libc::c_int> {
    // SAFETY: pidfd_open takes a pid and flags; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)
}

/// Whether the pidfd says its process ended, waiting at most `slice`.
fn poll_readable(fd: libc::c_int, slice: Duration) -> io::Result<bool> {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(slice.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one pollfd that lives for the whole call.
    let n = unsafe { libc::poll(&mut poll, 1, millis) };
    if n < 0 {
        let err = io::Error::last_os_error();
        return if err.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(err)
        };
    }
    Ok(n > 0)
}

/// Whether `pid` has ended, leaving it to be reaped.
fn has_ended(pid: libc::pid_t) -> io::Result<bool> {
    super::child_process::ended_unreaped(pid).map(|ended| ended.is_some())
}

/// SIGTERM to the group, then SIGKILL after [`GRACE`] if any of it is
/// left.
fn end_group(pgid: libc::pid_t) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill with a negative pid signals a process group.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let until = Instant::now() + GRACE;
    while Instant::now() < until && group_has_live_members(pgid) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = kill_group(pgid);
}

/// Whether a process of the group is still running, not merely ended and
/// waiting to be reaped (the leader until [`reap`], a child of it until
/// init reaps it): read from `/proc`, as no signal tells the two apart.
fn group_has_live_members(pgid: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return group_exists(pgid);
    };
    entries.flatten().any(|entry| {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            return false;
        };
        // SAFETY: getpgid takes a pid; no memory.
        let group = unsafe { libc::getpgid(pid) };
        group == pgid && !is_zombie(pid)
    })
}

/// Whether `pid` has ended and waits to be reaped (state `Z`), or is gone.
fn is_zombie(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        // The state follows the command's name, which may hold `)`.
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// Reaps `pid`: its exit status and resource use.
fn reap(pid: libc::pid_t) -> io::Result<(ExitStatus, libc::rusage)> {
    use std::os::unix::process::ExitStatusExt as _;
    let mut status: libc::c_int = 0;
    // SAFETY: wait4 fills the zeroed rusage and the status it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((ExitStatus::from_raw(status), usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn duration_of(time: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(time.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(time.tv_usec).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    fn never() -> bool {
        false
    }

    #[test]
    fn a_command_that_ends_gives_its_status_and_times() {
        let done = run_group(&mut sh("exit 3"), Duration::from_secs(30), &never).unwrap();
        assert_eq!(done.ending, Ending::Exited(done_status(3)));
        assert!(!done.left_running);
        assert!(done.wall < Duration::from_secs(30));
        let done = run_group(
            &mut sh("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"),
            Duration::from_secs(60),
            &never,
        )
        .unwrap();
        assert!(done.user + done.system > Duration::ZERO, "{done:?}");
        assert!(done.max_rss_kib > 0, "{done:?}");
    }

    fn done_status(code: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt as _;
        ExitStatus::from_raw(code << 8)
    }

    /// The pid `sh -c 'sleep N & echo $! > FILE'` wrote.
    fn pid_in(path: &std::path::Path) -> libc::pid_t {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn alive(pid: libc::pid_t) -> bool {
        !is_zombie(pid)
    }

    #[test]
    fn what_a_command_leaves_running_in_its_group_is_killed_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > {}; exit 0", file.display());
        let done = run_group(&mut sh(&script), Duration::from_secs(30), &never).unwrap();
        assert_eq!(done.ending, Ending::Exited(done_status(0)));
        assert!(done.left_running);
        let sleeper = pid_in(&file);
        let until = Instant::now() + Duration::from_secs(5);
        while alive(sleeper) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !alive(sleeper),
            "the background sleep {sleeper} outlived its command"
        );
    }

    #[test]
    fn a_time_limit_or_a_stop_ends_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > {}; sleep 300", file.display());
        let started = Instant::now();
        let done = run_group(&mut sh(&script), Duration::from_millis(300), &never).unwrap();
        assert_eq!(done.ending, Ending::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(10));
        let sleeper = pid_in(&file);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!alive(sleeper));

        let asked = Instant::now() + Duration::from_millis(200);
        let stop = move || Instant::now() >= asked;
        let done = run_group(&mut sh("sleep 300"), Duration::from_secs(300), &stop).unwrap();
        assert_eq!(done.ending, Ending::Stopped);
    }

    #[test]
    fn a_running_group_is_listed_for_the_way_out_until_it_ends() {
        // (kill_live_groups itself would kill the groups of the tests
        // running beside this one; the second Ctrl-C's test in tests/ab.rs
        // shows it.)
        let listed = |pgid| LIVE_GROUPS.lock().unwrap().contains(&pgid);
        let started = spawn_group(&mut sh("exit 0")).unwrap();
        let pgid = started.pgid;
        assert!(listed(pgid));
        started.wait(Duration::from_secs(30), &never).unwrap();
        assert!(!listed(pgid));
        assert!(!group_exists(pgid));
    }
}

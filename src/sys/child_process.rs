//! Child processes that never outlive sledge, and process groups killed in
//! one call.
//!
//! Every family that starts or forks processes (builds, compiler loads,
//! hackbench's forked workers, UnixBench's copies), and a run's rounds,
//! must leave none behind,
//! even when sledge is killed outright: the child asks the kernel for a
//! signal when its parent dies (`PR_SET_PDEATHSIG`). The request is made
//! in the child, between fork and exec, so no moment is left in which a
//! killed parent would orphan it; that is why these calls are
//! async-signal-safe. The raw calls (`prctl`, `kill` of a whole group) are
//! made here and nowhere else.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Asks the kernel to send `signal` to this process when the thread that
/// started it ends. Async-signal-safe: it may run in a forked child of a
/// multi-threaded process.
fn ask_for_parent_death_signal(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; no memory is passed.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Asks the kernel to send `signal` to this process when the thread that
/// started it ends, then checks that the parent is still `parent` (it may
/// have died before the request was made; then the error is ESRCH). A
/// process started this way never outlives a sledge that was killed
/// outright: SIGKILL ends it at once, SIGTERM lets a round's process clean
/// up first.
///
/// Async-signal-safe, so it may run between fork and exec: the error is a
/// bare OS error number, which allocates nothing.
pub fn die_with_parent(parent: libc::pid_t, signal: libc::c_int) -> io::Result<()> {
    ask_for_parent_death_signal(signal)?;
    // SAFETY: getppid cannot fail.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// Makes the process `command` starts lead a process group of its own and
/// receive SIGKILL when the thread that starts it ends, so that a build or
/// a compiler never outlives sledge, and [`kill_group`] with its pid ends
/// it together with everything it started (tar's decompressor, make's
/// compilers). SIGINT has its default action in it, as in a shell, even
/// where sledge ignores it ([`super::signal::default_sigint`]); in a group
/// of its own it gets no Ctrl-C from the terminal either way.
pub fn own_group_dying_with_parent(command: &mut Command) -> &mut Command {
    command.process_group(0);
    // SAFETY: prctl and signal are async-signal-safe, as pre_exec
    // requires. A failed request is ignored, as it always was: the child
    // still runs, and sledge's own cleanup kills it on every ordinary exit.
    unsafe {
        command.pre_exec(|| {
            let _ = ask_for_parent_death_signal(libc::SIGKILL);
            super::signal::default_sigint();
            Ok(())
        })
    }
}

/// Sends SIGKILL to every process of the group `pgid`; a group that is
/// already empty is not an error.
pub fn kill_group(pgid: libc::pid_t) -> io::Result<()> {
    if pgid <= 1 {
        return Err(io::Error::other(format!(
            "refusing to kill process group {pgid}"
        )));
    }
    // SAFETY: kill with a negative pid signals a process group; no memory.
    if unsafe { libc::kill(-pgid, libc::SIGKILL) } != 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(err);
        }
    }
    Ok(())
}

/// The process id of this process's parent now: after the parent has
/// died, the process that adopted this one (init or a subreaper).
pub fn parent_pid() -> libc::pid_t {
    // SAFETY: getppid cannot fail and touches no memory.
    unsafe { libc::getppid() }
}

/// How the child `pid` ended, without reaping it (`waitid` with
/// `WNOWAIT`); `None` while it runs. Leaving it unreaped keeps its process
/// id (and so its process group's id) from being reused before the group
/// is killed.
pub fn ended_unreaped(pid: libc::pid_t) -> io::Result<Option<std::process::ExitStatus>> {
    use std::os::unix::process::ExitStatusExt as _;
    // SAFETY: siginfo_t is plain old data; all-zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is valid and writable; P_PID with a pid is valid.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: after a successful waitid the pid and status fields are set
    // (si_pid stays 0 when the child has not ended).
    let (ended_pid, status) = unsafe { (info.si_pid(), info.si_status()) };
    if ended_pid == 0 {
        return Ok(None);
    }
    // The raw wait status: an exit code in the second byte, a signal in
    // the first.
    Ok(Some(match info.si_code {
        libc::CLD_EXITED => std::process::ExitStatus::from_raw((status & 0xff) << 8),
        _ => std::process::ExitStatus::from_raw(status & 0x7f),
    }))
}

/// Whether any process of the group `pgid` is left (signal 0 only checks;
/// a member that has exited but is not reaped yet still counts).
pub fn group_exists(pgid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; no memory is passed.
    pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    #[test]
    fn a_child_started_with_the_request_runs_normally() {
        let status = own_group_dying_with_parent(Command::new("true").stdin(Stdio::null()))
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn a_process_whose_parent_is_still_there_is_not_told_otherwise() {
        // SAFETY: getppid cannot fail.
        let parent = unsafe { libc::getppid() };
        // Signal 0 withdraws any request: the test's own process is left
        // as it was.
        die_with_parent(parent, 0).unwrap();
        let err = die_with_parent(parent + 1, 0).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESRCH));
    }

    #[test]
    fn a_group_is_killed_and_low_group_ids_are_refused() {
        assert!(kill_group(0).is_err());
        assert!(kill_group(1).is_err());
        let mut child = own_group_dying_with_parent(Command::new("sleep").arg("30"))
            .spawn()
            .unwrap();
        let pgid = child.id() as libc::pid_t;
        assert!(group_exists(pgid));
        kill_group(pgid).unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(!group_exists(pgid));
    }

    #[test]
    fn how_a_child_ended_is_read_without_reaping_it() {
        use std::os::unix::process::ExitStatusExt as _;
        let wait_ended = |pid: libc::pid_t| loop {
            if let Some(status) = ended_unreaped(pid).unwrap() {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let mut exits = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let status = wait_ended(exits.id() as libc::pid_t);
        assert_eq!(status.code(), Some(3));
        // Still there to be reaped, with the same status.
        assert_eq!(exits.wait().unwrap().code(), Some(3));

        let mut sleeps = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = sleeps.id() as libc::pid_t;
        assert_eq!(ended_unreaped(pid).unwrap(), None);
        sleeps.kill().unwrap();
        assert_eq!(wait_ended(pid).signal(), Some(libc::SIGKILL));
        sleeps.wait().unwrap();
    }
}

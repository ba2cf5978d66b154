//! Running `make` as one killable unit, timed as a person would time it.
//!
//! `make` starts in a process group of its own, and everything it starts
//! (the compiler drivers, `cc1`, `as`, `ld`, the kernel's scripts) stays in
//! that group, so one `kill(-pgid, SIGKILL)` stops the whole build, on a
//! Ctrl-C or after a failed compile whose siblings are still running. The
//! group is then watched until it is empty, so that no `cc1` outlives the
//! trial. `make` also dies with the thread that started it
//! (`PR_SET_PDEATHSIG`), should sledge be killed outright.
//!
//! The wall time runs from just before the spawn to the moment `wait4`
//! returns (a blocking wait on this thread, so no polling interval is
//! added to it); `wait4` also gives the user and system CPU time of make
//! and every process it waited for.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use crate::engine::{CancelToken, Cancelled};

/// How often the watcher looks at the stop flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);
/// How long a killed group may take to disappear before we give up
/// waiting (processes in uninterruptible sleep die when their I/O ends).
const GROUP_EXIT_LIMIT: Duration = Duration::from_secs(10);
/// Lines of make's error output quoted when it fails.
const ERROR_TAIL_LINES: usize = 12;

/// One finished `make`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MakeRun {
    /// Wall time, seconds.
    pub seconds: f64,
    /// User CPU time of make and its descendants, seconds.
    pub user: f64,
    /// System CPU time of make and its descendants, seconds.
    pub system: f64,
}

impl MakeRun {
    /// CPU time over wall time over `jobs`: 1.0 when every job slot was
    /// busy all the time.
    pub fn utilisation(&self, jobs: u64) -> f64 {
        if self.seconds > 0.0 && jobs > 0 {
            (self.user + self.system) / self.seconds / jobs as f64
        } else {
            0.0
        }
    }
}

/// One `make` invocation: the program, where it runs, its arguments and
/// where its error output goes.
#[derive(Debug, Clone)]
pub struct MakeCommand {
    /// The `make` program.
    pub make: PathBuf,
    /// Its working directory.
    pub dir: PathBuf,
    /// Its arguments (`O=...`, `-j2`, targets).
    pub args: Vec<OsString>,
    /// The file that takes its standard error (standard output, the
    /// progress lines, is discarded as a timed build by hand would).
    pub log: PathBuf,
}

impl MakeCommand {
    /// The command as a user would type it, for messages.
    pub fn display(&self) -> String {
        let mut text = String::from("make");
        for arg in &self.args {
            text.push(' ');
            text.push_str(&arg.to_string_lossy());
        }
        text
    }
}

/// Runs `command` to the end, or until `cancel` (then `Cancelled`). A
/// failure quotes the end of make's error output. Either way no process of
/// the build is left when this returns.
pub fn run(command: &MakeCommand, cancel: &CancelToken) -> anyhow::Result<MakeRun> {
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    let log = std::fs::File::create(&command.log)
        .with_context(|| format!("creating `{}`", command.log.display()))?;
    let mut cmd = Command::new(&command.make);
    // A make that sledge itself runs under must not hand its job server
    // or flags down: the build's parallelism is `-j` alone. The compiler
    // is the build's own (`cc` or `gcc`, as the notes say), not $CC.
    cmd.args(&command.args)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .env_remove("CC")
        .env_remove("CFLAGS")
        .env_remove("CPPFLAGS")
        .env_remove("LDFLAGS")
        .current_dir(&command.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    crate::sys::child_process::own_group_dying_with_parent(&mut cmd);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("starting {}", command.make.display()))?;
    let pid = child.id() as libc::pid_t;
    // The child is reaped with wait4 below, never through `child`.
    drop(child);

    let finished = AtomicBool::new(false);
    let (status, usage, seconds) = std::thread::scope(|s| {
        s.spawn(|| {
            while !finished.load(Ordering::Acquire) {
                if cancel.is_cancelled() {
                    // make is not reaped until wait4 below returns, so
                    // the group it leads is still ours.
                    let _ = crate::sys::child_process::kill_group(pid);
                    return;
                }
                std::thread::sleep(CANCEL_POLL);
            }
        });
        let waited = wait_for(pid);
        let seconds = started.elapsed().as_secs_f64();
        // Whatever is left of the group (after a failure, make's siblings
        // may still run) goes now, before the group id can be reused.
        let _ = crate::sys::child_process::kill_group(pid);
        finished.store(true, Ordering::Release);
        waited.map(|(status, usage)| (status, usage, seconds))
    })?;
    wait_until_group_gone(pid);

    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(anyhow!(
            "`{}` in {} failed ({}){}",
            command.display(),
            command.dir.display(),
            describe_status(status),
            error_tail(&command.log)
        ));
    }
    Ok(MakeRun {
        seconds,
        user: timeval_seconds(usage.ru_utime),
        system: timeval_seconds(usage.ru_stime),
    })
}

/// Blocks until `pid` exits; its status and resource usage.
fn wait_for(pid: libc::pid_t) -> anyhow::Result<(libc::c_int, libc::rusage)> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid and writable.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(anyhow!("waiting for make (pid {pid}): {err}"));
        }
    }
}

/// Waits (bounded) until no process of group `pgid` is left.
fn wait_until_group_gone(pgid: libc::pid_t) {
    let deadline = Instant::now() + GROUP_EXIT_LIMIT;
    while crate::sys::child_process::group_exists(pgid) && Instant::now() < deadline {
        let _ = crate::sys::child_process::kill_group(pgid);
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn describe_status(status: libc::c_int) -> String {
    if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("wait status {status}")
    }
}

/// The last lines of the log, as `: line | line`, or nothing.
fn error_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(ERROR_TAIL_LINES)..];
    format!(": {}", tail.join(" | "))
}

fn timeval_seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(dir: &Path, makefile: &str, args: &[&str]) -> MakeCommand {
        std::fs::write(dir.join("Makefile"), makefile).unwrap();
        MakeCommand {
            make: crate::workloads::build::tools::find_program("make").expect("make on PATH"),
            dir: dir.to_path_buf(),
            args: args.iter().map(OsString::from).collect(),
            log: dir.join("make.log"),
        }
    }

    #[test]
    fn a_build_is_timed_with_its_cpu_time() {
        if crate::workloads::build::tools::find_program("make").is_none() {
            return; // the missing-tools message is tested elsewhere
        }
        let tmp = tempfile::tempdir().unwrap();
        // Two jobs that each burn CPU for a moment.
        let spin = "\tsh -c 'i=0; while [ $$i -lt 20000 ]; do i=$$((i+1)); done'\n";
        let makefile = format!("all: a b\na:\n{spin}b:\n{spin}");
        let run = run(
            &command(tmp.path(), &makefile, &["-j2"]),
            &CancelToken::new(),
        )
        .unwrap();
        assert!(run.seconds > 0.0);
        assert!(run.user + run.system > 0.0, "{run:?}");
        assert!(run.utilisation(2) > 0.0);
    }

    #[test]
    fn a_failure_quotes_the_error_output() {
        if crate::workloads::build::tools::find_program("make").is_none() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let makefile = "all:\n\t@echo 'broken.c:3: error: expected ;' >&2; exit 3\n";
        let err = run(
            &command(tmp.path(), makefile, &["all"]),
            &CancelToken::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`make all`"), "{err}");
        assert!(err.contains("exit status 2"), "{err}");
        assert!(err.contains("broken.c:3: error: expected ;"), "{err}");
    }
}

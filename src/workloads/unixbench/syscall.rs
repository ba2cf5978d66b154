//! `unixbench.syscall`: UnixBench's system call overhead (`syscall`), in
//! loops per second.
//!
//! The index test (`calls=mix`) makes four cheap system calls per loop:
//! `close(dup(fd))` on the read end of a pipe, `getpid()` (through
//! `syscall(2)`, so no C library cache can answer it), `getuid()` and
//! `umask(022)`. `close` and `getpid` run one kind alone; `exec` forks a
//! child that execs `/bin/true` and waits for it (UnixBench's `sysexec`,
//! not part of the index).

use std::ffi::CStr;
use std::os::fd::AsRawFd;

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::libc_process::{self, Forked};
use super::program::{Calls, Program};
use super::protocol::Gate;
use super::score::Outcome;
use super::timed;
use crate::engine::{
    Case, CaseEnv, IndexEntry, ParamKind, ParamRole, ParamSet, ParamSpec, Params, RunSection,
    Workload,
};

/// What `calls=exec` runs in each child, as UnixBench does.
pub const TRUE_PROGRAM: &CStr = c"/bin/true";

/// The `unixbench.syscall` workload.
pub struct SyscallWorkload;

impl Workload for SyscallWorkload {
    fn id(&self) -> &'static str {
        "unixbench.syscall"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "cheap system calls in a loop, loops per second; UnixBench's syscall (\"System Call Overhead\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        SyscallWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = SyscallWorkloadParams::from_set(p);
        let calls = p.calls;
        if calls == Calls::Exec
            && !std::path::Path::new(TRUE_PROGRAM.to_str().unwrap_or("")).exists()
        {
            anyhow::bail!(
                "unixbench.syscall: calls=exec runs {} (Debian: coreutils), which does not exist",
                TRUE_PROGRAM.to_string_lossy()
            );
        }
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Syscall(calls),
            p.copies,
            p.time,
            None,
        )?))
    }

    /// Only the mix of calls is in the index.
    fn index_entry(&self, p: &ParamSet) -> Option<IndexEntry> {
        Some(match SyscallWorkloadParams::from_set(p).calls {
            Calls::Mix => IndexEntry::Test("syscall"),
            Calls::Exec => IndexEntry::Variant("Exec System Call Overhead".to_string()),
            calls => IndexEntry::Variant(format!("System Call Overhead ({calls})")),
        })
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.syscall`.
    pub struct SyscallWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("10"),
        calls: Calls = ParamSpec {
            name: "calls",
            role: ParamRole::Other,
            help: "mix: close(dup), getpid, getuid, umask (the index test); close or getpid alone; exec: fork + exec /bin/true + wait (UnixBench's sysexec)",
            kind: ParamKind::Choice(Calls::NAMES),
            default: "mix",
        },
    }
}

/// One copy: the chosen calls for `seconds`.
pub fn run_copy(calls: Calls, seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    // UnixBench's create_fd(): a pipe whose write end is closed.
    let (fd, write_end) = libc_process::pipe().context("syscall: pipe")?;
    drop(write_end);
    let fd = fd.as_raw_fd();
    gate.open()?;
    match calls {
        Calls::Mix => timed::run_for(seconds, 16, |n| {
            for _ in 0..n {
                // SAFETY: plain system calls on a descriptor this process
                // owns (closing the duplicate, not `fd`).
                unsafe {
                    libc::close(libc::dup(fd));
                    libc::syscall(libc::SYS_getpid);
                    libc::getuid();
                    libc::umask(0o022);
                }
            }
            Ok(())
        }),
        Calls::Close => timed::run_for(seconds, 32, |n| {
            for _ in 0..n {
                // SAFETY: as above.
                unsafe { libc::close(libc::dup(fd)) };
            }
            Ok(())
        }),
        Calls::Getpid => timed::run_for(seconds, 64, |n| {
            for _ in 0..n {
                // SAFETY: getpid takes no arguments.
                unsafe { libc::syscall(libc::SYS_getpid) };
            }
            Ok(())
        }),
        Calls::Exec => timed::run_for(seconds, 1, |_| exec_true()),
    }
}

/// fork; the child execs /bin/true; wait.
fn exec_true() -> anyhow::Result<()> {
    match libc_process::fork().context("syscall: fork failed")? {
        Forked::Child => {
            libc_process::execv(TRUE_PROGRAM, &[TRUE_PROGRAM]);
            libc_process::exit_now(1);
        }
        Forked::Parent(pid) => {
            let status = libc_process::wait_for(pid).context("syscall: waitpid failed")?;
            if !libc_process::exited_cleanly(status) {
                bail!(
                    "syscall: exec of {} failed ({})",
                    TRUE_PROGRAM.to_string_lossy(),
                    libc_process::describe_status(status)
                );
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_call_runs() {
        for calls in [Calls::Mix, Calls::Close, Calls::Getpid] {
            let outcome = run_copy(calls, 0.01, &mut Gate::open_at_once()).unwrap();
            assert!(outcome.count > 0.0, "{calls:?}");
        }
    }
}

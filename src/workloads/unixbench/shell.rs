//! `unixbench.shell`: UnixBench's shell scripts test (`looper` running
//! `multi.sh`), in loops per minute.
//!
//! A copy runs the driver script in a loop for the duration: fork, exec the
//! script (through its `#!/bin/sh` line, as `looper` execs `multi.sh`),
//! wait, check the status. One loop is the driver starting `concurrent`
//! workers at once and waiting for all of them (see [`super::shell_script`]).
//! The copies run in the case's scratch directory, where the workers'
//! files come and go.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::libc_process::{self, Forked};
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use super::shell_script::{self, DRIVER};
use super::timed;
use crate::engine::{
    Case, CaseEnv, IndexEntry, ParamKind, ParamRole, ParamSet, ParamSpec, Params, RunSection,
    Workload,
};
use crate::workloads::common::workdir::{check_dir, dir_param};

/// The exit code of a forked child whose exec failed (looper's 99).
const EXEC_FAILED: i32 = 99;

/// The shell the scripts run under, as UnixBench's scripts name it.
pub const SHELL: &str = "/bin/sh";

/// Bytes a copy's workers may write at once: each writes four small files.
const BYTES_PER_WORKER: u64 = 256 << 10;

/// The `unixbench.shell` workload.
pub struct ShellWorkload;

impl Workload for ShellWorkload {
    fn id(&self) -> &'static str {
        "unixbench.shell"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a shell script starting concurrent workers (sort, od, grep, tee, wc), loops per minute; UnixBench's shell1 / shell8 (\"Shell Scripts (N concurrent)\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ShellWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = ShellWorkloadParams::from_set(p);
        check_commands()?;
        let concurrent = p.concurrent as u32;
        let bytes = p.copies * u64::from(concurrent) * BYTES_PER_WORKER;
        let dir = check_dir(self.id(), p.dir.as_str(), bytes)?;
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Shell { concurrent },
            p.copies,
            p.time,
            Some(dir),
        )?))
    }

    /// Shell scripts start processes of their own, as many at once as
    /// they like.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        None
    }

    /// The index has 1 and 8 concurrent scripts.
    fn index_entry(&self, p: &ParamSet) -> Option<IndexEntry> {
        Some(match ShellWorkloadParams::from_set(p).concurrent {
            1 => IndexEntry::Test("shell1"),
            8 => IndexEntry::Test("shell8"),
            n => IndexEntry::Variant(format!("Shell Scripts ({n} concurrent)")),
        })
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.shell`.
    pub struct ShellWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("60"),
        concurrent: u64 = ParamSpec {
            name: "concurrent",
            role: ParamRole::Other,
            help: "workers each loop starts at once (UnixBench's index: 1 and 8)",
            kind: ParamKind::Int { min: 1, max: 64 },
            default: "1",
        },
        dir: String = dir_param(),
    }
}

/// Checks that the shell and the commands the scripts run exist, so a
/// missing one is a clear error before anything starts.
pub fn check_commands() -> anyhow::Result<()> {
    if !Path::new(SHELL).exists() {
        bail!(
            "unixbench.shell: {SHELL} does not exist; the shell scripts test needs a POSIX shell there"
        );
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = shell_script::COMMANDS
        .iter()
        .copied()
        .filter(|command| {
            !std::env::split_paths(&path).any(|dir| is_executable(&dir.join(command)))
        })
        .collect();
    if !missing.is_empty() {
        bail!(
            "unixbench.shell: the scripts need {} on the PATH; missing: {} (Debian: coreutils, grep)",
            shell_script::COMMANDS.join(", "),
            missing.join(", ")
        );
    }
    Ok(())
}

fn is_executable(path: &PathBuf) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// One copy: the driver with `concurrent` workers, in a loop, for
/// `seconds`. The working directory is the case's scratch directory.
pub fn run_copy(concurrent: u32, seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir().context("shell: no working directory")?;
    let driver = CString::new(cwd.join(DRIVER).as_os_str().as_bytes())
        .context("shell: the scratch directory's path holds a NUL byte")?;
    if !cwd.join(DRIVER).exists() {
        bail!(
            "shell: the driver script `{}` is missing",
            cwd.join(DRIVER).display()
        );
    }
    let workers = CString::new(concurrent.to_string()).expect("digits hold no NUL");
    let argv: [&CStr; 2] = [&driver, &workers];
    gate.open()?;
    timed::run_for(seconds, 1, |_| {
        match libc_process::fork().context("shell: fork failed")? {
            Forked::Child => {
                libc_process::execv_just_written(&driver, &argv);
                libc_process::exit_now(EXEC_FAILED);
            }
            Forked::Parent(pid) => {
                let status = libc_process::wait_for(pid).context("shell: wait failed")?;
                if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == EXEC_FAILED {
                    bail!("shell: `{}` did not exec", driver.to_string_lossy());
                }
                if !libc_process::exited_cleanly(status) {
                    bail!(
                        "shell: the script failed: {}",
                        libc_process::describe_status(status)
                    );
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_are_found_here() {
        check_commands().unwrap();
    }
}

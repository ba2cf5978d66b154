//! sledge's small C program for the two UnixBench loops whose cost is the
//! size of the process running them: `execl` (each loop starts the program
//! anew) and `spawn` (each loop copies the process's address space).
//!
//! UnixBench runs them from small C programs. Run from sledge's own 9 MB
//! position-independent binary they measured something else: an exec of
//! sledge took some 160 page faults against 60 for UnixBench's program
//! (12,800 relocations, three shared libraries, Rust's start-up) and ran 2.5
//! to 3 times slower here, and a fork of a sledge copy (36 mappings, 390 KiB
//! of private pages, against 23 and 92 KiB) about 20% slower. So `build.rs`
//! compiles [`SOURCE`] with the target's C compiler, sledge embeds the
//! executable, the case writes it into its scratch directory, and each
//! copy, once released, replaces itself with it.

use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, bail};

use super::libc_process;

/// The fork/exec program's source, for reference.
pub const SOURCE: &str = include_str!("forkexec.c");

/// The fork/exec program, compiled by `build.rs`.
pub const EXECUTABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sledge-forkexec"));

/// The fork/exec program's file name in a scratch directory.
pub const FILE: &str = "sledge-forkexec";

/// Writes the fork/exec program, executable, into `dir`.
pub fn write_into(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(FILE);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&path)
        .with_context(|| format!("writing `{}`", path.display()))?;
    file.write_all(EXECUTABLE)
        .with_context(|| format!("writing `{}`", path.display()))
}

/// Replaces this process with the fork/exec program in the working directory, running
/// `args` (its mode and numbers). Returns only on failure.
pub fn exec_in_working_dir(args: &[&str]) -> anyhow::Error {
    match exec(args) {
        Ok(never) => match never {},
        Err(err) => err,
    }
}

fn exec(args: &[&str]) -> anyhow::Result<std::convert::Infallible> {
    let cwd = std::env::current_dir().context("no working directory")?;
    let program = cwd.join(FILE);
    if !program.exists() {
        bail!("the fork/exec program `{}` is missing", program.display());
    }
    let path = CString::new(program.as_os_str().as_bytes())
        .context("the scratch directory's path holds a NUL byte")?;
    let words: Vec<CString> = args
        .iter()
        .map(|a| CString::new(*a).expect("modes and digits hold no NUL"))
        .collect();
    let mut argv: Vec<&CStr> = vec![&path];
    argv.extend(words.iter().map(CString::as_c_str));
    let err = libc_process::execv_just_written(&path, &argv);
    if err.raw_os_error() == Some(libc::EACCES) {
        bail!(
            "cannot execute `{}` ({err}): is its filesystem mounted noexec? Set --param dir= to another directory",
            program.display()
        );
    }
    Err(anyhow::Error::new(err).context(format!("exec of `{}` failed", program.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::unixbench::protocol::parse_result;

    fn run(dir: &Path, args: &[&str]) -> std::process::Output {
        // Other tests fork while this one writes the program: see
        // `libc_process::while_text_busy`.
        libc_process::while_text_busy(|| {
            std::process::Command::new(dir.join(FILE))
                .args(args)
                .output()
        })
        .unwrap()
    }

    #[test]
    fn execl_counts_its_images_and_reports_in_the_protocol() {
        let dir = tempfile::tempdir().unwrap();
        write_into(dir.path()).unwrap();
        // The time is already up: the first image reports a count of 1.
        let out = run(dir.path(), &["execl", "0", "1", "0"]);
        assert!(out.status.success());
        let outcome = parse_result(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
        assert_eq!(outcome.count, 1.0);
        // A second of re-executing itself: many images, one report (a
        // second, so that even a slow start on a busy host leaves time for
        // more than one image).
        let start = libc_process::monotonic_ns().to_string();
        let out = run(dir.path(), &["execl", &start, "1000000000", "0"]);
        assert!(out.status.success());
        let outcome = parse_result(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
        assert!(outcome.count > 1.0 && outcome.seconds >= 1.0, "{outcome:?}");
    }

    #[test]
    fn spawn_counts_reaped_children() {
        let dir = tempfile::tempdir().unwrap();
        write_into(dir.path()).unwrap();
        let out = run(dir.path(), &["spawn", "20000000"]);
        assert!(out.status.success());
        let outcome = parse_result(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
        assert!(
            outcome.count >= 1.0 && outcome.seconds >= 0.02,
            "{outcome:?}"
        );
    }

    #[test]
    fn bad_usage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_into(dir.path()).unwrap();
        assert_eq!(run(dir.path(), &[]).status.code(), Some(2));
        assert_eq!(run(dir.path(), &["fork", "1"]).status.code(), Some(2));
        assert!(SOURCE.contains("execl(self, self"));
    }
}

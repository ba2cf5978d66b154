//! `unixbench.execl`: a process that replaces itself with a new image of
//! its own program over and over (UnixBench's `execl`), in loops per second.
//!
//! UnixBench's `execl` program checks the clock, then `execl`s its own
//! binary with the start time and the count so far as arguments; the image
//! that finds the time up prints the count. The cost of one loop is the
//! kernel's exec plus the start-up of the program: for UnixBench's small C
//! program some 60 page faults, for sledge's own 9 MB position-independent
//! binary (12,800 relocations, three shared libraries, Rust's runtime)
//! some 160, which made an exec of sledge 2.5 to 3 times slower here. So
//! the program exec'd is sledge's own small C program doing the same
//! ([`IMAGE_SOURCE`], built by `build.rs` and embedded), written into the
//! case's scratch directory. Each copy starts the chain once released; the
//! count includes the first image, as UnixBench's does. The clock is
//! `CLOCK_MONOTONIC` in nanoseconds (UnixBench uses `time()`, whole
//! seconds, and divides by the wall time `Run` measured around the
//! program).

use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::copy_main::Gate;
use super::process;
use super::program::Program;
use super::score::Outcome;
use crate::engine::{Case, CaseEnv, ParamSet, ParamSpec, Workload};
use crate::workloads::storage::workdir::{check_dir, dir_param};

/// The image's source, for reference.
pub const IMAGE_SOURCE: &str = include_str!("execl_image.c");

/// The image, compiled by `build.rs`.
pub const IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sledge-execl-image"));

/// The image's file name in the scratch directory.
pub const IMAGE_FILE: &str = "sledge-execl-image";

/// The `unixbench.execl` workload.
pub struct ExeclWorkload;

impl Workload for ExeclWorkload {
    fn id(&self) -> &'static str {
        "unixbench.execl"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a process re-executing itself, loops per second; UnixBench's execl (\"Execl Throughput\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            copies_param(),
            time_param("30"),
            ParamSpec {
                help: "directory the exec'd program is written to (a scratch subdirectory, removed after; must allow executing programs); default: the current directory",
                ..dir_param()
            },
        ]
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let dir = check_dir(self.id(), p.str("dir"), IMAGE.len() as u64)?;
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Execl,
            p,
            Some(dir),
        )?))
    }
}

/// Writes the image, executable, into `dir`.
pub fn write_image(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join(IMAGE_FILE);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .open(&path)
        .with_context(|| format!("writing `{}`", path.display()))?;
    file.write_all(IMAGE)
        .with_context(|| format!("writing `{}`", path.display()))
}

/// One copy: once released, becomes the first image of the chain, which
/// reports when the time is up. Returns only on failure.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir().context("execl: no working directory")?;
    let image = cwd.join(IMAGE_FILE);
    if !image.exists() {
        bail!("execl: the program `{}` is missing", image.display());
    }
    let path = CString::new(image.as_os_str().as_bytes())
        .context("execl: the scratch directory's path holds a NUL byte")?;
    let duration = CString::new(((seconds * 1e9) as u64).to_string()).expect("digits");
    let zero = CString::new("0").expect("a digit");
    gate.open()?;
    let start = CString::new(process::monotonic_ns().to_string()).expect("digits");
    let argv: [&CStr; 4] = [&path, &start, &duration, &zero];
    let err = process::execv(&path, &argv);
    if err.raw_os_error() == Some(libc::EACCES) {
        bail!(
            "execl: cannot execute `{}` ({err}): is its filesystem mounted noexec? Set --param dir= to another directory",
            image.display()
        );
    }
    Err(anyhow::Error::new(err).context(format!("execl: exec of `{}` failed", image.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_counts_itself_and_reports_in_the_protocol() {
        let dir = tempfile::tempdir().unwrap();
        write_image(dir.path()).unwrap();
        let image = dir.path().join(IMAGE_FILE);
        // The time is already up: the first image reports a count of 1.
        let out = std::process::Command::new(&image)
            .args(["0", "1", "0"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let outcome = super::super::copy_main::parse_result(text.trim()).unwrap();
        assert_eq!(outcome.count, 1.0);
        // 20 ms of re-executing itself: many images, one report.
        let start = process::monotonic_ns().to_string();
        let out = std::process::Command::new(&image)
            .args([start.as_str(), "20000000", "0"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let outcome = super::super::copy_main::parse_result(text.trim()).unwrap();
        assert!(
            outcome.count > 1.0 && outcome.seconds >= 0.02,
            "{outcome:?}"
        );
        // Bad usage is an error.
        let out = std::process::Command::new(&image).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(IMAGE_SOURCE.contains("execl(argv[0]"));
    }
}

//! `unixbench.pipe`: UnixBench's pipe throughput (`pipe`), in loops per
//! second: write 512 bytes to a pipe and read them back, in one process.

use std::os::fd::AsRawFd;

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::libc_process;
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use super::timed;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, Params, RunSection, Workload};

/// Bytes per write and read, as UnixBench's `char buf[512]`.
pub const MESSAGE: usize = 512;

/// Loops between two looks at the clock.
const LOOPS_PER_BATCH: u64 = 16;

/// The `unixbench.pipe` workload.
pub struct PipeWorkload;

impl Workload for PipeWorkload {
    fn id(&self) -> &'static str {
        "unixbench.pipe"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "write and read 512 bytes on one pipe, loops per second; UnixBench's pipe (\"Pipe Throughput\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        PipeWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = PipeWorkloadParams::from_set(p);
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Pipe,
            p.copies,
            p.time,
            None,
        )?))
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("pipe"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.pipe`.
    pub struct PipeWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("10"),
    }
}

/// One copy: write and read 512 bytes on one pipe for `seconds`.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let (read_end, write_end) = libc_process::pipe().context("pipe: creating the pipe")?;
    let (r, w) = (read_end.as_raw_fd(), write_end.as_raw_fd());
    let mut buf = [0u8; MESSAGE];
    gate.open()?;
    timed::run_for(seconds, LOOPS_PER_BATCH, |n| {
        for _ in 0..n {
            // SAFETY: `buf` is valid for MESSAGE bytes; the descriptors are
            // open for the whole loop (owned above).
            let written = unsafe { libc::write(w, buf.as_ptr().cast(), MESSAGE) };
            if written != MESSAGE as isize {
                bail!(
                    "pipe: write returned {written}: {}",
                    std::io::Error::last_os_error()
                );
            }
            // SAFETY: as above.
            let read = unsafe { libc::read(r, buf.as_mut_ptr().cast(), MESSAGE) };
            if read != MESSAGE as isize {
                bail!(
                    "pipe: read returned {read}: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_counts_round_trips() {
        let outcome = run_copy(0.02, &mut Gate::open_at_once()).unwrap();
        assert!(outcome.count >= LOOPS_PER_BATCH as f64);
        assert_eq!(outcome.count % LOOPS_PER_BATCH as f64, 0.0);
    }
}

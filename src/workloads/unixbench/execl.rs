//! `unixbench.execl`: a process that replaces itself with a new image of
//! its own program over and over (UnixBench's `execl`), in loops per second.
//!
//! UnixBench's `execl` program checks the clock, then `execl`s its own
//! binary with the start time and the count so far as arguments; the image
//! that finds the time up prints the count. Each copy here, once released,
//! becomes sledge's small C program doing the same (see [`super::forkexec`]
//! for why not sledge itself); the count includes the first image, as
//! UnixBench's does. The clock is `CLOCK_MONOTONIC` in nanoseconds
//! (UnixBench uses `time()`, whole seconds, and divides by the wall time
//! `Run` measured around the program).

use super::case::{UnixbenchCase, copies_param, time_param};
use super::forkexec;
use super::libc_process;
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, Params, RunSection, Workload};
use crate::workloads::common::workdir::{check_dir, dir_param};

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
        program_params()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        program_case(self.id(), Program::Execl, p)
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("execl"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of the workloads that run the fork/exec program
    /// (`unixbench.execl`, `unixbench.spawn`).
    pub struct ProgramParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("30"),
        dir: String = program_dir_param(),
    }
}

/// The parameters of the workloads that run the fork/exec program.
pub fn program_params() -> Vec<ParamSpec> {
    ProgramParams::specs()
}

/// A case of a workload that runs the fork/exec program: `dir` must have
/// room for the program.
pub fn program_case(
    id: &'static str,
    program: Program,
    p: &ParamSet,
) -> anyhow::Result<Box<dyn Case>> {
    let p = ProgramParams::from_set(p);
    let dir = check_dir(id, &p.dir, forkexec::EXECUTABLE.len() as u64)?;
    Ok(Box::new(UnixbenchCase::new(
        id,
        program,
        p.copies,
        p.time,
        Some(dir),
    )?))
}

/// `dir` for the workloads that run the fork/exec program.
pub fn program_dir_param() -> ParamSpec {
    ParamSpec {
        help: "directory the small fork/exec program is written to (a scratch subdirectory, removed after; must allow executing programs); default: the current directory",
        ..dir_param()
    }
}

/// One copy: once released, becomes the first image of the chain, whose
/// last image reports. Returns only on failure.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let duration = ((seconds * 1e9) as u64).to_string();
    gate.open()?;
    let start = libc_process::monotonic_ns().to_string();
    Err(forkexec::exec_in_working_dir(&["execl", &start, &duration, "0"]).context("execl"))
}

//! `unixbench.spawn`: UnixBench's process creation (`spawn`), in loops per
//! second: fork a child that exits at once, wait for it.
//!
//! What one loop costs depends on the size of the process that forks (its
//! mappings and private pages are copied) and on the child's way out (its
//! C library `exit(0)` writes to pages the fork made copy-on-write; some 28
//! page faults per loop for UnixBench's program here). So each copy, once
//! released, becomes sledge's small C program running UnixBench's loop (see
//! [`super::forkexec`]).

use super::execl::{program_case, program_params};
use super::forkexec;
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, RunSection, Workload};

/// The `unixbench.spawn` workload.
pub struct SpawnWorkload;

impl Workload for SpawnWorkload {
    fn id(&self) -> &'static str {
        "unixbench.spawn"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "fork a child that exits, wait for it, loops per second; UnixBench's spawn (\"Process Creation\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        program_params()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        program_case(self.id(), Program::Spawn, p)
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("spawn"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

/// One copy: once released, becomes the fork/exec program's spawn loop, which
/// reports. Returns only on failure.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let duration = ((seconds * 1e9) as u64).to_string();
    gate.open()?;
    Err(forkexec::exec_in_working_dir(&["spawn", &duration]).context("spawn"))
}

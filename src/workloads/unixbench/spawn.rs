//! `unixbench.spawn`: UnixBench's process creation (`spawn`), in loops per
//! second: fork a child that exits at once, wait for it.

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::copy_main::Gate;
use super::process::{self, Forked};
use super::program::Program;
use super::score::Outcome;
use super::timed;
use crate::engine::{Case, CaseEnv, ParamSet, ParamSpec, Workload};

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
        vec![copies_param(), time_param("30")]
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Spawn,
            p,
            None,
        )?))
    }
}

/// One copy: fork, exit, wait, for `seconds`.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    gate.open()?;
    timed::run_for(seconds, 1, |_| {
        match process::fork().context("spawn: fork failed")? {
            Forked::Child => process::exit_now(0),
            Forked::Parent(pid) => {
                let status = process::wait_for(pid).context("spawn: wait failed")?;
                if !process::exited_cleanly(status) {
                    bail!(
                        "spawn: bad wait status: {}",
                        process::describe_status(status)
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
    fn a_copy_forks_and_reaps_children() {
        // The child only calls _exit, so forking from the multi-threaded
        // test harness is safe.
        let outcome = run_copy(0.02, &mut Gate::open_at_once()).unwrap();
        assert!(outcome.count >= 1.0);
    }
}

//! The `hackbench` load: sledge's own hackbench run over and over, one
//! group of 20 senders and 20 receivers (processes, socket pairs, 100
//! messages of 100 bytes) per load thread, as Interbench's "Hack" load
//! runs `hackbench` with one group per CPU.

use crate::engine::{CancelToken, Cancelled};
use crate::workloads::sched::hackbench_run::{self, Config, Mode};
use crate::workloads::sched::hackbench_tasks::Ipc;

/// The configuration of each run.
pub fn config(groups: usize) -> Config {
    Config {
        groups,
        fds: 20,
        loops: 100,
        datasize: 100,
        ipc: Ipc::Socket,
        mode: Mode::Process,
        cpus: None,
    }
}

/// Runs hackbench until `stop` is set; a run in flight is killed then.
pub fn run_until_stopped(groups: usize, stop: &CancelToken) -> anyhow::Result<()> {
    let config = config(groups);
    while !stop.is_cancelled() {
        match hackbench_run::run(&config, stop) {
            Ok(_) => {}
            Err(e) if e.is::<Cancelled>() => return Ok(()),
            Err(e) => return Err(e.context("the hackbench load failed")),
        }
    }
    Ok(())
}

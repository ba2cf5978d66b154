//! Scheduler workloads: `sched.hackbench`, compatible with rt-tests'
//! hackbench (groups of processes or threads passing messages over socket
//! pairs or pipes).
//!
//! `process` and `wake_signal` are low-level OS helpers (forked process
//! groups; interrupting a blocked thread) that other families use too.

pub mod hackbench;
pub mod hackbench_run;
pub mod hackbench_tasks;
pub mod wake_signal;
pub mod worker_processes;

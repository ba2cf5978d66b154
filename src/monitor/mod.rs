//! Host health around benchmark trials: was the machine quiet enough for
//! the numbers to mean anything?
//!
//! A benchmark measures the machine only while nothing else uses it. On
//! shared and virtual hosts three things routinely spoil a trial without the
//! benchmark itself noticing:
//!
//! * **steal time**: the hypervisor ran another guest on our virtual CPUs;
//! * **swapping**: a page fault that goes to disk costs milliseconds;
//! * **other processes' CPU use**: a cron job, a build, another benchmark.
//!
//! Averaging a spoiled trial with clean ones hides the damage in a slightly
//! worse mean and a slightly wider spread. So while each trial runs a
//! [`Monitor`] samples `/proc`, and the resulting [`TrialHealth`] carries
//! explicit [`Disturbance`] flags that the engine and the reports show (and
//! may use to discard or repeat the trial) instead of silently averaging.
//! Before a run, [`idle_check`] looks for the same trouble and names the
//! busiest processes, as sbc-bench does before it starts (it waits for the
//! load average and CPU use to drop) and in its "results validation"
//! (swapping, background activity as average and maximum).
//!
//! The files, one idea each:
//!
//! * [`procfs`]: pure parsers of `/proc/stat`, `/proc/vmstat`,
//!   `/proc/[pid]/stat`, `/proc/loadavg` and `/proc/uptime`, and readers;
//! * `sampler`: [`Snapshot`] and the sampling thread behind [`Monitor`];
//! * `health`: [`TrialHealth`], the thresholds and [`summarize_snapshots`];
//! * `idle`: [`idle_check`];
//! * the hardware, read by the same monitor where the host offers it:
//!   `clock` (effective clock from APERF/MPERF, perf cycles or cpufreq),
//!   `perf_counters` (the perf events behind the second), `thermal`
//!   (throttle counters and temperatures), `energy` (RAPL through
//!   powercap), `sensors` (what a host offers, and the per-trial readers
//!   and sums), `sysfs_value` (reading one value, telling missing from
//!   denied);
//! * [`maker_mark`]: the mark that proves which process made a directory
//!   or table, so that only what a gone sledge made is ever cleaned up.
//!
//! * [`own_processes`]: processes outside sledge's tree that a case claims
//!   as its workload's (a database server on this host), counted as its
//!   own.
//!
//! Limits worth knowing: "this process" is the benchmark's process with all
//! its threads and descendants, plus what a case claimed; and `/proc` in a container usually
//! shows the whole host, which is what the check wants.

pub mod maker_mark;
pub mod own_processes;
pub mod procfs;

mod effective_clock;
mod energy;
#[cfg(test)]
pub(crate) mod fixture_tests;
mod health;
mod idle;
mod perf_counters;
mod sampler;
mod sensors;
mod snapshot;
mod sysfs_value;
mod thermal;
mod trial_health;

pub use effective_clock::{ClockReading, ClockSource};
pub use energy::EnergyReading;
pub use health::{
    CLOCK_DROP_THRESHOLD, Disturbance, OTHER_CPU_THRESHOLD_PCT, STEAL_THRESHOLD_PCT, TrialHealth,
    summarize_snapshots,
};
pub use idle::{BusyProcess, IdleReport, idle_check};
pub use procfs::CpuTimes;
pub use sampler::Monitor;
pub use sensors::{SensorAccumulator, SensorReaders, SensorSample, Sensors};
pub use snapshot::Snapshot;

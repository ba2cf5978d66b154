//! What one trial's samples found about the host, as stored with the
//! trial: [`TrialHealth`] and its [`Disturbance`] flags.
//!
//! The record sits apart from the arithmetic that fills it (`health.rs`)
//! because the sensor readers (`sensors.rs`) fill their part of it too,
//! and the arithmetic folds their accumulator in: with the record in
//! `health.rs` the two would import each other.

use serde::{Deserialize, Serialize};

use super::effective_clock::ClockSource;

/// Something that disturbed a trial enough that its numbers must not be
/// averaged with undisturbed ones without saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disturbance {
    /// The hypervisor gave our CPUs to someone else more than
    /// `health::STEAL_THRESHOLD_PCT` of the time.
    Steal,
    /// Pages were swapped in or out during the trial.
    Swap,
    /// Other processes used more than `health::OTHER_CPU_THRESHOLD_PCT` of a CPU.
    BusyHost,
    /// The hardware slowed down: a thermal-throttle counter rose during
    /// the trial (the monitor's finding), or the trial's effective clock
    /// was more than `health::CLOCK_DROP_THRESHOLD` below the case's best trial
    /// (found when the case's trials are put together).
    Throttled,
}

impl Disturbance {
    /// Short label for tables and logs: `"steal"`, `"swap"`, `"busy"` or
    /// `"throttled"`.
    pub fn label(&self) -> &'static str {
        match self {
            Disturbance::Steal => "steal",
            Disturbance::Swap => "swap",
            Disturbance::BusyHost => "busy",
            Disturbance::Throttled => "throttled",
        }
    }
}

/// What the host did while one trial ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialHealth {
    /// Wall time covered by the samples, in seconds.
    pub seconds: f64,
    /// Steal time as % of all CPU time of all CPUs over the trial.
    pub steal_pct: f64,
    /// CPU used by processes other than this one, in % of ONE CPU, averaged
    /// over the trial: the CPUs' task time (user + nice + system) minus this
    /// process's `utime + stime` (all its threads) and that of the children
    /// it reaped meanwhile (`cutime + cstime`), clamped at 0. Interrupt
    /// time is left out because it is charged to no process, so a network
    /// benchmark's own softirq work does not count against the host.
    pub other_cpu_pct: f64,
    /// Highest [`other_cpu_pct`](Self::other_cpu_pct) over the sampling
    /// intervals (merged to at least 100 ms).
    pub other_cpu_peak_pct: f64,
    /// Per CPU (indexed by CPU number), busy share (tasks and interrupts)
    /// of that CPU's time over the trial, in %. A CPU offline throughout
    /// reads 0.
    pub cpu_busy_pct: Vec<f64>,
    /// Pages swapped in during the trial.
    pub swap_in_pages: u64,
    /// Pages swapped out during the trial.
    pub swap_out_pages: u64,
    /// Context switches per second, host-wide.
    pub context_switches_per_sec: f64,
    /// Largest `procs_running` seen (runnable tasks, ours included).
    pub run_queue_max: u32,
    /// Disturbances found, in the order steal, swap, busy, throttled.
    pub flags: Vec<Disturbance>,
    /// Effective clock of the trial's CPUs while busy, MHz: from APERF/MPERF,
    /// perf cycles / ref-cycles, or cpufreq's `scaling_cur_freq` sampled
    /// and weighted by busy time (see `clock_source`). Absent where none
    /// can be read (most VMs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<f64>,
    /// Where `clock_mhz` came from: `aperf_mperf`, `perf_cycles` or
    /// `cpufreq`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_source: Option<ClockSource>,
    /// How many times the thermal-throttle counters of the trial's CPUs
    /// and their packages rose during the trial; absent without counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_events: Option<u64>,
    /// Highest temperature any thermal zone or hwmon sensor showed during
    /// the trial, °C; absent without sensors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_max_c: Option<f64>,
    /// Energy of the RAPL package and DRAM zones over the trial, joules
    /// (the whole sockets, not this process alone); absent without RAPL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_joules: Option<f64>,
    /// Mean power over the trial, watts: `energy_joules / seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_watts: Option<f64>,
}

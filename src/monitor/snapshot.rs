//! The host's counters at one instant: what the sampler takes and the
//! health arithmetic folds (kept apart from both so that neither imports
//! the other's internals).

use std::time::Instant;

use super::own_processes;
use super::procfs::{self, CpuTimes};
use super::sensors::SensorSample;

/// The host's counters at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// When it was taken, in seconds since an arbitrary origin (the
    /// monitor's start); only differences matter.
    pub at: f64,
    /// Per-CPU jiffies from `/proc/stat`, indexed by CPU number; `None` for
    /// a CPU not listed (offline).
    pub per_cpu: Vec<Option<CpuTimes>>,
    /// Context switches since boot (`ctxt`).
    pub ctxt: u64,
    /// Runnable tasks at that moment (`procs_running`).
    pub procs_running: u32,
    /// Pages swapped in since boot; `None` if `/proc/vmstat` has no
    /// counters, in which case no swap can be reported.
    pub pswpin: Option<u64>,
    /// Pages swapped out since boot; `None` as for `pswpin`.
    pub pswpout: Option<u64>,
    /// CPU time of this whole process (all threads) and its descendants,
    /// and of the processes a case claimed, in clock ticks (see
    /// [`own_processes::read_own_ticks`]).
    pub self_jiffies: u64,
    /// The hardware sensors' readings, when the monitor has sensors.
    pub sensors: Option<SensorSample>,
}

impl Snapshot {
    /// Reads the counters now, timing the snapshot from `origin`. `None`
    /// when `/proc/stat` or `/proc/self/stat` cannot be read (no `/proc`).
    pub fn take(origin: Instant) -> Option<Snapshot> {
        let at = origin.elapsed().as_secs_f64();
        let stat = procfs::read_stat()?;
        let own = own_processes::read_own_ticks()?;
        let swap = procfs::read_vmstat();
        Some(Snapshot {
            at,
            per_cpu: stat.per_cpu,
            ctxt: stat.ctxt.unwrap_or(0),
            procs_running: stat.procs_running.unwrap_or(0),
            pswpin: swap.map(|s| s.pswpin),
            pswpout: swap.map(|s| s.pswpout),
            self_jiffies: own,
            sensors: None,
        })
    }
}

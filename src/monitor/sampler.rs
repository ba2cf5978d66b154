//! The background thread that samples `/proc` while a trial runs.
//!
//! [`Monitor::start`] takes a [`Snapshot`] at once, then a thread takes one
//! every interval; [`Monitor::finish`] stops the thread (it waits on a
//! channel with a timeout, so it wakes the moment it is told to stop) and
//! takes a last snapshot. Start and finish samples are taken on the caller's
//! thread, so even a trial shorter than one interval is covered exactly.
//!
//! Snapshots are folded into running sums as they arrive instead of being
//! kept, so an hour-long trial on a 256-CPU host costs kilobytes, not the
//! hundreds of megabytes 18 000 full snapshots would.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::health::{HealthAccumulator, TrialHealth};
use super::procfs::{self, CpuTimes};

/// Shortest sampling interval [`Monitor::start`] honours.
///
/// CPU time moves in 10 ms ticks (`USER_HZ` = 100), so sampling faster only
/// yields empty intervals while costing a `/proc/stat` read (whose size
/// grows with the CPU count) each time.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

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
    /// `utime + stime` of this whole process (all threads) and of the
    /// children it waited for, in clock ticks: a workload's own child
    /// processes (UnixBench copies, hackbench groups) are not "other
    /// processes". A child counts once reaped, which workloads do before
    /// their trial ends, so the trial's total is right (a sampling interval
    /// in between may still show it as other CPU).
    pub self_jiffies: u64,
}

impl Snapshot {
    /// Reads the counters now, timing the snapshot from `origin`. `None`
    /// when `/proc/stat` or `/proc/self/stat` cannot be read (no `/proc`).
    pub fn take(origin: Instant) -> Option<Snapshot> {
        let at = origin.elapsed().as_secs_f64();
        let stat = procfs::read_stat()?;
        let own = procfs::read_self_stat()?;
        let swap = procfs::read_vmstat();
        Some(Snapshot {
            at,
            per_cpu: stat.per_cpu,
            ctxt: stat.ctxt.unwrap_or(0),
            procs_running: stat.procs_running.unwrap_or(0),
            pswpin: swap.map(|s| s.pswpin),
            pswpout: swap.map(|s| s.pswpout),
            self_jiffies: own.cpu_ticks().saturating_add(own.children_ticks),
        })
    }
}

/// Adds a snapshot to the running sums, starting them with the first one.
fn fold(acc: &mut Option<HealthAccumulator>, snapshot: Snapshot, ticks_per_sec: f64) {
    match acc {
        Some(acc) => acc.push(&snapshot),
        None => *acc = Some(HealthAccumulator::new(snapshot, ticks_per_sec)),
    }
}

/// Samples the host in the background while a trial runs; see the module
/// docs. Dropping it without [`finish`](Self::finish) also stops the thread.
#[derive(Debug)]
pub struct Monitor {
    origin: Instant,
    ticks_per_sec: f64,
    /// Dropping it wakes the thread and tells it to stop.
    stop: mpsc::Sender<()>,
    /// `None` if the thread could not be spawned.
    thread: Option<JoinHandle<Option<HealthAccumulator>>>,
    /// The start snapshot, kept in case the thread cannot hand its sums back.
    first: Option<Snapshot>,
    /// The CPUs counted, or `None` for all.
    only: Option<Vec<usize>>,
}

/// A snapshot with the CPUs outside `only` left out (as if offline).
fn take_on(origin: Instant, only: Option<&[usize]>) -> Option<Snapshot> {
    let mut snapshot = Snapshot::take(origin)?;
    if let Some(only) = only {
        for (cpu, times) in snapshot.per_cpu.iter_mut().enumerate() {
            if !only.contains(&cpu) {
                *times = None;
            }
        }
    }
    Some(snapshot)
}

impl Monitor {
    /// Takes a snapshot now and starts a thread sampling every `interval`
    /// (at least 10 ms; the engine uses 200 ms). Never fails: without a
    /// thread only the start and finish snapshots are compared, and without
    /// `/proc` the report is empty.
    pub fn start(interval: Duration) -> Monitor {
        Self::start_on(None, interval)
    }

    /// Like [`start`](Self::start), but steal, other processes' CPU and
    /// per-CPU busy shares only count the CPUs in `cpus` (the CPUs a
    /// `--cpus` run is pinned to), so load elsewhere on the host does not
    /// flag the trial and steal on its own CPUs is not diluted.
    pub fn start_on(cpus: Option<&[usize]>, interval: Duration) -> Monitor {
        let interval = interval.max(MIN_INTERVAL);
        let origin = Instant::now();
        let ticks_per_sec = procfs::clock_ticks_per_sec();
        let only: Option<Vec<usize>> = cpus.map(|c| c.to_vec());
        let first = take_on(origin, only.as_deref());
        let acc = first
            .clone()
            .map(|s| HealthAccumulator::new(s, ticks_per_sec));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sledge-monitor".into())
            .spawn({
                let only = only.clone();
                move || sample_until_stopped(acc, &stopped, interval, origin, ticks_per_sec, only)
            })
            .ok();
        Monitor {
            origin,
            ticks_per_sec,
            stop,
            thread,
            first,
            only,
        }
    }

    /// Stops the sampling thread at once, takes a last snapshot and
    /// summarises the trial.
    pub fn finish(self) -> TrialHealth {
        let Monitor {
            origin,
            ticks_per_sec,
            stop,
            thread,
            first,
            only,
        } = self;
        drop(stop);
        // A panicked thread (or none) loses the middle samples only.
        let mut acc = thread
            .and_then(|t| t.join().ok())
            .flatten()
            .or_else(|| first.map(|s| HealthAccumulator::new(s, ticks_per_sec)));
        if let Some(last) = take_on(origin, only.as_deref()) {
            fold(&mut acc, last, ticks_per_sec);
        }
        acc.map(HealthAccumulator::finish).unwrap_or_default()
    }
}

/// The sampling thread: one snapshot per `interval` until the channel says
/// stop (or its sender is dropped); returns the running sums.
fn sample_until_stopped(
    mut acc: Option<HealthAccumulator>,
    stopped: &mpsc::Receiver<()>,
    interval: Duration,
    origin: Instant,
    ticks_per_sec: f64,
    only: Option<Vec<usize>>,
) -> Option<HealthAccumulator> {
    let mut next = Instant::now() + interval;
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return acc,
        }
        if let Some(snapshot) = take_on(origin, only.as_deref()) {
            fold(&mut acc, snapshot, ticks_per_sec);
        }
        // Keep a steady cadence; after a stall (a frozen VM, say) resume
        // from now rather than firing the missed samples back to back.
        next += interval;
        let now = Instant::now();
        if next <= now {
            next = now + interval;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_reads_live_counters() {
        let origin = Instant::now();
        let s = Snapshot::take(origin).expect("Linux /proc");
        assert!(s.at >= 0.0);
        assert!(s.per_cpu.iter().any(Option::is_some));
        assert!(s.ctxt > 0);
    }

    #[test]
    fn monitor_covers_a_busy_trial() {
        let monitor = Monitor::start(Duration::from_millis(200));
        let begin = Instant::now();
        let mut x = 0u64;
        while begin.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let health = monitor.finish();
        // Start and end snapshots bracket the loop; the upper bound only
        // allows for a very loaded host.
        assert!(
            health.seconds >= 0.3 && health.seconds < 5.0,
            "{}",
            health.seconds
        );
        let cpus = procfs::read_stat().expect("/proc/stat").per_cpu.len();
        assert_eq!(health.cpu_busy_pct.len(), cpus);
        for pct in health.cpu_busy_pct.iter().chain([
            &health.steal_pct,
            &health.other_cpu_pct,
            &health.other_cpu_peak_pct,
        ]) {
            assert!(pct.is_finite() && *pct >= 0.0, "{health:?}");
        }
        assert!(health.steal_pct <= 100.0);
        assert!(health.run_queue_max >= 1);
    }

    #[test]
    fn finish_does_not_wait_for_the_interval() {
        let monitor = Monitor::start(Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(50));
        let asked = Instant::now();
        let health = monitor.finish();
        assert!(asked.elapsed() < Duration::from_secs(5));
        assert!(health.seconds >= 0.05, "{}", health.seconds);
    }

    #[test]
    fn tiny_interval_is_clamped_and_dropping_stops_the_thread() {
        let monitor = Monitor::start(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(30));
        drop(monitor);
        let health = Monitor::start(Duration::ZERO).finish();
        assert!(health.seconds >= 0.0);
    }

    #[test]
    fn a_cpu_filter_leaves_other_cpus_out() {
        let origin = Instant::now();
        let all = Snapshot::take(origin).expect("Linux /proc");
        let only = take_on(origin, Some(&[0])).expect("Linux /proc");
        assert_eq!(only.per_cpu.len(), all.per_cpu.len());
        assert!(only.per_cpu[0].is_some());
        assert!(only.per_cpu[1..].iter().all(Option::is_none));
    }
}

//! The background thread that samples `/proc` while a trial runs.
//!
//! [`Monitor::start`] takes a [`Snapshot`] at once, then a thread takes one
//! every interval; [`Monitor::finish`] stops the thread (it waits on a
//! channel with a timeout, so it wakes the moment it is told to stop) and
//! takes a last snapshot. Start and finish samples are taken on the caller's
//! thread, so even a trial shorter than one interval is covered exactly.
//!
//! With [`SensorReaders`] each snapshot also carries the hardware
//! sensors' readings (clock, throttle counters, temperature, energy; see
//! `sensors.rs`), taken right after the `/proc` counters.
//!
//! Snapshots are folded into running sums as they arrive instead of being
//! kept, so an hour-long trial on a 256-CPU host costs kilobytes, not the
//! hundreds of megabytes 18 000 full snapshots would.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::health::{HealthAccumulator, TrialHealth};
use super::procfs;
use super::sensors::SensorReaders;
use super::snapshot::Snapshot;

/// Shortest sampling interval [`Monitor::start`] honours.
///
/// CPU time moves in 10 ms ticks (`USER_HZ` = 100), so sampling faster only
/// yields empty intervals while costing a `/proc/stat` read (whose size
/// grows with the CPU count) each time.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

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
    /// The hardware sensors, shared with the thread.
    sensors: Option<SharedSensors>,
}

/// A trial's sensor readers, used by the caller's thread at the edges and
/// by the sampling thread in between.
type SharedSensors = Arc<Mutex<SensorReaders>>;

/// What a snapshot covers.
#[derive(Clone, Copy)]
struct Scope<'a> {
    origin: Instant,
    /// The CPUs counted, or `None` for all.
    only: Option<&'a [usize]>,
    sensors: Option<&'a SharedSensors>,
}

/// A snapshot with the CPUs outside `only` left out (as if offline) and
/// the sensors read (`edge`: at the trial's start or end).
fn take_on(scope: Scope, edge: bool) -> Option<Snapshot> {
    let mut snapshot = Snapshot::take(scope.origin)?;
    if let Some(only) = scope.only {
        for (cpu, times) in snapshot.per_cpu.iter_mut().enumerate() {
            if !only.contains(&cpu) {
                *times = None;
            }
        }
    }
    snapshot.sensors = scope
        .sensors
        .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).sample(edge));
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
        Self::start_with_sensors(cpus, interval, None)
    }

    /// Like [`start_on`](Self::start_on), also reading the hardware
    /// `sensors` with every snapshot.
    pub fn start_with_sensors(
        cpus: Option<&[usize]>,
        interval: Duration,
        sensors: Option<SensorReaders>,
    ) -> Monitor {
        let interval = interval.max(MIN_INTERVAL);
        let origin = Instant::now();
        let ticks_per_sec = procfs::clock_ticks_per_sec();
        let only: Option<Vec<usize>> = cpus.map(|c| c.to_vec());
        let sensors = sensors.map(|s| Arc::new(Mutex::new(s)));
        let first = take_on(
            Scope {
                origin,
                only: only.as_deref(),
                sensors: sensors.as_ref(),
            },
            true,
        );
        let acc = first
            .clone()
            .map(|s| HealthAccumulator::new(s, ticks_per_sec));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sledge-monitor".into())
            .spawn({
                let only = only.clone();
                let sensors = sensors.clone();
                move || {
                    let scope = Scope {
                        origin,
                        only: only.as_deref(),
                        sensors: sensors.as_ref(),
                    };
                    let mut acc = acc;
                    sample_until_stopped(&stopped, interval, || {
                        if let Some(snapshot) = take_on(scope, false) {
                            fold(&mut acc, snapshot, ticks_per_sec);
                        }
                    });
                    acc
                }
            })
            .ok();
        Monitor {
            origin,
            ticks_per_sec,
            stop,
            thread,
            first,
            only,
            sensors,
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
            sensors,
        } = self;
        drop(stop);
        // A panicked thread (or none) loses the middle samples only.
        let mut acc = thread
            .and_then(|t| t.join().ok())
            .flatten()
            .or_else(|| first.map(|s| HealthAccumulator::new(s, ticks_per_sec)));
        let scope = Scope {
            origin,
            only: only.as_deref(),
            sensors: sensors.as_ref(),
        };
        if let Some(last) = take_on(scope, true) {
            fold(&mut acc, last, ticks_per_sec);
        }
        acc.map(HealthAccumulator::finish).unwrap_or_default()
    }
}

/// The sampling thread's clock: calls `tick` once per `interval` (at
/// least [`MIN_INTERVAL`]) until the channel says stop or its sender is
/// dropped.
fn sample_until_stopped(stopped: &mpsc::Receiver<()>, interval: Duration, mut tick: impl FnMut()) {
    let interval = interval.max(MIN_INTERVAL);
    let mut next = Instant::now() + interval;
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match stopped.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        tick();
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
        std::thread::sleep(Duration::from_millis(20));
        let before = origin.elapsed().as_secs_f64();
        let s = Snapshot::take(origin).expect("Linux /proc");
        let after = origin.elapsed().as_secs_f64();
        // `at` is the time since `origin` when the snapshot was taken.
        assert!(
            s.at >= before && s.at <= after,
            "{before} <= {} <= {after}",
            s.at
        );
        assert!(s.per_cpu.iter().any(Option::is_some));
        assert!(s.ctxt > 0);
        // This process has run for some CPU time by now.
        let later = Snapshot::take(origin).expect("Linux /proc");
        assert!(later.at >= s.at);
        assert!(later.ctxt >= s.ctxt && later.self_jiffies >= s.self_jiffies);
    }

    #[test]
    fn a_reaped_childs_cpu_time_counts_as_our_own() {
        let children = |s: &procfs::PidStat| s.cutime + s.cstime;
        let before = children(&procfs::read_self_stat().unwrap());
        // A child that spins for 300 ms of CPU, then is reaped.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            loop {
                unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
                if ts.tv_sec > 0 || ts.tv_nsec > 300_000_000 {
                    unsafe { libc::_exit(0) };
                }
            }
        }
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        let stat = procfs::read_self_stat().unwrap();
        // 300 ms is 30 ticks at USER_HZ 100.
        assert!(children(&stat) - before >= 25, "{before} -> {stat:?}");
        // ... and the snapshot counts it.
        let snapshot = Snapshot::take(Instant::now()).unwrap();
        assert!(snapshot.self_jiffies >= stat.tree_ticks());
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

    /// Waits up to 10 s for `done`, failing the test if it stays false.
    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what} did not happen within 10 s"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn tiny_interval_is_clamped_and_dropping_stops_the_thread() {
        // The clock of the sampling thread, with a zero interval: it must
        // tick at most once per MIN_INTERVAL, not spin.
        let ticks = std::sync::atomic::AtomicU32::new(0);
        let (stop, stopped) = mpsc::channel::<()>();
        let began = Instant::now();
        std::thread::scope(|scope| {
            let counter = &ticks;
            let clock = scope.spawn(move || {
                sample_until_stopped(&stopped, Duration::ZERO, || {
                    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                })
            });
            wait_for("the first tick", || {
                ticks.load(std::sync::atomic::Ordering::Relaxed) >= 1
            });
            std::thread::sleep(Duration::from_millis(100));
            drop(stop);
            wait_for("the clock's end", || clock.is_finished());
        });
        let ticks = ticks.into_inner();
        // The cadence never fires faster than the interval, so this bound
        // holds however busy the host is; a zero interval would give
        // thousands.
        let most = (began.elapsed().as_secs_f64() / MIN_INTERVAL.as_secs_f64()) as u32 + 1;
        assert!((1..=most).contains(&ticks), "{ticks} ticks, at most {most}");

        // Dropping a monitor without `finish` ends its thread.
        let mut monitor = Monitor::start(Duration::ZERO);
        let thread = monitor.thread.take().expect("the sampling thread started");
        drop(monitor);
        wait_for("the sampling thread's end", || thread.is_finished());
        let sums = thread.join().expect("the sampling thread did not panic");
        assert!(sums.is_some(), "the thread lost the start snapshot");
    }

    #[test]
    fn a_cpu_filter_leaves_other_cpus_out() {
        let origin = Instant::now();
        let all = Snapshot::take(origin).expect("Linux /proc");
        let scope = Scope {
            origin,
            only: Some(&[0]),
            sensors: None,
        };
        let only = take_on(scope, true).expect("Linux /proc");
        assert_eq!(only.per_cpu.len(), all.per_cpu.len());
        assert!(only.per_cpu[0].is_some());
        assert!(only.per_cpu[1..].iter().all(Option::is_none));
    }
}

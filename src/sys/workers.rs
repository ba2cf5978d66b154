//! Starting worker threads together, as sysbench does, without ever
//! hanging.
//!
//! Workers first do their untimed set-up, then wait at a gate; the last one
//! to arrive opens it and takes the start time (sysbench starts its timer
//! when the last thread has started). If the OS refuses a thread (a pids
//! cgroup or ulimit), a worker's set-up fails (it cannot be pinned to its
//! CPU, a client cannot connect) or panics, the gate is aborted so the
//! workers already waiting return instead of waiting forever, and the
//! caller gets a clear error.

use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::Instant;

use anyhow::anyhow;

/// Where the workers wait for each other.
struct StartGate<'a> {
    state: Mutex<GateState>,
    opened: Condvar,
    /// When to open once everybody has arrived, if not at once.
    at: Option<StartAt<'a>>,
}

/// A start at an agreed instant instead of the moment the last worker is
/// ready: the workers of a load spread over several hosts start together
/// this way.
#[derive(Clone, Copy)]
pub struct StartAt<'a> {
    /// The instant to start at (at once if it has passed).
    pub at: Instant,
    /// Asked while waiting: `true` stops the wait and starts at once (a
    /// cancelled run must not wait for a distant start).
    pub stop_waiting: &'a (dyn Fn() -> bool + Sync),
}

enum GateState {
    Waiting { arrived: usize, expected: usize },
    Open(Instant),
    Aborted,
}

impl<'a> StartGate<'a> {
    fn new(expected: usize, at: Option<StartAt<'a>>) -> Self {
        StartGate {
            state: Mutex::new(GateState::Waiting {
                arrived: 0,
                expected,
            }),
            opened: Condvar::new(),
            at,
        }
    }

    /// Waits (without the lock) until the agreed start, in short steps.
    fn wait_for_start(&self) {
        let Some(at) = self.at else { return };
        while !(at.stop_waiting)() {
            let left = at.at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            thread::sleep(left.min(std::time::Duration::from_millis(20)));
        }
    }

    /// Arrives and waits until everybody has; returns the start time, or
    /// `None` when the start was aborted.
    fn arrive(&self) -> Option<Instant> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let GateState::Waiting { arrived, expected } = &mut *state {
            *arrived += 1;
            if *arrived == *expected {
                // The others keep waiting on the condition meanwhile.
                drop(state);
                self.wait_for_start();
                state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                *state = GateState::Open(Instant::now());
                self.opened.notify_all();
            }
        }
        loop {
            match &*state {
                GateState::Open(start) => return Some(*start),
                GateState::Aborted => return None,
                GateState::Waiting { .. } => {
                    state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    fn abort(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*state, GateState::Waiting { .. }) {
            *state = GateState::Aborted;
            self.opened.notify_all();
        }
    }
}

/// What the workers did.
pub struct WorkerResults<T> {
    /// One result per worker, in worker order.
    pub results: Vec<T>,
    /// Seconds from the common start until the last worker finished.
    pub seconds: f64,
    /// The common start (`None` when no worker ran).
    pub start: Option<Instant>,
}

/// Runs `threads` workers: worker `i` runs `setup(i)` (untimed), waits for
/// the others, then runs `work(state, start)`. A worker that panics or a
/// thread that cannot be started is an error that names it.
pub fn run_workers<S, T, Setup, Work>(
    threads: usize,
    setup: Setup,
    work: Work,
) -> anyhow::Result<WorkerResults<T>>
where
    T: Send,
    Setup: Fn(usize) -> S + Sync,
    Work: Fn(S, Instant) -> T + Sync,
{
    try_run_workers(threads, |i| Ok(setup(i)), work)
}

/// What one worker thread ended with.
enum Outcome<T> {
    /// It ran `work`; the result and when it finished.
    Done(T, Instant),
    /// Its own set-up failed, so it aborted the start.
    SetupFailed(anyhow::Error),
    /// Another worker's set-up failed (or a thread could not be started),
    /// so it never ran `work`.
    NotStarted,
}

/// Aborts the start if the worker unwinds before it reaches the gate, so
/// that a panic in `setup` cannot leave the others waiting forever.
struct AbortOnUnwind<'a, 'b>(&'a StartGate<'b>);

impl Drop for AbortOnUnwind<'_, '_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.abort();
        }
    }
}

/// As [`run_workers`], but `setup` may fail: the first worker whose set-up
/// fails aborts the start, so no worker runs `work` and none is left
/// waiting, and its error is returned as it is. Use it when a worker must
/// do something that can fail before the common start (pinning itself to
/// a CPU, connecting).
pub fn try_run_workers<S, T, Setup, Work>(
    threads: usize,
    setup: Setup,
    work: Work,
) -> anyhow::Result<WorkerResults<T>>
where
    T: Send,
    Setup: Fn(usize) -> anyhow::Result<S> + Sync,
    Work: Fn(S, Instant) -> T + Sync,
{
    try_run_workers_at(threads, None, setup, work)
}

/// As [`try_run_workers`], but once every worker is ready the start waits
/// for `at` when given.
pub fn try_run_workers_at<S, T, Setup, Work>(
    threads: usize,
    at: Option<StartAt<'_>>,
    setup: Setup,
    work: Work,
) -> anyhow::Result<WorkerResults<T>>
where
    T: Send,
    Setup: Fn(usize) -> anyhow::Result<S> + Sync,
    Work: Fn(S, Instant) -> T + Sync,
{
    let gate = StartGate::new(threads, at);
    thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let (gate, setup, work) = (&gate, &setup, &work);
            let spawned = thread::Builder::new()
                .name(format!("sledge-worker-{i}"))
                .spawn_scoped(scope, move || {
                    let _guard = AbortOnUnwind(gate);
                    let state = match setup(i) {
                        Ok(state) => state,
                        Err(e) => {
                            gate.abort();
                            return Outcome::SetupFailed(e);
                        }
                    };
                    match gate.arrive() {
                        Some(start) => Outcome::Done(work(state, start), Instant::now()),
                        None => Outcome::NotStarted,
                    }
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    gate.abort();
                    for handle in handles {
                        let _ = handle.join();
                    }
                    return Err(anyhow!(
                        "cannot start worker thread {} of {threads}: {e}; use fewer threads",
                        i + 1
                    ));
                }
            }
        }
        let mut results = Vec::with_capacity(threads);
        let mut last_end: Option<Instant> = None;
        let mut first_error: Option<anyhow::Error> = None;
        let mut not_started = None;
        for (i, handle) in handles.into_iter().enumerate() {
            match handle.join() {
                Ok(Outcome::Done(result, end)) => {
                    results.push(result);
                    last_end = Some(last_end.map_or(end, |l| l.max(end)));
                }
                Ok(Outcome::SetupFailed(e)) => {
                    if first_error.is_none() {
                        first_error = Some(e);
                    }
                }
                Ok(Outcome::NotStarted) => {
                    if not_started.is_none() {
                        not_started = Some(i);
                    }
                }
                Err(panic) => {
                    gate.abort();
                    if first_error.is_none() {
                        first_error = Some(anyhow!(
                            "worker thread {} panicked: {}",
                            i + 1,
                            panic_message(&*panic)
                        ));
                    }
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if let Some(i) = not_started {
            return Err(anyhow!("worker thread {} was not started", i + 1));
        }
        let start = match &*gate.state.lock().unwrap_or_else(|e| e.into_inner()) {
            GateState::Open(start) => Some(*start),
            _ => None,
        };
        let seconds = match (start, last_end) {
            (Some(start), Some(end)) => end.duration_since(start).as_secs_f64(),
            _ => 0.0,
        };
        Ok(WorkerResults {
            results,
            seconds,
            start,
        })
    })
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn all_workers_share_one_start_and_the_time_covers_them() {
        let out = run_workers(
            3,
            |i| i,
            |i, start| {
                std::thread::sleep(Duration::from_millis(10 * (i as u64 + 1)));
                start
            },
        )
        .unwrap();
        assert_eq!(out.results.len(), 3);
        assert!(out.results.windows(2).all(|w| w[0] == w[1]));
        // The slowest worker slept 30 ms.
        assert!(out.seconds >= 0.03, "{}", out.seconds);
    }

    #[test]
    fn a_panicking_worker_is_an_error_with_its_message() {
        let err = run_workers(
            2,
            |i| i,
            |i, _| {
                if i == 1 {
                    panic!("boom in worker");
                }
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("worker thread 2 panicked: boom in worker"),
            "{err}"
        );
    }

    #[test]
    fn a_failed_setup_releases_the_others_and_is_the_error() {
        let ran = std::sync::atomic::AtomicUsize::new(0);
        let started = Instant::now();
        let err = try_run_workers(
            4,
            |i| {
                if i == 2 {
                    // The others are already waiting at the gate.
                    std::thread::sleep(Duration::from_millis(20));
                    anyhow::bail!("cannot pin worker {i}");
                }
                Ok(i)
            },
            |_, _| {
                ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            },
        )
        .err()
        .unwrap()
        .to_string();
        assert_eq!(err, "cannot pin worker 2");
        assert_eq!(ran.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_panicking_setup_releases_the_others() {
        let err = run_workers(
            3,
            |i| {
                if i == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                    panic!("boom in setup");
                }
                i
            },
            |_, _| (),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("boom in setup"), "{err}");
    }

    #[test]
    fn an_aborted_gate_releases_waiting_workers() {
        let gate = StartGate::new(3, None);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| gate.arrive());
            std::thread::sleep(Duration::from_millis(20));
            gate.abort();
            assert_eq!(waiter.join().unwrap(), None);
        });
    }
}

//! Interbench's simulated interactive tasks and how it scores them.
//!
//! Definitions from Con Kolivas' Interbench 0.31 (`interbench.c`):
//!
//! | task | period | CPU per period | deadline |
//! |---|---|---|---|
//! | audio | 50 ms | 5% (2.5 ms) | the end of the period |
//! | video | 1/60 s (16.666 ms) | 40% (6.666 ms) | the end of the period |
//! | X | 100 steps: step i runs i ms in a window of 100 - i ms, 0..100% | i ms | the end of the window |
//! | gaming | none: runs flat out, 100 ms of CPU per frame | 100% | none |
//!
//! Each period ([`Schedule::periodic`], Interbench's `periodic_schedule`):
//! the task wakes at the period's start; its latency is how late it got
//! the CPU. If it is so late that the whole period has passed, the frame
//! is dropped (missed deadlines and missed bursts, one per period lost).
//! Otherwise it uses its CPU share; finishing before the period's end
//! meets the deadline, finishing after misses it (and any further periods
//! it overran are lost too). Then it sleeps until its next period. A
//! sample's latency also counts whole periods lost to a miss, as
//! Interbench's does. Scores: the latency's mean and maximum, the share of
//! deadlines met, and the share of desired CPU obtained (bursts done over
//! bursts wanted; for gaming, CPU time over CPU time plus lateness).
//!
//! Interbench wakes the task from a `SCHED_FIFO` timekeeping thread and
//! subtracts that thread's own oversleep; sledge sleeps the task itself to
//! an absolute deadline (`clock_nanosleep(TIMER_ABSTIME)`) with no timer
//! slack, so the latency is the task's wake-up latency, timer included,
//! and no real-time privilege is needed. Interbench burns a calibrated
//! loop count; sledge burns until the thread's CPU clock has advanced by
//! the share, so "desired CPU" is CPU time, whatever the clock speed.

use hdrhistogram::Histogram;

use crate::stats::latency_histogram;

crate::param_choice! {
    /// An interactive task, as the `task` parameter names it.
    pub enum Task {
        Audio = "audio",
        Video = "video",
        X = "x",
        Gaming = "gaming",
    }
}

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
/// Audio: every 50 ms, 5% of it.
const AUDIO_INTERVAL: u64 = 50 * MS;
const AUDIO_RUN: u64 = AUDIO_INTERVAL / 20;
/// Video: 60 frames per second (Interbench's integer µs: 16666), 40%.
const VIDEO_INTERVAL: u64 = 16_666 * US;
const VIDEO_RUN: u64 = VIDEO_INTERVAL * 40 / 100;
/// Gaming: 100 ms of CPU per frame.
const GAME_RUN: u64 = 100 * MS;

impl Task {
    /// Whether the task has deadlines (gaming has none).
    pub fn has_deadlines(self) -> bool {
        self != Task::Gaming
    }
}

/// What the task needs from the machine: a clock, CPU to burn, sleep.
/// The real one is in `interactive.rs`; tests use a simulated one.
pub trait Host {
    /// Monotonic time, ns.
    fn now(&mut self) -> u64;
    /// Uses `ns` of CPU time.
    fn burn(&mut self, ns: u64);
    /// Sleeps until `now()` reaches `deadline`.
    fn sleep_until(&mut self, deadline: u64);
    /// Whether the measurement is over (asked once per period).
    fn stopped(&mut self) -> bool;
}

/// Interbench's counters for one task over one trial.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Latency of every sample, ns.
    pub latency: Histogram<u64>,
    pub total_latency: u128,
    pub max_latency: u64,
    pub samples: u64,
    pub deadlines_met: u64,
    pub missed_deadlines: u64,
    /// Bursts done (gaming: CPU ns used).
    pub achieved_burns: u64,
    /// Bursts lost (gaming: ns of lateness).
    pub missed_burns: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            latency: latency_histogram(),
            total_latency: 0,
            max_latency: 0,
            samples: 0,
            deadlines_met: 0,
            missed_deadlines: 0,
            achieved_burns: 0,
            missed_burns: 0,
        }
    }
}

impl Tally {
    fn record(&mut self, latency: u64) {
        self.total_latency += latency as u128;
        self.max_latency = self.max_latency.max(latency);
        self.samples += 1;
        // Values beyond the histogram's hour are clamped, not lost.
        let _ = self.latency.record(latency.clamp(1, self.latency.high()));
    }

    /// Mean latency, ns.
    pub fn mean_latency(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.total_latency as f64 / self.samples as f64
        }
    }

    /// Deadlines met, % of deadlines.
    pub fn deadlines_met_pct(&self) -> f64 {
        let all = self.deadlines_met + self.missed_deadlines;
        if self.deadlines_met == 0 {
            0.0
        } else {
            self.deadlines_met as f64 / all as f64 * 100.0
        }
    }

    /// Desired CPU obtained, %.
    pub fn desired_cpu_pct(&self) -> f64 {
        if self.achieved_burns == 0 {
            0.0
        } else {
            self.achieved_burns as f64 / (self.achieved_burns + self.missed_burns) as f64 * 100.0
        }
    }
}

/// Runs `task` on `host` until the host says stop, counting into a
/// [`Tally`]. Like Interbench, the host is asked after each period, so a
/// period in progress is finished.
pub fn run(task: Task, host: &mut impl Host) -> Tally {
    let mut s = Schedule {
        host,
        tally: Tally::default(),
    };
    match task {
        Task::Audio => s.every_period(AUDIO_RUN, AUDIO_INTERVAL),
        Task::Video => s.every_period(VIDEO_RUN, VIDEO_INTERVAL),
        Task::X => s.x_ramp(),
        Task::Gaming => s.gaming(),
    }
    s.tally
}

/// One task's scheduling state.
struct Schedule<'h, H: Host> {
    host: &'h mut H,
    tally: Tally,
}

impl<H: Host> Schedule<'_, H> {
    fn every_period(&mut self, run: u64, interval: u64) {
        let mut deadline = self.host.now();
        loop {
            deadline = self.periodic(run, interval, deadline);
            if self.host.stopped() {
                return;
            }
        }
    }

    /// X: step i of 0..=100 uses i ms of CPU in a window of 100 - i ms,
    /// then Interbench moves the next start i ms further on.
    fn x_ramp(&mut self) {
        let mut deadline = self.host.now();
        loop {
            for i in 0..=100u64 {
                deadline = self.periodic(i * MS, (100 - i) * MS, deadline);
                deadline += i * MS;
                if self.host.stopped() {
                    return;
                }
            }
        }
    }

    /// Gaming: 100 ms of CPU, scored by how much longer than 100 ms of
    /// wall time it took.
    fn gaming(&mut self) {
        loop {
            let deadline = self.host.now() + GAME_RUN;
            self.host.burn(GAME_RUN);
            let now = self.host.now();
            self.tally.achieved_burns += GAME_RUN;
            let latency = now.saturating_sub(deadline);
            self.tally.missed_burns += latency;
            self.tally.record(latency);
            if self.host.stopped() {
                return;
            }
        }
    }

    /// One period starting at `deadline` (Interbench's
    /// `periodic_schedule`); returns the next period's start.
    fn periodic(&mut self, run: u64, interval: u64, mut deadline: u64) -> u64 {
        let now = self.host.now();
        let mut latency = now.saturating_sub(deadline);
        let mut missed_latency = 0;
        if interval > 0 && now > deadline + interval {
            // The whole period passed before the task ran: drop frames.
            deadline += interval;
            let intervals = (now - deadline) / interval + 1;
            self.tally.missed_deadlines += intervals;
            missed_latency = intervals * interval;
            deadline += intervals * interval;
            self.tally.missed_burns += intervals;
        } else {
            self.host.burn(run);
            let now = self.host.now();
            self.tally.achieved_burns += 1;
            deadline += interval;
            if deadline >= now {
                self.tally.deadlines_met += 1;
            } else if let Some(lost) = (now - deadline).checked_div(interval) {
                let intervals = lost + 1;
                self.tally.missed_deadlines += intervals;
                missed_latency = intervals * interval;
                deadline += intervals * interval;
                if intervals > 1 {
                    self.tally.missed_burns += intervals;
                }
            } else {
                // No window at all (X at 100%): carry straight on.
                self.tally.record(latency);
                return now;
            }
        }
        self.host.sleep_until(deadline);
        latency += missed_latency;
        self.tally.record(latency);
        deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated machine: a clock that burns advance by `slowdown` x
    /// the CPU asked for (the task gets 1/slowdown of a CPU), and wake-ups
    /// that come `wake_delay` late.
    struct Sim {
        now: u64,
        slowdown: u64,
        wake_delay: u64,
        end: u64,
        burns: Vec<u64>,
    }

    impl Sim {
        fn new(seconds: u64, slowdown: u64, wake_delay: u64) -> Sim {
            Sim {
                now: 1_000 * MS,
                slowdown,
                wake_delay,
                end: 1_000 * MS + seconds * 1_000 * MS,
                burns: Vec::new(),
            }
        }
    }

    impl Host for Sim {
        fn now(&mut self) -> u64 {
            self.now
        }
        fn burn(&mut self, ns: u64) {
            self.burns.push(ns);
            self.now += ns * self.slowdown;
        }
        fn sleep_until(&mut self, deadline: u64) {
            if deadline > self.now {
                self.now = deadline + self.wake_delay;
            }
        }
        fn stopped(&mut self) -> bool {
            self.now >= self.end
        }
    }

    #[test]
    fn audio_on_an_idle_machine_meets_every_deadline() {
        let mut sim = Sim::new(10, 1, 0);
        let t = run(Task::Audio, &mut sim);
        // 10 s of 50 ms periods.
        assert_eq!(t.samples, 200);
        assert_eq!(t.deadlines_met, 200);
        assert_eq!(t.missed_deadlines, 0);
        assert_eq!(t.deadlines_met_pct(), 100.0);
        assert_eq!(t.desired_cpu_pct(), 100.0);
        assert_eq!(t.mean_latency(), 0.0);
        assert!(sim.burns.iter().all(|&b| b == 2_500_000));
    }

    #[test]
    fn late_wake_ups_are_the_latency_and_still_meet_audio_deadlines() {
        // Every wake-up 5 ms late; 2.5 ms of CPU still fits the period.
        let mut sim = Sim::new(10, 1, 5 * MS);
        let t = run(Task::Audio, &mut sim);
        assert_eq!(t.missed_deadlines, 0);
        // The first period starts on time; the others are 5 ms late.
        assert_eq!(t.max_latency, 5 * MS);
        let expected_mean = 5.0 * MS as f64 * (t.samples - 1) as f64 / t.samples as f64;
        assert!((t.mean_latency() - expected_mean).abs() < 1.0);
    }

    #[test]
    fn video_with_a_third_of_a_cpu_misses_every_deadline() {
        // 6.666 ms of CPU take 20 ms of wall time: past the 16.666 ms
        // deadline every time, so the next period is lost as well.
        let mut sim = Sim::new(10, 3, 0);
        let t = run(Task::Video, &mut sim);
        assert_eq!(t.deadlines_met, 0);
        assert_eq!(t.deadlines_met_pct(), 0.0);
        assert_eq!(t.missed_deadlines, t.samples);
        // Each sample carries the one period it lost.
        assert_eq!(t.max_latency, VIDEO_INTERVAL);
        // Interbench counts the burst as done (one period overrun only).
        assert_eq!(t.desired_cpu_pct(), 100.0);
        // Half of a CPU is enough: 13.3 ms.
        let t = run(Task::Video, &mut Sim::new(10, 2, 0));
        assert_eq!(t.deadlines_met_pct(), 100.0);
    }

    #[test]
    fn a_wake_up_later_than_the_whole_period_drops_frames() {
        // Woken 120 ms late with 50 ms periods: two periods lost, the burst
        // skipped, the task resynchronised to the next period start.
        let mut sim = Sim::new(1, 1, 120 * MS);
        let t = run(Task::Audio, &mut sim);
        assert!(t.missed_burns > 0);
        assert!(t.desired_cpu_pct() < 100.0);
        assert!(t.deadlines_met_pct() < 100.0);
        assert!(t.max_latency >= 120 * MS);
    }

    #[test]
    fn x_ramps_its_cpu_from_nothing_to_everything() {
        let mut sim = Sim::new(30, 1, 0);
        let _ = run(Task::X, &mut sim);
        let ramp: Vec<u64> = (0..=100).map(|i| i * MS).collect();
        assert_eq!(&sim.burns[..101], &ramp[..]);
        assert_eq!(sim.burns[101], 0);
    }

    #[test]
    fn gaming_scores_cpu_obtained_and_lateness() {
        // Half a CPU: each 100 ms frame takes 200 ms.
        let mut sim = Sim::new(10, 2, 0);
        let t = run(Task::Gaming, &mut sim);
        assert_eq!(t.samples, 50);
        assert_eq!(t.max_latency, 100 * MS);
        assert!((t.desired_cpu_pct() - 50.0).abs() < 1e-9);
        assert!(!Task::Gaming.has_deadlines());
    }
}

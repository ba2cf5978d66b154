//! The idle check before a run: is anything else using the machine?
//!
//! A trial that turns out disturbed is flagged by the [`Monitor`], but the
//! cheapest fix is not to start on a busy host. [`idle_check`] watches the
//! host for a moment and, when it is not idle, names the processes to blame
//! so the user can stop them. It warns and never blocks: deciding to wait
//! or go on is the caller's business.
//!
//! [`Monitor`]: super::Monitor

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::health::{OTHER_CPU_THRESHOLD_PCT, tick_resolution_pct};
use super::procfs::{self, PidStat, ProcStat};

/// 1-minute load average per CPU above which the idle check warns.
///
/// sbc-bench refuses to start until the 1-minute load is below 0.1 whatever
/// the CPU count (`CheckLoadAndDmesg`). That is too strict for shared hosts,
/// where a few daemons keep it higher; half of the CPUs' worth of runnable
/// tasks is the project's line. The load average decays over a minute, so
/// it also catches work that merely paused during the short CPU window.
const LOAD_PER_CPU_THRESHOLD: f64 = 0.5;

/// How many of the busiest processes the report names.
const BUSIEST_SHOWN: usize = 3;

/// Shortest window [`idle_check`] samples over: CPU time moves in 10 ms
/// ticks (`USER_HZ` = 100), so one tick over 100 ms already reads as 10% of
/// a CPU, the warning threshold; shorter windows would only measure noise.
const MIN_WINDOW: Duration = Duration::from_millis(100);

/// What the host did while [`idle_check`] watched it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleReport {
    /// Wall time watched, in seconds.
    pub seconds: f64,
    /// CPU used by processes other than this one, in % of ONE CPU.
    pub other_cpu_pct: f64,
    /// 1-minute load average at the end (0 if unreadable).
    pub load1: f64,
    /// Online CPUs (at least 1).
    pub cpus: u32,
    /// Up to three processes that used the most CPU, busiest first.
    pub busiest: Vec<BusyProcess>,
    /// Why the host does not look idle; `None` if it does.
    pub warning: Option<String>,
}

/// A process that used CPU during the idle check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    /// Process id.
    pub pid: u32,
    /// Command name (`comm`).
    pub name: String,
    /// CPU used, in % of ONE CPU.
    pub cpu_pct: f64,
}

/// Watches the host for `window` (at least 100 ms; the CLI uses 1 s) and
/// reports other processes' CPU use and the load average.
///
/// Warns when other processes used more than [`OTHER_CPU_THRESHOLD_PCT`] of
/// a CPU, naming the top three by CPU (from `/proc/[pid]/stat` deltas,
/// skipping this process and so all its threads), or when the 1-minute load
/// is above 0.5 × CPUs. Never fails: unreadable files just shrink the report.
pub fn idle_check(window: Duration) -> IdleReport {
    let window = window.max(MIN_WINDOW);
    let me = std::process::id();
    let ticks_per_sec = procfs::clock_ticks_per_sec();

    let start = Instant::now();
    let before = Observation::take(me);
    let since_boot = procfs::read_uptime().map(|s| (s * ticks_per_sec) as u64);
    std::thread::sleep(window);
    let seconds = start.elapsed().as_secs_f64();
    let after = Observation::take(me);

    let load1 = procfs::read_loadavg().map_or(0.0, |l| l.load1);
    let cpus = after
        .stat
        .as_ref()
        .map_or(0, ProcStat::online_cpus)
        .try_into()
        .unwrap_or(u32::MAX);
    let cpus = if cpus > 0 { cpus } else { fallback_cpus() };
    summarize_idle(
        &before,
        &after,
        since_boot,
        seconds,
        ticks_per_sec,
        load1,
        cpus,
    )
}

/// Online CPUs from `sysconf`, else the CPUs we may run on, else 1.
fn fallback_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions; it only reads a configuration value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if online > 0 {
        return u32::try_from(online).unwrap_or(u32::MAX);
    }
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

/// The counters read at one end of the window.
#[derive(Debug, Clone, Default)]
struct Observation {
    stat: Option<ProcStat>,
    /// This process's `utime + stime`.
    own_ticks: Option<u64>,
    /// Every other process, by pid.
    processes: HashMap<u32, PidStat>,
}

impl Observation {
    fn take(me: u32) -> Observation {
        let stat = procfs::read_stat();
        let own_ticks = procfs::read_self_stat().map(|s| s.cpu_ticks());
        let processes = procfs::list_pids()
            .into_iter()
            .filter(|&pid| pid != me)
            .filter_map(|pid| Some((pid, procfs::read_pid_stat(pid)?)))
            .collect();
        Observation {
            stat,
            own_ticks,
            processes,
        }
    }
}

/// Pure core of [`idle_check`]. `since_boot` is the time of the first
/// observation in clock ticks since boot: a process started after it is
/// new, and all its CPU time falls in the window.
fn summarize_idle(
    before: &Observation,
    after: &Observation,
    since_boot: Option<u64>,
    seconds: f64,
    ticks_per_sec: f64,
    load1: f64,
    cpus: u32,
) -> IdleReport {
    let pct = |ticks: u64| {
        if seconds > 0.0 && ticks_per_sec > 0.0 {
            ticks as f64 / ticks_per_sec / seconds * 100.0
        } else {
            0.0
        }
    };

    // Other processes' CPU, and how many per-CPU counters it summed (its
    // tick resolution, as for a trial's flag).
    let (other_cpu_pct, counted_cpus) = match (&before.stat, &after.stat) {
        (Some(a), Some(b)) => {
            let deltas: Vec<u64> = a
                .per_cpu
                .iter()
                .zip(&b.per_cpu)
                .filter_map(|(a, b)| Some(b.as_ref()?.saturating_sub(a.as_ref()?).task()))
                .collect();
            let task = deltas.iter().copied().fold(0, u64::saturating_add);
            let own = match (before.own_ticks, after.own_ticks) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => 0,
            };
            (pct(task.saturating_sub(own)), deltas.len())
        }
        _ => (0.0, 0),
    };

    let mut busiest: Vec<BusyProcess> = after
        .processes
        .values()
        .filter_map(|now| {
            let used = match before.processes.get(&now.pid) {
                Some(then) if then.starttime == now.starttime => {
                    now.cpu_ticks().saturating_sub(then.cpu_ticks())
                }
                // New, or a reused pid: count it only if it started within
                // the window, else its whole past would be blamed on it.
                _ if since_boot.is_some_and(|t0| now.starttime >= t0) => now.cpu_ticks(),
                _ => return None,
            };
            (used > 0).then(|| BusyProcess {
                pid: now.pid,
                name: now.comm.clone(),
                cpu_pct: pct(used),
            })
        })
        .collect();
    busiest.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    busiest.truncate(BUSIEST_SHOWN);

    let mut problems = Vec::new();
    let resolution_pct = tick_resolution_pct(counted_cpus, ticks_per_sec, seconds);
    if other_cpu_pct - resolution_pct > OTHER_CPU_THRESHOLD_PCT {
        let mut problem = format!(
            "other processes used {other_cpu_pct:.0}% of a CPU over {seconds:.1} s \
             (limit {OTHER_CPU_THRESHOLD_PCT:.0}%)"
        );
        if !busiest.is_empty() {
            let names: Vec<String> = busiest
                .iter()
                .map(|p| format!("{} [{}] {:.0}%", p.name, p.pid, p.cpu_pct))
                .collect();
            problem.push_str("; busiest: ");
            problem.push_str(&names.join(", "));
        }
        problems.push(problem);
    }
    let load_limit = LOAD_PER_CPU_THRESHOLD * f64::from(cpus);
    if load1 > load_limit {
        problems.push(format!(
            "1-minute load average {load1:.2} is above {load_limit:.1} \
             ({LOAD_PER_CPU_THRESHOLD} x {cpus} CPUs)"
        ));
    }
    let warning =
        (!problems.is_empty()).then(|| format!("host is not idle: {}", problems.join("; ")));

    IdleReport {
        seconds,
        other_cpu_pct,
        load1,
        cpus,
        busiest,
        warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::procfs::CpuTimes;

    const HZ: f64 = 100.0;

    fn process(pid: u32, name: &str, ticks: u64, starttime: u64) -> PidStat {
        PidStat {
            pid,
            comm: name.to_string(),
            state: 'R',
            utime: ticks,
            starttime,
            ..PidStat::default()
        }
    }

    /// Two CPUs whose task time is `user` ticks each; this process used
    /// `own` ticks.
    fn observation(user: u64, own: u64, processes: &[PidStat]) -> Observation {
        let cpu = Some(CpuTimes {
            user,
            ..CpuTimes::default()
        });
        Observation {
            stat: Some(ProcStat {
                per_cpu: vec![cpu, cpu],
                ..ProcStat::default()
            }),
            own_ticks: Some(own),
            processes: processes.iter().map(|p| (p.pid, p.clone())).collect(),
        }
    }

    #[test]
    fn quiet_host_has_no_warning() {
        let before = observation(0, 0, &[process(1, "init", 5, 1)]);
        let after = observation(2, 1, &[process(1, "init", 6, 1)]);
        let r = summarize_idle(&before, &after, Some(1000), 1.0, HZ, 0.1, 2);
        assert!((r.other_cpu_pct - 3.0).abs() < 1e-9);
        assert_eq!(r.warning, None);
        assert_eq!(r.busiest.len(), 1);
        assert_eq!(r.busiest[0].name, "init");
        assert!((r.busiest[0].cpu_pct - 1.0).abs() < 1e-9);
    }

    #[test]
    fn busy_host_names_top_three() {
        let before = observation(
            0,
            0,
            &[
                process(10, "a", 0, 1),
                process(11, "b", 0, 1),
                process(12, "c", 0, 1),
                process(13, "d", 0, 1),
                process(99, "reused", 500, 1),
            ],
        );
        let after = observation(
            40,
            0,
            &[
                process(10, "a", 5, 1),
                process(11, "b", 40, 1),
                process(12, "c", 20, 1),
                process(13, "d", 10, 1),
                // Started within the window (after tick 1000): all 5 count.
                process(14, "new", 5, 1050),
                // Same pid, older start than the window: its past is not ours.
                process(99, "reused", 900, 10),
            ],
        );
        let r = summarize_idle(&before, &after, Some(1000), 1.0, HZ, 0.0, 2);
        assert!((r.other_cpu_pct - 80.0).abs() < 1e-9);
        let names: Vec<&str> = r.busiest.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["b", "c", "d"]);
        let warning = r.warning.expect("busy host warns");
        assert!(warning.contains("80%"), "{warning}");
        assert!(warning.contains("b [11] 40%"), "{warning}");
        assert!(warning.contains("d [13] 10%"), "{warning}");
        assert!(!warning.contains("load"), "{warning}");

        // Without uptime new processes cannot be told from reused pids.
        let r = summarize_idle(&before, &after, None, 1.0, HZ, 0.0, 2);
        assert!(r.busiest.iter().all(|p| p.pid != 14 && p.pid != 99));
    }

    #[test]
    fn new_process_counts_only_if_started_in_window() {
        let before = observation(0, 0, &[]);
        let after = observation(0, 0, &[process(7, "late", 30, 1200)]);
        let r = summarize_idle(&before, &after, Some(1000), 1.0, HZ, 0.0, 2);
        assert_eq!(r.busiest.len(), 1);
        assert!((r.busiest[0].cpu_pct - 30.0).abs() < 1e-9);
    }

    #[test]
    fn high_load_warns() {
        let quiet = observation(0, 0, &[]);
        let r = summarize_idle(&quiet, &quiet, None, 1.0, HZ, 1.5, 2);
        let warning = r.warning.expect("load above 0.5 x 2");
        assert!(warning.contains("1.50"), "{warning}");
        assert!(!warning.contains("other processes"), "{warning}");
        // Exactly 0.5 per CPU is still fine.
        let r = summarize_idle(&quiet, &quiet, None, 1.0, HZ, 1.0, 2);
        assert_eq!(r.warning, None);
    }

    #[test]
    fn others_within_the_tick_resolution_do_not_warn() {
        // Over 1 s on 2 CPUs the counters resolve 3 ticks (3%): 12% of a
        // CPU is 9% beyond that, 14% is 11%.
        let before = observation(0, 0, &[]);
        let r = summarize_idle(&before, &observation(6, 0, &[]), None, 1.0, HZ, 0.0, 2);
        assert_eq!(r.warning, None, "{}", r.other_cpu_pct);
        let r = summarize_idle(&before, &observation(7, 0, &[]), None, 1.0, HZ, 0.0, 2);
        assert!(r.warning.is_some(), "{}", r.other_cpu_pct);
    }

    #[test]
    fn own_cpu_is_not_blamed_on_others() {
        let before = observation(0, 0, &[]);
        let after = observation(60, 110, &[]);
        let r = summarize_idle(&before, &after, None, 1.0, HZ, 0.0, 2);
        assert_eq!(r.other_cpu_pct, 10.0);
        assert_eq!(r.warning, None);
    }

    #[test]
    fn unreadable_proc_shrinks_the_report() {
        let empty = Observation::default();
        let r = summarize_idle(&empty, &empty, None, 0.0, HZ, 0.0, 1);
        assert_eq!(r.other_cpu_pct, 0.0);
        assert!(r.busiest.is_empty());
        assert_eq!(r.warning, None);
        assert_eq!(r.cpus, 1);
    }

    #[test]
    fn live_idle_check() {
        let r = idle_check(Duration::from_millis(200));
        assert!(r.cpus >= 1);
        assert!(r.seconds >= 0.2, "{}", r.seconds);
        assert!(r.other_cpu_pct.is_finite() && r.other_cpu_pct >= 0.0);
        assert!(r.busiest.len() <= BUSIEST_SHOWN);
        assert!(r.busiest.iter().all(|p| p.pid != std::process::id()));
    }
}

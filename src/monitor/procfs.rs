//! Pure parsers for the few `/proc` files the monitor reads, plus thin
//! readers that never fail loudly.
//!
//! Every parser takes the file's text and returns plain numbers, so it is
//! tested against fixed text copied from real kernels. The readers wrap
//! them: a file that cannot be read or parsed gives `None` (or an empty
//! list), because a missing counter must shrink a health report, never abort
//! a benchmark.
//!
//! Field layouts follow the man pages `proc_stat(5)`, `proc_pid_stat(5)`,
//! `proc_loadavg(5)` and `proc_uptime(5)`, and the kernel's `fs/proc/stat.c`.

use std::path::Path;

/// Highest CPU number accepted from a `cpuN` line of `/proc/stat`.
///
/// Per-CPU counters are stored in a vector indexed by CPU number, so a
/// corrupt line naming CPU 4 000 000 000 must not allocate gigabytes. Linux's
/// `CONFIG_NR_CPUS` tops out at 8192 on every architecture (x86 `MAXSMP`);
/// 65536 leaves head-room.
const MAX_CPU_ID: usize = 65_536;

/// `USER_HZ`, the unit of every CPU-time counter in `/proc`, when
/// `sysconf(_SC_CLK_TCK)` cannot tell. It is 100 on every Linux architecture
/// (the kernel's `USER_HZ` is fixed to keep the ABI stable).
pub const DEFAULT_CLOCK_TICKS_PER_SEC: f64 = 100.0;

/// CPU time of one CPU (or of all, for the aggregate line) in clock ticks,
/// as listed on a `cpu` line of `/proc/stat`.
///
/// `guest` and `guest_nice` are not kept: the kernel already counts them in
/// `user` and `nice`, so adding them would count that time twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time in user mode.
    pub user: u64,
    /// Time in user mode at low priority (positive nice value).
    pub nice: u64,
    /// Time in kernel mode on behalf of tasks.
    pub system: u64,
    /// Idle time.
    pub idle: u64,
    /// Idle time while some task waited for I/O.
    pub iowait: u64,
    /// Time servicing hardware interrupts.
    pub irq: u64,
    /// Time servicing soft interrupts.
    pub softirq: u64,
    /// Time the hypervisor ran something else while this virtual CPU wanted
    /// to run (0 on bare metal and on kernels older than 2.6.11).
    pub steal: u64,
}

impl CpuTimes {
    /// All time of the CPU: every field, steal included.
    pub fn total(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
            .saturating_add(self.steal)
    }

    /// Time spent running tasks: user, nice and system.
    ///
    /// This is the time that can be compared with a process's
    /// `utime + stime`; interrupt time is left out because with the usual
    /// `CONFIG_IRQ_TIME_ACCOUNTING` it is charged to no task at all.
    pub fn task(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
    }

    /// Time the CPU was busy for this guest: tasks plus interrupts. Idle,
    /// iowait and steal are not busy (steal is time this guest did not get).
    pub fn busy(&self) -> u64 {
        self.task()
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
    }

    /// Field-wise `self − earlier`, clamped at 0 so that a counter that
    /// wrapped or was reset (CPU hot-plug re-initialises some) gives an empty
    /// interval instead of an enormous one.
    pub fn saturating_sub(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// The parts of `/proc/stat` the monitor uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The aggregate `cpu` line, if present.
    pub total: Option<CpuTimes>,
    /// `cpuN` lines indexed by N. The kernel lists online CPUs only, so an
    /// offline CPU (or a gap in the numbering) is `None`.
    pub per_cpu: Vec<Option<CpuTimes>>,
    /// Context switches since boot (`ctxt`).
    pub ctxt: Option<u64>,
    /// Tasks currently runnable (`procs_running`), including the reader.
    pub procs_running: Option<u32>,
    /// Tasks blocked on I/O (`procs_blocked`).
    pub procs_blocked: Option<u32>,
}

impl ProcStat {
    /// Number of CPUs listed (online) in this snapshot.
    pub fn online_cpus(&self) -> usize {
        self.per_cpu.iter().filter(|c| c.is_some()).count()
    }
}

/// Parses the numbers after a `cpu`/`cpuN` label. At least user, nice,
/// system and idle must be present; later fields (added over kernel
/// versions) default to 0.
fn parse_cpu_fields<'a>(fields: impl Iterator<Item = &'a str>) -> Option<CpuTimes> {
    let mut values = [0u64; 8];
    let mut count = 0;
    for (slot, field) in values.iter_mut().zip(fields) {
        *slot = field.parse().ok()?;
        count += 1;
    }
    if count < 4 {
        return None;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal] = values;
    Some(CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
    })
}

/// Parses `/proc/stat`. Unknown or malformed lines are skipped.
pub fn parse_stat(text: &str) -> ProcStat {
    let mut stat = ProcStat::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(label) = fields.next() else {
            continue;
        };
        if let Some(id) = label.strip_prefix("cpu") {
            let Some(times) = parse_cpu_fields(fields) else {
                continue;
            };
            if id.is_empty() {
                stat.total = Some(times);
            } else if let Some(n) = id.parse::<usize>().ok().filter(|&n| n < MAX_CPU_ID) {
                if stat.per_cpu.len() <= n {
                    stat.per_cpu.resize(n + 1, None);
                }
                stat.per_cpu[n] = Some(times);
            }
            continue;
        }
        let value = fields.next();
        match label {
            "ctxt" => stat.ctxt = value.and_then(|v| v.parse().ok()),
            "procs_running" => stat.procs_running = value.and_then(|v| v.parse().ok()),
            "procs_blocked" => stat.procs_blocked = value.and_then(|v| v.parse().ok()),
            _ => {}
        }
    }
    stat
}

/// Swap traffic counters from `/proc/vmstat`, in pages since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwapCounters {
    /// Pages swapped in (`pswpin`).
    pub pswpin: u64,
    /// Pages swapped out (`pswpout`).
    pub pswpout: u64,
}

/// Parses `pswpin` and `pswpout` from `/proc/vmstat`; `None` unless both are
/// present (a kernel without `CONFIG_VM_EVENT_COUNTERS` has neither).
pub fn parse_vmstat(text: &str) -> Option<SwapCounters> {
    let mut pswpin = None;
    let mut pswpout = None;
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let (Some(key), Some(value)) = (fields.next(), fields.next()) else {
            continue;
        };
        match key {
            "pswpin" => pswpin = value.parse().ok(),
            "pswpout" => pswpout = value.parse().ok(),
            _ => {}
        }
    }
    Some(SwapCounters {
        pswpin: pswpin?,
        pswpout: pswpout?,
    })
}

/// The parts of `/proc/[pid]/stat` the monitor uses.
///
/// For a process (as opposed to `/proc/[pid]/task/[tid]/stat`) `utime` and
/// `stime` cover all its threads, live and exited; children only count once
/// waited for, in `cutime` and `cstime`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PidStat {
    /// Process id.
    pub pid: u32,
    /// Parent's process id.
    pub ppid: u32,
    /// Command name (`comm`, at most 15 bytes, may contain spaces and
    /// parentheses).
    pub comm: String,
    /// State letter (`R`, `S`, `D`, `Z`, ...).
    pub state: char,
    /// User-mode CPU time in clock ticks.
    pub utime: u64,
    /// Kernel-mode CPU time in clock ticks.
    pub stime: u64,
    /// User-mode CPU time of waited-for children, in clock ticks.
    pub cutime: u64,
    /// Kernel-mode CPU time of waited-for children, in clock ticks.
    pub cstime: u64,
    /// Start time after boot in clock ticks (tells a reused pid apart).
    pub starttime: u64,
}

impl PidStat {
    /// `utime + stime`.
    pub fn cpu_ticks(&self) -> u64 {
        self.utime.saturating_add(self.stime)
    }

    /// `utime + stime + cutime + cstime`: the process and every child it
    /// has waited for.
    pub fn tree_ticks(&self) -> u64 {
        self.cpu_ticks()
            .saturating_add(self.cutime)
            .saturating_add(self.cstime)
    }
}

/// Parses `/proc/[pid]/stat`. The command name is everything between the
/// first `(` and the *last* `)`, since the name itself may contain both.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    // Fields after the name, numbered as in proc(5): state is field 3.
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).copied();
    let state = field(3)?.chars().next()?;
    Some(PidStat {
        pid,
        ppid: field(4)?.parse().ok()?,
        comm,
        state,
        utime: field(14)?.parse().ok()?,
        stime: field(15)?.parse().ok()?,
        cutime: field(16)?.parse().ok()?,
        cstime: field(17)?.parse().ok()?,
        starttime: field(22)?.parse().ok()?,
    })
}

/// `/proc/loadavg`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadAvg {
    /// Load average over 1 minute.
    pub load1: f64,
    /// Load average over 5 minutes.
    pub load5: f64,
    /// Load average over 15 minutes.
    pub load15: f64,
    /// Runnable scheduling entities right now.
    pub runnable: u32,
    /// Scheduling entities (threads) that exist.
    pub total: u32,
}

/// Parses `/proc/loadavg` (`0.17 0.13 0.05 2/147 7044`).
pub fn parse_loadavg(text: &str) -> Option<LoadAvg> {
    let mut fields = text.split_ascii_whitespace();
    let load1 = fields.next()?.parse().ok()?;
    let load5 = fields.next()?.parse().ok()?;
    let load15 = fields.next()?.parse().ok()?;
    let (runnable, total) = fields.next()?.split_once('/')?;
    Some(LoadAvg {
        load1,
        load5,
        load15,
        runnable: runnable.parse().ok()?,
        total: total.parse().ok()?,
    })
}

/// Parses `/proc/uptime`: seconds since boot (first field).
pub fn parse_uptime(text: &str) -> Option<f64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Reads and parses `/proc/stat`; `None` if unreadable or without any CPU
/// line.
pub fn read_stat() -> Option<ProcStat> {
    let stat = parse_stat(&read("/proc/stat")?);
    (stat.total.is_some() || stat.online_cpus() > 0).then_some(stat)
}

/// Reads the swap counters of `/proc/vmstat`.
pub fn read_vmstat() -> Option<SwapCounters> {
    parse_vmstat(&read("/proc/vmstat")?)
}

/// Reads `/proc/self/stat`: this whole process, all threads included,
/// whichever thread asks.
pub fn read_self_stat() -> Option<PidStat> {
    parse_pid_stat(&read("/proc/self/stat")?)
}

/// CPU ticks of this process and all its descendants: its own and its
/// waited-for children's time, plus, for every live descendant, the same.
/// A workload that forks (hackbench, a compiler, a shell) is still "this
/// process" for the monitor, not "other processes".
///
/// Descendants are found through `/proc/[pid]/task/[tid]/children`, so a
/// process without children costs one small read per thread; kernels
/// without that file fall back to scanning `/proc`. `None` without `/proc`.
///
/// The processes in `also` (what a case claimed in `own_processes`: a
/// database server it started or loads on this host) are walked the same
/// way, each process counted once even where the trees overlap.
pub fn read_tree_ticks(also: &[u32]) -> Option<u64> {
    let own = read_self_stat()?;
    let mut total = own.tree_ticks();
    let mut seen = std::collections::HashSet::from([own.pid]);
    let mut stack = children_of(own.pid);
    stack.extend_from_slice(also);
    // A bound on the walk, in case pids are reused into a cycle mid-read.
    let mut budget = 100_000usize;
    while let Some(pid) = stack.pop() {
        budget = budget.checked_sub(1)?;
        if !seen.insert(pid) {
            continue;
        }
        if let Some(stat) = read_pid_stat(pid) {
            total = total.saturating_add(stat.tree_ticks());
            stack.extend(children_of(pid));
        }
    }
    Some(total)
}

/// The live children of `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let tasks = format!("/proc/{pid}/task");
    match std::fs::read_dir(&tasks) {
        Ok(entries) => {
            let mut children = Vec::new();
            let mut supported = true;
            for entry in entries.flatten() {
                match std::fs::read_to_string(entry.path().join("children")) {
                    Ok(text) => children.extend(
                        text.split_ascii_whitespace()
                            .filter_map(|p| p.parse::<u32>().ok()),
                    ),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => supported = false,
                    Err(_) => {}
                }
            }
            if supported {
                children
            } else {
                children_by_scan(pid)
            }
        }
        Err(_) => Vec::new(),
    }
}

/// The live children of `pid`, by reading every process's parent.
fn children_by_scan(pid: u32) -> Vec<u32> {
    list_pids()
        .into_iter()
        .filter(|&p| read_pid_stat(p).is_some_and(|s| s.ppid == pid))
        .collect()
}

/// Which process, on which boot: enough to tell whether the process that
/// made something is still alive, even after its pid was reused or the
/// machine rebooted. Written as `BOOT_ID:PID:STARTTIME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// `/proc/sys/kernel/random/boot_id`.
    pub boot_id: String,
    /// The process id.
    pub pid: u32,
    /// The process's start time after boot, in clock ticks.
    pub starttime: u64,
}

impl ProcessIdentity {
    /// This process; `None` without `/proc`.
    pub fn current() -> Option<Self> {
        Some(ProcessIdentity {
            boot_id: read_boot_id()?,
            pid: std::process::id(),
            starttime: read_self_stat()?.starttime,
        })
    }

    /// Parses the `BOOT_ID:PID:STARTTIME` form.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(':');
        let identity = ProcessIdentity {
            boot_id: parts.next()?.to_string(),
            pid: parts.next()?.parse().ok()?,
            starttime: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(identity)
    }

    /// Whether that very process is still running: same boot, the pid in
    /// use, by a process started at the same tick, and not a zombie (a
    /// killed process whose parent died too stays one until its new
    /// parent reaps it, holding nothing any more). `None` when this host
    /// cannot tell (no `/proc`).
    pub fn is_alive(&self) -> Option<bool> {
        let boot = read_boot_id()?;
        if boot != self.boot_id {
            return Some(false);
        }
        Some(
            read_pid_stat(self.pid)
                .is_some_and(|s| s.starttime == self.starttime && s.state != 'Z'),
        )
    }
}

impl std::fmt::Display for ProcessIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.boot_id, self.pid, self.starttime)
    }
}

/// `/proc/sys/kernel/random/boot_id`, trimmed.
fn read_boot_id() -> Option<String> {
    Some(read("/proc/sys/kernel/random/boot_id")?.trim().to_string())
}

/// Reads `/proc/[pid]/stat`; `None` if the process is gone or hidden.
pub fn read_pid_stat(pid: u32) -> Option<PidStat> {
    parse_pid_stat(&read(format!("/proc/{pid}/stat"))?)
}

/// Reads `/proc/loadavg`.
pub fn read_loadavg() -> Option<LoadAvg> {
    parse_loadavg(&read("/proc/loadavg")?)
}

/// Reads `/proc/uptime` in seconds.
pub fn read_uptime() -> Option<f64> {
    parse_uptime(&read("/proc/uptime")?)
}

/// Ids of the processes listed in `/proc` (thread-group leaders only:
/// threads are not listed there). Empty if `/proc` cannot be read.
pub fn list_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Clock ticks per second (`USER_HZ`) of the `/proc` CPU-time counters.
pub fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no preconditions; it only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        DEFAULT_CLOCK_TICKS_PER_SEC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two-CPU VM with steal, from a 6.x kernel (10 CPU fields).
    const STAT: &str = "\
cpu  2930 0 795 30425 620 0 26 41 0 0
cpu0 1481 0 291 15583 16 0 5 20 0 0
cpu1 1448 0 504 14841 604 0 20 21 0 0
intr 301683 0 0 0 0
ctxt 722504
btime 1795294455
processes 7044
procs_running 2
procs_blocked 1
softirq 122937 0 7989 4 9762 60085 0 329 24256 0 20512
";

    #[test]
    fn stat_parses_cpus_and_counters() {
        let stat = parse_stat(STAT);
        let cpu0 = CpuTimes {
            user: 1481,
            nice: 0,
            system: 291,
            idle: 15583,
            iowait: 16,
            irq: 0,
            softirq: 5,
            steal: 20,
        };
        assert_eq!(stat.per_cpu.len(), 2);
        assert_eq!(stat.per_cpu[0], Some(cpu0));
        assert_eq!(stat.per_cpu[1].unwrap().steal, 21);
        assert_eq!(stat.total.unwrap().user, 2930);
        assert_eq!(stat.ctxt, Some(722_504));
        assert_eq!(stat.procs_running, Some(2));
        assert_eq!(stat.procs_blocked, Some(1));
        assert_eq!(cpu0.total(), 1481 + 291 + 15583 + 16 + 5 + 20);
        assert_eq!(cpu0.busy(), 1481 + 291 + 5);
        assert_eq!(cpu0.task(), 1481 + 291);
    }

    #[test]
    fn stat_offline_cpu_is_a_gap() {
        let text = "cpu  1 2 3 4\ncpu0 1 0 1 2\ncpu2 0 2 2 2\nctxt 5\n";
        let stat = parse_stat(text);
        assert_eq!(stat.per_cpu.len(), 3);
        assert!(stat.per_cpu[0].is_some());
        assert_eq!(stat.per_cpu[1], None);
        assert_eq!(stat.per_cpu[2].unwrap().nice, 2);
        assert_eq!(stat.online_cpus(), 2);
    }

    #[test]
    fn stat_old_kernel_four_fields_and_garbage() {
        // 2.4-era lines have only user nice system idle.
        let text = "cpu 10 20 30 40\ncpu0 10 20 30 40\ncpu1 1 2\ncpux 1 2 3 4\n\
                    cpu99999999 1 1 1 1\nctxt notanumber\nprocs_running\n";
        let stat = parse_stat(text);
        assert_eq!(stat.per_cpu.len(), 1);
        assert_eq!(stat.per_cpu[0].unwrap().steal, 0);
        assert_eq!(stat.per_cpu[0].unwrap().idle, 40);
        assert_eq!(stat.ctxt, None);
        assert_eq!(stat.procs_running, None);
        assert_eq!(parse_stat(""), ProcStat::default());
    }

    #[test]
    fn cpu_times_subtraction_saturates() {
        let later = CpuTimes {
            user: 5,
            idle: 100,
            ..CpuTimes::default()
        };
        let earlier = CpuTimes {
            user: 10,
            idle: 40,
            ..CpuTimes::default()
        };
        let d = later.saturating_sub(&earlier);
        assert_eq!(d.user, 0);
        assert_eq!(d.idle, 60);
    }

    #[test]
    fn vmstat_swap_counters() {
        let text = "nr_free_pages 12345\npswpin 17\npswpout 4242\npgfault 99\n";
        assert_eq!(
            parse_vmstat(text),
            Some(SwapCounters {
                pswpin: 17,
                pswpout: 4242
            })
        );
        assert_eq!(parse_vmstat("pswpin 3\n"), None);
        assert_eq!(parse_vmstat(""), None);
    }

    #[test]
    fn pid_stat_with_awkward_name() {
        let text = "7046 (my (odd) name) R 7040 7040 5871 0 -1 4194304 103 0 0 0 \
                    25 13 4 2 20 0 1 0 17465 3133440 411 18446744073709551615 0\n";
        let stat = parse_pid_stat(text).unwrap();
        assert_eq!(stat.pid, 7046);
        assert_eq!(stat.ppid, 7040);
        assert_eq!((stat.cutime, stat.cstime), (4, 2));
        assert_eq!(stat.tree_ticks(), 44);
        assert_eq!(stat.comm, "my (odd) name");
        assert_eq!(stat.state, 'R');
        assert_eq!(stat.utime, 25);
        assert_eq!(stat.stime, 13);
        assert_eq!((stat.cutime, stat.cstime), (4, 2));
        assert_eq!(stat.starttime, 17465);
        assert_eq!(stat.cpu_ticks(), 38);
        assert_eq!(stat.tree_ticks(), 44);
    }

    #[test]
    fn a_busy_child_counts_as_this_process() {
        // A child shell spinning for up to 20 s: its CPU time must show in
        // the tree's ticks and not in this process's own.
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "end=$(($(date +%s) + 20)); while [ $(date +%s) -lt $end ]; do :; done",
            ])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        let mut seen = 0;
        while std::time::Instant::now() < deadline {
            let own = read_self_stat().unwrap().tree_ticks();
            let tree = read_tree_ticks(&[]).unwrap();
            seen = tree.saturating_sub(own);
            if seen >= 5 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(seen >= 5, "the child's ticks never showed: {seen}");
    }

    #[test]
    fn a_process_identity_tells_the_living_from_the_gone() {
        let me = ProcessIdentity::current().unwrap();
        assert_eq!(me.is_alive(), Some(true));
        assert_eq!(ProcessIdentity::parse(&me.to_string()), Some(me.clone()));
        // Same pid, another start: the pid was reused.
        let reused = ProcessIdentity {
            starttime: me.starttime + 1,
            ..me.clone()
        };
        assert_eq!(reused.is_alive(), Some(false));
        // Another boot.
        let rebooted = ProcessIdentity {
            boot_id: "not-this-boot".into(),
            ..me.clone()
        };
        assert_eq!(rebooted.is_alive(), Some(false));
        // A child that exited and was reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = ProcessIdentity { pid, ..me.clone() };
        assert_eq!(gone.is_alive(), Some(false));
        // A child that exited and was not reaped yet: a zombie, gone too.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let zombie = ProcessIdentity {
            pid,
            starttime: read_pid_stat(pid).unwrap().starttime,
            ..me
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while read_pid_stat(pid).is_some_and(|s| s.state != 'Z')
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(zombie.is_alive(), Some(false));
        child.wait().unwrap();
        assert_eq!(ProcessIdentity::parse("a:1"), None);
        assert_eq!(ProcessIdentity::parse("a:b:1"), None);
        assert_eq!(ProcessIdentity::parse("a:1:2:3"), None);
    }

    #[test]
    fn pid_stat_rejects_truncated_text() {
        assert_eq!(parse_pid_stat("12 (sh) S 1 2 3"), None);
        assert_eq!(parse_pid_stat("12 sh S"), None);
        assert_eq!(parse_pid_stat(")12 ( S"), None);
        assert_eq!(parse_pid_stat(""), None);
    }

    #[test]
    fn loadavg_and_uptime() {
        let load = parse_loadavg("0.17 0.13 0.05 2/147 7044\n").unwrap();
        assert_eq!(load.load1, 0.17);
        assert_eq!(load.load15, 0.05);
        assert_eq!(load.runnable, 2);
        assert_eq!(load.total, 147);
        assert_eq!(parse_loadavg("0.17 0.13"), None);
        assert_eq!(parse_uptime("17465.31 33000.12\n"), Some(17465.31));
        assert_eq!(parse_uptime(""), None);
    }

    #[test]
    fn live_readers_work_on_linux() {
        let stat = read_stat().expect("/proc/stat");
        assert!(stat.online_cpus() >= 1);
        let me = read_self_stat().expect("/proc/self/stat");
        assert_eq!(me.pid, std::process::id());
        assert!(list_pids().contains(&std::process::id()));
        assert!(clock_ticks_per_sec() > 0.0);
    }
}

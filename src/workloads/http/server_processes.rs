//! The processes of a server sledge did not start (`server=`: a pid or a
//! process name), found in `/proc`, and the CPU they use during a trial.
//!
//! A server is more than one process: nginx's master and its workers, a
//! pre-forking server's children, the threads of each. So `server=` names
//! the top of a tree, and each sample walks the tree again from there,
//! counting every process below it with its threads (a process's `utime`
//! and `stime` cover all its threads, and `cutime` and `cstime` the
//! children it reaped, so a worker that exits between two samples keeps
//! counting in its parent). Workers that come and go are followed; the
//! top itself leaving is the server exiting, an error of the trial.
//!
//! The CPU a server may use is its affinity (`Cpus_allowed_list`, which a
//! cgroup's cpuset narrows too) among the online CPUs. Its busy share is
//! its CPU time over that many CPUs' wall time; beside it, its busiest
//! thread's share of one CPU: a single event loop (nginx with one worker)
//! is saturated at 100% of one CPU, which on a host of two CPUs is a busy
//! share of only 50%.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use anyhow::{anyhow, bail};

use crate::monitor::procfs::{self, PidStat, clock_ticks_per_sec, parse_pid_stat};
use crate::sys::affinity::parse_cpu_list;

/// The longest command name the kernel keeps (`TASK_COMM_LEN` less its
/// terminating NUL): a longer name is matched by its first 15 bytes.
const COMM_LEN: usize = 15;

/// What `server=` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// One process and everything below it.
    Pid(u32),
    /// Every process with this command name (as `ps -o comm` shows it)
    /// that is not below another one of that name, and everything below
    /// them.
    Name(String),
}

impl ServerSpec {
    /// The server `text` names; `None` for an empty text (no server).
    pub fn parse(text: &str) -> anyhow::Result<Option<ServerSpec>> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            let pid = text
                .parse::<u32>()
                .ok()
                .filter(|&pid| pid > 0)
                .ok_or_else(|| anyhow!("server={text}: a pid is a number from 1 up"))?;
            return Ok(Some(ServerSpec::Pid(pid)));
        }
        Ok(Some(ServerSpec::Name(text.to_string())))
    }

    fn matches(&self, stat: &PidStat) -> bool {
        match self {
            ServerSpec::Pid(pid) => stat.pid == *pid,
            ServerSpec::Name(name) => {
                stat.comm == *name
                    || (name.len() > COMM_LEN
                        && name.is_char_boundary(COMM_LEN)
                        && stat.comm == name[..COMM_LEN])
            }
        }
    }
}

impl std::fmt::Display for ServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerSpec::Pid(pid) => write!(f, "server={pid}"),
            ServerSpec::Name(name) => write!(f, "server={name}"),
        }
    }
}

/// Every process in `/proc` at one moment, by pid.
type ProcessTable = BTreeMap<u32, PidStat>;

fn read_table() -> ProcessTable {
    procfs::list_pids()
        .into_iter()
        .filter_map(|pid| Some((pid, procfs::read_pid_stat(pid)?)))
        .collect()
}

/// One process at the top of the server's tree: the pid with its start
/// time, which tells it from a later process given the same pid.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Top {
    pid: u32,
    starttime: u64,
    comm: String,
}

/// This process and every process above it: the server's tree must not
/// hold sledge, nor be held by it.
fn own_lineage(table: &ProcessTable) -> BTreeSet<u32> {
    let mut lineage = BTreeSet::new();
    let mut pid = std::process::id();
    while pid > 0 && lineage.insert(pid) {
        pid = table.get(&pid).map_or(0, |stat| stat.ppid);
    }
    lineage
}

/// The processes `spec` names that are not below another one it names,
/// leaving out sledge and the processes above it.
fn tops(table: &ProcessTable, spec: &ServerSpec, lineage: &BTreeSet<u32>) -> Vec<Top> {
    let named: BTreeSet<u32> = table
        .values()
        .filter(|stat| spec.matches(stat) && !lineage.contains(&stat.pid))
        .map(|stat| stat.pid)
        .collect();
    let below_another = |pid: u32| {
        let mut seen = BTreeSet::new();
        let mut at = table.get(&pid).map_or(0, |stat| stat.ppid);
        while at > 0 && seen.insert(at) {
            if named.contains(&at) {
                return true;
            }
            at = table.get(&at).map_or(0, |stat| stat.ppid);
        }
        false
    };
    named
        .iter()
        .filter(|&&pid| !below_another(pid))
        .map(|pid| {
            let stat = &table[pid];
            Top {
                pid: *pid,
                starttime: stat.starttime,
                comm: stat.comm.clone(),
            }
        })
        .collect()
}

/// `tops` and every process below them, but never sledge's own process
/// (nor what it started).
fn tree(table: &ProcessTable, tops: &[Top]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for stat in table.values() {
        children.entry(stat.ppid).or_default().push(stat.pid);
    }
    let own = std::process::id();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<u32> = tops.iter().map(|top| top.pid).collect();
    while let Some(pid) = stack.pop() {
        if pid == own || !seen.insert(pid) {
            continue;
        }
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    seen.into_iter().collect()
}

/// The server's processes, as found when the case was prepared.
#[derive(Debug, Clone)]
pub struct ServerProcesses {
    spec: ServerSpec,
    tops: Vec<Top>,
}

impl ServerProcesses {
    /// Finds the server `spec` names; an error says why there is none.
    pub fn find(spec: &ServerSpec) -> anyhow::Result<ServerProcesses> {
        let table = read_table();
        if table.is_empty() {
            bail!("{spec}: /proc cannot be read, so the server's processes cannot be found");
        }
        let lineage = own_lineage(&table);
        let tops = tops(&table, spec, &lineage);
        if tops.is_empty() {
            match spec {
                ServerSpec::Pid(pid) if lineage.contains(pid) => bail!(
                    "{spec}: that is sledge itself or a process above it; name the server's own pid"
                ),
                ServerSpec::Pid(pid) => bail!(
                    "{spec}: no process {pid} is running; give the pid of the server's main process (nginx's master: `pgrep -o nginx`) or its name (server=nginx)"
                ),
                ServerSpec::Name(name) => bail!(
                    "{spec}: no process named `{name}` is running (names are matched as `ps -o comm` shows them, at most {COMM_LEN} characters); or give a pid"
                ),
            }
        }
        Ok(ServerProcesses {
            spec: spec.clone(),
            tops,
        })
    }

    /// The server as a message names it: `server=nginx (pid 812)`.
    pub fn describe(&self) -> String {
        let pids: Vec<String> = self.tops.iter().map(|top| top.pid.to_string()).collect();
        format!(
            "{} ({} {}, `{}`)",
            self.spec,
            if pids.len() == 1 { "pid" } else { "pids" },
            pids.join(", "),
            self.tops[0].comm
        )
    }

    /// The pids at the top of its tree, as found.
    pub fn top_pids(&self) -> Vec<u32> {
        self.tops.iter().map(|top| top.pid).collect()
    }

    /// The online CPUs the server's processes may run on now.
    pub fn cpus(&self) -> Vec<usize> {
        let table = read_table();
        allowed_online_cpus(&tree(&table, &self.tops))
            .into_iter()
            .collect()
    }

    /// The server's CPU time and CPUs now. An error when a process at
    /// the top of its tree is gone: the server exited (or was restarted,
    /// which a comparison of its samples could not see).
    pub fn sample(&self) -> anyhow::Result<ServerSample> {
        let table = read_table();
        let at = Instant::now();
        if let Some(gone) = self.tops.iter().find(|top| {
            table
                .get(&top.pid)
                .is_none_or(|stat| stat.starttime != top.starttime || stat.state == 'Z')
        }) {
            bail!(
                "the server {} is gone: process {} (`{}`) exited",
                self.describe(),
                gone.pid,
                gone.comm
            );
        }
        let pids = tree(&table, &self.tops);
        let mut ticks = 0u64;
        let mut threads = HashMap::new();
        for pid in &pids {
            ticks = ticks.saturating_add(table[pid].tree_ticks());
            threads.extend(thread_ticks(*pid));
        }
        let cpus = allowed_online_cpus(&pids).len();
        Ok(ServerSample {
            at,
            ticks,
            threads,
            cpus,
            processes: pids.len(),
        })
    }
}

/// The online CPUs any of `pids` may run on (all it may run on where the
/// online CPUs cannot be read).
fn allowed_online_cpus(pids: &[u32]) -> BTreeSet<usize> {
    let allowed: BTreeSet<usize> = pids.iter().flat_map(|&pid| allowed_cpus(pid)).collect();
    let online: BTreeSet<usize> = procfs::read_stat()
        .map(|stat| {
            (0..stat.per_cpu.len())
                .filter(|&cpu| stat.per_cpu[cpu].is_some())
                .collect()
        })
        .unwrap_or_default();
    if online.is_empty() {
        allowed
    } else {
        allowed.intersection(&online).copied().collect()
    }
}

/// The CPU ticks of each thread of process `pid`, keyed by thread id and
/// start time (a thread id can be reused).
fn thread_ticks(pid: u32) -> Vec<((u32, u64), u64)> {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let stat = parse_pid_stat(&text)?;
            Some(((stat.pid, stat.starttime), stat.cpu_ticks()))
        })
        .collect()
}

/// The CPUs process `pid` may run on (`Cpus_allowed_list`), none when it
/// cannot be read.
fn allowed_cpus(pid: u32) -> Vec<usize> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
                .and_then(|list| parse_cpu_list(list.trim()).ok())
        })
        .unwrap_or_default()
}

/// The server's CPU time at one moment.
#[derive(Debug, Clone)]
pub struct ServerSample {
    at: Instant,
    /// Every process's `utime + stime + cutime + cstime`, in clock ticks.
    ticks: u64,
    /// Each thread's `utime + stime`, by thread id and start time.
    threads: HashMap<(u32, u64), u64>,
    /// Online CPUs any of its processes may run on.
    cpus: usize,
    /// Processes in its tree.
    processes: usize,
}

/// What the server used between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerUse {
    /// CPU time of all its processes, seconds.
    pub cpu_seconds: f64,
    /// That time as a share (0..=1) of the CPUs it may run on.
    pub busy: f64,
    /// The busiest thread's share (0..=1) of one CPU.
    pub busiest_thread: f64,
    /// Processes in its tree at the end.
    pub processes: usize,
}

impl ServerSample {
    /// What the server used from `before` to this sample; `None` when no
    /// time passed or it may run on no CPU sledge can see.
    pub fn since(&self, before: &ServerSample) -> Option<ServerUse> {
        let wall = self.at.saturating_duration_since(before.at).as_secs_f64();
        let cpus = self.cpus.max(before.cpus);
        if wall <= 0.0 || cpus == 0 {
            return None;
        }
        let hz = clock_ticks_per_sec();
        let cpu_seconds = self.ticks.saturating_sub(before.ticks) as f64 / hz;
        let busiest = self
            .threads
            .iter()
            .filter_map(|(id, ticks)| Some(ticks.saturating_sub(*before.threads.get(id)?)))
            .max()
            .unwrap_or(0);
        Some(ServerUse {
            cpu_seconds,
            busy: (cpu_seconds / (wall * cpus as f64)).min(1.0),
            busiest_thread: (busiest as f64 / hz / wall).min(1.0),
            processes: self.processes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, ppid: u32, comm: &str) -> PidStat {
        PidStat {
            pid,
            ppid,
            comm: comm.to_string(),
            state: 'S',
            starttime: u64::from(pid) * 10,
            ..PidStat::default()
        }
    }

    /// systemd, an nginx master with two workers, a second nginx started
    /// by a shell, and a long-named server (comm keeps 15 bytes).
    fn table() -> ProcessTable {
        [
            process(1, 0, "systemd"),
            process(100, 1, "nginx"),
            process(101, 100, "nginx"),
            process(102, 100, "nginx"),
            process(200, 1, "bash"),
            process(201, 200, "nginx"),
            process(300, 1, "my-long-server-"),
            process(301, 300, "helper"),
        ]
        .into_iter()
        .map(|stat| (stat.pid, stat))
        .collect()
    }

    fn pids(tops: &[Top]) -> Vec<u32> {
        tops.iter().map(|top| top.pid).collect()
    }

    #[test]
    fn a_name_finds_the_tops_of_its_trees_and_a_tree_holds_their_children() {
        let table = table();
        let none = BTreeSet::new();
        let nginx = ServerSpec::parse("nginx").unwrap().unwrap();
        let found = tops(&table, &nginx, &none);
        assert_eq!(pids(&found), [100, 201], "workers are below their master");
        assert_eq!(tree(&table, &found), [100, 101, 102, 201]);
        let long = ServerSpec::parse("my-long-server-name").unwrap().unwrap();
        let found = tops(&table, &long, &none);
        assert_eq!(pids(&found), [300]);
        assert_eq!(tree(&table, &found), [300, 301]);
        assert!(tops(&table, &ServerSpec::Name("ngin".into()), &none).is_empty());
    }

    #[test]
    fn a_pid_finds_itself_and_sledge_is_never_the_server() {
        let table = table();
        let bash = ServerSpec::parse("200").unwrap().unwrap();
        let found = tops(&table, &bash, &BTreeSet::new());
        assert_eq!(pids(&found), [200]);
        assert_eq!(tree(&table, &found), [200, 201]);
        // A process above sledge (its shell, say) is refused.
        let lineage = BTreeSet::from([200, 1]);
        assert!(tops(&table, &bash, &lineage).is_empty());
    }

    #[test]
    fn server_values_are_a_pid_a_name_or_nothing() {
        assert_eq!(ServerSpec::parse(" ").unwrap(), None);
        assert_eq!(
            ServerSpec::parse("812").unwrap(),
            Some(ServerSpec::Pid(812))
        );
        assert_eq!(
            ServerSpec::parse("php-fpm8.2").unwrap(),
            Some(ServerSpec::Name("php-fpm8.2".into()))
        );
        for bad in ["0", "99999999999"] {
            let err = ServerSpec::parse(bad).unwrap_err().to_string();
            assert!(err.contains("a pid is a number from 1 up"), "{err}");
        }
    }

    #[test]
    fn this_process_is_found_by_pid_and_samples_its_own_cpu() {
        // Sledge itself is refused as a server: its parent (the test
        // harness's process tree) is not.
        let own = ServerSpec::Pid(std::process::id());
        let err = ServerProcesses::find(&own).unwrap_err().to_string();
        assert!(err.contains("sledge itself"), "{err}");
        let mut child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        let server = ServerProcesses::find(&ServerSpec::Pid(child.id())).unwrap();
        let before = server.sample().unwrap();
        // CPU time moves in clock ticks: on a loaded machine the loop may
        // get none in 300 ms, so wait (at most 5 s) until it has.
        let ran = |sample: &anyhow::Result<ServerSample>| {
            sample
                .as_ref()
                .ok()
                .and_then(|s| s.since(&before))
                .is_some_and(|used| used.cpu_seconds > 0.0)
        };
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(5);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut after = server.sample();
        while !ran(&after) && std::time::Instant::now() < give_up {
            std::thread::sleep(std::time::Duration::from_millis(100));
            after = server.sample();
        }
        let _ = child.kill();
        let _ = child.wait();
        let after = after.unwrap();
        let used = after.since(&before).unwrap();
        assert!(used.cpu_seconds > 0.0, "{used:?}");
        // One thread does all the work: its share of one CPU is all the
        // tree's CPU time over the wall time, however little of a CPU a
        // loaded machine gave it (both capped at one CPU, which a whole
        // tick more than the wall time can pass).
        let cpus = after.cpus.max(before.cpus) as f64;
        assert!(
            (used.busiest_thread - (used.busy * cpus).min(1.0)).abs() < 1e-9,
            "a one-thread shell loop is its own busiest thread: {used:?}"
        );
        assert!(used.busy > 0.0 && used.busy <= 1.0, "{used:?}");
        // Gone (and reaped): the next sample says so.
        let err = server.sample().unwrap_err().to_string();
        assert!(err.contains("exited"), "{err}");
    }
}

//! The built-in profiles: named lists of cases.

use std::time::Duration;

use crate::engine::Methodology;

/// One line of a profile: a workload and the parameters it sets (each
/// value may be a comma-separated sweep, as on the command line).
#[derive(Debug, Clone)]
pub struct Entry {
    /// Workload id.
    pub workload: &'static str,
    /// `name=value[,value...]` assignments.
    pub params: &'static [&'static str],
}

/// A named list of cases with the repetition rule it runs under.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Name used on the command line.
    pub name: &'static str,
    /// What the profile is for.
    pub summary: &'static str,
    /// The cases.
    pub entries: Vec<Entry>,
    /// The repetition rule (command-line flags override it).
    pub methodology: Methodology,
}

const fn entry(workload: &'static str, params: &'static [&'static str]) -> Entry {
    Entry { workload, params }
}

/// `quick`: every workload at one thread and at all CPUs, short trials.
/// Meant to finish within about 90 seconds on a small machine.
fn quick() -> Profile {
    Profile {
        name: "quick",
        summary: "every workload at 1 thread and at all CPUs, short trials (about a minute)",
        entries: vec![
            entry("cpu.primes", &["threads=1,all", "time=0.5"]),
            entry("cpu.threads", &["threads=1,all", "time=0.5"]),
            entry("cpu.mutex", &["threads=1,all", "locks=20000"]),
            entry(
                "memory.block",
                &["oper=write,read", "threads=1,all", "time=0.5"],
            ),
            // About 20 s together: 1 B and the dynamic page at 1, 10, 100.
            entry(
                "http.static",
                &["size=1", "concurrency=1,10,100", "requests=0", "time=0.5"],
            ),
            entry(
                "http.dynamic",
                &["concurrency=1,10,100", "requests=0", "time=0.5"],
            ),
        ],
        methodology: Methodology {
            max_trials: 5,
            case_budget: Duration::from_secs(8),
            ..Methodology::default()
        },
    }
}

/// `standard`: the classic tools' defaults (10 s trials) at 1 thread and
/// at all CPUs.
fn standard() -> Profile {
    Profile {
        name: "standard",
        summary: "the classic tools' defaults (10 s trials) at 1 thread and at all CPUs",
        entries: vec![
            entry("cpu.primes", &["threads=1,all"]),
            entry("cpu.threads", &["threads=1,all"]),
            entry("cpu.mutex", &["threads=1,all"]),
            entry("memory.block", &["oper=write,read", "threads=1,all"]),
        ],
        methodology: Methodology::default(),
    }
}

/// `seeds`: the reference articles' plans, as they ran them.
fn seeds() -> Profile {
    Profile {
        name: "seeds",
        summary: "the reference articles' battery: sysbench cpu at max_prime 20000 on 1 thread, threads at 128 threads / 200 yields / 4 locks; ab, httperf and siege plans against the built-in HTTP server",
        entries: vec![
            entry("cpu.primes", &["max_prime=20000", "threads=1", "time=10"]),
            // The article reported the total time of a fixed amount of work:
            // sysbench 0.4's default of 10,000 events.
            entry(
                "cpu.threads",
                &[
                    "threads=128",
                    "yields=200",
                    "locks=4",
                    "events=10000",
                    "time=300",
                ],
            ),
            // The ab-style article: 100,000 requests at each concurrency for
            // a 1 B file, a 10 MiB file and a database page; ab without -k
            // opens a connection per request. `time` caps the slow cases.
            entry(
                "http.static",
                &[
                    "size=1,10M",
                    "concurrency=1,10,100,200,500",
                    "requests=100000",
                    "keepalive=false",
                    "time=60",
                ],
            ),
            entry(
                "http.dynamic",
                &[
                    "concurrency=1,10,100,200,500",
                    "requests=100000",
                    "keepalive=false",
                    "time=60",
                ],
            ),
            // httperf: 6 clients at 10 req/s each with a 1 s timeout. The
            // article sent 10,000 requests per client (1,000 s); 1,000 per
            // client keeps a trial at 100 s.
            entry(
                "http.static",
                &[
                    "size=1",
                    "concurrency=6",
                    "rate_per_client=10",
                    "timeout=1",
                    "keepalive=false",
                    "requests=6000",
                    "time=200",
                ],
            ),
            // siege: 2 KB, 200 KB and 2 MB pages, 10 and 100 users, with a
            // short random think time (realistic mode) and without
            // (benchmark mode).
            entry(
                "http.static",
                &[
                    "size=2K,200K,2M",
                    "concurrency=10,100",
                    "think=0,0.5",
                    "requests=0",
                    "time=10",
                ],
            ),
        ],
        methodology: Methodology::default(),
    }
}

/// Every built-in profile.
pub fn all() -> Vec<Profile> {
    vec![quick(), standard(), seeds()]
}

/// The profile with this name.
pub fn find(name: &str) -> Option<Profile> {
    all().into_iter().find(|p| p.name == name)
}

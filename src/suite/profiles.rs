//! The built-in profiles: named lists of cases.

use std::time::Duration;

use super::battery;
pub use super::profile::{Entry, Profile};
use crate::engine::{Methodology, Workload};
use crate::workloads;

fn entry(workload: &'static dyn Workload, params: &[&str]) -> Entry {
    Entry {
        workload,
        params: params.iter().map(|p| p.to_string()).collect(),
    }
}

/// `quick`: one headline case per family, with its one-CPU and all-CPU
/// steps where scaling is the question, measured until each number is
/// tight enough to decide with: the precision target is ±3% (95% CI), in
/// at most three minutes on a small machine.
///
/// Why so few cases: a case's interval comes from its round means, and
/// with 3 rounds Student's t multiplies their scatter by 2.5; on a shared
/// 2-vCPU guest, where round means of short trials scatter by 5-10%, the
/// old quick profile (71 cases, 3 rounds each) printed a median interval
/// of ±5% to ±24% depending on the neighbours. Fifteen cases leave time
/// for at least 5 rounds each (t = 2.78), and the run's time budget then
/// goes to the cases that are still wide (`engine::runner`). A round is
/// a warm-up and one counted trial of half a second where the workload
/// has a length, so that a burst of a neighbour is averaged within a
/// trial instead of deciding a round.
fn quick() -> Profile {
    Profile {
        name: "quick".to_string(),
        summary: "one headline case per family (1 and all CPUs where scaling is the question), measured to a ±3% target (about 3 minutes)".to_string(),
        entries: vec![
            entry(
                &workloads::cpu::primes::Primes,
                &["threads=1,all", "time=0.5"],
            ),
            // STREAM's arrays are 4 × the caches: on a host reporting a
            // 480 MiB L3 that is 1.9 GB an array, and five passes took 8 s
            // a trial (23 s a round with the warm-up), most of the run.
            // At five passes Triad reached ±0.5-0.8%, far inside the
            // target: two passes (one timed, STREAM's least) and no engine
            // warm-up (`warms_up_itself`) cut it to a third, and the rounds
            // give the repetition.
            entry(
                &workloads::memory::stream::MemoryStream,
                &["threads=1,all", "ntimes=2"],
            ),
            // Main-memory latency: a working set past every cache.
            entry(
                &workloads::memory::latency::MemoryLatency,
                &["size=64M", "time=0.3"],
            ),
            // openssl speed's AES-256-CBC at 8 KiB, one copy and one per
            // CPU, as the reference articles ran it.
            entry(
                &workloads::crypto::speed::CryptoSpeed,
                &[
                    "algorithm=aes-256-cbc",
                    "block_size=8192",
                    "copies=1,all",
                    "time=0.3",
                ],
            ),
            // The 1 B page at 100 concurrent connections, and the database
            // page at 10.
            entry(
                &workloads::http::static_page::StaticPage,
                &["size=1", "concurrency=100", "requests=0", "time=0.5"],
            ),
            entry(
                &workloads::http::dynamic_page::DynamicPage,
                &["concurrency=10", "requests=0", "time=0.5"],
            ),
            // Storage: random read/write on small files with direct I/O, so
            // the disk, not the page cache, is measured; and the dbench
            // file-server load at one client per CPU.
            entry(
                &workloads::storage::fileio::FileIo,
                &[
                    "mode=rndrw",
                    "file_num=16",
                    "total_size=32M",
                    "direct=true",
                    "time=0.5",
                ],
            ),
            entry(
                &workloads::storage::fileserver::FileServer,
                &["clients=all", "time=0.5", "warmup=0.1"],
            ),
            // Scheduler: hackbench over pipes; wake-up latency on an idle
            // host, 5000 wake-ups 200 µs apart a thread (cyclictest -i200,
            // one second a trial). A p99 from 1000 wake-ups 1 ms apart
            // moved 35% from round to round here and stayed wider than
            // ±10% in its 30 s; five times the wake-ups in the same second
            // moved 7-8% and reached ±4-5%.
            // hackbench at 1000 loops: at 200 a trial lasted 0.08 s and
            // rounds differed by 20-30%, never within ±10%.
            entry(
                &workloads::sched::hackbench::Hackbench,
                &["groups=2", "loops=1000", "ipc=pipe"],
            ),
            entry(
                &workloads::latency::wakeup::Wakeup,
                &["interval=200", "loops=5000", "load=none", "settle=0.1"],
            ),
            // UnixBench's Dhrystone at one copy.
            entry(
                &workloads::unixbench::dhrystone::DhrystoneWorkload,
                &["time=0.5"],
            ),
            // A small generated C project on every CPU: many short
            // compiler processes.
            entry(
                &workloads::build::c_project::CBuild,
                &["files=8", "lines_per_file=100", "jobs=all"],
            ),
        ],
        methodology: Methodology {
            min_rounds: 5,
            max_rounds: 30,
            // One counted trial a round: here round means scatter several
            // times more than trials do, so a second trial buys less than
            // another round would (Cochran's rule, `engine::planner`).
            max_trials: 1,
            ci_target: 0.03,
            case_budget: Duration::from_secs(30),
            run_budget: Some(Duration::from_secs(165)),
            ..Methodology::default()
        },
        file: None,
    }
}

/// `standard`: the classic tools' defaults (10 s trials) at 1 thread and
/// at all CPUs.
fn standard() -> Profile {
    Profile {
        name: "standard".to_string(),
        summary: "the classic tools' defaults (10 s trials) at 1 thread and at all CPUs, and a defconfig kernel compile at -j1 and -jN (needs linux-source: see build.kernel)".to_string(),
        entries: vec![
            entry(&workloads::cpu::primes::Primes, &["threads=1,all"]),
            entry(&workloads::cpu::threads::Threads, &["threads=1,all"]),
            entry(&workloads::cpu::mutex::Mutex, &["threads=1,all"]),
            entry(
                &workloads::memory::block::MemoryBlock,
                &["oper=write,read", "threads=1,all"],
            ),
            entry(&workloads::memory::stream::MemoryStream, &["threads=1,all"]),
            entry(
                &workloads::memory::latency::MemoryLatency,
                &["size=16K,64K,256K,1M,4M,16M,64M,256M,1G"],
            ),
            entry(
                &workloads::crypto::speed::CryptoSpeed,
                &[
                    "algorithm=md5,sha256,sha512,aes-256-cbc,aes-128-gcm,aes-256-gcm,chacha20-poly1305",
                    "block_size=16,64,256,1024,8192,16384",
                    "copies=1,all",
                    "time=1",
                ],
            ),
            entry(&workloads::sched::hackbench::Hackbench, &["cpus=1,all"]),
            // cyclictest -l 10000: 10 s of 1 ms wake-ups per thread.
            entry(&workloads::latency::wakeup::Wakeup, &["loops=10000"]),
            // The kernel compile of the articles and of Phoronix: Debian's
            // linux-source at defconfig, serial and on every CPU.
            entry(
                &workloads::build::kernel::KernelBuild,
                &["config=defconfig", "jobs=1,all"],
            ),
        ],
        methodology: Methodology::default(),
        file: None,
    }
}

/// `seeds`: the reference articles' plans, as they ran them.
fn seeds() -> Profile {
    Profile {
        name: "seeds".to_string(),
        summary: "the reference articles' battery: sysbench cpu at max_prime 20000 on 1 thread, threads at 128 threads / 200 yields / 4 locks; ab, httperf and siege plans against the built-in HTTP server; openssl speed MD5/SHA-256/AES-256-CBC on 1 and all cores; 4 STREAM copies of 20 M elements; fileio 5 GB rndrw, bonnie-style disk, dbench/tbench at 1..256 clients; hackbench on 1 and all cores; Interbench's tasks under its loads; a defconfig kernel compile serial and with one job per CPU; UnixBench's index tests at 1 and all copies with its index".to_string(),
        entries: vec![
            entry(
                &workloads::cpu::primes::Primes,
                &["max_prime=20000", "threads=1", "time=10"],
            ),
            // The article reported the total time of a fixed amount of work:
            // sysbench 0.4's default of 10,000 events.
            entry(
                &workloads::cpu::threads::Threads,
                &[
                    "threads=128",
                    "yields=200",
                    "locks=4",
                    "events=10000",
                    "time=300",
                ],
            ),
            // openssl speed's MD5, SHA-256 and AES-256-CBC at its default
            // 3 s per size, on one core and then on all cores at once.
            entry(
                &workloads::crypto::speed::CryptoSpeed,
                &[
                    "algorithm=md5,sha256,aes-256-cbc",
                    "block_size=16,64,256,1024,8192",
                    "copies=1,all",
                    "time=3",
                ],
            ),
            // Four STREAM processes side by side, 20 M elements, 100 passes.
            entry(
                &workloads::memory::stream::MemoryStream,
                &["copies=4", "threads=1", "array_size=20000000", "ntimes=100"],
            ),
            // The ab-style article: 100,000 requests at each concurrency for
            // a 1 B file, a 10 MiB file and a database page; ab without -k
            // opens a connection per request. `time` caps the slow cases.
            entry(
                &workloads::http::static_page::StaticPage,
                &[
                    "size=1,10M",
                    "concurrency=1,10,100,200,500",
                    "requests=100000",
                    "keepalive=false",
                    "time=60",
                ],
            ),
            entry(
                &workloads::http::dynamic_page::DynamicPage,
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
                &workloads::http::static_page::StaticPage,
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
                &workloads::http::static_page::StaticPage,
                &[
                    "size=2K,200K,2M",
                    "concurrency=10,100",
                    "think=0,0.5",
                    "requests=0",
                    "time=10",
                ],
            ),
            // sysbench fileio as the article ran it: 5 GB in 128 files
            // (meant to exceed RAM), random read/write, 300 s, fsync every
            // 100 requests.
            entry(
                &workloads::storage::fileio::FileIo,
                &[
                    "file_num=128",
                    "total_size=5G",
                    "mode=rndrw",
                    "time=300",
                    "fsync_freq=100",
                ],
            ),
            // bonnie++ on a file of 2 x RAM (the default size).
            entry(&workloads::storage::disk::Disk, &[]),
            // dbench and tbench from 1 to 256 clients, with dbench's
            // warm-up of a fifth of the run.
            entry(
                &workloads::storage::fileserver::FileServer,
                &["clients=1,2,4,8,16,32,64,128,256", "time=60", "warmup=12"],
            ),
            entry(
                &workloads::storage::fileserver_net::FileServerNet,
                &["clients=1,2,4,8,16,32,64,128,256", "time=60", "warmup=12"],
            ),
            // hackbench's defaults (10 groups, 100 loops) on one core and on
            // all of them: the article's 1 core vs 2 cores.
            entry(&workloads::sched::hackbench::Hackbench, &["cpus=1,all"]),
            // Interbench: its four interactive tasks under each load, 10 s
            // per trial (one sweep of X's 0-100% ramp).
            entry(
                &workloads::latency::interactive::Interactive,
                &[
                    "task=audio,video,x,gaming",
                    "load=none,cpu,memory,io,hackbench,http,build",
                    "time=10",
                ],
            ),
            // The article's kernel compile, serial and with one job per
            // CPU (its -j8 on 8 CPUs), on Debian's linux-source.
            entry(
                &workloads::build::kernel::KernelBuild,
                &["config=defconfig", "jobs=1,all"],
            ),
        ]
        .into_iter()
        // UnixBench's index tests at 1 copy and one per CPU, for its index.
        .chain(unixbench_entries())
        .collect(),
        methodology: Methodology::default(),
        file: None,
    }
}

/// UnixBench's twelve index tests at its own durations, with 1 copy and
/// with one copy per CPU: what `./Run` does on a multi-CPU machine.
fn unixbench_entries() -> Vec<Entry> {
    vec![
        entry(
            &workloads::unixbench::dhrystone::DhrystoneWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::whetstone::WhetstoneWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::execl::ExeclWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::fcopy::FileCopyWorkload,
            &["copies=1,all", "buffer=1K,256,4K"],
        ),
        entry(&workloads::unixbench::pipe::PipeWorkload, &["copies=1,all"]),
        entry(
            &workloads::unixbench::context::ContextWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::spawn::SpawnWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::syscall::SyscallWorkload,
            &["copies=1,all"],
        ),
        entry(
            &workloads::unixbench::shell::ShellWorkload,
            &["copies=1,all", "concurrent=1,8"],
        ),
    ]
}

/// `unixbench`: UnixBench's System Benchmarks Index, every test at 1 copy
/// and at one copy per CPU, at UnixBench's durations; the run's table ends
/// with the index as UnixBench prints it.
fn unixbench() -> Profile {
    Profile {
        name: "unixbench".to_string(),
        summary: "UnixBench's index tests (Dhrystone, Whetstone, execl, file copy, pipes, context switching, process creation, system calls, shell scripts) at 1 copy and one per CPU, UnixBench's durations, then its System Benchmarks Index (about 45 min on 2 CPUs)".to_string(),
        entries: unixbench_entries(),
        methodology: Methodology::default(),
        file: None,
    }
}

/// `web-six-clients`: the Opteron article's web test as it ran it: six
/// client machines at once, each opening a connection per request (httperf
/// `--num-conns 10000 --rate 10 --timeout 1`) at 10 requests/s for 10,000
/// requests, so about 1,000 s, against one server; it reported the mean
/// connect time, the mean response time, the test duration and the
/// timeouts. The client hosts come from `-p 'clients_from="..."'`
/// (`concurrency` and `rate_per_client` are per host, `requests` for all
/// hosts together: 60,000 is 10,000 for each of six); each host's own
/// figures are stored beside the exact merge as `NAME@HOST`.
///
/// One round of one trial and no warm-up: the article ran the test once,
/// and a repetition would cost another 17 minutes. `time` only bounds a
/// test whose server stalls: the request count ends it.
fn web_six_clients() -> Profile {
    Profile {
        name: "web-six-clients".to_string(),
        summary: "the Opteron article's web test: six client hosts (-p 'clients_from=\"h1,...,h6\"') each at 10 requests/s for 10,000 requests with a 1 s timeout, a connection per request, against the built-in server; mean connect time, mean response time, duration and timeouts per client host and merged (about 17 min)".to_string(),
        entries: vec![entry(
            &workloads::http::static_page::StaticPage,
            &[
                "size=2K",
                "concurrency=1",
                "keepalive=false",
                "rate_per_client=10",
                "timeout=1",
                "requests=60000",
                "time=1200",
            ],
        )],
        methodology: Methodology {
            warmup_trials: 0,
            min_rounds: 1,
            max_rounds: 1,
            min_trials: 1,
            max_trials: 1,
            ..Methodology::default()
        },
        file: None,
    }
}

/// Every built-in profile.
pub fn built_in() -> Vec<Profile> {
    vec![quick(), standard(), seeds(), unixbench(), web_six_clients()]
}

/// Every built-in profile, then the user's battery files of
/// `$XDG_CONFIG_HOME/sledge/profiles/`, each by its name; a file there
/// that cannot be read is in the second list, with why.
pub fn all_with_files() -> (Vec<Profile>, Vec<String>) {
    let mut profiles = built_in();
    let mut unreadable = Vec::new();
    for found in battery::user_batteries() {
        match found {
            Ok(profile) if profiles.iter().any(|p| p.name == profile.name) => {
                unreadable.push(format!(
                    "{}: its name `{}` is a built-in profile's; rename the file",
                    profile
                        .file
                        .as_ref()
                        .map_or_else(String::new, |f| f.path.display().to_string()),
                    profile.name
                ))
            }
            Ok(profile) => profiles.push(profile),
            Err(why) => unreadable.push(why.to_string()),
        }
    }
    (profiles, unreadable)
}

/// Every built-in profile (the user's battery files are in
/// [`all_with_files`]).
pub fn all() -> Vec<Profile> {
    built_in()
}

/// The profile a target names: a built-in profile; a battery file, when
/// the target is a path (it holds a `/` or ends in `.toml`); or a battery
/// in `$XDG_CONFIG_HOME/sledge/profiles/` by its name. `None` when the
/// target names none of these (it may be a workload); an error when it
/// names a battery file that cannot be read.
pub fn find(name: &str) -> Result<Option<Profile>, battery::BatteryError> {
    if let Some(profile) = built_in().into_iter().find(|p| p.name == name) {
        return Ok(Some(profile));
    }
    if battery::is_path(name) {
        return battery::read(std::path::Path::new(name)).map(Some);
    }
    match battery::user_file(name) {
        Some(path) => battery::read(&path).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::params::{resolve_cases, split_assignment};

    #[test]
    fn every_entry_of_every_profile_has_valid_values() {
        for profile in all() {
            for entry in &profile.entries {
                let workload = entry.workload;
                let assignments: BTreeMap<String, Vec<String>> = entry
                    .params
                    .iter()
                    .map(|p| split_assignment(p).unwrap())
                    .collect();
                let cases = resolve_cases(workload.id(), &workload.params(), &assignments, 2)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", profile.name, workload.id()));
                assert!(!cases.is_empty());
            }
        }
    }

    #[test]
    fn every_profile_plans_with_valid_parameters() {
        for profile in all() {
            let plan = crate::suite::plan(std::slice::from_ref(&profile.name), &[], 2)
                .unwrap_or_else(|e| panic!("{}: {e}", profile.name));
            assert!(!plan.cases.is_empty(), "{}", profile.name);
        }
    }

    #[test]
    fn the_unixbench_profile_has_the_twelve_index_tests_at_1_and_n_copies() {
        let plan = crate::suite::plan(&["unixbench".to_string()], &[], 2).unwrap();
        let tests: Vec<String> = plan.cases.iter().map(|c| c.label()).collect();
        assert_eq!(tests.len(), 24, "{tests:#?}");
        assert_eq!(tests.iter().filter(|t| t.contains("copies=2")).count(), 12);
    }
}

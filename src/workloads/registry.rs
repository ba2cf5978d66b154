//! The registry: every workload this sledge has, found by id or by
//! family. The families do not look workloads up here: what UnixBench's
//! index needs of its stored cases (what each stands for in the index)
//! is handed to it ([`index_entry_of`]), since the registry lists the
//! families' workloads and a family that named it would close a loop.

use super::{
    build, command, cpu, crypto, db, http, latency, memory, net, sched, scripted, storage, toy,
    unixbench,
};
use crate::engine::params::stored_set;
use crate::engine::{IndexEntry, Workload};
use crate::results::CaseRecord;

/// Every workload, in the order `sledge workloads` lists them (with the
/// scripted test workload when `SLEDGE_TEST_WORKLOADS=1`).
pub fn all() -> Vec<&'static dyn Workload> {
    let mut all = measuring();
    if scripted::enabled() {
        all.push(&scripted::Scripted);
        all.push(&toy::Toy);
    }
    all
}

/// The workloads that measure something.
fn measuring() -> Vec<&'static dyn Workload> {
    vec![
        &cpu::primes::Primes,
        &cpu::threads::Threads,
        &cpu::mutex::Mutex,
        &memory::block::MemoryBlock,
        &memory::stream::MemoryStream,
        &memory::latency::MemoryLatency,
        &crypto::speed::CryptoSpeed,
        &http::static_page::StaticPage,
        &http::dynamic_page::DynamicPage,
        &http::url_page::UrlPage,
        &db::oltp::Oltp,
        &db::tpcb::Tpcb,
        &storage::fileio::FileIo,
        &storage::disk::Disk,
        &storage::fileserver::FileServer,
        &storage::fileserver_net::FileServerNet,
        &net::stream::NetStream,
        &net::rr::NET_RR,
        &net::crr::NET_CRR,
        &net::udp::NetUdp,
        &sched::hackbench::Hackbench,
        &latency::wakeup::Wakeup,
        &latency::interactive::Interactive,
        &unixbench::dhrystone::DhrystoneWorkload,
        &unixbench::whetstone::WhetstoneWorkload,
        &unixbench::execl::ExeclWorkload,
        &unixbench::fcopy::FileCopyWorkload,
        &unixbench::pipe::PipeWorkload,
        &unixbench::context::ContextWorkload,
        &unixbench::spawn::SpawnWorkload,
        &unixbench::syscall::SyscallWorkload,
        &unixbench::shell::ShellWorkload,
        &build::kernel::KernelBuild,
        &build::c_project::CBuild,
        &command::workload::CommandWorkload,
    ]
}

/// The workloads that measure what the user points them at (a URL), and
/// so run only when named: a family's selection (`sledge run http`)
/// cannot give them their target.
const NAMED_ONLY: &[&str] = &["http.url"];

/// The workload with this id.
pub fn find(id: &str) -> Option<&'static dyn Workload> {
    all().into_iter().find(|w| w.id() == id)
}

/// The parameters the workload `id` gained after runs were stored without
/// them (see [`Workload::later_params`]); none for an id no workload has
/// (a run stored by another version of sledge).
pub fn later_params_of(id: &str) -> &'static [crate::engine::LaterParam] {
    find(id).map_or(&[], |w| w.later_params())
}

/// What a case of a run on `cpus` CPUs stands for in its family's index,
/// as its workload says ([`Workload::index_entry`]) from the typed values
/// the case ran with where its record keeps them, else from its stored
/// parameters read back against its own; `None` for a case of no index,
/// of a workload this sledge does not have, or with parameters it no
/// longer accepts. What the report hands to a run's sections
/// ([`crate::engine::IndexEntryOf`]).
pub fn index_entry_of(case: &CaseRecord, cpus: usize) -> Option<IndexEntry> {
    let workload = find(&case.workload)?;
    let set = match &case.values {
        Some(values) => values.clone(),
        None => stored_set(workload.id(), &workload.params(), &case.params, cpus).ok()?,
    };
    workload.index_entry(&set)
}

/// The workloads whose id is `prefix` or starts with `prefix.` (so `cpu`
/// selects the whole family), less those that run only when named
/// ([`NAMED_ONLY`]) unless `prefix` names one.
pub fn family(prefix: &str) -> Vec<&'static dyn Workload> {
    all()
        .into_iter()
        .filter(|w| {
            w.id() == prefix
                || (w.id().starts_with(&format!("{prefix}.")) && !NAMED_ONLY.contains(&w.id()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_dotted() {
        let ids: Vec<&str> = all().iter().map(|w| w.id()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        // `family.member`, or one word for a family of one (`fileio`).
        assert!(ids.iter().all(|id| id.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })));
    }

    #[test]
    fn every_default_parameter_is_valid() {
        for w in all() {
            let cases =
                crate::engine::params::resolve_cases(w.id(), &w.params(), &Default::default(), 2)
                    .unwrap_or_else(|e| panic!("{}: {e}", w.id()));
            assert_eq!(cases.len(), 1, "{}", w.id());
        }
    }

    #[test]
    fn every_workload_builds_its_typed_parameters_from_its_defaults() {
        // Building reads the parameters into the workload's typed struct
        // first: a field whose name or type does not match its parameter
        // panics there. Whether the case can run on this host (a kernel
        // source, room on the disk) is not the question: an error is fine,
        // a panic is not.
        let env = crate::engine::CaseEnv {
            cpus: vec![0, 1],
            total_cache_bytes: 32 << 20,
            memory_bytes: 1 << 30,
        };
        let mut workloads = all();
        workloads.push(&scripted::Scripted);
        for w in workloads {
            let cases =
                crate::engine::params::resolve_cases(w.id(), &w.params(), &Default::default(), 2)
                    .unwrap();
            let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = w.build(&cases[0], &env);
                let _ = w.trial_seconds(&cases[0], &env);
            }));
            assert!(built.is_ok(), "{} panicked reading its parameters", w.id());
        }
    }

    #[test]
    fn families_select_by_prefix() {
        assert_eq!(family("cpu").len(), 3);
        assert!(family("cp").is_empty());
        assert_eq!(family("cpu.primes").len(), 1);
    }

    #[test]
    fn a_workload_that_needs_its_target_runs_only_when_named() {
        let ids = |prefix| family(prefix).iter().map(|w| w.id()).collect::<Vec<_>>();
        assert_eq!(ids("http"), ["http.static", "http.dynamic"]);
        assert_eq!(ids("http.url"), ["http.url"]);
        assert!(find("http.url").is_some());
    }

    /// Every workload's cases, defaults and sweeps of its counts, for the
    /// role tests below.
    fn cases_of(w: &dyn Workload) -> Vec<crate::engine::ParamSet> {
        let specs = w.params();
        let sweep = specs
            .iter()
            .filter(|s| matches!(s.kind, crate::engine::ParamKind::Threads { .. }))
            .map(|s| (s.name.to_string(), vec!["1".to_string(), "all".to_string()]))
            .collect();
        crate::engine::params::resolve_cases(w.id(), &specs, &sweep, 3)
            .unwrap_or_else(|e| panic!("{}: {e}", w.id()))
    }

    #[test]
    fn the_engine_reads_by_role_what_it_read_by_name() {
        // The names the engine looked its trial time, CPU counts and
        // scratch directory up by before parameters had roles: each
        // workload's roles must answer exactly what those names did.
        use crate::engine::ParamRole;
        let mut workloads = all();
        workloads.push(&scripted::Scripted);
        for w in workloads {
            let specs = w.params();
            for set in cases_of(w) {
                let raw = set.to_raw_strings();
                let by_name = |names: &[&str]| -> Vec<String> {
                    names.iter().filter_map(|n| raw.get(*n).cloned()).collect()
                };
                let counts: Vec<usize> = by_name(&["threads", "copies", "jobs", "clients"])
                    .iter()
                    .filter_map(|t| t.parse().ok())
                    .collect();
                let mut by_role = set.counts_of(&specs, ParamRole::CpuCount);
                by_role.sort_unstable();
                let mut counts = counts;
                counts.sort_unstable();
                assert_eq!(by_role, counts, "{} counts", w.id());
                assert_eq!(
                    set.texts_of(&specs, ParamRole::ScratchDir),
                    by_name(&["dir"]),
                    "{} dir",
                    w.id()
                );
                let time = match raw.get("time").map(|_| set.value("time")) {
                    Some(crate::engine::ParamValue::Seconds(v)) => Some(*v),
                    _ => None,
                };
                assert_eq!(
                    set.seconds_of(&specs, ParamRole::TrialTime),
                    time,
                    "{} time",
                    w.id()
                );
            }
        }
    }

    #[test]
    fn copies_and_clients_are_the_cpus_a_case_uses() {
        let cpus = |id: &str, given: &[&str]| {
            let w = find(id).unwrap_or_else(|| panic!("{id} is registered"));
            let given = given
                .iter()
                .map(|p| crate::engine::params::split_assignment(p).unwrap())
                .collect();
            let set = crate::engine::params::resolve_cases(id, &w.params(), &given, 6)
                .unwrap()
                .remove(0);
            w.cpus_used(&set)
        };
        // memory.stream has threads too (`all` by default): the larger.
        assert_eq!(cpus("memory.stream", &["copies=3", "threads=2"]), Some(3));
        assert_eq!(cpus("memory.stream", &["copies=2", "threads=1"]), Some(2));
        assert_eq!(cpus("memory.stream", &["copies=all", "threads=1"]), Some(6));
        assert_eq!(cpus("db.tpcb", &["clients=5"]), Some(5));
        assert_eq!(cpus("fileserver", &["clients=4"]), Some(4));
    }

    #[test]
    fn a_trial_time_and_a_scratch_directory_are_read_by_role() {
        let env = crate::engine::CaseEnv {
            cpus: vec![0, 1],
            total_cache_bytes: 32 << 20,
            memory_bytes: 1 << 30,
        };
        let w = find("cpu.primes").expect("cpu.primes is registered");
        let given = [("time".to_string(), vec!["2.5".to_string()])].into();
        let set = crate::engine::params::resolve_cases(w.id(), &w.params(), &given, 2)
            .unwrap()
            .remove(0);
        assert_eq!(w.trial_seconds(&set, &env), Some(2.5));
        let w = find("fileio").expect("fileio is registered");
        let given = [("dir".to_string(), vec!["/mnt/a,b".to_string()])].into();
        let set = crate::engine::params::resolve_cases(w.id(), &w.params(), &given, 2)
            .unwrap()
            .remove(0);
        assert_eq!(
            w.scratch_parents(&set),
            [std::path::PathBuf::from("/mnt/a,b")]
        );
    }
}

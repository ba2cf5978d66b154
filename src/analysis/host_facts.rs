//! The facts about a run's host and software (CPU, kernel, mitigations,
//! governor, cgroup limits, sledge and workload versions, price...) and
//! which of them differ between two runs: what `compare` lists beside its
//! verdicts, `sledge history` names at a change point, and the fleet's
//! outlier view shows as setting a host apart.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::probe::{HostInfo, human_bytes};
use crate::results::RunRecord;
use crate::visible::EscapeText;

/// One fact about the hosts that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostDifference {
    /// What (`kernel`, `CPU`, `workload cpu.primes`...).
    pub what: String,
    /// The baseline's value.
    pub baseline: String,
    /// The candidate's value.
    pub candidate: String,
}

impl EscapeText for HostDifference {
    fn escape_text(&mut self) {
        let HostDifference {
            what,
            baseline,
            candidate,
        } = self;
        what.escape_text();
        baseline.escape_text();
        candidate.escape_text();
    }
}

/// The facts about a run's host and software that `compare` shows when
/// they differ between two runs (and the fleet's outlier view when they
/// set a host apart), as `(what, value)`; a value is empty when unknown.
pub(crate) fn host_facts(r: &RunRecord) -> Vec<(String, String)> {
    let h = &r.host;
    let gib = |bytes: u64| format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64);
    let mut facts = vec![
        ("host".to_string(), h.hostname.clone()),
        ("CPU".to_string(), h.cpu.model.clone()),
        ("CPUs used".to_string(), r.cpus.len().to_string()),
        ("memory".to_string(), gib(h.memory.total_bytes)),
        ("kernel".to_string(), h.os.kernel.clone()),
        (
            "microcode".to_string(),
            h.cpu.microcode.clone().unwrap_or_default(),
        ),
        (
            "virtualization".to_string(),
            h.virtualization
                .hypervisor
                .clone()
                .or_else(|| h.virtualization.container.clone())
                .unwrap_or_else(|| "none".to_string()),
        ),
        (CPU_QUOTA.to_string(), cgroup_fact(h, CPU_QUOTA)),
        ("cpuset".to_string(), cgroup_fact(h, "cpuset")),
        (MEMORY_LIMIT.to_string(), cgroup_fact(h, MEMORY_LIMIT)),
        (
            "transparent huge pages".to_string(),
            h.transparent_hugepages.clone().unwrap_or_default(),
        ),
        (
            "governor".to_string(),
            h.cpu.governor.clone().unwrap_or_default(),
        ),
        ("turbo".to_string(), on_off(h.cpu.turbo)),
        ("SMT".to_string(), h.cpu.smt.clone().unwrap_or_default()),
        (
            "price".to_string(),
            super::price_ratio::run_price(r).map_or_else(String::new, |p| p.to_string()),
        ),
        (
            "battery".to_string(),
            // The name and enough of the hash to tell two files apart.
            crate::results::battery(&r.notes)
                .map(|b| {
                    b.chars()
                        .take(b.find("sha256:").map_or(b.len(), |at| at + 7 + 12))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        (
            "filesystem".to_string(),
            h.filesystem
                .as_ref()
                .map(|f| format!("{} on {}", f.fs_type, f.source))
                .unwrap_or_default(),
        ),
        ("sledge".to_string(), r.sledge_version.clone()),
    ];
    for (name, text) in &h.mitigations {
        facts.push((format!("mitigation {name}"), text.clone()));
    }
    // A database server's settings are facts of the host it serves from:
    // named by the setting alone when the run loads one server (the two
    // runs may reach it by different URLs), else with the server.
    let one_server = h.databases.len() == 1;
    for (server, settings) in &h.databases {
        for (name, value) in settings {
            let what = if one_server {
                format!("database {name}")
            } else {
                format!("database {server} {name}")
            };
            facts.push((what, value.clone()));
        }
    }
    facts
}

/// The fact that names the CPU quota of sledge's cgroups.
const CPU_QUOTA: &str = "CPU quota";
/// The fact that names the memory limit of sledge's cgroups.
const MEMORY_LIMIT: &str = "memory limit";

/// A limit of the run's own cgroups as a fact (`what` is [`CPU_QUOTA`],
/// `cpuset` or [`MEMORY_LIMIT`]): `0.85 CPUs`, `0-1`, `4 GiB`, `none` when
/// no cgroup sets it (`all CPUs` for the cpuset), empty when the run did
/// not record its cgroups.
fn cgroup_fact(h: &HostInfo, what: &str) -> String {
    let Some(limits) = &h.cgroup else {
        return String::new();
    };
    match what {
        CPU_QUOTA => limits
            .cpu_quota
            .as_ref()
            .map_or_else(|| "none".to_string(), |q| q.cpus_text()),
        MEMORY_LIMIT => limits
            .memory_limit
            .as_ref()
            .map_or_else(|| "none".to_string(), |m| human_bytes(m.bytes)),
        _ => limits
            .cpuset
            .clone()
            .unwrap_or_else(|| "all CPUs".to_string()),
    }
}

/// Where a fact's value was set, shown beside it but never compared: the
/// cgroup that sets a limit. The same quota set on another cgroup is the
/// same quota (a container's or a login session's cgroup is named anew
/// each time), so a path alone must not make a difference.
fn fact_origin(r: &RunRecord, what: &str) -> Option<String> {
    let limits = r.host.cgroup.as_ref()?;
    match what {
        CPU_QUOTA => limits.cpu_quota.as_ref().map(|q| q.cgroup.clone()),
        MEMORY_LIMIT => limits.memory_limit.as_ref().map(|m| m.cgroup.clone()),
        _ => None,
    }
}

/// The facts about two runs' hosts and software that differ (also what
/// `sledge history` names at a change point).
pub(crate) fn host_differences(a: &RunRecord, b: &RunRecord) -> Vec<HostDifference> {
    let (fa, fb) = (host_facts(a), host_facts(b));
    let lookup = |facts: &[(String, String)], what: &str| {
        facts
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut whats: Vec<String> = fa.iter().map(|(w, _)| w.clone()).collect();
    for (w, _) in &fb {
        if !whats.contains(w) {
            whats.push(w.clone());
        }
    }
    // A fact one side lacks reads as such, never as nothing after the
    // arrow (`price: 5 EUR → not set`).
    let shown = |what: &str, value: String| {
        if !value.is_empty() {
            value
        } else if what == "price" || what == "battery" {
            "not set".to_string()
        } else {
            "unknown".to_string()
        }
    };
    let with_origin = |r: &RunRecord, what: &str, value: String| match fact_origin(r, what) {
        Some(cgroup) => format!("{value} (cgroup {cgroup})"),
        None => value,
    };
    let mut differences: Vec<HostDifference> = whats
        .into_iter()
        .filter_map(|what| {
            let (x, y) = (lookup(&fa, &what), lookup(&fb, &what));
            (x != y).then(|| HostDifference {
                baseline: with_origin(a, &what, shown(&what, x)),
                candidate: with_origin(b, &what, shown(&what, y)),
                what,
            })
        })
        .collect();
    // Workload versions: cases of one workload at different versions are
    // not comparable at all, so the reader should see it up front.
    let versions = |r: &RunRecord| {
        r.cases
            .iter()
            .map(|c| (c.workload.clone(), c.workload_version))
            .collect::<BTreeMap<_, _>>()
    };
    let (va, vb) = (versions(a), versions(b));
    for (workload, version) in &va {
        if let Some(other) = vb.get(workload).filter(|v| *v != version) {
            differences.push(HostDifference {
                what: format!("workload {workload}"),
                baseline: format!("version {version}"),
                candidate: format!("version {other}"),
            });
        }
    }
    differences
}

/// `on`, `off`, or empty when unknown.
fn on_off(state: Option<bool>) -> String {
    match state {
        Some(true) => "on".to_string(),
        Some(false) => "off".to_string(),
        None => String::new(),
    }
}

//! The CPU settings that change how fast a core runs besides the governor
//! (which `cpu.rs` reads): turbo / boost and simultaneous multithreading.
//!
//! * Turbo: `intel_pstate/no_turbo` (1 = off) under intel_pstate; else
//!   the global `cpufreq/boost` (1 = on) of acpi-cpufreq and amd-pstate;
//!   else the first policy's own `boost` (amd-pstate since Linux 6.11).
//! * SMT: `smt/control` (`on`, `off`, `forceoff`, `notsupported`,
//!   `notimplemented`) and `smt/active` (whether sibling threads run now).
//!
//! Every reader takes a root directory so that tests run on fixture trees.

use std::path::Path;

use super::sysfs::{read_trimmed, read_u64};

/// Turbo and SMT as the kernel reports them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuPolicy {
    /// Whether turbo / boost is enabled; `None` when no driver says.
    pub turbo: Option<bool>,
    /// `smt/control`.
    pub smt: Option<String>,
    /// `smt/active`.
    pub smt_active: Option<bool>,
}

/// Reads turbo and SMT under `root`.
pub(crate) fn probe(root: &Path) -> CpuPolicy {
    let cpu = root.join("sys/devices/system/cpu");
    let turbo = read_u64(cpu.join("intel_pstate/no_turbo"))
        .map(|no_turbo| no_turbo == 0)
        .or_else(|| read_u64(cpu.join("cpufreq/boost")).map(|boost| boost != 0))
        .or_else(|| read_u64(cpu.join("cpufreq/policy0/boost")).map(|boost| boost != 0));
    CpuPolicy {
        turbo,
        smt: read_trimmed(cpu.join("smt/control")),
        smt_active: read_u64(cpu.join("smt/active")).map(|a| a != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sensors")
            .join(name)
    }

    #[test]
    fn turbo_and_smt_from_each_driver() {
        let intel = probe(&fixture("intel-xeon-2s"));
        assert_eq!(
            intel,
            CpuPolicy {
                turbo: Some(true),
                smt: Some("on".into()),
                smt_active: Some(true),
            }
        );
        let amd = probe(&fixture("amd-epyc"));
        assert_eq!(amd.turbo, Some(true));
        let desktop = probe(&fixture("cpufreq-throttle"));
        assert_eq!(
            (desktop.turbo, desktop.smt.as_deref(), desktop.smt_active),
            (Some(false), Some("off"), Some(false))
        );
        let vm = probe(&fixture("none"));
        assert_eq!(
            (vm.turbo, vm.smt.as_deref(), vm.smt_active),
            (None, Some("notsupported"), Some(false))
        );
        assert_eq!(probe(&fixture("absent")), CpuPolicy::default());
    }

    #[test]
    fn a_per_policy_boost_counts_when_there_is_no_global_one() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("sys/devices/system/cpu/cpufreq/policy0");
        std::fs::create_dir_all(&policy).unwrap();
        std::fs::write(policy.join("boost"), "0\n").unwrap();
        assert_eq!(probe(dir.path()).turbo, Some(false));
    }
}

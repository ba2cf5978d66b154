//! Host inventory: what machine a run happened on.
//!
//! sledge stores a [`HostInfo`] with every run and prints it with
//! `sledge probe`, so that results can be compared knowing the CPU, memory,
//! kernel, virtualization, mitigations and filesystem behind them.
//!
//! Two rules shape this module:
//!
//! * **It never fails as a whole.** A benchmark must not refuse to run
//!   because, say, a container hides `/sys/class/dmi`. Every field that
//!   cannot be read is left `None`, empty or 0, and [`probe`] returns no
//!   `Result`.
//! * **It reads `/proc` and `/sys` directly** (and calls libc for `uname`,
//!   `statvfs` and `sysconf`) instead of running `lscpu`, `lsblk`, `df` or
//!   `systemd-detect-virt`. Those tools are often missing from minimal
//!   images, their output changes between versions and locales, and spawning
//!   them around a measurement perturbs it. Reading the kernel's files is
//!   cheap, and every parser takes the file's text as `&str` so it is tested
//!   against fixed samples of real files.
//!
//! One idea per file: [`cpu`](CpuInfo) (model, topology, caches, flags,
//! clocks, governor), `cpu_policy` (turbo / boost and SMT), [`memory`](MemoryInfo) (size, swap, NUMA, huge pages),
//! [`os`](OsInfo), [`virtualization`](Virtualization), mitigations,
//! [`filesystem`](FilesystemInfo), the limits of the process's own
//! [`cgroup`](CgroupLimits) (CPU quota, cpuset, memory), display
//! formatting, [`human_bytes`] and escaping the inventory's text for
//! showing (`escape_text`).

mod cgroup;
mod cpu;
mod cpu_policy;
mod display;
mod escape_text;
mod filesystem;
mod memory;
mod mitigations;
mod os;
mod sysfs;
mod units;
mod virtualization;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use cgroup::{CgroupLimits, CpuQuota, MemoryLimit};
pub use cpu::{CacheInfo, CpuInfo};
pub use filesystem::{FilesystemInfo, filesystem_of};
pub use memory::MemoryInfo;
pub use os::{OsInfo, hostname};
pub use units::human_bytes;
pub use virtualization::Virtualization;

/// Everything sledge records about the host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostInfo {
    /// Host name (`uname -n`); empty when unknown.
    pub hostname: String,
    /// The processor.
    pub cpu: CpuInfo,
    /// Memory and swap.
    pub memory: MemoryInfo,
    /// Kernel and distribution.
    pub os: OsInfo,
    /// Hypervisor and container, when detected.
    pub virtualization: Virtualization,
    /// CPU vulnerability status: file name in
    /// `/sys/devices/system/cpu/vulnerabilities` (e.g. `"spectre_v2"`) →
    /// the kernel's text (e.g. `"Mitigation: Enhanced / Automatic IBRS; ..."`).
    /// Empty when the kernel does not report them.
    pub mitigations: BTreeMap<String, String>,
    /// Transparent huge page mode, the `[selected]` value of
    /// `/sys/kernel/mm/transparent_hugepage/enabled`: `"always"`,
    /// `"madvise"` or `"never"`.
    pub transparent_hugepages: Option<String>,
    /// Number of NUMA nodes (`/sys/devices/system/node/node*`); 1 when the
    /// kernel shows none.
    pub numa_nodes: u32,
    /// The filesystem of the working directory given to [`probe`].
    pub filesystem: Option<FilesystemInfo>,
    /// The limits sledge's own cgroups set (CPU quota, cpuset, memory);
    /// `None` when `/proc/self/cgroup` could not be read, and in runs
    /// stored before sledge recorded them.
    pub cgroup: Option<CgroupLimits>,
    /// The database servers the run's cases load by URL, as shown (no
    /// password), each with its version and key settings (PostgreSQL's
    /// `synchronous_commit`, MariaDB's `innodb_flush_log_at_trx_commit`...),
    /// read when the run starts. Empty for runs without one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub databases: BTreeMap<String, BTreeMap<String, String>>,
}

/// Probes the host. Never fails: whatever cannot be read is left empty.
/// `working_dir` is where the benchmarks will write; its filesystem is
/// described in [`HostInfo::filesystem`].
pub fn probe(working_dir: &Path) -> HostInfo {
    let cpuinfo = sysfs::read_text("/proc/cpuinfo")
        .map(|text| cpu::parse_cpuinfo(&text))
        .unwrap_or_default();
    HostInfo {
        hostname: os::hostname(),
        cpu: cpu::probe(&cpuinfo),
        memory: memory::probe(),
        os: os::probe(),
        virtualization: virtualization::probe(cpuinfo.hypervisor_flag),
        mitigations: mitigations::probe(),
        transparent_hugepages: memory::transparent_hugepages(),
        numa_nodes: memory::numa_nodes(),
        filesystem: filesystem_of(working_dir),
        cgroup: cgroup::probe(Path::new("/")),
        databases: BTreeMap::new(),
    }
}

impl HostInfo {
    /// Sum over all cache levels of size_bytes × instances (data + unified;
    /// skip instruction caches). Used to size STREAM's arrays.
    pub fn total_cache_bytes(&self) -> u64 {
        self.cpu
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| c.size_bytes.saturating_mul(u64::from(c.instances)))
            .fold(0, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, kind: &str, size_bytes: u64, instances: u32) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.into(),
            size_bytes,
            instances,
        }
    }

    #[test]
    fn total_cache_skips_instruction_caches() {
        let mut host = HostInfo::default();
        host.cpu.caches = vec![
            cache(1, "Data", 48 << 10, 2),
            cache(1, "Instruction", 32 << 10, 2),
            cache(2, "Unified", 1 << 20, 2),
            cache(3, "Unified", 32 << 20, 1),
        ];
        assert_eq!(host.total_cache_bytes(), 96 * 1024 + (2 << 20) + (32 << 20));
        assert_eq!(HostInfo::default().total_cache_bytes(), 0);
    }

    #[test]
    fn old_json_still_loads() {
        let host: HostInfo = serde_json::from_str("{}").unwrap();
        assert_eq!(host, HostInfo::default());
        let partial = r#"{"hostname":"db1","cpu":{"model":"Xeon","threads":8},"filesystem":{"fs_type":"xfs"}}"#;
        let host: HostInfo = serde_json::from_str(partial).unwrap();
        assert_eq!(host.cpu.threads, 8);
        assert_eq!(host.cpu.caches, []);
        assert_eq!(host.filesystem.unwrap().fs_type, "xfs");
        // Runs stored before the cgroup limits were recorded: unknown,
        // not "no limit".
        assert_eq!(host.cgroup, None);
    }

    #[test]
    fn probe_this_machine() {
        let host = probe(Path::new("."));
        assert!(host.cpu.threads >= 1, "{host:#?}");
        assert!(host.memory.total_bytes > 0, "{host:#?}");
        assert!(!host.os.kernel.is_empty(), "{host:#?}");
        assert!(host.numa_nodes >= 1);
        let fs = host.filesystem.as_ref().expect("filesystem of .");
        assert!(fs.mount_point.starts_with('/'));
        assert!(fs.total_bytes >= fs.free_bytes);

        let json = serde_json::to_string(&host).unwrap();
        let back: HostInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, host);

        for (key, value) in host.display_lines() {
            crate::say!("{key:>15}: {value}");
        }
    }

    #[test]
    fn missing_working_dir_only_blanks_the_filesystem() {
        let host = probe(Path::new("/nonexistent/sledge/probe"));
        assert_eq!(host.filesystem, None);
        assert!(host.cpu.threads >= 1);
    }
}

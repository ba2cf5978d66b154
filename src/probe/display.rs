//! Turning a [`HostInfo`] into key/value lines for `sledge probe` and the
//! report header.
//!
//! Every line is always present, with `unknown`/`unavailable` standing for
//! what could not be read, so that outputs of two hosts line up.

use super::mitigations;
use super::units::human_bytes;
use super::{CacheInfo, CgroupLimits, CpuInfo, FilesystemInfo, HostInfo};

/// `"1 socket"`, `"2 cores"`.
fn count(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `"AMD EPYC, 1 socket, 2 cores, 2 threads"`.
fn cpu_line(cpu: &CpuInfo) -> String {
    let name = if !cpu.model.is_empty() {
        cpu.model.as_str()
    } else if !cpu.vendor.is_empty() {
        cpu.vendor.as_str()
    } else {
        "unknown CPU"
    };
    format!(
        "{name}, {}, {}, {}",
        count(cpu.sockets, "socket"),
        count(cpu.cores, "core"),
        count(cpu.threads, "thread")
    )
}

/// `"L1d 48 KiB ×2"`.
fn cache_entry(cache: &CacheInfo) -> String {
    let suffix = match cache.kind.as_str() {
        "Data" => "d",
        "Instruction" => "i",
        _ => "",
    };
    format!(
        "L{}{suffix} {} ×{}",
        cache.level,
        human_bytes(cache.size_bytes),
        cache.instances
    )
}

/// `"2600 MHz (max 3700), governor performance (acpi-cpufreq), turbo on"`.
fn clock_line(cpu: &CpuInfo) -> String {
    let mut parts = Vec::new();
    match (cpu.mhz, cpu.max_mhz) {
        (Some(now), Some(max)) => parts.push(format!("{now:.0} MHz (max {max:.0})")),
        (Some(now), None) => parts.push(format!("{now:.0} MHz")),
        (None, Some(max)) => parts.push(format!("max {max:.0} MHz")),
        (None, None) => {}
    }
    match (&cpu.governor, &cpu.scaling_driver) {
        (Some(governor), Some(driver)) => parts.push(format!("governor {governor} ({driver})")),
        (Some(governor), None) => parts.push(format!("governor {governor}")),
        (None, Some(driver)) => parts.push(format!("driver {driver}")),
        (None, None) => {}
    }
    match cpu.turbo {
        Some(true) => parts.push("turbo on".to_string()),
        Some(false) => parts.push("turbo off".to_string()),
        None => {}
    }
    if parts.is_empty() {
        "unknown".to_string()
    } else {
        parts.join(", ")
    }
}

/// `"on (active)"`, `"off"`, `"not supported"`: what `smt/control` and
/// `smt/active` say.
fn smt_line(cpu: &CpuInfo) -> String {
    let Some(control) = &cpu.smt else {
        return "unknown".to_string();
    };
    let control = match control.as_str() {
        "notsupported" => "not supported",
        "notimplemented" => "not implemented",
        other => other,
    };
    match (control, cpu.smt_active) {
        ("on", Some(true)) => "on (active)".to_string(),
        ("on", Some(false)) => "on (inactive)".to_string(),
        _ => control.to_string(),
    }
}

/// `"ext4 on /dev/vda (vda, ssd, scheduler none) at /, 80.1 GiB free of 98.3 GiB"`.
fn filesystem_line(fs: &FilesystemInfo) -> String {
    let mut line = if fs.fs_type.is_empty() {
        "unknown filesystem".to_string()
    } else {
        fs.fs_type.clone()
    };
    if !fs.source.is_empty() {
        line.push_str(&format!(" on {}", fs.source));
    }
    let mut device = Vec::new();
    if let Some(disk) = &fs.block_device {
        device.push(disk.clone());
    }
    if let Some(rotational) = fs.rotational {
        device.push(if rotational { "hdd" } else { "ssd" }.to_string());
    }
    if let Some(scheduler) = &fs.scheduler {
        device.push(format!("scheduler {scheduler}"));
    }
    if !device.is_empty() {
        line.push_str(&format!(" ({})", device.join(", ")));
    }
    if !fs.mount_point.is_empty() {
        line.push_str(&format!(" at {}", fs.mount_point));
    }
    if fs.total_bytes > 0 {
        line.push_str(&format!(
            ", {} free of {}",
            human_bytes(fs.free_bytes),
            human_bytes(fs.total_bytes)
        ));
    }
    line
}

/// `"CPU quota 0.85 CPUs (85000/100000 µs, cgroup /x), cpuset 0-1,
/// memory 4 GiB (cgroup /y)"`; `"none"` when no cgroup of the process
/// limits it, `"unknown"` when they could not be read.
fn cgroup_line(limits: Option<&CgroupLimits>) -> String {
    let Some(limits) = limits else {
        return "unknown".to_string();
    };
    let mut parts = Vec::new();
    if let Some(quota) = &limits.cpu_quota {
        parts.push(format!(
            "CPU quota {} ({}/{} µs, cgroup {})",
            quota.cpus_text(),
            quota.quota_us,
            quota.period_us,
            quota.cgroup
        ));
    }
    if let Some(cpus) = &limits.cpuset {
        parts.push(format!("cpuset {cpus}"));
    }
    if let Some(memory) = &limits.memory_limit {
        parts.push(format!(
            "memory {} (cgroup {})",
            human_bytes(memory.bytes),
            memory.cgroup
        ));
    }
    or(parts.join(", "), "none")
}

/// `value`, or `fallback` when empty.
fn or(value: String, fallback: &str) -> String {
    if value.is_empty() {
        fallback.to_string()
    } else {
        value
    }
}

impl HostInfo {
    /// Key/value lines for display, in a fixed order (host, CPU, caches,
    /// flags, clock with governor and turbo, SMT, microcode, memory, swap, kernel, distribution,
    /// virtualization, cgroup limits, mitigations, THP, NUMA nodes, filesystem), with sizes
    /// in binary units, e.g. `("CPU", "AMD EPYC, 1 socket, 2 cores, 2 threads")`
    /// or `("Caches", "L1d 48 KiB ×2, L1i 32 KiB ×2, L2 1 MiB ×2, L3 32 MiB ×1")`.
    pub fn display_lines(&self) -> Vec<(String, String)> {
        let cpu = &self.cpu;
        let memory = &self.memory;
        let os = &self.os;
        let virt = &self.virtualization;

        let caches: Vec<String> = cpu.caches.iter().map(cache_entry).collect();
        let memory_line = if memory.total_bytes == 0 {
            "unknown".to_string()
        } else {
            format!(
                "{}, {} available",
                human_bytes(memory.total_bytes),
                human_bytes(memory.available_bytes)
            )
        };
        let swap_line = if memory.swap_total_bytes == 0 {
            "none".to_string()
        } else {
            format!(
                "{}, {} free",
                human_bytes(memory.swap_total_bytes),
                human_bytes(memory.swap_free_bytes)
            )
        };
        let mut kernel = os.kernel.clone();
        if !os.arch.is_empty() {
            if !kernel.is_empty() {
                kernel.push(' ');
            }
            kernel.push_str(&os.arch);
        }
        if !os.kernel_version.is_empty() {
            kernel = format!("{} ({})", or(kernel, "unknown"), os.kernel_version);
        }
        let mut virtualization = Vec::new();
        if let Some(hypervisor) = &virt.hypervisor {
            virtualization.push(hypervisor.clone());
        }
        if let Some(container) = &virt.container {
            virtualization.push(format!("container: {container}"));
        }

        let lines = [
            ("Host", or(self.hostname.clone(), "unknown")),
            ("CPU", cpu_line(cpu)),
            ("Caches", or(caches.join(", "), "unavailable")),
            ("Flags", or(cpu.flags.join(" "), "none notable")),
            ("Clock", clock_line(cpu)),
            ("SMT", smt_line(cpu)),
            (
                "Microcode",
                cpu.microcode.clone().unwrap_or_else(|| "unknown".into()),
            ),
            ("Memory", memory_line),
            ("Swap", swap_line),
            ("Kernel", or(kernel, "unknown")),
            (
                "Distribution",
                os.distribution.clone().unwrap_or_else(|| "unknown".into()),
            ),
            (
                "Virtualization",
                or(virtualization.join(", "), "none detected"),
            ),
            ("Cgroup limits", cgroup_line(self.cgroup.as_ref())),
            (
                "Mitigations",
                mitigations::summarize(&self.mitigations).unwrap_or_else(|| "unavailable".into()),
            ),
            (
                "THP",
                self.transparent_hugepages
                    .clone()
                    .unwrap_or_else(|| "unavailable".into()),
            ),
            ("NUMA nodes", self.numa_nodes.to_string()),
            (
                "Filesystem",
                self.filesystem
                    .as_ref()
                    .map_or_else(|| "unavailable".into(), filesystem_line),
            ),
        ];
        lines
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MemoryInfo, OsInfo, Virtualization};
    use super::*;

    fn sample_host() -> HostInfo {
        let cache = |level, kind: &str, size_bytes, instances| CacheInfo {
            level,
            kind: kind.into(),
            size_bytes,
            instances,
        };
        HostInfo {
            hostname: "vm".into(),
            cpu: CpuInfo {
                model: "AMD EPYC".into(),
                vendor: "AuthenticAMD".into(),
                sockets: 1,
                cores: 2,
                threads: 2,
                caches: vec![
                    cache(1, "Data", 48 << 10, 2),
                    cache(1, "Instruction", 32 << 10, 2),
                    cache(2, "Unified", 1 << 20, 2),
                    cache(3, "Unified", 32 << 20, 1),
                ],
                flags: ["aes", "avx2", "avx512f", "sha_ni", "vaes"]
                    .map(String::from)
                    .to_vec(),
                mhz: Some(2600.0),
                max_mhz: Some(3700.0),
                governor: Some("performance".into()),
                scaling_driver: Some("acpi-cpufreq".into()),
                turbo: Some(true),
                smt: Some("on".into()),
                smt_active: Some(true),
                microcode: Some("0x1000065".into()),
            },
            memory: MemoryInfo {
                total_bytes: 24_684_096 * 1024,
                available_bytes: 22_000_000 * 1024,
                swap_total_bytes: 0,
                swap_free_bytes: 0,
            },
            os: OsInfo {
                kernel: "6.18.44".into(),
                kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
                arch: "x86_64".into(),
                distribution: Some("Debian GNU/Linux 12 (bookworm)".into()),
            },
            virtualization: Virtualization {
                hypervisor: Some("KVM".into()),
                container: None,
            },
            mitigations: [
                ("meltdown", "Not affected"),
                ("spectre_v1", "Vulnerable: no barriers"),
                ("spectre_v2", "Mitigation: Retpolines"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            transparent_hugepages: Some("madvise".into()),
            numa_nodes: 1,
            filesystem: Some(FilesystemInfo {
                path: "/work".into(),
                mount_point: "/".into(),
                fs_type: "ext4".into(),
                mount_options: "rw,relatime".into(),
                source: "/dev/vda".into(),
                block_device: Some("vda".into()),
                rotational: Some(false),
                scheduler: Some("none".into()),
                total_bytes: 100 << 30,
                free_bytes: (801 << 30) / 10,
            }),
            cgroup: Some(CgroupLimits::default()),
            databases: std::collections::BTreeMap::new(),
        }
    }

    #[test]
    fn lines_of_a_full_host() {
        let lines = sample_host().display_lines();
        let lines: Vec<(&str, &str)> = lines
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                ("Host", "vm"),
                ("CPU", "AMD EPYC, 1 socket, 2 cores, 2 threads"),
                (
                    "Caches",
                    "L1d 48 KiB ×2, L1i 32 KiB ×2, L2 1 MiB ×2, L3 32 MiB ×1"
                ),
                ("Flags", "aes avx2 avx512f sha_ni vaes"),
                (
                    "Clock",
                    "2600 MHz (max 3700), governor performance (acpi-cpufreq), turbo on"
                ),
                ("SMT", "on (active)"),
                ("Microcode", "0x1000065"),
                ("Memory", "23.5 GiB, 21.0 GiB available"),
                ("Swap", "none"),
                ("Kernel", "6.18.44 x86_64 (#1 SMP PREEMPT_DYNAMIC)"),
                ("Distribution", "Debian GNU/Linux 12 (bookworm)"),
                ("Virtualization", "KVM"),
                ("Cgroup limits", "none"),
                (
                    "Mitigations",
                    "1 mitigated, 1 not affected, 1 vulnerable (spectre_v1: Vulnerable: no barriers)"
                ),
                ("THP", "madvise"),
                ("NUMA nodes", "1"),
                (
                    "Filesystem",
                    "ext4 on /dev/vda (vda, ssd, scheduler none) at /, 80.1 GiB free of 100 GiB"
                ),
            ]
        );
    }

    #[test]
    fn lines_of_an_empty_host() {
        let lines = HostInfo::default().display_lines();
        let value = |key: &str| {
            lines
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(lines.len(), 17);
        assert_eq!(value("SMT"), "unknown");
        assert_eq!(value("CPU"), "unknown CPU, 0 sockets, 0 cores, 0 threads");
        assert_eq!(value("Caches"), "unavailable");
        assert_eq!(value("Clock"), "unknown");
        assert_eq!(value("Memory"), "unknown");
        assert_eq!(value("Kernel"), "unknown");
        assert_eq!(value("Virtualization"), "none detected");
        assert_eq!(value("Cgroup limits"), "unknown");
        assert_eq!(value("Mitigations"), "unavailable");
        assert_eq!(value("Filesystem"), "unavailable");
    }

    #[test]
    fn container_and_swap() {
        let mut host = sample_host();
        host.virtualization.container = Some("docker".into());
        host.memory.swap_total_bytes = 4 << 30;
        host.memory.swap_free_bytes = 3 << 30;
        host.cpu.governor = None;
        host.cpu.max_mhz = None;
        host.cpu.turbo = None;
        host.cpu.smt = Some("notsupported".into());
        let lines = host.display_lines();
        let value = |key: &str| lines.iter().find(|(k, _)| k == key).unwrap().1.clone();
        assert_eq!(value("Virtualization"), "KVM, container: docker");
        assert_eq!(value("Swap"), "4 GiB, 3 GiB free");
        assert_eq!(value("Clock"), "2600 MHz, driver acpi-cpufreq");
        assert_eq!(value("SMT"), "not supported");
    }

    #[test]
    fn cgroup_limits_name_where_they_are_set() {
        let mut host = sample_host();
        host.cgroup = Some(CgroupLimits {
            cpu_quota: Some(super::super::CpuQuota {
                cpus: 0.85,
                quota_us: 85_000,
                period_us: 100_000,
                cgroup: "/system.slice/bench.service".into(),
            }),
            cpuset: Some("0-1".into()),
            memory_limit: Some(super::super::MemoryLimit {
                bytes: 4 << 30,
                cgroup: "/system.slice".into(),
            }),
        });
        let lines = host.display_lines();
        let value = |key: &str| lines.iter().find(|(k, _)| k == key).unwrap().1.clone();
        assert_eq!(
            value("Cgroup limits"),
            "CPU quota 0.85 CPUs (85000/100000 µs, cgroup /system.slice/bench.service), \
             cpuset 0-1, memory 4 GiB (cgroup /system.slice)"
        );
    }
}

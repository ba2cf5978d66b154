//! The processor: identity, topology, caches, notable instruction-set flags
//! and clock settings.
//!
//! Identity, flags, microcode and the current clock come from `/proc/cpuinfo`;
//! topology, caches and cpufreq settings from `/sys/devices/system/cpu`. The
//! sysfs view is preferred for topology and caches because it is the same on
//! every architecture (aarch64's cpuinfo has no `physical id` or cache lines),
//! and cpuinfo fills in when sysfs is hidden, as in some containers.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::sysfs::{parse_cpu_list, read_text, read_trimmed, read_u64};

/// Root of the per-CPU sysfs tree.
const CPU_SYS: &str = "/sys/devices/system/cpu";

/// x86 flags (cpuinfo `flags`) worth reporting: they decide which code paths
/// crypto, hashing, compression and vectorised loops take.
const X86_NOTABLE_FLAGS: &[&str] = &[
    "aes",
    "avx",
    "avx2",
    "avx512f",
    "pclmulqdq",
    "sha_ni",
    "sse4_2",
    "vaes",
];

/// aarch64 features (cpuinfo `Features`) worth reporting, the ARM
/// equivalents of the x86 ones.
const ARM_NOTABLE_FLAGS: &[&str] = &["aes", "sha2"];

/// The processor of the host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuInfo {
    /// Marketing name, e.g. `"AMD EPYC 7763 64-Core Processor"` (cpuinfo
    /// `model name`; on aarch64 derived from the implementer and part codes).
    /// Empty when unknown.
    pub model: String,
    /// Vendor, e.g. `"GenuineIntel"`, `"AuthenticAMD"`, `"ARM"`. Empty when
    /// unknown.
    pub vendor: String,
    /// Number of physical packages (sockets), as seen by this kernel.
    pub sockets: u32,
    /// Physical cores in total, over all sockets.
    pub cores: u32,
    /// Logical CPUs online (hardware threads), over all sockets.
    pub threads: u32,
    /// CPU caches, one entry per (level, kind, size); sorted by level, then
    /// kind.
    pub caches: Vec<CacheInfo>,
    /// The notable instruction-set extensions present, sorted by name: of
    /// `aes`, `avx`, `avx2`, `avx512f`, `pclmulqdq`, `sha_ni`, `sse4_2`,
    /// `vaes` on x86, and of `aes`, `sha2` on aarch64.
    pub flags: Vec<String>,
    /// Current clock of the first online CPU, in MHz (cpuinfo `cpu MHz`, else
    /// cpufreq `scaling_cur_freq`).
    pub mhz: Option<f64>,
    /// Highest clock any online CPU may reach, in MHz (cpufreq
    /// `cpuinfo_max_freq`, boost included when the driver reports it).
    pub max_mhz: Option<f64>,
    /// cpufreq governor of the first online CPU, e.g. `"performance"`,
    /// `"schedutil"`.
    pub governor: Option<String>,
    /// cpufreq driver, e.g. `"intel_pstate"`, `"acpi-cpufreq"`, `"amd-pstate-epp"`.
    pub scaling_driver: Option<String>,
    /// Whether turbo / boost is enabled (`intel_pstate/no_turbo`,
    /// `cpufreq/boost`); `None` when no driver says.
    pub turbo: Option<bool>,
    /// Simultaneous multithreading as `smt/control` says: `"on"`, `"off"`,
    /// `"forceoff"`, `"notsupported"` or `"notimplemented"`.
    pub smt: Option<String>,
    /// Whether sibling hardware threads are running (`smt/active`).
    pub smt_active: Option<bool>,
    /// Microcode revision as the kernel prints it, e.g. `"0x1000065"`.
    pub microcode: Option<String>,
}

/// One kind of CPU cache, e.g. "the L2 caches".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheInfo {
    /// Cache level: 1, 2, 3 (or 4 for an L4 / eDRAM cache).
    pub level: u32,
    /// `"Data"`, `"Instruction"` or `"Unified"`, as sysfs names them.
    pub kind: String,
    /// Size of one cache instance, in bytes.
    pub size_bytes: u64,
    /// How many such caches the system has: the number of distinct CPU sets
    /// sharing one (e.g. 2 per-core L2 caches, 1 shared L3).
    pub instances: u32,
}

/// What `/proc/cpuinfo` says, reduced to what the inventory uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuinfoFacts {
    /// Model name; empty when absent.
    pub model: String,
    /// Vendor; empty when absent.
    pub vendor: String,
    /// The notable flags present on the first processor, sorted.
    pub flags: Vec<String>,
    /// Whether the `hypervisor` flag is set (we run under a hypervisor).
    pub hypervisor_flag: bool,
    /// `cpu MHz` of the first processor, in MHz.
    pub mhz: Option<f64>,
    /// `microcode` of the first processor.
    pub microcode: Option<String>,
    /// Number of `processor` entries (logical CPUs listed).
    pub processors: u32,
    /// Distinct `physical id` values; 0 when cpuinfo has none.
    pub sockets: u32,
    /// Distinct (`physical id`, `core id`) pairs; 0 when cpuinfo has none.
    pub cores: u32,
}

/// Parses `/proc/cpuinfo` (x86 or aarch64 layout).
pub(crate) fn parse_cpuinfo(text: &str) -> CpuinfoFacts {
    let mut facts = CpuinfoFacts::default();
    let mut flags_seen = false;
    let mut implementer: Option<String> = None;
    let mut part: Option<String> = None;
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut physical_id: Option<String> = None;
    let mut core_id: Option<String> = None;

    let mut flush = |physical_id: &mut Option<String>, core_id: &mut Option<String>| {
        if let Some(package) = physical_id.take() {
            if let Some(core) = core_id.take() {
                cores.insert((package.clone(), core));
            }
            packages.insert(package);
        }
        *core_id = None;
    };

    for line in text.lines() {
        if line.trim().is_empty() {
            flush(&mut physical_id, &mut core_id);
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" if value.parse::<u32>().is_ok() => facts.processors += 1,
            "model name" if facts.model.is_empty() => facts.model = value.to_string(),
            "vendor_id" if facts.vendor.is_empty() => facts.vendor = value.to_string(),
            "CPU implementer" if implementer.is_none() => implementer = Some(value.to_string()),
            "CPU part" if part.is_none() => part = Some(value.to_string()),
            "flags" if !flags_seen => {
                flags_seen = true;
                facts.hypervisor_flag = value.split_whitespace().any(|f| f == "hypervisor");
                facts.flags = notable(value, X86_NOTABLE_FLAGS);
            }
            "Features" if !flags_seen => {
                flags_seen = true;
                facts.flags = notable(value, ARM_NOTABLE_FLAGS);
            }
            "cpu MHz" if facts.mhz.is_none() => {
                facts.mhz = value.parse::<f64>().ok().filter(|mhz| *mhz > 0.0);
            }
            "microcode" if facts.microcode.is_none() => facts.microcode = Some(value.to_string()),
            "physical id" => physical_id = Some(value.to_string()),
            "core id" => core_id = Some(value.to_string()),
            _ => {}
        }
    }
    flush(&mut physical_id, &mut core_id);
    facts.sockets = packages.len() as u32;
    facts.cores = cores.len() as u32;

    if let Some(code) = implementer.as_deref().and_then(parse_hex) {
        if facts.vendor.is_empty() {
            facts.vendor = arm_vendor(code);
        }
        if facts.model.is_empty() {
            facts.model = arm_model(code, part.as_deref().and_then(parse_hex));
        }
    }
    facts
}

/// The words of a flags line that are in `wanted`, sorted and distinct.
fn notable(flags: &str, wanted: &[&str]) -> Vec<String> {
    let set: BTreeSet<&str> = flags
        .split_whitespace()
        .filter(|f| wanted.contains(f))
        .collect();
    set.into_iter().map(str::to_string).collect()
}

/// Parses `0x41`-style hexadecimal codes.
fn parse_hex(text: &str) -> Option<u32> {
    let digits = text
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X");
    u32::from_str_radix(digits, 16).ok()
}

/// Vendor name of an ARM `CPU implementer` code.
fn arm_vendor(code: u32) -> String {
    let name = match code {
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x61 => "Apple",
        0x6d => "Microsoft",
        0xc0 => "Ampere",
        _ => return format!("implementer {code:#x}"),
    };
    name.to_string()
}

/// Model name from ARM implementer and part codes; the common server cores
/// by name, others by code.
fn arm_model(implementer: u32, part: Option<u32>) -> String {
    let named = match (implementer, part) {
        (0x41, Some(0xd03)) => Some("Cortex-A53"),
        (0x41, Some(0xd07)) => Some("Cortex-A57"),
        (0x41, Some(0xd08)) => Some("Cortex-A72"),
        (0x41, Some(0xd0b)) => Some("Cortex-A76"),
        (0x41, Some(0xd0c)) => Some("Neoverse-N1"),
        (0x41, Some(0xd40)) => Some("Neoverse-V1"),
        (0x41, Some(0xd49)) => Some("Neoverse-N2"),
        (0x41, Some(0xd4f)) => Some("Neoverse-V2"),
        (0x41, Some(0xd84)) => Some("Neoverse-V3"),
        (0x41, Some(0xd8e)) => Some("Neoverse-N3"),
        (0xc0, Some(0xac3)) => Some("AmpereOne"),
        _ => None,
    };
    match (named, part) {
        (Some(name), _) => name.to_string(),
        (None, Some(part)) => format!("{} part {part:#x}", arm_vendor(implementer)),
        (None, None) => arm_vendor(implementer),
    }
}

/// One CPU's cache as sysfs describes it (`cpuN/cache/indexM/*`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawCache {
    /// Cache level.
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// The CPUs sharing this cache instance, sorted.
    pub shared_cpus: Vec<u32>,
}

/// Parses the files of one `cpuN/cache/indexM` directory. A missing or empty
/// `shared_cpu_list` counts the cache as private to `cpu`.
pub(crate) fn parse_cache_entry(
    cpu: u32,
    level: &str,
    kind: &str,
    size: &str,
    shared_cpu_list: Option<&str>,
) -> Option<RawCache> {
    let level = level.trim().parse().ok()?;
    let kind = kind.trim();
    if kind.is_empty() {
        return None;
    }
    let size_bytes = parse_size(size)?;
    let shared_cpus = shared_cpu_list
        .and_then(parse_cpu_list)
        .filter(|cpus| !cpus.is_empty())
        .unwrap_or_else(|| vec![cpu]);
    Some(RawCache {
        level,
        kind: kind.to_string(),
        size_bytes,
        shared_cpus,
    })
}

/// Parses a cache size as sysfs (`"48K"`) or cpuinfo (`"1024 KB"`) print it.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: u64 = text[..digits_end].parse().ok()?;
    let multiplier = match text[digits_end..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(multiplier)
}

/// Groups per-CPU cache entries into one [`CacheInfo`] per (level, kind,
/// size), counting an instance per distinct set of sharing CPUs: two CPUs
/// listing the same L3 with `shared_cpu_list` `0-1` make one L3.
pub(crate) fn summarize_caches(entries: &[RawCache]) -> Vec<CacheInfo> {
    let mut groups: BTreeMap<(u32, &str, u64), BTreeSet<&[u32]>> = BTreeMap::new();
    for entry in entries {
        groups
            .entry((entry.level, entry.kind.as_str(), entry.size_bytes))
            .or_default()
            .insert(&entry.shared_cpus);
    }
    groups
        .into_iter()
        .map(|((level, kind, size_bytes), sets)| CacheInfo {
            level,
            kind: kind.to_string(),
            size_bytes,
            instances: sets.len() as u32,
        })
        .collect()
}

/// One CPU's place in the topology: its package id and the CPUs of its core.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TopologyEntry {
    /// `topology/physical_package_id`.
    pub package: String,
    /// `topology/core_cpus_list` (or `thread_siblings_list`), parsed.
    pub core_cpus: Vec<u32>,
}

/// Counts (sockets, physical cores) from per-CPU topology entries: sockets
/// are distinct package ids, cores distinct sets of sibling threads.
pub(crate) fn count_topology(entries: &[TopologyEntry]) -> (u32, u32) {
    let packages: BTreeSet<&str> = entries.iter().map(|e| e.package.as_str()).collect();
    let cores: BTreeSet<&[u32]> = entries.iter().map(|e| e.core_cpus.as_slice()).collect();
    (packages.len() as u32, cores.len() as u32)
}

/// Converts a cpufreq value (kHz) to MHz.
fn khz_to_mhz(khz: u64) -> f64 {
    khz as f64 / 1000.0
}

/// Logical CPUs online according to libc.
fn sysconf_online() -> Option<u32> {
    // SAFETY: sysconf only reads a system setting; it has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// Reads the cache directories of one CPU.
fn read_caches(cpu: u32, out: &mut Vec<RawCache>) {
    let dir = format!("{CPU_SYS}/cpu{cpu}/cache");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let path = entry.path();
        let read = |name: &str| read_trimmed(path.join(name));
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let shared = read("shared_cpu_list");
        if let Some(cache) = parse_cache_entry(cpu, &level, &kind, &size, shared.as_deref()) {
            out.push(cache);
        }
    }
}

/// Reads one CPU's topology entry.
fn read_topology(cpu: u32) -> Option<TopologyEntry> {
    let dir = format!("{CPU_SYS}/cpu{cpu}/topology");
    let package = read_trimmed(format!("{dir}/physical_package_id"))?;
    let siblings = read_text(format!("{dir}/core_cpus_list"))
        .or_else(|| read_text(format!("{dir}/thread_siblings_list")))?;
    let core_cpus = parse_cpu_list(&siblings)?;
    Some(TopologyEntry { package, core_cpus })
}

/// Probes the processor, given what `/proc/cpuinfo` said.
pub(crate) fn probe(facts: &CpuinfoFacts) -> CpuInfo {
    let online = read_text(format!("{CPU_SYS}/online"))
        .and_then(|text| parse_cpu_list(&text))
        .filter(|cpus| !cpus.is_empty());
    let threads = online
        .as_ref()
        .map(|cpus| cpus.len() as u32)
        .or_else(sysconf_online)
        .or((facts.processors > 0).then_some(facts.processors))
        .unwrap_or(0);
    let cpus = online.unwrap_or_else(|| (0..threads).collect());

    let topology: Vec<TopologyEntry> = cpus.iter().filter_map(|&cpu| read_topology(cpu)).collect();
    let (sockets, cores) = if !topology.is_empty() && topology.len() == cpus.len() {
        count_topology(&topology)
    } else if facts.sockets > 0 && facts.cores > 0 {
        (facts.sockets, facts.cores)
    } else {
        (u32::from(threads > 0), threads)
    };

    let mut raw_caches = Vec::new();
    for &cpu in &cpus {
        read_caches(cpu, &mut raw_caches);
    }

    let first = cpus.first().copied().unwrap_or(0);
    let freq = |cpu: u32, name: &str| format!("{CPU_SYS}/cpu{cpu}/cpufreq/{name}");
    let mhz = facts
        .mhz
        .or_else(|| read_u64(freq(first, "scaling_cur_freq")).map(khz_to_mhz));
    let max_mhz = cpus
        .iter()
        .filter_map(|&cpu| read_u64(freq(cpu, "cpuinfo_max_freq")))
        .max()
        .map(khz_to_mhz);
    let microcode = facts
        .microcode
        .clone()
        .or_else(|| read_trimmed(format!("{CPU_SYS}/cpu{first}/microcode/version")));
    let policy = super::cpu_policy::probe(std::path::Path::new("/"));

    CpuInfo {
        model: facts.model.clone(),
        vendor: facts.vendor.clone(),
        sockets,
        cores,
        threads,
        caches: summarize_caches(&raw_caches),
        flags: facts.flags.clone(),
        mhz,
        max_mhz,
        governor: read_trimmed(freq(first, "scaling_governor")),
        scaling_driver: read_trimmed(freq(first, "scaling_driver")),
        turbo: policy.turbo,
        smt: policy.smt,
        smt_active: policy.smt_active,
        microcode,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two vCPUs of a KVM guest on AMD EPYC, verbatim.
    const CPUINFO_X86_KVM: &str = "\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0x1000065
cpu MHz\t\t: 2600.000
cache size\t: 1024 KB
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 2
apicid\t\t: 0
initial apicid\t: 0
fpu\t\t: yes
fpu_exception\t: yes
cpuid level\t: 16
wp\t\t: yes
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext perfctr_core ssbd perfmon_v2 ibrs ibpb stibp ibrs_enhanced vmmcall fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 clzero xsaveerptr wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid movdiri movdir64b fsrm avx512_vp2intersect flush_l1d
bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass srso spectre_v2_user
bogomips\t: 5200.00
TLB size\t: 192 4K pages
clflush size\t: 64
cache_alignment\t: 64
address sizes\t: 52 bits physical, 57 bits virtual
power management:

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0x1000065
cpu MHz\t\t: 2600.000
cache size\t: 1024 KB
physical id\t: 0
siblings\t: 2
core id\t\t: 1
cpu cores\t: 2
apicid\t\t: 1
initial apicid\t: 1
fpu\t\t: yes
fpu_exception\t: yes
cpuid level\t: 16
wp\t\t: yes
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext perfctr_core ssbd perfmon_v2 ibrs ibpb stibp ibrs_enhanced vmmcall fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 clzero xsaveerptr wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid movdiri movdir64b fsrm avx512_vp2intersect flush_l1d
bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2 spec_store_bypass srso spectre_v2_user
bogomips\t: 5200.00
TLB size\t: 192 4K pages
clflush size\t: 64
cache_alignment\t: 64
address sizes\t: 52 bits physical, 57 bits virtual
power management:

";

    /// Bare-metal Intel, 2 sockets × 1 core × 2 threads (abridged to the
    /// lines that matter; real files have the same shape).
    const CPUINFO_X86_TWO_SOCKETS: &str = "\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
microcode\t: 0xd0003a5
cpu MHz\t\t: 800.000
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu vme sse sse2 pclmulqdq vmx sse4_1 sse4_2 aes avx avx2 avx512f sha_ni vaes vpclmulqdq
vmx flags\t: vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
cpu MHz\t\t: 3200.000
physical id\t: 1
core id\t\t: 0
flags\t\t: fpu vme sse sse2 pclmulqdq vmx sse4_1 sse4_2 aes avx avx2 avx512f sha_ni vaes vpclmulqdq

processor\t: 2
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu vme sse sse2 pclmulqdq vmx sse4_1 sse4_2 aes avx avx2 avx512f sha_ni vaes vpclmulqdq

processor\t: 3
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
physical id\t: 1
core id\t\t: 0
flags\t\t: fpu vme sse sse2 pclmulqdq vmx sse4_1 sse4_2 aes avx avx2 avx512f sha_ni vaes vpclmulqdq
";

    /// AWS Graviton2 (Neoverse-N1), two vCPUs.
    const CPUINFO_AARCH64: &str = "\
processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1

processor\t: 1
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: 0xd0c
CPU revision\t: 1
";

    #[test]
    fn cpuinfo_x86_guest() {
        let facts = parse_cpuinfo(CPUINFO_X86_KVM);
        assert_eq!(facts.model, "AMD EPYC");
        assert_eq!(facts.vendor, "AuthenticAMD");
        assert_eq!(
            facts.flags,
            [
                "aes",
                "avx",
                "avx2",
                "avx512f",
                "pclmulqdq",
                "sha_ni",
                "sse4_2",
                "vaes"
            ]
        );
        assert!(facts.hypervisor_flag);
        assert_eq!(facts.mhz, Some(2600.0));
        assert_eq!(facts.microcode.as_deref(), Some("0x1000065"));
        assert_eq!(facts.processors, 2);
        assert_eq!((facts.sockets, facts.cores), (1, 2));
    }

    #[test]
    fn cpuinfo_x86_bare_metal_two_sockets() {
        let facts = parse_cpuinfo(CPUINFO_X86_TWO_SOCKETS);
        assert_eq!(facts.model, "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
        assert!(!facts.hypervisor_flag);
        // vpclmulqdq is not pclmulqdq; `vmx flags` is not `flags`.
        assert_eq!(
            facts.flags,
            [
                "aes",
                "avx",
                "avx2",
                "avx512f",
                "pclmulqdq",
                "sha_ni",
                "sse4_2",
                "vaes"
            ]
        );
        assert_eq!(facts.mhz, Some(800.0), "first processor's clock");
        assert_eq!(facts.processors, 4);
        assert_eq!((facts.sockets, facts.cores), (2, 2));
    }

    #[test]
    fn cpuinfo_aarch64() {
        let facts = parse_cpuinfo(CPUINFO_AARCH64);
        assert_eq!(facts.vendor, "ARM");
        assert_eq!(facts.model, "Neoverse-N1");
        assert_eq!(facts.flags, ["aes", "sha2"]);
        assert!(!facts.hypervisor_flag);
        assert_eq!(facts.mhz, None);
        assert_eq!(facts.processors, 2);
        assert_eq!((facts.sockets, facts.cores), (0, 0), "no topology lines");
    }

    #[test]
    fn cpuinfo_flags_filtering_without_notable_ones() {
        let facts = parse_cpuinfo("processor : 0\nflags : fpu sse sse2 hypervisor\n");
        assert!(facts.flags.is_empty());
        assert!(facts.hypervisor_flag);
        assert_eq!(parse_cpuinfo("").processors, 0);
    }

    #[test]
    fn arm_unknown_parts_are_named_by_code() {
        assert_eq!(arm_model(0xc0, Some(0xac4)), "Ampere part 0xac4");
        assert_eq!(arm_vendor(0x99), "implementer 0x99");
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_size("1024 KB"), Some(1 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("12Q"), None);
    }

    /// `(cpu, level, type, size, shared_cpu_list)` of every
    /// `/sys/devices/system/cpu/cpuN/cache/indexM` on this KVM guest.
    const SYSFS_CACHES_KVM: &[(u32, &str, &str, &str, &str)] = &[
        (0, "1", "Data", "48K", "0"),
        (0, "1", "Instruction", "32K", "0"),
        (0, "2", "Unified", "1024K", "0"),
        (0, "3", "Unified", "32768K", "0-1"),
        (1, "1", "Data", "48K", "1"),
        (1, "1", "Instruction", "32K", "1"),
        (1, "2", "Unified", "1024K", "1"),
        (1, "3", "Unified", "32768K", "0-1"),
    ];

    fn raw(entries: &[(u32, &str, &str, &str, &str)]) -> Vec<RawCache> {
        entries
            .iter()
            .filter_map(|&(cpu, level, kind, size, shared)| {
                parse_cache_entry(cpu, level, kind, size, Some(shared))
            })
            .collect()
    }

    fn cache(level: u32, kind: &str, size_bytes: u64, instances: u32) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.to_string(),
            size_bytes,
            instances,
        }
    }

    #[test]
    fn caches_counted_by_distinct_shared_cpu_list() {
        assert_eq!(
            summarize_caches(&raw(SYSFS_CACHES_KVM)),
            [
                cache(1, "Data", 48 << 10, 2),
                cache(1, "Instruction", 32 << 10, 2),
                cache(2, "Unified", 1 << 20, 2),
                cache(3, "Unified", 32 << 20, 1),
            ]
        );
    }

    #[test]
    fn caches_with_smt_siblings_and_hybrid_cores() {
        // 4 threads on 2 SMT cores (siblings 0,2 and 1,3) plus 2 E-cores
        // (4, 5) sharing one 2 MiB L2; the list spelling differs ("0,2" vs
        // "0-0,2") but names the same CPUs.
        let entries = raw(&[
            (0, "1", "Data", "48K", "0,2"),
            (2, "1", "Data", "48K", "0-0,2"),
            (1, "1", "Data", "48K", "1,3"),
            (3, "1", "Data", "48K", "1,3"),
            (0, "2", "Unified", "1280K", "0,2"),
            (1, "2", "Unified", "1280K", "1,3"),
            (2, "2", "Unified", "1280K", "0,2"),
            (3, "2", "Unified", "1280K", "1,3"),
            (4, "1", "Data", "32K", "4"),
            (5, "1", "Data", "32K", "5"),
            (4, "2", "Unified", "2048K", "4-5"),
            (5, "2", "Unified", "2048K", "4-5"),
            (0, "3", "Unified", "12288K", "0-5"),
            (5, "3", "Unified", "12288K", "0-5"),
        ]);
        assert_eq!(
            summarize_caches(&entries),
            [
                cache(1, "Data", 32 << 10, 2),
                cache(1, "Data", 48 << 10, 2),
                cache(2, "Unified", 1280 << 10, 2),
                cache(2, "Unified", 2 << 20, 1),
                cache(3, "Unified", 12 << 20, 1),
            ]
        );
    }

    #[test]
    fn cache_without_shared_list_is_private() {
        let a = parse_cache_entry(0, "1", "Data", "64K", None).unwrap();
        let b = parse_cache_entry(1, "1", "Data", "64K", Some("")).unwrap();
        assert_eq!(summarize_caches(&[a, b]), [cache(1, "Data", 64 << 10, 2)]);
        assert_eq!(parse_cache_entry(0, "x", "Data", "64K", None), None);
        assert_eq!(parse_cache_entry(0, "1", "", "64K", None), None);
    }

    #[test]
    fn topology_counts_sockets_and_cores() {
        let entry = |package: &str, core_cpus: &[u32]| TopologyEntry {
            package: package.to_string(),
            core_cpus: core_cpus.to_vec(),
        };
        // 2 sockets × 2 cores × 2 threads.
        let entries = [
            entry("0", &[0, 4]),
            entry("0", &[1, 5]),
            entry("1", &[2, 6]),
            entry("1", &[3, 7]),
            entry("0", &[0, 4]),
            entry("0", &[1, 5]),
            entry("1", &[2, 6]),
            entry("1", &[3, 7]),
        ];
        assert_eq!(count_topology(&entries), (2, 4));
        // This KVM guest: one package, no SMT.
        assert_eq!(
            count_topology(&[entry("0", &[0]), entry("0", &[1])]),
            (1, 2)
        );
        assert_eq!(count_topology(&[]), (0, 0));
    }
}

//! Memory: size and swap from `/proc/meminfo`, NUMA layout from
//! `/sys/devices/system/node`, transparent huge page policy from
//! `/sys/kernel/mm/transparent_hugepage/enabled`.
//!
//! `/proc/meminfo` rather than `sysinfo(2)` because it has `MemAvailable`,
//! the kernel's own estimate of what a new workload can use without
//! swapping, which is what sizing a benchmark needs. NUMA and THP are here
//! because they change how fast that memory is, not how much there is.

use serde::{Deserialize, Serialize};

use super::sysfs::{bracketed, read_text};

/// Memory of the host (or of what the kernel shows this process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryInfo {
    /// Usable RAM, in bytes (`MemTotal`).
    pub total_bytes: u64,
    /// RAM available to new work without swapping, in bytes (`MemAvailable`;
    /// on kernels before 3.14, `MemFree + Buffers + Cached`).
    pub available_bytes: u64,
    /// Swap space configured, in bytes (`SwapTotal`); 0 when there is none.
    pub swap_total_bytes: u64,
    /// Swap space unused, in bytes (`SwapFree`).
    pub swap_free_bytes: u64,
}

/// Parses `/proc/meminfo`. Values given in `kB` (which the kernel means as
/// KiB) become bytes; fields that are missing stay 0.
pub(crate) fn parse_meminfo(text: &str) -> MemoryInfo {
    let mut info = MemoryInfo::default();
    let mut available = None;
    let (mut free, mut buffers, mut cached) = (0, 0, 0);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(bytes) = parse_value(value) else {
            continue;
        };
        match key.trim() {
            "MemTotal" => info.total_bytes = bytes,
            "MemAvailable" => available = Some(bytes),
            "MemFree" => free = bytes,
            "Buffers" => buffers = bytes,
            "Cached" => cached = bytes,
            "SwapTotal" => info.swap_total_bytes = bytes,
            "SwapFree" => info.swap_free_bytes = bytes,
            _ => {}
        }
    }
    info.available_bytes =
        available.unwrap_or_else(|| free.saturating_add(buffers).saturating_add(cached));
    info
}

/// Parses a meminfo value, `"24684096 kB"` or a bare count, into bytes.
fn parse_value(value: &str) -> Option<u64> {
    let mut words = value.split_whitespace();
    let number: u64 = words.next()?.parse().ok()?;
    match words.next() {
        None => Some(number),
        Some(unit) if unit.eq_ignore_ascii_case("kB") => number.checked_mul(1024),
        Some(_) => None,
    }
}

/// Reads `/proc/meminfo`; all zeros when it cannot be read.
pub(crate) fn probe() -> MemoryInfo {
    read_text("/proc/meminfo")
        .map(|text| parse_meminfo(&text))
        .unwrap_or_default()
}

/// Counts NUMA nodes among the names in `/sys/devices/system/node`
/// (`node0`, `node1`, ..., beside files such as `online`); at least 1, since
/// a kernel without NUMA support has one node and no such directory.
pub(crate) fn count_numa_nodes<'a>(names: impl IntoIterator<Item = &'a str>) -> u32 {
    let nodes = names
        .into_iter()
        .filter(|name| {
            name.strip_prefix("node")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    u32::try_from(nodes).unwrap_or(u32::MAX).max(1)
}

/// Number of NUMA nodes; 1 when the kernel does not show any.
pub(crate) fn numa_nodes() -> u32 {
    let names: Vec<String> = std::fs::read_dir("/sys/devices/system/node")
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    count_numa_nodes(names.iter().map(String::as_str))
}

/// The selected transparent huge page mode (`always`, `madvise` or `never`);
/// `None` when the kernel has no THP support.
pub(crate) fn transparent_hugepages() -> Option<String> {
    read_text("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|text| bracketed(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head of `/proc/meminfo` on a 24 GiB guest without swap.
    const MEMINFO_NO_SWAP: &str = "\
MemTotal:       24684096 kB
MemFree:        23225960 kB
MemAvailable:   24081196 kB
Buffers:           35244 kB
Cached:          1038576 kB
SwapCached:            0 kB
Active:           365428 kB
Inactive:         853980 kB
SwapTotal:             0 kB
SwapFree:              0 kB
Zswap:                 0 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
";

    #[test]
    fn meminfo_kb_to_bytes() {
        assert_eq!(
            parse_meminfo(MEMINFO_NO_SWAP),
            MemoryInfo {
                total_bytes: 24_684_096 * 1024,
                available_bytes: 24_081_196 * 1024,
                swap_total_bytes: 0,
                swap_free_bytes: 0,
            }
        );
    }

    #[test]
    fn meminfo_with_swap() {
        let text =
            "MemTotal: 16 kB\nMemAvailable: 8 kB\nSwapTotal: 4194300 kB\nSwapFree: 4194044 kB\n";
        let info = parse_meminfo(text);
        assert_eq!(info.swap_total_bytes, 4_194_300 * 1024);
        assert_eq!(info.swap_free_bytes, 4_194_044 * 1024);
        assert_eq!(info.available_bytes, 8 * 1024);
    }

    #[test]
    fn meminfo_without_memavailable_estimates_it() {
        let text = "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n";
        assert_eq!(parse_meminfo(text).available_bytes, 310 * 1024);
    }

    #[test]
    fn meminfo_garbage_gives_zeros() {
        assert_eq!(parse_meminfo(""), MemoryInfo::default());
        assert_eq!(
            parse_meminfo("MemTotal: lots\nnonsense\n"),
            MemoryInfo::default()
        );
    }

    #[test]
    fn numa_node_names() {
        let this_machine = [
            "has_cpu",
            "has_generic_initiator",
            "has_memory",
            "has_normal_memory",
            "node0",
            "online",
            "possible",
            "power",
            "uevent",
        ];
        assert_eq!(count_numa_nodes(this_machine), 1);
        assert_eq!(
            count_numa_nodes(["node0", "node1", "node12", "nodes", "node"]),
            3
        );
        assert_eq!(count_numa_nodes([]), 1);
    }

    #[test]
    fn thp_selection() {
        // The sysfs file's format, as `bracketed` reads it.
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
    }
}

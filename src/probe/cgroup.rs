//! The limits the run's own cgroup puts on it: a CPU quota, a cpuset and
//! a memory limit.
//!
//! They are the commonest reason a container or a service is slower than
//! the machine under it, and nothing else in the inventory shows them: a
//! process held to 0.85 CPUs sees every CPU, every MHz and every byte of
//! the host. So the probe reads them where the kernel keeps them:
//!
//! * the process's cgroup per controller from `/proc/self/cgroup`: the
//!   `0::PATH` line of the unified hierarchy (v2), or the line that names
//!   the controller (v1, one hierarchy per controller or pair, as in
//!   `4:cpu,cpuacct:/PATH`); a controller a v1 line names is read there
//!   even when a unified hierarchy is mounted beside it (the hybrid
//!   layout);
//! * where that hierarchy is mounted, from `/proc/self/mountinfo` (type
//!   `cgroup2`, or `cgroup` with the controller among its options), with
//!   the mount's root taken off the path (a container sees its own cgroup
//!   mounted as the root);
//! * each limit as tight as it is along the path from the process's
//!   cgroup up to the hierarchy's root, since every ancestor's limit
//!   applies too: `cpu.max` (v2) or `cpu.cfs_quota_us` over
//!   `cpu.cfs_period_us` (v1) as a number of CPUs; `memory.max` (v2) or
//!   `memory.limit_in_bytes` (v1); and the cpuset the kernel has worked
//!   out from them all (`cpuset.cpus.effective`, v1
//!   `cpuset.effective_cpus`), kept only when it leaves out some of the
//!   online CPUs.
//!
//! `cpu.weight` (v1 `cpu.shares`) is not recorded: a weight is relative to
//! the cgroup's siblings and costs nothing while they are idle, so it says
//! nothing about a run by itself; what siblings did take shows as other
//! processes' CPU use, which the monitor flags per trial.
//!
//! Every reader takes a root directory so that tests run on fixture trees
//! (`tests/fixtures/cgroup`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::filesystem::unescape;
use super::sysfs::{parse_cpu_list, read_text, read_trimmed};

/// From this many bytes on, a memory limit limits nothing: v1 shows "no
/// limit" as the largest page count in bytes (9223372036854771712 with
/// 4 KiB pages), and v2 as `max`.
const UNLIMITED_MEMORY_BYTES: u64 = 1 << 62;

/// The limits the process's cgroups set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupLimits {
    /// The tightest CPU bandwidth limit on the path to the root; `None`
    /// when no cgroup on it sets one.
    pub cpu_quota: Option<CpuQuota>,
    /// The CPUs the cpuset allows, as the kernel lists them (`"0-1,4"`),
    /// when it leaves out some of the online CPUs; `None` when it allows
    /// them all or cannot be read.
    pub cpuset: Option<String>,
    /// The lowest memory limit on the path to the root; `None` when no
    /// cgroup on it sets one.
    pub memory_limit: Option<MemoryLimit>,
}

/// A CPU bandwidth limit: at most `quota_us` of CPU time every
/// `period_us`, over all the cgroup's processes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuQuota {
    /// `quota_us / period_us`: how many CPUs' worth of time the cgroup
    /// gets, e.g. 0.85.
    pub cpus: f64,
    /// CPU time per period, µs.
    pub quota_us: u64,
    /// The period, µs.
    pub period_us: u64,
    /// The cgroup that sets it, as `/proc/self/cgroup` names cgroups
    /// (`/system.slice/bench.service`).
    pub cgroup: String,
}

/// A memory limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryLimit {
    /// The limit, bytes.
    pub bytes: u64,
    /// The cgroup that sets it, as `/proc/self/cgroup` names cgroups.
    pub cgroup: String,
}

impl CpuQuota {
    /// `"0.85 CPUs"`, `"1 CPU"`, `"2 CPUs"`: the CPUs' worth of time,
    /// to two decimals where it is not whole.
    pub fn cpus_text(&self) -> String {
        let text = format!("{:.2}", self.cpus);
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "1" {
            "1 CPU".to_string()
        } else {
            format!("{text} CPUs")
        }
    }
}

/// Which cgroup version a controller's hierarchy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// Where one controller's files for this process are.
#[derive(Debug, Clone, PartialEq)]
struct Hierarchy {
    version: Version,
    /// The hierarchy's mount point, under the probed root.
    mount_point: PathBuf,
    /// The cgroup the mount shows as its root (`/` unless a container sees
    /// only its own).
    mount_root: String,
    /// The process's cgroup path below the mount's root, as components.
    below_root: Vec<String>,
}

impl Hierarchy {
    /// The process's cgroup and each ancestor up to the mount's root, as
    /// (directory, cgroup path), the process's own first.
    fn levels(&self) -> Vec<(PathBuf, String)> {
        (0..=self.below_root.len())
            .rev()
            .map(|depth| {
                let parts = &self.below_root[..depth];
                let dir = parts
                    .iter()
                    .fold(self.mount_point.clone(), |dir, part| dir.join(part));
                let mut name = self.mount_root.trim_end_matches('/').to_string();
                for part in parts {
                    name.push('/');
                    name.push_str(part);
                }
                if name.is_empty() {
                    name.push('/');
                }
                (dir, name)
            })
            .collect()
    }
}

/// One cgroup mount of `/proc/self/mountinfo`.
struct CgroupMount {
    version: Version,
    root: String,
    mount_point: String,
    /// v1: the super options, which name the controllers.
    options: Vec<String>,
}

/// The cgroup mounts of a mountinfo text.
fn cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let version = match right.next()? {
                "cgroup2" => Version::V2,
                "cgroup" => Version::V1,
                _ => return None,
            };
            let _source = right.next();
            let options = right
                .next()
                .unwrap_or("")
                .trim()
                .split(',')
                .map(str::to_string)
                .collect();
            Some(CgroupMount {
                version,
                root: unescape(left.get(3)?),
                mount_point: unescape(left.get(4)?),
                options,
            })
        })
        .collect()
}

/// Where `controller`'s files for this process are, from the texts of
/// `/proc/self/cgroup` and `/proc/self/mountinfo`; mount points are taken
/// under `root`. `None` when the controller's hierarchy is not mounted
/// where this process sees it.
fn locate(root: &Path, cgroups: &str, mountinfo: &str, controller: &str) -> Option<Hierarchy> {
    let mut v1_path = None;
    let mut v2_path = None;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2_path = Some(path);
        } else if controllers.split(',').any(|c| c == controller) {
            v1_path = Some(path);
        }
    }
    let (version, path) = match (v1_path, v2_path) {
        (Some(path), _) => (Version::V1, path),
        (None, Some(path)) => (Version::V2, path),
        (None, None) => return None,
    };
    let mounts = cgroup_mounts(mountinfo);
    // Of several mounts of the hierarchy (bind mounts), the one whose root
    // holds the process's cgroup most closely.
    let mount = mounts
        .iter()
        .filter(|m| m.version == version)
        .filter(|m| version == Version::V2 || m.options.iter().any(|o| o == controller))
        .filter_map(|m| Some((m, below(path, &m.root)?)))
        .max_by_key(|(m, _)| m.root.len())?;
    let (mount, below_root) = mount;
    Some(Hierarchy {
        version,
        mount_point: root.join(mount.mount_point.trim_start_matches('/')),
        mount_root: mount.root.clone(),
        below_root,
    })
}

/// The components of `path` below `mount_root`, when it lies there.
fn below(path: &str, mount_root: &str) -> Option<Vec<String>> {
    let rest = if mount_root == "/" {
        path
    } else {
        let rest = path.strip_prefix(mount_root.trim_end_matches('/'))?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    Some(
        rest.split('/')
            .filter(|part| !part.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// The tightest CPU quota on the path from the process's cgroup to the
/// root.
fn cpu_quota(hierarchy: &Hierarchy) -> Option<CpuQuota> {
    hierarchy
        .levels()
        .into_iter()
        .filter_map(|(dir, cgroup)| {
            let (quota_us, period_us) = match hierarchy.version {
                Version::V2 => parse_cpu_max(&read_text(dir.join("cpu.max"))?)?,
                Version::V1 => {
                    let quota = read_trimmed(dir.join("cpu.cfs_quota_us"))?;
                    let period = read_trimmed(dir.join("cpu.cfs_period_us"))?;
                    // -1: no quota.
                    (quota.parse().ok()?, period.parse().ok()?)
                }
            };
            (period_us > 0).then(|| CpuQuota {
                cpus: quota_us as f64 / period_us as f64,
                quota_us,
                period_us,
                cgroup,
            })
        })
        .min_by(|a, b| a.cpus.total_cmp(&b.cpus))
}

/// `cpu.max`: `"QUOTA PERIOD"` in µs, or `"max PERIOD"` for no limit.
fn parse_cpu_max(text: &str) -> Option<(u64, u64)> {
    let mut words = text.split_whitespace();
    let quota = words.next()?.parse().ok()?;
    let period = words.next().map_or(Some(100_000), |p| p.parse().ok())?;
    Some((quota, period))
}

/// The lowest memory limit on the path from the process's cgroup to the
/// root.
fn memory_limit(hierarchy: &Hierarchy) -> Option<MemoryLimit> {
    let file = match hierarchy.version {
        Version::V2 => "memory.max",
        Version::V1 => "memory.limit_in_bytes",
    };
    hierarchy
        .levels()
        .into_iter()
        .filter_map(|(dir, cgroup)| {
            // `max` (v2) does not parse: no limit.
            let bytes: u64 = read_trimmed(dir.join(file))?.parse().ok()?;
            (bytes < UNLIMITED_MEMORY_BYTES).then_some(MemoryLimit { bytes, cgroup })
        })
        .min_by_key(|limit| limit.bytes)
}

/// The CPUs the process's cpuset allows, when they are fewer than the
/// `online` ones (kept whatever they are when `online` is unknown). The
/// nearest cgroup that has the file says it: a v2 cgroup without the
/// cpuset controller has the CPUs of its parent.
fn cpuset(hierarchy: &Hierarchy, online: Option<&[u32]>) -> Option<String> {
    let files: &[&str] = match hierarchy.version {
        Version::V2 => &["cpuset.cpus.effective"],
        // Kernels before 4.17 without the effective file: the configured
        // set, which the kernel keeps within the parent's.
        Version::V1 => &["cpuset.effective_cpus", "cpuset.cpus"],
    };
    let text = hierarchy
        .levels()
        .into_iter()
        .find_map(|(dir, _)| files.iter().find_map(|file| read_trimmed(dir.join(file))))?;
    let cpus = parse_cpu_list(&text)?;
    if cpus.is_empty() {
        return None;
    }
    let all_online = online.is_some_and(|online| online.iter().all(|cpu| cpus.contains(cpu)));
    (!all_online).then_some(text)
}

/// Reads the limits of this process's cgroups under `root` (`/` on a
/// real host). Nothing here fails: what cannot be read is left out, and
/// when no controller's hierarchy is mounted where this process sees it
/// (`ip netns exec` mounts a `/sys` without them) the limits are unknown,
/// `None`, not "no limit".
pub(crate) fn probe(root: &Path) -> Option<CgroupLimits> {
    let cgroups = read_text(root.join("proc/self/cgroup"))?;
    let mountinfo = read_text(root.join("proc/self/mountinfo")).unwrap_or_default();
    let online = read_text(root.join("sys/devices/system/cpu/online"))
        .and_then(|text| parse_cpu_list(&text));
    let find = |controller| locate(root, &cgroups, &mountinfo, controller);
    let (cpu, cpus, memory) = (find("cpu"), find("cpuset"), find("memory"));
    if cpu.is_none() && cpus.is_none() && memory.is_none() {
        return None;
    }
    Some(CgroupLimits {
        cpu_quota: cpu.and_then(|h| cpu_quota(&h)),
        cpuset: cpus.and_then(|h| cpuset(&h, online.as_deref())),
        memory_limit: memory.and_then(|h| memory_limit(&h)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cgroup")
            .join(name)
    }

    #[test]
    fn a_v2_service_gets_the_tightest_quota_and_memory_limit_of_its_path() {
        let limits = probe(&fixture("v2-service")).expect("readable");
        assert_eq!(
            limits,
            CgroupLimits {
                // The service's own 0.85 CPUs, not its slice's 2.
                cpu_quota: Some(CpuQuota {
                    cpus: 0.85,
                    quota_us: 85_000,
                    period_us: 100_000,
                    cgroup: "/system.slice/bench.service".into(),
                }),
                cpuset: Some("0-1".into()),
                // The slice's 4 GiB; the service says `max`.
                memory_limit: Some(MemoryLimit {
                    bytes: 4 << 30,
                    cgroup: "/system.slice".into(),
                }),
            }
        );
        assert_eq!(limits.cpu_quota.unwrap().cpus_text(), "0.85 CPUs");
    }

    #[test]
    fn a_v2_container_reads_the_limits_of_its_own_root() {
        // A cgroup namespace: the process is at `/`, the mount's root.
        let limits = probe(&fixture("v2-container")).expect("readable");
        let quota = limits.cpu_quota.expect("a quota");
        assert_eq!((quota.cpus, quota.cgroup.as_str()), (1.5, "/"));
        assert_eq!(quota.cpus_text(), "1.5 CPUs");
        // Every online CPU: no cpuset worth naming; no memory limit.
        assert_eq!((limits.cpuset, limits.memory_limit), (None, None));
    }

    #[test]
    fn a_v1_hybrid_host_reads_each_controller_in_its_own_hierarchy() {
        let limits = probe(&fixture("v1-hybrid")).expect("readable");
        assert_eq!(
            limits,
            CgroupLimits {
                // cpu and cpuacct share a hierarchy; the quota of the
                // process's cgroup, its parent at -1.
                cpu_quota: Some(CpuQuota {
                    cpus: 0.85,
                    quota_us: 85_000,
                    period_us: 100_000,
                    cgroup: "/sledge-quota".into(),
                }),
                // One of the two online CPUs.
                cpuset: Some("1".into()),
                // The parent's 2 GiB; the process's own cgroup shows v1's
                // "unlimited".
                memory_limit: Some(MemoryLimit {
                    bytes: 2 << 30,
                    cgroup: "/jobs".into(),
                }),
            }
        );
        assert_eq!(limits.cpu_quota.unwrap().cpus_text(), "0.85 CPUs");
    }

    #[test]
    fn no_limit_anywhere_is_none_and_an_unreadable_tree_is_unknown() {
        let limits = probe(&fixture("v2-unlimited")).expect("readable");
        assert_eq!(limits, CgroupLimits::default());
        // A host tree without /proc/self/cgroup says nothing at all.
        assert_eq!(probe(&fixture("absent")), None);
    }

    #[test]
    fn cgroups_mounted_nowhere_this_process_sees_are_unknown() {
        // As inside `ip netns exec`: the cgroups are named, their file
        // systems are not mounted.
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc/self");
        std::fs::create_dir_all(&proc).unwrap();
        std::fs::write(proc.join("cgroup"), "4:cpu,cpuacct:/sledge-h3\n0::/\n").unwrap();
        std::fs::write(
            proc.join("mountinfo"),
            "22 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n\
             40 22 0:50 / /sys rw,relatime - sysfs sledge-h3 rw\n",
        )
        .unwrap();
        assert_eq!(probe(dir.path()), None);
    }

    #[test]
    fn cpu_max_and_whole_cpus_read_as_written() {
        assert_eq!(parse_cpu_max("85000 100000\n"), Some((85_000, 100_000)));
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("50000"), Some((50_000, 100_000)));
        let quota = |cpus| CpuQuota {
            cpus,
            ..CpuQuota::default()
        };
        assert_eq!(quota(1.0).cpus_text(), "1 CPU");
        assert_eq!(quota(2.0).cpus_text(), "2 CPUs");
        assert_eq!(quota(0.02).cpus_text(), "0.02 CPUs");
    }

    #[test]
    fn a_cgroup_outside_the_mounts_root_is_not_read() {
        assert_eq!(
            below("/a/b", "/"),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(below("/a/b", "/a"), Some(vec!["b".to_string()]));
        assert_eq!(below("/a", "/a/"), Some(vec![]));
        assert_eq!(below("/ab", "/a"), None);
        assert_eq!(below("/x", "/a"), None);
    }
}

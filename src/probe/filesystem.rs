//! The filesystem and block device under the working directory.
//!
//! Disk benchmarks measure this filesystem, so the inventory records what it
//! is, how it is mounted and what device backs it. The mount is found in
//! `/proc/self/mountinfo` (which, unlike `/proc/mounts`, carries the device
//! numbers that lead to `/sys/dev/block`), sizes come from `statvfs(3)`, and
//! the device's queue settings from `/sys/class/block/<disk>/queue`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::sysfs::{bracketed, read_text};

/// The filesystem holding a path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FilesystemInfo {
    /// The path asked about, canonicalized (absolute, symlinks resolved).
    pub path: String,
    /// Where the filesystem is mounted, e.g. `"/"` or `"/var/lib/data"`.
    pub mount_point: String,
    /// Filesystem type, e.g. `"ext4"`, `"xfs"`, `"btrfs"`, `"overlay"`,
    /// `"tmpfs"`.
    pub fs_type: String,
    /// Mount options, comma-separated: the per-mount ones (`rw,relatime`)
    /// followed by the filesystem's own ones not already listed
    /// (`discard`, `data=ordered`...).
    pub mount_options: String,
    /// Mount source as mountinfo shows it: a device such as `"/dev/vda1"`,
    /// or a name such as `"overlay"` or `"tmpfs"`.
    pub source: String,
    /// Kernel name of the whole disk behind the filesystem, e.g. `"vda"`,
    /// `"nvme0n1"`, `"dm-0"` (a partition resolves to its parent disk);
    /// `None` for filesystems without one (tmpfs, overlay, network).
    pub block_device: Option<String>,
    /// Whether the disk says it is rotational (`queue/rotational`); virtual
    /// disks often claim to be, whatever backs them.
    pub rotational: Option<bool>,
    /// The disk's selected I/O scheduler, e.g. `"none"`, `"mq-deadline"`.
    pub scheduler: Option<String>,
    /// Size of the filesystem, in bytes (`f_blocks × f_frsize`).
    pub total_bytes: u64,
    /// Space available to unprivileged users, in bytes
    /// (`f_bavail × f_frsize`).
    pub free_bytes: u64,
}

/// One line of `/proc/self/mountinfo`, reduced to what the inventory uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MountEntry {
    /// Major device number of the filesystem.
    pub major: u32,
    /// Minor device number of the filesystem.
    pub minor: u32,
    /// Mount point, unescaped.
    pub mount_point: String,
    /// Per-mount options, then superblock options not already listed.
    pub options: String,
    /// Filesystem type.
    pub fs_type: String,
    /// Mount source, unescaped.
    pub source: String,
}

/// Parses one mountinfo line:
/// `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS`.
pub(crate) fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let left: Vec<&str> = left.split(' ').collect();
    if left.len() < 6 {
        return None;
    }
    let (major, minor) = left[2].split_once(':')?;
    let mut right = right.split(' ');
    let fs_type = unescape(right.next()?);
    let source = unescape(right.next()?);
    let super_options = right.next().unwrap_or("").trim();

    let mut options: Vec<&str> = left[5].split(',').filter(|o| !o.is_empty()).collect();
    for option in super_options.split(',') {
        if !option.is_empty() && !options.contains(&option) {
            options.push(option);
        }
    }
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: unescape(left[4]),
        options: unescape(&options.join(",")),
        fs_type,
        source,
    })
}

/// Undoes mountinfo's octal escapes: `\040` space, `\011` tab, `\012`
/// newline, `\134` backslash.
pub(crate) fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..=i + 3]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = bytes[i + 1..=i + 3]
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `path` (absolute, canonical) lies on or under `mount_point`.
fn is_under(path: &str, mount_point: &str) -> bool {
    if mount_point == "/" {
        return path.starts_with('/');
    }
    let mount_point = mount_point.trim_end_matches('/');
    path.strip_prefix(mount_point)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Finds the mount holding `path` (absolute, canonical): the longest mount
/// point that is a prefix of it, the later line winning a tie (a later mount
/// on the same point hides the earlier one).
///
/// When `device` (the `st_dev` of `path` as major, minor) is given and some
/// candidate has that device, only those are considered: this sees through
/// a mount hidden under a later mount on a parent directory.
pub(crate) fn find_mount(
    mountinfo: &str,
    path: &str,
    device: Option<(u32, u32)>,
) -> Option<MountEntry> {
    let candidates: Vec<MountEntry> = mountinfo
        .lines()
        .filter_map(parse_mountinfo_line)
        .filter(|m| is_under(path, &m.mount_point))
        .collect();
    let same_device = |m: &MountEntry| Some((m.major, m.minor)) == device;
    let restrict = candidates.iter().any(same_device);
    candidates
        .into_iter()
        .filter(|m| !restrict || same_device(m))
        .fold(None, |best: Option<MountEntry>, m| match best {
            Some(b) if b.mount_point.len() > m.mount_point.len() => Some(b),
            _ => Some(m),
        })
}

/// Splits a Linux `dev_t` into (major, minor), as glibc encodes it.
pub(crate) fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

/// The whole-disk name for a block device's sysfs directory: the directory's
/// own name, or its parent's when it is a partition.
pub(crate) fn disk_name(sys_dir: &Path, is_partition: bool) -> Option<String> {
    let disk = if is_partition {
        sys_dir.parent()?
    } else {
        sys_dir
    };
    Some(disk.file_name()?.to_str()?.to_string())
}

/// Resolves the disk behind a mount: through `/sys/dev/block/MAJ:MIN`, or,
/// for filesystems with anonymous device numbers (btrfs), through the
/// `/dev/...` source.
fn block_device(major: u32, minor: u32, source: &str) -> Option<String> {
    let by_number = (major != 0)
        .then(|| std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok())
        .flatten();
    let sys_dir = by_number.or_else(|| {
        if !source.starts_with("/dev/") {
            return None;
        }
        let node = std::fs::canonicalize(source).ok()?;
        let name = node.file_name()?.to_str()?;
        std::fs::canonicalize(format!("/sys/class/block/{name}")).ok()
    })?;
    disk_name(&sys_dir, sys_dir.join("partition").exists())
}

/// Describes the filesystem holding `path`: the longest mount-point prefix of
/// the canonicalized path in `/proc/self/mountinfo`, sizes from `statvfs`.
/// `None` when the path does not exist or nothing at all can be learned.
pub fn filesystem_of(path: &Path) -> Option<FilesystemInfo> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let path_text = canonical.to_string_lossy().into_owned();
    let device = std::fs::metadata(&canonical)
        .ok()
        .map(|m| split_dev(m.dev()));
    let mount =
        read_text("/proc/self/mountinfo").and_then(|text| find_mount(&text, &path_text, device));
    let sizes = crate::sys::fs_space::fs_space(&canonical)
        .ok()
        .map(|s| (s.total, s.available));
    if mount.is_none() && sizes.is_none() {
        return None;
    }
    let mount = mount.unwrap_or_default();
    let (total_bytes, free_bytes) = sizes.unwrap_or_default();
    let block_device = block_device(mount.major, mount.minor, &mount.source);
    let queue = |file: &str| {
        block_device
            .as_ref()
            .and_then(|disk| read_text(format!("/sys/class/block/{disk}/queue/{file}")))
    };
    let rotational = queue("rotational").and_then(|text| match text.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    });
    let scheduler = queue("scheduler").and_then(|text| bracketed(&text));
    Some(FilesystemInfo {
        path: path_text,
        mount_point: mount.mount_point,
        fs_type: mount.fs_type,
        mount_options: mount.options,
        source: mount.source,
        block_device,
        rotational,
        scheduler,
        total_bytes,
        free_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/proc/self/mountinfo` of this KVM guest, plus the proc(5) example of
    /// an escaped space and a Docker-style overlay root with a volume.
    const MOUNTINFO: &str = r"22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334524k,nr_inodes=3083631,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534
28 27 0:25 / /mnt/sandboxing/model_tools_env/v1/python ro,nosuid,nodev,relatime - tmpfs model_tools_unavailable ro,size=4k,mode=755
29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
36 27 98:0 /mnt1 /mnt/my\040disk rw,noatime master:1 - ext3 /dev/root rw,errors=continue
625 27 259:2 /var/lib/docker/volumes/data/_data /data rw,relatime shared:5 - xfs /dev/nvme0n1p2 rw,attr2,inode64,logbufs=8,noquota
";

    #[test]
    fn parses_a_line() {
        let entry = parse_mountinfo_line(
            "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534",
        )
        .unwrap();
        assert_eq!(
            entry,
            MountEntry {
                major: 254,
                minor: 0,
                mount_point: "/".into(),
                options: "rw,relatime,discard,resv_strict,resuid=65534,resgid=65534".into(),
                fs_type: "ext4".into(),
                source: "/dev/vda".into(),
            }
        );
        assert_eq!(parse_mountinfo_line("garbage"), None);
        assert_eq!(parse_mountinfo_line("1 2 x / / rw - ext4 /dev/a rw"), None);
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape(r"/mnt/my\040disk"), "/mnt/my disk");
        assert_eq!(unescape(r"a\011b\012c\134d"), "a\tb\nc\\d");
        assert_eq!(unescape(r"trailing\04"), r"trailing\04");
        assert_eq!(unescape(r"\999"), r"\999");
    }

    fn mount_point_of(path: &str) -> String {
        find_mount(MOUNTINFO, path, None).unwrap().mount_point
    }

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(mount_point_of("/work/main"), "/");
        assert_eq!(mount_point_of("/"), "/");
        assert_eq!(mount_point_of("/sys/fs/cgroup/cpu"), "/sys/fs/cgroup/cpu");
        assert_eq!(mount_point_of("/sys/fs/cgroup/cpuset"), "/sys/fs/cgroup");
        assert_eq!(
            mount_point_of("/sys/fs/cgroup/cpu/tasks"),
            "/sys/fs/cgroup/cpu"
        );
        // A prefix must end at a path component.
        assert_eq!(mount_point_of("/devices"), "/");
        assert_eq!(mount_point_of("/data/db"), "/data");
        assert_eq!(mount_point_of("/database"), "/");
    }

    #[test]
    fn escaped_spaces_in_mount_points() {
        let entry = find_mount(MOUNTINFO, "/mnt/my disk/file.txt", None).unwrap();
        assert_eq!(entry.mount_point, "/mnt/my disk");
        assert_eq!(entry.fs_type, "ext3");
        assert_eq!(entry.options, "rw,noatime,errors=continue");
        assert_eq!(mount_point_of("/mnt/my"), "/");
    }

    #[test]
    fn later_mount_on_same_point_wins() {
        let entry = find_mount(MOUNTINFO, "/dev/shm/sem.x", None).unwrap();
        assert_eq!((entry.major, entry.minor), (0, 27));
    }

    #[test]
    fn device_number_sees_through_shadowing() {
        // /a/b is mounted first, then a new filesystem over /a hides it.
        let mountinfo = "1 0 8:1 / / rw - ext4 /dev/sda1 rw
2 1 8:2 / /a/b rw - ext4 /dev/sda2 rw
3 1 8:3 / /a rw - xfs /dev/sda3 rw
";
        let by_prefix = find_mount(mountinfo, "/a/b/c", None).unwrap();
        assert_eq!(by_prefix.mount_point, "/a/b");
        let by_device = find_mount(mountinfo, "/a/b/c", Some((8, 3))).unwrap();
        assert_eq!(by_device.mount_point, "/a");
        // An unmatched device (e.g. a btrfs subvolume) falls back to prefix.
        let fallback = find_mount(mountinfo, "/a/b/c", Some((0, 99))).unwrap();
        assert_eq!(fallback.mount_point, "/a/b");
        assert_eq!(find_mount("", "/a", None), None);
    }

    #[test]
    fn dev_t_split() {
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev(0x10301), (259, 1));
        // glibc's makedev, for numbers past the old 12/20-bit split.
        let makedev = |major: u64, minor: u64| {
            ((major & 0xfff) << 8)
                | ((major & !0xfff) << 32)
                | (minor & 0xff)
                | ((minor & !0xff) << 12)
        };
        assert_eq!(split_dev(makedev(0x12345, 0x6789a)), (0x12345, 0x6789a));
    }

    #[test]
    fn partitions_resolve_to_their_disk() {
        let dev = Path::new("/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1");
        assert_eq!(disk_name(dev, false).as_deref(), Some("nvme0n1"));
        assert_eq!(
            disk_name(&dev.join("nvme0n1p2"), true).as_deref(),
            Some("nvme0n1")
        );
    }
}

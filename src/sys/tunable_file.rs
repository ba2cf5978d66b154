//! A kernel tunable as a file (`/proc/sys/vm/swappiness`,
//! `/sys/kernel/mm/transparent_hugepage/enabled`), found so that writing
//! it can change nothing else.
//!
//! A path given on the command line may be a symlink, hold `..`, or
//! name a file that only looks like a tunable. Writing one value into
//! `/etc/passwd` or a user's file would destroy it, so a path is first
//! resolved (every link and `..` followed, as the kernel would on open),
//! and the resolved path must lie under one of the allowed places: `/sys`
//! or `/proc/sys`. Lying under them is not yet enough: anything can be
//! mounted there (a bind mount of a home directory in a container), so
//! the file's file system must also be one the kernel serves its
//! tunables from, checked again on the open descriptor of every write,
//! which is opened without following a link, so that nothing swapped in
//! between the check and the write is written.
//!
//! Some kernel file systems under `/sys` hold things that are not
//! tunables and that a stray write could ruin (firmware variables in
//! `efivarfs`, pinned BPF objects, crash records): they are refused by
//! name.

use std::ffi::CString;
use std::io::{self, Read as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// The file-system magic numbers (`statfs(2)`'s `f_type`, from
/// `linux/magic.h`) of the kernel's own file systems, with a name for
/// messages.
const SYSFS: u32 = 0x6265_6572;
const PROC: u32 = 0x9fa0;
const CGROUP1: u32 = 0x0027_e0eb;
const CGROUP2: u32 = 0x6367_7270;
const DEBUGFS: u32 = 0x6462_6720;
const TRACEFS: u32 = 0x7472_6163;
/// Kernel file systems that are never tunables, and what they hold.
const NOT_TUNABLES: &[(u32, &str)] = &[
    (0xde5e_81e4, "efivarfs, the firmware's variables"),
    (0xcafe_4a11, "bpf, pinned BPF programs and maps"),
    (0x6165_676c, "pstore, the records of past crashes"),
    (0x7363_6673, "securityfs, the security modules' controls"),
];

/// A place where tunables may be: a directory, and the file systems a
/// tunable under it may be on (empty: any, for a test's stand-in).
#[derive(Debug, Clone)]
pub struct TunableRoot {
    dir: PathBuf,
    file_systems: &'static [u32],
}

impl TunableRoot {
    /// The kernel's two places: `/sys` (sysfs, the cgroup file systems,
    /// debugfs and tracefs are mounted there) and `/proc/sys` (the
    /// sysctls).
    pub fn kernel() -> Vec<TunableRoot> {
        vec![
            TunableRoot {
                dir: PathBuf::from("/sys"),
                file_systems: &[SYSFS, CGROUP1, CGROUP2, DEBUGFS, TRACEFS],
            },
            TunableRoot {
                dir: PathBuf::from("/proc/sys"),
                file_systems: &[PROC],
            },
        ]
    }

    /// A directory whose regular files stand in for tunables, on any file
    /// system: for tests, which cannot change the host's real tunables.
    pub fn stand_in(dir: &Path) -> TunableRoot {
        TunableRoot {
            dir: dir.to_path_buf(),
            file_systems: &[],
        }
    }

    /// The directory, for messages.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Why a path is not a tunable.
#[derive(Debug, thiserror::Error)]
pub enum NotTunable {
    /// The path cannot be resolved or read.
    #[error("{path} cannot be read ({reason})")]
    Unreadable { path: PathBuf, reason: String },
    /// Resolved, it lies outside every allowed place.
    #[error(
        "{path} is not a kernel tunable: it resolves to {resolved}, and a tunable is a file under {allowed} once links and `..` are followed"
    )]
    Outside {
        path: PathBuf,
        resolved: PathBuf,
        allowed: String,
    },
    /// Under an allowed place, but on a file system that holds no
    /// tunables.
    #[error(
        "{path} is not a kernel tunable: it is on {file_system}, not one of the kernel's file systems of tunables (sysfs, procfs, cgroup, debugfs, tracefs)"
    )]
    WrongFileSystem { path: PathBuf, file_system: String },
    /// Not a regular file (a directory, a device, a FIFO).
    #[error("{path} is not a file; a tunable is a sysfs or sysctl file")]
    NotAFile { path: PathBuf },
}

/// A tunable's file, resolved and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunableFile {
    /// The resolved path: no link, no `..`.
    path: PathBuf,
    /// The file systems a write may find it on ([`TunableRoot`]'s).
    file_systems: &'static [u32],
}

impl TunableFile {
    /// Resolves `path` and checks it is a regular file under one of
    /// `roots`, on one of that root's file systems.
    pub fn find(path: &Path, roots: &[TunableRoot]) -> Result<TunableFile, NotTunable> {
        let unreadable = |e: io::Error| NotTunable::Unreadable {
            path: path.to_path_buf(),
            reason: plain_io_error(&e),
        };
        let resolved = std::fs::canonicalize(path).map_err(unreadable)?;
        let Some(root) = roots.iter().find(|root| {
            std::fs::canonicalize(&root.dir).is_ok_and(|dir| resolved.starts_with(dir))
        }) else {
            return Err(NotTunable::Outside {
                path: path.to_path_buf(),
                resolved,
                allowed: roots
                    .iter()
                    .map(|r| r.dir.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            });
        };
        let meta = std::fs::metadata(&resolved).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(NotTunable::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let found = TunableFile {
            path: resolved,
            file_systems: root.file_systems,
        };
        let magic = file_system_of_path(&found.path).map_err(unreadable)?;
        found.check_file_system(magic, path)?;
        Ok(found)
    }

    /// The resolved path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's whole text, as the kernel reports it now.
    pub fn read(&self) -> io::Result<String> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)?;
        self.check_open(&file)?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        Ok(text)
    }

    /// Writes `text` in one write, truncating first as `echo text >
    /// file` does (the kernel takes a tunable's write whole and ignores
    /// the truncation; a stand-in file keeps no stale tail).
    pub fn write(&self, text: &str) -> io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)?;
        self.check_open(&file)?;
        file.write_all(text.as_bytes())
    }

    /// Checks that an opened descriptor is still on a file system of
    /// tunables: the path could have been replaced since it was found.
    fn check_open(&self, file: &std::fs::File) -> io::Result<()> {
        let magic = file_system_of_fd(file)?;
        self.check_file_system(magic, &self.path)
            .map_err(|e| io::Error::other(e.to_string()))
    }

    fn check_file_system(&self, magic: u32, given: &Path) -> Result<(), NotTunable> {
        if self.file_systems.is_empty() || self.file_systems.contains(&magic) {
            return Ok(());
        }
        let file_system = NOT_TUNABLES.iter().find(|(m, _)| *m == magic).map_or_else(
            || format!("a file system of type {magic:#x}"),
            |(_, what)| (*what).to_string(),
        );
        Err(NotTunable::WrongFileSystem {
            path: given.to_path_buf(),
            file_system,
        })
    }
}

/// The magic number of the file system `path` is on.
fn file_system_of_path(path: &Path) -> io::Result<u32> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("a path holds a NUL byte"))?;
    // SAFETY: statfs fills the zeroed struct it is given; the path is a
    // valid C string that outlives the call.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(magic_of(&stat))
}

/// The magic number of the file system an open file is on.
fn file_system_of_fd(file: &std::fs::File) -> io::Result<u32> {
    // SAFETY: fstatfs fills the zeroed struct it is given; the descriptor
    // is open for the whole call.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(magic_of(&stat))
}

/// `f_type` is a signed word whose width depends on the architecture;
/// the magic numbers are 32-bit patterns.
fn magic_of(stat: &libc::statfs) -> u32 {
    #[allow(clippy::unnecessary_cast)]
    let word = stat.f_type as i64;
    word as u32
}

/// An I/O error in words, without its "(os error N)" tail.
pub fn plain_io_error(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_outside_the_places_is_refused_however_it_is_reached() {
        let dir = tempfile::tempdir().unwrap();
        let places = dir.path().join("places");
        std::fs::create_dir(&places).unwrap();
        let outside = dir.path().join("precious");
        std::fs::write(&outside, "keep me\n").unwrap();
        let roots = [TunableRoot::stand_in(&places)];
        // A link inside the place to a file outside it.
        std::os::unix::fs::symlink(&outside, places.join("link")).unwrap();
        // `..` out of the place.
        let dotted = places.join("..").join("precious");
        for path in [outside.clone(), places.join("link"), dotted] {
            let err = TunableFile::find(&path, &roots).unwrap_err();
            assert!(matches!(err, NotTunable::Outside { .. }), "{path:?}: {err}");
            assert!(err.to_string().contains("resolves to"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    }

    #[test]
    fn a_file_inside_is_found_read_and_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knob");
        std::fs::write(&path, "a much longer value\n").unwrap();
        let found = TunableFile::find(&path, &[TunableRoot::stand_in(dir.path())]).unwrap();
        found.write("short\n").unwrap();
        assert_eq!(found.read().unwrap(), "short\n");
        let err = TunableFile::find(dir.path(), &[TunableRoot::stand_in(dir.path())]);
        assert!(matches!(err, Err(NotTunable::NotAFile { .. })));
    }

    #[test]
    fn a_regular_file_system_under_the_kernels_places_is_not_a_tunable() {
        // A temporary directory is on tmpfs or a disk's file system, never
        // sysfs or procfs: standing in for something mounted under /sys.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knob");
        std::fs::write(&path, "1\n").unwrap();
        let root = TunableRoot {
            dir: dir.path().to_path_buf(),
            file_systems: &[SYSFS],
        };
        let err = TunableFile::find(&path, &[root]).unwrap_err();
        assert!(matches!(err, NotTunable::WrongFileSystem { .. }), "{err}");
    }

    #[test]
    fn the_kernels_own_tunables_are_found_where_the_host_has_them() {
        let roots = TunableRoot::kernel();
        let swappiness = Path::new("/proc/sys/vm/swappiness");
        if swappiness.exists() {
            let found = TunableFile::find(swappiness, &roots).unwrap();
            assert_eq!(found.path(), swappiness);
            assert!(found.read().unwrap().trim().parse::<u32>().is_ok());
        }
        // Under /proc but not /proc/sys: a process's files are not
        // tunables.
        let err = TunableFile::find(Path::new("/proc/self/status"), &roots).unwrap_err();
        assert!(matches!(err, NotTunable::Outside { .. }), "{err}");
        let err = TunableFile::find(Path::new("/sys/../etc/hostname"), &roots);
        assert!(
            matches!(
                err,
                Err(NotTunable::Outside { .. } | NotTunable::Unreadable { .. })
            ),
            "{err:?}"
        );
    }
}

//! The kernel tree `build.kernel` compiles: where it comes from and how it
//! is unpacked into the cache.
//!
//! By default the source is Debian's `linux-source-*` tarball under
//! `/usr/src` (the newest, when several are installed); `src=PATH` names
//! any kernel tree (used in place, read-only: the builds are out of tree)
//! or tarball. A tarball is unpacked once, untimed, by the system's `tar`
//! into a cache entry named after the tarball's file name and size, and
//! reused by every later trial, round and run. A tarball that `tar`
//! cannot read to the end (corrupt, truncated) is an error, and what was
//! unpacked of it is removed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

use super::cache;
use crate::engine::{CancelToken, Cancelled, HostLacks};
use crate::workloads::common::workdir::ScratchDir;

/// Where Debian's `linux-source` package installs its tarball.
pub const DEBIAN_SOURCE_DIR: &str = "/usr/src";
/// How often an unpack looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// A kernel source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A tree to build from in place.
    Tree(PathBuf),
    /// A tarball to unpack into the cache.
    Tarball {
        /// Its path.
        path: PathBuf,
        /// Its size in bytes, part of the cache key.
        size: u64,
    },
}

impl Source {
    /// Finds the source `src` names, or Debian's when `src` is empty.
    pub fn locate(workload: &str, src: &str) -> anyhow::Result<Source> {
        Self::locate_in(workload, src, Path::new(DEBIAN_SOURCE_DIR))
    }

    /// [`Source::locate`] with Debian's tarballs looked for in `debian_dir`.
    fn locate_in(workload: &str, src: &str, debian_dir: &Path) -> anyhow::Result<Source> {
        if src.is_empty() {
            return match newest_debian_tarball(debian_dir) {
                Some(path) => Self::from_path(workload, &path),
                // Not the user's mistake: a profile skips the case.
                None => Err(HostLacks(format!(
                    "{workload}: no kernel source found: Debian's linux-source package puts its tarball in {} (apt-get install linux-source), or set -p src=PATH to a kernel tree or tarball",
                    debian_dir.display()
                ))
                .into()),
            };
        }
        Self::from_path(workload, Path::new(src))
    }

    fn from_path(workload: &str, path: &Path) -> anyhow::Result<Source> {
        let meta = std::fs::metadata(path).map_err(|e| {
            anyhow::anyhow!(
                "{workload}: src `{}` is not usable: {e} (src= takes a kernel tree or a .tar, .tar.xz, .tar.gz or .tar.bz2 tarball)",
                path.display()
            )
        })?;
        let path = std::fs::canonicalize(path)
            .with_context(|| format!("{workload}: resolving `{}`", path.display()))?;
        if meta.is_dir() {
            if !is_kernel_tree(&path) {
                bail!(
                    "{workload}: `{}` is not a kernel tree (it has no Makefile and Kconfig at its top)",
                    path.display()
                );
            }
            return Ok(Source::Tree(path));
        }
        let name = file_name(&path);
        if !is_tarball_name(&name) {
            bail!(
                "{workload}: src `{}` is neither a directory nor a tarball (.tar, .tar.xz, .tar.gz, .tgz, .tar.bz2)",
                path.display()
            );
        }
        Ok(Source::Tarball {
            path,
            size: meta.len(),
        })
    }

    /// The cache entry a tarball unpacks into (under `cache_dir`); `None`
    /// for a tree.
    pub fn entry(&self, cache_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
        match self {
            Source::Tree(_) => Ok(None),
            Source::Tarball { path, size } => Ok(Some(
                cache_dir.join(cache::entry_name(&format!("{}-{size}", file_name(path)))?),
            )),
        }
    }

    /// Bytes an unpack of this source would take, about: the compression
    /// ratios of kernel tarballs (a 138 MB .tar.xz of Linux 6.1 unpacks to
    /// 1.5 GB) with a margin.
    pub fn unpacked_bytes(&self) -> u64 {
        match self {
            Source::Tree(_) => 0,
            Source::Tarball { path, size } => {
                let name = file_name(path);
                let ratio = if name.ends_with(".xz") || name.ends_with(".txz") {
                    13
                } else if name.ends_with(".bz2") || name.ends_with(".tbz2") {
                    9
                } else if name.ends_with(".gz") || name.ends_with(".tgz") {
                    8
                } else {
                    2
                };
                size.saturating_mul(ratio)
            }
        }
    }

    /// The tarball's file name, for the decompressor check (`None` for a
    /// tree).
    pub fn tarball_name(&self) -> Option<String> {
        match self {
            Source::Tree(_) => None,
            Source::Tarball { path, .. } => Some(file_name(path)),
        }
    }
}

/// The tree to build: the source's own, or its cache entry, unpacked into
/// `cache_dir` first when it is not there yet. Returns the tree and
/// whether this call unpacked it.
pub fn tree(
    workload: &str,
    source: &Source,
    cache_dir: &Path,
    cancel: &CancelToken,
) -> anyhow::Result<(PathBuf, bool)> {
    let (Source::Tarball { path, .. }, Some(entry)) = (source, source.entry(cache_dir)?) else {
        let Source::Tree(tree) = source else {
            unreachable!("a tarball always has an entry")
        };
        return Ok((tree.clone(), false));
    };
    if is_kernel_tree(&entry) {
        return Ok((entry, false));
    }
    cache::ensure(cache_dir)?;
    let mut scratch = ScratchDir::create(cache_dir, workload)?;
    let unpacked = scratch.path().join("unpacked");
    std::fs::create_dir(&unpacked).with_context(|| format!("creating `{}`", unpacked.display()))?;
    unpack(workload, path, scratch.path(), &unpacked, cancel)?;
    let top = kernel_top(&unpacked).with_context(|| {
        format!(
            "{workload}: `{}` does not hold a kernel tree (no directory with a Makefile and Kconfig at the top of the archive); the unpack was removed",
            path.display()
        )
    })?;
    cache::publish(&top, &entry)?;
    scratch.remove()?;
    Ok((entry, true))
}

/// Runs `tar -xf tarball -C into`, stoppable, with tar's errors in
/// `scratch`; an error quotes tar.
fn unpack(
    workload: &str,
    tarball: &Path,
    scratch: &Path,
    into: &Path,
    cancel: &CancelToken,
) -> anyhow::Result<()> {
    let errors = scratch.join("tar-errors");
    let error_file =
        std::fs::File::create(&errors).with_context(|| format!("creating {}", errors.display()))?;
    let mut command = Command::new("tar");
    command
        .arg("-xf")
        .arg(tarball)
        .arg("-C")
        .arg(into)
        .arg("--no-same-owner")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(error_file);
    crate::sys::child_process::own_group_dying_with_parent(&mut command);
    let mut child = command
        .spawn()
        .with_context(|| format!("{workload}: starting tar"))?;
    let pid = child.id() as libc::pid_t;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if cancel.is_cancelled() {
            // tar is not reaped yet, so its group is still ours (it holds
            // tar and its decompressor).
            let _ = crate::sys::child_process::kill_group(pid);
            let _ = child.wait();
            return Err(Cancelled.into());
        }
        std::thread::sleep(POLL);
    };
    // The decompressor tar started is in the same group.
    let _ = crate::sys::child_process::kill_group(pid);
    if !status.success() {
        let text = std::fs::read_to_string(&errors).unwrap_or_default();
        let quoted: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(6)
            .collect();
        bail!(
            "{workload}: unpacking `{}` failed ({status}): the tarball is corrupt or truncated ({}); the partial unpack was removed and the cache is unchanged",
            tarball.display(),
            if quoted.is_empty() {
                "tar said nothing".to_string()
            } else {
                quoted.join(" | ")
            }
        );
    }
    let _ = std::fs::remove_file(&errors);
    Ok(())
}

/// The one directory at the top of an unpacked archive that is a kernel
/// tree, or the top itself for an archive without a leading directory.
fn kernel_top(unpacked: &Path) -> Option<PathBuf> {
    if is_kernel_tree(unpacked) {
        return Some(unpacked.to_path_buf());
    }
    let dirs: Vec<PathBuf> = std::fs::read_dir(unpacked)
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    match dirs.as_slice() {
        [only] if is_kernel_tree(only) => Some(only.clone()),
        _ => None,
    }
}

/// A kernel tree has a top Makefile and Kconfig.
pub fn is_kernel_tree(dir: &Path) -> bool {
    dir.join("Makefile").is_file() && dir.join("Kconfig").is_file()
}

fn is_tarball_name(name: &str) -> bool {
    [
        ".tar", ".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2",
    ]
    .iter()
    .any(|suffix| name.ends_with(suffix))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The newest `linux-source-VERSION.tar.*` in `dir`, by version.
pub fn newest_debian_tarball(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("linux-source-")?;
            if !is_tarball_name(&name) || !e.path().is_file() {
                return None;
            }
            let version: Vec<u64> = rest
                .split(|c: char| !c.is_ascii_digit())
                .take_while(|part| !part.is_empty())
                .filter_map(|part| part.parse().ok())
                .collect();
            Some((version, e.path()))
        })
        .max()
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_debian_tarball_is_chosen_by_version() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(newest_debian_tarball(tmp.path()), None);
        for name in [
            "linux-source-6.1.tar.xz",
            "linux-source-6.12.tar.xz",
            "linux-source-6.9.tar.bz2",
            "linux-config-6.12",
            "linux-source-7.0.patch",
        ] {
            std::fs::write(tmp.path().join(name), b"x").unwrap();
        }
        assert_eq!(
            newest_debian_tarball(tmp.path()).unwrap(),
            tmp.path().join("linux-source-6.12.tar.xz")
        );
    }

    #[test]
    fn without_a_source_the_package_and_src_are_named() {
        let empty = tempfile::tempdir().unwrap();
        let err = Source::locate_in("build.kernel", "", empty.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("apt-get install linux-source"), "{err}");
        assert!(err.contains("-p src=PATH"), "{err}");
        std::fs::write(empty.path().join("linux-source-6.1.tar.xz"), b"x").unwrap();
        let found = Source::locate_in("build.kernel", "", empty.path()).unwrap();
        assert_eq!(
            found.tarball_name().as_deref(),
            Some("linux-source-6.1.tar.xz")
        );
    }

    #[test]
    fn sources_are_refused_with_what_src_takes() {
        let tmp = tempfile::tempdir().unwrap();
        let err = Source::locate("build.kernel", "/nonexistent/linux").unwrap_err();
        assert!(
            err.to_string().contains("src= takes a kernel tree"),
            "{err}"
        );
        let err = Source::locate("build.kernel", tmp.path().to_str().unwrap()).unwrap_err();
        assert!(err.to_string().contains("is not a kernel tree"), "{err}");
        let notes = tmp.path().join("notes.txt");
        std::fs::write(&notes, b"x").unwrap();
        let err = Source::locate("build.kernel", notes.to_str().unwrap()).unwrap_err();
        assert!(
            err.to_string()
                .contains("neither a directory nor a tarball"),
            "{err}"
        );
    }

    #[test]
    fn a_tarballs_entry_is_keyed_by_name_and_size() {
        let tmp = tempfile::tempdir().unwrap();
        let tarball = tmp.path().join("linux-9.9.tar.xz");
        std::fs::write(&tarball, [0u8; 100]).unwrap();
        let source = Source::locate("build.kernel", tarball.to_str().unwrap()).unwrap();
        assert_eq!(
            source.entry(Path::new("/cache")).unwrap().unwrap(),
            PathBuf::from("/cache/linux-9.9.tar.xz-100")
        );
        assert_eq!(source.unpacked_bytes(), 1300);
        std::fs::write(tmp.path().join("Makefile"), b"").unwrap();
        std::fs::write(tmp.path().join("Kconfig"), b"").unwrap();
        let tree = Source::locate("build.kernel", tmp.path().to_str().unwrap()).unwrap();
        assert_eq!(tree.entry(Path::new("/cache")).unwrap(), None);
    }
}

//! Where the build workloads keep what they unpack or generate, and how a
//! cache entry comes into being: complete or not at all.
//!
//! Unpacking a kernel takes a minute and 1.5 GB; generating the C project
//! takes a moment. Neither is timed, and both are kept for later runs, in
//! `dir` or, by default, sledge's cache directory. An entry is made in a
//! scratch directory (`sledge-<workload>-<pid>-<n>`, which the next run
//! removes if this sledge is killed midway) and renamed into place only
//! once complete, so an entry that exists is whole.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::workloads::common::workdir;

/// The `dir` parameter of the build workloads.
pub fn dir_param() -> crate::engine::ParamSpec {
    crate::engine::ParamSpec {
        name: "dir",
        role: crate::engine::ParamRole::ScratchDir,
        help: "directory for the cached source tree and the build directories (default: $XDG_CACHE_HOME/sledge/build, else ~/.cache/sledge/build)",
        kind: crate::engine::ParamKind::Text,
        default: "",
    }
}

/// sledge's cache directory for builds: `$XDG_CACHE_HOME/sledge/build`,
/// else `$HOME/.cache/sledge/build` (a relative or empty variable is
/// ignored, as the XDG specification asks), else `sledge-cache/build` in
/// the current directory.
pub fn default_dir() -> PathBuf {
    default_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

fn default_dir_from(xdg: Option<std::ffi::OsString>, home: Option<std::ffi::OsString>) -> PathBuf {
    let absolute = |v: Option<std::ffi::OsString>| {
        v.map(PathBuf::from)
            .filter(|p| p.is_absolute() && !p.as_os_str().is_empty())
    };
    if let Some(xdg) = absolute(xdg) {
        return xdg.join("sledge/build");
    }
    if let Some(home) = absolute(home) {
        return home.join(".cache/sledge/build");
    }
    PathBuf::from("sledge-cache/build")
}

/// The cache directory a case uses: `dir` as given (it must exist), or the
/// default one (made when the case is prepared).
pub fn resolve(dir: &str) -> PathBuf {
    if dir.is_empty() {
        default_dir()
    } else {
        PathBuf::from(dir)
    }
}

/// Where a build case with the `dir` parameter `dir` makes its scratch
/// directories, for the next run to sweep what a killed sledge left
/// there: that directory when one is given, and the default one, where
/// runs without the parameter made theirs.
pub fn scratch_parents(dir: &str) -> Vec<PathBuf> {
    let given = (!dir.is_empty()).then(|| PathBuf::from(dir));
    given.into_iter().chain([default_dir()]).collect()
}

/// Checks that the cache directory `dir` (the parameter) can take `bytes`
/// more: a given directory must exist and be writable; the default one is
/// checked at its nearest existing ancestor, since it is only made when
/// the case is prepared. Nothing is written.
pub fn check_space(workload: &str, dir: &str, bytes: u64) -> anyhow::Result<()> {
    if !dir.is_empty() {
        workdir::check_dir(workload, dir, bytes)?;
        return Ok(());
    }
    let default = default_dir();
    let existing = default
        .ancestors()
        .find(|p| p.is_dir())
        .unwrap_or(Path::new("."));
    workdir::check_dir(workload, &existing.to_string_lossy(), bytes).with_context(|| {
        format!(
            "{workload}: the cache directory {} would be made there (set -p dir=PATH for another place)",
            default.display()
        )
    })?;
    Ok(())
}

/// Makes the cache directory (and its parents) if missing.
pub fn ensure(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the build cache directory `{}`", dir.display()))
}

/// Moves the finished `staged` tree to `entry`. When another sledge
/// finished the same entry first, its copy is kept and `staged` is left
/// for its scratch directory's removal.
pub fn publish(staged: &Path, entry: &Path) -> anyhow::Result<()> {
    match std::fs::rename(staged, entry) {
        Ok(()) => Ok(()),
        Err(_) if entry.is_dir() => Ok(()),
        Err(e) => Err(e).with_context(|| {
            format!(
                "moving the finished tree `{}` to `{}`",
                staged.display(),
                entry.display()
            )
        }),
    }
}

/// A cache entry's name must be one path component made of safe bytes.
pub fn entry_name(name: &str) -> anyhow::Result<String> {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.starts_with('.') || clean.starts_with(workdir::SCRATCH_PREFIX) {
        bail!("`{name}` cannot name a cache entry");
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_parents_are_the_given_directory_and_the_default() {
        assert_eq!(scratch_parents(""), vec![default_dir()]);
        assert_eq!(
            scratch_parents("/srv/build"),
            vec![PathBuf::from("/srv/build"), default_dir()]
        );
    }

    #[test]
    fn the_default_follows_xdg_then_home() {
        assert_eq!(
            default_dir_from(Some("/x".into()), Some("/home/u".into())),
            PathBuf::from("/x/sledge/build")
        );
        assert_eq!(
            default_dir_from(Some("rel".into()), Some("/home/u".into())),
            PathBuf::from("/home/u/.cache/sledge/build")
        );
        assert_eq!(
            default_dir_from(None, None),
            PathBuf::from("sledge-cache/build")
        );
    }

    #[test]
    fn publishing_is_a_rename_and_a_second_copy_loses() {
        let tmp = tempfile::tempdir().unwrap();
        let staged = tmp.path().join("staged");
        std::fs::create_dir(&staged).unwrap();
        std::fs::write(staged.join("f"), b"one").unwrap();
        let entry = tmp.path().join("entry");
        publish(&staged, &entry).unwrap();
        assert!(!staged.exists());
        // Another finished copy: the first one stays.
        std::fs::create_dir(&staged).unwrap();
        std::fs::write(staged.join("f"), b"two").unwrap();
        publish(&staged, &entry).unwrap();
        assert_eq!(std::fs::read(entry.join("f")).unwrap(), b"one");
    }

    #[test]
    fn entry_names_are_one_safe_component() {
        assert_eq!(
            entry_name("linux-source-6.1.tar.xz-138009412").unwrap(),
            "linux-source-6.1.tar.xz-138009412"
        );
        assert_eq!(entry_name("a b/c").unwrap(), "a_b_c");
        assert!(entry_name("..").is_err());
        assert!(entry_name("sledge-build-kernel-1-0").is_err());
    }
}

//! Which sledge other hosts run (a fleet's hosts, the client hosts of a
//! distributed load): this very binary, identified by its version and the
//! hash of its bytes.
//!
//! Two builds of one version can measure differently (another compiler,
//! another commit), so "the same sledge" means the same bytes: the copy on
//! a host is named after both, and a host whose copy answers
//! `--version` with ours is not sent it again.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use sha2::{Digest, Sha256};

/// This binary: where it is, how large, and the name its copies get.
#[derive(Debug, Clone)]
pub struct ThisBinary {
    /// The running executable.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// `sledge-<version>-<first 12 hex digits of its SHA-256>`.
    pub file_name: String,
    /// What `sledge --version` prints: `sledge <version>`.
    pub version_line: String,
    /// The architecture it runs on, as `uname -m` names hosts
    /// (`x86_64`, `i686`; see [`crate::sys::build_arch::host_is`]).
    pub arch: String,
}

impl ThisBinary {
    /// Reads and hashes the running executable.
    pub fn current() -> anyhow::Result<ThisBinary> {
        let path = std::env::current_exe().context("cannot find this sledge's executable")?;
        Self::read(path, expected_arch())
    }

    /// Another build of this sledge, for hosts of another architecture
    /// (`fleet run --binary-for ARCH=PATH`): it must be an executable
    /// built for `arch`, as its ELF header says. It is taken to be of
    /// this sledge's version; a copy that answers `--version` otherwise
    /// is refused on the host.
    pub fn other_build(arch: &str, path: &Path) -> anyhow::Result<ThisBinary> {
        let build = crate::sys::build_arch::of_file(path).with_context(|| {
            format!(
                "{}: not a program this machine can read the architecture of (no such file, or no ELF executable)",
                path.display()
            )
        })?;
        if !crate::sys::build_arch::host_is(arch, &build.arch) {
            anyhow::bail!("{} is built for {}, not {arch}", path.display(), build);
        }
        Self::read(path.to_path_buf(), build.arch)
    }

    fn read(path: PathBuf, arch: String) -> anyhow::Result<ThisBinary> {
        let mut file = std::fs::File::open(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = file
                .read(&mut buffer)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            bytes += n as u64;
        }
        let digest = hasher.finalize();
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        let version = env!("CARGO_PKG_VERSION");
        Ok(ThisBinary {
            path,
            bytes,
            file_name: format!("sledge-{version}-{hex}"),
            version_line: format!("sledge {version}"),
            arch,
        })
    }
}

/// The architecture hosts must have, as `uname -m` prints it: this
/// binary's, unless `SLEDGE_FLEET_ARCH` names another (tests use it to
/// play a host of another architecture; the name is older than its use
/// outside fleet runs).
pub fn expected_arch() -> String {
    std::env::var("SLEDGE_FLEET_ARCH")
        .ok()
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| crate::sys::build_arch::this_build().arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_is_named_after_the_version_and_the_bytes() {
        let binary = ThisBinary::current().unwrap();
        let version = env!("CARGO_PKG_VERSION");
        let prefix = format!("sledge-{version}-");
        assert!(
            binary.file_name.starts_with(&prefix),
            "{}",
            binary.file_name
        );
        let hash = &binary.file_name[prefix.len()..];
        assert_eq!(hash.len(), 12);
        assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(binary.bytes, std::fs::metadata(&binary.path).unwrap().len());
        assert_eq!(binary.version_line, format!("sledge {version}"));
    }

    #[test]
    fn another_build_must_be_a_program_for_its_architecture() {
        let exe = std::env::current_exe().unwrap();
        let this = crate::sys::build_arch::this_build().arch;
        let other = ThisBinary::other_build(&this, &exe).unwrap();
        assert_eq!(other.arch, this);
        let err = ThisBinary::other_build("s390x", &exe)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is built for") && err.contains("not s390x"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("sledge");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        let err = ThisBinary::other_build(&this, &script)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no ELF executable"), "{err}");
    }
}

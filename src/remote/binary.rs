//! Which sledge other hosts run (a fleet's hosts, the client hosts of a
//! distributed load): this very binary, identified by its version and the
//! hash of its bytes.
//!
//! Two builds of one version can measure differently (another compiler,
//! another commit), so "the same sledge" means the same bytes: the copy on
//! a host is named after both, and a host whose copy answers
//! `--version` with ours is not sent it again.

use std::io::Read;
use std::path::PathBuf;

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
}

impl ThisBinary {
    /// Reads and hashes the running executable.
    pub fn current() -> anyhow::Result<ThisBinary> {
        let path = std::env::current_exe().context("cannot find this sledge's executable")?;
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
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
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
}

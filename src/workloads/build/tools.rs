//! What a build needs on the host, checked before anything is unpacked,
//! generated or compiled, so that a missing package costs the user one
//! clear message naming the Debian packages to install, not a failure
//! twenty minutes into a kernel build.
//!
//! Programs are looked up on `PATH` as `make` would find them; headers are
//! looked up by asking the compiler itself to preprocess an `#include`,
//! which sees exactly the include paths the build will see.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::engine::HostLacks;

/// Something a build needs and the Debian package that provides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// What it is, for the message (`flex`, `libelf headers`).
    pub what: &'static str,
    /// How it is found.
    pub probe: Probe,
    /// The Debian package that provides it.
    pub package: &'static str,
}

/// How a [`Need`] is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// An executable of this name on `PATH`.
    Program(&'static str),
    /// A header the C compiler can include (`<gelf.h>`).
    Header(&'static str),
}

const fn program(name: &'static str, package: &'static str) -> Need {
    Need {
        what: name,
        probe: Probe::Program(name),
        package,
    }
}

/// GNU make.
pub const MAKE: Need = program("make", "make");
/// The system C compiler as `cc`, which Debian's build-essential installs
/// (with make, libc headers and binutils).
pub const CC: Need = program("cc", "build-essential");
/// The kernel's Makefile calls its compiler `gcc` (`CC = $(CROSS_COMPILE)gcc`).
pub const GCC: Need = program("gcc", "build-essential");
/// The kernel's Kconfig lexer and parser generators, and `bc` for its
/// generated timer constants.
pub const FLEX: Need = program("flex", "flex");
/// See [`FLEX`].
pub const BISON: Need = program("bison", "bison");
/// See [`FLEX`].
pub const BC: Need = program("bc", "bc");
/// objtool (x86-64 kernels, any config) and resolve_btfids read ELF files
/// through libelf.
pub const LIBELF: Need = Need {
    what: "libelf headers",
    probe: Probe::Header("gelf.h"),
    package: "libelf-dev",
};
/// Module signing and the trusted keyring's certificate tools (defconfig
/// and larger configs) link against OpenSSL.
pub const OPENSSL: Need = Need {
    what: "OpenSSL headers",
    probe: Probe::Header("openssl/opensslv.h"),
    package: "libssl-dev",
};
/// Unpacking a source tarball.
pub const TAR: Need = program("tar", "tar");
/// The decompressors `tar` calls, by the tarball's suffix.
pub const XZ: Need = program("xz", "xz-utils");
/// See [`XZ`].
pub const BZIP2: Need = program("bzip2", "bzip2");
/// See [`XZ`].
pub const GZIP: Need = program("gzip", "gzip");

/// The first executable called `name` on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `cc` can include `header`.
fn header_found(cc: &Path, header: &str) -> bool {
    let Ok(mut child) = Command::new(cc)
        .args(["-E", "-x", "c", "-", "-o", "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = writeln!(stdin, "#include <{header}>");
    }
    child.wait().is_ok_and(|status| status.success())
}

/// The needs of `needs` that this host lacks. Headers cannot be looked
/// for without a compiler; they are then left out (the compiler is
/// reported missing, and the next attempt checks them).
pub fn missing(needs: &[Need]) -> Vec<Need> {
    let cc = find_program("gcc").or_else(|| find_program("cc"));
    needs
        .iter()
        .filter(|need| match need.probe {
            Probe::Program(name) => find_program(name).is_none(),
            Probe::Header(header) => cc.as_deref().is_some_and(|cc| !header_found(cc, header)),
        })
        .copied()
        .collect()
}

/// Checks `needs` and fails with one message that names everything
/// missing and the Debian packages that provide it (a [`HostLacks`], so
/// that a profile skips the case instead of refusing the run).
pub fn require(workload: &str, needs: &[Need]) -> anyhow::Result<()> {
    let missing = missing(needs);
    if missing.is_empty() {
        return Ok(());
    }
    Err(HostLacks(missing_message(workload, &missing)).into())
}

/// The message for `missing`: what, and the packages in one `apt-get`
/// line (each package once, in order).
pub fn missing_message(workload: &str, missing: &[Need]) -> String {
    let what: Vec<String> = missing
        .iter()
        .map(|need| match need.probe {
            Probe::Program(name) => format!("`{name}`"),
            Probe::Header(header) => format!("{} (<{header}>)", need.what),
        })
        .collect();
    let mut packages: Vec<&str> = Vec::new();
    for need in missing {
        if !packages.contains(&need.package) {
            packages.push(need.package);
        }
    }
    format!(
        "{workload} needs {} which this host lacks (not found on PATH or by the C compiler); on Debian: apt-get install {}",
        what.join(", "),
        packages.join(" ")
    )
}

/// The decompressor `tar` needs for a tarball named `name`, if any.
pub fn decompressor_for(name: &str) -> Option<Need> {
    if name.ends_with(".xz") || name.ends_with(".txz") {
        Some(XZ)
    } else if name.ends_with(".bz2") || name.ends_with(".tbz2") {
        Some(BZIP2)
    } else if name.ends_with(".gz") || name.ends_with(".tgz") {
        Some(GZIP)
    } else {
        None
    }
}

/// The first line of `PROGRAM --version` (`gcc (Debian 12.2.0-14) 12.2.0`,
/// `GNU Make 4.3`), or `unknown` when it does not say.
pub fn version_line(program: &Path) -> String {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .map(|line| line.trim().to_string())
        })
        .filter(|line| !line.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_each_need_and_each_package_once() {
        let msg = missing_message("build.kernel", &[CC, MAKE, FLEX, LIBELF, CC]);
        assert!(
            msg.starts_with("build.kernel needs `cc`, `make`, `flex`"),
            "{msg}"
        );
        assert!(msg.contains("libelf headers (<gelf.h>)"), "{msg}");
        assert!(
            msg.ends_with("apt-get install build-essential make flex libelf-dev"),
            "{msg}"
        );
    }

    #[test]
    fn decompressors_follow_the_suffix() {
        assert_eq!(decompressor_for("linux-source-6.1.tar.xz"), Some(XZ));
        assert_eq!(decompressor_for("linux.tar.bz2"), Some(BZIP2));
        assert_eq!(decompressor_for("linux.tgz"), Some(GZIP));
        assert_eq!(decompressor_for("linux.tar"), None);
    }

    #[test]
    fn programs_are_found_on_path() {
        assert!(find_program("sh").is_some());
        assert!(find_program("sledge-no-such-program").is_none());
        let sh = find_program("sh").unwrap();
        assert!(missing(&[program("sh", "dash")]).is_empty());
        assert!(sh.is_absolute());
    }
}

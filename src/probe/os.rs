//! Kernel, architecture, distribution and host name.
//!
//! `uname(2)` through libc gives the running kernel exactly as `uname -r`/`-v`
//! would, without spawning a process; `/proc/sys/kernel/*` stands in when the
//! call fails. The distribution comes from `os-release(5)`.

use serde::{Deserialize, Serialize};

use super::sysfs::{read_text, read_trimmed};

/// Operating system of the host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsInfo {
    /// Kernel release (`uname -r`), e.g. `"6.8.0-45-generic"`.
    pub kernel: String,
    /// Kernel build version (`uname -v`), e.g. `"#45-Ubuntu SMP PREEMPT_DYNAMIC ..."`.
    pub kernel_version: String,
    /// Machine architecture (`uname -m`), e.g. `"x86_64"`, `"aarch64"`.
    pub arch: String,
    /// Distribution name, `PRETTY_NAME` of os-release, e.g.
    /// `"Debian GNU/Linux 12 (bookworm)"`.
    pub distribution: Option<String>,
}

/// The fields of `struct utsname` the inventory uses.
#[derive(Debug, Clone, Default, PartialEq)]
struct Uname {
    /// `nodename`.
    nodename: String,
    /// `release`.
    release: String,
    /// `version`.
    version: String,
    /// `machine`.
    machine: String,
}

/// Calls `uname(2)`.
fn uname() -> Option<Uname> {
    // SAFETY: utsname is plain old data, so all-zero is a valid value, and
    // uname only writes NUL-terminated strings into its fixed-size fields.
    let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable utsname.
    if unsafe { libc::uname(&mut buf) } != 0 {
        return None;
    }
    Some(Uname {
        nodename: c_field(&buf.nodename),
        release: c_field(&buf.release),
        version: c_field(&buf.version),
        machine: c_field(&buf.machine),
    })
}

/// Converts a NUL-terminated `c_char` array to a `String`, lossily.
fn c_field(field: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| u8::from_ne_bytes(c.to_ne_bytes()))
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parses `os-release(5)` text into a display name: `PRETTY_NAME`, else
/// `NAME` with `VERSION`, else `None`.
pub(crate) fn parse_os_release(text: &str) -> Option<String> {
    let mut pretty = None;
    let mut name = None;
    let mut version = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = unquote(value);
        if value.is_empty() {
            continue;
        }
        match key.trim() {
            "PRETTY_NAME" => pretty = Some(value),
            "NAME" => name = Some(value),
            "VERSION" => version = Some(value),
            _ => {}
        }
    }
    pretty.or_else(|| match (name, version) {
        (Some(name), Some(version)) => Some(format!("{name} {version}")),
        (name, _) => name,
    })
}

/// Undoes shell-style quoting of an os-release value: `"..."` with `\`
/// escapes, `'...'` verbatim, or a bare word.
fn unquote(value: &str) -> String {
    let value = value.trim();
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.to_string();
    }
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(escaped) = chars.next() {
                out.push(escaped);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The host name: `uname` nodename, else `/proc/sys/kernel/hostname`, else
/// empty.
pub fn hostname() -> String {
    uname()
        .map(|u| u.nodename)
        .filter(|n| !n.is_empty())
        .or_else(|| read_trimmed("/proc/sys/kernel/hostname"))
        .unwrap_or_default()
}

/// Probes kernel, architecture and distribution.
pub(crate) fn probe() -> OsInfo {
    let uts = uname().unwrap_or_default();
    let or_file = |value: String, path: &str| {
        if value.is_empty() {
            read_trimmed(path).unwrap_or_default()
        } else {
            value
        }
    };
    let arch = if uts.machine.is_empty() {
        std::env::consts::ARCH.to_string()
    } else {
        uts.machine
    };
    OsInfo {
        kernel: or_file(uts.release, "/proc/sys/kernel/osrelease"),
        kernel_version: or_file(uts.version, "/proc/sys/kernel/version"),
        arch,
        distribution: read_text("/etc/os-release")
            .or_else(|| read_text("/usr/lib/os-release"))
            .and_then(|text| parse_os_release(&text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OS_RELEASE_DEBIAN: &str = r#"PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
"#;

    const OS_RELEASE_UBUNTU: &str = r#"PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
"#;

    #[test]
    fn pretty_name_with_quotes() {
        assert_eq!(
            parse_os_release(OS_RELEASE_DEBIAN).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release(OS_RELEASE_UBUNTU).as_deref(),
            Some("Ubuntu 24.04.1 LTS")
        );
    }

    #[test]
    fn other_quoting_styles() {
        assert_eq!(
            parse_os_release("PRETTY_NAME='Alpine Linux v3.20'\n").as_deref(),
            Some("Alpine Linux v3.20")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=Arch\n").as_deref(),
            Some("Arch")
        );
        assert_eq!(
            parse_os_release(r#"PRETTY_NAME="Say \"hi\" \\ \$HOME""#).as_deref(),
            Some(r#"Say "hi" \ $HOME"#)
        );
    }

    #[test]
    fn falls_back_to_name_and_version() {
        let text = "# comment\nNAME=\"Fedora Linux\"\nVERSION=\"40 (Server Edition)\"\n";
        assert_eq!(
            parse_os_release(text).as_deref(),
            Some("Fedora Linux 40 (Server Edition)")
        );
        assert_eq!(
            parse_os_release("NAME=Gentoo\nPRETTY_NAME=\"\"\n").as_deref(),
            Some("Gentoo")
        );
        assert_eq!(parse_os_release(""), None);
    }

    #[test]
    fn c_fields_stop_at_nul() {
        let field: Vec<libc::c_char> = b"vm\0junk"
            .iter()
            .map(|&b| libc::c_char::from_ne_bytes([b]))
            .collect();
        assert_eq!(c_field(&field), "vm");
    }
}

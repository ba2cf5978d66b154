//! Making sure a host has this very sledge binary: the step a fleet run
//! and a distributed load share before they start anything there.
//!
//! The host is checked first (Linux, the architecture, free space), so a
//! host that cannot run the copy is refused before anything is sent. The
//! copy goes to `DIR/bin/<file name>` (see [`ThisBinary`]) and stays there
//! for the next run; a host whose copy answers `--version` as this binary
//! does is not sent it again.

use super::binary::ThisBinary;
use super::connection::Connection;
use super::shell_quote::quote;

/// The directory on a host for sledge's copies (and a fleet's scratch
/// directories) unless the user names another: under the login
/// directory, so no privileges are needed.
pub const DEFAULT_DIR: &str = ".cache/sledge/fleet";

/// A directory on the host as the user gave it, ready for the remote
/// shell: `~/` dropped (a relative path is from the login directory
/// anyway, and a quoted `~` would not expand), or an error for what is no
/// path at all.
pub fn remote_dir(given: &str) -> Result<String, String> {
    let dir = given.strip_prefix("~/").unwrap_or(given);
    if dir.trim().is_empty() || dir.chars().any(char::is_control) {
        return Err(format!("{given:?}: expected a directory path"));
    }
    Ok(dir.to_string())
}

/// Where the copy goes and what it is for.
#[derive(Debug, Clone, Copy)]
pub struct Placement<'a> {
    /// The directory on the host (`bin/` under it holds the copies); a
    /// relative path is from the login directory.
    pub dir: &'a str,
    /// Space that must stay free in `dir` besides the copy, for what the
    /// caller will write there.
    pub extra_free_bytes: u64,
    /// What needs the space, for the error when it is short ("a fleet
    /// run").
    pub purpose: &'a str,
}

/// The copy on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The absolute path of the sledge copy.
    pub binary: String,
    /// The placement's directory, absolute.
    pub dir: String,
    /// Whether it was copied just now (else it was there already).
    pub copied: bool,
}

/// Checks the host and copies the build of `binaries` made for its
/// architecture (this sledge first, then the builds given for other
/// architectures) into `place.dir/bin` unless the same bytes are there
/// already. `note` is told when a copy starts (it
/// takes a while on a slow link). Errors say what the host lacks.
pub fn ensure_binary(
    connection: &Connection,
    binaries: &[ThisBinary],
    place: Placement,
    note: &mut dyn FnMut(String),
) -> Result<Installed, String> {
    let dir = quote(place.dir);
    // One round trip: the host, and what each build's copy answers.
    let mut probe = format!(
        "set -e; uname -s; uname -m; mkdir -p {dir}/bin; cd {dir}; pwd; \
         df -Pk . | awk 'NR==2 {{print $4}}'"
    );
    for binary in binaries {
        let bin = quote(&format!("bin/{}", binary.file_name));
        probe.push_str(&format!(
            "; if [ -x {bin} ] && {bin} --version 2>/dev/null; then :; else echo missing; fi"
        ));
    }
    let said = connection.run(&probe).map_err(|e| e.to_string())?;
    let (os, arch, abs_dir, free_kib, versions) = answer_lines(&said, binaries.len())?;
    if os != "Linux" {
        return Err(format!("the host runs {os}; sledge runs on Linux only"));
    }
    let (binary, version) = binaries
        .iter()
        .zip(versions)
        .find(|(b, _)| crate::sys::build_arch::host_is(arch, &b.arch))
        .ok_or_else(|| {
            let built: Vec<&str> = binaries.iter().map(|b| b.arch.as_str()).collect();
            format!(
                "the host's architecture is {arch}, this sledge is built for {}: \
                 run sledge from a {arch} machine for it, or give a build for it with \
                 --binary-for {arch}=PATH",
                built.join(" and ")
            )
        })?;
    let copy = version != binary.version_line;
    let needed = place.extra_free_bytes + if copy { binary.bytes } else { 0 };
    let free = free_kib.parse::<u64>().map(|k| k * 1024).unwrap_or(0);
    if free < needed {
        return Err(format!(
            "only {} MiB free in {abs_dir}, {} needs {} MiB there",
            free >> 20,
            place.purpose,
            needed.div_ceil(1 << 20)
        ));
    }
    let remote_binary = format!("{abs_dir}/bin/{}", binary.file_name);
    if copy {
        note(format!(
            "copying this sledge ({} MiB) to {remote_binary}",
            binary.bytes.div_ceil(1 << 20)
        ));
        connection
            .upload(&binary.path, &remote_binary, 0o755)
            .map_err(|e| e.to_string())?;
        let answer = connection
            .run(&format!("{} --version", quote(&remote_binary)))
            .map_err(|e| format!("the copied sledge does not start there: {e}"))?;
        if answer.trim() != binary.version_line {
            return Err(format!(
                "the copied sledge answers {:?} to --version, expected {:?}",
                answer.trim(),
                binary.version_line
            ));
        }
    }
    Ok(Installed {
        binary: remote_binary,
        dir: abs_dir.to_string(),
        copied: copy,
    })
}

/// The host's answer to the checks: its OS, architecture, the absolute
/// directory, the free KiB there, then one `--version` answer (or
/// `missing`) for each of `builds` builds; each line exactly as printed:
/// the directory from `pwd` is a path, and a path may end in a space
/// (`--remote-dir '/tmp/x '` is not `/tmp/x`), so nothing is trimmed but
/// the line ends. (A path holding a newline is refused by
/// [`remote_dir`].)
#[allow(clippy::type_complexity)]
fn answer_lines(said: &str, builds: usize) -> Result<(&str, &str, &str, &str, Vec<&str>), String> {
    let lines: Vec<&str> = said.lines().collect();
    match lines[..] {
        [os, arch, abs_dir, free_kib, ref versions @ ..] if versions.len() >= builds => {
            Ok((os, arch, abs_dir, free_kib, versions[..builds].to_vec()))
        }
        _ => Err(format!(
            "did not understand the host's answer to the checks: {said:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_in_the_answer_is_taken_exactly() {
        let said = "Linux\nx86_64\n/tmp/x \n1024\nsledge 0.1.0\n";
        assert_eq!(
            answer_lines(said, 1).unwrap(),
            ("Linux", "x86_64", "/tmp/x ", "1024", vec!["sledge 0.1.0"])
        );
        let said = "Linux\nx86_64\n /srv/a b\t\n1024\nmissing\nsledge 0.1.0\n";
        let (_, _, dir, _, versions) = answer_lines(said, 2).unwrap();
        assert_eq!(
            (dir, versions),
            (" /srv/a b\t", vec!["missing", "sledge 0.1.0"])
        );
        let err = answer_lines("Linux\nx86_64\n", 1).unwrap_err();
        assert!(err.contains("did not understand"), "{err}");
    }

    #[test]
    fn a_remote_dir_drops_its_tilde_and_must_be_a_path() {
        assert_eq!(remote_dir("~/bench").unwrap(), "bench");
        assert_eq!(remote_dir("/srv/sledge").unwrap(), "/srv/sledge");
        assert_eq!(remote_dir(DEFAULT_DIR).unwrap(), DEFAULT_DIR);
        for bad in ["", "  ", "~/", "a\nb"] {
            let err = remote_dir(bad).unwrap_err();
            assert!(err.contains("expected a directory path"), "{bad:?}: {err}");
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}

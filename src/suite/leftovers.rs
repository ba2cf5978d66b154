//! What a sledge that was killed left behind, found and removed by the
//! next run: scratch directories and the dynamic page's SQLite files.
//!
//! Every such resource carries the id of the process that made it in its
//! name (`sledge-fileio-4242-0`, `sledge-http_4242_0_1a2b3c4d.db`), so the
//! next run can tell whose it is. A resource is left alone while a process
//! with that pid is alive and was already running when the resource last
//! changed (it may be in use); otherwise its maker is gone and it is
//! removed, and the run says what it removed. (The
//! database tables of `http.dynamic` on PostgreSQL or MariaDB are found
//! the same way when the page connects to that database; runs left
//! `running` are marked by the store.)

use std::path::{Path, PathBuf};

use crate::monitor::procfs::owner_alive;

/// What was removed, for the run to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The path removed.
    pub path: PathBuf,
    /// The process that had made it.
    pub owner_pid: u32,
}

/// Removes, from each of `dirs`, the scratch directories whose maker is
/// gone (see the module documentation), and from the temporary directory
/// the dynamic page's SQLite files whose maker is gone. Errors (a
/// directory that cannot be read, a file that cannot be removed) leave the
/// resource in place: cleaning up must never stop a run.
pub fn sweep(dirs: &[PathBuf]) -> Vec<Removed> {
    let mut removed = Vec::new();
    let mut seen = Vec::new();
    for dir in dirs {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if seen.contains(&dir) {
            continue;
        }
        seen.push(dir.clone());
        removed.extend(sweep_dir(&dir, scratch_owner, true));
    }
    removed.extend(sweep_dir(&std::env::temp_dir(), page_file_owner, false));
    removed
}

/// Removes the entries of `dir` that `owner_of` recognises (a directory
/// when `directories`, else a file) and whose owner is gone.
fn sweep_dir(dir: &Path, owner_of: fn(&str) -> Option<u32>, directories: bool) -> Vec<Removed> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner_pid) = name.to_str().and_then(owner_of) else {
            continue;
        };
        let changed = entry.metadata().and_then(|m| m.modified()).ok();
        if owner_alive(owner_pid, changed) {
            continue;
        }
        // Never follow a symbolic link out of the directory.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let result = match (directories, kind.is_dir(), kind.is_file()) {
            (true, true, _) => std::fs::remove_dir_all(&path),
            (false, _, true) => std::fs::remove_file(&path),
            _ => continue,
        };
        if result.is_ok() {
            removed.push(Removed { path, owner_pid });
        }
    }
    removed
}

/// The pid in a scratch directory's name, `sledge-<workload>-<pid>-<n>`
/// (see `workloads::storage::workdir::ScratchDir`).
fn scratch_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("sledge-")?;
    let mut parts = rest.rsplitn(3, '-');
    let serial = parts.next()?;
    let pid = parts.next()?;
    let workload = parts.next()?;
    if workload.is_empty() || !serial.bytes().all(|b| b.is_ascii_digit()) || serial.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// The pid in the name of the dynamic page's SQLite file or one of its
/// journals, `sledge-http_<pid>_<n>_<nanos>.db[-journal|-wal|-shm]`.
fn page_file_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("sledge-http_")?;
    let stem = ["", "-journal", "-wal", "-shm"]
        .iter()
        .find_map(|suffix| rest.strip_suffix(&format!(".db{suffix}")))?;
    let mut parts = stem.split('_');
    let pid = parts.next()?.parse().ok()?;
    let serial = parts.next()?;
    let nanos = parts.next()?;
    (serial.bytes().all(|b| b.is_ascii_digit())
        && nanos.bytes().all(|b| b.is_ascii_hexdigit())
        && parts.next().is_none())
    .then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_their_owner() {
        assert_eq!(scratch_owner("sledge-fileio-4242-0"), Some(4242));
        assert_eq!(scratch_owner("sledge-unixbench-execl-17-12"), Some(17));
        assert_eq!(scratch_owner("sledge-results.db"), None);
        assert_eq!(scratch_owner("sledge-fileio-x-0"), None);
        assert_eq!(scratch_owner("sledge--4242-0"), None);
        assert_eq!(scratch_owner("other-fileio-4242-0"), None);
        assert_eq!(
            page_file_owner("sledge-http_4242_0_1a2b3c4d.db"),
            Some(4242)
        );
        assert_eq!(
            page_file_owner("sledge-http_4242_0_1a2b3c4d.db-journal"),
            Some(4242)
        );
        assert_eq!(page_file_owner("sledge-http_4242_0_1a2b3c4d.txt"), None);
        assert_eq!(page_file_owner("sledge-http_x_0_1a.db"), None);
    }

    /// A pid that no process has: a child that exited and was reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_gone_makers_scratch_is_removed_and_a_live_sledges_kept() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dead_pid();
        let stale = dir.path().join(format!("sledge-fileio-{gone}-0"));
        std::fs::create_dir_all(stale.join("sub")).unwrap();
        std::fs::write(stale.join("sub/data"), b"x").unwrap();
        // A live process's scratch is kept, whatever the program is called.
        let live = dir
            .path()
            .join(format!("sledge-disk-{}-3", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let unrelated = dir.path().join("sledge-results.db");
        std::fs::write(&unrelated, b"keep").unwrap();
        // A file with a scratch name is not a scratch directory.
        let file = dir.path().join(format!("sledge-fileio-{gone}-1"));
        std::fs::write(&file, b"keep").unwrap();

        let removed = sweep(&[dir.path().to_path_buf(), dir.path().to_path_buf()]);
        let ours: Vec<&Removed> = removed
            .iter()
            .filter(|r| {
                r.path
                    .starts_with(std::fs::canonicalize(dir.path()).unwrap())
            })
            .collect();
        assert_eq!(ours.len(), 1, "{removed:?}");
        assert_eq!(ours[0].owner_pid, gone);
        assert!(!stale.exists());
        assert!(live.exists() && unrelated.exists() && file.exists());
    }

    #[test]
    fn any_live_programs_scratch_is_kept_unless_its_pid_was_taken_over_later() {
        let dir = tempfile::tempdir().unwrap();
        // A live process that is not called sledge (sledge's code also runs
        // inside other programs, such as the integration tests).
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = other.id();
        let fresh = dir.path().join(format!("sledge-fileio-{pid}-0"));
        std::fs::create_dir(&fresh).unwrap();
        // The same pid on a directory last changed long before that
        // process started: the maker was another process, now gone.
        let old = dir.path().join(format!("sledge-fileio-{pid}-1"));
        std::fs::create_dir(&old).unwrap();
        std::fs::File::open(&old)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .unwrap();

        let removed = sweep(&[dir.path().to_path_buf()]);
        other.kill().unwrap();
        other.wait().unwrap();
        let ours: Vec<&Removed> = removed.iter().filter(|r| r.owner_pid == pid).collect();
        assert_eq!(ours.len(), 1, "{removed:?}");
        assert!(fresh.exists());
        assert!(!old.exists());
    }
}

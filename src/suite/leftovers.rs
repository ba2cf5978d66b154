//! What a sledge that was killed left behind, found and removed by the
//! next run: scratch directories, and the dynamic page's SQLite files
//! (which live in a scratch directory of their own in the temporary
//! directory).
//!
//! Only what sledge can prove it made is ever removed: a directory whose
//! name starts with `sledge-` and that holds a well-formed mark naming it
//! and its maker (`monitor::maker_mark`), whose maker is gone (another
//! boot, no process with that pid, or one started at another time). A
//! directory with a sledge-like name but no such mark is the user's and is
//! never touched, nor is anything that is not a directory. The run says
//! what it removed. A PostgreSQL server that `db=postgres-local` left
//! running in such a directory is stopped first. (The page's tables on PostgreSQL or MariaDB carry the
//! same mark and are dropped the same way when the page connects to that
//! database; runs left `running` are marked by the store.)

use std::path::{Path, PathBuf};

use super::plan::Plan;
use crate::monitor::maker_mark::{MARKED_PREFIX, read_mark};

/// What was removed, for the run to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The path removed.
    pub path: PathBuf,
    /// The process that had made it.
    pub owner_pid: u32,
}

/// The directories a run of `plan` writes in, where a killed sledge may
/// have left its scratch directories: the current directory and what each
/// case's workload says it uses ([`Workload::scratch_parents`]).
///
/// [`Workload::scratch_parents`]: crate::engine::Workload::scratch_parents
pub fn plan_dirs(plan: &Plan) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    for case in &plan.cases {
        dirs.extend(case.workload.scratch_parents(&case.params));
    }
    dirs
}

/// Removes, from each of `dirs` and from the temporary directory, the
/// marked directories whose maker is gone (see the module documentation).
/// Errors (a directory that cannot be read, one that cannot be removed)
/// leave it in place: cleaning up must never stop a run.
pub fn sweep(dirs: &[PathBuf]) -> Vec<Removed> {
    let mut removed = Vec::new();
    let mut seen = Vec::new();
    for dir in dirs.iter().chain(std::iter::once(&std::env::temp_dir())) {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if seen.contains(&dir) {
            continue;
        }
        seen.push(dir.clone());
        removed.extend(sweep_dir(&dir));
    }
    removed
}

/// Removes the marked directories in `dir` whose maker is gone.
fn sweep_dir(dir: &Path) -> Vec<Removed> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(MARKED_PREFIX))
        {
            continue;
        }
        // Never follow a symbolic link out of the directory.
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Some(mark) = read_mark(&path) else {
            continue;
        };
        if !mark.maker_gone() {
            continue;
        }
        stop_postgres_inside(&path);
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(Removed {
                path,
                owner_pid: mark.maker.pid,
            });
        }
    }
    removed
}

/// How long a leftover PostgreSQL server gets to stop before its
/// directory is removed anyway.
const SERVER_STOP_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Stops the PostgreSQL server that `db=postgres-local` started in the
/// leftover directory `dir` (`data/postmaster.pid`), if it still runs: a
/// killed sledge cannot stop it, and its directory going would leave it
/// running with nothing to stop it by. The pid file alone proves nothing
/// (the pid may be reused), so only a process whose working directory is
/// that very data directory (a postmaster's is) is signalled: SIGQUIT,
/// PostgreSQL's immediate shutdown, then SIGKILL if it is still there
/// after [`SERVER_STOP_LIMIT`] (its backends exit when they see it gone).
fn stop_postgres_inside(dir: &Path) {
    let data = dir.join("data");
    let Some(pid) = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|text| text.lines().next()?.trim().parse::<i32>().ok())
        .filter(|&pid| pid > 0)
    else {
        return;
    };
    let Ok(data) = std::fs::canonicalize(&data) else {
        return;
    };
    let runs_there = || {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == data)
            && crate::monitor::procfs::read_pid_stat(pid as u32).is_some_and(|s| s.state != 'Z')
    };
    if !runs_there() {
        return;
    }
    // SAFETY: kill has no memory preconditions; the process was checked
    // to be the server of this directory just above.
    unsafe { libc::kill(pid, libc::SIGQUIT) };
    let deadline = std::time::Instant::now() + SERVER_STOP_LIMIT;
    while runs_there() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if runs_there() {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::maker_mark::{MARK_FILE, MakerMark, MarkedDir};

    /// A pid that no process has: a child that exited and was reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// Marks `dir` (which must exist) as made by the process `pid` of this
    /// boot, started when this process did.
    fn mark_as_made_by(dir: &Path, pid: u32) {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let mut mark = MakerMark::new(name).unwrap();
        mark.maker.pid = pid;
        std::fs::write(dir.join(MARK_FILE), mark.to_line()).unwrap();
    }

    fn removed_under(removed: &[Removed], dir: &Path) -> Vec<PathBuf> {
        let dir = std::fs::canonicalize(dir).unwrap();
        removed
            .iter()
            .filter(|r| r.path.starts_with(&dir))
            .map(|r| r.path.clone())
            .collect()
    }

    #[test]
    fn a_plan_writes_where_its_workloads_say() {
        let plan = crate::suite::plan(
            &[
                "fileio".to_string(),
                "build.c".to_string(),
                "cpu.primes".to_string(),
            ],
            &[
                "fileio:dir=/srv/data".to_string(),
                "build.c:dir=/srv/cache".to_string(),
            ],
            1,
        )
        .unwrap();
        let cwd = std::env::current_dir().unwrap();
        let build_cache = crate::workloads::build::cache::default_dir();
        assert_eq!(
            plan_dirs(&plan),
            vec![
                cwd,
                PathBuf::from("/srv/data"),
                PathBuf::from("/srv/cache"),
                build_cache
            ]
        );
    }

    #[test]
    fn a_gone_makers_scratch_is_removed_and_a_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dead_pid();
        let stale = dir.path().join(format!("sledge-fileio-{gone}-0"));
        std::fs::create_dir_all(stale.join("sub")).unwrap();
        std::fs::write(stale.join("sub/data"), b"x").unwrap();
        mark_as_made_by(&stale, gone);
        // This live process's own scratch is kept.
        let live = MarkedDir::create(dir.path(), "disk").unwrap();

        let removed = sweep(&[dir.path().to_path_buf(), dir.path().to_path_buf()]);
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            removed_under(&removed, dir.path()),
            [canonical.join(stale.file_name().unwrap())],
            "{removed:?}"
        );
        assert_eq!(
            removed
                .iter()
                .find(|r| r.path.ends_with(stale.file_name().unwrap()))
                .unwrap()
                .owner_pid,
            gone
        );
        assert!(!stale.exists());
        assert!(live.path().exists());
    }

    #[test]
    fn directories_without_a_valid_mark_are_never_removed_whatever_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dead_pid();
        // A live process's pid whose start predates the directory, and a
        // gone one: neither matters without a mark.
        let mut unmarked = vec![
            dir.path().join("sledge-results-2024-03"),
            dir.path().join("sledge-backup-7-0"),
            dir.path().join(format!("sledge-fileio-{gone}-0")),
            dir.path().join(format!("sledge-http_{gone}_0_1a2b3c4d.db")),
        ];
        for path in &unmarked {
            std::fs::create_dir(path).unwrap();
            std::fs::write(path.join("precious"), b"keep").unwrap();
        }
        // A mark copied from another directory names that one, not this.
        let copied = dir.path().join(format!("sledge-disk-{gone}-1"));
        std::fs::create_dir(&copied).unwrap();
        let mut foreign = MakerMark::new(&format!("sledge-disk-{gone}-2")).unwrap();
        foreign.maker.pid = gone;
        std::fs::write(copied.join(MARK_FILE), foreign.to_line()).unwrap();
        unmarked.push(copied);
        // A mark that is not one.
        let garbled = dir.path().join(format!("sledge-disk-{gone}-3"));
        std::fs::create_dir(&garbled).unwrap();
        std::fs::write(
            garbled.join(MARK_FILE),
            format!("sledge-made/1 maker=x:{gone}:1"),
        )
        .unwrap();
        unmarked.push(garbled);
        // A file with a scratch name, even holding a valid mark's text, is
        // not a scratch directory; nor is a link to a marked directory.
        let file = dir.path().join(format!("sledge-fileio-{gone}-4"));
        std::fs::write(&file, foreign.to_line()).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join(format!("sledge-fileio-{gone}-5"));
        std::fs::create_dir(&target).unwrap();
        mark_as_made_by(&target, gone);
        let link = dir.path().join(format!("sledge-fileio-{gone}-5"));
        std::os::unix::fs::symlink(&target, &link).unwrap();

        let removed = sweep(&[dir.path().to_path_buf()]);
        assert!(
            removed_under(&removed, dir.path()).is_empty(),
            "{removed:?}"
        );
        for path in &unmarked {
            assert!(path.exists(), "{path:?} removed");
        }
        assert!(file.exists() && target.exists() && link.exists());
    }

    #[test]
    fn a_scratch_whose_pid_was_taken_over_by_a_later_process_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A live process that is not the maker: same pid, another start.
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = other.id();
        let reused = dir.path().join(format!("sledge-fileio-{pid}-0"));
        std::fs::create_dir(&reused).unwrap();
        let mut mark = MakerMark::new(reused.file_name().unwrap().to_str().unwrap()).unwrap();
        mark.maker.pid = pid;
        mark.maker.starttime = 1;
        std::fs::write(reused.join(MARK_FILE), mark.to_line()).unwrap();
        // The live process's own scratch (as it would mark it) is kept.
        let kept = dir.path().join(format!("sledge-fileio-{pid}-1"));
        std::fs::create_dir(&kept).unwrap();
        let mut mark = MakerMark::new(kept.file_name().unwrap().to_str().unwrap()).unwrap();
        mark.maker = crate::monitor::procfs::ProcessIdentity {
            pid,
            starttime: crate::monitor::procfs::read_pid_stat(pid)
                .unwrap()
                .starttime,
            ..mark.maker
        };
        std::fs::write(kept.join(MARK_FILE), mark.to_line()).unwrap();

        let removed = sweep(&[dir.path().to_path_buf()]);
        other.kill().unwrap();
        other.wait().unwrap();
        assert_eq!(removed_under(&removed, dir.path()).len(), 1, "{removed:?}");
        assert!(!reused.exists());
        assert!(kept.exists());
    }

    #[test]
    fn a_local_postgres_left_by_a_killed_sledge_is_stopped_and_removed() {
        use crate::workloads::db::local_pg::{LocalPostgres, server_bin};
        if server_bin().is_err() {
            crate::say!("skipped: no PostgreSQL server binaries");
            return;
        }
        let server = LocalPostgres::start("").unwrap();
        let data = server.data_dir().to_path_buf();
        let dir = data.parent().unwrap().to_path_buf();
        let postmaster: u32 = std::fs::read_to_string(data.join("postmaster.pid"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // As if the sledge that started it had been killed.
        mark_as_made_by(&dir, dead_pid());
        let removed = sweep(&[]);
        assert!(removed.iter().any(|r| r.path == dir), "{removed:?}");
        assert!(!dir.exists());
        let stopped =
            crate::monitor::procfs::read_pid_stat(postmaster).is_none_or(|s| s.state == 'Z');
        assert!(stopped, "the server {postmaster} still runs");
        // Nothing is left for it to stop or remove.
        drop(server);
    }
}

//! Processes a case declares as part of its workload although they are
//! not sledge's descendants: a database server that `pg_ctl` detached
//! (its postmaster's parent is init once `pg_ctl` returns), a server on
//! this host the case loads by URL, a web server named by `server=`.
//!
//! The monitor counts every CPU tick outside sledge's process tree as
//! "other processes", and a trial with enough of it is flagged busy and
//! replaced. For a client-server workload on one host that is wrong: the
//! server's CPU is what the trial measures. So a case claims such a
//! process here for as long as it holds the returned [`OwnProcess`], and
//! [`read_own_ticks`], what the monitor reads, walks each claimed
//! process's tree beside sledge's own.
//!
//! A claim names the process by pid *and* start time, so a pid reused by
//! an unrelated process after the server exited is never counted.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::procfs;

/// One claimed process.
#[derive(Debug, Clone, Copy)]
struct Claim {
    /// Tells this claim from another claim of the same process.
    id: u64,
    pid: u32,
    starttime: u64,
}

/// The claims of this process, whichever thread made them: the monitor's
/// sampling thread reads them while the case's thread holds them.
static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

/// A claim on a process (and its descendants): counted as sledge's own by
/// the monitor until this is dropped.
#[derive(Debug)]
pub struct OwnProcess {
    id: u64,
    pid: u32,
}

impl OwnProcess {
    /// The claimed process's id.
    pub fn pid(&self) -> u32 {
        self.pid
    }
}

impl Drop for OwnProcess {
    fn drop(&mut self) {
        // A poisoned lock only means another thread panicked while
        // holding it; the list itself is still whole.
        let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
        claims.retain(|claim| claim.id != self.id);
    }
}

/// Claims process `pid` and everything below it as the workload's own;
/// `None` when no such process runs (nothing to claim).
pub fn claim(pid: u32) -> Option<OwnProcess> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let stat = procfs::read_pid_stat(pid)?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    claims.push(Claim {
        id,
        pid,
        starttime: stat.starttime,
    });
    Some(OwnProcess { id, pid })
}

/// The claimed processes that still run (same pid, same start time).
pub fn claimed() -> Vec<u32> {
    let claims: Vec<Claim> = CLAIMS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut roots: Vec<u32> = claims
        .into_iter()
        .filter(|claim| {
            procfs::read_pid_stat(claim.pid).is_some_and(|stat| stat.starttime == claim.starttime)
        })
        .map(|claim| claim.pid)
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// CPU ticks of sledge's process tree and of every claimed process's
/// tree (see [`procfs::read_tree_ticks`]); `None` without `/proc`.
pub fn read_own_ticks() -> Option<u64> {
    procfs::read_tree_ticks(&claimed())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that is not this test's descendant: `sh` starts a
    /// spinning grandchild and exits, so the grandchild is re-parented
    /// (to init or a subreaper), as `pg_ctl`'s postmaster is.
    fn detached_spinner(seconds: u32) -> u32 {
        let output = std::process::Command::new("sh")
            .args([
                "-c",
                &format!(
                    "sh -c 'end=$(($(date +%s) + {seconds})); while [ $(date +%s) -lt $end ]; do :; done' >/dev/null 2>&1 & echo $!"
                ),
            ])
            .output()
            .unwrap();
        String::from_utf8(output.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// The tree's ticks grow by at least `ticks` within 10 s.
    fn tree_grows_by(ticks: u64) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let start = read_own_ticks().unwrap();
        let own_start = procfs::read_self_stat().unwrap().tree_ticks();
        while std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let grown = read_own_ticks().unwrap().saturating_sub(start);
            let own = procfs::read_self_stat()
                .unwrap()
                .tree_ticks()
                .saturating_sub(own_start);
            if grown.saturating_sub(own) >= ticks {
                return true;
            }
        }
        false
    }

    #[test]
    fn a_claimed_process_counts_as_own_until_released() {
        let pid = detached_spinner(30);
        let stat = procfs::read_pid_stat(pid).unwrap();
        assert_ne!(stat.ppid, std::process::id(), "the spinner is detached");
        let claim = claim(pid).unwrap();
        assert_eq!(claim.pid(), pid);
        assert!(claimed().contains(&pid));
        assert!(
            tree_grows_by(20),
            "the claimed spinner's ticks never showed"
        );
        drop(claim);
        // Released: the spinner is "other processes" again (its ticks are
        // not checked here: the test binary's other tests start busy
        // children of their own, which the tree rightly counts).
        assert!(!claimed().contains(&pid));
        // SAFETY: kill has no memory preconditions; pid is the spinner.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }

    #[test]
    fn a_gone_process_cannot_be_claimed_and_a_claim_outlives_no_process() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(claim(pid).is_none());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let held = claim(child.id()).unwrap();
        assert!(claimed().contains(&child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!claimed().contains(&held.pid()));
    }
}

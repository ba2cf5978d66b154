//! Waiting for the server's threads when it stops, within a deadline.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long [`Server::stop`](super::Server::stop) waits for its threads
/// (connection threads and database pages included) before it leaves them
/// running with a warning. Every blocking call in them is bounded by a
/// timeout of a few seconds, so this is only reached by a call that
/// ignores its timeout.
pub const STOP_DEADLINE: Duration = Duration::from_secs(10);

/// Joins `handles` until `deadline`; returns the results of those that
/// finished (`None` for a panic) and the number left running, which are
/// detached.
pub(crate) fn join_until<T>(
    handles: Vec<JoinHandle<T>>,
    deadline: Instant,
) -> (Vec<Option<T>>, usize) {
    let mut pending = handles;
    let mut done = Vec::with_capacity(pending.len());
    loop {
        let (finished, running): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(JoinHandle::is_finished);
        done.extend(finished.into_iter().map(|h| h.join().ok()));
        pending = running;
        if pending.is_empty() || Instant::now() >= deadline {
            return (done, pending.len());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

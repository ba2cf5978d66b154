//! A pool of threads for the calls an event loop must not make itself:
//! dynamic pages backed by a database server, which wait for that server
//! (connect, authenticate, query) for a millisecond or more.
//!
//! This is what an event-driven web server does with such pages (nginx
//! hands PHP to php-fpm's workers; tokio has `spawn_blocking`): the loop
//! goes on serving other connections while a worker waits. The pool grows
//! whenever a job arrives and no worker is idle, up to [`MAX_THREADS`], so
//! the database never sees fewer concurrent page requests than the clients
//! send; workers are kept until the server stops, so no thread is started
//! per request. The workers run on the server's CPUs, so the page's client
//! side costs the server, as it would in a web server. Each job still opens
//! and closes its own database connection; only threads are reused.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::sys::affinity;

/// At most this many workers; more jobs wait in the queue.
pub const MAX_THREADS: usize = 1024;
/// Stack of a worker: room for a database client's connect future.
pub const STACK: usize = 512 * 1024;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Workers waiting for a job.
    idle: usize,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pool; [`BlockingPool::stop`] (or the drop) runs the queued jobs out
/// and joins the workers, up to a deadline.
pub struct BlockingPool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    cpus: Option<Vec<usize>>,
}

impl BlockingPool {
    /// An empty pool whose workers will run on `cpus`.
    pub fn new(cpus: Option<Vec<usize>>) -> BlockingPool {
        BlockingPool {
            shared: Arc::default(),
            workers: Mutex::new(Vec::new()),
            cpus,
        }
    }

    /// Runs `job` on a worker, starting one when none is idle.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) {
        let mut state = self.shared.lock();
        state.jobs.push_back(Box::new(job));
        // A woken worker stays counted as idle until it takes a job, so
        // compare with the queue, not with zero.
        let short = state.jobs.len() > state.idle;
        drop(state);
        self.shared.ready.notify_one();
        if short {
            self.grow();
        }
    }

    fn grow(&self) {
        let mut workers = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        if workers.len() >= MAX_THREADS {
            return;
        }
        let (shared, cpus) = (self.shared.clone(), self.cpus.clone());
        let spawned = std::thread::Builder::new()
            .name("sledge-blocking".into())
            .stack_size(STACK)
            .spawn(move || {
                if let Some(cpus) = cpus {
                    let _ = affinity::set_affinity(&cpus);
                }
                work(&shared);
            });
        match spawned {
            Ok(handle) => workers.push(handle),
            // Out of threads: the existing workers take the job later; with
            // none at all, run the queue here rather than lose it.
            Err(_) if workers.is_empty() => {
                drop(workers);
                let jobs: Vec<Job> = self.shared.lock().jobs.drain(..).collect();
                jobs.into_iter().for_each(|job| job());
            }
            Err(_) => {}
        }
    }

    /// Workers started so far.
    #[cfg(test)]
    pub fn threads(&self) -> usize {
        self.workers.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Lets the workers finish the queue, then joins them until
    /// `deadline`; returns how many are still running then (left detached:
    /// a job whose database call does not return).
    pub fn stop(&self, deadline: Instant) -> usize {
        self.shared.lock().stop = true;
        self.shared.ready.notify_all();
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        super::join_until(workers, deadline).1
    }
}

impl Drop for BlockingPool {
    fn drop(&mut self) {
        self.stop(Instant::now() + super::STOP_DEADLINE);
    }
}

fn work(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if let Some(job) = state.jobs.pop_front() {
            drop(state);
            job();
            state = shared.lock();
            continue;
        }
        if state.stop {
            return;
        }
        state.idle += 1;
        state = shared.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        state.idle -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn blocked_jobs_get_their_own_workers_and_all_jobs_run() {
        let pool = BlockingPool::new(None);
        // Eight jobs that all wait for each other: they finish only if
        // eight workers run them at once.
        let barrier = Arc::new(Barrier::new(8));
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..8 {
            let (barrier, done) = (barrier.clone(), done.clone());
            pool.submit(move || {
                barrier.wait();
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        // Sequential jobs reuse the idle workers.
        for _ in 0..100 {
            let done = done.clone();
            pool.submit(move || {
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        let started = pool.threads();
        assert!((8..=108).contains(&started), "{started} workers");
        let left = pool.stop(Instant::now() + std::time::Duration::from_secs(30));
        assert_eq!(left, 0);
        assert_eq!(done.load(Ordering::SeqCst), 108);
    }
}

//! A thin wrapper over a raw `pthread_mutex_t`.
//!
//! sysbench's threads and mutex tests measure glibc's default mutex, which
//! sleeps on a futex at once when contended. Rust's `std::sync::Mutex` spins
//! first and so behaves differently under contention; to give the same
//! numbers as sysbench we lock exactly what it locks.

use std::cell::UnsafeCell;

/// A default-attribute pthread mutex that protects no data of its own (the
/// workloads only need the lock and unlock).
pub struct PthreadMutex {
    inner: UnsafeCell<libc::pthread_mutex_t>,
}

// SAFETY: a pthread mutex is made to be shared between threads; it is never
// moved after first use because callers keep it in a Box/Vec that does not
// reallocate while threads run.
unsafe impl Sync for PthreadMutex {}
unsafe impl Send for PthreadMutex {}

impl Default for PthreadMutex {
    fn default() -> Self {
        PthreadMutex {
            inner: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
        }
    }
}

impl PthreadMutex {
    /// Locks, blocking until the mutex is free; the guard unlocks when
    /// dropped, so an unlock always pairs with this thread's own lock.
    #[inline]
    pub fn lock(&self) -> PthreadGuard<'_> {
        // SAFETY: the mutex is initialised and lives as long as `self`.
        let rc = unsafe { libc::pthread_mutex_lock(self.inner.get()) };
        debug_assert_eq!(rc, 0);
        PthreadGuard { mutex: self }
    }
}

/// Holds a [`PthreadMutex`]; unlocks it when dropped.
pub struct PthreadGuard<'a> {
    mutex: &'a PthreadMutex,
}

impl Drop for PthreadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this guard's thread locked the mutex in `lock`.
        let rc = unsafe { libc::pthread_mutex_unlock(self.mutex.inner.get()) };
        debug_assert_eq!(rc, 0);
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: `&mut self` means no guard (which borrows the mutex) is
        // alive, so the mutex is unlocked.
        unsafe {
            libc::pthread_mutex_destroy(self.inner.get());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn mutex_serialises_a_non_atomic_update() {
        struct Shared {
            lock: PthreadMutex,
            value: UnsafeCell<u64>,
        }
        unsafe impl Sync for Shared {}
        let shared = Arc::new(Shared {
            lock: PthreadMutex::default(),
            value: UnsafeCell::new(0),
        });
        let done = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let shared = shared.clone();
                let done = done.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        let _held = shared.lock.lock();
                        // SAFETY: guarded by the lock.
                        unsafe { *shared.value.get() += 1 };
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(unsafe { *shared.value.get() }, 40_000);
    }
}

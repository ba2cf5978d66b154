//! The clocks and sleeps the latency workloads are built on.
//!
//! Wake-up latency is measured against `CLOCK_MONOTONIC`, the clock
//! cyclictest uses by default and the one `clock_nanosleep` can sleep on
//! to an absolute deadline, so that a late wake-up is never hidden by
//! drift in the sleep's own arithmetic.

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds of CPU time the calling thread has used.
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into our timespec; both clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns` (at once if it has
/// passed), with `clock_nanosleep(TIMER_ABSTIME)`; resumes the same
/// deadline after a signal.
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: reads our timespec; no remaining time is asked for.
        let ret = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if ret != libc::EINTR {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_sleep_never_wakes_early() {
        for _ in 0..20 {
            let deadline = monotonic_ns() + 200_000;
            sleep_until_ns(deadline);
            assert!(monotonic_ns() >= deadline);
        }
        // A deadline in the past returns at once.
        let before = monotonic_ns();
        sleep_until_ns(before - 1_000_000);
        assert!(monotonic_ns() - before < 1_000_000_000);
    }

    #[test]
    fn thread_cpu_time_grows_when_spinning_not_when_sleeping() {
        let start = thread_cpu_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = thread_cpu_ns() - start;
        let start = thread_cpu_ns();
        let until = monotonic_ns() + 30_000_000;
        while monotonic_ns() < until {
            std::hint::black_box(0u64);
        }
        let spun = thread_cpu_ns() - start;
        assert!(spun > slept, "spun {spun} ns, slept {slept} ns");
    }
}

//! The calling thread's timer slack: how late the kernel may fire its
//! timers so that wake-ups group (50 µs by default for normal threads;
//! real-time threads get none). A thread whose naps or due times are a few
//! microseconds apart needs it small.

/// Sets the calling thread's timer slack to `ns` nanoseconds (0 gives the
/// thread back the process's default).
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: prctl with integer arguments changes only this thread; it
    // cannot fail for a slack value.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong) };
}

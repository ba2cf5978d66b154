//! The one clock two hosts can compare.

/// The realtime clock, ns since the Unix epoch: the one clock two hosts
/// can compare (each host's monotonic clock starts at its own boot).
pub(crate) fn unix_now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

//! This process's peak resident memory, as the kernel counts it: what
//! `sledge http` prints beside its figures, so a user sees the generator's
//! own footprint (bounded at any number of connections).

/// The process's peak resident set (`VmHWM` in `/proc/self/status`),
/// bytes; `None` where it cannot be read.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live process has a peak resident set of at least the pages it
    /// touched: a MiB written must show.
    #[test]
    fn the_peak_covers_memory_this_process_touched() {
        let touched = vec![1u8; 1 << 20];
        let peak = peak_rss_bytes().expect("Linux reports VmHWM");
        assert!(peak >= touched.len() as u64, "{peak}");
        assert_eq!(touched.iter().map(|&b| b as usize).sum::<usize>(), 1 << 20);
    }
}

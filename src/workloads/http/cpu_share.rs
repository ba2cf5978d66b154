//! Which side set the rate: how busy the server's CPUs and the generator's
//! CPUs were during a trial.
//!
//! On loopback both sides cost CPU, and with the CPUs split between them
//! either can saturate first. A rate reached with the server's CPUs half
//! idle and the generator's full is the generator's limit, not the
//! server's, and the case says so instead of passing it off as the
//! server's throughput. Busy time includes interrupts and soft interrupts
//! (loopback delivery runs there) and is taken over the time the CPUs were
//! available to this guest (steal left out).

use crate::monitor::procfs::{ProcStat, read_stat};

/// A share above which a side counts as saturated.
pub const SATURATED: f64 = 0.90;
/// A share below which a side clearly had room to spare.
pub const HAD_ROOM: f64 = 0.85;

/// Which side's CPU set a trial's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The generator was saturated and the server had room: the rate is
    /// the generator's, not the server's.
    Generator,
    /// The server was saturated and the generator had room: the rate is
    /// the server's, which is what a benchmark of it wants.
    Server,
    /// Both were near saturation: the rate describes both.
    Both,
    /// Neither was saturated: something else set the rate (the server's
    /// latency times the connections, a requested rate, the network).
    Neither,
}

/// Per-CPU times now, or `None` without a readable `/proc/stat`.
pub fn snapshot() -> Option<ProcStat> {
    read_stat()
}

/// The busy share (0..=1) of `cpus` between two snapshots, or `None` when
/// a CPU is missing from either or no time passed.
pub fn busy_share(before: &ProcStat, after: &ProcStat, cpus: &[usize]) -> Option<f64> {
    let (mut busy, mut available) = (0, 0);
    for &cpu in cpus {
        let a = (*before.per_cpu.get(cpu)?)?;
        let b = (*after.per_cpu.get(cpu)?)?;
        let d = b.saturating_sub(&a);
        busy += d.busy();
        available += d.busy() + d.idle + d.iowait;
    }
    (available > 0).then(|| busy as f64 / available as f64)
}

/// Which side limited a trial whose server and generator were busy these
/// shares (0..=1) of their CPUs.
pub fn limiting_side(server: f64, generator: f64) -> Limit {
    if generator >= SATURATED && server < HAD_ROOM {
        Limit::Generator
    } else if server >= SATURATED && generator < HAD_ROOM {
        Limit::Server
    } else if server >= SATURATED || generator >= SATURATED {
        Limit::Both
    } else {
        Limit::Neither
    }
}

/// Whether a trial's rate was the generator's limit rather than the server's.
pub fn generator_bound(server: f64, generator: f64) -> bool {
    limiting_side(server, generator) == Limit::Generator
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::procfs::parse_stat;

    const BEFORE: &str = "cpu 0 0 0 0\ncpu0 100 0 100 800 0 0 0 50\ncpu1 10 0 10 980 0 0 0 0\n";
    const AFTER: &str = "cpu 0 0 0 0\ncpu0 150 0 130 810 0 0 10 90\ncpu1 20 0 30 1030 0 0 0 0\n";

    #[test]
    fn busy_counts_interrupts_and_leaves_steal_out() {
        let (b, a) = (parse_stat(BEFORE), parse_stat(AFTER));
        // cpu0: 50 user + 30 system + 10 softirq busy, 10 idle, 40 steal.
        assert_eq!(busy_share(&b, &a, &[0]), Some(0.9));
        // cpu1: 30 busy, 50 idle.
        assert_eq!(busy_share(&b, &a, &[1]), Some(30.0 / 80.0));
        // Both: 120 busy of 180.
        assert_eq!(busy_share(&b, &a, &[0, 1]), Some(120.0 / 180.0));
    }

    #[test]
    fn a_missing_cpu_or_no_time_gives_no_share() {
        let (b, a) = (parse_stat(BEFORE), parse_stat(AFTER));
        assert_eq!(busy_share(&b, &a, &[7]), None);
        assert_eq!(busy_share(&b, &b, &[0]), None);
    }

    #[test]
    fn only_a_full_generator_beside_an_idle_server_is_generator_bound() {
        assert!(generator_bound(0.70, 0.99));
        assert!(
            !generator_bound(0.97, 0.99),
            "both full: the server is at its limit too"
        );
        assert!(!generator_bound(0.70, 0.60), "neither full: latency-bound");
    }

    #[test]
    fn the_side_that_was_full_while_the_other_had_room_set_the_rate() {
        assert_eq!(limiting_side(0.70, 0.99), Limit::Generator);
        assert_eq!(limiting_side(0.95, 0.40), Limit::Server);
        assert_eq!(limiting_side(0.97, 0.99), Limit::Both);
        // Full on one side and nearly so on the other is both.
        assert_eq!(limiting_side(0.95, 0.87), Limit::Both);
        assert_eq!(limiting_side(0.87, 0.95), Limit::Both);
        assert_eq!(limiting_side(0.89, 0.89), Limit::Neither);
    }
}

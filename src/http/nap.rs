//! How long a generator thread naps before it polls again, so that one
//! wake-up handles a batch of responses instead of one.
//!
//! A thread blocked in `epoll_wait` is woken by every response the server
//! writes; in a virtual machine each wake-up is an interrupt, a switch
//! from idle and back, and it costs both sides' CPU: measured on a 2-vCPU
//! KVM guest, sleeping and waking were a fifth of the generator's CPU time,
//! about as much as all of `recvmsg`. Napping lets responses gather: the
//! kernel stamps each one as it arrives (`arrival`), so a response that
//! waits in its socket during a nap is not counted as slower.
//!
//! What a nap does cost is the connection's next request, sent only when
//! the nap ends. In a closed loop the server keeps working as long as
//! enough requests remain queued at it, so the nap is steered by what each
//! wake-up finds: when a nap gathered more than half of the requests that
//! were in flight, the server may have been running out of work, and the
//! next nap is shorter; when it gathered less than a quarter (or the thread
//! was woken without a nap, for a response or two), the next is longer. Between the two the batch is large and the server is never left
//! without requests. A nap is also never longer than half the recent
//! response latency nor than [`NAP_MAX`], and is not taken with fewer than
//! [`NAP_MIN_IN_FLIGHT`] requests in flight (their responses rarely come
//! together, and the few waiting would see their next requests delayed).
//!
//! Where the kernel gives no receive stamps, the generator's clock ends a
//! response, so a nap would count as latency: naps then stay within the
//! old bound of 1/32 of the latency and 20 µs. That holds until
//! [`STAMPED_IN_A_ROW`] responses in a row came stamped, not for the rest
//! of the run: the kernel turns stamping on a moment after the first
//! socket asks (`arrival`), so a run's first responses carry no stamp
//! wherever nothing else on the host had it on, and a flag set by them
//! for good kept every nap at 20 µs, a batch of 4 to 5 responses per
//! wake-up instead of a quarter of those in flight.

use std::time::Duration;

/// No nap with fewer requests than this in flight.
pub(crate) const NAP_MIN_IN_FLIGHT: u64 = 8;
/// The longest nap: at 1 ms even a slow server's responses come in
/// batches, and a run's last requests are held back at most this long.
pub(crate) const NAP_MAX: Duration = Duration::from_millis(1);
/// Naps shorter than this are not worth the system call.
const NAP_MIN: Duration = Duration::from_micros(2);
/// Without receive stamps: at most this fraction (1/N) of the latency...
const UNSTAMPED_LATENCY_DIVISOR: u64 = 32;
/// ... and at most this long.
const UNSTAMPED_NAP_MAX: Duration = Duration::from_micros(20);
/// A first nap is this fraction (1/N) of the recent latency.
const FIRST_NAP_DIVISOR: u64 = 8;
/// Naps are steered as stamped after this many stamped responses in a
/// row: enough that a workload where some responses end unstamped (at a
/// close, whose FIN carries no stamp) keeps its naps short. Where fewer
/// than one in this many end so, a long nap may come just before one,
/// whose latency (then the generator's clock) may be overstated by up to
/// that nap: at most half the recent latency and [`NAP_MAX`].
const STAMPED_IN_A_ROW: u32 = 64;

/// The nap of one generator thread, adjusted after every nap.
#[derive(Debug, Clone, Default)]
pub(crate) struct NapControl {
    /// The next nap, ns; 0 until the first is chosen.
    nap_ns: u64,
    /// Responses in a row that came with a kernel receive stamp, up to
    /// [`STAMPED_IN_A_ROW`].
    stamped_in_a_row: u32,
}

impl NapControl {
    /// A response arrived, with or without the kernel's receive stamp.
    pub(crate) fn saw_response(&mut self, stamped: bool) {
        self.stamped_in_a_row = if stamped {
            (self.stamped_in_a_row + 1).min(STAMPED_IN_A_ROW)
        } else {
            0
        };
    }

    /// Whether latency may be ended by the generator's clock, which a nap
    /// would lengthen.
    fn unstamped(&self) -> bool {
        self.stamped_in_a_row < STAMPED_IN_A_ROW
    }

    /// How long to nap now, with `in_flight` requests unanswered and a
    /// recent mean latency of `latency_ns`; `None` for no nap.
    pub(crate) fn nap(&mut self, in_flight: u64, latency_ns: u64) -> Option<Duration> {
        if in_flight < NAP_MIN_IN_FLIGHT || latency_ns == 0 {
            return None;
        }
        let nap = if self.unstamped() {
            Duration::from_nanos(latency_ns / UNSTAMPED_LATENCY_DIVISOR).min(UNSTAMPED_NAP_MAX)
        } else {
            if self.nap_ns == 0 {
                self.nap_ns = latency_ns / FIRST_NAP_DIVISOR;
            }
            Duration::from_nanos(self.nap_ns.min(latency_ns / 2)).min(NAP_MAX)
        };
        (nap >= NAP_MIN).then_some(nap)
    }

    /// A wake-up (after a nap, or from a blocking poll) found `completed`
    /// of the `in_flight` requests answered. Wake-ups without a nap count
    /// too: a thread woken for one response at a time lengthens its nap
    /// until naps pay again.
    pub(crate) fn after_wake_up(&mut self, in_flight: u64, completed: u64) {
        if in_flight < NAP_MIN_IN_FLIGHT || self.nap_ns == 0 {
            return;
        }
        if completed * 2 > in_flight {
            self.nap_ns -= self.nap_ns / 4;
        } else if completed * 4 < in_flight {
            self.nap_ns += (self.nap_ns / 4).max(1_000);
        }
        self.nap_ns = self.nap_ns.min(NAP_MAX.as_nanos() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// A control that has seen enough stamped responses to nap long.
    fn stamped() -> NapControl {
        let mut control = NapControl::default();
        for _ in 0..STAMPED_IN_A_ROW {
            control.saw_response(true);
        }
        control
    }

    #[test]
    fn few_in_flight_or_no_latency_yet_means_no_nap() {
        let mut control = stamped();
        assert_eq!(control.nap(NAP_MIN_IN_FLIGHT - 1, 400 * US), None);
        assert_eq!(control.nap(50, 0), None);
        assert!(control.nap(NAP_MIN_IN_FLIGHT, 400 * US).is_some());
    }

    #[test]
    fn the_first_nap_is_an_eighth_of_the_latency() {
        let mut control = stamped();
        assert_eq!(control.nap(50, 400 * US), Some(Duration::from_micros(50)));
    }

    #[test]
    fn small_batches_lengthen_the_nap_and_large_ones_shorten_it() {
        let mut control = stamped();
        let first = control.nap(50, 800 * US).unwrap();
        assert_eq!(first, Duration::from_micros(100));
        // A nap that gathered 5 of 50: too few, the next is 25% longer.
        control.after_wake_up(50, 5);
        assert_eq!(control.nap(50, 800 * US), Some(Duration::from_micros(125)));
        // 20 of 50 is within the band: unchanged.
        control.after_wake_up(50, 20);
        assert_eq!(control.nap(50, 800 * US), Some(Duration::from_micros(125)));
        // 40 of 50: the server may run dry, a quarter shorter.
        control.after_wake_up(50, 40);
        let shorter = control.nap(50, 800 * US).unwrap();
        assert!(shorter < Duration::from_micros(125), "{shorter:?}");
    }

    #[test]
    fn the_nap_stays_within_half_the_latency_and_the_maximum() {
        let mut control = stamped();
        control.nap(50, 40_000 * US);
        for _ in 0..200 {
            control.after_wake_up(50, 0);
        }
        assert_eq!(control.nap(50, 40_000 * US), Some(NAP_MAX));
        // A server that became fast: at most half its latency.
        assert_eq!(control.nap(50, 100 * US), Some(Duration::from_micros(50)));
        // Long naps that gathered everything shrink to nothing over time.
        for _ in 0..100 {
            control.after_wake_up(50, 50);
        }
        assert_eq!(control.nap(50, 100 * US), None);
    }

    #[test]
    fn without_receive_stamps_naps_stay_short() {
        let mut control = stamped();
        assert_eq!(control.nap(50, 400 * US), Some(Duration::from_micros(50)));
        control.saw_response(false);
        assert_eq!(
            control.nap(50, 400 * US),
            Some(Duration::from_nanos(12_500))
        );
        assert_eq!(control.nap(50, 50_000 * US), Some(UNSTAMPED_NAP_MAX));
        assert_eq!(control.nap(50, 60 * US), None);
        // One unstamped response in every few dozen keeps them short.
        for _ in 0..STAMPED_IN_A_ROW - 1 {
            control.saw_response(true);
        }
        assert_eq!(control.nap(50, 50_000 * US), Some(UNSTAMPED_NAP_MAX));
    }

    #[test]
    fn a_run_whose_first_responses_came_unstamped_naps_long_once_stamps_come() {
        // The kernel stamps nothing until a moment after the first socket
        // asked: a run's first responses come without a stamp.
        let mut control = NapControl::default();
        for _ in 0..10 {
            control.saw_response(false);
        }
        assert_eq!(control.nap(50, 800 * US), Some(UNSTAMPED_NAP_MAX));
        for _ in 0..STAMPED_IN_A_ROW {
            control.saw_response(true);
        }
        assert_eq!(control.nap(50, 800 * US), Some(Duration::from_micros(100)));
    }
}

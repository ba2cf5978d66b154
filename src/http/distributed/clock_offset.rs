//! How far an agent's clock is from the coordinator's, measured as NTP
//! does (RFC 5905 §8): the coordinator notes its clock when it sends a
//! ping and when the pong comes back, the agent its clock in between.
//! If the way there and the way back take as long, the agent read its
//! clock at the midpoint; the error is at most half the round trip, so of
//! several exchanges the one with the shortest round trip is kept.

use serde::Serialize;

/// One ping-pong, all times in ns since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// The coordinator's clock when the ping was sent.
    pub sent_ns: i64,
    /// The agent's clock when it read the ping.
    pub agent_ns: i64,
    /// The coordinator's clock when the pong arrived.
    pub received_ns: i64,
}

impl Exchange {
    fn round_trip_ns(&self) -> i64 {
        self.received_ns - self.sent_ns
    }

    fn offset_ns(&self) -> i64 {
        // The midpoint without overflow: both ends are close together.
        let midpoint = self.sent_ns + self.round_trip_ns() / 2;
        self.agent_ns - midpoint
    }
}

/// An agent's clock against the coordinator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClockOffset {
    /// The agent's clock minus the coordinator's, ns.
    pub offset_ns: i64,
    /// The round trip of the exchange it was taken from, ns; the offset is
    /// right to within half of it.
    pub round_trip_ns: i64,
    /// Exchanges measured.
    pub exchanges: usize,
}

/// The offset from the exchange with the shortest round trip; `None`
/// without a usable exchange (a negative round trip means the
/// coordinator's own clock stepped back and is left out).
pub fn estimate(exchanges: &[Exchange]) -> Option<ClockOffset> {
    let best = exchanges
        .iter()
        .filter(|e| e.round_trip_ns() >= 0)
        .min_by_key(|e| e.round_trip_ns())?;
    Some(ClockOffset {
        offset_ns: best.offset_ns(),
        round_trip_ns: best.round_trip_ns(),
        exchanges: exchanges.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symmetric_exchange_gives_the_exact_offset() {
        // The agent is 5 ms ahead; 1 ms each way.
        let e = Exchange {
            sent_ns: 1_000_000_000,
            agent_ns: 1_000_000_000 + 1_000_000 + 5_000_000,
            received_ns: 1_000_000_000 + 2_000_000,
        };
        let c = estimate(&[e]).unwrap();
        assert_eq!(c.offset_ns, 5_000_000);
        assert_eq!(c.round_trip_ns, 2_000_000);
    }

    #[test]
    fn the_shortest_round_trip_wins() {
        // True offset -2 ms. The slow exchange was delayed on the way
        // there (8 ms there, 1 ms back), which skews its midpoint.
        let slow = Exchange {
            sent_ns: 0,
            agent_ns: 8_000_000 - 2_000_000,
            received_ns: 9_000_000,
        };
        let fast = Exchange {
            sent_ns: 20_000_000,
            agent_ns: 20_000_000 + 100_000 - 2_000_000,
            received_ns: 20_200_000,
        };
        let c = estimate(&[slow, fast]).unwrap();
        assert_eq!(c.offset_ns, -2_000_000);
        assert_eq!(c.round_trip_ns, 200_000);
        assert_eq!(c.exchanges, 2);
        // The slow one alone is off by 3.5 ms, within half its round trip.
        let alone = estimate(&[slow]).unwrap();
        assert_eq!(alone.offset_ns, 1_500_000);
        assert!((alone.offset_ns - -2_000_000).abs() <= alone.round_trip_ns / 2);
    }

    #[test]
    fn no_usable_exchange_is_no_estimate() {
        assert_eq!(estimate(&[]), None);
        let stepped_back = Exchange {
            sent_ns: 10,
            agent_ns: 5,
            received_ns: 3,
        };
        assert_eq!(estimate(&[stepped_back]), None);
    }
}

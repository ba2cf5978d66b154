//! How a load given for all client hosts together is split into each
//! host's share: every host runs the same connections for the same time;
//! a total rate and a total request count are divided between them.

use anyhow::bail;

use super::protocol::{AgentLoad, WireRate};

/// The shares of `hosts` hosts in a load described by `total`, whose
/// `rate` ([`WireRate::Total`]) and `requests` are for all hosts together
/// and whose connections and threads are per host. A per-connection rate
/// is the same on every host.
pub fn split(total: &AgentLoad, hosts: usize) -> anyhow::Result<Vec<AgentLoad>> {
    if hosts == 0 {
        bail!("no client host given");
    }
    if let Some(n) = total.requests
        && n < hosts as u64
    {
        bail!(
            "{n} request(s) cannot be split over {hosts} client hosts: give at least one per host"
        );
    }
    Ok((0..hosts)
        .map(|i| AgentLoad {
            rate: total.rate.map(|rate| match rate {
                WireRate::Total(r) => WireRate::Total(r / hosts as f64),
                per_connection => per_connection,
            }),
            requests: total
                .requests
                .map(|n| n / hosts as u64 + u64::from((i as u64) < n % hosts as u64)),
            ..total.clone()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total() -> AgentLoad {
        AgentLoad {
            urls: vec!["http://198.18.0.1:8080/".into()],
            connections: 4,
            threads: None,
            keep_alive: true,
            think_s: 0.0,
            rate: None,
            timeout_s: Some(1.0),
            duration_s: 5.0,
            requests: None,
        }
    }

    #[test]
    fn requests_and_a_total_rate_are_divided_exactly() {
        let load = AgentLoad {
            rate: Some(WireRate::Total(90.0)),
            requests: Some(10),
            ..total()
        };
        let shares = split(&load, 3).unwrap();
        let requests: Vec<_> = shares.iter().map(|s| s.requests.unwrap()).collect();
        assert_eq!(requests, [4, 3, 3]);
        assert!(
            shares
                .iter()
                .all(|s| s.rate == Some(WireRate::Total(30.0)) && s.connections == 4)
        );
    }

    #[test]
    fn a_rate_per_client_is_the_same_on_every_host() {
        // The article's 6 client machines at 10 requests/s each.
        let load = AgentLoad {
            connections: 1,
            rate: Some(WireRate::PerConnection(10.0)),
            ..total()
        };
        let shares = split(&load, 6).unwrap();
        assert_eq!(shares.len(), 6);
        assert!(
            shares
                .iter()
                .all(|s| s.rate == Some(WireRate::PerConnection(10.0)) && s.requests.is_none())
        );
    }

    #[test]
    fn fewer_requests_than_hosts_is_refused() {
        let load = AgentLoad {
            requests: Some(2),
            ..total()
        };
        let err = split(&load, 3).unwrap_err().to_string();
        assert!(
            err.contains("2 request(s)") && err.contains("3 client hosts"),
            "{err}"
        );
        assert!(split(&total(), 0).is_err());
    }
}

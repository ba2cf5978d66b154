//! `clients_from`: where an `http.*` case's load comes from.
//!
//! `local` (the default) is this host's own generator, as always. A host
//! list runs the case's load from those client hosts at once through the
//! same path as `sledge http --from`: this very sledge copied to a host
//! that lacks it, one agreed start, the hosts' histograms and counters
//! added exactly. The built-in server then listens on this host's address
//! as the first client host sees it (where its ssh session comes from),
//! not on loopback, which on a client host would be the host itself.
//!
//! The list is a parameter value, and commas separate the values of a
//! sweep, so a list of several hosts is written in double quotes, as any
//! value holding a comma: `clients_from="root@h1,root@h2"`. Unquoted,
//! `clients_from=h1,h2` is a sweep of two cases with one client host
//! each, which is also something one may want.

use anyhow::anyhow;

use crate::engine::{CancelToken, LaterParam, ParamKind, ParamRole, ParamSpec};
use crate::http::distributed::{self, AgentLoad, SshAgents, share};
use crate::http::{LoadConfig, LoadReport};
use crate::remote::{self, SshHost, ThisBinary};

/// The value for this host's own generator.
pub const LOCAL: &str = "local";

/// The `http.*` workloads gained `clients_from` after runs were stored
/// without it; those runs loaded from this host (see
/// [`crate::engine::Workload::later_params`]).
///
/// It came on 2026-11-23, when the store's schema was at version 5 and
/// sledge's own version was 0.1.0, as it still is; the schema went to 6
/// two days later. Sledges of schema 5 were built both with and without
/// it, and the workloads' versions stayed 1, so no version tells whether
/// a stored run's sledge had the parameter: that is why the matching
/// takes its absence and its default alike rather than asking a version.
pub const LATER_PARAMS: &[LaterParam] = &[LaterParam {
    name: NAME,
    default: LOCAL,
}];

/// The parameter's name.
const NAME: &str = "clients_from";

/// The `clients_from` parameter.
pub fn param() -> ParamSpec {
    ParamSpec {
        name: NAME,
        role: ParamRole::Other,
        help: "where the load comes from: local (this host), or client hosts in double quotes, \"user@h1,user@h2\", reached with ssh (concurrency is per host, requests for all together)",
        kind: ParamKind::Text,
        default: LOCAL,
    }
}

/// The client hosts of a `clients_from` value; none for `local`. A bad
/// list is an error naming the value and the entry at fault.
pub fn hosts(value: &str) -> anyhow::Result<Vec<SshHost>> {
    if value == LOCAL {
        return Ok(Vec::new());
    }
    remote::parse_host_list(value).map_err(|e| {
        anyhow!(
            "clients_from={value}: {e} (or `{LOCAL}` for this host; several hosts go in double quotes: clients_from=\"root@h1,root@h2\")"
        )
    })
}

/// Whether `load` can be split over `hosts` client hosts, so that a case
/// that could not is refused before the run starts.
pub fn check_split(load: &LoadConfig, hosts: usize) -> anyhow::Result<()> {
    share::split(&AgentLoad::from_config(load, None), hosts)
        .map(drop)
        .map_err(|e| anyhow!("clients_from: {e:#}"))
}

/// The client hosts of a case, connected, each with this sledge.
pub struct Clients {
    agents: SshAgents,
}

impl Clients {
    /// Connects to every host and makes sure it has this sledge (copied
    /// into the same directory `sledge fleet run` and `sledge http --from`
    /// use, or [`remote::REMOTE_DIR_ENV`]'s). Any host that cannot be used is an
    /// error naming it.
    pub fn connect(hosts: &[SshHost]) -> anyhow::Result<Clients> {
        let dir = remote::remote_dir_from_env()?;
        let agents = SshAgents::connect_copying(
            hosts,
            &remote::ssh_options_from_env(),
            &ThisBinary::current()?,
            &dir,
            // A case prints nothing of its own; the copy is quiet.
            &|_, _| {},
        )?;
        Ok(Clients { agents })
    }

    /// Where the server must listen for the hosts to reach it.
    pub fn server_ip(&self) -> anyhow::Result<std::net::IpAddr> {
        self.agents.this_side_address()
    }

    /// Runs `load` (its targets set) from every host and returns the
    /// merged report and each host's own, as `(host, report)` in the order
    /// given; a host that failed fails the trial, by name, since the merge
    /// would cover the others only.
    pub fn run(
        &self,
        load: &LoadConfig,
        cancel: &CancelToken,
    ) -> anyhow::Result<(LoadReport, Vec<(String, LoadReport)>)> {
        let report = distributed::run(
            &self.agents,
            &self.agents.hosts(),
            &AgentLoad::from_config(load, None),
            cancel,
        )?;
        let failures: Vec<String> = report
            .hosts
            .iter()
            .filter_map(|h| h.failure.as_ref().map(|why| format!("{}: {why}", h.host)))
            .collect();
        if !failures.is_empty() {
            anyhow::bail!(
                "{} of {} client host(s) failed: {}",
                failures.len(),
                report.hosts.len(),
                failures.join("; ")
            );
        }
        let merged = report
            .merged
            .ok_or_else(|| anyhow!("no client host finished"))?;
        let hosts = report
            .hosts
            .into_iter()
            .filter_map(|h| Some((h.host, h.report?)))
            .collect();
        Ok((merged, hosts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_is_no_host_and_a_list_is_checked_entry_by_entry() {
        assert!(hosts("local").unwrap().is_empty());
        let two = hosts("root@h1,admin@h2:2222").unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].user.as_deref(), Some("admin"));
        assert_eq!(two[1].port, Some(2222));
        for (bad, says) in [
            ("a,,b", "entry 2 is empty"),
            ("a,a", "`a` appears twice"),
            ("-oProxyCommand=x", "host `-oProxyCommand=x`"),
            ("h1 h2", "host `h1 h2`"),
        ] {
            let err = hosts(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("clients_from={bad}: ")), "{err}");
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.contains("in double quotes"), "{err}");
        }
    }

    #[test]
    fn fewer_requests_than_hosts_cannot_be_split() {
        let mut load = LoadConfig::closed(Vec::new(), 1);
        load.requests = Some(2);
        load.duration = Some(std::time::Duration::from_secs(1));
        check_split(&load, 2).unwrap();
        let err = check_split(&load, 3).unwrap_err().to_string();
        assert!(err.starts_with("clients_from: "), "{err}");
        assert!(err.contains("cannot be split over 3"), "{err}");
    }
}

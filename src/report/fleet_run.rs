//! The closing table of `sledge fleet run`: a line for the whole fleet
//! (hosts, runs stored, complete, failed, wall time), one line per host
//! (its run or why it failed) and the store the runs went to.
//!
//! The fleet layer sits above this one, so it hands its reports over as
//! [`FleetRunSummary`], a view of what the table shows.

use crate::results::RunStatus;
use crate::visible::escape;

/// What the closing table of a fleet run shows.
#[derive(Debug, Clone)]
pub struct FleetRunSummary {
    /// One per host, in the order given.
    pub hosts: Vec<HostLine>,
    /// The fleet run's wall time, seconds.
    pub seconds: f64,
    /// Where the runs were stored, as shown.
    pub store: String,
}

/// One host's line.
#[derive(Debug, Clone)]
pub struct HostLine {
    /// The host as given (`root@db1`).
    pub label: String,
    /// Wall time of the host's part, connecting and copying included.
    pub seconds: f64,
    /// Its run, or why there is none.
    pub outcome: HostOutcome,
}

/// How one host's part ended.
#[derive(Debug, Clone)]
pub enum HostOutcome {
    /// Its run is in the store under `id` (already there when
    /// `already_stored`), ended with `status` on the host.
    Stored {
        id: i64,
        status: RunStatus,
        already_stored: bool,
    },
    /// No run came back, for this reason (the host's words among them).
    Failed(String),
}

impl HostLine {
    /// Whether the host's run is in the store.
    fn stored(&self) -> bool {
        matches!(self.outcome, HostOutcome::Stored { .. })
    }
}

/// The closing table: one line per host. A host's reason may quote what
/// the host said, so it is shown escaped.
pub fn render(summary: &FleetRunSummary) -> String {
    let hosts = &summary.hosts;
    let landed = hosts.iter().filter(|h| h.stored()).count();
    let complete = hosts
        .iter()
        .filter(|h| {
            matches!(
                h.outcome,
                HostOutcome::Stored {
                    status: RunStatus::Complete,
                    ..
                }
            )
        })
        .count();
    let failed = hosts.len() - landed;
    let mut out = format!(
        "fleet run on {} host{}: {landed} run{} stored ({complete} complete), {failed} host{} failed, {:.1} s\n",
        hosts.len(),
        plural(hosts.len()),
        plural(landed),
        plural(failed),
        summary.seconds,
    );
    let width = hosts.iter().map(|h| h.label.len()).max().unwrap_or(0);
    for host in hosts {
        let what = match &host.outcome {
            HostOutcome::Stored {
                id,
                status,
                already_stored,
            } => format!(
                "run {id} · {} · {:.1} s{}",
                status.as_str(),
                host.seconds,
                if *already_stored {
                    " (was already stored)"
                } else {
                    ""
                }
            ),
            HostOutcome::Failed(reason) => format!("failed: {}", escape(reason)),
        };
        out.push_str(&format!("  {:<width$}  {what}\n", host.label));
    }
    if landed > 0 {
        out.push_str(&format!("stored in {}\n", summary.store));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's reason may quote what the host said: its control
    /// characters are shown escaped.
    #[test]
    fn a_hosts_reason_is_shown_escaped() {
        let summary = FleetRunSummary {
            hosts: vec![HostLine {
                label: "root@db1".into(),
                seconds: 1.0,
                outcome: HostOutcome::Failed("the remote said \x1b[2J\r\u{202e}gone".into()),
            }],
            seconds: 1.0,
            store: "results.db".into(),
        };
        let text = render(&summary);
        assert!(
            text.contains("failed: the remote said \\x1b[2J\\r\\u{202e}gone"),
            "{text}"
        );
        assert!(!text.contains(['\x1b', '\r', '\u{202e}']), "{text:?}");
    }
}

//! The outlier hosts of a fleet ([`crate::analysis::host_outliers`]) as
//! text, and the words of why a case was not judged, which its JSON
//! carries too.

use std::fmt::{self, Write as _};

use serde::{Serialize, Serializer};

use crate::analysis::host_outliers::{FleetOutliers, NotJudgedWhy};
use crate::visible::escape;

impl fmt::Display for NotJudgedWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotJudgedWhy::TooFewHosts { ran, needed } => write!(
                f,
                "only {ran} of the hosts ran it, at least {needed} are needed"
            ),
            NotJudgedWhy::NoRatio { host, metric, mean } => write!(
                f,
                "{host}'s {metric} is {}, which has no ratio to the fleet's median",
                super::format::value(*mean)
            ),
            NotJudgedWhy::NoSpread => {
                write!(f, "the hosts' values give no spread to judge against")
            }
        }
    }
}

/// The sentence [`NotJudgedWhy`]'s `Display` writes, as the JSON has
/// always carried it.
impl Serialize for NotJudgedWhy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The view as text: per population, its hosts, then each host named
/// (with the facts that set it apart), or that none was.
pub fn render(view: &FleetOutliers) -> String {
    let mut out = String::new();
    for p in &view.populations {
        let _ = writeln!(
            out,
            "outlier hosts among {} hosts of {} ({}): more than {} modified z-scores (median absolute deviations) from the fleet's median",
            p.hosts.len(),
            escape(if p.cpu_model.is_empty() {
                "an unknown CPU"
            } else {
                &p.cpu_model
            }),
            super::format::count(p.cases.len(), "case", "cases"),
            view.threshold
        );
        if p.outliers.is_empty() && !p.cases.is_empty() {
            let _ = writeln!(out, "  none: every host is within the fleet's spread");
        }
        for o in &p.outliers {
            let _ = writeln!(
                out,
                "  {} (run {}): {} {} {}× the fleet's median (z {}{}), {}",
                escape(&o.host),
                o.run,
                escape(&o.case),
                o.metric,
                super::format::ratio(o.ratio),
                if o.modified_z > 0.0 { "+" } else { "" },
                super::format::compact(o.modified_z, 1),
                o.verdict
            );
            if o.differences.is_empty() {
                let _ = writeln!(out, "    no inventory fact sets it apart");
            }
            for d in &o.differences {
                let _ = writeln!(
                    out,
                    "    {}: {} (the others: {})",
                    escape(&d.what),
                    escape(&d.value),
                    escape(&d.others.join(", "))
                );
            }
        }
        for n in &p.not_judged {
            let _ = writeln!(
                out,
                "  not judged: {}: {}",
                escape(&n.case),
                escape(&n.why.to_string())
            );
        }
    }
    for l in &view.left_out {
        let _ = writeln!(
            out,
            "not judged: run {} ({}): {}",
            l.run,
            escape(&l.host),
            escape(&l.why)
        );
    }
    out
}

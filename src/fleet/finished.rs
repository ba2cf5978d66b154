//! What a finished fleet run came to: every host's report, how the whole
//! ended ([`FleetOutcome`], which the exit status follows), the closing
//! table's view of it and the outlier hosts among the runs that landed.

use super::host_report::{HostReport, HostResult};
use crate::analysis::host_outliers::{FleetOutliers, fleet_outliers};
use crate::report::fleet_run::{FleetRunSummary, HostLine, HostOutcome};
use crate::store::{Store, StoreError};

/// A fleet run that has ended.
pub struct FleetRun {
    /// One per host, in the order given.
    pub reports: Vec<HostReport>,
    /// The wall time of the whole, seconds.
    pub seconds: f64,
    /// Whether a stop request (Ctrl-C) ended it.
    pub interrupted: bool,
    /// The store the runs came into.
    pub store: Store,
}

/// How a fleet run ended as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetOutcome {
    /// A stop request ended it; what came back is stored.
    Interrupted,
    /// Every host's run landed complete.
    Complete,
    /// Some hosts' runs landed, not every host's complete run.
    Partial,
    /// No host's run landed.
    Failed,
}

impl FleetRun {
    /// How the fleet run ended.
    pub fn outcome(&self) -> FleetOutcome {
        if self.interrupted {
            FleetOutcome::Interrupted
        } else if self.reports.iter().all(HostReport::complete) {
            FleetOutcome::Complete
        } else if self.reports.iter().any(landed) {
            FleetOutcome::Partial
        } else {
            FleetOutcome::Failed
        }
    }

    /// What the closing table shows.
    pub fn summary(&self) -> FleetRunSummary {
        FleetRunSummary {
            hosts: self.reports.iter().map(host_line).collect(),
            seconds: self.seconds,
            store: self.store.path().display().to_string(),
        }
    }

    /// The outlier view of the runs that landed, when enough did
    /// ([`crate::stats::MIN_HOSTS`]) and it names a population.
    pub fn landed_outliers(&self) -> Result<Option<FleetOutliers>, StoreError> {
        let ids: Vec<i64> = self
            .reports
            .iter()
            .filter_map(|r| match r.result {
                HostResult::Landed { id, .. } => Some(id),
                HostResult::Failed(_) => None,
            })
            .collect();
        if ids.len() < crate::stats::MIN_HOSTS {
            return Ok(None);
        }
        let runs = ids
            .iter()
            .map(|&id| self.store.load_run(id))
            .collect::<Result<Vec<_>, _>>()?;
        let view = fleet_outliers(&runs);
        Ok((!view.populations.is_empty()).then_some(view))
    }
}

/// Whether the host's run is in the store.
fn landed(report: &HostReport) -> bool {
    matches!(report.result, HostResult::Landed { .. })
}

/// A host's line of the closing table.
fn host_line(report: &HostReport) -> HostLine {
    HostLine {
        label: report.host.label(),
        seconds: report.seconds,
        outcome: match &report.result {
            HostResult::Landed {
                id,
                status,
                already_stored,
                ..
            } => HostOutcome::Stored {
                id: *id,
                status: *status,
                already_stored: *already_stored,
            },
            HostResult::Failed(reason) => HostOutcome::Failed(reason.clone()),
        },
    }
}

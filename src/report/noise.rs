//! The run-to-run noise of a case on its host, from the store's earlier
//! runs of it: the band a comparison must clear (see `stats::run_noise`).

use std::collections::HashMap;

use super::compare::NoiseHistory;
use crate::results::{CaseRecord, RunRecord};
use crate::stats::{self, RunNoise};
use crate::store::Store;

/// Run-to-run noise from the store, leaving out the runs being compared.
pub struct StoreNoise<'a> {
    store: &'a Store,
    exclude: Vec<i64>,
}

impl<'a> StoreNoise<'a> {
    /// Noise histories from `store`, never counting the runs in `exclude`.
    pub fn new(store: &'a Store, exclude: Vec<i64>) -> Self {
        StoreNoise { store, exclude }
    }
}

impl NoiseHistory for StoreNoise<'_> {
    fn noise(&self, run: &RunRecord, case: &CaseRecord) -> HashMap<String, RunNoise> {
        case_noise(self.store, run, case, &self.exclude)
    }
}

/// The run-to-run noise of every metric of `case` (of `run`) on its host,
/// from the store's other runs of it, leaving out the runs in `exclude`
/// (the runs being compared). Metrics without enough history are absent.
pub fn case_noise(
    store: &Store,
    run: &RunRecord,
    case: &CaseRecord,
    exclude: &[i64],
) -> HashMap<String, RunNoise> {
    let entries = store
        .case_history(
            &run.host_key(),
            &case.workload,
            case.workload_version,
            &case.params,
            exclude,
        )
        .unwrap_or_default();
    let mut noise = HashMap::new();
    for metric in &case.metrics {
        let means: Vec<f64> = entries
            .iter()
            .filter_map(|e| e.metrics.iter().find(|m| m.name == metric.name))
            .map(|m| m.mean.abs())
            .collect();
        if let Some(n) = stats::run_noise(&means) {
            noise.insert(metric.name.clone(), n);
        }
    }
    noise
}

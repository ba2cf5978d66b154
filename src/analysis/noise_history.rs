//! The run-to-run noise of a case on its host, from the store's earlier
//! runs of it that sledge measured there (not imported ones: see
//! `Store::case_history`): the band a comparison must clear (see
//! `stats::run_noise`, which also caps it), and each case's noise after
//! `sledge calibrate` ([`Calibration`]).

use std::collections::HashMap;

use super::verdicts::NoiseHistory;
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
            crate::workloads::later_params_of(&case.workload),
            exclude,
        )
        .unwrap_or_default();
    let mut noise = HashMap::new();
    for metric in &case.metrics {
        // A result whose trials were flagged is no evidence of how far
        // undisturbed runs move: one busy run in a short history would
        // widen every later band several times over.
        let means: Vec<f64> = entries
            .iter()
            .filter(|e| !e.disturbed)
            .filter_map(|e| e.metrics.iter().find(|m| m.name == metric.name))
            .map(|m| m.mean.abs())
            .collect();
        if let Some(n) = stats::run_noise(&means) {
            noise.insert(metric.name.clone(), n);
        }
    }
    noise
}

/// Each case's run-to-run noise after a calibration.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// One per case of the last run that reports a metric, in its order.
    pub cases: Vec<CaseCalibration>,
}

/// One case's run-to-run noise.
#[derive(Debug, Clone)]
pub struct CaseCalibration {
    /// The case's label (`cpu.primes threads=1`).
    pub case: String,
    /// Its headline metric, the one the noise is of.
    pub metric: String,
    /// The noise, when the store holds enough runs of the case.
    pub noise: Option<RunNoise>,
}

/// The noise of the headline metric of every case of `run` (the last
/// calibration run), from the store's runs of each case on its host.
pub fn calibration(store: &Store, run: &RunRecord) -> Calibration {
    let cases = run
        .cases
        .iter()
        .filter_map(|case| {
            let headline = case.metrics.first()?;
            let noise = case_noise(store, run, case, &[]).remove(&headline.name);
            Some(CaseCalibration {
                case: case.label(),
                metric: headline.name.clone(),
                noise,
            })
        })
        .collect();
    Calibration { cases }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::stats::Direction;

    /// Stores runs of one case on one host with these headline means, the
    /// ones marked `true` with a busy trial, and returns the store and the
    /// last run.
    fn history(means: &[(f64, bool)]) -> (tempfile::TempDir, Store, RunRecord) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut last = None;
        for (i, (mean, busy)) in means.iter().enumerate() {
            let samples = [mean * 0.999, *mean, mean * 1.001];
            let headline =
                fixtures::metric("events_per_sec", "events/s", Direction::Higher, &samples);
            let mut case = fixtures::case("cpu.primes", &[("threads", "1")], headline);
            if *busy {
                fixtures::disturb(&mut case, 1);
            }
            let run = fixtures::run(i as i64 + 1, "h", 2, vec![case]);
            let id = store.begin_run(&run).unwrap();
            store.add_case(id, &run.cases[0]).unwrap();
            last = Some(RunRecord { id, ..run });
        }
        (dir, store, last.unwrap())
    }

    #[test]
    fn runs_with_flagged_trials_are_no_evidence_of_the_run_to_run_noise() {
        // Four quiet runs within about 1%, and two runs a busy neighbour
        // slowed by 30-35% between them: too many to be fenced off as
        // level shifts, so counted they would set the noise.
        let mut means = vec![
            (100.0, false),
            (70.0, true),
            (101.0, false),
            (65.0, true),
            (99.5, false),
            (100.3, false),
            (100.0, false),
        ];
        let (_dir, store, last) = history(&means);
        let noise = case_noise(&store, &last, &last.cases[0], &[last.id]);
        let primary = &noise["events_per_sec"];
        assert_eq!(primary.runs, 4, "the busy runs are left out");
        assert!(primary.sd_log < 0.015, "{primary:?}");

        // The same results unflagged are this host's own behaviour, and
        // count.
        for m in &mut means {
            m.1 = false;
        }
        let (_dir, store, last) = history(&means);
        let noise = case_noise(&store, &last, &last.cases[0], &[last.id]);
        let primary = &noise["events_per_sec"];
        assert_eq!(primary.runs, 6);
        assert!(primary.sd_log > 0.1, "{primary:?}");
    }
}

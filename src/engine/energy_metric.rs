//! Work per joule: where a trial's energy is known, the engine adds next
//! to the workload's headline metric how much work a joule bought (events,
//! MB or requests per joule) or how much energy a unit of work cost (nJ
//! per load, J for a fixed task), so that compare and the reports show
//! performance per watt without any workload knowing about energy.
//!
//! The energy is the RAPL package and DRAM energy of the whole host over
//! the trial (see `monitor::energy`), so idle power and other processes
//! are in it: the figure answers "what does this machine spend on this
//! work", as the wall-socket figures of the reference articles did.

use super::workload::Metric;
use crate::monitor::TrialHealth;
use crate::results::energy_companion;
use crate::stats::Direction;

/// The energy companion of `headline` for a trial with `health`, or
/// `None` when the trial's power is unknown or the metric is neither a
/// rate nor a time. For a rate, `rate × seconds / joules`, which is
/// `rate / mean watts`; for a time, `time × mean watts`.
pub(crate) fn energy_metric(headline: &Metric, health: &TrialHealth) -> Option<Metric> {
    let watts = health.power_watts.filter(|w| w.is_finite() && *w > 0.0)?;
    let companion = energy_companion(&headline.name, &headline.unit, headline.direction)?;
    let (value, direction) = if companion.per_joule {
        (headline.value / watts, Direction::Higher)
    } else {
        (headline.value * watts, Direction::Lower)
    };
    value.is_finite().then_some(Metric {
        name: companion.name,
        unit: companion.unit,
        direction,
        value,
    })
}

/// Puts the energy companion (if any) right after the headline metric.
pub(crate) fn add_energy_metric(metrics: &mut Vec<Metric>, health: &TrialHealth) {
    if let Some(metric) = metrics.first().and_then(|h| energy_metric(h, health)) {
        metrics.insert(1, metric);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(joules: f64, seconds: f64) -> TrialHealth {
        TrialHealth {
            seconds,
            energy_joules: Some(joules),
            power_watts: Some(joules / seconds),
            ..TrialHealth::default()
        }
    }

    #[test]
    fn a_rate_becomes_work_per_joule() {
        // 1000 events/s for 2 s on 50 J: 40 events per joule.
        let mut metrics = vec![
            Metric::higher("events_per_sec", "events/s", 1000.0),
            Metric::higher("events", "events", 2000.0),
        ];
        add_energy_metric(&mut metrics, &health(50.0, 2.0));
        assert_eq!(metrics.len(), 3);
        let m = &metrics[1];
        assert_eq!(
            (m.name.as_str(), m.unit.as_str()),
            ("events_per_joule", "events/J")
        );
        assert_eq!(m.direction, Direction::Higher);
        assert!((m.value - 40.0).abs() < 1e-12, "{}", m.value);
    }

    #[test]
    fn a_time_becomes_energy_per_unit_of_work() {
        // 80 ns per load at 25 W: 80e-9 s × 25 W = 2 µJ = 2000 nJ per load.
        let mut metrics = vec![Metric::lower("ns_per_load", "ns", 80.0)];
        add_energy_metric(&mut metrics, &health(50.0, 2.0));
        let m = &metrics[1];
        assert_eq!((m.name.as_str(), m.unit.as_str()), ("nj_per_load", "nJ"));
        assert_eq!(m.direction, Direction::Lower);
        assert!((m.value - 2000.0).abs() < 1e-9, "{}", m.value);
    }

    #[test]
    fn without_energy_nothing_is_added() {
        let mut metrics = vec![Metric::higher("events_per_sec", "events/s", 1000.0)];
        add_energy_metric(&mut metrics, &TrialHealth::default());
        let zero = TrialHealth {
            power_watts: Some(0.0),
            ..TrialHealth::default()
        };
        add_energy_metric(&mut metrics, &zero);
        assert_eq!(metrics.len(), 1);
        let mut other = vec![Metric::lower("errors", "requests", 0.0)];
        add_energy_metric(&mut other, &health(1.0, 1.0));
        assert_eq!(other.len(), 1);
        add_energy_metric(&mut Vec::new(), &health(1.0, 1.0));
    }
}

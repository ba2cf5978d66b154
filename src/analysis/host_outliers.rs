//! The outlier hosts of a fleet: for runs on hosts sharing a CPU model,
//! each case's headline across the hosts, and the host that lies outside
//! the fleet's distribution named with its ratio to the fleet's median and
//! the inventory facts that set it apart (Maricq et al., "Taming
//! Performance Variability", OSDI 2018: same-model servers differing 3×).
//!
//! The judgement is [`crate::stats::outlier_hosts`]'s; this module picks
//! the populations and the values into a view that `report::fleet_outliers`
//! shows as a table and as JSON (`sledge fleet outliers --json`, after
//! `sledge fleet run`, and in `sledge report`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::host_facts::host_facts;
use crate::results::{CaseRecord, RunRecord};
use crate::stats::{self, Direction, HostValue, SpreadBasis};
use crate::store::later_params;

/// The facts never shown as setting a host apart: every host has its own
/// name, and a price is not a property of the machine's speed.
const IGNORED_FACTS: &[&str] = &["host", "price"];

/// Every population of the runs and what was found in it.
#[derive(Debug, Clone, Serialize)]
pub struct FleetOutliers {
    /// The modified z-score above which a host is named (3.5).
    pub threshold: f64,
    /// The smallest spread a host is judged against, as a share of the
    /// median (0.02).
    pub min_relative_spread: f64,
    /// One per CPU model with at least three hosts, in the order of their
    /// first run.
    pub populations: Vec<Population>,
    /// Runs left out: of a CPU model with fewer than three hosts, or of a
    /// host that has a later run among those given.
    pub left_out: Vec<LeftOut>,
}

/// A run that was not judged, and why.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// Its store id.
    pub run: i64,
    /// Its host.
    pub host: String,
    /// Why it was left out.
    pub why: String,
}

/// The hosts of one CPU model and their cases.
#[derive(Debug, Clone, Serialize)]
pub struct Population {
    /// The CPU model they share.
    pub cpu_model: String,
    /// Its hosts, one run each.
    pub hosts: Vec<PopulationHost>,
    /// Each case that at least three of the hosts ran, in the order of the
    /// first run that has it.
    pub cases: Vec<CaseAcrossHosts>,
    /// The hosts named, case by case.
    pub outliers: Vec<Outlier>,
    /// The cases that could not be judged, and why (too few hosts ran
    /// them, or a host's headline is 0, which has no ratio to a median);
    /// absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<CaseNotJudged>,
}

/// A case of a population that was not judged.
#[derive(Debug, Clone, Serialize)]
pub struct CaseNotJudged {
    /// `cpu.primes threads=1`: the case as typed.
    pub case: String,
    /// Why it was not judged (serialized as the sentence
    /// `report::fleet_outliers` writes).
    pub why: NotJudgedWhy,
}

/// Why a case of a population was not judged. Its words, the same in the
/// text and in the JSON, are written by `report::fleet_outliers`, which
/// formats the numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum NotJudgedWhy {
    /// Fewer hosts than [`stats::MIN_HOSTS`] ran the case.
    TooFewHosts {
        /// The hosts that ran it.
        ran: usize,
        /// The fewest judged.
        needed: usize,
    },
    /// A host's headline is not a positive number, which has no ratio to
    /// the fleet's median.
    NoRatio {
        /// The host.
        host: String,
        /// The headline metric's name.
        metric: String,
        /// Its mean on the host.
        mean: f64,
    },
    /// The hosts' values give no spread to judge against.
    NoSpread,
}

/// One host of a population.
#[derive(Debug, Clone, Serialize)]
pub struct PopulationHost {
    /// The host as `fleet run --hosts` named it, else its host name.
    pub host: String,
    /// The run of it that was judged.
    pub run: i64,
}

/// A case's headline on every host that ran it.
#[derive(Debug, Clone, Serialize)]
pub struct CaseAcrossHosts {
    /// `cpu.primes threads=1`: the case as typed.
    pub case: String,
    /// The headline metric's name.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Whether higher or lower is better.
    pub direction: Direction,
    /// The median of the hosts' means.
    pub median: f64,
    /// The median absolute deviation of the means' logarithms (0.1 is
    /// about 10%).
    pub mad: f64,
    /// The spread the hosts were judged against, on the same log scale:
    /// the largest of the MAD, the hosts' median CI half-width as a share
    /// of their means, and 0.02.
    pub spread: f64,
    /// Which of the three `spread` is: `mad`, `case_ci` or `floor`.
    pub spread_basis: SpreadBasis,
    /// One per host that ran the case.
    pub values: Vec<HostCaseValue>,
}

/// One host's value of a case.
#[derive(Debug, Clone, Serialize)]
pub struct HostCaseValue {
    /// The host.
    pub host: String,
    /// Its run.
    pub run: i64,
    /// The headline's mean on the host.
    pub mean: f64,
    /// The mean over the fleet's median.
    pub ratio: f64,
    /// `0.6745 · (ln mean − ln median) / spread`.
    pub modified_z: f64,
    /// Whether the host is named for this case.
    pub outlier: bool,
}

/// A host named for a case.
#[derive(Debug, Clone, Serialize)]
pub struct Outlier {
    /// The host.
    pub host: String,
    /// Its run.
    pub run: i64,
    /// The case.
    pub case: String,
    /// The headline metric.
    pub metric: String,
    /// The host's mean over the fleet's median.
    pub ratio: f64,
    /// Its modified z-score.
    pub modified_z: f64,
    /// `slower` or `faster` than the fleet, by the metric's direction.
    pub verdict: &'static str,
    /// The inventory facts where the host's value is none of the other
    /// hosts' values.
    pub differences: Vec<FactDifference>,
}

/// An inventory fact that sets a host apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactDifference {
    /// What (`kernel`, `memory`, `mitigation spectre_v2`...).
    pub what: String,
    /// The host's value (`unknown` when it has none).
    pub value: String,
    /// The other hosts' values, each once, sorted.
    pub others: Vec<String>,
}

/// The host a run describes: as `fleet run --hosts` named it, else its
/// host name, else the run's id.
fn host_label(run: &RunRecord) -> String {
    match run.fleet_host() {
        Some(host) => host.to_string(),
        None if !run.host.hostname.is_empty() => run.host.hostname.clone(),
        None => format!("run {}", run.id),
    }
}

/// The outlier view of `runs`.
pub fn fleet_outliers(runs: &[RunRecord]) -> FleetOutliers {
    let mut left_out = Vec::new();
    // One run per host: the latest started (RFC 3339 UTC sorts as time).
    let mut latest: BTreeMap<String, &RunRecord> = BTreeMap::new();
    for run in runs {
        let label = host_label(run);
        match latest.get(&label) {
            Some(kept) if kept.started >= run.started => left_out.push(LeftOut {
                run: run.id,
                host: label,
                why: format!("run {} of the same host is later", kept.id),
            }),
            Some(kept) => {
                left_out.push(LeftOut {
                    run: kept.id,
                    host: label.clone(),
                    why: format!("run {} of the same host is later", run.id),
                });
                latest.insert(label, run);
            }
            None => {
                latest.insert(label, run);
            }
        }
    }
    // Populations by CPU model, in the order of their first run.
    let mut models: Vec<(String, Vec<&RunRecord>)> = Vec::new();
    for run in runs {
        if !latest.values().any(|kept| std::ptr::eq(*kept, run)) {
            continue;
        }
        let model = run.host.cpu.model.clone();
        match models.iter_mut().find(|(m, _)| *m == model) {
            Some((_, members)) => members.push(run),
            None => models.push((model, vec![run])),
        }
    }
    let mut populations = Vec::new();
    for (model, members) in models {
        if members.len() < stats::MIN_HOSTS {
            for run in members {
                left_out.push(LeftOut {
                    run: run.id,
                    host: host_label(run),
                    why: format!(
                        "fewer than {} hosts of its CPU model ({})",
                        stats::MIN_HOSTS,
                        if model.is_empty() { "unknown" } else { &model }
                    ),
                });
            }
            continue;
        }
        populations.push(population(model, &members));
    }
    left_out.sort_by_key(|l| l.run);
    FleetOutliers {
        threshold: stats::MODIFIED_Z_THRESHOLD,
        min_relative_spread: stats::MIN_RELATIVE_SPREAD,
        populations,
        left_out,
    }
}

/// The key cases are matched on across hosts: the workload and its
/// parameters as stored, a later parameter at its default left out.
fn case_key(case: &CaseRecord) -> (String, BTreeMap<String, String>) {
    (
        case.workload.clone(),
        later_params::comparable(
            crate::workloads::later_params_of(&case.workload),
            &case.params,
        ),
    )
}

fn population(cpu_model: String, members: &[&RunRecord]) -> Population {
    let hosts: Vec<PopulationHost> = members
        .iter()
        .map(|run| PopulationHost {
            host: host_label(run),
            run: run.id,
        })
        .collect();
    // Every case key, in the order of the first run that has it.
    let mut keys = Vec::new();
    for run in members {
        for case in run.cases.iter().filter(|c| c.error.is_none()) {
            let key = case_key(case);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let mut cases = Vec::new();
    let mut outliers = Vec::new();
    let mut not_judged = Vec::new();
    for key in keys {
        // Each host's case of this key with a headline, and the headline.
        let found: Vec<(usize, &CaseRecord)> = members
            .iter()
            .enumerate()
            .filter_map(|(i, run)| {
                run.cases
                    .iter()
                    .find(|c| c.error.is_none() && !c.metrics.is_empty() && case_key(c) == key)
                    .map(|c| (i, c))
            })
            .collect();
        let Some((_, first)) = found.first() else {
            continue;
        };
        let headline = &first.metrics[0];
        let values: Vec<(usize, &CaseRecord, HostValue)> = found
            .iter()
            .filter_map(|&(i, case)| {
                let metric = case.metrics.iter().find(|m| m.name == headline.name)?;
                Some((
                    i,
                    case,
                    HostValue {
                        mean: metric.summary.mean,
                        ci_half_width: metric.summary.ci_half_width(),
                    },
                ))
            })
            .collect();
        let judged: Vec<HostValue> = values.iter().map(|(_, _, v)| *v).collect();
        let label = first.label();
        let Some(spread) = stats::outlier_hosts(&judged) else {
            let why = match values
                .iter()
                .find(|(_, _, v)| !(v.mean.is_finite() && v.mean > 0.0))
            {
                _ if values.len() < stats::MIN_HOSTS => NotJudgedWhy::TooFewHosts {
                    ran: values.len(),
                    needed: stats::MIN_HOSTS,
                },
                Some((i, _, v)) => NotJudgedWhy::NoRatio {
                    host: hosts[*i].host.clone(),
                    metric: headline.name.clone(),
                    mean: v.mean,
                },
                None => NotJudgedWhy::NoSpread,
            };
            not_judged.push(CaseNotJudged { case: label, why });
            continue;
        };
        let mut rows = Vec::new();
        for ((i, _, value), standing) in values.iter().zip(&spread.hosts) {
            let host = &hosts[*i];
            rows.push(HostCaseValue {
                host: host.host.clone(),
                run: host.run,
                mean: value.mean,
                ratio: standing.ratio,
                modified_z: standing.modified_z,
                outlier: standing.outlier,
            });
            if standing.outlier {
                let better = match headline.direction {
                    Direction::Higher => standing.modified_z > 0.0,
                    Direction::Lower => standing.modified_z < 0.0,
                };
                let others: Vec<&RunRecord> = values
                    .iter()
                    .zip(&spread.hosts)
                    .filter(|(_, s)| !s.outlier)
                    .map(|((j, _, _), _)| members[*j])
                    .collect();
                outliers.push(Outlier {
                    host: host.host.clone(),
                    run: host.run,
                    case: label.clone(),
                    metric: headline.name.clone(),
                    ratio: standing.ratio,
                    modified_z: standing.modified_z,
                    verdict: if better { "faster" } else { "slower" },
                    differences: differences(members[*i], &others),
                });
            }
        }
        cases.push(CaseAcrossHosts {
            case: label,
            metric: headline.name.clone(),
            unit: headline.unit.to_string(),
            direction: headline.direction,
            median: spread.median,
            mad: spread.mad,
            spread: spread.spread,
            spread_basis: spread.basis,
            values: rows,
        });
    }
    Population {
        cpu_model,
        hosts,
        cases,
        outliers,
        not_judged,
    }
}

/// The facts of `host` that none of `others` shares.
fn differences(host: &RunRecord, others: &[&RunRecord]) -> Vec<FactDifference> {
    let shown = |v: &str| {
        if v.is_empty() {
            "unknown".to_string()
        } else {
            v.to_string()
        }
    };
    let others_facts: Vec<Vec<(String, String)>> = others.iter().map(|r| host_facts(r)).collect();
    host_facts(host)
        .into_iter()
        .filter(|(what, _)| !IGNORED_FACTS.contains(&what.as_str()))
        .filter_map(|(what, value)| {
            let mut theirs: Vec<String> = others_facts
                .iter()
                .map(|facts| {
                    facts
                        .iter()
                        .find(|(w, _)| *w == what)
                        .map_or_else(|| shown(""), |(_, v)| shown(v))
                })
                .collect();
            theirs.sort();
            theirs.dedup();
            let value = shown(&value);
            (!theirs.is_empty() && !theirs.contains(&value)).then_some(FactDifference {
                what,
                value,
                others: theirs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::report::fleet_outliers::render;

    /// Three runs of one case on hosts `h1..h3` with these means.
    fn fleet(means: &[f64]) -> Vec<RunRecord> {
        means
            .iter()
            .enumerate()
            .map(|(i, &mean)| {
                let headline = fixtures::metric(
                    "events_per_sec",
                    "events/s",
                    Direction::Higher,
                    &[mean, mean, mean],
                );
                let case = fixtures::case("cpu.primes", &[("threads", "1")], headline);
                let mut run = fixtures::run(i as i64 + 1, "clone", 2, vec![case]);
                run.notes = vec![format!("fleet_host=h{}", i + 1)];
                run.started = format!("2026-01-01T00:00:0{i}Z");
                run
            })
            .collect()
    }

    #[test]
    fn the_slow_host_is_named_with_its_ratio_and_what_differs() {
        let mut runs = fleet(&[1000.0, 1010.0, 250.0]);
        runs[2].host.os.kernel = "6.1.0-lemon".into();
        let view = fleet_outliers(&runs);
        assert_eq!(view.populations.len(), 1);
        let p = &view.populations[0];
        assert_eq!(p.cases.len(), 1);
        assert_eq!(p.cases[0].median, 1000.0);
        assert_eq!(p.outliers.len(), 1);
        let o = &p.outliers[0];
        assert_eq!((o.host.as_str(), o.run, o.verdict), ("h3", 3, "slower"));
        assert_eq!(o.ratio, 0.25);
        assert_eq!(
            o.differences,
            [FactDifference {
                what: "kernel".into(),
                value: "6.1.0-lemon".into(),
                others: vec![runs[0].host.os.kernel.clone()],
            }]
        );
        let text = render(&view);
        assert!(
            text.contains(
                "  h3 (run 3): cpu.primes threads=1 events_per_sec 0.250× the fleet's median (z -"
            ),
            "{text}"
        );
        assert!(
            text.contains("    kernel: 6.1.0-lemon (the others: "),
            "{text}"
        );
    }

    #[test]
    fn a_case_that_cannot_be_judged_is_said_not_judged_and_why() {
        let mut runs = fleet(&[1000.0, 0.0, 1010.0]);
        let view = fleet_outliers(&runs);
        let p = &view.populations[0];
        assert!(p.cases.is_empty() && p.outliers.is_empty());
        let text = render(&view);
        assert!(
            text.contains("among 3 hosts of ") && text.contains(" (0 cases): "),
            "{text}"
        );
        assert!(
            text.contains(
                "  not judged: cpu.primes threads=1: h2's events_per_sec is 0, which has no ratio to the fleet's median\n"
            ) && !text.contains("none: every host"),
            "{text}"
        );
        // A second case that one host alone ran.
        let lone = fixtures::case(
            "cpu.primes",
            &[("threads", "2")],
            fixtures::metric("events_per_sec", "events/s", Direction::Higher, &[5.0; 3]),
        );
        runs[0].cases.push(lone);
        runs[1].cases[0].metrics[0].samples = vec![990.0; 3];
        runs[1].cases[0].metrics[0].summary = runs[0].cases[0].metrics[0].summary.clone();
        let text = render(&fleet_outliers(&runs));
        assert!(
            text.contains(" (1 case): ")
                && text.contains(
                    "  not judged: cpu.primes threads=2: only 1 of the hosts ran it, at least 3 are needed\n"
                ),
            "{text}"
        );
    }

    #[test]
    fn equal_hosts_name_nobody_and_small_groups_are_left_out() {
        let mut runs = fleet(&[1000.0, 1000.0, 1030.0]);
        let view = fleet_outliers(&runs);
        assert!(view.populations[0].outliers.is_empty());
        assert_eq!(
            view.populations[0].cases[0].spread_basis,
            SpreadBasis::Floor
        );
        assert!(render(&view).contains("  none: every host is within the fleet's spread"));

        // Another CPU model for one host: two of a model are too few.
        runs[0].host.cpu.model = "Other CPU".into();
        let view = fleet_outliers(&runs);
        assert!(view.populations.is_empty());
        assert_eq!(view.left_out.len(), 3);
        assert!(
            view.left_out[0]
                .why
                .contains("fewer than 3 hosts of its CPU model (Other CPU)")
        );
    }

    #[test]
    fn a_hosts_earlier_run_gives_way_to_its_later_one() {
        let mut runs = fleet(&[1000.0, 1000.0, 1000.0, 100.0]);
        runs[3].notes = vec!["fleet_host=h3".into()];
        runs[3].started = "2025-01-01T00:00:00Z".into();
        let view = fleet_outliers(&runs);
        assert_eq!(view.left_out.len(), 1);
        assert_eq!(view.left_out[0].run, 4);
        assert_eq!(view.left_out[0].why, "run 3 of the same host is later");
        assert!(view.populations[0].outliers.is_empty());
    }
}

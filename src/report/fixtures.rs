//! Runs made up for the reports' unit tests: realistic shapes (sweeps,
//! histograms, disturbed trials, a failed case) with known numbers.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

use crate::monitor::{Disturbance, TrialHealth};
use crate::results::{CaseRecord, MetricRecord, RunRecord, RunStatus, TrialRecord, Unit};
use crate::stats::{self, Direction};

/// A metric over `samples`, summarised and outlier-flagged as the engine
/// does it.
pub fn metric(name: &str, unit: &str, direction: Direction, samples: &[f64]) -> MetricRecord {
    MetricRecord {
        name: name.into(),
        unit: Unit::parse(unit),
        direction,
        summary: stats::summarize(samples).expect("finite samples"),
        levels: None,
        samples: samples.to_vec(),
        outliers: stats::tukey_outliers(samples),
    }
}

/// A case of `workload` with `params` whose headline is `headline`; one
/// trial per sample, none disturbed.
pub fn case(workload: &str, params: &[(&str, &str)], headline: MetricRecord) -> CaseRecord {
    let trials = (0..headline.samples.len())
        .map(|i| TrialRecord {
            index: i as u32,
            round: 0,
            replaced: false,
            seconds: 0.5,
            health: TrialHealth::default(),
        })
        .collect();
    CaseRecord {
        workload: workload.into(),
        workload_version: 1,
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        given_as_all: None,
        warnings: Vec::new(),
        error: None,
        rounds: Vec::new(),
        trials,
        metrics: vec![headline],
        latency_histogram: None,
        values: None,
    }
}

/// Marks the first `count` trials of `case` busy and adds the engine's
/// warning.
pub fn disturb(case: &mut CaseRecord, count: usize) {
    for trial in case.trials.iter_mut().take(count) {
        trial.health.flags = vec![Disturbance::BusyHost];
    }
    case.warnings.push(format!(
        "{count} of {} trials disturbed (busy): treat this case's numbers with care",
        case.trials.len()
    ));
}

/// A latency histogram (ns) around `median_us` microseconds, serialized as
/// the store keeps it.
pub fn latency_histogram(median_us: u64) -> Vec<u8> {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    for i in 0..1000u64 {
        // A long tail: most near the median, a few up to 20x.
        let factor = if i % 100 == 0 { 20 } else { 1 + i % 3 };
        histogram.record(median_us * 1000 * factor / 2 + i).unwrap();
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    bytes
}

/// An empty complete run on `cpus` CPUs of a host named `hostname`.
pub fn run(id: i64, hostname: &str, cpus: usize, cases: Vec<CaseRecord>) -> RunRecord {
    let mut host = crate::probe::HostInfo {
        hostname: hostname.into(),
        ..Default::default()
    };
    host.cpu.model = "Example CPU @ 2.0GHz".into();
    host.cpu.threads = cpus as u32;
    host.memory.total_bytes = 8 << 30;
    host.os.kernel = "6.1.0-test".into();
    RunRecord {
        id,
        uuid: format!("00000000-0000-4000-8000-{id:012}"),
        started: format!("2026-03-0{}T10:00:00Z", id.clamp(1, 9)),
        finished: Some(format!("2026-03-0{}T10:02:00Z", id.clamp(1, 9))),
        sledge_version: "0.1.0".into(),
        profile: "quick".into(),
        command_line: "sledge run".into(),
        notes: Vec::new(),
        status: RunStatus::Complete,
        cpus: (0..cpus).collect(),
        warnings: Vec::new(),
        host,
        cases,
    }
}

/// A run with the shapes the reports handle: a 4-step threads sweep
/// (USL), a 1-vs-all copies sweep per algorithm, a size sweep without
/// scaling, an HTTP concurrency sweep with histograms, a lower-is-better
/// metric, a disturbed case and a failed one. `scale` multiplies every
/// throughput, so two calls make a faster and a slower machine.
pub fn demo_run(id: i64, hostname: &str, scale: f64) -> RunRecord {
    let higher = Direction::Higher;
    let s = |values: &[f64]| values.iter().map(|v| v * scale).collect::<Vec<_>>();
    let mut cases = Vec::new();
    // cpu.primes: 1 to 4 threads on 2 CPUs.
    for (threads, values) in [
        ("1", [800.0, 805.0, 798.0]),
        ("2", [1590.0, 1600.0, 1585.0]),
        ("3", [1610.0, 1580.0, 1620.0]),
        ("4", [1570.0, 1600.0, 1560.0]),
    ] {
        cases.push(case(
            "cpu.primes",
            &[
                ("max_prime", "10000"),
                ("threads", threads),
                ("time", "0.5"),
            ],
            metric("events_per_sec", "events/s", higher, &s(&values)),
        ));
    }
    disturb(&mut cases[3], 2);
    // crypto.speed: two algorithms at 1 and 2 copies.
    for (algorithm, base) in [("md5", 600.0), ("aes-256-cbc", 950.0)] {
        for copies in ["1", "2"] {
            let k = if copies == "1" { 1.0 } else { 1.9 };
            cases.push(case(
                "crypto.speed",
                &[
                    ("algorithm", algorithm),
                    ("block_size", "8192"),
                    ("copies", copies),
                    ("time", "0.1"),
                ],
                metric(
                    "mb_per_sec",
                    "MB/s",
                    higher,
                    &s(&[base * k, base * k * 1.01, base * k * 0.99]),
                ),
            ));
        }
    }
    // memory.latency: lower is better, a size sweep (no scaling).
    for (size, ns) in [("16K", 1.2), ("8M", 9.5), ("256M", 95.0)] {
        cases.push(case(
            "memory.latency",
            &[("size", size), ("time", "0.2")],
            metric(
                "ns_per_load",
                "ns",
                Direction::Lower,
                &[ns / scale, ns * 1.02 / scale, ns * 0.99 / scale],
            ),
        ));
    }
    // http.static: concurrency 1, 10, 100 with latency histograms; values
    // spanning more than 100x.
    for (concurrency, rate, median_us) in [
        ("1", 90.0, 40),
        ("10", 4_000.0, 120),
        ("100", 21_000.0, 900),
    ] {
        let mut c = case(
            "http.static",
            &[("concurrency", concurrency), ("size", "1")],
            metric(
                "requests_per_sec",
                "req/s",
                higher,
                &s(&[rate, rate * 1.03, rate * 0.98]),
            ),
        );
        c.latency_histogram = Some(latency_histogram((median_us as f64 / scale) as u64));
        cases.push(c);
    }
    // A failed case.
    let mut failed = case(
        "fileio",
        &[("mode", "rndrw")],
        metric("mib_per_sec", "MiB/s", higher, &[1.0]),
    );
    failed.metrics.clear();
    failed.trials.clear();
    failed.error = Some("no space left on device".into());
    cases.push(failed);
    run(id, hostname, 2, cases)
}

/// A run with two two-parameter sweeps, as the articles tabulate them:
/// `crypto.speed` at two algorithms × three block sizes, at one copy and
/// at all CPUs; `http.static` at two sizes × two concurrencies, one case
/// failed and one missing. `scale` multiplies every throughput.
pub fn pivot_run(id: i64, hostname: &str, scale: f64) -> RunRecord {
    let higher = Direction::Higher;
    let s = |v: f64| [v * scale, v * scale * 1.02, v * scale * 0.98];
    let mut cases = Vec::new();
    for (copies, k) in [("1", 1.0), ("2", 1.9)] {
        for (algorithm, base) in [("sha256", 400.0), ("aes-128-gcm", 2500.0)] {
            // Block sizes in the order a user gave them, not sorted.
            for (block_size, share) in [("8192", 1.0), ("16", 0.15), ("1024", 0.8)] {
                let mut c = case(
                    "crypto.speed",
                    &[
                        ("algorithm", algorithm),
                        ("block_size", block_size),
                        ("copies", copies),
                        ("time", "0.1"),
                    ],
                    metric("mb_per_sec", "MB/s", higher, &s(base * share * k)),
                );
                if copies == "2" {
                    c.given_as_all = Some(vec!["copies".into()]);
                }
                cases.push(c);
            }
        }
    }
    for (size, concurrency, rate) in [
        ("1", "1", 9_000.0),
        ("1", "16", 60_000.0),
        ("2M", "1", 800.0),
        ("200K", "1", 3_000.0),
        ("200K", "16", 20_000.0),
    ] {
        cases.push(case(
            "http.static",
            &[("concurrency", concurrency), ("size", size)],
            metric("requests_per_sec", "req/s", higher, &s(rate)),
        ));
    }
    let last = cases.len() - 1;
    cases[last].metrics.clear();
    cases[last].trials.clear();
    cases[last].error = Some("connection refused".into());
    run(id, hostname, 2, cases)
}

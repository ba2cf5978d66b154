//! `sledge history`: stored histories of the scripted workload, with a
//! known step and a changed inventory, and without.

use serde_json::Value;
use sledge::results::{CaseRecord, MetricRecord, RoundRecord, RunRecord, RunStatus, TrialRecord};

use crate::common::Sandbox;

/// The relative standard deviation per run of the simulated histories:
/// the 2-3% this machine's quiet cases move between runs.
const NOISE: f64 = 0.025;

/// Normal deviates from a fixed seed (xorshift64* and Box–Muller): the
/// history must not depend on the host.
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Stores one run of `test.scripted label=a` on host `h1` (kernel
/// `kernel`) whose three rounds of two trials average `value`, as `sledge
/// run` would have stored it, started on day `day`.
fn store_run(store: &std::path::Path, day: usize, value: f64, kernel: &str) {
    store_run_on(store, day, value, |host| {
        host.os.kernel = kernel.to_string()
    });
}

/// [`store_run`] on a host that `describe` sets apart (its kernel, its
/// cgroup limits).
fn store_run_on(
    store: &std::path::Path,
    day: usize,
    value: f64,
    describe: impl FnOnce(&mut sledge::probe::HostInfo),
) {
    let mut store = sledge::store::Store::open(store).expect("store");
    let mut host = sledge::probe::HostInfo {
        hostname: "h1".to_string(),
        ..Default::default()
    };
    host.cpu.model = "Test CPU".to_string();
    host.cpu.microcode = Some("0x10".to_string());
    describe(&mut host);
    let started = format!("2026-{:02}-{:02}T10:00:00Z", 1 + day / 28, 1 + day % 28);
    let run = RunRecord {
        id: 0,
        uuid: String::new(),
        started: started.clone(),
        finished: None,
        sledge_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: "custom".to_string(),
        command_line: "sledge run test.scripted".to_string(),
        notes: Vec::new(),
        status: RunStatus::Running,
        cpus: vec![0, 1],
        warnings: Vec::new(),
        host,
        cases: Vec::new(),
    };
    let id = store.begin_run(&run).expect("run");
    // Rounds a little apart, as real rounds are.
    let samples = [
        value * 0.995,
        value * 1.005,
        value * 1.002,
        value * 0.998,
        value,
        value,
    ];
    let rounds: Vec<Vec<f64>> = samples.chunks(2).map(<[f64]>::to_vec).collect();
    let (summary, levels) = sledge::stats::summarize_rounds(&rounds).expect("rounds");
    let case = CaseRecord {
        workload: "test.scripted".to_string(),
        workload_version: 1,
        params: [
            ("values", "100"),
            ("sleep", "0"),
            ("cleanup", "0"),
            ("label", "a"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into(),
        given_as_all: None,
        warnings: Vec::new(),
        error: None,
        rounds: (0..3)
            .map(|round| RoundRecord {
                round,
                order: 0,
                seconds: 1.0,
            })
            .collect(),
        trials: (0..6u32)
            .map(|index| TrialRecord {
                index,
                round: index / 2,
                replaced: false,
                seconds: 0.1,
                health: Default::default(),
            })
            .collect(),
        metrics: vec![MetricRecord {
            name: "value".to_string(),
            unit: "u".into(),
            direction: sledge::stats::Direction::Higher,
            summary,
            levels: Some(levels),
            samples: samples.to_vec(),
            outliers: sledge::stats::tukey_outliers(&samples),
        }],
        latency_histogram: None,
        values: None,
    };
    store.add_case(id, &case).expect("case");
    store
        .finish_run(id, RunStatus::Complete, &started, &[])
        .expect("finish");
}

/// Stores 30 runs around 1000 with [`NOISE`] from `seed`; from run
/// `step_at + 1` on (0-based index `step_at`), values × `factor` on
/// kernel 6.1.1 instead of 6.1.0.
fn store_history(sandbox: &Sandbox, seed: u64, step_at: usize, factor: f64) {
    let mut normal = Normal(seed);
    for i in 0..30 {
        let (level, kernel) = if i >= step_at {
            (1000.0 * factor, "6.1.1")
        } else {
            (1000.0, "6.1.0")
        };
        store_run(
            &sandbox.store(),
            i,
            level * (1.0 + NOISE * normal.next()),
            kernel,
        );
    }
}

/// `sledge history test.scripted --host h1 --json`, parsed.
fn history_json(sandbox: &Sandbox) -> Value {
    let out = sandbox
        .sledge()
        .args(["history", "test.scripted", "--host", "h1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_seven_percent_step_is_found_at_its_run_with_the_kernel_that_changed() {
    let sandbox = Sandbox::new();
    store_history(&sandbox, 7, 15, 0.93);
    let history = history_json(&sandbox);
    assert_eq!(history["host"], "h1");
    let case = &history["cases"][0];
    assert_eq!(case["metric"], "value");
    assert_eq!(case["runs"].as_array().unwrap().len(), 30);
    let changes = case["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{case}");
    let change = &changes[0];
    // Run ids start at 1: index 15 is run 16.
    assert_eq!(change["run"], 16, "{change}");
    assert_eq!(change["run_before"], 15);
    assert_eq!(change["verdict"], "slower");
    let ratio = change["ratio"].as_f64().unwrap();
    assert!((ratio - 0.93).abs() < 0.02, "{ratio}");
    assert_eq!(
        change["differences"],
        serde_json::json!([{ "what": "kernel", "before": "6.1.0", "after": "6.1.1" }])
    );

    // The table says the same for people.
    let out = sandbox
        .sledge()
        .args(["history", "test.scripted", "--host", "h1"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("change at run 16 ("), "{text}");
    assert!(text.contains("      kernel: 6.1.0 → 6.1.1\n"), "{text}");
}

#[test]
fn a_step_under_a_cpu_quota_is_named_by_the_quota() {
    // Eight runs without a limit, six in a cgroup at 0.85 CPUs: the
    // history and a comparison of the runs either side name the quota.
    let sandbox = Sandbox::new();
    let mut normal = Normal(11);
    for i in 0..14 {
        let limited = i >= 8;
        let level = if limited { 850.0 } else { 1000.0 };
        store_run_on(
            &sandbox.store(),
            i,
            level * (1.0 + NOISE * normal.next()),
            |host| {
                host.os.kernel = "6.1.0".to_string();
                let mut limits = sledge::probe::CgroupLimits::default();
                if limited {
                    limits.cpu_quota = Some(sledge::probe::CpuQuota {
                        cpus: 0.85,
                        quota_us: 85_000,
                        period_us: 100_000,
                        cgroup: "/sledge-quota".to_string(),
                    });
                }
                host.cgroup = Some(limits);
            },
        );
    }
    let history = history_json(&sandbox);
    let changes = history["cases"][0]["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{history}");
    assert_eq!(
        (&changes[0]["run"], &changes[0]["run_before"]),
        (&9.into(), &8.into())
    );
    assert_eq!(
        changes[0]["differences"],
        serde_json::json!([{
            "what": "CPU quota",
            "before": "none",
            "after": "0.85 CPUs (cgroup /sledge-quota)"
        }])
    );
    let out = sandbox
        .sledge()
        .args(["history", "test.scripted", "--host", "h1"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("      CPU quota: none → 0.85 CPUs (cgroup /sledge-quota)\n"),
        "{text}"
    );
    assert!(!text.contains("nothing in the inventory differs"), "{text}");

    let out = sandbox
        .sledge()
        .args(["compare", "8", "9"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("differs: CPU quota: none → 0.85 CPUs (cgroup /sledge-quota)\n"),
        "{text}"
    );

    // The report's hosts side by side mark the row.
    let out = sandbox
        .sledge()
        .args(["report", "8", "9"])
        .output()
        .unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    let row = page
        .lines()
        .find(|line| line.contains("<th>Cgroup limits</th>"))
        .unwrap_or_else(|| panic!("no cgroup row: {page}"));
    assert!(row.contains("class=\"differs\""), "{row}");
    assert!(
        row.contains("<td>none</td>")
            && row.contains("CPU quota 0.85 CPUs (85000/100000 µs, cgroup /sledge-quota)"),
        "{row}"
    );
}

#[test]
fn an_a_a_history_of_30_runs_has_no_change_point() {
    for seed in [1, 2, 3] {
        let sandbox = Sandbox::new();
        store_history(&sandbox, seed, 30, 1.0);
        let history = history_json(&sandbox);
        let case = &history["cases"][0];
        assert_eq!(case["runs"].as_array().unwrap().len(), 30);
        assert_eq!(case["change_points"], serde_json::json!([]), "seed {seed}");
    }
}

#[test]
fn an_unknown_host_parameter_or_workload_is_named_with_what_there_is() {
    let sandbox = Sandbox::new();
    store_run(&sandbox.store(), 0, 1000.0, "6.1.0");
    let fails = |args: &[&str]| {
        let out = sandbox
            .sledge()
            .env("SLEDGE_TEST_WORKLOADS", "1")
            .arg("history")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let err = fails(&["test.scripted", "--host", "db9"]);
    assert!(
        err.contains("no stored run of `test.scripted` on host `db9`; its runs are on h1 (1 run): choose one with --host"),
        "{err}"
    );
    let err = fails(&["test.scripted", "--host", "h1", "-p", "label=b"]);
    assert!(
        err.contains("no case of `test.scripted` on host `h1` has label=b; its cases there: test.scripted cleanup=0 label=a sleep=0 values=100"),
        "{err}"
    );
    let err = fails(&["test.scripted", "--host", "h1", "-p", "colour=red"]);
    assert!(err.contains("`test.scripted` has no parameter `colour`; its parameters: values, sleep, cleanup, label"), "{err}");
    let err = fails(&["no.such"]);
    assert!(
        err.contains("`no.such` is not a workload, and no stored run has it"),
        "{err}"
    );
    let err = fails(&["cpu.primes"]);
    assert!(
        err.contains("no stored run has a case of `cpu.primes`"),
        "{err}"
    );
}

#[test]
fn the_report_draws_the_history_only_when_asked() {
    let sandbox = Sandbox::new();
    store_history(&sandbox, 7, 15, 0.93);
    let report = |extra: &[&str]| {
        let out = sandbox
            .sledge()
            .args(["report", "30"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let page = report(&["--history"]);
    let (_, history) = page
        .split_once("<section id=\"history\">")
        .expect("a history section");
    // A point per stored run of the case on its host, not only run 30.
    assert_eq!(history.matches("<circle").count(), 30);
    assert!(
        history.contains("<li>run 16: ") && history.contains("% slower (median ×0.9"),
        "{history}"
    );
    assert!(history.contains("kernel: 6.1.0 → 6.1.1"), "{history}");
    assert!(!report(&[]).contains("id=\"history\""));
}

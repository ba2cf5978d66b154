//! `sledge run`, `list`, `show` and `compare` end to end.

use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{FAST, Sandbox, store_fixture_run, wait_bounded};

/// A tiny cpu.primes case: a few milliseconds per trial.
const TINY_PRIMES: &[&str] = &["cpu.primes", "-p", "max_prime=2000", "-p", "time=0.05"];

fn run_tiny(sandbox: &Sandbox) -> assert_cmd::assert::Assert {
    sandbox
        .sledge()
        .arg("run")
        .args(TINY_PRIMES)
        .args(FAST)
        .assert()
}

#[test]
fn a_run_is_printed_stored_listed_and_shown() {
    let sandbox = Sandbox::new();
    run_tiny(&sandbox)
        .success()
        .stdout(predicate::str::contains("cpu.primes"))
        .stdout(predicate::str::contains("events_per_sec"))
        .stderr(predicate::str::contains("stored as run 1"));
    assert!(sandbox.store().exists());

    sandbox
        .sledge()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("complete"))
        .stdout(predicate::str::contains("custom"));

    let shown = sandbox.sledge().args(["show", "1"]).assert().success();
    let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(text.contains("max_prime=2000"), "{text}");
    assert!(text.contains("value ± 95% CI"), "{text}");

    let csv = sandbox
        .sledge()
        .args(["show", "last", "--csv"])
        .assert()
        .success();
    let csv = String::from_utf8(csv.get_output().stdout.clone()).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("run,workload,workload_version,parameters,metric")
    );
    assert!(lines.any(|l| l.contains("events_per_sec") && l.contains(",2,")));

    sandbox
        .sledge()
        .args(["show", "1", "--markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains("| cpu.primes |"));
}

#[test]
fn the_json_shape_is_stable() {
    let sandbox = Sandbox::new();
    run_tiny(&sandbox).success();
    let out = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();

    // Values the test can check exactly.
    assert_eq!(run["id"], 1);
    assert_eq!(run["status"], "complete");
    let case = &run["cases"][0];
    assert_eq!(case["workload"], "cpu.primes");
    assert_eq!(case["params"]["max_prime"], "2000");
    let metric = &case["metrics"][0];
    assert_eq!(metric["name"], "events_per_sec");
    assert_eq!(metric["direction"], "higher");
    assert_eq!(metric["summary"]["n"], 2);
    assert_eq!(metric["samples"].as_array().unwrap().len(), 2);
    assert!(metric["summary"]["mean"].as_f64().unwrap() > 0.0);

    // The shape (keys and value types), pinned by a snapshot.
    insta::assert_snapshot!(shape(&run, 0));
}

/// The structure of a JSON value: keys and types, first array element
/// only for arrays of objects, so the snapshot catches renamed, removed or retyped fields without
/// depending on measured values. The host inventory is summarised, since
/// its optional fields depend on the machine.
fn shape(value: &Value, depth: usize) -> String {
    let pad = "  ".repeat(depth);
    match value {
        Value::Object(map) => {
            let mut out = String::from("{\n");
            for (key, v) in map {
                let inner = if key == "host" {
                    "object (HostInfo)".to_string()
                } else {
                    shape(v, depth + 1)
                };
                out.push_str(&format!("{pad}  {key}: {inner}\n"));
            }
            out.push_str(&format!("{pad}}}"));
            out
        }
        // Arrays of objects show their first element's shape; arrays of
        // plain values (samples, flags, warnings) show `[..]`, since
        // whether they are empty depends on the run.
        Value::Array(items) => match items.first() {
            Some(first @ Value::Object(_)) => format!("[{}]", shape(first, depth)),
            _ => "[..]".to_string(),
        },
        Value::String(_) => "string".to_string(),
        Value::Number(_) => "number".to_string(),
        Value::Bool(_) => "bool".to_string(),
        Value::Null => "null".to_string(),
    }
}

#[test]
fn run_json_prints_the_stored_run() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .arg("run")
        .args(TINY_PRIMES)
        .args(FAST)
        .arg("--json")
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["cases"][0]["workload"], "cpu.primes");
}

#[test]
fn two_runs_compare_side_by_side() {
    let sandbox = Sandbox::new();
    run_tiny(&sandbox).success();
    run_tiny(&sandbox).success();
    sandbox
        .sledge()
        .args(["compare", "1", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ratio"))
        .stdout(predicate::str::contains("events_per_sec"))
        .stdout(predicate::str::contains("Welch"));
    let out = sandbox
        .sledge()
        .args(["compare", "last~1", "last", "--json"])
        .assert()
        .success();
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(cmp["baseline"], 1);
    assert_eq!(cmp["candidate"], 2);
    assert_eq!(cmp["cases"][0]["metrics"][0]["name"], "events_per_sec");
    // The verdicts themselves are checked on runs whose numbers the test
    // controls (below): two real runs on a busy host may differ either way.
}

#[test]
fn stored_runs_compare_with_the_verdict_their_samples_give() {
    use sledge::results::RunStatus;
    use sledge::stats::Direction::{Higher, Lower};
    let sandbox = Sandbox::new();
    // Candidate: 20% more events per second (better), 20% longer latency
    // (worse), the same event count (no difference). Each side's spread is
    // 1%, far inside the 2% noise threshold and far from the 20% shift.
    let baseline = store_fixture_run(
        &sandbox.store(),
        RunStatus::Complete,
        &[
            ("events_per_sec", Higher, &[100.0, 101.0, 99.0, 100.5, 99.5]),
            ("latency_avg", Lower, &[10.0, 10.1, 9.9, 10.05, 9.95]),
            ("events", Higher, &[500.0, 505.0, 495.0, 502.0, 498.0]),
        ],
    );
    let candidate = store_fixture_run(
        &sandbox.store(),
        RunStatus::Complete,
        &[
            (
                "events_per_sec",
                Higher,
                &[120.0, 121.2, 118.8, 120.6, 119.4],
            ),
            ("latency_avg", Lower, &[12.0, 12.12, 11.88, 12.06, 11.94]),
            ("events", Higher, &[500.0, 505.0, 495.0, 502.0, 498.0]),
        ],
    );
    let out = sandbox
        .sledge()
        .args([
            "compare",
            &baseline.to_string(),
            &candidate.to_string(),
            "--json",
        ])
        .assert()
        .success();
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let metrics = cmp["cases"][0]["metrics"].as_array().unwrap();
    let verdicts: Vec<(&str, &str)> = metrics
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap(),
                m["comparison"]["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("events_per_sec", "faster"),
            ("latency_avg", "slower"),
            ("events", "no_difference"),
        ]
    );
    let ratio = metrics[0]["comparison"]["ratio"].as_f64().unwrap();
    assert!((ratio - 1.2).abs() < 1e-9, "{ratio}");

    // The table says the same.
    let table = sandbox
        .sledge()
        .args(["compare", "last~1", "last"])
        .assert()
        .success();
    let table = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    let verdict_of = |metric: &str| {
        let row = table
            .lines()
            .find(|l| l.contains(&format!(" {metric} ")))
            .unwrap_or_else(|| panic!("no row for {metric}: {table}"));
        [
            "faster (higher is better)",
            "slower (lower is better)",
            "no significant difference",
        ]
        .into_iter()
        .find(|v| row.contains(v))
        .unwrap_or_else(|| panic!("no verdict in {row}"))
    };
    assert_eq!(verdict_of("events_per_sec"), "faster (higher is better)");
    assert_eq!(verdict_of("latency_avg"), "slower (lower is better)");
    assert_eq!(verdict_of("events"), "no significant difference");
}

#[test]
fn a_run_that_has_not_finished_or_stored_nothing_is_not_compared() {
    use sledge::results::RunStatus;
    use sledge::stats::Direction::Higher;
    let sandbox = Sandbox::new();
    let samples: &[f64] = &[100.0, 101.0, 99.0];
    let done = store_fixture_run(
        &sandbox.store(),
        RunStatus::Complete,
        &[("events_per_sec", Higher, samples)],
    );
    // A sledge that is still running (or was killed): `running`, one case.
    let running = store_fixture_run(
        &sandbox.store(),
        RunStatus::Running,
        &[("events_per_sec", Higher, samples)],
    );
    // Interrupted before its first case finished.
    let empty = store_fixture_run(&sandbox.store(), RunStatus::Partial, &[]);

    for (a, b) in [(done, running), (running, done)] {
        sandbox
            .sledge()
            .args(["compare", &a.to_string(), &b.to_string()])
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!(
                "error: run {running} has not finished: it is still `running` (started 2026-01-01T00:00:00Z, 1 case(s) stored so far), or the sledge that ran it was killed; compare it once it is complete, partial or failed\n"
            ));
    }
    sandbox
        .sledge()
        .args(["compare", &done.to_string(), &empty.to_string(), "--json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "error: run {empty} (partial) stored no case, so there is nothing to compare; `sledge list` shows the runs with their case counts\n"
        ));
}

#[test]
fn every_foundation_workload_runs_end_to_end() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args(["run", "cpu.threads", "cpu.mutex", "memory.block"])
        .args(["-p", "time=0.05", "-p", "locks=2000", "-p", "loops=100"])
        .args(["-p", "threads=2", "-p", "oper=write,read"])
        .args(FAST)
        .assert()
        .success()
        .stdout(predicate::str::contains("cpu.threads"))
        .stdout(predicate::str::contains("total_time"))
        .stdout(predicate::str::contains("mib_per_sec"));
    let out = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    // threads, mutex, and memory.block at write and read.
    assert_eq!(run["cases"].as_array().unwrap().len(), 4);
}

#[test]
fn cpus_flag_restricts_the_run() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .arg("run")
        .args(TINY_PRIMES)
        .args(["-p", "threads=all", "--cpus", "1", "--json"])
        .args(FAST)
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["cpus"].as_array().unwrap().len(), 1);
    // `all` means the CPUs the run may use: one.
    assert_eq!(run["cases"][0]["params"]["threads"], "1");
}

#[test]
fn an_interrupted_run_keeps_finished_cases_and_is_partial() {
    let sandbox = Sandbox::new();
    let bin = assert_cmd::cargo::cargo_bin("sledge");
    // Many short cases: the interrupt lands after the first few.
    let mut child = std::process::Command::new(bin)
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=2000",
            "-p",
            "time=0.1",
        ])
        .args([
            "-p",
            "threads=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
        ])
        .args(FAST)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(sandbox.path().join("run.stderr")).unwrap())
        .spawn()
        .unwrap();
    // Wait until at least one case is stored, then interrupt.
    // The run and these `list` calls open the new store at the same time,
    // which once lost the run (see the store's concurrent-open test).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if Instant::now() >= deadline {
            let exited = child.try_wait().unwrap();
            let _ = child.kill();
            let stderr = std::fs::read_to_string(sandbox.path().join("run.stderr"));
            panic!("no case stored within 30 s; the run: {exited:?}, stderr: {stderr:?}");
        }
        let listed = sandbox.sledge().args(["list", "--json"]).output().unwrap();
        let runs: Value = serde_json::from_slice(&listed.stdout).unwrap_or(Value::Null);
        if runs[0]["cases"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));

    let out = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["status"], "partial");
    let cases = run["cases"].as_array().unwrap().len();
    assert!((1..20).contains(&cases), "{cases} cases");
}

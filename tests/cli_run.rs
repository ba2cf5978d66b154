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

    // The scorecard: a row per workload with its headline, and where to
    // see every case.
    let shown = sandbox.sledge().args(["show", "1"]).assert().success();
    let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    let row = text.lines().find(|l| l.starts_with("cpu.primes ")).unwrap();
    assert!(
        row.contains("events_per_sec") && row.contains(" ± "),
        "{text}"
    );
    assert!(
        text.contains("every case: `sledge show 1 --full`"),
        "{text}"
    );
    assert!(!text.contains("set: "), "{text}");
    // Every case: one line each, parameters away from their defaults on
    // the `set:` line.
    let shown = sandbox
        .sledge()
        .args(["show", "1", "--full"])
        .assert()
        .success();
    let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(text.contains("set: max_prime=2000 time=0.05"), "{text}");
    assert!(text.contains("mean ± 95% CI  n"), "{text}");
    assert!(!text.contains("latency_avg"), "{text}");
    // Every metric.
    let shown = sandbox
        .sledge()
        .args(["show", "1", "--metrics", "all"])
        .assert()
        .success();
    let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
    assert!(text.contains("max_prime=2000"), "{text}");
    assert!(text.contains("value ± 95% CI"), "{text}");
    assert!(text.contains("latency_avg"), "{text}");

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
fn a_threads_sweep_is_shown_as_a_scaling_block_with_a_usl_fit() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .arg("run")
        .args(TINY_PRIMES)
        .args(["-p", "threads=1,2,3,4"])
        .args(FAST)
        .arg("--full")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| l.contains('×')).collect();
    assert_eq!(rows.len(), 4, "one line per case: {text}");
    assert!(
        rows[0].contains("1.00×") && rows[0].contains("100%"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "threads", "mean", "±", "95%", "CI", "n", "speed-up", "eff.", "flags"
                ]
                || l.split_whitespace().collect::<Vec<_>>()
                    == ["threads", "mean", "±", "95%", "CI", "n", "speed-up", "eff."]),
        "{text}"
    );
    assert!(text.contains("  USL λ="), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
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
    // Two trials are used; a busy host may have replaced disturbed ones,
    // which stay in the trial list (and the samples) marked `replaced`.
    assert_eq!(metric["summary"]["n"], 2);
    let trials = case["trials"].as_array().unwrap();
    let used = trials.iter().filter(|t| t["replaced"] == false).count();
    assert_eq!(used, 2);
    assert_eq!(metric["samples"].as_array().unwrap().len(), trials.len());
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
        .stdout(predicate::str::contains("events/s"))
        .stdout(predicate::str::contains("trials, weak"));
    let out = sandbox
        .sledge()
        .args(["compare", "last~1", "last", "--json"])
        .assert()
        .success();
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(cmp["baseline"], 1);
    assert_eq!(cmp["candidates"][0]["candidate"], 2);
    let metric = &cmp["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(metric["name"], "events_per_sec");
    assert!(metric["comparison"]["verdict"].is_string(), "{metric}");
    // Which verdict two real runs on a busy host get is not known; the
    // verdicts are checked on runs whose values the test sets (below).
}

#[test]
fn an_explicit_thread_count_equal_to_the_cpus_is_not_taken_for_all() {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("skipped: one CPU, where an explicit 2 threads cannot equal the CPU count");
        return;
    }
    let sandbox = Sandbox::new();
    let run = |cpus: &str, threads: &str| {
        sandbox
            .sledge()
            .arg("run")
            .args(TINY_PRIMES)
            .args(["-p", &format!("threads={threads}"), "--cpus", cpus])
            .args(FAST)
            .assert()
            .success();
    };
    run("2", "2");
    run("1", "all");
    run("2", "all");
    let compare = |a: &str, b: &str| -> Value {
        let out = sandbox
            .sledge()
            .args(["compare", a, b, "--json"])
            .assert()
            .success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    // Two threads chosen on two CPUs are not "all the CPUs" of run 2.
    let cmp = compare("1", "2");
    let candidate = &cmp["candidates"][0];
    assert_eq!(candidate["cases"], serde_json::json!([]), "{cmp}");
    let unmatched: Vec<&str> = candidate["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    let listed = |threads: &str, run: &str| {
        unmatched
            .iter()
            .any(|u| u.contains(&format!(" threads={threads} ")) && u.ends_with(run))
    };
    assert!(
        listed("2", "only in run 1") && listed("1", "only in run 2"),
        "{cmp}"
    );
    // `all` on two CPUs is `all` on one.
    let cmp = compare("3", "2");
    let params = cmp["candidates"][0]["cases"][0]["params"].as_str();
    assert!(params.is_some_and(|p| p.contains(" threads=all ")), "{cmp}");
    // On as many CPUs, two threads chosen are all the CPUs.
    let cmp = compare("1", "3");
    let params = cmp["candidates"][0]["cases"][0]["params"].as_str();
    assert!(params.is_some_and(|p| p.contains(" threads=2 ")), "{cmp}");
    let shown = sandbox
        .sledge()
        .args(["show", "3", "--json"])
        .assert()
        .success();
    let shown: Value = serde_json::from_slice(&shown.get_output().stdout).unwrap();
    assert_eq!(shown["cases"][0]["params"]["threads"], "2");
    assert_eq!(
        shown["cases"][0]["given_as_all"],
        serde_json::json!(["threads"])
    );
}

/// `sledge run test.scripted` with the given values (see
/// `SLEDGE_SCRIPTED_VALUES`): three rounds of two counted trials.
fn scripted_run(sandbox: &Sandbox, values: &str) {
    sandbox
        .sledge()
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("SLEDGE_SCRIPTED_VALUES", values)
        .args(["run", "test.scripted", "--rounds", "3", "--warmup", "0"])
        .args(["--min-trials", "2", "--max-trials", "2", "--no-idle-check"])
        .assert()
        .success();
}

#[test]
fn runs_compare_with_the_verdict_their_values_give() {
    let sandbox = Sandbox::new();
    // Rounds that agree within 1%; run 2 is 20% higher (better: the
    // scripted value is higher-is-better), run 3 the same as run 1.
    scripted_run(&sandbox, "100:100.2/101:100.8/99:99.2");
    scripted_run(&sandbox, "120:120.2/121:120.8/119:119.2");
    scripted_run(&sandbox, "100:100.2/101:100.8/99:99.2");
    let out = sandbox
        .sledge()
        .args(["compare", "1", "2", "3", "--no-history", "--json"])
        .assert()
        .success();
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let judged = |candidate: usize| {
        let m = &cmp["candidates"][candidate]["cases"][0]["metrics"][0];
        (
            m["comparison"]["verdict"].as_str().unwrap().to_string(),
            m["comparison"]["ratio"].as_f64().unwrap(),
        )
    };
    let (faster, ratio) = judged(0);
    assert_eq!(faster, "faster");
    assert!((ratio - 1.2).abs() < 1e-3, "{ratio}");
    let (same, ratio) = judged(1);
    assert_eq!(same, "no_difference");
    assert!((ratio - 1.0).abs() < 1e-9, "{ratio}");
    // The same runs rule out about ±2%: that sees a 5% change, not a 1% one.
    let same = &cmp["candidates"][1];
    let within = same["cases"][0]["metrics"][0]["no_difference_within"]
        .as_f64()
        .unwrap();
    assert!(within > 0.01 && within < 0.05, "{within}");
    assert_eq!(same["summary"]["detect"], 0.05);
    assert_eq!(same["summary"]["could_not_detect"], 0);
    let detect = |pct: &str| {
        sandbox
            .sledge()
            .args(["compare", "1", "3", "--no-history", "--json"])
            .arg(format!("--detect={pct}"))
            .output()
            .unwrap()
    };
    let out = detect("1%");
    let one: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = &one["candidates"][0]["summary"];
    assert_eq!(summary["detect"], 0.01);
    assert_eq!(summary["could_not_detect"], 1);
    for bad in ["0", "-5", "abc", "101"] {
        let out = detect(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not a change to detect: give a percentage above 0 and at most 100"),
            "{stderr}"
        );
    }
    let text = sandbox
        .sledge()
        .args(["compare", "1", "3", "--no-history", "--detect", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // The summary line is wrapped to the report's width.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("1 no difference (1 could not have seen a 1% change)"),
        "{text}"
    );
}

#[test]
fn a_run_that_has_not_finished_or_stored_nothing_is_not_compared() {
    use sledge::results::RunStatus;
    let sandbox = Sandbox::new();
    let samples = [100.0, 101.0, 99.0];
    let done = store_fixture_run(&sandbox.store(), RunStatus::Complete, &samples);
    // A sledge that is still running (or was killed): `running`, one case.
    let running = store_fixture_run(&sandbox.store(), RunStatus::Running, &samples);
    // Interrupted before its first case finished.
    let empty = store_fixture_run(&sandbox.store(), RunStatus::Partial, &[]);

    for (a, b) in [(done, running), (running, done)] {
        sandbox
            .sledge()
            .args(["compare", &a.to_string(), &b.to_string()])
            .assert()
            .code(2)
            .stdout("")
            .stderr(format!(
                "error: run {running} has not finished: it is still `running` (started 2026-01-01T00:00:00Z, 1 case(s) stored so far), or the sledge that ran it was killed; compare it once it is complete, partial or failed\n"
            ));
    }
    sandbox
        .sledge()
        .args(["compare", &done.to_string(), &empty.to_string(), "--json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "error: run {empty} has no stored case to compare (its status is partial)\n"
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

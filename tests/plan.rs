//! `sledge plan` and the plan `sledge run` says before it starts.

use predicates::prelude::*;
use serde_json::Value;

use crate::common::Sandbox;

#[test]
fn a_plan_without_a_store_uses_the_workloads_defaults_and_creates_nothing() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["plan", "quick"])
        .assert()
        .success()
        .stdout(predicate::str::contains("target ±3.0%"))
        .stdout(predicate::str::contains(
            "no history of these cases on this host",
        ))
        .stdout(predicate::str::contains("cpu.primes threads=2 time=0.5"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // One row per case of the profile, 15 of them.
    assert_eq!(text.matches("unknown (no history)").count(), 15, "{text}");
    assert!(!sandbox.store().exists());
}

#[test]
fn a_plan_learns_from_the_runs_before_it_and_the_run_says_its_plan() {
    let sandbox = Sandbox::new();
    // Three identical runs of the scripted workload: rounds (100, 98),
    // (104, 102), (96, 94), round means 99, 103, 95 (sd 4, 4.04% of the
    // mean), trials within a round √2 apart.
    let scripted = |command: &str| {
        let mut cmd = sandbox.sledge();
        cmd.env("SLEDGE_TEST_WORKLOADS", "1")
            .env("SLEDGE_TEST_QUIET_HOST", "1")
            .env("SLEDGE_SCRIPTED_VALUES", "100:98/104:102/96:94")
            .args([command, "test.scripted"])
            .args(["--rounds", "3", "--warmup", "0", "--min-trials", "2"])
            .args(["--max-trials", "2"]);
        cmd
    };
    for _ in 0..3 {
        scripted("run")
            .arg("--no-idle-check")
            .assert()
            .success()
            .stderr(predicate::str::contains("plan: 1 case, about"));
    }
    let out = scripted("plan")
        .args(["--detect", "5%", "--json"])
        .assert()
        .success();
    let plan: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let case = &plan["cases"][0];
    assert_eq!(case["history_runs"], 3, "{plan}");
    assert_eq!(
        (case["rounds"].as_u64(), case["trials_per_round"].as_u64()),
        (Some(3), Some(2))
    );
    // 3 round means of relative sd 4/99: t(2) · 4.04% / √3 = 10.04%.
    let ci = case["expected_ci"].as_f64().unwrap();
    assert!((ci - 0.100_37).abs() < 1e-4, "{plan}");
    // Identical runs: no run-to-run part; a 5% change needs 16 rounds a
    // side at 90% power.
    assert_eq!(case["detect_rounds"], 16, "{plan}");
    let text = scripted("plan").args(["--detect", "5"]).assert().success();
    let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
    assert!(text.contains("±10% (wider than the target)"), "{text}");
    assert!(text.contains("16 rounds a side"), "{text}");
}

#[test]
fn plan_refuses_a_bad_detect_naming_what_is_allowed() {
    Sandbox::new()
        .sledge()
        .args(["plan", "quick", "--detect", "150%"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "expected a percentage above 0 and below 100",
        ));
}

#[test]
fn plan_refuses_a_pivot_no_planned_workload_can_make_as_run_does() {
    for command in ["plan", "run"] {
        let sandbox = Sandbox::new();
        sandbox
            .sledge()
            .args([command, "cpu.primes", "--pivot", "nosuch,threads"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "--pivot nosuch,threads: no selected workload has both parameters",
            ));
        sandbox.assert_no_runs();
    }
}

#[test]
fn detect_refuses_a_malformed_or_negative_percentage_with_its_own_message() {
    for given in ["5%%", "5 %", "%5", "-5%", "-5"] {
        Sandbox::new()
            .sledge()
            .args(["plan", "quick", "--detect", given])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "invalid value '{given}' for '--detect <PERCENT>': expected a percentage above 0 and below 100"
            )));
    }
}

#[test]
fn the_detect_column_shows_the_change_asked_for_and_one_case_is_one_case() {
    let plan = |detect: &str| {
        let out = Sandbox::new()
            .sledge()
            .env("SLEDGE_TEST_WORKLOADS", "1")
            .args(["plan", "test.scripted", "--detect", detect])
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = plan("99.99%");
    assert!(text.contains("to see a 99.99% change"), "{text}");
    assert!(text.starts_with("plan: 1 case · about "), "{text}");
    let text = plan("0.000000001");
    assert!(text.contains("to see a 1e-9% change"), "{text}");
}

#[test]
fn every_profile_case_has_a_trial_length_to_plan_with() {
    // A fixed amount of work (STREAM's passes, hackbench's messages, a
    // build, bonnie's file) is priced from its size at a typical rate,
    // never counted at the 1 s a trial that stands in for "unknown".
    for profile in ["quick", "standard", "seeds", "unixbench"] {
        let out = Sandbox::new()
            .sledge()
            .args(["plan", profile, "--json"])
            .assert()
            .success();
        let plan: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let cases = plan["cases"].as_array().unwrap();
        assert!(!cases.is_empty());
        let guessed: Vec<&Value> = cases.iter().filter(|c| c["guessed"] == true).collect();
        assert!(guessed.is_empty(), "{profile}: {guessed:?}");
    }
}

#[test]
fn a_stream_trial_is_priced_from_the_bytes_it_moves() {
    // 10 M elements, 2 passes: 6 + 20 sweeps of 80 MB at 12 GB/s, one
    // trial a round and no warm-up trial (STREAM warms up by itself, so
    // the runner gives it none), plus the round's start.
    let out = Sandbox::new()
        .sledge()
        .args(["plan", "memory.stream", "-p", "array_size=10000000"])
        .args(["-p", "ntimes=2", "-p", "threads=1"])
        .args(["--min-trials", "1", "--max-trials", "1", "--json"])
        .assert()
        .success();
    let plan: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let round = plan["cases"][0]["round_seconds"].as_f64().unwrap();
    let expected = 0.15 + 26.0 * 80e6 / 12e9;
    assert!((round - expected).abs() < 1e-9, "{plan}");
}

//! Bad input gets a clear error and the right exit status.

use predicates::prelude::*;

use crate::common::{FAST, Sandbox};

#[test]
fn an_unknown_workload_lists_the_known_ones() {
    Sandbox::new()
        .sledge()
        .args(["run", "cpu.prime"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`cpu.prime` is neither a profile nor a workload",
        ))
        .stderr(predicate::str::contains("cpu.primes, cpu.threads"));
}

#[test]
fn out_of_range_parameters_name_what_is_allowed() {
    let cases = [
        ("cpu.primes", "max_prime=0", "an integer from 3 to"),
        (
            "cpu.primes",
            "threads=0",
            "a count from 1 to 4096, or `all`",
        ),
        ("memory.block", "block_size=1000", "a power of two"),
        ("memory.block", "oper=erase", "one of: write, read"),
        ("cpu.primes", "time=soon", "a duration"),
    ];
    for (workload, param, allowed) in cases {
        let name = param.split('=').next().unwrap();
        Sandbox::new()
            .sledge()
            .args(["run", workload, "-p", param])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("parameter `{name}`")))
            .stderr(predicate::str::contains(allowed));
    }
}

#[test]
fn a_parameter_no_selected_workload_has_is_refused() {
    Sandbox::new()
        .sledge()
        .args(["run", "cpu.primes", "-p", "block_size=1K"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no selected workload has a parameter `block_size`",
        ));
}

#[test]
fn too_many_cpus_is_a_usage_error() {
    Sandbox::new()
        .sledge()
        .args(["run", "cpu.primes", "--cpus", "100000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("allowed is 1 to"));
}

#[test]
fn an_unwritable_store_path_is_named() {
    let sandbox = Sandbox::new();
    // A directory cannot be created under a regular file, even by root.
    let blocker = sandbox.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let store = blocker.join("sub").join("results.db");
    sandbox
        .sledge()
        .args(["run", "cpu.primes", "-p", "time=0.05"])
        .args(FAST)
        .arg("--store")
        .arg(&store)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(blocker.display().to_string()));
}

#[test]
fn a_file_that_is_not_a_sledge_store_is_left_untouched() {
    let sandbox = Sandbox::new();
    let notes = sandbox.path().join("notes.db");
    let content = b"these are my notes, not a database\n".repeat(100);
    std::fs::write(&notes, &content).unwrap();
    sandbox
        .sledge()
        .args(["run", "cpu.primes", "-p", "time=0.05"])
        .args(FAST)
        .arg("--store")
        .arg(&notes)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not an SQLite database"))
        .stderr(predicate::str::contains("notes.db"));
    assert_eq!(std::fs::read(&notes).unwrap(), content);

    // Another program's SQLite database is refused too.
    let foreign = sandbox.path().join("foreign.db");
    {
        let conn = rusqlite::Connection::open(&foreign).unwrap();
        conn.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&foreign).unwrap();
    sandbox
        .sledge()
        .arg("list")
        .arg("--store")
        .arg(&foreign)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a sledge database"));
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
}

#[test]
fn showing_a_missing_run_says_how_to_find_runs() {
    let sandbox = Sandbox::new();
    sledge::store::Store::open(&sandbox.store()).unwrap();
    sandbox
        .sledge()
        .args(["show", "42"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("sledge list"));
}

#[test]
fn workloads_lists_parameters_with_defaults_and_ranges() {
    Sandbox::new()
        .sledge()
        .arg("workloads")
        .assert()
        .success()
        .stdout(predicate::str::contains("cpu.primes"))
        .stdout(predicate::str::contains("max_prime"))
        .stdout(predicate::str::contains("10000"))
        .stdout(predicate::str::contains("a power of two"));
}

#[test]
fn probe_reports_the_host() {
    let out = Sandbox::new()
        .sledge()
        .args(["probe", "--json"])
        .assert()
        .success();
    let host: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(host["cpu"]["threads"].as_u64().unwrap() >= 1);
    assert!(host["memory"]["total_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn the_served_page_database_must_be_one_sledge_knows() {
    Sandbox::new()
        .sledge()
        .args(["http", "--serve", "127.0.0.1:0", "--db", "oracle://x"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--db oracle://x"))
        .stderr(predicate::str::contains("sqlite"));
    // --db only means something for the built-in server.
    Sandbox::new()
        .sledge()
        .args(["http", "--db", "sqlite", "http://127.0.0.1:1/"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--serve"));
}

#[test]
fn a_case_error_is_also_said_on_stderr_with_json() {
    // Nothing listens on port 1: the case fails in prepare, after it was
    // built, the way a full disk or a vanished directory fails a case.
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["run", "http.dynamic", "--json"])
        .args([
            "-p",
            "db=postgres://sledge@127.0.0.1:1/none?connect_timeout=5",
        ])
        .args(["-p", "time=0.1", "-p", "concurrency=1"])
        .args(FAST)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1);
    let run: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let case = &run["cases"][0];
    let error = case["error"].as_str().expect("the case failed");
    let label = format!(
        "http.dynamic {}",
        case["params"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr
            .lines()
            .any(|l| l == format!("error: {label}: {error}")),
        "stderr lacks the case error `{error}`:\n{stderr}"
    );
}

#[test]
fn a_trailing_comma_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args(["run", "http.dynamic", "-p", "db=sqlite,"])
        .args(FAST)
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: --param db: value 2 is empty (a trailing or doubled comma?); separate values with commas, and put a value that holds a comma in double quotes (dir=\"/mnt/a,b\")\n",
        );
    assert!(!sandbox.store().exists());
}

#[test]
fn a_sweep_value_that_cannot_run_is_refused_before_the_first_case() {
    // 16 and 64 are whole AES blocks; 100 is not, which only the whole
    // case (the algorithm with the size) can tell.
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args(["run", "crypto.speed", "-p", "algorithm=aes-256-cbc"])
        .args(["-p", "block_size=16,64,100", "-p", "time=0.05"])
        .args(FAST)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "error: case 3 of 3 (crypto.speed algorithm=aes-256-cbc block_size=100 ",
        ))
        .stderr(predicate::str::contains("must be a multiple of 16"))
        .stderr(predicate::str::ends_with("; nothing was measured\n"));
    sandbox.assert_no_runs();
}

#[test]
fn a_directory_with_a_comma_in_its_name_can_be_given_in_quotes() {
    let sandbox = Sandbox::new();
    let data = sandbox.path().join("a,b");
    std::fs::create_dir(&data).unwrap();
    let out = sandbox
        .sledge()
        .args(["run", "fileio", "--json"])
        .arg("-p")
        .arg(format!("dir=\"{}\"", data.display()))
        .args([
            "-p",
            "mode=seqwr",
            "-p",
            "file_num=1",
            "-p",
            "total_size=64K",
        ])
        .args(["-p", "events=4", "-p", "time=1"])
        .args(FAST)
        .assert()
        .success();
    let run: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["cases"].as_array().unwrap().len(), 1);
    assert_eq!(run["cases"][0]["params"]["dir"], data.display().to_string());
    // The scratch directory was made there, and removed.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

/// Each repetition flag of `run` has a range, and a value out of it is
/// refused naming that flag (not another one it would have set) and the
/// range, before anything runs.
#[test]
fn repetition_flags_out_of_range_name_the_flag_and_its_range() {
    let cases = [
        ("--rounds", "0", "from 1 to 100"),
        ("--rounds", "101", "from 1 to 100"),
        ("--max-rounds", "0", "from 1 to 100"),
        ("--max-rounds", "1000", "from 1 to 100"),
        ("--warmup", "99999", "from 0 to 20"),
        ("--warmup", "-1", "from 0 to 20"),
        ("--min-trials", "0", "from 1 to 100"),
        ("--max-trials", "101", "from 1 to 100"),
        ("--ci-target", "1", "above 0 and below 1"),
        ("--ci-target", "NaN", "above 0 and below 1"),
        ("--budget", "0", "above 0 and at most 604800"),
        ("--budget", "1e9", "above 0 and at most 604800"),
    ];
    let sandbox = Sandbox::new();
    for (flag, value, range) in cases {
        let out = sandbox
            .sledge()
            .args(["run", "cpu.primes", &format!("{flag}={value}")])
            .assert()
            .code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains(&format!("'{value}' for '{flag} ")) && stderr.contains(range),
            "{flag} {value}: {stderr}"
        );
    }
    sandbox.assert_no_runs();
    // Flags that contradict each other are named both.
    for (args, said) in [
        (
            ["--rounds", "5", "--max-rounds", "3"],
            "--max-rounds 3 is below --rounds 5",
        ),
        (
            ["--min-trials", "5", "--max-trials", "3"],
            "--max-trials 3 is below --min-trials 5",
        ),
    ] {
        sandbox
            .sledge()
            .args(["run", "cpu.primes"])
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(said));
    }
}

/// An empty SLEDGE_STORE is named as such, with what it may hold; it does
/// not stop a command that needs no store, nor one given --store.
#[test]
fn an_empty_sledge_store_variable_is_named_with_what_it_may_hold() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .env("SLEDGE_STORE", "")
        .arg("list")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("SLEDGE_STORE is set but empty"), "{stderr}");
    assert!(stderr.contains("postgres:// URL"), "{stderr}");
    assert!(!stderr.contains("--store"), "{stderr}");
    sandbox
        .sledge()
        .env("SLEDGE_STORE", "")
        .arg("workloads")
        .assert()
        .success();
    sandbox
        .sledge()
        .env("SLEDGE_STORE", "")
        .arg("--store")
        .arg(sandbox.store())
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("no runs stored yet"));
}

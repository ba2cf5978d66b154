//! The `command` workload from the command line: what a trial stores,
//! placeholders as sweeps, figures read from the output, the untimed
//! steps, and every way a command can go wrong, each a clear error that
//! leaves nothing running.

use std::time::{Duration, Instant};

use crate::common::{FAST, Sandbox, metric};
use serde_json::Value;

/// `sledge run command` with `params` (each a `-p` value) and the fast
/// flags, as JSON.
fn run_command(sandbox: &Sandbox, params: &[&str]) -> std::process::Output {
    let mut cmd = sandbox.sledge();
    cmd.args(["run", "command", "--json"]).args(FAST);
    for p in params {
        cmd.args(["-p", p]);
    }
    cmd.output().unwrap()
}

fn cases(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{out:?}");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    run["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("no cases in {run}"))
        .clone()
}

fn mean(case: &Value, name: &str) -> f64 {
    metric(case, name)["summary"]["mean"].as_f64().unwrap()
}

fn failure(out: &std::process::Output) -> String {
    assert!(!out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_trial_stores_wall_user_system_and_peak_memory() {
    let sandbox = Sandbox::new();
    let out = run_command(&sandbox, &["cmd=sleep 0.05"]);
    let cases = cases(&out);
    assert_eq!(cases.len(), 1);
    let case = &cases[0];
    let names: Vec<&str> = case["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wall", "user", "system", "max_rss"]);
    // The shell's start-up is taken out: what is left is the sleep, give
    // or take how much that start-up varies on a busy machine (the median
    // taken out can exceed the start-up of a trial by milliseconds).
    let wall = mean(case, "wall");
    assert!((0.025..0.5).contains(&wall), "{wall}");
    assert!(mean(case, "max_rss") > 0.0);
}

#[test]
fn placeholders_sweep_and_a_regex_reads_the_output() {
    let sandbox = Sandbox::new();
    let out = run_command(
        &sandbox,
        &[
            "cmd=printf 'took {n} ms\\nvalue {n}0\\n'",
            "n=1,2",
            "metric=value:items:higher:regex:value ([0-9]+);; took:ms:lower:regex:took ([0-9]+) ms",
        ],
    );
    let cases = cases(&out);
    assert_eq!(cases.len(), 2);
    for (case, n) in cases.iter().zip([1.0, 2.0]) {
        assert_eq!(case["params"]["n"], n.to_string(), "{case}");
        // The first metric read from the output is the headline.
        assert_eq!(case["metrics"][0]["name"], "value");
        assert_eq!(mean(case, "value"), 10.0 * n);
        assert_eq!(mean(case, "took"), n);
    }
}

#[test]
fn a_per_cpu_placeholder_takes_all() {
    let sandbox = Sandbox::new();
    let out = run_command(
        &sandbox,
        &[
            "cmd=echo {jobs}",
            "jobs=1,all",
            "shell=false",
            "cpus_unused=x",
        ],
    );
    // An unused parameter is refused, naming the ones the case has.
    let err = failure(&out);
    assert!(err.contains("cpus_unused"), "{err}");
    let out = run_command(
        &sandbox,
        &[
            "cmd=echo {jobs}",
            "jobs=1,all",
            "shell=false",
            "metric=jobs:jobs:higher:regex:([0-9]+)",
        ],
    );
    let cases = cases(&out);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let last = cases.last().unwrap();
    assert_eq!(mean(last, "jobs"), cpus, "{last}");
    assert_eq!(last["given_as_all"], serde_json::json!(["jobs"]), "{last}");
}

#[test]
fn prepare_runs_before_each_trial_setup_and_cleanup_once_a_round() {
    let sandbox = Sandbox::new();
    let log = sandbox.path().join("log");
    let append = |word: &str| format!("echo {word} >> {}", log.display());
    let out = run_command(
        &sandbox,
        &[
            "cmd=true",
            &format!("prepare={}", append("prepare")),
            &format!("setup={}", append("setup")),
            &format!("cleanup={}", append("cleanup")),
        ],
    );
    let cases = cases(&out);
    let text = std::fs::read_to_string(&log).unwrap();
    let count = |word| text.lines().filter(|l| *l == word).count();
    // FAST: one round of two trials and no warm-up, and a trial run beside
    // other load is run again: one prepare for each trial that ran.
    let trials = cases[0]["trials"].as_array().unwrap().len();
    assert!(trials >= 2, "{}", cases[0]);
    assert_eq!(
        (count("setup"), count("prepare"), count("cleanup")),
        (1, trials, 1),
        "{text}"
    );
    assert_eq!(text.lines().next(), Some("setup"));
    assert_eq!(text.lines().last(), Some("cleanup"));
}

#[test]
fn a_failing_command_fails_its_trial_with_the_end_of_its_stderr() {
    let sandbox = Sandbox::new();
    let err = failure(&run_command(&sandbox, &["cmd=echo it broke >&2; exit 3"]));
    assert!(err.contains("failed (exit status: 3)"), "{err}");
    assert!(err.contains("it broke"), "{err}");
    // With ignore_failure the status is a figure.
    let out = run_command(&sandbox, &["cmd=exit 3", "ignore_failure=true"]);
    assert_eq!(mean(&cases(&out)[0], "exit_status"), 3.0);
}

#[test]
fn the_command_gets_sigint_with_its_default_action_as_in_a_shell() {
    // A round's process ignores SIGINT (its parent stops it), and an
    // ignored signal stays ignored across exec: the command must not
    // inherit that, or `kill -INT` and `timeout -s INT` would not stop it.
    let sandbox = Sandbox::new();
    let err = failure(&run_command(&sandbox, &["cmd=kill -INT $$; sleep 5"]));
    assert!(err.contains("2 (SIGINT)"), "{err}");
}

#[test]
fn a_metric_may_not_take_the_name_of_another_figure() {
    let sandbox = Sandbox::new();
    // Twice, or a figure every trial stores: refused before anything runs.
    for (metric, says) in [
        (
            "metric=a:s:lower:regex:([0-9]+);;a:s:lower:regex:([0-9]+)",
            "metric `a` is given twice",
        ),
        (
            "metric=wall:s:lower:regex:([0-9]+)",
            "every trial stores wall, user, system, max_rss, exit_status itself",
        ),
    ] {
        let err = failure(&run_command(&sandbox, &["cmd=echo 5", metric]));
        assert!(err.contains(says), "{metric}: {err}");
    }
    // One of a parser's figures, known once it has read the output.
    let fio = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus/command_output/fio-randread.stdout");
    let cmd = format!("cmd=cat {}", fio.display());
    let err = failure(&run_command(
        &sandbox,
        &[
            &cmd,
            "parser=fio",
            "metric=read_iops:ios/s:higher:json:/jobs/0/read/iops",
        ],
    ));
    assert!(
        err.contains("metric `read_iops` has the name of a figure the fio parser reads"),
        "{err}"
    );
}

#[test]
fn a_metric_not_found_past_the_output_kept_says_the_output_was_cut() {
    let sandbox = Sandbox::new();
    let err = failure(&run_command(
        &sandbox,
        &[
            "cmd=head -c 68000000 /dev/zero; echo took 5",
            "metric=took:s:lower:regex:took ([0-9]+)",
        ],
    ));
    assert!(
        err.contains("matched nothing")
            && err.contains("(the command's output passed 64 MiB, and only that much was read)"),
        "{err}"
    );
}

#[test]
fn a_program_that_is_not_there_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    for cmd in [
        "cmd=sledge-no-such-program --x",
        "cmd=sledge-no-such-program",
    ] {
        for shell in ["shell=true", "shell=false"] {
            let err = failure(&run_command(&sandbox, &[cmd, shell]));
            assert!(
                err.contains("`sledge-no-such-program` is not a program on this host's PATH"),
                "{err}"
            );
        }
    }
    let err = failure(&run_command(&sandbox, &[]));
    assert!(
        err.contains("command needs the command line to run"),
        "{err}"
    );
    sandbox.assert_no_runs();
}

#[test]
fn metrics_that_cannot_be_read_are_clear_errors() {
    let sandbox = Sandbox::new();
    let err = failure(&run_command(
        &sandbox,
        &["cmd=echo hello", "metric=x:ms:lower:regex:nope ([0-9]+)"],
    ));
    assert!(err.contains("matched nothing in the output"), "{err}");
    assert!(err.contains("hello"), "{err}");
    let err = failure(&run_command(
        &sandbox,
        &["cmd=echo '{\"a\": 1}'", "metric=x:ms:lower:json:/b"],
    ));
    assert!(err.contains("has nothing at /b"), "{err}");
    let err = failure(&run_command(
        &sandbox,
        &["cmd=true", "metric=x:s:higher:regex:a"],
    ));
    assert!(err.contains("in s lower is better"), "{err}");
    let err = failure(&run_command(&sandbox, &["cmd=true", "parser=nope"]));
    assert!(err.contains("no such parser"), "{err}");
}

/// How many processes run exactly `words`.
fn running(words: &[&str]) -> usize {
    crate::common::processes_running(words).len()
}

#[test]
fn a_command_that_hangs_is_killed_at_its_limit_with_what_it_started() {
    let sandbox = Sandbox::new();
    let started = Instant::now();
    let err = failure(&run_command(
        &sandbox,
        &["cmd=sleep 9881 & sleep 9882", "time_limit=0.5"],
    ));
    assert!(
        err.contains("was still running after 0.5 s (time_limit)"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(running(&["sleep", "9881"]) + running(&["sleep", "9882"]), 0);
}

#[test]
fn ctrl_c_during_a_command_ends_it_and_keeps_the_run() {
    let sandbox = Sandbox::new();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args(["run", "command", "-p", "cmd=sleep 9891"])
        .args(FAST)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while running(&["sleep", "9891"]) == 0 {
        assert!(Instant::now() < until, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(running(&["sleep", "9891"]), 0);
    assert_eq!(sandbox.show_last()["status"], "partial");
}

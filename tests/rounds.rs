//! Rounds from the command line: each in its own process, judged from the
//! round means and the host's history, and nothing left behind when the
//! run is stopped. The scripted test workload makes every value known.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Sandbox, wait_bounded};

/// `sledge run test.scripted` with the given values, three rounds of two
/// counted trials and no warm-up; returns the run as JSON.
fn scripted_run(sandbox: &Sandbox, values: &str) -> Value {
    let out = sandbox
        .sledge()
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("SLEDGE_SCRIPTED_VALUES", values)
        .args(["run", "test.scripted"])
        .args(["--rounds", "3", "--warmup", "0", "--min-trials", "2"])
        .args(["--max-trials", "2", "--no-idle-check", "--json"])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn compare_json(sandbox: &Sandbox, args: &[&str]) -> (Value, Option<i32>) {
    let out = sandbox
        .sledge()
        .args(["compare", "--json"])
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (json, out.status.code())
}

#[test]
fn each_round_runs_in_its_own_process_and_the_ci_comes_from_round_means() {
    let sandbox = Sandbox::new();
    let run = scripted_run(&sandbox, "100:100/110:110/90:90");
    let case = &run["cases"][0];
    assert_eq!(case["rounds"].as_array().unwrap().len(), 3);
    let metric = &case["metrics"][0];
    assert_eq!(metric["name"], "value");
    assert_eq!(metric["levels"]["ci_basis"], "rounds");
    assert_eq!(
        metric["levels"]["round_means"],
        serde_json::json!([100.0, 110.0, 90.0])
    );
    assert_eq!(metric["summary"]["mean"], 100.0);
    // Round means sd 10, t(0.975, 2) = 4.302653: half width 24.84.
    let high = metric["summary"]["ci_high"].as_f64().unwrap();
    assert!((high - 124.841).abs() < 0.01, "{high}");
    // The pid metric says which process ran each trial: one per round.
    let pids = case["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "pid")
        .unwrap()["samples"]
        .as_array()
        .unwrap()
        .clone();
    let trials = case["trials"].as_array().unwrap();
    let mut per_round: Vec<(u64, f64)> = trials
        .iter()
        .zip(&pids)
        .filter(|(t, _)| t["replaced"] == false)
        .map(|(t, p)| (t["round"].as_u64().unwrap(), p.as_f64().unwrap()))
        .collect();
    per_round.dedup();
    assert_eq!(per_round.len(), 3, "one process per round: {per_round:?}");
    let mut distinct: Vec<f64> = per_round.iter().map(|(_, p)| *p).collect();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{per_round:?}");
}

#[test]
fn compare_judges_round_means_and_the_gate_fails_on_a_regression() {
    let sandbox = Sandbox::new();
    scripted_run(&sandbox, "100:100.2/101:100.8/99:99.2");
    scripted_run(&sandbox, "80:80.2/81:80.8/79:79.2");
    let (cmp, code) = compare_json(&sandbox, &["1", "2", "--no-history"]);
    assert_eq!(code, Some(0));
    let headline = &cmp["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(headline["comparison"]["verdict"], "slower");
    assert_eq!(headline["comparison"]["basis"], "rounds");
    assert!((headline["comparison"]["ratio"].as_f64().unwrap() - 0.8).abs() < 1e-3);
    assert_eq!(cmp["candidates"][0]["summary"]["slower"], 1);

    // A 20% loss fails a 10% gate (exit 3) and passes a 30% one.
    let gate = |pct: &str| {
        sandbox
            .sledge()
            .args(["compare", "1", "2", &format!("--fail-if-slower={pct}")])
            .output()
            .unwrap()
    };
    let failed = gate("10");
    assert_eq!(failed.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("regression: run 2: test.scripted"),
        "{stderr}"
    );
    assert_eq!(gate("30").status.code(), Some(0));
    for bad in ["-5", "abc", "101"] {
        let out = gate(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a percentage"));
    }
}

#[test]
fn the_hosts_run_to_run_noise_keeps_a_difference_inside_it_from_being_a_change() {
    // Five runs whose rounds agree tightly but whose levels scatter by
    // about 8% from run to run, as on a shared host.
    let sandbox = Sandbox::new();
    for level in [100.0, 108.0, 92.0, 104.0, 96.0] {
        let values = format!("{}/{}/{}", level, level * 1.001, level * 0.999);
        scripted_run(&sandbox, &values);
    }
    // Runs 4 and 5 differ by 8%: the rounds alone call it a change (it
    // is over the 5% a change needs without history)...
    let (alone, _) = compare_json(&sandbox, &["4", "5", "--no-history"]);
    let c = &alone["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(c["comparison"]["verdict"], "slower");
    // ...but runs 1-3 show this case moves more than that between runs.
    let (judged, _) = compare_json(&sandbox, &["4", "5"]);
    let m = &judged["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(m["comparison"]["verdict"], "no_difference");
    assert_eq!(m["comparison"]["basis"], "history");
    assert_eq!(m["baseline_history_runs"], 3);
    let text = sandbox
        .sledge()
        .args(["compare", "4", "5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // It says which change it rules out: the larger side of its CI.
    let within = m["no_difference_within"].as_f64().unwrap();
    let high = m["comparison"]["ratio_ci_high"].as_f64().unwrap();
    let low = m["comparison"]["ratio_ci_low"].as_f64().unwrap();
    assert_eq!(within, (high - 1.0).abs().max((1.0 - low).abs()), "{m}");
    let words = text
        .replace(['│', '┆'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let shown = format!("no difference, within ±{:.1}% (history ×3)", within * 100.0);
    assert!(words.contains(&shown), "{shown} in {text}");
}

/// The pids of the live children of `parent`.
fn children(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
                after.split_whitespace().nth(1) == Some(&parent.to_string())
            })
        })
        .collect()
}

fn wait_gone(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        // Gone, or a zombie waiting for its new parent to reap it.
        match state {
            Err(_) => return true,
            Ok(stat)
                if stat[stat.rfind(')').unwrap_or(0) + 1..]
                    .trim_start()
                    .starts_with('Z') =>
            {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn an_interrupt_stops_the_rounds_process_too() {
    let sandbox = Sandbox::new();
    let (mut parent, child) = start_scripted(&sandbox, &["-p", "sleep=20"]);
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(parent.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut parent, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    assert!(
        wait_gone(child, Duration::from_secs(10)),
        "round process {child} left behind"
    );
}

#[test]
fn a_killed_sledge_takes_its_rounds_process_with_it() {
    let sandbox = Sandbox::new();
    let (mut parent, child) = start_scripted(&sandbox, &["-p", "sleep=20"]);
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        wait_gone(child, Duration::from_secs(10)),
        "round process {child} left behind"
    );
}

#[test]
fn a_store_that_fills_up_midway_shows_what_it_stored_and_the_error() {
    use std::os::unix::process::CommandExt;
    let sandbox = Sandbox::new();
    // A first run creates the store; the second may then grow it by 24 KiB
    // only, which forty cases exceed.
    scripted_run(&sandbox, "100");
    let size = std::fs::metadata(sandbox.store()).unwrap().len();
    let limit = size + 24 * 1024;
    let labels: Vec<String> = (0..40).map(|i| format!("case{i}")).collect();
    let bin = assert_cmd::cargo::cargo_bin("sledge");
    let mut cmd = std::process::Command::new(bin);
    cmd.current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .args([
            "run",
            "test.scripted",
            "-p",
            &format!("label={}", labels.join(",")),
        ])
        .args(["--rounds", "1", "--warmup", "0", "--min-trials", "1"])
        .args(["--max-trials", "1", "--no-idle-check"]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let rlim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &rlim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("run 2 stopped: its store failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the cases above are stored as run 2"),
        "{stderr}"
    );
    // The table shows the cases that made it in, and `show` agrees.
    let shown = stdout.matches("test.scripted").count();
    assert!(shown >= 1, "{stdout}");
    let out = sandbox
        .sledge()
        .args(["show", "2", "--json"])
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored = run["cases"].as_array().unwrap().len();
    assert!((1..40).contains(&stored), "{stored} cases stored");
    // Marked failed with the reason, not left `running` (which would read
    // `abandoned` once its sledge exited, as if it had been killed).
    assert_eq!(run["status"], "failed", "{run}");
    let warnings = run["warnings"].to_string();
    assert!(
        warnings.contains("failed: the store failed midway"),
        "{warnings}"
    );
}

/// Starts `sledge run test.scripted` with `args`, its stderr kept in the
/// sandbox, and waits until its round's process is up.
#[allow(clippy::zombie_processes)]
fn start_scripted(sandbox: &Sandbox, args: &[&str]) -> (std::process::Child, u32) {
    let bin = assert_cmd::cargo::cargo_bin("sledge");
    let mut parent = std::process::Command::new(bin)
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .args(["run", "test.scripted", "--no-idle-check"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(sandbox.path().join("run.stderr")).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(&child) = children(parent.id()).first() {
            return (parent, child);
        }
        if Instant::now() > deadline {
            let _ = parent.kill();
            let _ = parent.wait();
            panic!("the round's process never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_run_whose_sledge_was_killed_is_abandoned_and_said_so() {
    let sandbox = Sandbox::new();
    let (mut parent, child) = start_scripted(&sandbox, &["-p", "sleep=20"]);
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(wait_gone(child, Duration::from_secs(10)));
    // Read-only views already say so.
    let listed = sandbox.sledge().args(["list", "--json"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["status"], "abandoned", "{runs}");
    let refused = sandbox
        .sledge()
        .args(["compare", "1", "1"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("marked `abandoned`"));
    // The next run marks it in the store and says so.
    let next = sandbox
        .sledge()
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .args(["run", "test.scripted", "--rounds", "1", "--warmup", "0"])
        .args(["--min-trials", "1", "--max-trials", "1", "--no-idle-check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: run 1 was left `running` by a sledge that is gone"),
        "{stderr}"
    );
    let shown = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(run["status"], "abandoned");
    assert!(
        run["warnings"]
            .to_string()
            .contains("abandoned: the sledge running it")
    );
}

#[test]
fn a_run_a_live_sledge_is_running_is_not_deleted_until_its_sledge_is_gone() {
    let sandbox = Sandbox::new();
    let (mut parent, child) = start_scripted(&sandbox, &["-p", "sleep=20"]);
    let refused = sandbox
        .sledge()
        .args(["delete", "1", "--yes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("run 1 is still `running`") && stderr.contains("nothing was deleted"),
        "{stderr}"
    );
    let listed = sandbox.sledge().args(["list", "--json"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs[0]["status"], "running", "{runs}");
    // Once its sledge is gone the run reads `abandoned` and may go.
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(wait_gone(child, Duration::from_secs(10)));
    sandbox
        .sledge()
        .args(["delete", "1", "--yes"])
        .assert()
        .success();
    sandbox.assert_no_runs();
}

#[test]
fn a_second_interrupt_still_marks_the_run_partial() {
    let sandbox = Sandbox::new();
    // The round's cleanup takes 20 s, so the first interrupt leaves the run
    // waiting for it and the second one finds it still running.
    let (mut parent, _child) = start_scripted(&sandbox, &["-p", "sleep=20", "-p", "cleanup=20"]);
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(parent.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(500));
    let second = Instant::now();
    unsafe { libc::kill(parent.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut parent, Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
    assert!(
        second.elapsed() < Duration::from_secs(10),
        "{:?}",
        second.elapsed()
    );
    let stderr = std::fs::read_to_string(sandbox.path().join("run.stderr")).unwrap();
    assert!(
        stderr.contains("second interrupt: run 1 marked partial"),
        "{stderr}"
    );
    let shown = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(run["status"], "partial");
}

#[test]
fn a_run_removes_only_scratch_a_sledge_that_is_gone_marked_as_its_own() {
    use sledge::monitor::maker_mark::{MARK_FILE, MakerMark};
    let sandbox = Sandbox::new();
    // A dead sledge's scratch directory, with data in it and its mark.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let stale = sandbox.path().join(format!("sledge-fileio-{gone_pid}-0"));
    std::fs::create_dir_all(stale.join("data")).unwrap();
    std::fs::write(stale.join("data/file0"), vec![0u8; 4096]).unwrap();
    let mut mark = MakerMark::new(&format!("sledge-fileio-{gone_pid}-0")).unwrap();
    mark.maker.pid = gone_pid;
    std::fs::write(stale.join(MARK_FILE), mark.to_line()).unwrap();
    // A live sledge's (a round's process waiting for its job), marked as
    // it would mark it: kept.
    let mut live = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .arg("__round")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let live_name = format!("sledge-disk-{}-0", live.id());
    let kept = sandbox.path().join(&live_name);
    std::fs::create_dir(&kept).unwrap();
    let mut mark = MakerMark::new(&live_name).unwrap();
    mark.maker.pid = live.id();
    mark.maker.starttime = sledge::monitor::procfs::read_pid_stat(live.id())
        .unwrap()
        .starttime;
    std::fs::write(kept.join(MARK_FILE), mark.to_line()).unwrap();
    // The user's own directories with sledge-like names and no mark: one
    // whose "pid" is gone, one whose "pid" is a process started after the
    // directory was last changed.
    let users = [
        sandbox.path().join("sledge-results-2024-03"),
        sandbox.path().join(format!("sledge-backup-{gone_pid}-0")),
        sandbox
            .path()
            .join(format!("sledge-backup-{}-0", live.id())),
    ];
    for dir in &users {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join("precious"), b"the user's").unwrap();
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
            .unwrap();
    }

    let out = sandbox
        .sledge()
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .args(["run", "test.scripted", "--rounds", "1", "--warmup", "0"])
        .args(["--min-trials", "1", "--max-trials", "1", "--no-idle-check"])
        .output()
        .unwrap();
    drop(live.stdin.take());
    let _ = live.kill();
    let _ = live.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stale.exists(), "{stderr}");
    assert!(
        kept.exists(),
        "a live sledge's scratch was removed: {stderr}"
    );
    for dir in &users {
        assert!(
            dir.join("precious").exists(),
            "{} was removed: {stderr}",
            dir.display()
        );
    }
    assert!(
        stderr.contains(&format!(
            "left behind by a sledge that is gone (pid {gone_pid})"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("note: removed").count(), 1, "{stderr}");
}

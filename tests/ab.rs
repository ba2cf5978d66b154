//! `sledge ab` from the command line: paired verdicts on known effects,
//! knobs put back after success, failure, Ctrl-C and a kill, bad knobs
//! refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Sandbox, wait_bounded};
use serde_json::Value;

/// `sledge` for an A/B test: test workloads on, a quiet host (verdicts
/// must not depend on this machine's load), the knob journal in the
/// sandbox.
fn ab(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("XDG_DATA_HOME", sandbox.path())
        .arg("ab");
    cmd
}

/// A knob file in the sandbox holding `text`.
fn knob(sandbox: &Sandbox, text: &str) -> PathBuf {
    let path = sandbox.path().join("knob");
    std::fs::write(&path, text).unwrap();
    path
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

const FAST: &[&str] = &["--rounds", "4", "--warmup", "0", "--no-idle-check"];

#[test]
fn a_known_slowdown_of_b_is_found_in_the_paired_ratio_and_the_pair_reads_back() {
    let sandbox = Sandbox::new();
    let out = ab(&sandbox)
        .args(["test.scripted", "--json"])
        .args(["--b-env", "SLEDGE_SCRIPTED_VALUES=90:91/89:90/90:88/91:90"])
        .args(["-p", "values=100:101/99:100/100:98/101:100"])
        .args(FAST)
        .args(["--min-trials", "2", "--max-trials", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &cmp["candidates"][0];
    assert_eq!(run["paired"], true, "{run}");
    let headline = &run["cases"][0]["metrics"][0];
    assert_eq!(headline["comparison"]["verdict"], "slower", "{headline}");
    assert_eq!(headline["comparison"]["basis"], "paired", "{headline}");
    assert_eq!(headline["paired_rounds"], 4, "{headline}");
    let (lo, hi) = (
        headline["comparison"]["ratio_ci_low"].as_f64().unwrap(),
        headline["comparison"]["ratio_ci_high"].as_f64().unwrap(),
    );
    assert!(lo < 0.9 && 0.9 < hi, "[{lo}, {hi}]");

    // Two runs linked as one pair, each saying its setting; compare reads
    // them back paired.
    let a = sandbox.show_last();
    let notes: Vec<&str> = a["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("ab=") && n.ends_with("/B")),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"ab_setting=env SLEDGE_SCRIPTED_VALUES=90:91/89:90/90:88/91:90"),
        "{notes:?}"
    );
    let again = sandbox
        .sledge()
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("paired ×4"), "{text}");
    assert!(text.contains("ratio = B / A"), "{text}");
}

#[test]
fn the_same_setting_on_both_sides_is_no_difference() {
    let sandbox = Sandbox::new();
    let out = ab(&sandbox)
        .args(["test.scripted", "--json"])
        .args(["-p", "values=100/101/99/100"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("an A/A comparison"), "{stderr}");
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let headline = &cmp["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(
        headline["comparison"]["verdict"], "no_difference",
        "{headline}"
    );
    assert_eq!(headline["comparison"]["ratio"], 1.0, "{headline}");
}

#[test]
fn a_knob_is_set_per_side_and_put_back_at_the_end_and_after_a_failure() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "always madvise [never]\n");
    // Each side's setup command records the knob's value as its round
    // starts: A's rounds must see A's value, B's rounds B's.
    let seen = sandbox.path().join("seen");
    let record = |side: &str| {
        format!(
            "echo {side}=$(cat {}) >> {}",
            path.display(),
            seen.display()
        )
    };
    let out = ab(&sandbox)
        .arg("--knob")
        .arg(format!("{}=always,madvise", path.display()))
        .args(["--a-setup", &record("A"), "--b-setup", &record("B")])
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is set to always before A's rounds and madvise before B's"),
        "{stderr}"
    );
    let seen_text = read(&seen);
    assert_eq!(
        seen_text.lines().filter(|l| *l == "A=always").count(),
        4,
        "{seen_text}"
    );
    assert_eq!(
        seen_text.lines().filter(|l| *l == "B=madvise").count(),
        4,
        "{seen_text}"
    );
    assert_eq!(read(&path).trim(), "never");

    // B's setup fails: the run fails, the knob still goes back, and so
    // does the restore command run.
    std::fs::write(&path, "always madvise [never]\n").unwrap();
    let restored = sandbox.path().join("restored");
    let out = ab(&sandbox)
        .arg("--knob")
        .arg(format!("{}=always,madvise", path.display()))
        .args(["--b-setup", "exit 7"])
        .args(["--restore", &format!("touch {}", restored.display())])
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(read(&path).trim(), "never");
    assert!(restored.exists());
    let journals = sandbox.path().join("sledge").join("knobs");
    assert_eq!(std::fs::read_dir(&journals).map_or(0, |d| d.count()), 0);
}

#[test]
fn bad_knobs_are_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "always madvise [never]\n");
    let refused = |knob_arg: String, expect: &str| {
        let out = ab(&sandbox)
            .arg("--knob")
            .arg(knob_arg)
            .args(["test.scripted"])
            .args(FAST)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{expect}: {stderr}");
    };
    refused(
        format!("{}=always,sometimes", path.display()),
        "does not accept `sometimes`; it accepts always, madvise, never",
    );
    refused(
        format!("{}/missing=1,2", sandbox.path().display()),
        "cannot be read (No such file or directory)",
    );
    refused(
        "vm.no_such_sysctl_here=1,2".to_string(),
        "is the sysctl's name right",
    );
    refused(format!("{}=always", path.display()), "needs two values");
    use std::os::unix::fs::PermissionsExt;
    let read_only = sandbox.path().join("read-only");
    std::fs::write(&read_only, "5\n").unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    refused(format!("{}=1,2", read_only.display()), "is read-only");
    assert_eq!(read(&path), "always madvise [never]\n");
    assert_eq!(read(&read_only), "5\n");
    sandbox.assert_no_runs();
}

/// Starts a slow `sledge ab` with a knob and waits until A's value is in
/// the knob; returns the process.
fn start_slow_ab(sandbox: &Sandbox, path: &Path) -> std::process::Child {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"));
    cmd.current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("XDG_DATA_HOME", sandbox.path())
        .arg("ab")
        .arg("--knob")
        .arg(format!("{}=10,30", path.display()))
        .args(["test.scripted", "-p", "sleep=0.5"])
        .args(["--rounds", "20", "--warmup", "0", "--no-idle-check"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !matches!(read(path).trim(), "10" | "30") {
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the knob was never set");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn ctrl_c_in_the_middle_puts_the_knob_back() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let mut child = start_slow_ab(&sandbox, &path);
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    assert_eq!(read(&path).trim(), "60");
}

#[test]
fn a_killed_sledge_leaves_a_journal_and_the_next_run_says_what_it_left_changed() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let mut child = start_slow_ab(&sandbox, &path);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = read(&path).trim().to_string();
    assert!(left == "10" || left == "30", "{left}");
    let out = ab(&sandbox)
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "left {} at `{left}`; it was `60` before",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("echo '60' > {}", path.display())),
        "{stderr}"
    );
    // Once the knob is back, nothing more is said.
    std::fs::write(&path, "60\n").unwrap();
    let out = ab(&sandbox)
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("left"), "{stderr}");
}

#[test]
fn duet_is_refused_with_host_wide_settings_and_with_one_cpu() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let out = ab(&sandbox)
        .args(["--duet", "--knob"])
        .arg(format!("{}=10,30", path.display()))
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--duet runs A and B at the same time"),
        "{stderr}"
    );
    let out = ab(&sandbox)
        .args(["--duet", "--cpus", "1", "test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--duet needs at least 2 CPUs"), "{stderr}");
    sandbox.assert_no_runs();
}

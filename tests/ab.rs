//! `sledge ab` from the command line: paired verdicts on known effects,
//! knobs put back after success, failure, Ctrl-C and a kill, bad knobs
//! refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Sandbox, gone_within_seconds, processes_running, wait_bounded};
use serde_json::Value;

/// `sledge` for an A/B test: test workloads on, a quiet host (verdicts
/// must not depend on this machine's load), the knob journal in the
/// sandbox, and the sandbox's `knobs/` directory standing in for the
/// kernel's tunables (a test cannot change the host's).
fn ab(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("XDG_DATA_HOME", sandbox.path())
        .env("SLEDGE_TEST_KNOB_ROOT", knob_root(sandbox))
        .arg("ab");
    cmd
}

/// The directory of stand-in knobs.
fn knob_root(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.path().join("knobs");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A knob file among the stand-in knobs holding `text`.
fn knob(sandbox: &Sandbox, text: &str) -> PathBuf {
    let path = knob_root(sandbox).join("knob");
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
    // Each side's setting heads the table, and is in the JSON.
    assert!(text.contains("\nA: as is\n"), "{text}");
    assert!(
        text.contains("\nB: env SLEDGE_SCRIPTED_VALUES=90:91/89:90/90:88/91:90\n"),
        "{text}"
    );
    assert_eq!(run["sides"][0], "as is", "{run}");
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
        format!("{}/missing=1,2", knob_root(&sandbox).display()),
        "cannot be read (No such file or directory)",
    );
    refused(
        "vm.no_such_sysctl_here=1,2".to_string(),
        "is the sysctl's name right",
    );
    refused(format!("{}=always", path.display()), "needs two values");

    use std::os::unix::fs::PermissionsExt;
    let read_only = knob_root(&sandbox).join("read-only");
    std::fs::write(&read_only, "5\n").unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    refused(format!("{}=1,2", read_only.display()), "is read-only");
    // One file named twice (here through `..`): refused before either
    // is written.
    let out = ab(&sandbox)
        .arg("--knob")
        .arg(format!("{}=always,never", path.display()))
        .arg("--knob")
        .arg(format!(
            "{}/../knobs/knob=madvise,never",
            knob_root(&sandbox).display()
        ))
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("are the same file"));
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
        .env("SLEDGE_TEST_KNOB_ROOT", knob_root(sandbox))
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

#[test]
fn a_side_whose_program_is_not_sledge_fails_naming_it_and_its_exit() {
    // A program that ends without reading its job: its exit status is
    // the error, whether or not writing the job met a closed pipe.
    let sandbox = Sandbox::new();
    for (program, status) in [
        ("/bin/true", "exit status: 0"),
        ("/bin/false", "exit status: 1"),
    ] {
        let out = ab(&sandbox)
            .args(["--a-sledge", program, "test.scripted"])
            .args(FAST)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "the round's process ({program}) ended without a result ({status})"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("Broken pipe"), "{stderr}");
    }
}

#[test]
fn a_knob_that_is_not_a_kernel_tunable_is_refused_and_left_untouched() {
    let sandbox = Sandbox::new();
    let root = knob_root(&sandbox);
    // A user's file beside the stand-in knobs, reached directly, through
    // a link among the knobs, and through `..`.
    let precious = sandbox.path().join("precious");
    std::fs::write(&precious, "keep: me\n").unwrap();
    std::os::unix::fs::symlink(&precious, root.join("link")).unwrap();
    let passwd = std::fs::read("/etc/passwd").ok();
    for path in [
        precious.clone(),
        root.join("link"),
        root.join("..").join("precious"),
        PathBuf::from("/etc/passwd"),
        PathBuf::from("/sys/../etc/passwd"),
    ] {
        let out = ab(&sandbox)
            .arg("--knob")
            .arg(format!("{}=a,b", path.display()))
            .args(["test.scripted"])
            .args(FAST)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not a kernel tunable"),
            "{path:?}: {stderr}"
        );
    }
    assert_eq!(read(&precious), "keep: me\n");
    assert_eq!(std::fs::read("/etc/passwd").ok(), passwd);
    sandbox.assert_no_runs();
}

#[test]
fn each_sides_cpus_and_wrapper_apply_to_its_rounds_only() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        eprintln!(
            "each_sides_cpus_and_wrapper_apply_to_its_rounds_only skipped: it needs two CPUs"
        );
        return;
    }
    let sandbox = Sandbox::new();
    // B's wrapper gives B's rounds other values: a wrapper that did not
    // run would leave the two sides alike.
    let out = ab(&sandbox)
        .args(["test.scripted", "--json", "--cpus", "2"])
        .args(["--a-cpus", "0", "--b-cpus", "1"])
        .args(["--a-wrap", "nice -n 1"])
        .args([
            "--b-wrap",
            "env SLEDGE_SCRIPTED_VALUES=90:91/89:90/90:88/91:90",
        ])
        .args(["-p", "values=100:101/99:100/100:98/101:100"])
        .args(FAST)
        .args(["--min-trials", "2", "--max-trials", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let headline = &cmp["candidates"][0]["cases"][0]["metrics"][0];
    assert_eq!(headline["comparison"]["verdict"], "slower", "{headline}");
    let b = sandbox.show_last();
    assert_eq!(b["cpus"], serde_json::json!([1]), "{b}");
    let notes = b["notes"].to_string();
    assert!(notes.contains("cpus 1"), "{notes}");
    assert!(
        notes.contains("wrap env 'SLEDGE_SCRIPTED_VALUES="),
        "{notes}"
    );
    let a = sandbox
        .sledge()
        .args(["show", "last~1", "--json"])
        .output()
        .unwrap();
    let a: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(a["cpus"], serde_json::json!([0]), "{a}");
    assert!(a["notes"].to_string().contains("wrap nice -n 1"), "{a}");
}

#[test]
fn an_interrupt_during_a_setup_command_ends_it_and_everything_it_started() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("XDG_DATA_HOME", sandbox.path())
        .env("SLEDGE_TEST_KNOB_ROOT", knob_root(&sandbox))
        .args(["ab", "--knob"])
        .arg(format!("{}=10,30", path.display()))
        .args([
            "--a-setup",
            "sleep 9861 & sleep 9862",
            "--b-setup",
            "sleep 9862",
        ])
        .args(["test.scripted"])
        .args(FAST)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while processes_running(&["sleep", "9862"]).is_empty() {
        assert!(Instant::now() < until, "the setup command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    assert_eq!(read(&path), "60\n");
    assert!(gone_within_seconds(&["sleep", "9861"]).is_empty());
    assert!(gone_within_seconds(&["sleep", "9862"]).is_empty());
    let journals = sandbox.path().join("sledge").join("knobs");
    assert_eq!(std::fs::read_dir(&journals).map_or(0, |d| d.count()), 0);
}

#[test]
fn what_a_setup_command_leaves_running_is_ended_with_it() {
    let sandbox = Sandbox::new();
    let out = ab(&sandbox)
        .args(["--a-setup", "sleep 9871 & exit 0"])
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left processes running in its group; they were killed"),
        "{stderr}"
    );
    assert!(gone_within_seconds(&["sleep", "9871"]).is_empty());

    // A setup command past its limit fails its round, named.
    let out = ab(&sandbox)
        .args(["--b-setup", "sleep 9872", "--setup-timeout", "0.3"])
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("was still running after 0.3 s"), "{stderr}");
    assert!(gone_within_seconds(&["sleep", "9872"]).is_empty());
}

#[test]
fn the_original_a_killed_sledge_recorded_is_what_the_next_one_puts_back() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let mut child = start_slow_ab(&sandbox, &path);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = read(&path).trim().to_string();
    assert!(left == "10" || left == "30", "{left}");
    let out = ab(&sandbox)
        .arg("--knob")
        .arg(format!("{}=10,30", path.display()))
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("its original `60` is what goes back at the end"),
        "{stderr}"
    );
    assert_eq!(read(&path), "60\n");
    let journals = sandbox.path().join("sledge").join("knobs");
    assert_eq!(std::fs::read_dir(&journals).map_or(0, |d| d.count()), 0);
}

#[test]
fn a_closed_pipe_ends_the_output_not_the_comparison() {
    let sandbox = Sandbox::new();
    let path = knob(&sandbox, "60\n");
    let sledge = assert_cmd::cargo::cargo_bin("sledge");
    // `head -1` closes the pipe after the first line; the knob must still
    // go back and both runs be stored.
    let script = format!(
        "'{}' ab --knob '{}=10,30' test.scripted {} 2>&1 | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}",
        sledge.display(),
        path.display(),
        FAST.join(" ")
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .env("XDG_DATA_HOME", sandbox.path())
        .env("SLEDGE_TEST_KNOB_ROOT", knob_root(&sandbox))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(read(&path), "60\n");
    let list = sandbox.sledge().args(["list", "--json"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");
}

#[test]
fn control_characters_given_on_the_command_line_are_shown_escaped() {
    let sandbox = Sandbox::new();
    let path = knob_root(&sandbox).join("k\x1b]0;owned\x07");
    std::fs::write(&path, "60\n").unwrap();
    let store_dir = sandbox.path().join("st\x1b[31mre");
    std::fs::create_dir(&store_dir).unwrap();
    let out = ab(&sandbox)
        .arg("--store")
        .arg(store_dir.join("r.db"))
        .arg("--knob")
        .arg(format!("{}=10,30", path.display()))
        .args(["test.scripted"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\x07'),
        "{stderr:?}"
    );
    assert!(stderr.contains("k\\x1b]0;owned\\x07"), "{stderr}");
    assert!(stderr.contains("st\\x1b[31mre"), "{stderr}");
}

//! UnixBench workloads end to end: every test runs with tiny passes and
//! the index table follows the results, bad parameters are refused before
//! anything starts, and no process, script or file is left behind after a
//! success, a failure, a cancellation or a Ctrl-C.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use sledge::engine::params::resolve_cases;
use sledge::engine::{
    CancelToken, CaseEnv, CaseOutcome, Methodology, PlannedCase, Silent, TrialContext,
};
use sledge::workloads::unixbench::copies::{CopyCommand, run_copies};
use sledge::workloads::unixbench::program::Program;
use sledge::workloads::unixbench::protocol::COPY_MARKER;

use crate::common::{FAST, Sandbox, wait_bounded};

/// Copies are started from the sledge binary, not from this test binary.
fn use_sledge() -> PathBuf {
    let sledge = PathBuf::from(env!("CARGO_BIN_EXE_sledge"));
    sledge::workloads::unixbench::use_copy_program(&sledge);
    sledge
}

fn planned(workload: &str, params: &[&str]) -> PlannedCase {
    let w = sledge::workloads::find(workload).expect("workload exists");
    let assignments: BTreeMap<String, Vec<String>> = params
        .iter()
        .map(|p| sledge::engine::params::split_assignment(p).unwrap())
        .collect();
    let mut cases = resolve_cases(w.id(), &w.params(), &assignments, 2).unwrap();
    assert_eq!(cases.len(), 1);
    PlannedCase {
        workload: w,
        params: cases.remove(0),
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Live processes whose working directory is `dir` or under it, as
/// "pid cmdline": the copies of a case in that directory and everything
/// they started (zombies have no working directory and do not count).
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&dir) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{name} {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Waits (at most `limit`) until no process works in `dir`; returns those
/// still there.
fn gone_from(dir: &Path, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = processes_in(dir);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_test_runs_at_two_copies_and_the_index_follows() {
    let sandbox = Sandbox::new();
    let data = tempfile::tempdir().unwrap();
    let output = sandbox
        .sledge()
        .args(["run", "unixbench", "-p", "copies=2", "-p", "time=0.05"])
        .args(["-p", "buffer=1K", "-p", "concurrent=2"])
        .args(["-p", &format!("dir={}", data.path().display())])
        .args(FAST)
        .args(["--metrics", "all"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for metric in [
        "loops_per_sec",
        "mwips",
        "kb_per_sec",
        "loops_per_min",
        "loops_per_sec_per_copy",
    ] {
        assert!(stdout.contains(metric), "{metric}: {stdout}");
    }
    for title in [
        "Dhrystone 2 using register variables",
        "Double-Precision Whetstone",
        "Execl Throughput",
        "File Copy 1024 bufsize 2000 maxblocks",
        "Pipe Throughput",
        "Pipe-based Context Switching",
        "Process Creation",
        "Shell Scripts (2 concurrent)",
        "System Call Overhead",
        "System Benchmarks Partial Index",
        "running 2 parallel copies of tests",
        "System Benchmarks Index Score (Partial Only)",
    ] {
        assert!(stdout.contains(title), "{title}: {stdout}");
    }
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
    assert!(gone_from(data.path(), Duration::from_secs(5)).is_empty());
    // The index is computed from the stored run, so `show` prints it too:
    // on one line in the scorecard, as UnixBench does with `--full`.
    let out = sandbox.sledge().args(["show", "last"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let index = text
        .lines()
        .find(|l| l.starts_with("UnixBench index: 2 copies "))
        .unwrap_or_else(|| panic!("no index line: {text}"));
    assert!(index.ends_with(" of 12 tests)"), "{index}");
    sandbox
        .sledge()
        .args(["show", "last", "--full"])
        .assert()
        .success()
        .stdout(predicate::str::contains("System Benchmarks Partial Index"))
        .stdout(predicate::str::contains("Execl Throughput"));
}

#[test]
fn each_copy_is_its_own_process_and_reports() {
    let sledge = use_sledge();
    // Spawn's copies become the fork/exec program, found in their working directory.
    let dir = tempfile::tempdir().unwrap();
    sledge::workloads::unixbench::forkexec::write_into(dir.path()).unwrap();
    for (program, seconds) in [
        (Program::Spawn, 0.05),
        (Program::Context, 0.05),
        (Program::Dhrystone, 0.05),
    ] {
        let command = CopyCommand {
            executable: sledge.clone(),
            args: program.to_args(),
            seconds,
            cwd: Some(dir.path().to_path_buf()),
            env: vec![],
        };
        let outcomes = run_copies(&command, 3, &CancelToken::new()).unwrap();
        assert_eq!(outcomes.len(), 3, "{program:?}");
        for outcome in outcomes {
            assert!(
                outcome.count >= 1.0 && outcome.seconds >= seconds,
                "{program:?}: {outcome:?}"
            );
        }
    }
}

#[test]
fn a_copy_that_fails_fails_the_trial_with_its_message() {
    let sledge = use_sledge();
    // The shell program runs in a directory without its scripts.
    let empty = tempfile::tempdir().unwrap();
    let command = CopyCommand {
        executable: sledge,
        args: Program::Shell { concurrent: 1 }.to_args(),
        seconds: 5.0,
        cwd: Some(empty.path().to_path_buf()),
        env: vec![],
    };
    let started = Instant::now();
    let err = run_copies(&command, 2, &CancelToken::new()).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("stopped before it could set itself up")
            && msg.contains("driver script")
            && msg.contains("missing"),
        "{msg}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert!(gone_from(empty.path(), Duration::from_secs(5)).is_empty());
}

#[test]
fn a_cancelled_trial_stops_every_process_and_removes_every_file() {
    use_sledge();
    let data = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", data.path().display());
    let method = Methodology {
        warmup_trials: 0,
        ..Methodology::default()
    };
    let env = CaseEnv {
        cpus: vec![0, 1],
        total_cache_bytes: 0,
        memory_bytes: 0,
    };
    let cases: [(&str, &[&str]); 3] = [
        ("unixbench.shell", &["copies=2", "concurrent=4", "time=30"]),
        ("unixbench.execl", &["copies=2", "time=30"]),
        ("unixbench.fcopy", &["copies=2", "buffer=256", "time=30"]),
    ];
    for (workload, params) in cases {
        let mut params = params.to_vec();
        params.push(&dir);
        let case = planned(workload, &params);
        let ctx = TrialContext::new(vec![0, 1], CancelToken::new());
        let cancel = ctx.cancel.clone();
        let watched = data.path().to_path_buf();
        let stopper = std::thread::spawn(move || {
            // Cancel once the copies are at work (or after 10 s).
            let deadline = Instant::now() + Duration::from_secs(10);
            while processes_in(&watched).len() < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(300));
            let running = processes_in(&watched).len();
            cancel.cancel();
            running
        });
        let started = Instant::now();
        let outcome = sledge::engine::run_case(&case, &env, &method, &ctx, &Silent);
        let running = stopper.join().unwrap();
        assert!(running >= 2, "{workload}: the copies never ran");
        assert!(
            matches!(outcome, CaseOutcome::Cancelled),
            "{workload}: {outcome:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(20), "{workload}");
        let left = gone_from(data.path(), Duration::from_secs(5));
        assert!(left.is_empty(), "{workload} left processes: {left:?}");
        assert!(
            entries(data.path()).is_empty(),
            "{workload} left {:?}",
            entries(data.path())
        );
    }
}

#[test]
fn ctrl_c_during_a_run_leaves_no_copy_behind() {
    let sandbox = Sandbox::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        // One workload: the order of a run's cases is shuffled, and the
        // copies looked for below are context's.
        .args(["run", "unixbench.context"])
        .args(["-p", "copies=2", "-p", "time=30"])
        .args(FAST)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The copies (and context's partners) work in the sandbox, as sledge does.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let copies = processes_in(sandbox.path())
            .into_iter()
            .filter(|p| p.contains(COPY_MARKER))
            .count();
        if copies >= 2 {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the copies never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    let left = gone_from(sandbox.path(), Duration::from_secs(5));
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_write_failure_in_a_copy_fails_the_case_and_leaves_nothing() {
    let sandbox = Sandbox::new();
    let data = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sledge"));
    cmd.current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args([
            "run",
            "unixbench.fcopy",
            "-p",
            "buffer=4K",
            "-p",
            "time=0.1",
        ])
        .args(["-p", &format!("dir={}", data.path().display())])
        .args(FAST);
    // Files may not grow past 1 MiB (the source file is 8000 KiB); SIGXFSZ
    // is ignored so the write fails with EFBIG, and both survive exec.
    // SAFETY: setrlimit and signal are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let output = cmd.output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("writing the source file"), "{stdout}");
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
}

#[test]
fn bad_parameters_are_refused_before_anything_starts() {
    let usage_errors = [
        ("unixbench.dhrystone", "copies=0", "a count from 1"),
        ("unixbench.pipe", "time=0", "a duration from 0.01 s"),
        ("unixbench.fcopy", "buffer=100", "a size (256 to 8K"),
        ("unixbench.fcopy", "buffer=16K", "a size (256 to 8K"),
        (
            "unixbench.fcopy",
            "max_blocks=2000000",
            "an integer from 0 to 1048576",
        ),
        ("unixbench.shell", "concurrent=0", "an integer from 1 to 64"),
        (
            "unixbench.syscall",
            "calls=open",
            "one of: mix, close, getpid, exec",
        ),
    ];
    for (workload, param, allowed) in usage_errors {
        let sandbox = Sandbox::new();
        sandbox
            .sledge()
            .args(["run", workload, "-p", param])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(allowed));
        assert_eq!(processes_in(sandbox.path()), Vec::<String>::new());
    }
    // A directory that cannot be used is refused before anything runs.
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args(["run", "unixbench.shell", "-p", "dir=/nonexistent/sledge"])
        .args(FAST)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not usable"))
        .stderr(predicate::str::contains("nothing was measured"));
}

//! Storage workloads: what `prepare` writes, the request rules, and that
//! nothing is left behind or written when it must not be. Files are tiny.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use sledge::engine::params::resolve_cases;
use sledge::engine::{
    CancelToken, Case, CaseEnv, CaseOutcome, Methodology, PlannedCase, Silent, TrialContext,
};

use crate::common::{FAST, Sandbox};

fn env() -> CaseEnv {
    CaseEnv {
        cpus: vec![0],
        total_cache_bytes: 0,
        memory_bytes: 0,
    }
}

fn ctx() -> TrialContext {
    TrialContext::new(vec![0], CancelToken::new())
}

fn planned(workload: &str, params: &[&str]) -> PlannedCase {
    let w = sledge::workloads::find(workload).expect("workload exists");
    let assignments: BTreeMap<String, Vec<String>> = params
        .iter()
        .map(|p| sledge::engine::params::split_assignment(p).unwrap())
        .collect();
    let mut cases = resolve_cases(w.id(), &w.params(), &assignments, 1).unwrap();
    assert_eq!(cases.len(), 1);
    PlannedCase {
        workload: w,
        params: cases.remove(0),
    }
}

fn build(workload: &str, params: &[&str]) -> anyhow::Result<Box<dyn Case>> {
    let p = planned(workload, params);
    p.workload.build(&p.params, &env())
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn metric(output: &sledge::engine::TrialOutput, name: &str) -> f64 {
    output
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .value
}

#[test]
fn prepare_writes_files_of_the_requested_size_and_cleanup_removes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", tmp.path().display());
    // 1 MiB over 3 files, in whole 16 KiB blocks: 21 blocks (336 KiB) each.
    let mut case = build("fileio", &[&dir, "file_num=3", "total_size=1M"]).unwrap();
    case.prepare(&ctx()).unwrap();
    let scratch = entries(tmp.path());
    assert_eq!(scratch.len(), 1, "{scratch:?}");
    let scratch = tmp.path().join(&scratch[0]);
    // The files, and the mark that lets a later run remove the directory
    // should this process be killed.
    assert_eq!(
        entries(&scratch),
        [".sledge-made", "test_file.0", "test_file.1", "test_file.2"]
    );
    for name in entries(&scratch)
        .iter()
        .filter(|n| n.starts_with("test_file"))
    {
        let len = std::fs::metadata(scratch.join(name)).unwrap().len();
        assert_eq!(len, 21 * 16384);
    }
    case.cleanup(&ctx()).unwrap();
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn request_counts_follow_the_ratio_and_fsync_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", tmp.path().display());
    // 10 rounds of 100 requests, each followed by one fsync per file (4):
    // 600 reads, 400 writes, 40 fsyncs.
    let mut case = build(
        "fileio",
        &[
            &dir,
            "file_num=4",
            "total_size=256K",
            "mode=rndrw",
            "events=1040",
            "fsync_end=false",
            "time=60",
        ],
    )
    .unwrap();
    case.prepare(&ctx()).unwrap();
    let out = case.trial(&ctx()).unwrap();
    case.cleanup(&ctx()).unwrap();
    let (r, w, f) = (
        metric(&out, "reads_per_sec"),
        metric(&out, "writes_per_sec"),
        metric(&out, "fsyncs_per_sec"),
    );
    let events = metric(&out, "events_per_sec");
    assert!((r / w - 1.5).abs() < 1e-9, "reads/writes = {}", r / w);
    assert!(
        ((r + w) / f - 25.0).abs() < 1e-9,
        "requests/fsyncs = {}",
        (r + w) / f
    );
    assert!(((r + w + f) / events - 1.0).abs() < 1e-9);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn fsync_end_fsyncs_every_file_after_writes_but_not_after_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", tmp.path().display());
    for (mode, expected) in [("rndwr", 8.0), ("rndrd", 0.0)] {
        let mode = format!("mode={mode}");
        let mut case = build(
            "fileio",
            &[&dir, "file_num=8", "total_size=256K", &mode, "events=50"],
        )
        .unwrap();
        case.prepare(&ctx()).unwrap();
        let out = case.trial(&ctx()).unwrap();
        case.cleanup(&ctx()).unwrap();
        let per_event = metric(&out, "fsyncs_per_sec") / metric(&out, "events_per_sec");
        assert!(
            (per_event * 50.0 - expected).abs() < 1e-6,
            "{mode}: {per_event}"
        );
    }
}

#[test]
fn the_checks_fail_clearly_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();

    let missing = format!("dir={}", tmp.path().join("missing").display());
    let err = build("fileio", &[&missing, "file_num=4", "total_size=1M"])
        .err()
        .unwrap();
    assert!(err.to_string().contains("is not usable"), "{err}");

    // A path under a regular file: no user, root included, can write there.
    let file = tmp.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let under = format!("dir={}", file.join("sub").display());
    let err = build("disk", &[&under, "size=1M"]).err().unwrap();
    assert!(err.to_string().contains("is not usable"), "{err}");

    let dir = format!("dir={}", tmp.path().display());
    let err = build("fileio", &[&dir, "total_size=1000T"]).err().unwrap();
    assert!(err.to_string().contains("not enough free space"), "{err}");
    let err = build("fileserver", &[&dir, "clients=4096"]);
    if let Some(err) = err.err() {
        let err = format!("{err:#}");
        assert!(
            err.contains("not enough free space") || err.contains("RLIMIT_NOFILE"),
            "{err}"
        );
    }

    assert_eq!(entries(tmp.path()), ["plain"]);
}

/// Whether this process may set the immutable flag: CAP_LINUX_IMMUTABLE
/// (capability 9) in its effective set.
fn has_cap_linux_immutable() -> bool {
    const CAP_LINUX_IMMUTABLE: u32 = 9;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_LINUX_IMMUTABLE) != 0)
}

/// chattr's complaint when the filesystem has no such flag (tmpfs on old
/// kernels, overlayfs, network filesystems).
fn unsupported_by_filesystem(stderr: &str) -> bool {
    stderr.contains("Operation not supported")
        || stderr.contains("Inappropriate ioctl for device")
        || stderr.contains("Function not implemented")
}

#[test]
fn an_immutable_directory_is_refused_even_for_root() {
    let tmp = tempfile::tempdir().unwrap();
    let locked = tmp.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let set = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&locked)
        .output();
    match set {
        Ok(out) if out.status.success() => {}
        // Skips only for reasons of the environment that make the test
        // impossible, each said; any other failure to set the flag fails.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("SKIPPED an_immutable_directory_is_refused_even_for_root: no chattr");
            return;
        }
        Ok(_) if !has_cap_linux_immutable() => {
            eprintln!(
                "SKIPPED an_immutable_directory_is_refused_even_for_root: \
                 setting +i needs CAP_LINUX_IMMUTABLE (root)"
            );
            return;
        }
        Ok(out) if unsupported_by_filesystem(&String::from_utf8_lossy(&out.stderr)) => {
            eprintln!(
                "SKIPPED an_immutable_directory_is_refused_even_for_root: \
                 the filesystem of {} has no immutable flag",
                tmp.path().display()
            );
            return;
        }
        Ok(out) => panic!(
            "chattr +i failed unexpectedly ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("running chattr failed: {e}"),
    }
    let dir = format!("dir={}", locked.display());
    let result = build("fileio", &[&dir, "file_num=4", "total_size=1M"]);
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&locked)
        .status();
    let err = result
        .err()
        .expect("an immutable directory must be refused");
    assert!(err.to_string().contains("not writable"), "{err}");
    assert!(entries(&locked).is_empty());
}

#[test]
fn a_cancellation_during_prepare_or_a_trial_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", tmp.path().display());
    let method = Methodology {
        warmup_trials: 0,
        ..Methodology::default()
    };
    let cases: [(&str, &[&str]); 3] = [
        // Prepare writes 256 MiB in 1 KiB blocks: far longer than 150 ms (and
        // if not, the 10 s trial that follows is cancelled instead).
        (
            "fileio",
            &["file_num=2", "total_size=256M", "block_size=1K"],
        ),
        // 60 s trials.
        ("fileio", &["file_num=2", "total_size=256K", "time=60"]),
        ("fileserver", &["clients=2", "time=60"]),
    ];
    for (workload, params) in cases {
        let mut params = params.to_vec();
        params.push(&dir);
        let case = planned(workload, &params);
        let ctx = ctx();
        let cancel = ctx.cancel.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            cancel.cancel();
        });
        let started = std::time::Instant::now();
        let outcome = sledge::engine::run_case(&case, &env(), &method, &ctx, &Silent);
        stopper.join().unwrap();
        assert!(matches!(outcome, CaseOutcome::Cancelled), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(entries(tmp.path()).is_empty(), "{workload} {params:?}");
    }
}

#[test]
fn every_storage_workload_runs_and_leaves_nothing_behind() {
    let sandbox = Sandbox::new();
    let data = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", data.path().display());
    let runs: [&[&str]; 4] = [
        &[
            "fileio",
            "--param",
            "file_num=4",
            "--param",
            "total_size=1M",
            "--param",
            "time=0.2",
        ],
        &[
            "disk",
            "--param",
            "size=1M",
            "--param",
            "seeks=100",
            "--param",
            "files=64",
        ],
        &["fileserver", "--param", "time=0.3", "--param", "warmup=0.1"],
        &[
            "fileserver.net",
            "--param",
            "time=0.3",
            "--param",
            "warmup=0.1",
            "--param",
            "clients=2",
        ],
    ];
    for args in runs {
        let mut cmd = sandbox.sledge();
        cmd.arg("run").args(args).args(FAST).arg("--json");
        if args[0] != "fileserver.net" {
            cmd.args(["--param", &dir]);
        }
        let output = cmd.output().unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let run: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let case = &run["cases"][0];
        assert!(case["error"].is_null(), "{case}");
        assert!(!case["metrics"].as_array().unwrap().is_empty());
        assert!(entries(data.path()).is_empty(), "{args:?}");
    }
}

/// A child whose files may not grow past 4 MiB: writes beyond that fail
/// with EFBIG (SIGXFSZ is ignored, and that survives exec).
fn with_file_size_limit(cmd: &mut std::process::Command) {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 4 << 20,
                rlim_max: 4 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn a_write_failure_midway_fails_the_case_removes_its_files_and_keeps_the_others() {
    let sandbox = Sandbox::new();
    let data = tempfile::tempdir().unwrap();
    let dir = format!("dir={}", data.path().display());
    // Cases in order: seqwr 1M (fine), seqwr 16M (fails in a trial, as
    // the run extends the files), rndrw 1M (fine), rndrw 16M (fails in
    // prepare). Trials end after 1024 events (16 MiB of 16 KiB blocks),
    // not on time: seqwr 16M's first trial writes its first 8 MiB file
    // from the start and must pass the 4 MiB limit however slow the
    // machine is; the 30 s time limit is only a backstop.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sledge"));
    cmd.current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env_remove("XDG_DATA_HOME");
    cmd.args(["run", "fileio", "--json", "--param", &dir])
        .args(["--param", "mode=seqwr,rndrw"])
        .args(["--param", "file_num=2", "--param", "total_size=1M,16M"])
        .args(["--param", "events=1024", "--param", "time=30"])
        .args(FAST);
    with_file_size_limit(&mut cmd);
    let output = cmd.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4, "{run}");
    for (i, case) in cases.iter().enumerate() {
        let failed = i % 2 == 1;
        assert_eq!(case["error"].is_string(), failed, "case {i}: {case}");
        if failed {
            let error = case["error"].as_str().unwrap();
            assert!(
                error.contains("test_file") && error.contains("large"),
                "{error}"
            );
        } else {
            assert!(!case["metrics"].as_array().unwrap().is_empty());
        }
    }
    assert!(entries(data.path()).is_empty());
}

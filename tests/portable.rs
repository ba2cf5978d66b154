//! `sledge export`, `import` and `delete`: runs carried between stores.

use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{FAST, Sandbox};

/// A tiny cpu.primes run and a tiny HTTP run (which has a latency
/// histogram), stored in `sandbox`.
fn two_runs(sandbox: &Sandbox) {
    sandbox
        .sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=2000",
            "-p",
            "time=0.05",
        ])
        .args(["-p", "threads=1,2"])
        .args(FAST)
        .assert()
        .success();
    sandbox
        .sledge()
        .args([
            "run",
            "http.static",
            "-p",
            "time=0.1",
            "-p",
            "concurrency=2",
        ])
        .args(["-p", "requests=0"])
        .args(FAST)
        .assert()
        .success();
}

/// `show RUN --json` without the local id.
fn shown_without_id(sandbox: &Sandbox, run: &str) -> Value {
    let out = sandbox
        .sledge()
        .args(["show", run, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut value: Value = serde_json::from_slice(&out.stdout).unwrap();
    value.as_object_mut().unwrap().remove("id");
    value
}

fn stdout(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

#[test]
fn exported_runs_import_into_another_store_unchanged_and_once() {
    let here = Sandbox::new();
    two_runs(&here);
    let file = here.path().join("runs.json");
    here.sledge()
        .args(["export", "1", "last", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains("exported 2 runs to"));
    // To stdout, the same document but for the export time.
    let to_stdout = here.sledge().args(["export", "1", "2"]).assert().success();
    let piped: Value = serde_json::from_slice(&to_stdout.get_output().stdout).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(piped["runs"], written["runs"]);
    assert_eq!(written["kind"], "sledge-runs");
    assert!(
        written["runs"][1]["cases"][0]["latency_histogram"]
            .as_str()
            .is_some_and(|h| h.starts_with("HISTF")),
        "the HTTP case carries its histogram"
    );

    let there = Sandbox::new();
    // A run of its own first, so the imported ones get other ids.
    there
        .sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=1000",
            "-p",
            "time=0.05",
        ])
        .args(FAST)
        .assert()
        .success();
    let imported = there.sledge().arg("import").arg(&file).assert().success();
    let text = stdout(&imported);
    assert!(
        text.contains("as run 2\n") && text.contains("as run 3\n"),
        "{text}"
    );
    assert!(text.contains("2 runs added, 0 already stored"), "{text}");
    for (original, copy) in [("1", "2"), ("2", "3")] {
        assert_eq!(
            shown_without_id(&here, original),
            shown_without_id(&there, copy)
        );
    }

    // Again: nothing is added, and it says so.
    let again = there.sledge().arg("import").arg(&file).assert().success();
    let text = stdout(&again);
    assert!(
        text.contains("is already stored as run 2: nothing added"),
        "{text}"
    );
    assert!(text.contains("0 runs added, 2 already stored"), "{text}");
    let listed = there.sledge().args(["list", "--json"]).assert().success();
    let runs: Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 3);
    // A run can be named by its UUID in the other store.
    let uuid = written["runs"][0]["uuid"].as_str().unwrap();
    let by_uuid = there
        .sledge()
        .args(["show", &uuid[..8], "--json"])
        .assert()
        .success();
    let shown: Value = serde_json::from_slice(&by_uuid.get_output().stdout).unwrap();
    assert_eq!(shown["id"], 2);
}

/// The store file's bytes, or `None` if there is none.
fn store_bytes(sandbox: &Sandbox) -> Option<Vec<u8>> {
    std::fs::read(sandbox.store()).ok()
}

fn refused(sandbox: &Sandbox, file: &Path, expected: &str) {
    let before = store_bytes(sandbox);
    let out = sandbox.sledge().arg("import").arg(file).assert().code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains(&format!("error: {}: ", file.display())),
        "names the file: {stderr}"
    );
    assert!(stderr.contains(expected), "{expected}: {stderr}");
    assert_eq!(store_bytes(sandbox), before, "the store is untouched");
}

#[test]
fn bad_documents_are_refused_with_the_file_named_and_nothing_stored() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=1000",
            "-p",
            "time=0.05",
        ])
        .args(FAST)
        .assert()
        .success();
    let dir = sandbox.path();
    let good = dir.join("good.json");
    sandbox
        .sledge()
        .args(["export", "1", "-o"])
        .arg(&good)
        .assert()
        .success();
    let text = std::fs::read_to_string(&good).unwrap();

    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, b"\x7fELF\x02\x01\x01garbage").unwrap();
    refused(&sandbox, &garbage, "is not JSON");

    refused(&sandbox, dir, "is a directory");

    let empty = dir.join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    refused(&sandbox, &empty, "is empty");

    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() - 200]).unwrap();
    refused(&sandbox, &truncated, "is truncated");

    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["runs"][0]["cases"][0]
        .as_object_mut()
        .unwrap()
        .remove("metrics");
    let missing = dir.join("missing-field.json");
    std::fs::write(&missing, value.to_string()).unwrap();
    refused(
        &sandbox,
        &missing,
        "runs[0].cases[0] (cpu.primes): missing field `metrics`",
    );

    let mut newer: Value = serde_json::from_str(&text).unwrap();
    newer["format_version"] = 99.into();
    let newer_file = dir.join("newer.json");
    std::fs::write(&newer_file, newer.to_string()).unwrap();
    refused(&sandbox, &newer_file, "format version 99, newer than");

    let shown = dir.join("shown.json");
    let out = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .assert()
        .success();
    std::fs::write(&shown, &out.get_output().stdout).unwrap();
    refused(&sandbox, &shown, "`sledge show --json`");

    // 2 GB of zeros (sparse: no disk space is used): read as a stream,
    // refused at its first byte, with no size to speak of.
    let huge = dir.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2_000_000_000)
        .unwrap();
    refused(
        &sandbox,
        &huge,
        "is not JSON (expected value at line 1 column 1)",
    );
    for device in ["/dev/zero", "/dev/null"] {
        let out = sandbox.sledge().args(["import", device]).assert().code(1);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.starts_with(&format!("error: {device}: is ")) && !stderr.contains("bytes"),
            "{stderr}"
        );
    }

    // A missing file: the system's reason, once.
    let out = sandbox
        .sledge()
        .arg("import")
        .arg(dir.join("missing.json"))
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("missing.json: cannot read it: "),
        "{stderr}"
    );
    assert_eq!(stderr.matches("(os error 2)").count(), 1, "{stderr}");

    // A run the engine could not have stored: the run, the case, the
    // field and what is allowed.
    let mut inverted: Value = serde_json::from_str(&text).unwrap();
    let summary = &mut inverted["runs"][0]["cases"][0]["metrics"][0]["summary"];
    let low = summary["ci_low"].take();
    summary["ci_low"] = summary["ci_high"].take();
    summary["ci_high"] = low;
    let inverted_file = dir.join("inverted.json");
    std::fs::write(&inverted_file, inverted.to_string()).unwrap();
    refused(
        &sandbox,
        &inverted_file,
        "runs[0].cases[0] (cpu.primes): metric events_per_sec: summary.ci_low ",
    );
    let mut absurd: Value = serde_json::from_str(&text).unwrap();
    absurd["runs"][0]["cases"][0]["metrics"][0]["summary"]["mean"] = 1e308.into();
    let absurd_file = dir.join("absurd.json");
    std::fs::write(&absurd_file, absurd.to_string()).unwrap();
    refused(
        &sandbox,
        &absurd_file,
        "metrics[0].summary.mean is 1e+308; allowed is a finite number",
    );
    let mut no_uuid: Value = serde_json::from_str(&text).unwrap();
    no_uuid["runs"][0]["uuid"] = "".into();
    let no_uuid_file = dir.join("no-uuid.json");
    std::fs::write(&no_uuid_file, no_uuid.to_string()).unwrap();
    refused(&sandbox, &no_uuid_file, "runs[0]: uuid is empty");

    // A good file beside a bad one: the bad one stops the whole import.
    let before = store_bytes(&sandbox);
    sandbox
        .sledge()
        .arg("import")
        .arg(&good)
        .arg(&empty)
        .assert()
        .code(1);
    assert_eq!(store_bytes(&sandbox), before);
}

#[test]
fn a_document_over_256_mib_imports_as_a_stream() {
    let here = Sandbox::new();
    here.sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=1000",
            "-p",
            "time=0.05",
        ])
        .args(FAST)
        .assert()
        .success();
    let out = here.sledge().args(["export", "1"]).assert().success();
    let document = out.get_output().stdout.clone();

    // The document and 257 MiB of trailing white space, piped: more than
    // the 256 MiB an import used to read, and never held in memory.
    let there = Sandbox::new();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(there.path())
        .env("SLEDGE_STORE", there.store())
        .env_remove("XDG_DATA_HOME")
        .args(["import", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        stdin.write_all(&document)?;
        let spaces = vec![b' '; 1 << 20];
        for _ in 0..257 {
            stdin.write_all(&spaces)?;
        }
        Ok::<_, std::io::Error>(())
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 run added"), "{stdout}");
}

#[test]
fn delete_removes_runs_and_asks_unless_told_not_to() {
    let sandbox = Sandbox::new();
    for _ in 0..3 {
        sandbox
            .sledge()
            .args([
                "run",
                "cpu.primes",
                "-p",
                "max_prime=1000",
                "-p",
                "time=0.05",
            ])
            .args(FAST)
            .assert()
            .success();
    }
    // Not a terminal and no --yes: refused, nothing removed.
    sandbox
        .sledge()
        .args(["delete", "1"])
        .write_stdin("y\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pass --yes"));
    sandbox
        .sledge()
        .args(["delete", "2", "9"])
        .arg("--yes")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run 9"));
    sandbox
        .sledge()
        .args(["delete", "1", "last", "--yes"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("deleted run 1")
                .and(predicate::str::contains("deleted run 3")),
        );
    let listed = sandbox.sledge().args(["list", "--json"]).assert().success();
    let runs: Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    let ids: Vec<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![2]);
}

#[test]
fn export_of_an_unknown_run_is_a_usage_error_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let file = sandbox.path().join("out.json");
    sandbox
        .sledge()
        .args(["export", "7", "-o"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run 7"));
    assert!(!file.exists());
    let leftovers: Vec<_> = std::fs::read_dir(sandbox.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".sledge-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

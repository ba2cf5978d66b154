//! `sledge export`, `import` and `delete`: runs carried between stores.

use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{FAST, Sandbox, store_fixture_run};

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

/// The first metric of the first case of the document `text`, every
/// sample and summary value replaced by `value(old)` (the interval's and
/// the range's ends swapped when it turns them round).
fn with_values(text: &str, value: impl Fn(f64) -> f64) -> Value {
    let mut document: Value = serde_json::from_str(text).unwrap();
    let metric = &mut document["runs"][0]["cases"][0]["metrics"][0];
    for sample in metric["samples"].as_array_mut().unwrap() {
        *sample = value(sample.as_f64().unwrap()).into();
    }
    let summary = &mut metric["summary"];
    for field in ["mean", "median", "min", "max", "ci_low", "ci_high"] {
        summary[field] = value(summary[field].as_f64().unwrap()).into();
    }
    for (low, high) in [("min", "max"), ("ci_low", "ci_high")] {
        if summary[low].as_f64() > summary[high].as_f64() {
            let swapped = summary[low].take();
            summary[low] = summary[high].take();
            summary[high] = swapped;
        }
    }
    document
}

#[test]
fn negative_and_absurd_metric_values_are_refused_at_import() {
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
    let good = sandbox.path().join("good.json");
    sandbox
        .sledge()
        .args(["export", "1", "-o"])
        .arg(&good)
        .assert()
        .success();
    let text = std::fs::read_to_string(&good).unwrap();
    let target = Sandbox::new();

    // events_per_sec negated, consistent in itself: what gave history
    // "200.0% slower, median -2416.8 -> 2416.8".
    let negative = target.path().join("negative.json");
    std::fs::write(&negative, with_values(&text, |v| -v).to_string()).unwrap();
    refused(
        &target,
        &negative,
        "runs[0].cases[0] (cpu.primes): metric events_per_sec: samples[0] is -",
    );
    refused(
        &target,
        &negative,
        "; allowed is 0 or more (events/s is a rate, never negative)",
    );

    // Values at 1e290 and at 1e-290: what gave "inf% faster" and cells
    // 300 digits wide.
    for (name, value) in [("huge.json", 1e290), ("tiny.json", 1e-290)] {
        let file = target.path().join(name);
        std::fs::write(&file, with_values(&text, |_| value).to_string()).unwrap();
        refused(
            &target,
            &file,
            &format!(
                "metric events_per_sec: samples[0] is {value:e}; allowed is 0 or a magnitude between 1e-12 and 1e15"
            ),
        );
    }
    target.assert_no_runs();

    // The run as it was imports.
    target.sledge().arg("import").arg(&good).assert().success();
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
fn export_and_report_never_write_over_the_store() {
    use sledge::results::RunStatus;
    let sandbox = Sandbox::new();
    store_fixture_run(&sandbox.store(), RunStatus::Complete, &[100.0, 101.0]);
    let dir = sandbox.path();
    std::os::unix::fs::symlink("results.db", dir.join("link.db")).unwrap();
    std::fs::hard_link(sandbox.store(), dir.join("hard.db")).unwrap();
    let before = std::fs::read(sandbox.store()).unwrap();
    for command in ["export", "report"] {
        for output in [
            "results.db",
            "./results.db",
            "link.db",
            "hard.db",
            "results.db-journal",
        ] {
            sandbox
                .sledge()
                .args([command, "1", "-o", output])
                .assert()
                .code(2)
                .stdout("")
                .stderr(predicate::str::contains(format!(
                    "the output file {output} is the store {}",
                    sandbox.store().display()
                )));
        }
    }
    assert_eq!(std::fs::read(sandbox.store()).unwrap(), before);
    assert!(!dir.join("results.db-journal").exists());
    sandbox.sledge().args(["show", "1"]).assert().success();
}

#[test]
fn exports_are_compact_unless_asked_pretty_and_both_import() {
    use sledge::results::RunStatus;
    let here = Sandbox::new();
    store_fixture_run(&here.store(), RunStatus::Complete, &[100.0, 101.0]);
    let compact = here.path().join("compact.json");
    let pretty = here.path().join("pretty.json");
    here.sledge()
        .args(["export", "1", "-o"])
        .arg(&compact)
        .assert()
        .success();
    here.sledge()
        .args(["export", "1", "--pretty", "-o"])
        .arg(&pretty)
        .assert()
        .success();
    let compact_text = std::fs::read_to_string(&compact).unwrap();
    let pretty_text = std::fs::read_to_string(&pretty).unwrap();
    assert_eq!(compact_text.lines().count(), 1, "{compact_text}");
    assert!(compact_text.ends_with("}\n"));
    assert!(pretty_text.lines().count() > 10, "{pretty_text}");
    assert!(compact_text.len() < pretty_text.len());
    let a: Value = serde_json::from_str(&compact_text).unwrap();
    let b: Value = serde_json::from_str(&pretty_text).unwrap();
    assert_eq!(a["runs"], b["runs"]);
    for file in [&compact, &pretty] {
        let there = Sandbox::new();
        there
            .sledge()
            .arg("import")
            .arg(file)
            .assert()
            .success()
            .stdout(predicate::str::contains("1 run added"));
    }
}

#[test]
fn export_of_an_unknown_run_is_a_usage_error_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let file = sandbox.path().join("out.json");
    // Without a store, export and report (which only read) create none.
    for command in [["export", "7"], ["report", "7"]] {
        sandbox
            .sledge()
            .args(command)
            .arg("-o")
            .arg(&file)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("no runs yet: there is no store"));
        assert!(!sandbox.store().exists(), "{command:?} created a store");
        assert!(!file.exists());
    }
    store_fixture_run(
        &sandbox.store(),
        sledge::results::RunStatus::Complete,
        &[1.0, 2.0],
    );
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

/// `compare BASE CAND --fail-if-slower 5 --json` in `sandbox`: the exit
/// code and the headline metric's comparison.
fn gate(sandbox: &Sandbox, base: i64, cand: i64) -> (Option<i32>, Value) {
    let out = sandbox
        .sledge()
        .args(["compare", &base.to_string(), &cand.to_string()])
        .args(["--fail-if-slower", "5", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let metric = json["candidates"][0]["cases"][0]["metrics"][0].clone();
    (out.status.code(), metric)
}

#[test]
fn imported_runs_are_no_hosts_history_and_no_history_widens_past_sense() {
    use sledge::results::RunStatus::Complete;
    let here = Sandbox::new();
    let base = crate::common::store_fixture_run(&here.store(), Complete, &[100.0, 101.0, 99.0]);
    let cand = crate::common::store_fixture_run(&here.store(), Complete, &[70.0, 70.7, 69.3]);
    let (code, metric) = gate(&here, base, cand);
    assert_eq!(code, Some(3), "30% slower fails the gate: {metric}");

    // Five runs under the same host identity whose values swing tenfold,
    // made elsewhere and imported: not what this host measured.
    let elsewhere = Sandbox::new();
    for samples in [[10.0; 3], [200.0; 3], [10.0; 3], [200.0; 3], [10.0; 3]] {
        crate::common::store_fixture_run(&elsewhere.store(), Complete, &samples);
    }
    let file = elsewhere.path().join("crafted.json");
    elsewhere
        .sledge()
        .args(["export", "1", "2", "3", "4", "5", "-o"])
        .arg(&file)
        .assert()
        .success();
    here.sledge().arg("import").arg(&file).assert().success();
    let (code, metric) = gate(&here, base, cand);
    assert_eq!(code, Some(3), "imported runs widened the band: {metric}");
    assert_eq!(metric["baseline_history_runs"], 0, "{metric}");
    assert_eq!(metric["comparison"]["verdict"], "slower", "{metric}");
    assert_eq!(metric["comparison"]["history_suspect"], false, "{metric}");

    // The same swings measured here are this host's history, but one that
    // no host honestly shows: used at the cap, and named suspect.
    for samples in [[10.0; 3], [200.0; 3], [10.0; 3], [200.0; 3], [10.0; 3]] {
        crate::common::store_fixture_run(&here.store(), Complete, &samples);
    }
    let (_, metric) = gate(&here, base, cand);
    assert_eq!(metric["baseline_history_runs"], 5, "{metric}");
    let comparison = &metric["comparison"];
    assert_eq!(comparison["history_suspect"], true, "{metric}");
    let (low, high) = (
        comparison["ratio_ci_low"].as_f64().unwrap(),
        comparison["ratio_ci_high"].as_f64().unwrap(),
    );
    // Uncapped, these runs would put the ratio anywhere from 1/10,000 to
    // 10,000.
    assert!(low > 0.2 && high < 2.5, "{metric}");
    let text = here
        .sledge()
        .args(["compare", &base.to_string(), &cand.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("history suspect"), "{text}");
}

/// What a hostile document puts in its text: an OSC title, a screen
/// clear and a colour, carriage return, backspace, NUL, DEL, a C1 CSI and
/// bidi overrides.
const HOSTILE: &str = "\x1b]0;owned\x07\x1b[2J\x1b[31m\r\x08\0\x7f\u{9b}31m\u{202e}\u{2066}";

/// The characters of [`HOSTILE`] that must never reach a terminal raw.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            matches!(
                c,
                '\x1b'
                    | '\r'
                    | '\x08'
                    | '\0'
                    | '\x7f'
                    | '\x07'
                    | '\u{9b}'
                    | '\u{202e}'
                    | '\u{2066}'
            )
        })
        .collect()
}

/// Appends [`HOSTILE`] to every string under `path` (and puts it in every
/// `null` and empty list) wherever the document still imports with it:
/// every text field a run has, whatever it is.
fn poison(document: &mut Value, path: &mut Vec<String>) {
    let pointer: String = path.iter().map(|p| format!("/{p}")).collect();
    let node = document.pointer(&pointer).unwrap().clone();
    let mut try_as = |candidate: Value| {
        let old = std::mem::replace(document.pointer_mut(&pointer).unwrap(), candidate);
        let bytes = serde_json::to_vec(document).unwrap();
        if sledge::report::portable::parse(&bytes, "hostile.json").is_err() {
            *document.pointer_mut(&pointer).unwrap() = old;
        }
    };
    match node {
        Value::String(s) => try_as(Value::String(format!("{s}{HOSTILE}"))),
        Value::Null => try_as(Value::String(HOSTILE.into())),
        Value::Array(items) if items.is_empty() => {
            try_as(Value::Array(vec![Value::String(HOSTILE.into())]))
        }
        Value::Array(items) => {
            for i in 0..items.len() {
                path.push(i.to_string());
                poison(document, path);
                path.pop();
            }
        }
        Value::Object(map) => {
            for key in map.keys() {
                path.push(key.clone());
                poison(document, path);
                path.pop();
            }
        }
        Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Escape sequences, carriage returns, backspaces, NULs, C1 controls and
/// bidi overrides in every text field of an imported run are shown
/// escaped by `import`, `list`, `show` (table, every metric, CSV,
/// Markdown), `compare` (table and Markdown), `report` and `delete`, and
/// in an error quoting the document: never raw.
#[test]
fn text_from_an_imported_document_reaches_no_terminal_raw() {
    use sledge::results::RunStatus;
    let here = Sandbox::new();
    crate::common::store_fixture_run(&here.store(), RunStatus::Complete, &[10.0, 11.0, 12.5]);
    crate::common::store_fixture_run(&here.store(), RunStatus::Complete, &[20.0, 21.0, 22.5]);
    let exported = here.sledge().args(["export", "1", "2"]).assert().success();
    let mut document: Value = serde_json::from_slice(&exported.get_output().stdout).unwrap();
    poison(&mut document, &mut vec!["runs".to_string()]);
    for run in document["runs"].as_array_mut().unwrap() {
        run["cases"][0]["params"][format!("key{HOSTILE}")] = Value::String("v".into());
        run["host"]["mitigations"][format!("key{HOSTILE}")] = Value::String("v".into());
    }
    let text = document.to_string();
    assert!(
        text.matches("\\u001b]0;owned").count() > 40,
        "the document is hostile everywhere: {text}"
    );
    let file = here.path().join("hostile.json");
    std::fs::write(&file, &text).unwrap();

    let there = Sandbox::new();
    let mut outputs = Vec::new();
    let mut run = |args: &[&str]| {
        let out = there.sledge().args(args).arg(&file).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        outputs.push((args.join(" "), out));
    };
    run(&["import"]);
    let mut run = |args: &[&str]| {
        let out = there.sledge().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        outputs.push((args.join(" "), out));
    };
    run(&["list"]);
    run(&["show", "1"]);
    run(&["show", "1", "--metrics", "all"]);
    run(&["show", "1", "--csv"]);
    run(&["show", "1", "--markdown"]);
    run(&["compare", "1", "2"]);
    run(&["compare", "1", "2", "--metrics", "all"]);
    run(&["compare", "1", "2", "--markdown"]);
    let html = there.path().join("report.html");
    run(&["report", "1", "2", "-o", html.to_str().unwrap()]);
    run(&["delete", "2", "--yes"]);
    // An error that quotes the document (serde names the unknown word).
    let mut bad = document.clone();
    bad["runs"][0]["status"] = Value::String(format!("complete{HOSTILE}"));
    let bad_file = here.path().join("bad.json");
    std::fs::write(&bad_file, bad.to_string()).unwrap();
    let out = there
        .sledge()
        .arg("import")
        .arg(&bad_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    outputs.push(("import bad.json".into(), out));

    for (command, out) in &outputs {
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            let raw = raw_controls(&text);
            assert!(raw.is_empty(), "{command}: {stream} holds {raw:?}:\n{text}");
        }
    }
    let shown = |command: &str| {
        let (_, out) = outputs.iter().find(|(c, _)| c == command).unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    for command in [
        "import",
        "list",
        "show 1",
        "show 1 --metrics all",
        "show 1 --csv",
        "show 1 --markdown",
        "compare 1 2",
        "compare 1 2 --markdown",
        "delete 2 --yes",
        "import bad.json",
    ] {
        let text = shown(command);
        assert!(
            text.contains(
                "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31m\\r\\x08\\0\\x7f\\u{9b}31m\\u{202e}\\u{2066}"
            ),
            "{command}: the escaped form is missing:\n{text}"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        raw_controls(&page).is_empty(),
        "the report holds raw controls"
    );
    assert!(
        page.contains("\\x1b]0;owned"),
        "the report shows them escaped"
    );
}

//! `--junit` read by a real consumer: Python's junitparser (what CI
//! scripts reading JUnit reports use), on comparisons of real runs whose
//! outcome is known: a candidate 20% slower than its baseline, one the
//! same, a case only one run has, and an `ab` whose B is slower.

use std::path::Path;
use std::process::Command;

use crate::common::{Sandbox, required, skip, this_test};

/// The variable that makes a host without the consumer fail the test
/// instead of skipping it.
const VARIABLE: &str = "SLEDGE_TEST_JUNIT";

/// The consumer's version that `.ci/run` installs.
const JUNITPARSER: &str = "junitparser==5.0.3";

/// Reads a JUnit file with junitparser and prints one line per test case:
/// suite, classname, name, outcome (passed, failure, skipped) and the
/// outcome's message, tab-separated, then the case's system-out.
const READER: &str = r#"
import sys
from junitparser import JUnitXml, Failure, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        outcome, message = "passed", ""
        for result in case.result:
            if isinstance(result, Failure):
                outcome, message = "failure", result.message
            elif isinstance(result, Skipped):
                outcome, message = "skipped", result.message
        print("\t".join([suite.name, case.classname, case.name, outcome, message or "",
                         case.system_out or ""]))
"#;

/// Whether python3 with junitparser is here; when not, the test fails
/// under `SLEDGE_TEST_JUNIT=require` and skips otherwise, saying so.
fn consumer_here() -> bool {
    // Read first, so that a value that means nothing is refused also where
    // nothing lacks.
    let required = required(VARIABLE);
    let found = Command::new("python3")
        .args(["-c", "import junitparser"])
        .output()
        .is_ok_and(|out| out.status.success());
    if found {
        return true;
    }
    let lacking = format!("python3 with junitparser; pip install {JUNITPARSER}");
    if required {
        panic!(
            "{}: {VARIABLE}=require but this host lacks {lacking}",
            this_test()
        );
    }
    skip(&format!("needs {lacking}"), VARIABLE);
    false
}

/// One test case as the consumer read it.
#[derive(Debug)]
struct Read {
    suite: String,
    classname: String,
    name: String,
    outcome: String,
    message: String,
    out: String,
}

/// The test cases of the JUnit report in `file`, as junitparser reads it.
fn read_report(file: &Path) -> Vec<Read> {
    let out = Command::new("python3")
        .args(["-c", READER])
        .arg(file)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 6, "{line}");
            Read {
                suite: fields[0].to_string(),
                classname: fields[1].to_string(),
                name: fields[2].to_string(),
                outcome: fields[3].to_string(),
                message: fields[4].to_string(),
                out: fields[5].to_string(),
            }
        })
        .collect()
}

/// `sledge` with the test workloads on a quiet host (verdicts must not
/// depend on this machine's load).
fn sledge(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1");
    cmd
}

/// A run of `test.scripted` whose rounds give `values`, with `labels`.
fn scripted_run(sandbox: &Sandbox, values: &str, labels: &str) {
    sledge(sandbox)
        .env("SLEDGE_SCRIPTED_VALUES", values)
        .args(["run", "test.scripted", "-p", &format!("label={labels}")])
        .args(["--rounds", "3", "--warmup", "0", "--min-trials", "2"])
        .args(["--max-trials", "2", "--no-idle-check"])
        .assert()
        .success();
}

/// `case` of `read` in the suite `suite`.
fn case<'a>(read: &'a [Read], suite: &str, name: &str) -> &'a Read {
    read.iter()
        .find(|c| c.suite == suite && c.name.contains(name))
        .unwrap_or_else(|| panic!("no {name} in {suite}: {read:#?}"))
}

#[test]
fn the_gate_fails_the_slower_case_passes_the_same_and_skips_the_unshared() {
    if !consumer_here() {
        return;
    }
    let sandbox = Sandbox::new();
    scripted_run(&sandbox, "100:100.2/101:100.8/99:99.2", "a");
    scripted_run(&sandbox, "80:80.2/81:80.8/79:79.2", "a");
    scripted_run(&sandbox, "100:100.2/101:100.8/99:99.2", "a,b");
    let out = sledge(&sandbox)
        .args([
            "compare",
            "1",
            "2",
            "3",
            "--fail-if-slower",
            "10",
            "--junit",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "the gate fails: {out:?}");
    let file = sandbox.path().join("compare.xml");
    std::fs::write(&file, &out.stdout).unwrap();
    let read = read_report(&file);
    assert_eq!(read.len(), 3, "{read:#?}");

    let slower = case(&read, "run 2 against run 1", "label=a");
    assert_eq!(slower.classname, "test.scripted", "{slower:?}");
    assert_eq!(slower.outcome, "failure", "{slower:?}");
    assert!(
        slower
            .message
            .contains("slower by 20.0%, more than --fail-if-slower 10%")
            && slower.message.contains("ratio 0.800"),
        "{slower:?}"
    );
    let same = case(&read, "run 3 against run 1", "label=a");
    assert_eq!(same.outcome, "passed", "{same:?}");
    assert!(same.out.contains("no difference"), "{same:?}");
    let unshared = case(&read, "run 3 against run 1", "label=b");
    assert_eq!(unshared.outcome, "skipped", "{unshared:?}");
    assert_eq!(unshared.message, "only in run 3", "{unshared:?}");

    // Without the gate nothing fails; the verdict is in the output.
    let out = sledge(&sandbox)
        .args(["compare", "1", "2", "--junit"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::write(&file, &out.stdout).unwrap();
    let read = read_report(&file);
    let slower = case(&read, "run 2 against run 1", "label=a");
    assert_eq!(slower.outcome, "passed", "{slower:?}");
    assert!(
        slower.out.contains("value: slower, ratio 0.800"),
        "{slower:?}"
    );

    // One format per command line.
    sledge(&sandbox)
        .args(["compare", "1", "2", "--junit", "--json"])
        .assert()
        .code(2);
}

#[test]
fn an_ab_reports_its_paired_verdict_as_a_passing_case() {
    if !consumer_here() {
        return;
    }
    let sandbox = Sandbox::new();
    let out = sledge(&sandbox)
        .env("XDG_DATA_HOME", sandbox.path())
        .args(["ab", "test.scripted", "--junit"])
        .args(["--b-env", "SLEDGE_SCRIPTED_VALUES=90:91/89:90/90:88/91:90"])
        .args(["--rounds", "4", "--warmup", "0", "--no-idle-check"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let file = sandbox.path().join("ab.xml");
    std::fs::write(&file, &out.stdout).unwrap();
    let read = read_report(&file);
    assert_eq!(read.len(), 1, "{read:#?}");
    let b = &read[0];
    assert_eq!(
        (b.suite.as_str(), b.outcome.as_str()),
        ("run 2 against run 1", "passed")
    );
    assert!(
        b.out.contains("slower") && b.out.contains("(paired)"),
        "{b:?}"
    );
}

//! `sledge run --note`: free notes stored with a run, and a price note
//! that makes `compare` show performance per unit of price.

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{FAST, Sandbox};

/// A tiny cpu.primes run with `notes`.
fn run_with_notes(sandbox: &Sandbox, notes: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = sandbox.sledge();
    cmd.args([
        "run",
        "cpu.primes",
        "-p",
        "max_prime=2000",
        "-p",
        "time=0.05",
    ])
    .args(FAST);
    for note in notes {
        cmd.args(["--note", note]);
    }
    cmd.assert()
}

#[test]
fn notes_are_stored_shown_and_exported() {
    let sandbox = Sandbox::new();
    run_with_notes(&sandbox, &["price=2400EUR", " rack 3 "])
        .success()
        .stdout(predicate::str::contains("notes: price=2400EUR · rack 3"));
    let out = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["notes"], serde_json::json!(["price=2400EUR", "rack 3"]));
    sandbox
        .sledge()
        .args(["show", "1", "--markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains("notes: price=2400EUR · rack 3"));
}

#[test]
fn a_bad_note_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    run_with_notes(&sandbox, &["price=cheap"])
        .code(2)
        .stderr(predicate::str::contains(
            "--note price=cheap: a price note needs an amount above 0 and its currency",
        ));
    run_with_notes(&sandbox, &["  "])
        .code(2)
        .stderr(predicate::str::contains("--note needs some text"));
    // A control character is named, with its place, apart from the
    // length rule.
    for (note, said) in [
        (
            "two\nlines",
            "--note \"two\\nlines\": character 4 is a line break (\\n)",
        ),
        ("rack\t3", "--note \"rack\\t3\": character 5 is a tab (\\t)"),
        (
            "rack \x1b[31m3",
            "--note \"rack \\x1b[31m3\": character 6 is an escape (the start of a terminal escape sequence) (\\x1b)",
        ),
        (
            "a\u{202e}b",
            "character 2 is a bidi control (it reorders the text shown after it) (\\u{202e})",
        ),
    ] {
        let out = run_with_notes(&sandbox, &[note]).code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(said), "{note:?}: {stderr}");
        assert!(stderr.contains("without control characters"), "{stderr}");
        assert!(!stderr.contains("at most"), "{stderr}");
    }
    let long = "x".repeat(501);
    let out = run_with_notes(&sandbox, &[&long]).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--note: the note is 501 characters long; a note may have at most 500"),
        "{stderr}"
    );
    assert!(!stderr.contains("control"), "{stderr}");
    assert!(!sandbox.store().exists());
}

#[test]
fn priced_runs_compare_per_unit_of_price() {
    let sandbox = Sandbox::new();
    run_with_notes(&sandbox, &["price=2000 EUR"]).success();
    run_with_notes(&sandbox, &["price=2500EUR", "rack 3"]).success();
    let out = sandbox
        .sledge()
        .args(["compare", "1", "2"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("differs: price: 2000 EUR → 2500 EUR"),
        "{text}"
    );
    assert!(text.contains("per price"), "{text}");
    assert!(
        text.contains("per price, run 2 (2500 EUR) against run 1 (2000 EUR)"),
        "{text}"
    );

    let out = sandbox
        .sledge()
        .args(["compare", "1", "2", "--json"])
        .assert()
        .success();
    let cmp: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let candidate = &cmp["candidates"][0];
    assert_eq!(candidate["price"]["currency"], "EUR");
    assert_eq!(candidate["price"]["baseline"], 2000.0);
    assert_eq!(candidate["price"]["candidate"], 2500.0);
    // Each ratio per unit of price is the ratio scaled by 2000 / 2500.
    let metric = &candidate["cases"][0]["metrics"][0];
    let ratio = metric["comparison"]["ratio"].as_f64().unwrap();
    let per_price = metric["ratio_per_price"].as_f64().unwrap();
    assert!((per_price - ratio * 0.8).abs() < 1e-9 * ratio, "{metric}");

    // Prices in different currencies give no per-price figures.
    run_with_notes(&sandbox, &["price=2500USD"]).success();
    let out = sandbox
        .sledge()
        .args(["compare", "1", "3"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(!text.contains("per price"), "{text}");
    assert!(
        text.contains("differs: price: 2000 EUR → 2500 USD"),
        "{text}"
    );
}

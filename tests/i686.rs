//! A 32-bit sledge (`pkg/i686.sh`) beside this 64-bit one: `sledge ab`
//! runs one side's rounds with it, the round protocol (a job in JSON on
//! the round's stdin, its events and histograms on its stdout) crossing
//! the word sizes, and the table says which side is which build.
//!
//! The 32-bit binary is named by `SLEDGE_I686_BINARY`; without it the
//! test is skipped, saying so, unless `SLEDGE_TEST_I686=require` (CI
//! builds one and sets both).

use std::path::PathBuf;

use crate::common::{I686 as GROUP, Sandbox, required, skip};
use serde_json::Value;

/// The variable naming the 32-bit sledge.
const BINARY: &str = "SLEDGE_I686_BINARY";

/// The 32-bit sledge, or `None` (the test is skipped) where none is named.
fn i686_sledge() -> Option<PathBuf> {
    let require = required(GROUP);
    match std::env::var_os(BINARY).filter(|v| !v.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(path.is_file(), "{BINARY}={}: no such file", path.display());
            Some(path)
        }
        None if require => panic!(
            "{GROUP}=require but {BINARY} names no 32-bit sledge (build one with pkg/i686.sh)"
        ),
        None => {
            skip(
                &format!("needs a 32-bit sledge named by {BINARY} (build one with pkg/i686.sh)"),
                GROUP,
            );
            None
        }
    }
}

#[test]
fn a_32_bit_build_runs_one_sides_rounds_and_the_table_names_each_build() {
    let Some(i686) = i686_sledge() else {
        return;
    };
    let this = assert_cmd::cargo::cargo_bin("sledge");
    let sandbox = Sandbox::new();
    // A CPU case and a memory case with a histogram-free and a large
    // metric set; tiny parameters, two rounds of two trials.
    let out = sandbox
        .sledge()
        .arg("ab")
        .arg("--a-sledge")
        .arg(&i686)
        .arg("--b-sledge")
        .arg(&this)
        .args(["cpu.primes", "memory.stream"])
        .args([
            "-p",
            "cpu.primes:max_prime=2000",
            "-p",
            "cpu.primes:events=2000",
        ])
        .args([
            "-p",
            "memory.stream:array_size=100000",
            "-p",
            "memory.stream:ntimes=3",
        ])
        .args(["-p", "memory.stream:threads=1"])
        .args([
            "--rounds",
            "2",
            "--warmup",
            "0",
            "--min-trials",
            "2",
            "--max-trials",
            "2",
        ])
        .args(["--no-idle-check", "--json"])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &cmp["candidates"][0];
    assert_eq!(run["paired"], true, "{run}");
    let sides = run["sides"]
        .as_array()
        .expect("a paired comparison names its sides");
    let a = sides[0].as_str().unwrap();
    let b = sides[1].as_str().unwrap();
    assert!(a.ends_with("(i686, 32-bit)"), "{a}");
    assert!(a.contains(&i686.display().to_string()), "{a}");
    // This sledge, the 64-bit build the 32-bit one is compared with.
    assert!(b.ends_with(", 64-bit)"), "{b}");
    // Both cases ran on both sides, every round.
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{run}");
    for case in cases {
        let headline = &case["metrics"][0];
        assert_eq!(headline["paired_rounds"], 2, "{case}");
        assert!(headline["baseline_mean"].as_f64().unwrap() > 0.0, "{case}");
        assert!(headline["candidate_mean"].as_f64().unwrap() > 0.0, "{case}");
    }
    // The table says the same, one line per side.
    let table = sandbox
        .sledge()
        .args(["compare", "1", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains(&format!("A: {a}")), "{text}");
    assert!(text.contains(&format!("B: {b}")), "{text}");
}

#[test]
fn the_32_bit_build_refuses_buffers_it_cannot_address() {
    let Some(i686) = i686_sledge() else {
        return;
    };
    let sandbox = Sandbox::new();
    let out = std::process::Command::new(&i686)
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args([
            "run",
            "memory.stream",
            "-p",
            "array_size=100000000",
            "--no-idle-check",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // 3 arrays of 10^8 doubles: 2.4 GB, within half of a CI machine's
    // memory but past what 32 bits address.
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("more than a 32-bit sledge can address"),
        "{stdout}{stderr}"
    );
}

//! What a run says about the clock, throttling, temperature and energy it
//! could or could not watch. The readers themselves are tested on fixture
//! trees (src/monitor/fixture_tests.rs, src/engine/sensor_tests.rs); this
//! checks what a real run on this host shows.

use serde_json::Value;

use crate::common::{FAST, Sandbox};

#[test]
fn what_cannot_be_read_is_said_once_per_run_and_nothing_else_changes() {
    let sandbox = Sandbox::new();
    let out = sandbox
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
        .arg("--json")
        .assert()
        .success();
    let run: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let warnings: Vec<&str> = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let said: Vec<&&str> = warnings
        .iter()
        .filter(|w| w.contains("not available on this host"))
        .collect();
    assert!(said.len() <= 1, "{warnings:?}");
    let trials: Vec<&Value> = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["trials"].as_array().unwrap())
        .collect();
    assert!(trials.len() >= 4);
    let said = said.first().map_or("", |w| **w);
    // Whatever is said to be missing is absent from every trial, and no
    // case gets an energy metric it could not measure.
    for (missing, field) in [
        ("effective clock", "clock_mhz"),
        ("throttle counters", "throttle_events"),
        ("temperature", "temperature_max_c"),
        ("energy", "energy_joules"),
    ] {
        if said.contains(missing) {
            for trial in &trials {
                assert!(trial["health"].get(field).is_none(), "{field}: {trial}");
            }
        }
    }
    if said.contains("energy") {
        for case in run["cases"].as_array().unwrap() {
            for metric in case["metrics"].as_array().unwrap() {
                assert!(!metric["name"].as_str().unwrap().contains("joule"));
            }
            // Case warnings never repeat it.
            for warning in case["warnings"].as_array().unwrap() {
                assert!(
                    !warning
                        .as_str()
                        .unwrap()
                        .contains("not available on this host")
                );
            }
        }
    }
}

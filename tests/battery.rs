//! Battery files from the command line: a run of one carries its name,
//! hash and text; the user's profile directory names them; mistakes are
//! refused with their line and column before anything runs; `plan` shows
//! the commands; `compare` tells two batteries apart.

use crate::common::{FAST, Sandbox};
use serde_json::Value;

const BATTERY: &str = r#"
summary = "a toy case and a command"
precision = 0.05

[[case]]
workload = "test.toy"
params = { size = [2, 3] }

[[case]]
command = "printf 'n {n}'"
params = { n = 7 }
metric = "n:items:higher:regex:n ([0-9]+)"
"#;

/// `sledge` with the test workloads and a profile directory in the
/// sandbox.
fn sledge(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("XDG_CONFIG_HOME", sandbox.path().join("config"));
    cmd
}

fn write(sandbox: &Sandbox, name: &str, text: &str) -> std::path::PathBuf {
    let path = sandbox.path().join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_run_of_a_battery_carries_its_name_hash_and_text() {
    let sandbox = Sandbox::new();
    let file = write(&sandbox, "web-tier.toml", BATTERY);
    let out = sledge(&sandbox)
        .arg("run")
        .arg(&file)
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let run = sandbox.show_last();
    assert_eq!(run["profile"], "web-tier");
    assert_eq!(run["cases"].as_array().unwrap().len(), 3, "{run}");
    let notes: Vec<&str> = run["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes[0].starts_with("battery=web-tier sha256:"),
        "{notes:?}"
    );
    assert_eq!(notes[0].len(), "battery=web-tier sha256:".len() + 64);
    assert_eq!(notes[1], format!("battery_text={BATTERY}"));
    let command = &run["cases"][2];
    assert_eq!(command["metrics"][0]["name"], "n");
    assert_eq!(command["metrics"][0]["summary"]["mean"], 7.0);
    // The table names the battery and leaves its text to the JSON.
    let shown = sledge(&sandbox).args(["show", "last"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("notes: battery=web-tier sha256:"), "{text}");
    assert!(!text.contains("battery_text"), "{text}");
}

#[test]
fn the_user_profile_directory_names_batteries_and_profiles_lists_them() {
    let sandbox = Sandbox::new();
    write(&sandbox, "config/sledge/profiles/mine.toml", BATTERY);
    write(
        &sandbox,
        "config/sledge/profiles/broken.toml",
        "[[case]]\nworkload = 3\n",
    );
    let out = sledge(&sandbox).arg("profiles").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("mine (battery file "), "{listed}");
    assert!(listed.contains("cmd=printf 'n {n}'"), "{listed}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.toml") && stderr.contains("line 2"),
        "{stderr}"
    );
    let out = sledge(&sandbox)
        .args(["run", "mine"])
        .args(FAST)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(sandbox.show_last()["profile"], "mine");
}

#[test]
fn a_bad_battery_is_refused_with_its_line_and_column_before_anything_runs() {
    let sandbox = Sandbox::new();
    for (text, expect) in [
        (
            "[[case]]\nworkload = \"test.toy\"\ncolour = 1\n",
            "line 3, column 1",
        ),
        (
            "[[case]]\nworkload = \"test.toy\"\nparams = { size = 0 }\n",
            "battery file ./bad.toml: case 1 ([[case]] number 1): line 3, column 19: parameter `size`",
        ),
        (
            "[[case]]\ncommand = \"true\"\nmetric = [\"a:s:lower:regex:x\", 5]\n",
            "entry 2 of the list is an integer",
        ),
        (
            "rounds = 101\n[[case]]\ncommand = \"true\"\n",
            "from 1 to 100, not 101",
        ),
        ("[[case]]\ncommand = \"true\"\nparams = { n = 1 }\n", "`n`"),
        ("budget = -1\n[[case]]\ncommand = \"true\"\n", "`budget`"),
    ] {
        write(&sandbox, "bad.toml", text);
        let out = sledge(&sandbox)
            .args(["run", "./bad.toml"])
            .current_dir(sandbox.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{text}: {stderr}");
    }
    let out = sledge(&sandbox)
        .args(["run", "./missing.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be read"));
    sandbox.assert_no_runs();
}

#[test]
fn plan_shows_every_command_and_compare_tells_two_batteries_apart() {
    let sandbox = Sandbox::new();
    let file = write(&sandbox, "b.toml", BATTERY);
    let out = sledge(&sandbox).arg("plan").arg(&file).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("printf 'n {n}'"), "{plan}");
    for text in [BATTERY.to_string(), BATTERY.replace("n = 7", "n = 8")] {
        std::fs::write(&file, text).unwrap();
        let out = sledge(&sandbox)
            .arg("run")
            .arg(&file)
            .args(FAST)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let out = sledge(&sandbox)
        .args(["compare", "1", "2", "--json"])
        .output()
        .unwrap();
    let cmp: Value = serde_json::from_slice(&out.stdout).unwrap();
    let differences = cmp["candidates"][0]["host_differences"].to_string();
    assert!(
        differences.contains("\"what\":\"battery\""),
        "{differences}"
    );
}

#[test]
fn every_battery_the_project_ships_plans_with_all_its_cases() {
    // The batteries in bench/ are read by no other test: a workload or a
    // parameter renamed under them would break them unseen.
    let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let mut files: Vec<_> = std::fs::read_dir(&bench)
        .expect("bench/ is there")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no battery in {}", bench.display());
    let sandbox = Sandbox::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let listed = text.matches("[[case]]").count();
        let out = sandbox
            .sledge()
            .arg("plan")
            .arg(&file)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("sledge runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {out:?}", file.display());
        // At least one planned case per [[case]] (a parameter list makes
        // several).
        let planned = stdout.lines().next().unwrap_or_default();
        let cases: usize = planned
            .strip_prefix("plan: ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(cases >= listed, "{}: {planned}", file.display());
    }
}

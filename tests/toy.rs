//! The toy workload (`src/workloads/toy.rs`), which plugs in by its one
//! file and one registry line: its typed parameters are listed and
//! validated, its cases built from them, and its report hooks asked.

use predicates::prelude::*;

use crate::common::Sandbox;

fn toy(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1");
    cmd
}

#[test]
fn the_toy_lists_its_parameters_from_its_declaration() {
    let sandbox = Sandbox::new();
    toy(&sandbox)
        .arg("workloads")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "test.toy (v1): the area of a shape",
        ))
        .stdout(predicate::str::contains("one of: square, triangle"))
        .stdout(predicate::str::contains("an integer from 1 to 1000"));
}

#[test]
fn the_toy_refuses_a_value_its_declaration_does_not_allow() {
    let sandbox = Sandbox::new();
    toy(&sandbox)
        .args(["run", "test.toy", "-p", "shape=circle"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`circle` is not allowed"))
        .stderr(predicate::str::contains("square, triangle"));
    assert!(!sandbox.store().exists());
}

#[test]
fn the_toy_builds_its_cases_from_its_struct_and_its_table_hook_is_asked() {
    let sandbox = Sandbox::new();
    // Areas are known in advance: a square of side s is s², a triangle
    // s²/2. `--pivot auto` takes the workload's own table: a shape per
    // row, a size per column.
    let out = toy(&sandbox)
        .args(["run", "test.toy", "-p", "shape=square,triangle"])
        .args(["-p", "size=1,2,4", "--rounds", "2", "--warmup", "0"])
        .args(["--no-idle-check", "--pivot", "auto"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("shape ↓ size →    1  2   4"), "{text}");
    assert!(text.contains("square            1  4  16"), "{text}");
    assert!(text.contains("triangle        0.5  2   8"), "{text}");
}

#[test]
fn the_toy_adds_its_section_to_the_report_of_its_runs() {
    let sandbox = Sandbox::new();
    // 1 + 4 + 16 for the squares, 0.5 + 2 + 8 for the triangles: every
    // trial of a case has its area, so each mean is exact.
    let out = toy(&sandbox)
        .args(["run", "test.toy", "-p", "shape=square,triangle"])
        .args(["-p", "size=1,2,4", "--rounds", "2", "--warmup", "0"])
        .args(["--no-idle-check"])
        .assert()
        .success();
    let scorecard = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let total = "toy: total area 31.5 over 6 cases";
    assert!(scorecard.contains(total), "{scorecard}");
    // The full views end with the section, as a UnixBench run ends with
    // its index; asked once however many of the run's cases add it.
    for view in [&["--full"][..], &["--metrics", "all"]] {
        let out = toy(&sandbox)
            .args(["show", "last"])
            .args(view)
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert_eq!(text.matches(total).count(), 1, "{view:?}: {text}");
    }
}

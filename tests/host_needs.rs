//! The skip of a test whose host lacks a program (`common::HostNeeds`),
//! seen as a user sees it: this test binary runs one real test that needs
//! a program, with a `PATH` made for the occasion and the group's variable
//! unset, set to `require` or set to nonsense.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const TEST: &str = "build::a_kernel_tarball_is_unpacked_once_and_reused";

/// This test binary running `TEST` alone, with `path` as its `PATH` and
/// `SLEDGE_TEST_KERNEL_TOOLS` set to `mode`: whether it passed, its stdout
/// and its stderr.
fn run_with(path: &Path, mode: Option<&str>) -> (bool, String, String) {
    run_test(TEST, path, "SLEDGE_TEST_KERNEL_TOOLS", mode)
}

/// This test binary running `test` alone, with `path` as its `PATH` and
/// `variable` set to `mode`. Without `--nocapture`, as `cargo test` runs
/// it, so that only what passes the harness's capture shows.
fn run_test(test: &str, path: &Path, variable: &str, mode: Option<&str>) -> (bool, String, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--test-threads", "1"])
        .env("PATH", path)
        .env_remove(variable);
    if let Some(mode) = mode {
        cmd.env(variable, mode);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A file called `name` in `dir`, executable or not.
fn put(dir: &Path, name: &str, executable: bool) {
    let file = dir.join(name);
    std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_test_without_its_programs_skips_in_one_line_unless_required() {
    let empty = tempfile::tempdir().unwrap();
    let (passed, stdout, stderr) = run_with(empty.path(), None);
    assert!(passed, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    let skips: Vec<&str> = stderr.lines().filter(|l| l.contains("SKIPPED")).collect();
    assert_eq!(
        skips,
        [format!(
            "SKIPPED {TEST}: needs `flex`, `bison`, `bc`; on Debian: apt-get install flex bison \
             bc (SLEDGE_TEST_KERNEL_TOOLS=require makes this a failure)"
        )],
        "{stderr}"
    );
    // An empty value is the same as none.
    let (passed, _, stderr) = run_with(empty.path(), Some(""));
    assert!(passed && stderr.contains("SKIPPED"), "{stderr}");

    let (passed, stdout, stderr) = run_with(empty.path(), Some("require"));
    assert!(!passed, "{stdout}{stderr}");
    assert!(stdout.contains("1 failed"), "{stdout}");
    assert!(
        (stdout.clone() + &stderr).contains(&format!(
            "{TEST}: SLEDGE_TEST_KERNEL_TOOLS=require but this host lacks `flex`, `bison`, `bc`; \
             on Debian: apt-get install flex bison bc"
        )),
        "{stdout}{stderr}"
    );
    assert!(!stderr.contains("SKIPPED"), "{stderr}");

    // A value that means nothing is refused, not taken for either.
    let (passed, stdout, stderr) = run_with(empty.path(), Some("yes"));
    assert!(!passed);
    assert!(
        (stdout + &stderr).contains("SLEDGE_TEST_KERNEL_TOOLS must be `require` or unset"),
        "{stderr}"
    );
}

#[test]
fn only_what_is_missing_is_named_and_a_file_that_cannot_run_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "flex", true);
    put(dir.path(), "bc", true);
    put(dir.path(), "bison", false);
    let (passed, stdout, stderr) = run_with(dir.path(), None);
    assert!(passed, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "SKIPPED {TEST}: needs `bison`; on Debian: apt-get install bison \
             (SLEDGE_TEST_KERNEL_TOOLS=require makes this a failure)"
        )),
        "{stderr}"
    );
}

/// A test that needs a program for one part runs the rest, and its line
/// names the part.
#[test]
fn a_part_that_needs_a_missing_program_is_skipped_and_the_rest_runs() {
    let test = "fleet::bad_host_lists_and_unknown_hosts_are_clear_errors";
    let empty = tempfile::tempdir().unwrap();
    let (passed, stdout, stderr) = run_test(test, empty.path(), "SLEDGE_TEST_FLEET", None);
    assert!(passed, "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stderr.contains(&format!(
            "SKIPPED {test} (only a host name that does not resolve): needs `ssh`; on Debian: \
             apt-get install openssh-client (SLEDGE_TEST_FLEET=require makes this a failure)"
        )),
        "{stderr}"
    );
    let (passed, stdout, stderr) =
        run_test(test, empty.path(), "SLEDGE_TEST_FLEET", Some("require"));
    assert!(!passed, "{stdout}{stderr}");
    assert!(
        (stdout + &stderr).contains("SLEDGE_TEST_FLEET=require but this host lacks `ssh`"),
        "{stderr}"
    );
}

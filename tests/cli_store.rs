//! Where the store is, and what the CLI does when it is missing, in the
//! wrong place, or damaged: nothing is created by accident, and nothing is
//! measured into a store that cannot keep it.

use predicates::prelude::*;

use crate::common::{FAST, Sandbox, store_fixture_run};

/// A tiny cpu.primes run.
const TINY: &[&str] = &[
    "run",
    "cpu.primes",
    "-p",
    "max_prime=2000",
    "-p",
    "time=0.05",
];

/// Every path under `dir`, relative, sorted.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut paths = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            paths.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() {
                todo.push(path);
            }
        }
    }
    paths.sort();
    paths
}

#[test]
fn an_explicit_store_in_a_missing_directory_is_refused_and_nothing_created() {
    let sandbox = Sandbox::new();
    let store = sandbox.path().join("no").join("such").join("x.db");
    sandbox
        .sledge()
        .args(TINY)
        .args(FAST)
        .arg("--store")
        .arg(&store)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "error: cannot create store {}: directory {} does not exist; create it first or choose another store location\n",
            store.display(),
            store.parent().unwrap().display()
        ));
    assert_eq!(tree(sandbox.path()), Vec::<String>::new());
}

#[test]
fn the_default_location_gets_its_directory() {
    let sandbox = Sandbox::new();
    let xdg = sandbox.path().join("data");
    let run = |args: &[&str]| {
        let mut cmd = sandbox.sledge();
        cmd.env_remove("SLEDGE_STORE")
            .env("XDG_DATA_HOME", &xdg)
            .args(args);
        cmd
    };
    // Reading creates nothing, even at the default location.
    run(&["list"]).assert().success().stdout(format!(
        "no runs stored yet (there is no store at {}); `sledge run` makes one\n",
        xdg.join("sledge").join("results.db").display()
    ));
    assert!(!xdg.exists());
    // A run makes the directory and the store.
    run(TINY).args(FAST).assert().success();
    assert_eq!(
        tree(sandbox.path()),
        vec!["data", "data/sledge", "data/sledge/results.db"]
    );
}

#[test]
fn reading_commands_on_a_missing_store_say_no_runs_yet_and_create_nothing() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("no runs stored yet"));
    sandbox.assert_no_runs();
    let no_runs = format!(
        "error: no runs yet: there is no store at {}; `sledge run` makes one\n",
        sandbox.store().display()
    );
    for args in [
        &["show"][..],
        &["show", "1", "--json"],
        &["compare", "1", "2"],
        &["export", "1"],
        &["report", "1"],
        &["history", "cpu.primes"],
    ] {
        sandbox
            .sledge()
            .args(args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(no_runs.clone());
    }
    assert_eq!(tree(sandbox.path()), Vec::<String>::new());
}

#[test]
fn a_damaged_store_is_found_before_anything_is_measured() {
    use sledge::results::RunStatus;
    let sandbox = Sandbox::new();
    for _ in 0..3 {
        store_fixture_run(&sandbox.store(), RunStatus::Complete, &[100.0, 101.0, 99.0]);
    }
    // Damage the page of the samples' index: the store still opens and
    // lists its runs, but a run would fail when storing its first case,
    // after measuring it.
    let (page_size, root): (i64, i64) = {
        let conn = rusqlite::Connection::open(sandbox.store()).unwrap();
        let page_size = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_sample_1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (page_size, root)
    };
    let mut bytes = std::fs::read(sandbox.store()).unwrap();
    let page = ((root - 1) * page_size) as usize..(root * page_size) as usize;
    bytes[page].fill(0xff);
    std::fs::write(sandbox.store(), &bytes).unwrap();
    sandbox.sledge().arg("list").assert().success();

    let out = sandbox
        .sledge()
        .args(TINY)
        .args(FAST)
        .assert()
        .code(1)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let prefix = format!("error: {} is damaged (", sandbox.store().display());
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(
        stderr.ends_with("): move it away (sqlite3's `.recover` may save its runs) or choose another store location\n"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(std::fs::read(sandbox.store()).unwrap(), bytes);
}

#[test]
fn a_store_that_cannot_be_created_says_why_once() {
    // sysfs refuses new files, root included (EACCES, or EROFS where it
    // is mounted read-only).
    if !std::path::Path::new("/sys/kernel").is_dir() {
        eprintln!("skipped: no sysfs at /sys");
        return;
    }
    let out = Sandbox::new()
        .sledge()
        .args(TINY)
        .args(FAST)
        .args(["--store", "/sys/sledge-test-results.db"])
        .assert()
        .code(1)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.starts_with("error: cannot create store file /sys/sledge-test-results.db: "),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("; make its directory writable or choose another store location\n"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("(os error").count(), 1, "{stderr}");
}

#[test]
fn reading_commands_open_the_store_read_only_and_leave_it_as_it_was() {
    use sledge::results::RunStatus;
    let sandbox = Sandbox::new();
    let reading: [&[&str]; 7] = [
        &["list"],
        &["show"],
        &["show", "last", "--json"],
        &["compare", "1", "2"],
        &["export", "1", "2"],
        &["report", "1", "2"],
        &["history", "cpu.primes"],
    ];
    // An empty file is a store to be: a command that writes would make
    // its tables, one that reads must not.
    std::fs::write(sandbox.store(), b"").unwrap();
    for args in reading {
        let out = sandbox.sledge().args(args).output().unwrap();
        assert_eq!(
            std::fs::metadata(sandbox.store()).unwrap().len(),
            0,
            "{args:?}: {out:?}"
        );
    }
    std::fs::remove_file(sandbox.store()).unwrap();
    for _ in 0..2 {
        store_fixture_run(&sandbox.store(), RunStatus::Complete, &[100.0, 101.0, 99.0]);
    }
    let before = std::fs::read(sandbox.store()).unwrap();
    for args in reading {
        sandbox.sledge().args(args).output().unwrap();
    }
    assert!(std::fs::read(sandbox.store()).unwrap() == before);
    assert_eq!(
        tree(sandbox.path()),
        vec!["results.db"],
        "no journal or other file is left"
    );
}

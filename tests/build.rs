//! Build workloads: build.c end to end, the generated project's
//! determinism, the cache kept and reused between runs, the refusal of a
//! host without the tools (naming the Debian packages), a corrupt kernel
//! tarball (its partial unpack removed), and that a Ctrl-C kills the whole
//! build (no `make` or `cc1` left) while keeping the cache, as a SIGTERM to
//! sledge's whole process group (`timeout`'s) does, removing the build
//! directory as a normal end does.
//!
//! No real kernel is built here: `build.kernel` runs on a tiny fixture
//! "kernel tree" whose Makefile understands `O=`, the config targets and
//! `vmlinux`. It still checks for the kernel's flex, bison and bc first,
//! so those tests skip on a host without them (a failure under
//! `SLEDGE_TEST_KERNEL_TOOLS=require`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sledge::workloads::build::c_tree::{self, Spec};

use crate::common::{FAST, KERNEL_TOOLS, Sandbox, wait_bounded};

/// Every file of a directory tree with its bytes, by relative path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// Names of the entries of `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_generated_project_is_the_same_bytes_for_the_same_parameters() {
    let spec = Spec {
        files: 20,
        lines_per_file: 150,
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    c_tree::write(&spec, a.path()).unwrap();
    c_tree::write(&spec, b.path()).unwrap();
    let first = snapshot(a.path());
    assert_eq!(first, snapshot(b.path()));
    // Makefile, project.h, 3 group headers, 20 units, main.c.
    assert_eq!(first.len(), 26);
    // Another size is another project, not a prefix of this one.
    let other = tempfile::tempdir().unwrap();
    let bigger = Spec {
        files: 20,
        lines_per_file: 300,
    };
    c_tree::write(&bigger, other.path()).unwrap();
    let unit = |files: &[(PathBuf, Vec<u8>)]| {
        files
            .iter()
            .find(|(p, _)| p.ends_with("src/unit_3.c"))
            .unwrap()
            .1
            .clone()
    };
    let (small, large) = (unit(&first), unit(&snapshot(other.path())));
    assert_ne!(small, large);
    assert!(
        large.len() > small.len() * 3 / 2,
        "{} vs {}",
        small.len(),
        large.len()
    );
}

#[test]
fn build_c_runs_a_jobs_sweep_and_keeps_its_cache() {
    let sandbox = Sandbox::new();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let run = |jobs: &str| {
        sandbox
            .sledge()
            .args(["run", "build.c", "--json", "-p", "files=4", "-p"])
            .arg("lines_per_file=60")
            .args(["-p", jobs, "-p"])
            .arg(format!("dir={}", cache.display()))
            .args(FAST)
            .output()
            .unwrap()
    };
    let out = run("jobs=1,2");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        assert!(case["error"].is_null(), "{case}");
        let metrics = case["metrics"].as_array().unwrap();
        assert_eq!(metrics[0]["name"], "seconds");
        assert_eq!(metrics[0]["direction"], "lower");
        assert!(metrics[0]["summary"]["mean"].as_f64().unwrap() > 0.0);
        let utilisation = metrics
            .iter()
            .find(|m| m["name"] == "cpu_utilisation")
            .unwrap();
        let u = utilisation["summary"]["mean"].as_f64().unwrap();
        assert!(u > 0.0 && u < 250.0, "{u}");
        // The compiler, make and the project are stored with the case.
        let note = case["warnings"][0].as_str().unwrap();
        assert!(note.starts_with("note: built with cc: "), "{note}");
        assert!(
            note.contains("make: ") && note.contains("4 files"),
            "{note}"
        );
    }
    // The tree stays in the cache; every build directory is gone.
    assert_eq!(names(&cache), ["c-project-v1-4x60"]);
    let main_c = cache.join("c-project-v1-4x60/src/main.c");
    let before = std::fs::metadata(&main_c).unwrap().modified().unwrap();
    // A second run reuses it as it is.
    let out = run("jobs=1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names(&cache), ["c-project-v1-4x60"]);
    assert_eq!(
        std::fs::metadata(&main_c).unwrap().modified().unwrap(),
        before
    );
}

#[test]
fn the_cache_is_generated_once_and_then_reused() {
    let cache = tempfile::tempdir().unwrap();
    let spec = Spec {
        files: 3,
        lines_per_file: 40,
    };
    let (tree, generated) =
        sledge::workloads::build::c_project::project_tree(&spec, cache.path()).unwrap();
    assert!(generated);
    let (again, generated) =
        sledge::workloads::build::c_project::project_tree(&spec, cache.path()).unwrap();
    assert!(!generated);
    assert_eq!(tree, again);
    // Only the entry: the staging directory was renamed or removed.
    assert_eq!(names(cache.path()), ["c-project-v1-3x40"]);
}

/// A directory holding only links to the named programs (those this host
/// has), for a PATH without the others.
fn path_with(programs: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in programs {
        if let Some(real) = sledge::workloads::build::tools::find_program(name) {
            std::os::unix::fs::symlink(real, dir.path().join(name)).unwrap();
        }
    }
    dir
}

#[test]
fn a_host_without_the_tools_is_told_which_packages_to_install() {
    let sandbox = Sandbox::new();
    let refused = |path: &Path, args: &[&str]| {
        let out = sandbox
            .sledge()
            .env("PATH", path)
            .arg("run")
            .args(args)
            .args(["-p", "dir=."])
            .args(FAST)
            .output()
            .unwrap();
        // Refused when the cases are checked, before anything runs.
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let empty = tempfile::tempdir().unwrap();
    let error = refused(empty.path(), &["build.c"]);
    assert!(error.contains("build.c needs `make`, `cc`"), "{error}");
    assert!(
        error.contains("apt-get install make build-essential"),
        "{error}"
    );
    assert!(error.contains("nothing was measured"), "{error}");

    // A compiler and make, but not the kernel's other tools.
    let some = path_with(&["make", "cc", "gcc"]);
    let error = refused(some.path(), &["build.kernel", "-p", "config=tinyconfig"]);
    assert!(error.contains("`flex`, `bison`, `bc`"), "{error}");
    assert!(error.contains("apt-get install flex bison bc"), "{error}");
    // Without a compiler, build-essential is named whatever else lacks.
    let error = refused(empty.path(), &["build.kernel"]);
    assert!(error.contains("build-essential"), "{error}");
    // Nothing was unpacked or generated (the store is sledge's own).
    assert_eq!(names(sandbox.path()), ["results.db"]);
}

/// A tiny stand-in for a kernel tree: a Makefile that builds out of tree
/// (`O=`), makes a `.config` for the config targets and links `vmlinux`
/// from two C files.
fn fixture_kernel_tarball(dir: &Path) -> PathBuf {
    let tree = dir.join("linux-fixture");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("Kconfig"), "# fixture\n").unwrap();
    std::fs::write(tree.join("a.c"), "int a(void) { return 1; }\n").unwrap();
    std::fs::write(
        tree.join("main.c"),
        "int a(void);\nint main(void) { return a() - 1; }\n",
    )
    .unwrap();
    std::fs::write(
        tree.join("Makefile"),
        "O ?= .\n\
         tinyconfig defconfig allnoconfig allmodconfig:\n\
         \techo '# CONFIG_MODULES is not set' > $(O)/.config\n\
         vmlinux: $(O)/a.o $(O)/main.o\n\
         \t$(CC) -o $(O)/vmlinux $^\n\
         $(O)/%.o: %.c\n\
         \t$(CC) -c -o $@ $<\n",
    )
    .unwrap();
    let tarball = dir.join("linux-fixture.tar.gz");
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .arg("linux-fixture")
        .status()
        .unwrap();
    assert!(status.success());
    tarball
}

fn run_kernel(sandbox: &Sandbox, src: &Path, cache: &Path) -> std::process::Output {
    sandbox
        .sledge()
        .args(["run", "build.kernel", "--json", "-p", "config=tinyconfig"])
        .args(["-p", "jobs=1,2", "-p"])
        .arg(format!("src={}", src.display()))
        .arg("-p")
        .arg(format!("dir={}", cache.display()))
        .args(FAST)
        .output()
        .unwrap()
}

#[test]
fn a_kernel_tarball_is_unpacked_once_and_reused() {
    if !KERNEL_TOOLS.met() {
        return;
    }
    let sandbox = Sandbox::new();
    let fixtures = tempfile::tempdir().unwrap();
    let tarball = fixture_kernel_tarball(fixtures.path());
    let size = std::fs::metadata(&tarball).unwrap().len();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let out = run_kernel(&sandbox, &tarball, &cache);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for case in json["cases"].as_array().unwrap() {
        assert!(case["error"].is_null(), "{case}");
        assert_eq!(case["metrics"][0]["name"], "seconds");
        let note = case["warnings"][0].as_str().unwrap();
        assert!(note.contains("config tinyconfig"), "{note}");
    }
    let entry = format!("linux-fixture.tar.gz-{size}");
    assert_eq!(names(&cache), [entry.as_str()]);
    // A mark in the entry survives the next run: it was not unpacked again.
    let mark = cache.join(&entry).join("kept");
    std::fs::write(&mark, b"x").unwrap();
    let out = run_kernel(&sandbox, &tarball, &cache);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(mark.exists());
    assert_eq!(names(&cache), [entry]);
}

#[test]
fn a_truncated_tarball_is_a_clear_error_and_leaves_nothing() {
    if !KERNEL_TOOLS.met() {
        return;
    }
    let sandbox = Sandbox::new();
    let fixtures = tempfile::tempdir().unwrap();
    let tarball = fixture_kernel_tarball(fixtures.path());
    let bytes = std::fs::read(&tarball).unwrap();
    let truncated = fixtures.path().join("linux-cut.tar.gz");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let out = run_kernel(&sandbox, &truncated, &cache);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = json["cases"][0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("corrupt or truncated"), "{error}");
    assert!(error.contains("the partial unpack was removed"), "{error}");
    // No entry and no scratch directory.
    assert_eq!(names(&cache), Vec::<String>::new());
}

#[test]
fn a_failed_build_kills_its_group_and_removes_its_directory() {
    if !KERNEL_TOOLS.met() {
        return;
    }
    let sandbox = Sandbox::new();
    let fixtures = tempfile::tempdir().unwrap();
    fixture_kernel_tarball(fixtures.path());
    // A target that leaves a sleeper in the background and fails: the
    // sleeper is in make's group and must not outlive the trial.
    let tree = fixtures.path().join("linux-fixture");
    let mut makefile = std::fs::read_to_string(tree.join("Makefile")).unwrap();
    makefile.push_str("broken:\n\tsleep 97.25 &\n\t@echo 'broken.c:1: error: no' >&2; exit 1\n");
    std::fs::write(tree.join("Makefile"), makefile).unwrap();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let out = sandbox
        .sledge()
        .args(["run", "build.kernel", "--json", "-p", "config=tinyconfig"])
        .args(["-p", "target=broken", "-p"])
        .arg(format!("src={}", tree.display()))
        .arg("-p")
        .arg(format!("dir={}", cache.display()))
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = json["cases"][0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("-j"), "{error}");
    assert!(error.contains("broken.c:1: error: no"), "{error}");
    // The sleeper is gone, and so is the build directory (a tree is used
    // in place: nothing is cached for it).
    let sleepers: Vec<u32> = all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("97.25"))
        })
        .collect();
    assert!(sleepers.is_empty(), "left running: {sleepers:?}");
    assert_eq!(names(&cache), Vec::<String>::new());
    assert!(!tree.join(".config").exists(), "the tree was written to");
}

/// (parent pid, process group, start time, command name) of a process.
fn stat_of(pid: u32) -> Option<(u32, u32, u64, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    // proc(5) numbering: ppid is field 4, pgrp 5, starttime 22.
    Some((
        fields.get(1)?.parse().ok()?,
        fields.get(2)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
        stat[open + 1..close].to_string(),
    ))
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// Every descendant of `root` as (pid, process group, start time, name).
fn descendants(root: u32) -> Vec<(u32, u32, u64, String)> {
    let mut found = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for pid in all_pids() {
            if let Some((ppid, pgrp, start, name)) = stat_of(pid)
                && ppid == parent
            {
                found.push((pid, pgrp, start, name));
                parents.push(pid);
            }
        }
    }
    found
}

#[test]
fn ctrl_c_kills_the_whole_build_and_keeps_the_cache() {
    if sledge::workloads::build::tools::find_program("cc").is_none() {
        panic!("this test needs a C compiler (apt-get install build-essential)");
    }
    let sandbox = Sandbox::new();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    // A build of minutes: 400 files of 3000 lines.
    let mut sledge = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args([
            "run",
            "build.c",
            "-p",
            "files=400",
            "-p",
            "lines_per_file=3000",
        ])
        .args(["-p", "jobs=2", "-p"])
        .arg(format!("dir={}", cache.display()))
        .args(FAST)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the compiler proper runs under make.
    let deadline = Instant::now() + Duration::from_secs(120);
    let build = loop {
        let tree = descendants(sledge.id());
        if tree.iter().any(|(_, _, _, name)| name == "cc1") {
            break tree;
        }
        if Instant::now() > deadline {
            let _ = sledge.kill();
            let _ = sledge.wait();
            panic!("no cc1 under sledge within 120 s: {tree:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let make = build
        .iter()
        .find(|(_, _, _, name)| name == "make")
        .expect("make runs the build")
        .clone();
    // make leads its own process group, and the compilers are in it.
    assert_eq!(make.1, make.0);
    assert!(
        build
            .iter()
            .any(|(_, pgrp, _, name)| name == "cc1" && *pgrp == make.0),
        "{build:?}"
    );
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(sledge.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut sledge, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    // Nothing of the build is left: not one of the processes seen, and no
    // process at all in make's group.
    let left: Vec<&(u32, u32, u64, String)> = build
        .iter()
        .filter(|(pid, _, start, _)| stat_of(*pid).is_some_and(|s| s.2 == *start))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let in_group: Vec<u32> = all_pids()
        .into_iter()
        .filter(|&pid| stat_of(pid).is_some_and(|s| s.1 == make.0))
        .collect();
    assert!(
        in_group.is_empty(),
        "still in the build's group: {in_group:?}"
    );
    // The build directory is gone; the generated tree is kept.
    assert_eq!(names(&cache), ["c-project-v1-400x3000"]);
}

#[test]
fn sigterm_to_sledges_group_cleans_up_the_kernel_build_as_a_normal_end_does() {
    use std::os::unix::process::CommandExt;
    if !KERNEL_TOOLS.met() {
        return;
    }
    let sandbox = Sandbox::new();
    let fixtures = tempfile::tempdir().unwrap();
    let tarball = fixture_kernel_tarball(fixtures.path());
    // A target that builds until it is stopped, its sleeper in make's
    // group; the tarball is made again with it.
    let tree = fixtures.path().join("linux-fixture");
    let mut makefile = std::fs::read_to_string(tree.join("Makefile")).unwrap();
    makefile.push_str("slow: vmlinux\n\tsleep 93.75\n");
    std::fs::write(tree.join("Makefile"), makefile).unwrap();
    let retarred = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(fixtures.path())
        .arg("linux-fixture")
        .status()
        .unwrap();
    assert!(retarred.success());
    let size = std::fs::metadata(&tarball).unwrap().len();
    let cache = sandbox.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    // sledge leads a process group of its own, as under `timeout`, which
    // signals the command and then its whole group.
    let mut sledge = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args(["run", "build.kernel", "-p", "config=tinyconfig"])
        .args(["-p", "target=slow", "-p", "jobs=1", "-p"])
        .arg(format!("src={}", tarball.display()))
        .arg("-p")
        .arg(format!("dir={}", cache.display()))
        .args(FAST)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let build = loop {
        let tree = descendants(sledge.id());
        if tree.iter().any(|(_, _, _, name)| name == "sleep") {
            break tree;
        }
        if Instant::now() > deadline {
            let _ = sledge.kill();
            let _ = sledge.wait();
            panic!("no build under sledge within 120 s: {tree:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let make = build
        .iter()
        .find(|(_, _, _, name)| name == "make")
        .expect("make runs the build")
        .clone();
    let entry = format!("linux-fixture.tar.gz-{size}");
    let mut during = names(&cache);
    during.retain(|name| *name != entry);
    assert_eq!(during.len(), 1, "one build directory: {during:?}");
    // SAFETY: plain kill(2) of the group our own child leads.
    unsafe { libc::kill(-(sledge.id() as i32), libc::SIGTERM) };
    let status = wait_bounded(&mut sledge, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    let left: Vec<&(u32, u32, u64, String)> = build
        .iter()
        .filter(|(pid, _, start, _)| stat_of(*pid).is_some_and(|s| s.2 == *start))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let in_group: Vec<u32> = all_pids()
        .into_iter()
        .filter(|&pid| stat_of(pid).is_some_and(|s| s.1 == make.0))
        .collect();
    assert!(
        in_group.is_empty(),
        "still in the build's group: {in_group:?}"
    );
    // The build directory is gone, as after a normal end; the unpacked
    // tree stays in the cache.
    assert_eq!(names(&cache), [entry]);
}

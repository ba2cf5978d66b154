//! What an installation needs from the binary: `sledge completions SHELL`
//! and `sledge man`, both generated from the clap definitions.

use std::path::Path;

use clap::CommandFactory as _;
use predicates::prelude::*;

use crate::common::Sandbox;

/// Every shell `sledge completions` accepts.
const SHELLS: [&str; 5] = ["bash", "elvish", "fish", "powershell", "zsh"];

/// The subcommands a user sees (`sledge --help`), nested ones as
/// `fleet run`; the hidden internal ones are left out.
fn visible_subcommands() -> Vec<String> {
    fn walk(command: &clap::Command, prefix: &str, names: &mut Vec<String>) {
        for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
            let name = format!("{prefix}{}", sub.get_name());
            walk(sub, &format!("{name} "), names);
            names.push(name);
        }
    }
    let mut names = Vec::new();
    walk(&sledge::cli::Cli::command(), "", &mut names);
    names
}

/// The hidden subcommands, which only sledge itself starts.
fn hidden_subcommands() -> Vec<String> {
    sledge::cli::Cli::command()
        .get_subcommands()
        .filter(|sub| sub.is_hide_set())
        .map(|sub| sub.get_name().to_owned())
        .collect()
}

fn completions(shell: &str) -> String {
    let output = Sandbox::new()
        .sledge()
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(output.status.success(), "{shell}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_shell_gets_a_script_naming_every_visible_subcommand_and_no_hidden_one() {
    let visible = visible_subcommands();
    for expected in [
        "run",
        "compare",
        "report",
        "fleet run",
        "completions",
        "man",
    ] {
        assert!(visible.iter().any(|name| name == expected), "{visible:?}");
    }
    let hidden = hidden_subcommands();
    assert!(hidden.iter().any(|name| name == "__round"), "{hidden:?}");
    for shell in SHELLS {
        let script = completions(shell);
        assert!(script.contains("sledge"), "{shell}: {script}");
        for name in &visible {
            // `fleet run`'s leaf is `run`, which the top level has too;
            // every leaf name must appear as a word of its own.
            let leaf = name.rsplit(' ').next().unwrap();
            assert!(
                script
                    .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                    .any(|word| word == leaf),
                "{shell}: no `{name}` in the script"
            );
        }
        for name in &hidden {
            assert!(!script.contains(name.as_str()), "{shell} offers {name}");
        }
    }
}

/// Runs bash's completion function as bash would on TAB after `words`
/// and returns what it offers.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let current = words.last().unwrap();
    let previous = words[words.len() - 2];
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _sledge sledge '{current}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_bash_script_completes_subcommands_options_and_shells() {
    let sandbox = Sandbox::new();
    let script = sandbox.path().join("sledge.bash");
    std::fs::write(&script, completions("bash")).unwrap();
    assert_eq!(
        bash_completes(&script, &["sledge", "com"]),
        ["compare", "completions"]
    );
    let top: Vec<String> = bash_completes(&script, &["sledge", ""]);
    assert!(top.iter().any(|w| w == "run"), "{top:?}");
    assert!(!top.iter().any(|w| w.starts_with("__")), "{top:?}");
    let shells = bash_completes(&script, &["sledge", "completions", ""]);
    for shell in SHELLS {
        assert!(shells.iter().any(|w| w == shell), "{shells:?}");
    }
    assert_eq!(
        bash_completes(&script, &["sledge", "fleet", "run", "--ho"]),
        ["--hosts"]
    );
}

#[test]
fn an_unknown_shell_is_a_usage_error_listing_the_shells() {
    Sandbox::new()
        .sledge()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("invalid value 'tcsh'"))
        .stderr(predicate::str::contains(
            "possible values: bash, elvish, fish, powershell, zsh",
        ));
}

/// Asserts that `roff` is the man page of `title`: its title line, NAME
/// and SYNOPSIS sections, and `synopsis` (`sledge run`) in the synopsis.
fn assert_page(roff: &str, title: &str, synopsis: &str) {
    assert!(roff.contains(&format!(".TH {title} 1 ")), "{roff}");
    let name_section = roff.split(".SH NAME\n").nth(1).expect("a NAME section");
    assert!(
        name_section.starts_with(&format!("{} \\- ", title.replace('-', "\\-"))),
        "{name_section}"
    );
    let synopsis_section = roff
        .split(".SH SYNOPSIS\n")
        .nth(1)
        .expect("a SYNOPSIS section");
    let bold = synopsis.replace('-', "\\-");
    assert!(
        synopsis_section.starts_with(&format!("\\fB{bold}\\fR")),
        "{synopsis_section}"
    );
    assert!(roff.contains(".SH DESCRIPTION\n"), "{roff}");
    assert!(
        roff.contains(&format!("\"sledge {}\"", env!("CARGO_PKG_VERSION"))),
        "{roff}"
    );
}

#[test]
fn the_man_page_lists_every_subcommand() {
    let output = Sandbox::new().sledge().arg("man").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let roff = String::from_utf8(output.stdout).unwrap();
    assert_page(&roff, "sledge", "sledge");
    assert!(
        roff.contains("sledge \\- A Linux server benchmark suite"),
        "{roff}"
    );
    let subcommands = roff
        .split(".SH SUBCOMMANDS\n")
        .nth(1)
        .expect("a SUBCOMMANDS section");
    for name in visible_subcommands().iter().filter(|n| !n.contains(' ')) {
        assert!(
            subcommands.contains(&format!("sledge\\-{}(1)", name.replace('-', "\\-"))),
            "no {name} in {subcommands}"
        );
    }
    for name in hidden_subcommands() {
        assert!(!roff.contains(&name.replace('-', "\\-")), "{name}");
    }
}

#[test]
fn man_dir_writes_a_page_per_subcommand_and_nothing_else() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    sandbox
        .sledge()
        .arg("man")
        .arg("--dir")
        .arg(&dir)
        .assert()
        .success()
        .stdout("");
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    let mut expected: Vec<String> = visible_subcommands()
        .iter()
        .map(|name| format!("sledge-{}.1", name.replace(' ', "-")))
        .chain(["sledge.1".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(written, expected);
    for name in visible_subcommands() {
        let page = format!("sledge-{}", name.replace(' ', "-"));
        let roff = std::fs::read_to_string(dir.join(format!("{page}.1"))).unwrap();
        assert_page(&roff, &page, &format!("sledge {name}"));
    }
    // The page of `run` documents its options.
    let run = std::fs::read_to_string(dir.join("sledge-run.1")).unwrap();
    assert!(run.contains("\\fB\\-\\-param\\fR"), "{run}");
    // The top page printed and the one written are the same.
    let printed = sandbox.sledge().arg("man").output().unwrap().stdout;
    assert_eq!(std::fs::read(dir.join("sledge.1")).unwrap(), printed);
}

#[test]
fn man_dir_must_be_an_existing_directory() {
    let sandbox = Sandbox::new();
    let file = sandbox.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for dir in [sandbox.path().join("missing"), file.clone()] {
        sandbox
            .sledge()
            .arg("man")
            .arg("--dir")
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "--dir {}: not an existing directory",
                dir.display()
            )));
    }
    assert!(!sandbox.path().join("missing").exists());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// Runs `sledge man --dir DIR` (and `extra` arguments) in `sandbox`.
fn man_dir(sandbox: &Sandbox, dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    sandbox
        .sledge()
        .arg("man")
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .assert()
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn stderr_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

/// How many pages `sledge man --dir` writes: the top one and one per
/// visible subcommand.
fn page_count() -> usize {
    visible_subcommands().len() + 1
}

#[test]
fn man_dir_neither_follows_nor_replaces_a_link_at_a_page_name() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    let elsewhere = sandbox.path().join("elsewhere");
    std::fs::write(&elsewhere, "precious").unwrap();
    std::os::unix::fs::symlink("../elsewhere", dir.join("sledge-show.1")).unwrap();
    // A dangling one would make a file where it points.
    std::os::unix::fs::symlink("../made-through-a-link", dir.join("sledge-run.1")).unwrap();
    let assert = man_dir(&sandbox, &dir, &["--force"]).code(2);
    let stderr = stderr_of(&assert);
    for (name, target) in [
        ("sledge-show.1", "../elsewhere"),
        ("sledge-run.1", "../made-through-a-link"),
    ] {
        assert!(
            stderr.contains(&format!(
                "{} is a symbolic link (to {target}): sledge neither writes through nor replaces a link",
                dir.join(name).display()
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "--dir {}: 2 of the {} page names are taken (nothing was written)",
            dir.display(),
            page_count()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "precious");
    assert!(!sandbox.path().join("made-through-a-link").exists());
    assert_eq!(
        std::fs::read_link(dir.join("sledge-show.1")).unwrap(),
        Path::new("../elsewhere")
    );
    assert_eq!(names_in(&dir), ["sledge-run.1", "sledge-show.1"]);
}

#[test]
fn a_foreign_file_at_a_page_name_is_refused_and_replaced_only_with_force() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    let notes = dir.join("sledge-run.1");
    // Another program's page of the same name.
    let foreign = ".TH sledge-run 1 \"2024\" \"sledgehammer 2.0\"\n.SH NAME\nmy own page\n";
    std::fs::write(&notes, foreign).unwrap();
    let stderr = stderr_of(&man_dir(&sandbox, &dir, &[]).code(2));
    assert!(
        stderr.contains(&format!(
            "{} is not a manual page sledge wrote: --force replaces it",
            notes.display()
        )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), foreign);
    assert_eq!(names_in(&dir), ["sledge-run.1"]);

    let stderr = stderr_of(&man_dir(&sandbox, &dir, &["--force"]).success());
    assert!(
        stderr.contains(&format!(
            "wrote {0} of {0} manual pages to {1}",
            page_count(),
            dir.display()
        )) && stderr.contains("\n  replaced with --force (not sledge's pages): sledge-run.1\n"),
        "{stderr}"
    );
    let run = std::fs::read_to_string(&notes).unwrap();
    assert_page(&run, "sledge-run", "sledge run");
    assert_eq!(names_in(&dir).len(), page_count());
}

#[test]
fn force_needs_dir() {
    Sandbox::new()
        .sledge()
        .args(["man", "--force"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("--dir <DIR>"));
}

#[test]
fn a_directory_or_pipe_named_like_a_page_is_refused_before_any_page_is_written() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    // The last pages in the order: every page before them would have
    // been written first, were the names not all checked before the
    // first page is written.
    std::fs::create_dir(dir.join("sledge-man.1")).unwrap();
    let fifo = dir.join("sledge-completions.1");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let stderr = stderr_of(&man_dir(&sandbox, &dir, &["--force"]).code(2));
    assert!(
        stderr.contains(&format!(
            "{} is a directory, not a manual page: move it away, or give another directory",
            dir.join("sledge-man.1").display()
        )) && stderr.contains(&format!("{} is a named pipe", fifo.display()))
            && stderr.contains("(nothing was written)"),
        "{stderr}"
    );
    assert_eq!(names_in(&dir), ["sledge-completions.1", "sledge-man.1"]);
}

#[test]
fn rerunning_over_its_own_pages_leaves_them_and_replaces_older_ones() {
    use std::os::unix::fs::MetadataExt as _;
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    let n = page_count();
    let stderr = stderr_of(&man_dir(&sandbox, &dir, &[]).success());
    assert!(
        stderr.contains(&format!(
            "wrote {n} of {n} manual pages to {}\n  new: all {n}\n",
            dir.display()
        )),
        "{stderr}"
    );
    let inode = |name: &str| std::fs::metadata(dir.join(name)).unwrap().ino();
    let top = inode("sledge.1");

    let stderr = stderr_of(&man_dir(&sandbox, &dir, &[]).success());
    assert!(
        stderr.contains(&format!(
            "wrote 0 of {n} manual pages to {}\n  unchanged (the same page was there): all {n}\n",
            dir.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        inode("sledge.1"),
        top,
        "an unchanged page was written again"
    );

    // The page an older sledge wrote, with its own version and text.
    let run = dir.join("sledge-run.1");
    let current = std::fs::read_to_string(&run).unwrap();
    let version = format!("\"sledge {}\"", env!("CARGO_PKG_VERSION"));
    let older = current
        .replace(&version, "\"sledge 0.0.1\"")
        .replace("SYNOPSIS", "SYNOPSIS\nan option since removed");
    assert_ne!(older, current);
    std::fs::write(&run, &older).unwrap();
    let stderr = stderr_of(&man_dir(&sandbox, &dir, &[]).success());
    assert!(
        stderr.contains(&format!("wrote 1 of {n} manual pages to {}", dir.display()))
            && stderr.contains("\n  replaced (pages sledge wrote that differed): sledge-run.1\n")
            && stderr.contains("\n  unchanged (the same page was there): sledge.1, "),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&run).unwrap(), current);
    assert_eq!(names_in(&dir).len(), n, "a temporary file was left");
}

#[test]
fn man_dir_may_be_a_link_to_a_directory_and_says_where_it_led() {
    let sandbox = Sandbox::new();
    let real = sandbox.path().join("real-man1");
    std::fs::create_dir(&real).unwrap();
    let link = sandbox.path().join("man1");
    std::os::unix::fs::symlink("real-man1", &link).unwrap();
    let stderr = stderr_of(&man_dir(&sandbox, &link, &[]).success());
    assert!(
        stderr.contains(&format!(
            "manual pages to {} (which leads to {})",
            link.display(),
            real.canonicalize().unwrap().display()
        )),
        "{stderr}"
    );
    assert_eq!(names_in(&real).len(), page_count());
}

/// A read-only file system mounted on a directory, unmounted when dropped.
struct ReadOnlyMount(std::path::PathBuf);

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_read_only_dir_is_a_clear_error_and_nothing_is_written() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    // Root writes through a mode of 0555: a read-only mount stops it.
    // SAFETY: geteuid has no preconditions.
    let _mounted = if unsafe { libc::geteuid() } == 0 {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|status| status.success());
        if !mounted {
            eprintln!("skipped: root cannot mount a read-only tmpfs here, and writes through 0555");
            return;
        }
        Some(ReadOnlyMount(dir.clone()))
    } else {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        None
    };
    let stderr = stderr_of(&man_dir(&sandbox, &dir, &[]).code(1));
    assert!(
        stderr.contains(&format!(
            "error: writing the manual pages into {0} failed before any was written: cannot create a file in {0}: ",
            dir.canonicalize().unwrap().display()
        )) && (stderr.contains("Read-only file system") || stderr.contains("Permission denied")),
        "{stderr}"
    );
    assert_eq!(names_in(&dir), Vec::<String>::new());
}

/// Writes an executable shell script at `path`.
fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The repository's `pkg/SCRIPT`.
fn pkg_script(script: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("pkg")
        .join(script)
}

/// `PATH` with `bin` first.
fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut path = bin.as_os_str().to_owned();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// A package that passes every check of `pkg/check-deb.sh` before the
/// manual pages, with `sledge_script` as its `usr/bin/sledge`; `None`
/// where dpkg-deb is missing.
fn fake_package(sandbox: &Sandbox, sledge_script: &str) -> Option<std::path::PathBuf> {
    if std::process::Command::new("dpkg-deb")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: dpkg-deb is not installed");
        return None;
    }
    let tree = sandbox.path().join("tree");
    std::fs::create_dir_all(tree.join("DEBIAN")).unwrap();
    std::fs::write(
        tree.join("DEBIAN/control"),
        "Package: sledge\nVersion: 0.1.0-1\nSection: utils\nPriority: optional\n\
         Architecture: all\nMaintainer: Test <test@example.org>\nDepends: libc6\n\
         Recommends: openssh-client\nDescription: test\n test\n",
    )
    .unwrap();
    write_script(&tree.join("usr/bin/sledge"), sledge_script);
    for file in [
        "usr/share/man/man1/sledge.1.gz",
        "usr/share/bash-completion/completions/sledge",
        "usr/share/zsh/vendor-completions/_sledge",
        "usr/share/fish/vendor_completions.d/sledge.fish",
        "usr/share/doc/sledge/README.md",
        "usr/share/doc/sledge/copyright",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain(
        [
            "ab",
            "benchmarks",
            "cli",
            "history",
            "http",
            "i686",
            "json",
            "layout",
            "measuring",
            "storage",
            "stores-and-fleet",
            "testing",
            "workloads",
        ]
        .iter()
        .map(|doc| format!("usr/share/doc/sledge/docs/{doc}.md")),
    ) {
        let path = tree.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let deb = sandbox.path().join("sledge_0.1.0-1_all.deb");
    let built = std::process::Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&tree)
        .arg(&deb)
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    Some(deb)
}

#[test]
fn check_deb_says_why_when_man_dir_fails() {
    let sandbox = Sandbox::new();
    let Some(deb) = fake_package(
        &sandbox,
        "case \"$1\" in\n\
         --version) echo 'sledge 0.1.0' ;;\n\
         man) echo \"error: --dir $3: the pages cannot be written here\" >&2; exit 1 ;;\n\
         esac\n",
    ) else {
        return;
    };
    let output = std::process::Command::new(pkg_script("check-deb.sh"))
        .arg(&deb)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "check-deb: {}: usr/bin/sledge man --dir failed: error: --dir ",
            deb.display()
        )) && stderr.contains("the pages cannot be written here"),
        "{stderr}"
    );
}

#[test]
fn check_deb_names_a_step_that_fails_unforeseen() {
    let sandbox = Sandbox::new();
    let Some(deb) = fake_package(&sandbox, "echo 'sledge 0.1.0'\n") else {
        return;
    };
    // mktemp, the first step that may fail, fails.
    let bin = sandbox.path().join("bin");
    write_script(&bin.join("mktemp"), "exit 7\n");
    let output = std::process::Command::new(pkg_script("check-deb.sh"))
        .arg(&deb)
        .env("PATH", path_with(&bin))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains(&format!("check-deb: {}: line ", deb.display()))
            && stderr.contains("failed (exit status 7): root=$(mktemp -d)"),
        "{stderr}"
    );
}

/// A `cargo` for `pkg/deb.sh` that builds nothing, prints the metadata
/// in `$FAKE_METADATA` and makes an empty package where it is asked to.
const FAKE_CARGO: &str = "case \"$1\" in\n\
    deb) [ \"$2\" = --version ] && { echo 'cargo-deb 3.8.0'; exit 0; }\n\
         mkdir -p \"$4\" && : >\"$4/sledge_0.1.0-1_amd64.deb\" ;;\n\
    build) ;;\n\
    metadata) cat \"$FAKE_METADATA\" ;;\n\
    *) exit 64 ;;\n\
    esac\n";

/// Runs `pkg/deb.sh` with the fake cargo, cargo metadata giving
/// `target_directory` as the JSON string `json_value` (escapes and all).
fn deb_sh(sandbox: &Sandbox, json_value: &str) -> std::process::Output {
    let bin = sandbox.path().join("bin");
    write_script(&bin.join("cargo"), FAKE_CARGO);
    let metadata = sandbox.path().join("metadata.json");
    std::fs::write(
        &metadata,
        format!(
            "{{\"packages\":[],\"workspace_members\":[],\"resolve\":null,\
             \"target_directory\":\"{json_value}\",\"version\":1,\
             \"workspace_root\":\"/w\",\"metadata\":null}}\n"
        ),
    )
    .unwrap();
    std::process::Command::new(pkg_script("deb.sh"))
        .env("PATH", path_with(&bin))
        .env("FAKE_METADATA", &metadata)
        .output()
        .unwrap()
}

/// A file of its own under `dir/release/assets`, standing for what must
/// survive a misread path.
fn precious_assets(dir: &Path) -> std::path::PathBuf {
    let precious = dir.join("release/assets/precious");
    std::fs::create_dir_all(precious.parent().unwrap()).unwrap();
    std::fs::write(&precious, "keep").unwrap();
    precious
}

#[test]
fn deb_sh_refuses_a_target_directory_it_cannot_read_and_removes_nothing() {
    let sandbox = Sandbox::new();
    let root = sandbox.path().display().to_string();
    // `q"x/target` and `b\c/target`; the old reading of `q"x` stopped at
    // the quote (`q\`), and kept `b\\c` as two backslashes: the paths
    // that would have been emptied are made to hold something.
    for (json_value, misread) in [
        (format!("{root}/q\\\"x/target"), format!("{root}/q\\")),
        (
            format!("{root}/b\\\\c/target"),
            format!("{root}/b\\\\c/target"),
        ),
    ] {
        let precious = precious_assets(Path::new(&misread));
        let output = deb_sh(&sandbox, &json_value);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "the target directory's path, as cargo metadata writes it, is \"{json_value}\": it holds"
            )) && stderr.contains("build with CARGO_TARGET_DIR set to a path without them"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    }
}

#[test]
fn deb_sh_empties_the_assets_only_where_the_release_binary_was_built() {
    let sandbox = Sandbox::new();
    // No release binary there: not the directory cargo built in.
    let elsewhere = sandbox.path().join("elsewhere");
    let precious = precious_assets(&elsewhere);
    let output = deb_sh(&sandbox, &elsewhere.display().to_string());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "no release binary at {}/release/sledge: ",
            elsewhere.display()
        )) && stderr.contains("so nothing was removed there"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");

    // The real one (a name with a space and a non-ASCII letter, which
    // JSON does not escape): the stale page goes, the new ones come.
    let target = sandbox.path().join("tärget dir");
    let stale = target.join("release/assets/man/sledge-gone.1.gz");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "").unwrap();
    write_script(
        &target.join("release/sledge"),
        "case \"$1\" in\n\
         man) echo '.TH sledge 1' >\"$3/sledge.1\" ;;\n\
         completions) echo \"# $2\" ;;\n\
         esac\n",
    );
    let output = deb_sh(&sandbox, &target.display().to_string());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().last(),
        Some(
            target
                .join("debian/sledge_0.1.0-1_amd64.deb")
                .display()
                .to_string()
                .as_str()
        )
    );
    assert!(!stale.exists());
    assert_eq!(
        names_in(&target.join("release/assets/man")),
        ["sledge.1.gz"]
    );
    assert_eq!(
        std::fs::read_to_string(target.join("release/assets/completions/_sledge")).unwrap(),
        "# zsh\n"
    );
}

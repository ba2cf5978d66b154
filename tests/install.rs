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

//! Every flag of every subcommand, and every example the documentation
//! gives, through the real command-line parser.
//!
//! clap's derive checks a field's type against its parser only when the
//! flag is given: `--a-cpus` once parsed into a field of another type and
//! panicked on every use, and no test had passed it. So: clap's own
//! consistency check over the whole command tree; every example in
//! README.md, docs/ and the `--help` texts parsed as a user would type
//! it; and every flag of every visible subcommand used by one of those
//! examples or, where the documentation has none, by one of [`MORE`].

use std::collections::BTreeSet;
use std::path::Path;

use clap::{CommandFactory, Parser};
use sledge::cli::Cli;

/// Examples for the flags the documentation shows no example of, one per
/// line as a user would type it.
const MORE: &[&str] = &[
    "sledge list --json --store results.db",
    "sledge run cpu.primes --rounds 2 --max-rounds 3 --warmup 0 --min-trials 2 --max-trials 3",
    "sledge run cpu.primes --budget 30 --ci-target 0.05 --no-idle-check --full --metrics all",
    "sledge run cpu.primes -p threads=1,2 -p max_prime=1000,2000 --pivot threads,max_prime",
    "sledge plan cpu.primes --cpus 1 --param threads=1 --rounds 2 --max-rounds 3 --warmup 0",
    "sledge plan cpu.primes --min-trials 2 --max-trials 3 --budget 30 --ci-target 0.05",
    "sledge plan cpu.primes --no-idle-check --note a=b --full --metrics all --pivot auto --json",
    "sledge ab --a-cpus 0 --b-cpus 1 --a-wrap 'nice -n 10' --b-wrap 'nice -n 5' cpu.primes",
    "sledge ab --a-env A=1 --a-cgroup /sys/fs/cgroup/a cpu.primes --cpus 2 --note a=b",
    "sledge ab --a-setup true --b-setup true --restore true --setup-timeout 60 cpu.primes",
    "sledge ab cpu.primes --rounds 2 --max-rounds 3 --warmup 0 --min-trials 2 --max-trials 3",
    "sledge ab cpu.primes --budget 30 --ci-target 0.05 --no-idle-check --full --metrics all",
    "sledge ab cpu.primes --pivot auto --json",
    "sledge ab cpu.primes --markdown",
    "sledge calibrate cpu.primes --runs 3 --cpus 1 --param threads=1 --rounds 2 --max-rounds 3",
    "sledge calibrate cpu.primes --warmup 0 --min-trials 2 --max-trials 3 --budget 30",
    "sledge calibrate cpu.primes --ci-target 0.05 --no-idle-check --note a=b --full",
    "sledge calibrate cpu.primes --metrics all --pivot auto --json",
    "sledge compare 1 2 --json --no-history --trust-flagged",
    "sledge compare 1 2 --markdown",
    "sledge delete 3 --yes",
    "sledge export 1 --pretty -o runs.json",
    "sledge fleet run --hosts root@db1 --parallel --identity key --known-hosts kh cpu",
    "sledge fleet run --hosts root@db1 --serial --connect-timeout 5 --remote-dir d cpu",
    "sledge http http://127.0.0.1:8080/ --threads 1 --no-keepalive --think 0.1 --json",
    "sledge http http://127.0.0.1:8080/ --rate 100 -n 100",
    "sledge http http://127.0.0.1:8080/ -X PUT --header 'X-A: 1' --body-file body.json",
    "sledge http http://198.18.0.1/ --from u@h1 --identity key --known-hosts kh --connect-timeout 5 --remote-dir d",
    "sledge http http://198.18.0.1/ --from u@h1 --remote-sledge /usr/bin/sledge",
    "sledge http --serve 127.0.0.1:8080 --model threads --max-threads 64",
    "sledge man --dir . --force",
    "sledge probe --json",
    "sledge report 1 2 -o report.html --pivot auto",
    "sledge show last --csv --pivot auto",
    "sledge show last --json",
    "sledge show last --markdown",
];

/// The example command lines of a Markdown text: the lines of its code
/// blocks that start with `sledge` (or `$ sledge`), with their
/// continuation lines joined.
fn examples_in_markdown(text: &str) -> Vec<String> {
    let mut examples = Vec::new();
    let mut in_code = false;
    let mut pending: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        if let Some(mut joined) = pending.take() {
            joined.push(' ');
            joined.push_str(line.trim().trim_end_matches('\\'));
            if line.trim_end().ends_with('\\') {
                pending = Some(joined);
            } else {
                examples.push(joined);
            }
            continue;
        }
        let trimmed = line.trim_start().trim_start_matches("$ ");
        if trimmed.starts_with("sledge ") || trimmed == "sledge" {
            if trimmed.trim_end().ends_with('\\') {
                pending = Some(trimmed.trim_end().trim_end_matches('\\').to_string());
            } else {
                examples.push(trimmed.to_string());
            }
        }
    }
    examples
}

/// The example lines of every `--help` text (`Examples:` sections: lines
/// that start with `sledge`, continuations joined).
fn examples_in_help() -> Vec<String> {
    let mut examples = Vec::new();
    let mut stack = vec![Cli::command()];
    while let Some(mut command) = stack.pop() {
        let help = command.render_long_help().to_string();
        let mut pending: Option<String> = None;
        for line in help.lines() {
            let trimmed = line.trim();
            if let Some(mut joined) = pending.take() {
                joined.push(' ');
                joined.push_str(trimmed.trim_end_matches('\\'));
                if trimmed.ends_with('\\') {
                    pending = Some(joined);
                } else {
                    examples.push(joined);
                }
            } else if trimmed.starts_with("sledge ") && line.starts_with("  ") {
                if trimmed.ends_with('\\') {
                    pending = Some(trimmed.trim_end_matches('\\').to_string());
                } else {
                    examples.push(trimmed.to_string());
                }
            }
        }
        stack.extend(command.get_subcommands().cloned());
    }
    examples
}

/// A documented line as the argument lists of the sledge commands in it:
/// split as a shell would, cut at a comment, a pipe or a redirection,
/// and at `&&` or `;` into several commands.
fn command_lines(line: &str) -> Vec<Vec<String>> {
    let words = shlex::split(line).unwrap_or_else(|| panic!("cannot split `{line}`"));
    let mut commands = vec![Vec::new()];
    for word in words {
        if word.starts_with('#') || word == "|" || word.starts_with('>') || word == "2>&1" {
            break;
        }
        if word == "&&" || word == ";" {
            commands.push(Vec::new());
            continue;
        }
        commands
            .last_mut()
            .expect("there is always a last command")
            .push(word);
    }
    commands
        .into_iter()
        .filter(|c| c.first().is_some_and(|w| w == "sledge"))
        .collect()
}

/// Every documented example, with where it came from.
fn documented() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut examples = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a doc");
        let name = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        examples.extend(
            examples_in_markdown(&text)
                .into_iter()
                .map(|e| (name.clone(), e)),
        );
    }
    examples.extend(
        examples_in_help()
            .into_iter()
            .map(|e| ("--help".to_string(), e)),
    );
    examples
}

#[test]
fn the_command_tree_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn every_documented_example_parses() {
    let examples = documented();
    assert!(
        examples.len() > 60,
        "only {} examples found",
        examples.len()
    );
    let mut failures = Vec::new();
    for (place, line) in &examples {
        for argv in command_lines(line) {
            // A panic here (a field of the wrong type) fails the test with
            // the example in the message.
            let parsed = std::panic::catch_unwind(|| Cli::try_parse_from(&argv));
            match parsed {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => failures.push(format!("{place}: `{line}`: {e}")),
                Err(_) => failures.push(format!("{place}: `{line}`: panicked")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The flags of a command and of its visible subcommands, as
/// `SUBCOMMAND PATH --flag`.
fn every_flag(command: &clap::Command, path: &str, flags: &mut BTreeSet<String>) {
    for arg in command.get_arguments() {
        if arg.is_hide_set() || arg.is_positional() {
            continue;
        }
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let name = arg
            .get_long()
            .map(|l| format!("--{l}"))
            .or_else(|| arg.get_short().map(|s| format!("-{s}")))
            .expect("a flag has a name");
        // A global flag counts wherever it is given.
        let owner = if arg.is_global_set() { "sledge" } else { path };
        flags.insert(format!("{owner} {name}"));
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        every_flag(sub, &format!("{path} {}", sub.get_name()), flags);
    }
}

/// The flags an argument list uses, as [`every_flag`] names them: the
/// subcommand path is its leading words that name subcommands; a short
/// flag is named by its long form where it has one.
fn flags_used(argv: &[String], flags: &mut BTreeSet<String>) {
    let mut command = Cli::command();
    command.build();
    let mut path = "sledge".to_string();
    let mut current = command.clone();
    let mut words = argv.iter().skip(1).peekable();
    while let Some(word) = words.peek() {
        match current.find_subcommand(word.as_str()) {
            Some(sub) => {
                path = format!("{path} {}", sub.get_name());
                current = sub.clone();
                words.next();
            }
            None => break,
        }
    }
    for word in words {
        let named = if let Some(long) = word.strip_prefix("--") {
            let long = long.split('=').next().unwrap_or(long);
            current
                .get_arguments()
                .find(|a| a.get_long() == Some(long))
                .map(|a| (a.is_global_set(), format!("--{long}")))
        } else if let Some(short) = word.strip_prefix('-').and_then(|s| s.chars().next()) {
            current
                .get_arguments()
                .find(|a| a.get_short() == Some(short))
                .map(|a| {
                    let name = a
                        .get_long()
                        .map_or_else(|| format!("-{short}"), |l| format!("--{l}"));
                    (a.is_global_set(), name)
                })
        } else {
            None
        };
        if let Some((global, name)) = named {
            let owner = if global { "sledge" } else { path.as_str() };
            flags.insert(format!("{owner} {name}"));
        }
    }
}

#[test]
fn every_flag_of_every_subcommand_is_used_by_an_example_that_parses() {
    let mut wanted = BTreeSet::new();
    every_flag(&Cli::command(), "sledge", &mut wanted);
    let mut used = BTreeSet::new();
    let mut failures = Vec::new();
    let lines = documented()
        .into_iter()
        .map(|(_, line)| line)
        .chain(MORE.iter().map(|l| l.to_string()));
    for line in lines {
        for argv in command_lines(&line) {
            match std::panic::catch_unwind(|| Cli::try_parse_from(&argv)) {
                Ok(Ok(_)) => flags_used(&argv, &mut used),
                Ok(Err(e)) => failures.push(format!("`{line}`: {e}")),
                Err(_) => failures.push(format!("`{line}`: panicked")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let missing: Vec<&String> = wanted.difference(&used).collect();
    assert!(
        missing.is_empty(),
        "no example parses these flags (add one to the docs or to MORE):\n{}",
        missing
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

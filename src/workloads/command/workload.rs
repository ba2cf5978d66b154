//! `command`: any command as a workload, timed at hyperfine's level.
//!
//! A trial runs the command once: wall, user and system time, peak
//! resident memory, and the figures a metric or a tool's parser reads from
//! its output, the parser's first (or the first metric's) the headline
//! when there is one, the wall time otherwise. `prepare` runs before each
//! trial, `setup` before a case's trials in each round (a round is a fresh
//! process, so that is once per case per round) and `cleanup` after them;
//! all untimed. A command run with `sh -c` (the default) has the shell's
//! own start-up time taken out, measured in each round as hyperfine does;
//! `shell=false` splits the command into words and runs it directly
//! (hyperfine's `-N`). A non-zero exit fails the trial with the end of its
//! standard error (`ignore_failure=true` keeps it, as `exit_status`), and
//! a command past `time_limit` is killed with everything it started.

use crate::engine::{
    Case, CaseEnv, HostLacks, ParamKind, ParamRole, ParamSet, ParamSpec, Params, Workload,
};

use super::case::{CommandCase, Reader};
use super::output_metric::OutputMetric;
use super::parsers;
use super::template;

crate::workload_params! {
    /// The parameters of `command` (its placeholders come on top).
    pub struct CommandParams {
        cmd: String = ParamSpec {
            name: "cmd",
            role: ParamRole::Other,
            help: "the command line; {name} takes the value of -p name=... (a sweep with several values), {jobs}, {threads}, {copies} and {clients} take a count or `all`",
            kind: ParamKind::Text,
            default: "",
        },
        shell: bool = ParamSpec {
            name: "shell",
            role: ParamRole::Other,
            help: "run it with `sh -c`, the shell's start-up time taken out (false: split into words and run directly, hyperfine's -N)",
            kind: ParamKind::Bool,
            default: "true",
        },
        prepare: String = ParamSpec {
            name: "prepare",
            role: ParamRole::Other,
            help: "a shell command run before each trial, untimed (hyperfine's --prepare)",
            kind: ParamKind::Text,
            default: "",
        },
        setup: String = ParamSpec {
            name: "setup",
            role: ParamRole::Other,
            help: "a shell command run before a case's trials in each round, untimed (hyperfine's --setup)",
            kind: ParamKind::Text,
            default: "",
        },
        cleanup: String = ParamSpec {
            name: "cleanup",
            role: ParamRole::Other,
            help: "a shell command run after a case's trials in each round, also after a failure (hyperfine's --cleanup)",
            kind: ParamKind::Text,
            default: "",
        },
        time_limit: f64 = ParamSpec {
            name: "time_limit",
            role: ParamRole::Other,
            help: "a run still going after this long is killed with everything it started, and its trial fails",
            kind: ParamKind::Seconds { min: 0.001, max: 604_800.0 },
            default: "3600",
        },
        parser: String = ParamSpec {
            name: "parser",
            role: ParamRole::Other,
            help: "read a classic tool's figures from its output: auto (by the program's name), none, or fio, pgbench, sysbench, redis-benchmark, wrk, ab, stress-ng, iperf3",
            kind: ParamKind::Text,
            default: "auto",
        },
        metric: String = ParamSpec {
            name: "metric",
            role: ParamRole::Other,
            help: "figures read from the output: NAME:UNIT:higher|lower:regex:PATTERN or ...:json:/POINTER, several separated by ;;",
            kind: ParamKind::Text,
            default: "",
        },
        ignore_failure: bool = ParamSpec {
            name: "ignore_failure",
            role: ParamRole::Other,
            help: "a non-zero exit does not fail the trial; its status is stored as exit_status (hyperfine's -i)",
            kind: ParamKind::Bool,
            default: "false",
        },
    }
}

/// The `command` workload.
pub struct CommandWorkload;

impl Workload for CommandWorkload {
    fn id(&self) -> &'static str {
        "command"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "any command, timed as hyperfine times it, with figures read from its output (a regex, a JSON pointer, or a classic tool's parser)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        CommandParams::specs()
    }
    /// Its own parameters and one per placeholder its texts use.
    fn params_given(
        &self,
        assignments: &std::collections::BTreeMap<String, Vec<String>>,
    ) -> Vec<ParamSpec> {
        let mut specs = self.params();
        for name in ["cmd", "prepare", "setup", "cleanup"] {
            for text in assignments.get(name).into_iter().flatten() {
                for placeholder in template::names(text) {
                    if !specs.iter().any(|s| s.name == placeholder) {
                        specs.push(template::spec(&placeholder));
                    }
                }
            }
        }
        specs
    }
    /// Any name a placeholder could have; resolving the case refuses one
    /// its texts do not use.
    fn takes_param(&self, name: &str) -> bool {
        template::is_name(name)
    }
    fn build(&self, set: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = CommandParams::from_set(set);
        if p.cmd.trim().is_empty() {
            anyhow::bail!(
                "command needs the command line to run: -p 'cmd=sha256sum big.iso' (placeholders such as -j{{jobs}} take -p jobs=1,all)"
            );
        }
        let values = set.to_strings();
        let fill = |text: &str| template::fill(text, &values).map_err(anyhow::Error::msg);
        let cmd = fill(&p.cmd)?;
        let argv = if p.shell {
            vec!["sh".to_string(), "-c".to_string(), cmd.clone()]
        } else {
            shlex::split(&cmd)
                .filter(|words| !words.is_empty())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "cmd `{cmd}` cannot be split into words (an unclosed quote?); with shell=false it runs without a shell"
                    )
                })?
        };
        let program = if p.shell {
            first_program(&cmd)
        } else {
            Some(argv[0].clone())
        };
        if let Some(program) = &program
            && !on_path(program)
        {
            return Err(HostLacks(format!(
                "command: `{program}` is not a program on this host's PATH; install it or give its full path"
            ))
            .into());
        }
        let parser = match p.parser.as_str() {
            "none" => None,
            "auto" => program.as_deref().and_then(parsers::for_program),
            name => Some(parsers::by_name(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "parser={name}: no such parser; give auto, none or one of {}",
                    parsers::all()
                        .iter()
                        .map(|p| p.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?),
        };
        let metrics = OutputMetric::parse_all(&p.metric).map_err(anyhow::Error::msg)?;
        let optional = |text: &str| -> anyhow::Result<Option<String>> {
            (!text.trim().is_empty()).then(|| fill(text)).transpose()
        };
        Ok(Box::new(CommandCase::new(
            argv,
            p.shell,
            [
                optional(&p.prepare)?,
                optional(&p.setup)?,
                optional(&p.cleanup)?,
            ],
            std::time::Duration::from_secs_f64(p.time_limit),
            Reader { parser, metrics },
            p.ignore_failure,
        )))
    }
    /// A command may use any number of CPUs, whatever its parameters say.
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        None
    }
    /// A command names no directory of sledge's.
    fn scratch_parents(&self, _params: &ParamSet) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

/// Words a shell runs itself (builtins and keywords): no program to look
/// for on the PATH.
const SHELL_OWN: &[&str] = &[
    ".", ":", "[", "alias", "break", "case", "cd", "command", "continue", "echo", "eval", "exec",
    "exit", "export", "false", "for", "if", "kill", "printf", "pwd", "read", "readonly", "return",
    "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask", "unset", "until",
    "wait", "while", "{", "(", "!",
];

/// The program a shell command line starts with, when it is a plain word
/// the shell would look for on the PATH (not a builtin, a keyword, an
/// assignment or an expansion).
fn first_program(cmd: &str) -> Option<String> {
    let word = shlex::split(cmd)?.into_iter().next()?;
    let plain = !word.is_empty()
        && !word.contains(['=', '$', '`', '*', '?', '(', ')', '<', '>', '|', '&', ';'])
        && !SHELL_OWN.contains(&word.as_str());
    plain.then_some(word)
}

/// Whether `program` is a file that may be executed: the path itself when
/// it holds a `/`, else one on the PATH.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &std::path::Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(std::path::Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_a_shell_line_starts_with_is_found_when_it_is_plain() {
        assert_eq!(first_program("make -j4").as_deref(), Some("make"));
        assert_eq!(
            first_program("/usr/bin/env x").as_deref(),
            Some("/usr/bin/env")
        );
        assert_eq!(first_program("cd /tmp && make"), None);
        assert_eq!(first_program("FOO=1 make"), None);
        assert_eq!(first_program("$CC -c x.c"), None);
        assert!(on_path("sh") && on_path("/bin/sh"));
        assert!(!on_path("sledge-no-such-program-here"));
    }

    #[test]
    fn placeholders_are_parameters_of_the_case() {
        let given = std::collections::BTreeMap::from([(
            "cmd".to_string(),
            vec!["make -j{jobs} {target}".to_string()],
        )]);
        let names: Vec<&str> = CommandWorkload
            .params_given(&given)
            .iter()
            .map(|s| s.name)
            .collect();
        assert!(names.ends_with(&["jobs", "target"]), "{names:?}");
        assert!(CommandWorkload.takes_param("target") && !CommandWorkload.takes_param("Bad"));
    }
}

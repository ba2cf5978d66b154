//! One side of `sledge ab`: what its rounds run with, and the executor
//! that applies it before each of them.
//!
//! Everything that belongs to one process (environment, CPUs, cgroup, a
//! wrapper command, another sledge build) is applied to the round's own
//! process as it starts (`subprocess::Launch`), so the other side's rounds
//! never see it. What belongs to the host (a knob, a setup command) is
//! applied before each of this side's rounds, since the other side's
//! rounds come in between.

use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::knob::Knob;
use crate::engine::{Round, RoundExecutor, RoundOutcome};
use crate::suite::subprocess::{Launch, Subprocess};
use crate::sys::group_command::{Ending, run_group};

/// The names of the two sides, in order.
pub const SIDES: [&str; 2] = ["A", "B"];

/// What one side's rounds run with.
#[derive(Debug, Clone, Default)]
pub struct Setting {
    /// How its rounds' processes start.
    pub launch: Launch,
    /// The CPUs its rounds run on (`--a-cpus`); all the run's when `None`.
    pub cpus: Option<Vec<usize>>,
    /// A shell command run before each of its rounds (`--a-setup`).
    pub setup: Option<String>,
}

impl Setting {
    /// The setting in words, knobs included (`side` 0 for A, 1 for B), as
    /// stored with the side's run and shown before the first round:
    /// `vm.swappiness=10; cpus 0; env MALLOC_ARENA_MAX=2`; `as is` for a
    /// side that changes nothing.
    /// With `name_build`, a side that runs this sledge says so, with its
    /// architecture (see [`describe_both`]).
    pub fn describe(&self, knobs: &[Knob], side: usize, name_build: bool) -> String {
        let mut parts: Vec<String> = knobs
            .iter()
            .map(|k| format!("{}={}", k.name, k.values[side]))
            .collect();
        if let Some(cpus) = &self.cpus {
            parts.push(format!(
                "cpus {}",
                crate::sys::affinity::format_cpu_list(cpus)
            ));
        }
        for (k, v) in &self.launch.env {
            parts.push(format!("env {k}={v}"));
        }
        if let Some(cgroup) = &self.launch.cgroup {
            parts.push(format!("cgroup {}", cgroup.display()));
        }
        if !self.launch.wrap.is_empty() {
            parts.push(format!(
                "wrap {}",
                shlex::try_join(self.launch.wrap.iter().map(String::as_str)).unwrap_or_default()
            ));
        }
        match &self.launch.program {
            // Which build, and for which architecture: two builds may
            // differ in word size (a 32-bit sledge against a 64-bit one).
            Some(program) => parts.push(match crate::sys::build_arch::of_file(program) {
                Some(build) => format!("sledge {} ({build})", program.display()),
                None => format!("sledge {}", program.display()),
            }),
            None if name_build => parts.push(format!(
                "sledge this build ({})",
                crate::sys::build_arch::this_build()
            )),
            None => {}
        }
        if let Some(setup) = &self.setup {
            parts.push(format!("setup `{setup}`"));
        }
        if parts.is_empty() {
            "as is".to_string()
        } else {
            parts.join("; ")
        }
    }
}

/// Both sides' settings in words, A's then B's ([`Setting::describe`]):
/// when either side runs another sledge build, each side names its build
/// and architecture (`sledge ./sledge-i686 (i686, 32-bit)`, `sledge this
/// build (x86_64, 64-bit)`), so a reader sees which side is which build.
pub fn describe_both(settings: &[Setting; 2], knobs: &[Knob]) -> [String; 2] {
    let name_build = settings.iter().any(|s| s.launch.program.is_some());
    [0, 1].map(|side| settings[side].describe(knobs, side, name_build))
}

/// Runs a round of one side: its knobs, its setup command, then the round
/// in a fresh process started as its setting says.
pub struct SideExecutor<'a> {
    /// 0 for A, 1 for B.
    pub side: usize,
    /// Every knob of the comparison (set to this side's values).
    pub knobs: &'a [Knob],
    /// The side's setup command.
    pub setup: Option<String>,
    /// How long a setup command may run.
    pub setup_limit: Duration,
    /// Starts the round's process.
    pub rounds: Subprocess,
}

impl RoundExecutor for SideExecutor<'_> {
    fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
        let started = std::time::Instant::now();
        let prepared = self
            .knobs
            .iter()
            .try_for_each(|knob| knob.set(self.side))
            .and_then(|()| match &self.setup {
                Some(command) => run_setup(command, SIDES[self.side], self.setup_limit, &|| {
                    round.ctx.cancel.is_cancelled()
                }),
                None => Ok(()),
            });
        if let Err(error) = prepared {
            return RoundOutcome {
                error: Some(error),
                seconds: started.elapsed().as_secs_f64(),
                ..RoundOutcome::default()
            };
        }
        self.rounds.run_round(round)
    }
}

/// Runs a setup (or restore) command with `sh -c` as a process group of
/// its own ([`run_group`]): its output on stderr (stdout holds sledge's
/// results), ended with its whole group after `limit` or when `stop`
/// says so, and whatever it leaves running in its group killed. An error
/// names the command and how it ended.
pub fn run_setup(
    command: &str,
    side: &str,
    limit: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<(), String> {
    let stdout = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    let done = run_group(
        Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(stdout),
        limit,
        stop,
    )
    .map_err(|e| format!("{side}'s command `{command}` could not run: {e}"))?;
    if done.left_running {
        crate::say!(
            "note: {side}'s command `{command}` left processes running in its group; they were killed (start a lasting service outside the command's group, for example with systemd-run)"
        );
    }
    match done.ending {
        Ending::Exited(status) if status.success() => Ok(()),
        Ending::Exited(status) => Err(format!("{side}'s command `{command}` failed ({status})")),
        Ending::TimedOut => Err(format!(
            "{side}'s command `{command}` was still running after {} s, its limit (--setup-timeout); it was killed with everything it started",
            limit.as_secs_f64()
        )),
        Ending::Stopped => Err(format!(
            "{side}'s command `{command}` was stopped by the interrupt, with everything it started"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_says_everything_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("swappiness");
        std::fs::write(&path, "60\n").unwrap();
        let mut knob = Knob::check(
            &super::super::KnobSpec::parse(&format!("{}=10,60", path.display())).unwrap(),
            &[crate::sys::tunable_file::TunableRoot::stand_in(dir.path())],
        )
        .unwrap();
        knob.name = "vm.swappiness".to_string();
        let setting = Setting {
            launch: Launch {
                env: vec![("MALLOC_ARENA_MAX".to_string(), "2".to_string())],
                wrap: vec!["nice".to_string(), "-n".to_string(), "10".to_string()],
                ..Launch::default()
            },
            cpus: Some(vec![0, 1]),
            setup: Some("true".to_string()),
        };
        assert_eq!(
            setting.describe(std::slice::from_ref(&knob), 1, false),
            "vm.swappiness=60; cpus 0-1; env MALLOC_ARENA_MAX=2; wrap nice -n 10; setup `true`"
        );
        assert_eq!(Setting::default().describe(&[], 0, false), "as is");
    }

    #[test]
    fn two_builds_each_say_their_architecture() {
        let exe = std::env::current_exe().unwrap();
        let this = crate::sys::build_arch::this_build().to_string();
        let other = Setting {
            launch: Launch {
                program: Some(exe.clone()),
                ..Launch::default()
            },
            ..Setting::default()
        };
        let [a, b] = describe_both(&[other.clone(), Setting::default()], &[]);
        assert_eq!(a, format!("sledge {} ({this})", exe.display()));
        assert_eq!(b, format!("sledge this build ({this})"));
        // The same build on both sides reads the same: an A/A comparison.
        let [a, b] = describe_both(&[other.clone(), other], &[]);
        assert_eq!(a, b);
        // Without another build, nothing about builds is said.
        let [a, _] = describe_both(&[Setting::default(), Setting::default()], &[]);
        assert_eq!(a, "as is");
    }

    const LIMIT: Duration = Duration::from_secs(60);

    #[test]
    fn a_failing_setup_command_is_an_error_naming_it() {
        assert_eq!(run_setup("true", "A", LIMIT, &|| false), Ok(()));
        let err = run_setup("exit 3", "B", LIMIT, &|| false).unwrap_err();
        assert!(err.starts_with("B's command `exit 3` failed"), "{err}");
    }

    #[test]
    fn a_setup_command_past_its_limit_or_interrupted_is_killed_and_named() {
        let started = std::time::Instant::now();
        let err = run_setup("sleep 300", "A", Duration::from_millis(200), &|| false).unwrap_err();
        assert!(err.contains("was still running after 0.2 s"), "{err}");
        let err = run_setup("sleep 300", "B", LIMIT, &|| true).unwrap_err();
        assert!(err.contains("stopped by the interrupt"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

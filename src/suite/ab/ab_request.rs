//! What `sledge ab` was asked to compare, checked before anything runs:
//! each side's setting (CPUs within the run's, a cgroup that can be
//! joined, a sledge build that exists), duet mode only with settings that
//! can differ at the same moment, and every knob (it exists, is writable,
//! takes both values). Every mistake is the command line's
//! ([`BadRequest`]), named with its flag.
//!
//! The checks live here rather than beside the flags so that whatever
//! builds a comparison (the command line, a test) gets the same refusals.

use std::path::PathBuf;

use super::execute::AbOptions;
use super::knob::{Knob, KnobSpec, knob_roots};
use super::knob_journal::{journal_dir, take_originals_from_journals};
use super::setting::{SIDES, Setting, describe_both};
use crate::suite::bad_request::BadRequest;
use crate::suite::execute::RunOptions;
use crate::suite::subprocess::Launch;

/// One side's setting as given (`--a-env`, `--a-cpus`, ... for A).
#[derive(Debug, Clone, Default)]
pub struct SideRequest {
    /// Environment variables of its rounds.
    pub env: Vec<(String, String)>,
    /// The CPUs its rounds run on; the run's when `None`.
    pub cpus: Option<Vec<usize>>,
    /// The cgroup directory its rounds run in.
    pub cgroup: Option<PathBuf>,
    /// A command its rounds run under, as words.
    pub wrap: Option<Vec<String>>,
    /// Another sledge build to run its rounds with.
    pub sledge: Option<PathBuf>,
    /// A shell command run before each of its rounds.
    pub setup: Option<String>,
}

/// A whole `sledge ab` request beyond the run's own options.
#[derive(Debug, Clone)]
pub struct AbRequest {
    /// A's setting, then B's.
    pub sides: [SideRequest; 2],
    /// The knobs as given, not yet checked.
    pub knobs: Vec<KnobSpec>,
    /// A shell command run once at the end (`--restore`).
    pub restore: Option<String>,
    /// How long a setup or restore command may run.
    pub setup_limit: std::time::Duration,
    /// Run A and B at the same time on two halves of the CPUs.
    pub duet: bool,
}

/// How long a setup or restore command may run unless
/// `--setup-timeout` says otherwise: ten minutes, enough to restart a
/// database server or drop the caches of a large machine, and a bound on
/// one that hangs.
pub const DEFAULT_SETUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

impl Default for AbRequest {
    fn default() -> Self {
        AbRequest {
            sides: Default::default(),
            knobs: Vec::new(),
            restore: None,
            setup_limit: DEFAULT_SETUP_LIMIT,
            duet: false,
        }
    }
}

impl AbRequest {
    /// The two settings, each checked against the run's `cpus`, and duet
    /// mode refused with what cannot differ between two things running at
    /// once.
    pub fn settings(&self, cpus: &[usize]) -> Result<[Setting; 2], BadRequest> {
        if self.duet {
            self.check_duet(cpus)?;
        }
        let [a, b] = &self.sides;
        Ok([a.setting("a", cpus)?, b.setting("b", cpus)?])
    }

    /// Duet mode needs two halves of CPUs and no host-wide difference.
    fn check_duet(&self, cpus: &[usize]) -> Result<(), BadRequest> {
        if cpus.len() < 2 {
            return Err(BadRequest(format!(
                "--duet needs at least 2 CPUs, one half for A and one for B; this run has {}",
                cpus.len()
            )));
        }
        let [a, b] = &self.sides;
        let host_wide = [
            (!self.knobs.is_empty(), "--knob"),
            (
                a.setup.is_some() || b.setup.is_some(),
                "--a-setup/--b-setup",
            ),
            (a.cpus.is_some() || b.cpus.is_some(), "--a-cpus/--b-cpus"),
        ];
        match host_wide.iter().find(|(given, _)| *given) {
            Some((_, flag)) => Err(BadRequest(format!(
                "--duet runs A and B at the same time, each on half of the CPUs: {flag} cannot \
                 differ between two things running at once (a knob or setup command changes \
                 the whole host; duet chooses the CPUs); drop --duet or {flag}"
            ))),
            None => Ok(()),
        }
    }

    /// The options of the comparison: the settings and knobs checked (each
    /// knob's values written once and the original put back), with `run`'s
    /// CPUs, methodology and notes. What the user should know before the
    /// first round is `said` line by line, and each knob's line before
    /// its check writes to it.
    pub fn options(
        &self,
        run: RunOptions,
        said: &mut dyn FnMut(String),
    ) -> Result<AbOptions, BadRequest> {
        let settings = self.settings(&run.cpus)?;
        for spec in &self.knobs {
            said(format!(
                "knob: {} is set to {} before A's rounds and {} before B's, and put back at the end",
                knob_place(spec),
                spec.values[0],
                spec.values[1]
            ));
        }
        // The same file twice (a sysctl and its path, a link) would be
        // written twice a round and put back twice: refused before any
        // knob is written.
        let resolved: Vec<_> = self
            .knobs
            .iter()
            .map(|spec| std::fs::canonicalize(&spec.path).ok())
            .collect();
        for (i, path) in resolved.iter().enumerate() {
            if let Some(path) = path
                && let Some(first) = resolved[..i].iter().position(|p| p.as_ref() == Some(path))
            {
                return Err(BadRequest(format!(
                    "--knob {} and --knob {} are the same file ({}): give each knob once",
                    self.knobs[first].name,
                    self.knobs[i].name,
                    path.display()
                )));
            }
        }
        let roots = knob_roots();
        let mut knobs: Vec<Knob> = self
            .knobs
            .iter()
            .map(|spec| Knob::check(spec, &roots).map_err(BadRequest))
            .collect::<Result<_, _>>()?;
        let journals = journal_dir();
        for line in take_originals_from_journals(&mut knobs, &journals) {
            said(line);
        }
        let described = describe_both(&settings, &knobs);
        for (name, text) in SIDES.iter().zip(&described) {
            said(format!("{name}: {text}"));
        }
        // The same setting however it is given (both as is, the same
        // cgroup, the same environment): the host alone moves the ratios.
        if described[0] == described[1] {
            said(
                "note: A and B are the same setting: an A/A comparison, to see what the host alone moves"
                    .to_string(),
            );
        }
        Ok(AbOptions {
            cpus: run.cpus,
            methodology: run.methodology,
            idle_check: run.idle_check,
            command_line: run.command_line,
            notes: run.notes,
            settings,
            knobs,
            journal_dir: journals,
            restore: self.restore.clone(),
            setup_limit: self.setup_limit,
            duet: self.duet,
        })
    }
}

/// Where a knob writes, as said before the first write: its name, and the
/// file when the name is a sysctl's.
fn knob_place(spec: &KnobSpec) -> String {
    let path = spec.path.display().to_string();
    if path == spec.name {
        path
    } else {
        format!("{} ({path})", spec.name)
    }
}

impl SideRequest {
    /// The side's setting, checked; `name` is the flags' prefix (`a`, `b`).
    fn setting(&self, name: &str, run_cpus: &[usize]) -> Result<Setting, BadRequest> {
        if let Some(list) = &self.cpus
            && let Some(cpu) = list.iter().find(|c| !run_cpus.contains(c))
        {
            return Err(BadRequest(format!(
                "--{name}-cpus: CPU {cpu} is not one this run may use ({})",
                crate::sys::affinity::format_cpu_list(run_cpus)
            )));
        }
        if let Some(dir) = &self.cgroup
            && !dir.join("cgroup.procs").is_file()
        {
            return Err(BadRequest(format!(
                "--{name}-cgroup {}: not a cgroup directory (it has no cgroup.procs); \
                 create one first, for example mkdir /sys/fs/cgroup/slow",
                dir.display()
            )));
        }
        if let Some(path) = &self.sledge
            && !is_executable_file(path)
        {
            return Err(BadRequest(format!(
                "--{name}-sledge {}: not an executable file",
                path.display()
            )));
        }
        Ok(Setting {
            launch: Launch {
                program: self.sledge.clone(),
                wrap: self.wrap.clone().unwrap_or_default(),
                env: self.env.clone(),
                cgroup: self.cgroup.clone(),
                pin: false,
            },
            cpus: self.cpus.clone(),
            setup: self.setup.clone(),
        })
    }
}

/// Whether `path` is a regular file someone may execute.
fn is_executable_file(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sides_cpus_must_be_the_runs() {
        let request = AbRequest {
            sides: [
                SideRequest {
                    cpus: Some(vec![3]),
                    ..SideRequest::default()
                },
                SideRequest::default(),
            ],
            ..AbRequest::default()
        };
        let err = request.settings(&[0, 1]).unwrap_err();
        assert!(err.0.starts_with("--a-cpus: CPU 3 is not one"), "{err}");
        assert!(request.settings(&[0, 1, 2, 3]).is_ok());
    }

    #[test]
    fn duet_refuses_what_changes_the_whole_host() {
        let mut request = AbRequest {
            duet: true,
            ..AbRequest::default()
        };
        assert!(
            request
                .settings(&[0])
                .unwrap_err()
                .0
                .contains("at least 2 CPUs")
        );
        request.sides[1].setup = Some("true".into());
        let err = request.settings(&[0, 1]).unwrap_err();
        assert!(err.0.contains("--a-setup/--b-setup cannot differ"), "{err}");
    }

    /// What `options` says before the first round, for `request`.
    fn said_for(request: &AbRequest) -> Vec<String> {
        let mut said = Vec::new();
        request
            .options(
                RunOptions {
                    cpus: vec![0],
                    methodology: Default::default(),
                    idle_check: false,
                    command_line: String::new(),
                    notes: Vec::new(),
                },
                &mut |line| said.push(line),
            )
            .unwrap();
        said
    }

    #[test]
    fn the_same_setting_on_both_sides_is_called_an_a_a_comparison() {
        let cgroup = tempfile::tempdir().unwrap();
        std::fs::write(cgroup.path().join("cgroup.procs"), "").unwrap();
        let in_cgroup = SideRequest {
            cgroup: Some(cgroup.path().to_path_buf()),
            ..SideRequest::default()
        };
        let is_a_a = |said: &[String]| said.iter().any(|l| l.contains("an A/A comparison"));
        let same = AbRequest {
            sides: [in_cgroup.clone(), in_cgroup.clone()],
            ..AbRequest::default()
        };
        assert!(is_a_a(&said_for(&same)));
        assert!(is_a_a(&said_for(&AbRequest::default())));
        let different = AbRequest {
            sides: [in_cgroup, SideRequest::default()],
            ..AbRequest::default()
        };
        assert!(!is_a_a(&said_for(&different)));
    }
}

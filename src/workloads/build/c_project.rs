//! `build.c`: the wall time of compiling a generated C project (see
//! `c_tree`) with the system `cc` under `make -jJOBS`. It needs nothing
//! beyond Debian's build-essential, so it is the build the quick profile
//! runs and the one the tests use.
//!
//! Untimed, once: the project is generated into the cache (an entry per
//! size and generator version, made complete or not at all). Each trial:
//! a fresh build directory (so no object of an earlier trial is reused),
//! the timed `make O=DIR -jJOBS`, then the directory is removed.

use std::ffi::OsString;

use super::c_tree::{self, Spec};
use super::make::{self, MakeCommand};
use super::{cache, tools};
use crate::engine::{
    Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext, TrialOutput,
    Workload,
};
use crate::workloads::common::params::MAX_THREADS;
use crate::workloads::common::workdir::{ScratchDir, remove_scratch};

/// CPU time `cc -O2` takes per generated line, for a plan without history:
/// 9 files of 100 lines took 0.25-0.31 s at two jobs on two vCPUs of an
/// AMD EPYC guest, and the default 33 files of 300 lines about 6 s of CPU.
const PLAN_LINE_CPU_SECONDS: f64 = 0.6e-3;

/// The `build.c` workload.
pub struct CBuild;

impl Workload for CBuild {
    fn id(&self) -> &'static str {
        "build.c"
    }
    fn version(&self) -> u32 {
        c_tree::GENERATOR_VERSION
    }
    fn summary(&self) -> &'static str {
        "wall time of compiling a generated C project (shared headers, make -jN, cc -O2); needs only build-essential"
    }
    fn params(&self) -> Vec<ParamSpec> {
        CBuildParams::specs()
    }
    /// Every C file and main.c compiled at [`PLAN_LINE_CPU_SECONDS`] a
    /// line, shared by the jobs as far as the CPUs allow.
    fn trial_seconds(&self, p: &ParamSet, env: &CaseEnv) -> Option<f64> {
        let p = CBuildParams::from_set(p);
        let lines = ((p.files + 1) * p.lines_per_file) as f64;
        let cpus = env.cpus.len().max(1) as u64;
        Some(lines * PLAN_LINE_CPU_SECONDS / p.jobs.clamp(1, cpus) as f64)
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = CBuildParams::from_set(p);
        tools::require(self.id(), &[tools::MAKE, tools::CC])?;
        let spec = Spec {
            files: p.files as usize,
            lines_per_file: p.lines_per_file as usize,
        };
        cache::check_space(self.id(), p.dir.as_str(), spec.estimated_bytes())?;
        Ok(Box::new(CCase {
            spec,
            jobs: p.jobs,
            cache_dir: cache::resolve(p.dir.as_str()),
            tree: None,
            scratch: None,
            trials: 0,
            notes: Vec::new(),
        }))
    }

    /// The cache directory, given or the default.
    fn scratch_parents(&self, params: &ParamSet) -> Vec<std::path::PathBuf> {
        let params = CBuildParams::from_set(params);
        cache::scratch_parents(params.dir.as_str())
    }
}

crate::workload_params! {
    /// The parameters of `build.c`.
    pub struct CBuildParams {
        files: u64 = ParamSpec {
            name: "files",
            role: ParamRole::Other,
            help: "C files in the project (in groups of 8 sharing a header), besides main.c",
            kind: ParamKind::Int {
                min: 1,
                max: 100_000,
            },
            default: "32",
        },
        lines_per_file: u64 = ParamSpec {
            name: "lines_per_file",
            role: ParamRole::Other,
            help: "lines per C file, about (at the default, cc -O2 takes about 1.5 s of CPU per group of 8 files)",
            kind: ParamKind::Int {
                min: 30,
                max: 100_000,
            },
            default: "300",
        },
        jobs: u64 = ParamSpec {
            name: "jobs",
            role: ParamRole::CpuCount,
            help: "make -j: parallel jobs (`all`: one per CPU of the run)",
            kind: ParamKind::Threads { max: MAX_THREADS },
            default: "all",
        },
        dir: String = cache::dir_param(),
    }
}

struct CCase {
    spec: Spec,
    jobs: u64,
    cache_dir: std::path::PathBuf,
    tree: Option<std::path::PathBuf>,
    scratch: Option<ScratchDir>,
    trials: u64,
    notes: Vec<String>,
}

/// The cached project of `spec` under `cache_dir`, generated first when
/// missing. Returns the tree and whether this call generated it.
pub fn project_tree(
    spec: &Spec,
    cache_dir: &std::path::Path,
) -> anyhow::Result<(std::path::PathBuf, bool)> {
    let entry = cache_dir.join(cache::entry_name(&spec.entry_name())?);
    if entry.join("Makefile").is_file() {
        return Ok((entry, false));
    }
    cache::ensure(cache_dir)?;
    let mut staging = ScratchDir::create(cache_dir, "build.c")?;
    let tree = staging.path().join("tree");
    std::fs::create_dir(&tree)?;
    c_tree::write(spec, &tree)?;
    cache::publish(&tree, &entry)?;
    staging.remove()?;
    Ok((entry, true))
}

impl Case for CCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        let (tree, _generated) = project_tree(&self.spec, &self.cache_dir)?;
        self.scratch = Some(ScratchDir::create(&self.cache_dir, "build.c")?);
        self.notes = super::toolchain_notes(
            "cc",
            &format!(
                "{} files of about {} lines, cc -O2",
                self.spec.files, self.spec.lines_per_file
            ),
            &tree,
        );
        self.tree = Some(tree);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let scratch = self
            .scratch
            .as_ref()
            .expect("prepared")
            .path()
            .to_path_buf();
        let out = scratch.join(format!("build-{}", self.trials));
        self.trials += 1;
        let command = MakeCommand {
            make: tools::find_program("make").unwrap_or_else(|| "make".into()),
            dir: self.tree.clone().expect("prepared"),
            args: vec![
                OsString::from(format!("O={}", out.display())),
                OsString::from(format!("-j{}", self.jobs)),
            ],
            log: scratch.join("build.log"),
        };
        let result = make::run(&command, &ctx.cancel);
        super::finish_trial(result, &out, self.jobs)
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        remove_scratch(&mut self.scratch)
    }

    fn warnings(&self) -> Vec<String> {
        self.notes.clone()
    }
}

//! `build.kernel`: the wall time of compiling a real Linux kernel, as
//! developers time it and as Phoronix's build-linux-kernel does.
//!
//! Untimed, once: the source is located (Debian's tarball or `src=`) and
//! unpacked into the cache (see `source`). Each trial: a fresh build
//! directory, `make O=DIR CONFIG` (untimed), then the timed
//! `make O=DIR -jJOBS TARGET` (see `make` for how it is timed and
//! stopped), then the directory is removed. The config step needs the
//! fresh directory too, so it is part of every trial rather than the
//! preparation; it is never part of the time, but the plan counts it, and
//! the unpack, in the run's wall time (`untimed_work`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::bail;

use super::make::{self, MakeCommand};
use super::source::{self, Source};
use super::{cache, tools};
use crate::engine::{
    Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext, TrialOutput,
    UntimedWork, Workload,
};
use crate::workloads::common::params::MAX_THREADS;
use crate::workloads::common::workdir::{ScratchDir, remove_scratch};

crate::param_choice! {
    /// The configs the workload knows how to size and check for, by the
    /// make target that makes each.
    pub enum KernelConfig {
        Tinyconfig = "tinyconfig",
        Defconfig = "defconfig",
        Allnoconfig = "allnoconfig",
        Allmodconfig = "allmodconfig",
    }
}

/// The `build.kernel` workload.
pub struct KernelBuild;

impl Workload for KernelBuild {
    fn id(&self) -> &'static str {
        "build.kernel"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "wall time of a Linux kernel compile (make -jN, out of tree) from Debian's linux-source or any tree; like Phoronix's build-linux-kernel"
    }
    fn params(&self) -> Vec<ParamSpec> {
        KernelBuildParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = KernelBuildParams::from_set(p);
        let workload = self.id();
        let config = p.config;
        let targets = parse_targets(workload, p.target.as_str())?;
        // Tools first: a host without them cannot use any source.
        tools::require(workload, &needs(config, None))?;
        let source = Source::locate(workload, p.src.as_str())?;
        if let Some(name) = source.tarball_name() {
            let unpacking: Vec<tools::Need> = needs(config, Some(&name))
                .into_iter()
                .filter(|need| !needs(config, None).contains(need))
                .collect();
            tools::require(workload, &unpacking)?;
        }
        let cache_dir = cache::resolve(p.dir.as_str());
        let cached = source
            .entry(&cache_dir)?
            .is_some_and(|entry| source::is_kernel_tree(&entry));
        let unpack = if cached { 0 } else { source.unpacked_bytes() };
        cache::check_space(workload, p.dir.as_str(), unpack + build_dir_bytes(config))?;
        Ok(Box::new(KernelCase {
            config,
            jobs: p.jobs,
            targets,
            source,
            cache_dir,
            tree: None,
            scratch: None,
            trials: 0,
            notes: Vec::new(),
        }))
    }

    /// A build's CPU time for its config ([`build_cpu_seconds`]) shared by
    /// its jobs, as far as the CPUs allow.
    fn trial_seconds(&self, p: &ParamSet, env: &CaseEnv) -> Option<f64> {
        let p = KernelBuildParams::from_set(p);
        let cpus = env.cpus.len().max(1) as u64;
        let parallel = p.jobs.clamp(1, cpus) as f64;
        Some(build_cpu_seconds(p.config) / parallel)
    }
    /// The unpack of a tarball not yet in the cache, once
    /// ([`unpack_seconds`]), and the config step of every trial
    /// ([`CONFIG_SECONDS`]): both untimed, both in the run's wall time.
    fn untimed_work(&self, p: &ParamSet, _env: &CaseEnv) -> UntimedWork {
        let p = KernelBuildParams::from_set(p);
        let Ok(source) = Source::locate(self.id(), p.src.as_str()) else {
            // No source: the case is refused or skipped, and costs nothing.
            return UntimedWork::default();
        };
        let cache_dir = cache::resolve(p.dir.as_str());
        let unpacked = source
            .entry(&cache_dir)
            .ok()
            .flatten()
            .is_none_or(|entry| source::is_kernel_tree(&entry));
        UntimedWork {
            once_seconds: if unpacked {
                0.0
            } else {
                unpack_seconds(&source)
            },
            per_trial_seconds: CONFIG_SECONDS,
        }
    }
    /// The cache directory, given or the default.
    fn scratch_parents(&self, params: &ParamSet) -> Vec<std::path::PathBuf> {
        let params = KernelBuildParams::from_set(params);
        cache::scratch_parents(params.dir.as_str())
    }
}

crate::workload_params! {
    /// The parameters of `build.kernel`.
    pub struct KernelBuildParams {
        config: KernelConfig = ParamSpec {
            name: "config",
            role: ParamRole::Other,
            help: "the config made (untimed) before each build: tinyconfig (quick), defconfig (standard), allnoconfig, allmodconfig",
            kind: ParamKind::Choice(KernelConfig::NAMES),
            default: "defconfig",
        },
        jobs: u64 = ParamSpec {
            name: "jobs",
            role: ParamRole::CpuCount,
            help: "make -j: parallel jobs (`all`: one per CPU of the run)",
            kind: ParamKind::Threads { max: MAX_THREADS },
            default: "all",
        },
        target: String = ParamSpec {
            name: "target",
            role: ParamRole::Other,
            help: "make targets, space-separated (default: vmlinux, plus modules when the config has any)",
            kind: ParamKind::Text,
            default: "",
        },
        src: String = ParamSpec {
            name: "src",
            role: ParamRole::Other,
            help: "a kernel tree or tarball (default: the newest /usr/src/linux-source-*.tar.* of Debian's linux-source)",
            kind: ParamKind::Text,
            default: "",
        },
        dir: String = cache::dir_param(),
    }
}

/// What a build with `config` needs, and `tar` with its decompressor for
/// a tarball named `tarball`. x86-64 kernels beyond tinyconfig and
/// allnoconfig (which make 32-bit ones) run objtool, which needs libelf;
/// defconfig and allmodconfig build the certificate tools, which need
/// OpenSSL.
pub fn needs(config: KernelConfig, tarball: Option<&str>) -> Vec<tools::Need> {
    let mut needs = vec![
        tools::MAKE,
        tools::GCC,
        tools::FLEX,
        tools::BISON,
        tools::BC,
    ];
    if matches!(config, KernelConfig::Defconfig | KernelConfig::Allmodconfig) {
        needs.extend([tools::LIBELF, tools::OPENSSL]);
    }
    if let Some(name) = tarball {
        needs.push(tools::TAR);
        needs.extend(tools::decompressor_for(name));
    }
    needs
}

/// About how many CPU-seconds one build with `config` takes, for the
/// plan of a host that has never run it. These are orders of magnitude,
/// not measurements of this host: Linux 6.x with gcc 12 on one core of a
/// current server CPU (defconfig about 20 minutes serial, tinyconfig and
/// allnoconfig a minute or two, allmodconfig about twelve times
/// defconfig). The first run stores the real cost, and later plans use it.
pub fn build_cpu_seconds(config: KernelConfig) -> f64 {
    match config {
        KernelConfig::Tinyconfig => 90.0,
        KernelConfig::Allnoconfig => 120.0,
        KernelConfig::Defconfig => 1200.0,
        KernelConfig::Allmodconfig => 15_000.0,
    }
}

/// About how long the config step of a trial takes (`make O=DIR CONFIG`
/// in a fresh directory: it builds kconfig's tools, then runs them),
/// seconds: on Linux 6.1 on a 2-vCPU guest under a load of 8, tinyconfig
/// took 19.3 s and defconfig 13.2 s (6.7 and 5.2 s of CPU).
pub const CONFIG_SECONDS: f64 = 15.0;

/// How fast a tarball unpacks into the cache, in the bytes
/// [`Source::unpacked_bytes`] expects of it per second: Linux 6.1's
/// 138 MB .tar.xz (1.32 GB in 78,579 files; 1.79 GB expected, with that
/// estimate's margin) unpacked in 44 s on the guest above (20 s of CPU).
pub const UNPACK_BYTES_PER_SECOND: f64 = 40e6;

/// About how long unpacking `source` into the cache takes, seconds (0 for
/// a tree, used in place).
pub fn unpack_seconds(source: &Source) -> f64 {
    source.unpacked_bytes() as f64 / UNPACK_BYTES_PER_SECOND
}

/// Space one build directory takes, with room to spare (measured on
/// Linux 6.1, x86-64: tinyconfig about 60 MB; defconfig about 1.5 GB;
/// allmodconfig tens of GB).
pub fn build_dir_bytes(config: KernelConfig) -> u64 {
    match config {
        KernelConfig::Tinyconfig | KernelConfig::Allnoconfig => 512 << 20,
        KernelConfig::Defconfig => 4 << 30,
        KernelConfig::Allmodconfig => 48 << 30,
    }
}

/// The `target` parameter as make targets; each must look like one.
fn parse_targets(workload: &str, text: &str) -> anyhow::Result<Vec<String>> {
    let targets: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    for t in &targets {
        let ok = !t.starts_with('-')
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
        if !ok {
            bail!(
                "{workload}: target `{t}` is not a make target (letters, digits, `_-./`, not starting with `-`; for example vmlinux, bzImage, modules)"
            );
        }
    }
    Ok(targets)
}

/// The default targets for a configured build directory: the image, and
/// the modules when the config builds any.
pub fn default_targets(config_text: &str) -> Vec<String> {
    let modules = config_text
        .lines()
        .any(|line| line.starts_with("CONFIG_MODULES=y"))
        && config_text
            .lines()
            .any(|line| line.starts_with("CONFIG_") && line.ends_with("=m"));
    let mut targets = vec!["vmlinux".to_string()];
    if modules {
        targets.push("modules".to_string());
    }
    targets
}

struct KernelCase {
    config: KernelConfig,
    jobs: u64,
    targets: Vec<String>,
    source: Source,
    cache_dir: PathBuf,
    tree: Option<PathBuf>,
    scratch: Option<ScratchDir>,
    trials: u64,
    notes: Vec<String>,
}

impl KernelCase {
    fn make_in(&self, tree: &Path, out: &Path, args: &[&str], log: &str) -> MakeCommand {
        let mut all: Vec<OsString> = vec![format!("O={}", out.display()).into()];
        all.extend(args.iter().map(OsString::from));
        MakeCommand {
            make: tools::find_program("make").unwrap_or_else(|| "make".into()),
            dir: tree.to_path_buf(),
            args: all,
            log: self.scratch.as_ref().expect("prepared").path().join(log),
        }
    }
}

impl Case for KernelCase {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let (tree, _unpacked) =
            source::tree("build.kernel", &self.source, &self.cache_dir, &ctx.cancel)?;
        cache::ensure(&self.cache_dir)?;
        self.scratch = Some(ScratchDir::create(&self.cache_dir, "build.kernel")?);
        self.notes = super::toolchain_notes("gcc", &format!("config {}", self.config), &tree);
        self.tree = Some(tree);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let tree = self.tree.clone().expect("prepared");
        let out = self
            .scratch
            .as_ref()
            .expect("prepared")
            .path()
            .join(format!("build-{}", self.trials));
        self.trials += 1;
        let result = (|| {
            std::fs::create_dir(&out)?;
            make::run(
                &self.make_in(&tree, &out, &[self.config.as_str()], "config.log"),
                &ctx.cancel,
            )?;
            let targets = if self.targets.is_empty() {
                default_targets(&std::fs::read_to_string(out.join(".config")).unwrap_or_default())
            } else {
                self.targets.clone()
            };
            let jobs = format!("-j{}", self.jobs);
            let mut args: Vec<&str> = vec![&jobs];
            args.extend(targets.iter().map(String::as_str));
            make::run(&self.make_in(&tree, &out, &args, "build.log"), &ctx.cancel)
        })();
        super::finish_trial(result, &out, self.jobs)
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        remove_scratch(&mut self.scratch)
    }

    fn warnings(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_planned_from_its_config_and_the_cpus_its_jobs_get() {
        let env = |cpus: usize| CaseEnv {
            cpus: (0..cpus).collect(),
            total_cache_bytes: 0,
            memory_bytes: 1 << 34,
        };
        let seconds = |assignments: &[&str], cpus: usize| {
            let assigned = assignments
                .iter()
                .map(|a| crate::engine::params::split_assignment(a).unwrap())
                .collect();
            let p = crate::engine::params::resolve_cases(
                "build.kernel",
                &KernelBuild.params(),
                &assigned,
                cpus,
            )
            .unwrap()
            .remove(0);
            KernelBuild.trial_seconds(&p, &env(cpus)).unwrap()
        };
        assert_eq!(seconds(&["config=defconfig", "jobs=1"], 2), 1200.0);
        assert_eq!(seconds(&["config=defconfig", "jobs=all"], 2), 600.0);
        // More jobs than CPUs run no faster than one per CPU.
        assert_eq!(seconds(&["config=defconfig", "jobs=8"], 2), 600.0);
        assert_eq!(seconds(&["config=tinyconfig", "jobs=1"], 4), 90.0);
        assert_eq!(seconds(&["config=allmodconfig", "jobs=all"], 4), 3750.0);
    }

    #[test]
    fn the_plan_is_told_of_the_unpack_until_the_cache_holds_it_and_of_every_config() {
        let dir = tempfile::tempdir().unwrap();
        let tarball = dir.path().join("linux-9.9.tar.xz");
        std::fs::write(&tarball, vec![0u8; 4_000_000]).unwrap();
        let cache_dir = dir.path().join("cache");
        std::fs::create_dir(&cache_dir).unwrap();
        let untimed = |src: &Path| {
            let assigned = [
                format!("src={}", src.display()),
                format!("dir={}", cache_dir.display()),
                "config=tinyconfig".to_string(),
            ]
            .iter()
            .map(|a| crate::engine::params::split_assignment(a).unwrap())
            .collect();
            let p = crate::engine::params::resolve_cases(
                "build.kernel",
                &KernelBuild.params(),
                &assigned,
                2,
            )
            .unwrap()
            .remove(0);
            let env = CaseEnv {
                cpus: vec![0, 1],
                total_cache_bytes: 0,
                memory_bytes: 1 << 34,
            };
            KernelBuild.untimed_work(&p, &env)
        };
        // Not in the cache: 4 MB of .tar.xz is about 52 MB unpacked, 1.3 s.
        let first = untimed(&tarball);
        assert!((first.once_seconds - 1.3).abs() < 1e-9, "{first:?}");
        assert_eq!(first.per_trial_seconds, CONFIG_SECONDS);
        // Once its entry is a kernel tree, nothing is unpacked again.
        let entry = Source::locate("build.kernel", tarball.to_str().unwrap())
            .unwrap()
            .entry(&cache_dir)
            .unwrap()
            .unwrap();
        std::fs::create_dir(&entry).unwrap();
        for file in ["Makefile", "Kconfig"] {
            std::fs::write(entry.join(file), "").unwrap();
        }
        assert_eq!(
            untimed(&tarball),
            UntimedWork {
                once_seconds: 0.0,
                per_trial_seconds: CONFIG_SECONDS
            }
        );
        // A tree is built in place: only the configs.
        assert_eq!(untimed(&entry).once_seconds, 0.0);
    }

    #[test]
    fn modules_are_built_when_the_config_has_them() {
        assert_eq!(
            default_targets("# CONFIG_MODULES is not set\n"),
            ["vmlinux"]
        );
        assert_eq!(
            default_targets("CONFIG_MODULES=y\nCONFIG_E1000=y\n"),
            ["vmlinux"]
        );
        assert_eq!(
            default_targets("CONFIG_MODULES=y\nCONFIG_E1000=m\n"),
            ["vmlinux", "modules"]
        );
    }

    #[test]
    fn targets_must_look_like_make_targets() {
        assert_eq!(
            parse_targets("build.kernel", " bzImage  modules ").unwrap(),
            ["bzImage", "modules"]
        );
        let err = parse_targets("build.kernel", "vmlinux -k").unwrap_err();
        assert!(err.to_string().contains("is not a make target"), "{err}");
        assert!(parse_targets("build.kernel", "a;rm").is_err());
    }

    #[test]
    fn larger_configs_need_libelf_and_openssl() {
        assert!(!needs(KernelConfig::Tinyconfig, None).contains(&tools::LIBELF));
        assert!(needs(KernelConfig::Defconfig, None).contains(&tools::OPENSSL));
        let from_tarball = needs(KernelConfig::Tinyconfig, Some("linux.tar.xz"));
        assert!(from_tarball.contains(&tools::TAR) && from_tarball.contains(&tools::XZ));
    }
}

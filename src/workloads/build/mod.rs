//! The build workloads: compiling software as developers do every day,
//! many short compiler processes under `make -jN`, which exercises process
//! creation, the page cache, file system metadata and the scheduler's
//! ability to keep every core busy.
//!
//! - `build.kernel` compiles a real Linux tree (Debian's linux-source or
//!   any other), the benchmark developers and CI buyers trust most;
//! - `build.c` compiles a generated C project of a fixed size and needs
//!   only a C compiler and make (the quick profile's build).
//!
//! One idea per file: `tools` (what a build needs, checked up front),
//! `cache` (where unpacked and generated trees are kept), `source` (the
//! kernel tree and its unpacking), `c_tree` (the generated project),
//! `make` (running make as one killable, timed unit), and one file per
//! workload.

pub mod c_project;
pub mod c_tree;
pub mod cache;
pub mod kernel;
pub mod make;
pub mod source;
pub mod tools;

use std::path::Path;

use crate::engine::{Metric, TrialOutput};

/// A build trial's output: its build directory `out` is removed whatever
/// happened (the cached tree stays), then make's `result` becomes the
/// metrics or the trial's error.
pub fn finish_trial(
    result: anyhow::Result<make::MakeRun>,
    out: &Path,
    jobs: u64,
) -> anyhow::Result<TrialOutput> {
    let _ = std::fs::remove_dir_all(out);
    let run = result?;
    Ok(TrialOutput {
        metrics: build_metrics(&run, jobs),
        latency_ns: None,
    })
}

/// The metrics of one timed build: its wall time (the headline; a sweep
/// over `jobs` shows the speed-up t₁/tₙ), and how busy it kept its job
/// slots.
pub fn build_metrics(run: &make::MakeRun, jobs: u64) -> Vec<Metric> {
    vec![
        Metric::lower("seconds", "s", run.seconds),
        Metric::higher("cpu_utilisation", "%", 100.0 * run.utilisation(jobs)),
        Metric::lower("cpu_seconds", "s", run.user + run.system),
    ]
}

/// What a build's time depends on besides the machine, stored with the
/// case: the compiler (`compiler`, as the build calls it) and make that
/// ran, the config, and the tree. The note begins with `note: `, which the
/// summary shows as a note rather than a warning.
pub fn toolchain_notes(compiler: &str, config: &str, tree: &Path) -> Vec<String> {
    let version = |name: &str| {
        tools::find_program(name)
            .map(|path| tools::version_line(&path))
            .unwrap_or_else(|| "not found".to_string())
    };
    vec![format!(
        "note: built with {compiler}: {}; make: {}; {config}; tree {}",
        version(compiler),
        version("make"),
        tree.display()
    )]
}

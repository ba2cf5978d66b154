//! A case of `command`: its setup, its trials (each one run of the
//! command, after its prepare step) and its cleanup.

use std::process::Command;
use std::time::Duration;

use crate::engine::{Cancelled, Case, Metric, TrialContext, TrialOutput};
use crate::sys::group_command::Ending;

use super::output_metric::OutputMetric;
use super::parsers::ToolParser;
use super::run_once::{Keep, Ran, run};

/// How many times the shell's own start-up is timed in each round.
const SHELL_SAMPLES: usize = 20;

const MIB: f64 = 1024.0 * 1024.0;

/// What reads figures from the command's output.
pub struct Reader {
    /// A classic tool's parser.
    pub parser: Option<&'static dyn ToolParser>,
    /// The user's own metrics.
    pub metrics: Vec<OutputMetric>,
}

impl Reader {
    fn reads_output(&self) -> bool {
        self.parser.is_some() || !self.metrics.is_empty()
    }

    /// The figures in one run's output: the parser's first, then the
    /// user's.
    fn read(&self, ran: &Ran) -> anyhow::Result<Vec<Metric>> {
        // What was not read cannot be found: an error of reading says so
        // when the output was cut.
        let unread = |why: String| {
            if ran.stdout_cut {
                format!(
                    "{why} (the command's output passed {} MiB, and only that much was read)",
                    super::run_once::MAX_KEPT / (1024 * 1024)
                )
            } else {
                why
            }
        };
        let mut metrics = Vec::new();
        if let Some(parser) = self.parser {
            let parsed = parser.parse(&ran.stdout).map_err(|why| {
                anyhow::anyhow!(
                    "the {} parser could not read the command's output: {} (it reads what `{}` prints with {}; parser=none turns it off)",
                    parser.name(),
                    unread(why),
                    parser.name(),
                    parser.needs()
                )
            })?;
            metrics.extend(parsed);
        }
        for metric in &self.metrics {
            // Which figures a parser gives is known only once it has read
            // an output; a user's metric may not hide one.
            if let Some(parser) = self.parser
                && metrics.iter().any(|m| m.name == metric.name())
            {
                anyhow::bail!(
                    "metric `{}` has the name of a figure the {} parser reads; give it another name",
                    metric.name(),
                    parser.name()
                );
            }
            metrics.push(
                metric
                    .read(&ran.stdout)
                    .map_err(|why| anyhow::Error::msg(unread(why)))?,
            );
        }
        Ok(metrics)
    }
}

/// What starting a shell costs, taken out of each shell-run trial.
#[derive(Debug, Clone, Copy, Default)]
struct Overhead {
    wall: f64,
    user: f64,
    system: f64,
}

/// See the module documentation.
pub struct CommandCase {
    argv: Vec<String>,
    shell: bool,
    /// `prepare`, `setup` and `cleanup`, filled.
    prepare: Option<String>,
    setup: Option<String>,
    cleanup: Option<String>,
    limit: Duration,
    reader: Reader,
    ignore_failure: bool,
    overhead: Overhead,
    /// Trials after which processes of the command's group were left
    /// running (and killed).
    left_running: u32,
    /// Trials whose kept output was cut at its limit.
    output_cut: u32,
}

impl CommandCase {
    /// A case running `argv` (`sh -c CMD` when `shell`), with its
    /// `[prepare, setup, cleanup]` shell commands.
    pub fn new(
        argv: Vec<String>,
        shell: bool,
        [prepare, setup, cleanup]: [Option<String>; 3],
        limit: Duration,
        reader: Reader,
        ignore_failure: bool,
    ) -> Self {
        CommandCase {
            argv,
            shell,
            prepare,
            setup,
            cleanup,
            limit,
            reader,
            ignore_failure,
            overhead: Overhead::default(),
            left_running: 0,
            output_cut: 0,
        }
    }

    /// The command as shown in messages.
    fn shown(&self) -> String {
        if self.shell {
            self.argv[2].clone()
        } else {
            shlex::try_join(self.argv.iter().map(String::as_str))
                .unwrap_or_else(|_| self.argv.join(" "))
        }
    }

    /// Runs one of the untimed shell steps; an error names it.
    fn step(&self, what: &str, script: &str, ctx: &TrialContext) -> anyhow::Result<()> {
        let ran = run(
            Command::new("sh").arg("-c").arg(script),
            Keep::Nothing,
            Keep::Tail,
            self.limit,
            &|| ctx.cancel.is_cancelled(),
        )?;
        ended_well(&ran, &format!("{what} `{script}`"), self.limit, false)?;
        Ok(())
    }

    /// Times `sh -c ''` as hyperfine does, to take the shell's start-up
    /// out of each trial: the medians of a few runs.
    fn measure_shell(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let mut samples = Vec::with_capacity(SHELL_SAMPLES);
        for _ in 0..SHELL_SAMPLES {
            ctx.check_cancelled()?;
            let ran = run(
                Command::new("sh").arg("-c").arg(""),
                Keep::Nothing,
                Keep::Nothing,
                self.limit,
                &|| ctx.cancel.is_cancelled(),
            )?;
            ended_well(&ran, "the empty shell command", self.limit, false)?;
            let f = ran.finished;
            samples.push(Overhead {
                wall: f.wall.as_secs_f64(),
                user: f.user.as_secs_f64(),
                system: f.system.as_secs_f64(),
            });
        }
        let median = |pick: fn(&Overhead) -> f64| {
            let mut values: Vec<f64> = samples.iter().map(pick).collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        self.overhead = Overhead {
            wall: median(|o| o.wall),
            user: median(|o| o.user),
            system: median(|o| o.system),
        };
        Ok(())
    }
}

/// `Ok` when `ran` ended by itself with status 0 (or any status, with
/// `ignore_failure`); otherwise an error that names `what`, how it ended
/// and the end of its standard error.
fn ended_well(ran: &Ran, what: &str, limit: Duration, ignore_failure: bool) -> anyhow::Result<()> {
    match ran.finished.ending {
        Ending::Stopped => Err(Cancelled.into()),
        Ending::TimedOut => Err(anyhow::anyhow!(
            "{what} was still running after {} s (time_limit); it was killed with everything it started",
            limit.as_secs_f64()
        )),
        Ending::Exited(status) if status.success() || ignore_failure => Ok(()),
        Ending::Exited(status) => {
            let tail = ran.stderr.trim_end();
            let said = if tail.is_empty() {
                " and wrote nothing on stderr".to_string()
            } else {
                format!("; the end of its stderr:\n{tail}")
            };
            Err(anyhow::anyhow!("{what} failed ({status}){said}"))
        }
    }
}

impl Case for CommandCase {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        if self.shell {
            self.measure_shell(ctx)?;
        }
        if let Some(setup) = &self.setup {
            self.step("setup", setup, ctx)?;
        }
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        if let Some(prepare) = &self.prepare {
            self.step("prepare", prepare, ctx)?;
        }
        let stdout = if self.reader.reads_output() {
            Keep::All
        } else {
            Keep::Nothing
        };
        let mut command = Command::new(&self.argv[0]);
        command.args(&self.argv[1..]);
        let ran = run(&mut command, stdout, Keep::Tail, self.limit, &|| {
            ctx.cancel.is_cancelled()
        })?;
        ended_well(
            &ran,
            &format!("`{}`", self.shown()),
            self.limit,
            self.ignore_failure,
        )?;
        if ran.finished.left_running {
            self.left_running += 1;
        }
        if ran.stdout_cut {
            self.output_cut += 1;
        }
        let mut metrics = self.reader.read(&ran)?;
        let f = ran.finished;
        // The shell's own start-up, taken out; never below zero.
        let less = |measured: Duration, overhead: f64| (measured.as_secs_f64() - overhead).max(0.0);
        metrics.push(Metric::lower("wall", "s", less(f.wall, self.overhead.wall)));
        metrics.push(Metric::lower("user", "s", less(f.user, self.overhead.user)));
        metrics.push(Metric::lower(
            "system",
            "s",
            less(f.system, self.overhead.system),
        ));
        metrics.push(Metric::lower(
            "max_rss",
            "MiB",
            f.max_rss_kib as f64 * 1024.0 / MIB,
        ));
        if self.ignore_failure
            && let Ending::Exited(status) = f.ending
        {
            use std::os::unix::process::ExitStatusExt as _;
            let code = status
                .code()
                .or_else(|| status.signal().map(|s| 128 + s))
                .unwrap_or(0);
            metrics.push(Metric::lower("exit_status", "", f64::from(code)));
        }
        Ok(TrialOutput {
            metrics,
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        match &self.cleanup {
            // The cleanup runs after an interrupt too: a fresh context
            // would not stop it, its limit bounds it.
            Some(cleanup) => {
                let never = TrialContext::new(ctx.cpus.clone(), Default::default());
                self.step("cleanup", cleanup, &never)
            }
            None => Ok(()),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.left_running > 0 {
            warnings.push(format!(
                "after {} trials the command left processes running in its group; they were killed (a benchmark should wait for what it starts)",
                self.left_running
            ));
        }
        if self.output_cut > 0 {
            warnings.push(format!(
                "in {} trials the command's output passed {} MiB; only that much was read for its metrics",
                self.output_cut,
                super::run_once::MAX_KEPT / (1024 * 1024)
            ));
        }
        warnings
    }
}

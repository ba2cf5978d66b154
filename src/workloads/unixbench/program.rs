//! The UnixBench program one copy runs (`dhry2reg`, `pipe`, `fstime`, ...),
//! how it is named on a copy's command line, and how its copies' counts
//! combine into a score. Running it is `copy_main`'s: this file only
//! describes, so every program's module can name it.

use anyhow::{Context, anyhow, bail};

use super::score::Timebase;

/// The locale UnixBench sets for its whole run (`Run`'s `$language`): it
/// changes how fast `sort` and `grep` are, so the shell scripts get the
/// same.
pub const LANG: &str = "en_US.utf8";

crate::param_choice! {
    /// Which system calls the syscall program makes per loop (its
    /// argument), as the `calls` parameter names them.
    pub enum Calls {
        /// `close(dup(fd))`, `getpid()`, `getuid()`, `umask(022)`: the index test.
        Mix = "mix",
        /// `close(dup(fd))` only.
        Close = "close",
        /// `getpid()` only.
        Getpid = "getpid",
        /// `fork()`, `execl("/bin/true")` in the child, `waitpid()` (UnixBench's
        /// "sysexec", not in the index).
        Exec = "exec",
    }
}

/// What one copy runs, with its own parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// Dhrystone 2.1 (`dhry2reg`).
    Dhrystone,
    /// Whetstone in double precision (`whetstone-double`).
    Whetstone,
    /// A process that re-executes itself (`execl`).
    Execl,
    /// `fstime -c`: copy one file into another with `buffer`-byte reads and
    /// writes, both files at most `max_blocks` KiB.
    FileCopy { buffer: usize, max_blocks: usize },
    /// Write then read 512 bytes on one pipe (`pipe`).
    Pipe,
    /// Two processes pass a counter back and forth over two pipes (`context1`).
    Context,
    /// fork, exit, wait (`spawn`).
    Spawn,
    /// System calls in a loop (`syscall`).
    Syscall(Calls),
    /// A shell script starting `concurrent` workers, in a loop (`looper`
    /// running `multi.sh`).
    Shell { concurrent: u32 },
}

impl Program {
    /// The name used on a copy's command line.
    pub fn name(&self) -> &'static str {
        match self {
            Program::Dhrystone => "dhrystone",
            Program::Whetstone => "whetstone",
            Program::Execl => "execl",
            Program::FileCopy { .. } => "fcopy",
            Program::Pipe => "pipe",
            Program::Context => "context",
            Program::Spawn => "spawn",
            Program::Syscall(_) => "syscall",
            Program::Shell { .. } => "shell",
        }
    }

    /// The program and its parameters as command-line words.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![self.name().to_string()];
        match self {
            Program::FileCopy { buffer, max_blocks } => {
                args.push(buffer.to_string());
                args.push(max_blocks.to_string());
            }
            Program::Syscall(calls) => args.push(calls.as_str().to_string()),
            Program::Shell { concurrent } => args.push(concurrent.to_string()),
            _ => {}
        }
        args
    }

    /// Reads what [`to_args`](Self::to_args) wrote.
    pub fn from_args(args: &[String]) -> anyhow::Result<Self> {
        let name = args.first().ok_or_else(|| anyhow!("no program named"))?;
        let number = |i: usize| -> anyhow::Result<u64> {
            let word = args
                .get(i)
                .ok_or_else(|| anyhow!("{name}: argument {i} missing"))?;
            word.parse()
                .with_context(|| format!("{name}: argument {i} `{word}` is not a number"))
        };
        Ok(match name.as_str() {
            "dhrystone" => Program::Dhrystone,
            "whetstone" => Program::Whetstone,
            "execl" => Program::Execl,
            "fcopy" => Program::FileCopy {
                buffer: number(1)? as usize,
                max_blocks: number(2)? as usize,
            },
            "pipe" => Program::Pipe,
            "context" => Program::Context,
            "spawn" => Program::Spawn,
            "syscall" => {
                let word = args.get(1).map(String::as_str).unwrap_or("");
                Program::Syscall(
                    Calls::from_word(word)
                        .ok_or_else(|| anyhow!("syscall: unknown calls `{word}`"))?,
                )
            }
            "shell" => Program::Shell {
                concurrent: number(1)? as u32,
            },
            other => bail!("unknown UnixBench program `{other}`"),
        })
    }

    /// The environment a copy of the program runs in, beyond sledge's own.
    pub fn environment(&self) -> Vec<(String, String)> {
        match self {
            Program::Shell { .. } => vec![("LANG".to_string(), LANG.to_string())],
            _ => Vec::new(),
        }
    }

    /// The headline metric's name and unit (UnixBench's unit) and how the
    /// copies' counts combine.
    pub fn headline(&self) -> (&'static str, &'static str, Timebase) {
        match self {
            Program::Whetstone => ("mwips", "MWIPS", Timebase::Rate),
            Program::FileCopy { .. } => ("kb_per_sec", "KBps", Timebase::Rate),
            Program::Shell { .. } => ("loops_per_min", "lpm", Timebase::PerMinute),
            _ => ("loops_per_sec", "lps", Timebase::PerSecond),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_reads_back_what_it_wrote() {
        let programs = [
            Program::Dhrystone,
            Program::Whetstone,
            Program::Execl,
            Program::FileCopy {
                buffer: 256,
                max_blocks: 500,
            },
            Program::Pipe,
            Program::Context,
            Program::Spawn,
            Program::Syscall(Calls::Mix),
            Program::Syscall(Calls::Exec),
            Program::Shell { concurrent: 8 },
        ];
        for program in programs {
            assert_eq!(Program::from_args(&program.to_args()).unwrap(), program);
        }
        for name in Calls::NAMES {
            assert_eq!(Calls::from_word(name).unwrap().as_str(), *name);
        }
    }

    #[test]
    fn bad_copy_arguments_are_errors() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(Program::from_args(&[]).is_err());
        assert!(Program::from_args(&words(&["hanoi"])).is_err());
        assert!(Program::from_args(&words(&["fcopy", "1024"])).is_err());
        assert!(Program::from_args(&words(&["syscall", "open"])).is_err());
        assert!(Program::from_args(&words(&["shell", "many"])).is_err());
    }
}

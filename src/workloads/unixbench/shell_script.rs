//! The shell-script load of `unixbench.shell`: sledge's own scripts and
//! input, doing the work of UnixBench's `multi.sh`, `tst.sh` and
//! `sort.src`.
//!
//! UnixBench's scripts are GPL-2.0, so they are not shipped; these are
//! written for sledge and run the same commands, so each loop starts the
//! same processes: one `/bin/sh` driver that starts N workers in the
//! background and waits; each worker a `/bin/sh` that sorts the input,
//! dumps the sorted text with `od` and sorts that numerically, pipes
//! `grep the` through `tee` into `wc`, and removes the four files it
//! wrote (named after its process id, in the working directory). The input
//! is generated text of the same size and shape as UnixBench's `sort.src`
//! (362 lines, 8546 bytes, 38 lines holding "the" where it has 35); the commands'
//! cost is dominated by starting processes, not by the text.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;

use crate::workloads::common::rng::Xoroshiro128Plus;

/// The driver's file name (UnixBench's `multi.sh`).
pub const DRIVER: &str = "sledge-shell-driver.sh";
/// The worker's file name (UnixBench's `tst.sh`).
pub const WORKER: &str = "sledge-shell-worker.sh";
/// The input's file name (UnixBench's `sort.src`).
pub const INPUT: &str = "sledge-shell-input.txt";

/// Lines of UnixBench's `sort.src`.
pub const INPUT_LINES: usize = 362;
/// Bytes of UnixBench's `sort.src`.
pub const INPUT_BYTES: usize = 8546;

/// The driver: start `$1` workers at once, wait for all.
pub const DRIVER_TEXT: &str = "#!/bin/sh
# sledge's shell-script load (after UnixBench's multi.sh): start $1 workers
# at once on the same input and wait for all of them.
started=0
while [ \"$started\" -lt \"$1\" ]; do
\t/bin/sh ./sledge-shell-worker.sh sledge-shell-input.txt &
\tstarted=$((started + 1))
done
wait
";

/// One worker: sort, octal dump sorted numerically, grep through tee into
/// wc, clean up.
pub const WORKER_TEXT: &str = "#!/bin/sh
# One worker of sledge's shell-script load (after UnixBench's tst.sh).
sort <\"$1\" >sorted.$$
od sorted.$$ | sort -n -k 1 >octal.$$
grep the sorted.$$ | tee matches.$$ | wc >count.$$
rm sorted.$$ matches.$$ octal.$$ count.$$
";

/// The programs the scripts start, besides `/bin/sh`.
pub const COMMANDS: [&str; 6] = ["sort", "od", "grep", "tee", "wc", "rm"];

/// Words the generated input is made of, separated by single spaces: the
/// vocabulary of a shell script like `sort.src` (an old UnixBench driver
/// script).
const VOCABULARY: &str = "if then else fi echo cd export test for do done while case esac exit the results of \
     each run are in log file dir tmp $PWD ${TMPDIR} ${BINDIR} `pwd` -f -d -s = \"$1\" $? \
     ; | > >> 2>&1 && || # time date count iterations sort grep sed cat rm mkdir kill -9 \
     $$ umask 022 PATH HOME LOGFILE bench index mean value path copy status wait stop \
     start pass tests list name -n -k +1 do_run report \\ { } ( ) [ ]";

/// The generated input: [`INPUT_LINES`] lines, [`INPUT_BYTES`] bytes,
/// always the same text.
pub fn input_text() -> String {
    let words: Vec<&str> = VOCABULARY.split(' ').collect();
    let mut rng = Xoroshiro128Plus::seeded(0x0b1e_5eed);
    let mut out = String::with_capacity(INPUT_BYTES);
    for line in 0..INPUT_LINES {
        let left_lines = INPUT_LINES - line;
        let left_bytes = INPUT_BYTES - out.len() - left_lines; // minus newlines
        let mean = left_bytes as f64 / left_lines as f64;
        let length = if left_lines == 1 {
            left_bytes
        } else {
            // Between 0.3 and 1.7 times the running mean, so the total
            // lands on the target while lines vary as a script's do.
            ((mean * (0.3 + 1.4 * rng.next_f64())) as usize).min(left_bytes)
        };
        let mut text = String::new();
        if rng.below(3) == 0 {
            text.push('\t');
        }
        while text.len() < length {
            text.push_str(words[rng.below(words.len() as u64) as usize]);
            text.push(' ');
        }
        text.truncate(length);
        // Keep the length exact: a trailing blank becomes a letter.
        if text.ends_with(' ') {
            text.pop();
            text.push('x');
        }
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// Writes the driver (executable), the worker and the input into `dir`.
pub fn write_into(dir: &Path) -> anyhow::Result<()> {
    write_file(&dir.join(DRIVER), DRIVER_TEXT.as_bytes(), 0o755)?;
    write_file(&dir.join(WORKER), WORKER_TEXT.as_bytes(), 0o644)?;
    write_file(&dir.join(INPUT), input_text().as_bytes(), 0o644)
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("writing `{}`", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("writing `{}`", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_has_sort_src_s_size_and_shape() {
        let text = input_text();
        assert_eq!(text.len(), INPUT_BYTES);
        assert_eq!(text.lines().count(), INPUT_LINES);
        assert!(text.ends_with('\n'));
        let with_the = text.lines().filter(|l| l.contains("the")).count();
        // sort.src has 35; `grep the` passes about a tenth of the lines on.
        assert_eq!(with_the, 38);
        assert_eq!(text, input_text(), "the input is always the same");
    }

    #[test]
    fn the_scripts_run_the_commands_unixbench_runs() {
        for command in [
            "sort <",
            "od ",
            "sort -n -k 1",
            "grep the",
            "tee ",
            "wc ",
            "rm ",
        ] {
            assert!(WORKER_TEXT.contains(command), "{command}");
        }
        assert!(DRIVER_TEXT.contains(WORKER) && DRIVER_TEXT.contains(INPUT));
        assert!(DRIVER_TEXT.contains("&\n") && DRIVER_TEXT.ends_with("wait\n"));
    }

    #[test]
    fn one_driver_run_leaves_only_the_scripts_and_input() {
        let dir = tempfile::tempdir().unwrap();
        write_into(dir.path()).unwrap();
        let status = crate::workloads::unixbench::libc_process::while_text_busy(|| {
            std::process::Command::new(dir.path().join(DRIVER))
                .arg("3")
                .current_dir(dir.path())
                .status()
        })
        .unwrap();
        assert!(status.success());
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [DRIVER, INPUT, WORKER]);
    }
}

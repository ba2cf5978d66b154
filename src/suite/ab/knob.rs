//! `--knob PATH_OR_SYSCTL=A,B`: a sysfs file or sysctl that `sledge ab`
//! sets to A before each of A's rounds and to B before each of B's, and
//! puts back as it found it at the end.
//!
//! A knob changes the whole host, so every step is guarded:
//!
//! - **Checked before anything runs** ([`Knob::check`]): the file exists,
//!   is a regular file with a write permission, and a file that lists its
//!   choices (`always madvise [never]`, the THP style) lists both values;
//!   then each value is written once and the original written back, so a
//!   value the kernel refuses (`EINVAL`) stops the command before the
//!   first round, with the reason.
//! - **Said before it is written**: the command prints what it will write
//!   where ([`Knob::describe`]) before the first write.
//! - **Put back**: at the end, after a failure and after Ctrl-C
//!   ([`KnobGuard`] on drop, and [`restore_now`] from the second Ctrl-C,
//!   which exits without unwinding).
//! - **Remembered**: before the first write, a journal in the data
//!   directory records each knob's original value and the process writing
//!   it (a [`MakerMark`]). It is removed once the knobs are back. A sledge
//!   that was killed leaves it, and the next `run` or `ab` says which
//!   knob was left changed and how to put it back
//!   ([`left_changed`]), for as long as the knob is not back at its
//!   original value.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::monitor::maker_mark::MakerMark;

/// One knob as given, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobSpec {
    /// As the user named it (`vm.swappiness`, `/sys/...`).
    pub name: String,
    /// The file written.
    pub path: PathBuf,
    /// A's value, then B's.
    pub values: [String; 2],
}

/// Where sysctls live.
const PROC_SYS: &str = "/proc/sys";

impl KnobSpec {
    /// Parses `PATH_OR_SYSCTL=A_VALUE,B_VALUE`: a path starting with `/`,
    /// or a sysctl name (`vm.swappiness`, `net/core/somaxconn`) under
    /// `/proc/sys`.
    pub fn parse(text: &str) -> Result<KnobSpec, String> {
        let usage = "give PATH_OR_SYSCTL=A_VALUE,B_VALUE, for example \
                     --knob vm.swappiness=10,60 or \
                     --knob /sys/kernel/mm/transparent_hugepage/enabled=always,never";
        let Some((name, values)) = text.split_once('=') else {
            return Err(format!("--knob {text}: no `=`; {usage}"));
        };
        let name = name.trim();
        let Some((a, b)) = values.split_once(',') else {
            return Err(format!(
                "--knob {text}: needs two values, A's and B's, separated by a comma; {usage}"
            ));
        };
        let (a, b) = (a.trim(), b.trim());
        if name.is_empty() || a.is_empty() || b.is_empty() || b.contains(',') {
            return Err(format!(
                "--knob {text}: needs a name and exactly two non-empty values; {usage}"
            ));
        }
        let path = if name.starts_with('/') {
            PathBuf::from(name)
        } else if name.contains("..") || name.starts_with('.') {
            return Err(format!("--knob {text}: `{name}` is not a sysctl name"));
        } else {
            Path::new(PROC_SYS).join(name.replace('.', "/"))
        };
        Ok(KnobSpec {
            name: name.to_string(),
            path,
            values: [a.to_string(), b.to_string()],
        })
    }
}

/// A checked knob with the value it had before sledge touched it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    /// As the user named it.
    pub name: String,
    /// The file written.
    pub path: PathBuf,
    /// A's value, then B's.
    pub values: [String; 2],
    /// What to write back: the value it had (for a file of choices, the
    /// chosen one).
    pub original: String,
}

impl Knob {
    /// Checks `spec` as the module documentation says, writing each value
    /// once and the original back; the knob with its original value.
    pub fn check(spec: &KnobSpec) -> Result<Knob, String> {
        let what = format!("--knob {}", spec.name);
        let path = &spec.path;
        let meta = std::fs::metadata(path).map_err(|e| {
            format!(
                "{what}: {} cannot be read ({}){}",
                path.display(),
                plain_io_error(&e),
                if path.starts_with(PROC_SYS) {
                    "; is the sysctl's name right (`sysctl -a` lists them)?"
                } else {
                    ""
                }
            )
        })?;
        if !meta.is_file() {
            return Err(format!(
                "{what}: {} is not a file; a knob is a sysfs or sysctl file",
                path.display()
            ));
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o222 == 0 {
            return Err(format!(
                "{what}: {} is read-only (mode {:o}): it cannot be set",
                path.display(),
                mode & 0o7777
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "{what}: {} cannot be read ({})",
                path.display(),
                plain_io_error(&e)
            )
        })?;
        let (original, choices) = current_value(&text);
        if let Some(choices) = &choices {
            for value in &spec.values {
                if !choices.contains(value) {
                    return Err(format!(
                        "{what}: {} does not accept `{value}`; it accepts {}",
                        path.display(),
                        choices.join(", ")
                    ));
                }
            }
        }
        let knob = Knob {
            name: spec.name.clone(),
            path: path.clone(),
            values: spec.values.clone(),
            original,
        };
        for value in &knob.values {
            if let Err(err) = write_value(path, value) {
                let _ = write_value(path, &knob.original);
                return Err(format!(
                    "{what}: {} refused `{value}` ({err})",
                    path.display()
                ));
            }
        }
        write_value(path, &knob.original).map_err(|err| {
            format!(
                "{what}: {} could not be set back to `{}` ({err}); check it by hand",
                path.display(),
                knob.original
            )
        })?;
        Ok(knob)
    }

    /// What the knob does, for the line printed before anything is
    /// written: `vm.swappiness (/proc/sys/vm/swappiness): A 10, B 60,
    /// back to 60 at the end`.
    pub fn describe(&self) -> String {
        let path = self.path.display().to_string();
        let place = if path == self.name {
            path
        } else {
            format!("{} ({path})", self.name)
        };
        format!(
            "{place}: A {}, B {}, back to {} at the end",
            self.values[0], self.values[1], self.original
        )
    }

    /// Sets the knob to side `side`'s value (0 for A, 1 for B).
    pub fn set(&self, side: usize) -> Result<(), String> {
        write_value(&self.path, &self.values[side]).map_err(|err| {
            format!(
                "--knob {}: writing `{}` to {} failed: {err}",
                self.name,
                self.values[side],
                self.path.display()
            )
        })
    }

    /// Writes the original value back.
    pub fn restore(&self) -> Result<(), String> {
        write_value(&self.path, &self.original).map_err(|err| {
            format!(
                "--knob {}: {} could not be set back to `{}` ({err}); set it by hand: echo '{}' > {}",
                self.name,
                self.path.display(),
                self.original,
                self.original,
                self.path.display()
            )
        })
    }
}

/// The value a knob's text holds, and the choices when it lists them:
/// `always madvise [never]` holds `never` of three; `60\n` holds `60`.
fn current_value(text: &str) -> (String, Option<Vec<String>>) {
    let trimmed = text.trim();
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let chosen: Vec<&str> = words
        .iter()
        .filter_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .collect();
    if words.len() > 1 && chosen.len() == 1 {
        let choices = words
            .iter()
            .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
            .collect();
        (chosen[0].to_string(), Some(choices))
    } else {
        (trimmed.to_string(), None)
    }
}

/// Writes `value` to a knob's file in one write, without truncating (the
/// kernel takes a sysfs or sysctl write whole), as `echo value > file`
/// does.
fn write_value(path: &Path, value: &str) -> Result<(), String> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| plain_io_error(&e))?;
    file.write_all(format!("{value}\n").as_bytes())
        .map_err(|e| plain_io_error(&e))?;
    // A regular file (a test's knob) keeps no stale tail of a longer value.
    if let Ok(meta) = file.metadata()
        && meta.len() > value.len() as u64 + 1
        && !path.starts_with(PROC_SYS)
        && !path.starts_with("/sys")
    {
        file.set_len(value.len() as u64 + 1)
            .map_err(|e| plain_io_error(&e))?;
    }
    Ok(())
}

/// An I/O error in words, without its "(os error N)" tail.
fn plain_io_error(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The journal of the knobs one sledge changed.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// The process that wrote it ([`MakerMark::to_line`]).
    maker: String,
    /// The knobs with their original values.
    knobs: Vec<Knob>,
}

/// The directory the knob journals live in: `knobs/` next to the default
/// store.
pub fn journal_dir() -> PathBuf {
    let store = crate::store::Store::default_path();
    store
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        .join("knobs")
}

/// The knobs that must be put back should the process exit at once
/// (second Ctrl-C): see [`restore_now`].
static LIVE: Mutex<Vec<Knob>> = Mutex::new(Vec::new());

/// Knobs that are put back, and their journal removed, when this is
/// dropped: at the end of `sledge ab`, after a failure or a Ctrl-C.
#[derive(Debug)]
pub struct KnobGuard {
    knobs: Vec<Knob>,
    journal: Option<PathBuf>,
}

impl KnobGuard {
    /// Records `knobs` in a journal in `dir` (before anything is written:
    /// a sledge killed from here on leaves it for the next one) and
    /// returns the guard that puts them back.
    pub fn start(knobs: Vec<Knob>, dir: &Path) -> anyhow::Result<KnobGuard> {
        if knobs.is_empty() {
            return Ok(KnobGuard {
                knobs,
                journal: None,
            });
        }
        let maker = MakerMark::new("knobs").map(|m| m.to_line()).ok_or_else(|| {
            anyhow::anyhow!("cannot identify this process in /proc, so a knob changed by it could not be traced after a crash; --knob needs /proc")
        })?;
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the knob journal's directory {}: {e}",
                dir.display()
            )
        })?;
        let journal = dir.join(format!("{}.json", std::process::id()));
        let text = serde_json::to_string_pretty(&Journal {
            maker,
            knobs: knobs.clone(),
        })?;
        let staged = dir.join(format!(".{}.json.tmp", std::process::id()));
        std::fs::write(&staged, text)
            .and_then(|()| std::fs::rename(&staged, &journal))
            .map_err(|e| {
                let _ = std::fs::remove_file(&staged);
                anyhow::anyhow!("cannot write the knob journal {}: {e}", journal.display())
            })?;
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(knobs.iter().cloned());
        Ok(KnobGuard {
            knobs,
            journal: Some(journal),
        })
    }

    /// The knobs guarded.
    pub fn knobs(&self) -> &[Knob] {
        &self.knobs
    }

    /// Puts every knob back; the journal goes once all are back. The
    /// knobs that could not be put back, each with how to do it by hand.
    pub fn restore(&mut self) -> Vec<String> {
        let failures: Vec<String> = self
            .knobs
            .iter()
            .filter_map(|k| k.restore().err())
            .collect();
        LIVE.lock().unwrap_or_else(|p| p.into_inner()).clear();
        if failures.is_empty()
            && let Some(journal) = self.journal.take()
        {
            let _ = std::fs::remove_file(journal);
        }
        self.knobs.clear();
        failures
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        for failure in self.restore() {
            eprintln!("warning: {failure}");
        }
    }
}

/// Puts back the knobs of the `sledge ab` running in this process, for an
/// exit that skips destructors (the second Ctrl-C). Their journal stays:
/// the next run checks the values and says nothing once they are back.
pub fn restore_now() {
    let knobs = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|p| p.into_inner()));
    for knob in knobs {
        if let Err(failure) = knob.restore() {
            eprintln!("warning: {failure}");
        }
    }
}

/// The knobs a sledge that is gone left changed, each as a sentence with
/// the command that puts it back; journals whose knobs are all back at
/// their original values are removed. Read errors are ignored: this
/// check must never stop a run.
pub fn left_changed(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Some(journal) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Journal>(&text).ok())
        else {
            continue;
        };
        let Some(mark) = MakerMark::parse(&journal.maker) else {
            continue;
        };
        if !mark.maker_gone() {
            continue;
        }
        let changed: Vec<&Knob> = journal
            .knobs
            .iter()
            .filter(|k| {
                std::fs::read_to_string(&k.path)
                    .map(|text| current_value(&text).0 != k.original)
                    .unwrap_or(false)
            })
            .collect();
        if changed.is_empty() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        for knob in changed {
            let now = std::fs::read_to_string(&knob.path)
                .map(|t| current_value(&t).0)
                .unwrap_or_default();
            said.push(format!(
                "a `sledge ab` that is gone (pid {}) left {} at `{now}`; it was `{}` before: echo '{}' > {} puts it back (this is said until it is)",
                mark.maker.pid,
                knob.name,
                knob.original,
                knob.original,
                knob.path.display()
            ));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob_file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_knob_is_a_path_or_a_sysctl_with_two_values() {
        let k = KnobSpec::parse("vm.swappiness=10,60").unwrap();
        assert_eq!(k.path, PathBuf::from("/proc/sys/vm/swappiness"));
        assert_eq!(k.values, ["10".to_string(), "60".to_string()]);
        let k =
            KnobSpec::parse("/sys/kernel/mm/transparent_hugepage/enabled=always,never").unwrap();
        assert_eq!(
            k.path,
            PathBuf::from("/sys/kernel/mm/transparent_hugepage/enabled")
        );
        for bad in [
            "vm.swappiness",
            "vm.swappiness=10",
            "=1,2",
            "x=1,",
            "x=1,2,3",
            "..x=1,2",
        ] {
            let err = KnobSpec::parse(bad).unwrap_err();
            assert!(err.contains("--knob"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_file_of_choices_takes_only_its_choices_and_gives_back_its_chosen_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = knob_file(dir.path(), "enabled", "always madvise [never]\n");
        let spec = |values: &str| KnobSpec::parse(&format!("{}={values}", path.display())).unwrap();
        let err = Knob::check(&spec("always,sometimes")).unwrap_err();
        assert!(err.contains("does not accept `sometimes`"), "{err}");
        assert!(err.contains("always, madvise, never"), "{err}");
        let knob = Knob::check(&spec("always,never")).unwrap();
        assert_eq!(knob.original, "never");
        knob.set(0).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "always\n");
        knob.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "never\n");
    }

    #[test]
    fn missing_and_read_only_knobs_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let missing = KnobSpec::parse(&format!("{}/nope=1,2", dir.path().display())).unwrap();
        let err = Knob::check(&missing).unwrap_err();
        assert!(
            err.contains("cannot be read (No such file or directory)"),
            "{err}"
        );
        let path = knob_file(dir.path(), "ro", "5\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err =
            Knob::check(&KnobSpec::parse(&format!("{}=1,2", path.display())).unwrap()).unwrap_err();
        assert!(err.contains("is read-only (mode 444)"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "5\n");
        let err = Knob::check(&KnobSpec::parse(&format!("{}=1,2", dir.path().display())).unwrap())
            .unwrap_err();
        assert!(err.contains("is not a file"), "{err}");
    }

    #[test]
    fn the_guard_puts_knobs_back_and_removes_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = knob_file(dir.path(), "swappiness", "60\n");
        let knob =
            Knob::check(&KnobSpec::parse(&format!("{}=10,30", path.display())).unwrap()).unwrap();
        let journals = dir.path().join("journals");
        {
            let guard = KnobGuard::start(vec![knob.clone()], &journals).unwrap();
            guard.knobs()[0].set(0).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "10\n");
            assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 1);
            // This process is alive: its journal is nobody's leftover.
            assert!(left_changed(&journals).is_empty());
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "60\n");
        assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 0);
    }

    #[test]
    fn a_journal_of_a_gone_sledge_is_said_until_its_knob_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = knob_file(dir.path(), "swappiness", "10\n");
        let knob = Knob {
            name: "vm.swappiness".to_string(),
            path: path.clone(),
            values: ["10".to_string(), "30".to_string()],
            original: "60".to_string(),
        };
        // A mark of a process that cannot be alive: pid 1's identity with
        // another start time.
        let mut mark = MakerMark::new("knobs").unwrap();
        mark.maker.pid = u32::MAX - 1;
        let journals = dir.path().join("journals");
        std::fs::create_dir_all(&journals).unwrap();
        let journal = journals.join("7.json");
        std::fs::write(
            &journal,
            serde_json::to_string(&Journal {
                maker: mark.to_line(),
                knobs: vec![knob],
            })
            .unwrap(),
        )
        .unwrap();
        let said = left_changed(&journals);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("left vm.swappiness at `10`"), "{said:?}");
        assert!(said[0].contains("echo '60' >"), "{said:?}");
        assert!(journal.exists());
        std::fs::write(&path, "60\n").unwrap();
        assert!(left_changed(&journals).is_empty());
        assert!(!journal.exists());
    }
}

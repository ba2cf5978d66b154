//! The knobs `sledge ab` changed, remembered outside the process so that
//! no way of ending it leaves a knob changed unnoticed:
//!
//! - **Put back**: at the end, after a failure and after Ctrl-C
//!   ([`KnobGuard`] on drop, and [`restore_now`] from the second Ctrl-C,
//!   which exits without unwinding).
//! - **Remembered**: before the first write, a journal in the data
//!   directory records each knob's original text and the process writing
//!   it (a [`MakerMark`]). It is removed once the knobs are back. A sledge
//!   that was killed leaves it, and the next `run` or `ab` says which
//!   knob was left changed and how to put it back ([`left_changed`]), for
//!   as long as the knob is not back at its original value.
//! - **The journal's original wins**: a knob a killed sledge left at B's
//!   value reads as B's value to the next `ab`, which would put *that*
//!   back at its end; the next `ab` takes the original from the journal
//!   instead ([`originals_left`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::knob::{Knob, value_of};
use crate::monitor::maker_mark::MakerMark;

/// One knob as a journal records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JournalKnob {
    /// As the user named it.
    name: String,
    /// The file written, resolved.
    path: PathBuf,
    /// The file's text before sledge wrote to it. (Journals of an older
    /// sledge hold the value alone, which [`value_of`] reads the same.)
    original: String,
}

/// The journal of the knobs one sledge changed.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// The process that wrote it ([`MakerMark::to_line`]).
    maker: String,
    /// The knobs with their originals.
    knobs: Vec<JournalKnob>,
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
    /// The journals' directory, where the journals of gone sledges whose
    /// knobs these put back are removed too.
    dir: PathBuf,
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
                dir: dir.to_path_buf(),
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
            knobs: knobs
                .iter()
                .map(|k| JournalKnob {
                    name: k.name.clone(),
                    path: k.path().to_path_buf(),
                    original: k.original.clone(),
                })
                .collect(),
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
            dir: dir.to_path_buf(),
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
            // A gone sledge's journal of the same knobs is done with too,
            // now that they are back at the original it recorded.
            let _ = originals_left(&self.dir);
        }
        self.knobs.clear();
        failures
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        for failure in self.restore() {
            crate::say!("warning: {failure}");
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
            crate::say!("warning: {failure}");
        }
    }
}

/// A knob a sledge that is gone left changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftKnob {
    /// As that sledge's user named it.
    pub name: String,
    /// The file, resolved.
    pub path: PathBuf,
    /// Its text before that sledge wrote to it.
    pub original: String,
    /// What it reads now.
    pub now: String,
    /// That sledge's process id.
    pub pid: u32,
}

/// The knobs sledges that are gone left changed, oldest journal first;
/// journals whose knobs are all back at their original values are
/// removed. Read errors are ignored: this check must never stop a run.
pub fn originals_left(dir: &Path) -> Vec<LeftKnob> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut journals: Vec<(PathBuf, MakerMark, Journal)> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .filter_map(|path| {
            let journal: Journal =
                serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
            let mark = MakerMark::parse(&journal.maker)?;
            mark.maker_gone().then_some((path, mark, journal))
        })
        .collect();
    journals.sort_by_key(|(_, mark, _)| mark.maker.starttime);
    let mut left = Vec::new();
    for (path, mark, journal) in journals {
        let changed: Vec<LeftKnob> = journal
            .knobs
            .into_iter()
            .filter_map(|k| {
                let now = value_of(&std::fs::read_to_string(&k.path).ok()?);
                (now != value_of(&k.original)).then_some(LeftKnob {
                    name: k.name,
                    path: k.path,
                    original: k.original,
                    now,
                    pid: mark.maker.pid,
                })
            })
            .collect();
        if changed.is_empty() {
            let _ = std::fs::remove_file(&path);
        }
        left.extend(changed);
    }
    left
}

/// [`originals_left`] as sentences, each with the command that puts the
/// knob back (said by every `run` and `ab` until it is).
pub fn left_changed(dir: &Path) -> Vec<String> {
    originals_left(dir)
        .into_iter()
        .map(|k| {
            let original = value_of(&k.original);
            format!(
                "a `sledge ab` that is gone (pid {}) left {} at `{}`; it was `{original}` before: echo '{original}' > {} puts it back (this is said until it is)",
                k.pid,
                k.name,
                k.now,
                k.path.display()
            )
        })
        .collect()
}

/// Gives each of `knobs` that a gone sledge left changed the original
/// that sledge's journal recorded, instead of the changed value it reads
/// now; one sentence per knob so corrected.
pub fn take_originals_from_journals(knobs: &mut [Knob], dir: &Path) -> Vec<String> {
    let left = originals_left(dir);
    let mut said = Vec::new();
    for knob in knobs {
        if let Some(found) = left.iter().find(|l| l.path == knob.path()) {
            knob.original = found.original.clone();
            said.push(format!(
                "knob: {} reads `{}`, left so by a `sledge ab` that is gone (pid {}); its original `{}` is what goes back at the end",
                knob.name,
                found.now,
                found.pid,
                knob.original_value()
            ));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ab::KnobSpec;
    use crate::sys::tunable_file::TunableRoot;

    fn knob_at(dir: &Path, text: &str) -> Knob {
        let path = dir.join("swappiness");
        std::fs::write(&path, text).unwrap();
        Knob::check(
            &KnobSpec::parse(&format!("{}=10,30", path.display())).unwrap(),
            &[TunableRoot::stand_in(dir)],
        )
        .unwrap()
    }

    /// A journal in `journals` of a process that cannot be alive.
    fn gone_journal(journals: &Path, name: &str, knob: &Knob, original: &str) -> PathBuf {
        let mut mark = MakerMark::new("knobs").unwrap();
        mark.maker.pid = u32::MAX - 1;
        std::fs::create_dir_all(journals).unwrap();
        let journal = journals.join(name);
        std::fs::write(
            &journal,
            serde_json::to_string(&Journal {
                maker: mark.to_line(),
                knobs: vec![JournalKnob {
                    name: "vm.swappiness".to_string(),
                    path: knob.path().to_path_buf(),
                    original: original.to_string(),
                }],
            })
            .unwrap(),
        )
        .unwrap();
        journal
    }

    #[test]
    fn the_guard_puts_knobs_back_and_removes_its_journal() {
        let dir = tempfile::tempdir().unwrap();
        let knob = knob_at(dir.path(), "60\n");
        let journals = dir.path().join("journals");
        {
            let guard = KnobGuard::start(vec![knob.clone()], &journals).unwrap();
            guard.knobs()[0].set(0).unwrap();
            assert_eq!(std::fs::read_to_string(knob.path()).unwrap(), "10\n");
            assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 1);
            // This process is alive: its journal is nobody's leftover.
            assert!(left_changed(&journals).is_empty());
        }
        assert_eq!(std::fs::read_to_string(knob.path()).unwrap(), "60\n");
        assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 0);
    }

    #[test]
    fn a_journal_of_a_gone_sledge_is_said_until_its_knob_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let knob = knob_at(dir.path(), "10\n");
        let journals = dir.path().join("journals");
        let journal = gone_journal(&journals, "7.json", &knob, "60\n");
        let said = left_changed(&journals);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("left vm.swappiness at `10`"), "{said:?}");
        assert!(said[0].contains("echo '60' >"), "{said:?}");
        assert!(journal.exists());
        std::fs::write(knob.path(), "60\n").unwrap();
        assert!(left_changed(&journals).is_empty());
        assert!(!journal.exists());
    }

    #[test]
    fn the_original_of_a_gone_sledges_journal_wins_over_what_the_knob_reads() {
        let dir = tempfile::tempdir().unwrap();
        // A killed sledge left the knob at 30; it was 60.
        let mut knobs = vec![knob_at(dir.path(), "30\n")];
        assert_eq!(knobs[0].original_value(), "30");
        let journals = dir.path().join("journals");
        gone_journal(&journals, "7.json", &knobs[0], "60\n");
        let said = take_originals_from_journals(&mut knobs, &journals);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("original `60` is what goes back"),
            "{said:?}"
        );
        let mut guard = KnobGuard::start(knobs, &journals).unwrap();
        guard.knobs()[0].set(1).unwrap();
        assert!(guard.restore().is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("swappiness")).unwrap(),
            "60\n"
        );
        // Back at 60: the old journal is done with, and so is ours.
        assert!(left_changed(&journals).is_empty());
        assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 0);
    }
}

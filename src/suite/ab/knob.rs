//! `--knob PATH_OR_SYSCTL=A,B`: a sysfs file or sysctl that `sledge ab`
//! sets to A before each of A's rounds and to B before each of B's, and
//! puts back as it found it at the end.
//!
//! A knob changes the whole host, so every step is guarded:
//!
//! - **Only a kernel tunable** ([`TunableFile`]): the path is resolved
//!   (links and `..` followed) and must be a regular file under `/sys` or
//!   `/proc/sys` on one of the kernel's file systems of tunables, checked
//!   again on every write; `/etc/passwd`, a link to it or
//!   `/sys/../etc/hostname` is refused before anything is written.
//! - **Checked before anything runs** ([`Knob::check`]): the file is
//!   writable, and a file that lists its choices (`always madvise
//!   [never]`, the THP style) lists both values; then each value is
//!   written once and the original written back, so a value the kernel
//!   refuses (`EINVAL`) stops the command before the first round, with the
//!   reason.
//! - **Said before it is written**: the command prints what it will write
//!   where before the first write.
//! - **Put back as the kernel reported it**: the original is the file's
//!   whole text as read, written back byte for byte (for a file of
//!   choices, the chosen one, the only form the kernel takes), and read
//!   again to confirm; the journal (`knob_journal.rs`) puts it back after
//!   a failure, Ctrl-C or a killed sledge.

use std::path::{Path, PathBuf};

use crate::sys::tunable_file::{NotTunable, TunableFile, TunableRoot, plain_io_error};

/// One knob as given, before it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobSpec {
    /// As the user named it (`vm.swappiness`, `/sys/...`).
    pub name: String,
    /// The file as named (a sysctl's under `/proc/sys`), not yet resolved.
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
        // A value is written as one line: a line break inside would be a
        // second write the kernel reads as something else.
        if [a, b].iter().any(|v| v.contains(['\n', '\r', '\0'])) {
            return Err(format!(
                "--knob {text}: a value cannot hold a line break or a NUL byte"
            ));
        }
        let path = if name.starts_with('/') {
            PathBuf::from(name)
        } else if name.contains("..") || name.starts_with('.') || name.contains('\0') {
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

/// Where knobs may be: the kernel's tunables, and in a debug build the
/// directory `SLEDGE_TEST_KNOB_ROOT` names, whose files the tests use as
/// knobs (they cannot change the host's).
pub fn knob_roots() -> Vec<TunableRoot> {
    #[allow(unused_mut)]
    let mut roots = TunableRoot::kernel();
    // Debug builds only: a release build, the one users install, writes
    // the kernel's tunables and nothing else whatever its environment.
    #[cfg(debug_assertions)]
    if let Some(dir) = std::env::var_os("SLEDGE_TEST_KNOB_ROOT").filter(|d| !d.is_empty()) {
        roots.push(TunableRoot::stand_in(Path::new(&dir)));
    }
    roots
}

/// A checked knob with the text it had before sledge touched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// As the user named it.
    pub name: String,
    /// The file written, resolved.
    pub file: TunableFile,
    /// A's value, then B's.
    pub values: [String; 2],
    /// The file's whole text before sledge wrote to it, as the kernel
    /// reported it (or as a journal of a killed sledge recorded it).
    pub original: String,
}

impl Knob {
    /// Checks `spec` as the module documentation says, writing each value
    /// once and the original back; the knob with its original text.
    pub fn check(spec: &KnobSpec, roots: &[TunableRoot]) -> Result<Knob, String> {
        let what = format!("--knob {}", spec.name);
        let file = TunableFile::find(&spec.path, roots).map_err(|e| match e {
            NotTunable::Unreadable { .. } if spec.path.starts_with(PROC_SYS) => {
                format!("{what}: {e}; is the sysctl's name right (`sysctl -a` lists them)?")
            }
            e => format!("{what}: {e}"),
        })?;
        let path = file.path().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path)
            .map_err(|e| {
                format!(
                    "{what}: {} cannot be read ({})",
                    path.display(),
                    plain_io_error(&e)
                )
            })?
            .permissions()
            .mode();
        if mode & 0o222 == 0 {
            return Err(format!(
                "{what}: {} is read-only (mode {:o}): it cannot be set",
                path.display(),
                mode & 0o7777
            ));
        }
        let original = file.read().map_err(|e| {
            format!(
                "{what}: {} cannot be read ({})",
                path.display(),
                plain_io_error(&e)
            )
        })?;
        if let Some(choices) = choices_of(&original) {
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
            file,
            values: spec.values.clone(),
            original,
        };
        for side in 0..2 {
            if let Err(err) = knob.set(side) {
                let _ = knob.restore();
                return Err(format!(
                    "{what}: {} refused `{}` ({err})",
                    path.display(),
                    knob.values[side]
                ));
            }
        }
        knob.restore().map_err(|err| {
            format!(
                "{what}: {} could not be set back ({err}); check it by hand",
                path.display()
            )
        })?;
        Ok(knob)
    }

    /// The resolved file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The value the knob had, in words: the chosen one of a file of
    /// choices, the text without its line break otherwise.
    pub fn original_value(&self) -> String {
        value_of(&self.original)
    }

    /// Sets the knob to side `side`'s value (0 for A, 1 for B).
    pub fn set(&self, side: usize) -> Result<(), String> {
        self.file
            .write(&format!("{}\n", self.values[side]))
            .map_err(|err| {
                format!(
                    "--knob {}: writing `{}` to {} failed: {}",
                    self.name,
                    self.values[side],
                    self.path().display(),
                    plain_io_error(&err)
                )
            })
    }

    /// Writes the original back and reads it again: an error when the
    /// write fails or the kernel then reports another value.
    pub fn restore(&self) -> Result<(), String> {
        let by_hand = || {
            format!(
                "set it by hand: echo '{}' > {}",
                self.original_value(),
                self.path().display()
            )
        };
        self.file
            .write(&restore_text(&self.original))
            .map_err(|err| {
                format!(
                    "--knob {}: {} could not be set back to `{}` ({}); {}",
                    self.name,
                    self.path().display(),
                    self.original_value(),
                    plain_io_error(&err),
                    by_hand()
                )
            })?;
        let now = self
            .file
            .read()
            .map(|text| value_of(&text))
            .map_err(|err| {
                format!(
                    "--knob {}: {} cannot be read after it was set back ({}); {}",
                    self.name,
                    self.path().display(),
                    plain_io_error(&err),
                    by_hand()
                )
            })?;
        if now != self.original_value() {
            return Err(format!(
                "--knob {}: {} was set back to `{}` but now reads `{now}`; {}",
                self.name,
                self.path().display(),
                self.original_value(),
                by_hand()
            ));
        }
        Ok(())
    }
}

/// The choices a knob's text lists, when it lists them (`always madvise
/// [never]`: exactly one word in brackets among several).
fn choices_of(text: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let chosen = words
        .iter()
        .filter(|w| w.starts_with('[') && w.ends_with(']') && w.len() > 2)
        .count();
    (words.len() > 1 && chosen == 1).then(|| {
        words
            .iter()
            .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
            .collect()
    })
}

/// The value a knob's text holds: the chosen one of a file of choices
/// (`always madvise [never]` holds `never`), otherwise its words as the
/// kernel parses them, one space apart (`60\n` holds `60`; `4096\t87380
/// 6291456\n` holds `4096 87380 6291456`).
pub fn value_of(text: &str) -> String {
    if choices_of(text).is_some()
        && let Some(chosen) = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
    {
        return chosen.to_string();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What puts a knob back to the text `original`: the text itself, byte
/// for byte, except for a file of choices, which takes only the chosen
/// one.
fn restore_text(original: &str) -> String {
    match choices_of(original) {
        Some(_) => format!("{}\n", value_of(original)),
        None => original.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob_file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn spec(path: &Path, values: &str) -> KnobSpec {
        KnobSpec::parse(&format!("{}={values}", path.display())).unwrap()
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
            "vm.swappiness=1\n2,3",
        ] {
            let err = KnobSpec::parse(bad).unwrap_err();
            assert!(err.contains("--knob"), "{bad}: {err}");
        }
    }

    #[test]
    fn only_files_under_the_knob_places_are_knobs_and_others_are_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let place = dir.path().join("place");
        std::fs::create_dir(&place).unwrap();
        let precious = knob_file(dir.path(), "precious", "root:x:0:0\n");
        std::os::unix::fs::symlink(&precious, place.join("link")).unwrap();
        let roots = [TunableRoot::stand_in(&place)];
        for path in [
            precious.clone(),
            place.join("link"),
            place.join("..").join("precious"),
        ] {
            let err = Knob::check(&spec(&path, "a,b"), &roots).unwrap_err();
            assert!(err.contains("is not a kernel tunable"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root:x:0:0\n");
        // The kernel's places alone refuse the same file.
        let err = Knob::check(&spec(&precious, "a,b"), &TunableRoot::kernel()).unwrap_err();
        assert!(err.contains("under /sys or /proc/sys"), "{err}");
    }

    #[test]
    fn a_file_of_choices_takes_only_its_choices_and_gives_back_its_chosen_one() {
        let dir = tempfile::tempdir().unwrap();
        let roots = [TunableRoot::stand_in(dir.path())];
        let path = knob_file(dir.path(), "enabled", "always madvise [never]\n");
        let err = Knob::check(&spec(&path, "always,sometimes"), &roots).unwrap_err();
        assert!(err.contains("does not accept `sometimes`"), "{err}");
        assert!(err.contains("always, madvise, never"), "{err}");
        let knob = Knob::check(&spec(&path, "always,never"), &roots).unwrap();
        assert_eq!(knob.original_value(), "never");
        knob.set(0).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "always\n");
        knob.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "never\n");
    }

    #[test]
    fn a_knob_goes_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let roots = [TunableRoot::stand_in(dir.path())];
        // Surrounding whitespace, a value shorter than the ones written,
        // several words: each comes back exactly as it was.
        for text in [
            "  short  \n",
            "short\n",
            "4096\t87380\t6291456\n",
            "no newline",
        ] {
            let path = knob_file(dir.path(), "knob", text);
            let knob = Knob::check(&spec(&path, "averyverylongvalue,x"), &roots).unwrap();
            knob.set(0).unwrap();
            knob.restore().unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{text:?}");
        }
    }

    #[test]
    fn missing_and_read_only_knobs_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let roots = [TunableRoot::stand_in(dir.path())];
        let missing = spec(&dir.path().join("nope"), "1,2");
        let err = Knob::check(&missing, &roots).unwrap_err();
        assert!(
            err.contains("cannot be read (No such file or directory)"),
            "{err}"
        );
        let path = knob_file(dir.path(), "ro", "5\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = Knob::check(&spec(&path, "1,2"), &roots).unwrap_err();
        assert!(err.contains("is read-only (mode 444)"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "5\n");
        let err = Knob::check(&spec(dir.path(), "1,2"), &roots).unwrap_err();
        assert!(err.contains("is not a file"), "{err}");
    }

    #[test]
    fn values_are_compared_as_the_kernel_reads_them() {
        assert_eq!(value_of("60\n"), "60");
        assert_eq!(value_of("always madvise [never]\n"), "never");
        assert_eq!(value_of("4096\t87380  6291456\n"), "4096 87380 6291456");
        // Brackets around the only word are not a list of choices.
        assert_eq!(value_of("[x]\n"), "[x]");
        assert_eq!(restore_text("  short  \n"), "  short  \n");
        assert_eq!(restore_text("always [madvise] never\n"), "madvise\n");
    }
}

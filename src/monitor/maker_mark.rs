//! The proof that a sledge process made a directory (or a database table),
//! which a later sledge needs before it removes what a killed one left.
//!
//! A name proves nothing: a user may call a directory
//! `sledge-results-2024-03`, and a pid in a name may have been reused. So
//! whatever sledge makes to remove later gets a mark as it is made: one
//! line naming the process that made it (boot id, pid and start time, as
//! [`ProcessIdentity`]), its pid namespace (a pid means nothing in another
//! one), a random token, and the name it was made under. A later sledge
//! removes it only when the mark is there, well-formed, names the very
//! thing it is in, and its maker is gone: another boot, no process with
//! that pid, or one that started at another time. Anything without such a
//! mark is never touched, whatever its name.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::procfs::ProcessIdentity;

/// The file holding the mark in a marked directory.
pub const MARK_FILE: &str = ".sledge-made";

/// The prefix of every marked directory's name, so that a user can find
/// (and remove) what a killed run left behind.
pub const MARKED_PREFIX: &str = "sledge-";

/// The first word of a mark, with the format's version.
const MAGIC: &str = "sledge-made/1";

/// A mark is one short line; a larger file is not one.
const MAX_MARK_BYTES: u64 = 1024;

/// How many names [`create_marked_dir`] tries when earlier ones are taken
/// (by a killed process that had the same pid).
const NAME_ATTEMPTS: u32 = 1000;

/// Distinguishes the marked directories of one process.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Who made a directory or table, and under which name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MakerMark {
    /// The process that made it.
    pub maker: ProcessIdentity,
    /// That process's pid namespace (`pid:[4026531836]`), or `unknown`.
    pub pid_namespace: String,
    /// 128 random bits in hex: no two marks are alike, so that the maker
    /// can tell its own mark from one put there by anyone else.
    pub token: String,
    /// The name of the directory or table it marks.
    pub name: String,
}

impl MakerMark {
    /// A new mark of this process for `name`; `None` without `/proc`
    /// (then nothing can be proven later, so nothing is marked).
    pub fn new(name: &str) -> Option<MakerMark> {
        Some(MakerMark {
            maker: ProcessIdentity::current()?,
            pid_namespace: own_pid_namespace(),
            token: uuid::Uuid::new_v4().simple().to_string(),
            name: name.to_string(),
        })
    }

    /// The mark as one line: `sledge-made/1 maker=BOOT:PID:START
    /// pidns=pid:[N] token=HEX name=NAME`.
    pub fn to_line(&self) -> String {
        format!(
            "{MAGIC} maker={} pidns={} token={} name={}",
            self.maker, self.pid_namespace, self.token, self.name
        )
    }

    /// Parses [`MakerMark::to_line`]'s form (a final newline allowed);
    /// `None` for anything else.
    pub fn parse(text: &str) -> Option<MakerMark> {
        let line = text.strip_suffix('\n').unwrap_or(text);
        let mut words = line.split(' ');
        if words.next()? != MAGIC {
            return None;
        }
        let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=');
        let maker = ProcessIdentity::parse(field("maker")?)?;
        let pid_namespace = field("pidns")?.to_string();
        let token = field("token")?.to_string();
        let name = field("name")?.to_string();
        let well_formed = token.len() == 32
            && token.bytes().all(|b| b.is_ascii_hexdigit())
            && !name.is_empty()
            && words.next().is_none();
        well_formed.then_some(MakerMark {
            maker,
            pid_namespace,
            token,
            name,
        })
    }

    /// Whether the process that made the marked thing is known to be gone.
    /// A maker in another pid namespace (a container sharing the
    /// directory) cannot be looked for from here, and one on a host
    /// without `/proc` cannot be judged: neither is gone.
    pub fn maker_gone(&self) -> bool {
        if self.pid_namespace != own_pid_namespace() || self.pid_namespace == UNKNOWN {
            return false;
        }
        self.maker.is_alive() == Some(false)
    }
}

/// What a pid namespace that cannot be read is recorded as.
const UNKNOWN: &str = "unknown";

/// This process's pid namespace, as `/proc/self/ns/pid` names it.
fn own_pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|target| target.to_str().map(str::to_string))
        .filter(|name| !name.contains(char::is_whitespace))
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// A directory this process made, with its mark in it, removed with its
/// contents by [`MarkedDir::remove`] or, failing that, on drop: the scratch
/// directories of workloads (`workloads::common::workdir::ScratchDir`) and
/// the dynamic page's SQLite file. Should the process be killed first, the
/// mark is what lets the next run remove it.
#[derive(Debug)]
pub struct MarkedDir {
    path: Option<PathBuf>,
    /// The token of the mark put in it.
    token: String,
}

impl MarkedDir {
    /// Creates `<parent>/sledge-<label>-<pid>-<n>` holding this process's
    /// mark (`label`'s characters other than letters, digits and `-`
    /// become `-`). A name already taken is skipped (a killed process with
    /// the same pid may have left it). If the mark cannot be written the
    /// directory is removed again: an unmarked one could never be cleaned
    /// up by a later sledge.
    pub fn create(parent: &Path, label: &str) -> anyhow::Result<MarkedDir> {
        let label: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let failed = |e: std::io::Error| {
            anyhow::anyhow!(
                "creating a scratch directory `{MARKED_PREFIX}{label}-...` in `{}`: {e}",
                parent.display()
            )
        };
        let mut attempts = 0;
        let (path, name) = loop {
            let name = format!(
                "{MARKED_PREFIX}{label}-{}-{}",
                std::process::id(),
                SERIAL.fetch_add(1, Ordering::Relaxed)
            );
            let path = parent.join(&name);
            match std::fs::create_dir(&path) {
                Ok(()) => break (path, name),
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists
                        && attempts < NAME_ATTEMPTS =>
                {
                    attempts += 1;
                }
                Err(e) => return Err(failed(e)),
            }
        };
        let written = MakerMark::new(&name)
            .ok_or_else(|| std::io::Error::other("this process's identity in /proc cannot be read"))
            .and_then(|mark| {
                let mut file = std::fs::File::create_new(path.join(MARK_FILE))?;
                file.write_all(format!("{}\n", mark.to_line()).as_bytes())?;
                Ok(mark)
            });
        match written {
            Ok(mark) => Ok(MarkedDir {
                path: Some(path),
                token: mark.token,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&path);
                Err(failed(e))
            }
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.path
            .as_deref()
            .expect("scratch directory used after removal")
    }

    /// Removes the directory and everything in it, once sure it is still
    /// the one this process made (its mark holds this process's token);
    /// idempotent.
    pub fn remove(&mut self) -> anyhow::Result<()> {
        let Some(path) = self.path.take() else {
            return Ok(());
        };
        match read_mark(&path) {
            Some(mark) if mark.token == self.token => {}
            _ if std::fs::symlink_metadata(&path).is_err() => return Ok(()),
            _ => anyhow::bail!(
                "not removing the scratch directory `{}`: it no longer holds the mark this process put in it",
                path.display()
            ),
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(anyhow::anyhow!(
                "removing the scratch directory `{}`: {e}",
                path.display()
            )),
        }
    }
}

impl Drop for MarkedDir {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// The mark in the directory `dir`, when there is a well-formed one that
/// names `dir` itself; `None` otherwise (no mark, a mark that is a link or
/// not a plain file, a mark copied from another directory).
pub fn read_mark(dir: &Path) -> Option<MakerMark> {
    let file = dir.join(MARK_FILE);
    let meta = std::fs::symlink_metadata(&file).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_MARK_BYTES {
        return None;
    }
    let mark = MakerMark::parse(&std::fs::read_to_string(&file).ok()?)?;
    (dir.file_name()?.to_str()? == mark.name).then_some(mark)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mark of a process that has ended: a child that exited and was
    /// reaped, so no process has its pid.
    fn gone_mark(name: &str) -> MakerMark {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let mut mark = MakerMark::new(name).unwrap();
        mark.maker.pid = pid;
        mark
    }

    #[test]
    fn a_mark_reads_back_as_written_and_nothing_else_reads_as_one() {
        let mark = MakerMark::new("sledge-fileio-1-0").unwrap();
        assert_eq!(MakerMark::parse(&mark.to_line()), Some(mark.clone()));
        assert_eq!(
            MakerMark::parse(&(mark.to_line() + "\n")),
            Some(mark.clone())
        );
        assert_ne!(MakerMark::new("x").unwrap().token, mark.token);
        let line = mark.to_line();
        for bad in [
            String::new(),
            "sledge-made/1".to_string(),
            line.replace("sledge-made/1", "sledge-made/2"),
            line.replace("token=", "token=x"),
            line.replace("name=sledge-fileio-1-0", "name="),
            format!("{line} extra=1"),
            line.replace(&format!(":{}:", mark.maker.pid), ":x:"),
        ] {
            assert_eq!(MakerMark::parse(&bad), None, "{bad}");
        }
    }

    #[test]
    fn only_a_gone_maker_in_this_pid_namespace_is_gone() {
        let mark = MakerMark::new("d").unwrap();
        assert!(!mark.maker_gone(), "this process is alive");
        let gone = gone_mark("d");
        assert!(gone.maker_gone());
        let rebooted = MakerMark {
            maker: ProcessIdentity {
                boot_id: "another-boot".into(),
                ..mark.maker.clone()
            },
            ..mark.clone()
        };
        assert!(rebooted.maker_gone());
        let restarted = MakerMark {
            maker: ProcessIdentity {
                starttime: mark.maker.starttime + 1,
                ..mark.maker.clone()
            },
            ..mark.clone()
        };
        assert!(restarted.maker_gone(), "the pid was taken over later");
        let elsewhere = MakerMark {
            pid_namespace: "pid:[1]".into(),
            ..gone.clone()
        };
        assert!(!elsewhere.maker_gone(), "another namespace's pid");
    }

    #[test]
    fn a_marked_directory_carries_a_mark_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dir = MarkedDir::create(tmp.path(), "build.c").unwrap();
        let path = dir.path().to_path_buf();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with(&format!("sledge-build-c-{}-", std::process::id())),
            "{name}"
        );
        let mark = read_mark(&path).expect("a mark");
        assert_eq!(mark.name, name);
        assert!(!mark.maker_gone());
        // A taken name is skipped, not an error.
        let taken = tmp.path().join(format!(
            "sledge-disk-{}-{}",
            std::process::id(),
            SERIAL.load(Ordering::Relaxed)
        ));
        std::fs::create_dir(&taken).unwrap();
        let second = MarkedDir::create(tmp.path(), "disk").unwrap();
        assert_ne!(second.path(), taken);
        // The same mark copied into another directory does not count there.
        let copy = tmp.path().join("sledge-fileio-1-0");
        std::fs::create_dir(&copy).unwrap();
        std::fs::copy(path.join(MARK_FILE), copy.join(MARK_FILE)).unwrap();
        assert_eq!(read_mark(&copy), None);
        // Nor does a link to a mark.
        let linked = tmp.path().join("sledge-linked-1-0");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(path.join(MARK_FILE), linked.join(MARK_FILE)).unwrap();
        assert_eq!(read_mark(&linked), None);
        dir.remove().unwrap();
        assert!(!path.exists());
        dir.remove().unwrap();
    }

    #[test]
    fn a_directory_whose_mark_was_replaced_is_not_removed_by_its_maker() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dir = MarkedDir::create(tmp.path(), "fileio").unwrap();
        let path = dir.path().to_path_buf();
        let name = path.file_name().unwrap().to_str().unwrap();
        let other = MakerMark::new(name).unwrap();
        std::fs::write(path.join(MARK_FILE), other.to_line()).unwrap();
        let err = dir.remove().unwrap_err();
        assert!(
            err.to_string().contains("no longer holds the mark"),
            "{err}"
        );
        assert!(path.exists());
    }
}

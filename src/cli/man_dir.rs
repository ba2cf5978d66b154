//! Writing the manual pages into a directory (`sledge man --dir DIR`)
//! without ever harming what is there.
//!
//! DIR is often a system directory (`/usr/local/share/man/man1`) shared
//! with other software, and sometimes one that others can write to. So
//! before the first page is written, every page's name in DIR is looked
//! at, and the request is refused, naming every offending file, when one
//! of them is:
//! - a symbolic link: it is neither followed (that would write wherever
//!   it points) nor replaced (it is someone's deliberate link);
//! - a directory, a pipe, a device, a socket: not a page;
//! - a regular file that is not a page sledge wrote, unless `--force`.
//!
//! A page sledge wrote is recognised by its content: its `.TH` line names
//! the page (`.TH sledge-run 1`) and its source is `"sledge VERSION"`,
//! which every page `sledge man` renders has ([`is_sledge_page`]). Such a
//! page is replaced; one with the very bytes about to be written is left
//! as it is.
//!
//! Each page is then written whole or not at all: into a temporary file
//! in DIR (created with `O_EXCL`, so never through a link), synced, and
//! renamed over the page's name, which replaces the name itself and never
//! writes through a link. The name is looked at again just before the
//! rename, so a link or directory that appeared since the check stops the
//! write instead of being replaced.
//!
//! DIR itself may be a symbolic link to a directory: the user named it
//! on the command line (as `cd DIR` would follow it), and system manual
//! directories are often links. It is resolved once, before the checks,
//! so the checks and the writes are about the same directory even if the
//! link changes meanwhile, and the summary says where it led.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::output::UsageError;
use super::output_file::{keep_mode, temp_file_in};

/// One rendered manual page.
pub struct Page {
    /// The file name: `sledge.1`, `sledge-run.1`.
    pub file_name: String,
    /// The page in roff, as `man` reads it.
    pub roff: String,
}

/// The most of an existing file read to tell whether it is a page sledge
/// wrote: sledge's largest page is a few tens of KiB; a larger file is
/// not one of them, and need not be read whole to say so.
const MAX_PAGE_BYTES: u64 = 1 << 20;

/// What was at a page's name in DIR before anything was written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    /// Nothing: the page is new.
    Nothing,
    /// The very page about to be written, byte for byte.
    SamePage,
    /// A page sledge wrote, with other content (another version).
    SledgePage,
    /// A regular file that is not a page sledge wrote, or cannot be read
    /// to tell (the reason).
    Foreign(Option<String>),
    /// A symbolic link, and where it points.
    Link(PathBuf),
    /// A directory, a pipe, a device or a socket (which).
    NotRegular(&'static str),
}

/// What happened to one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Written where there was nothing.
    New,
    /// Written over a page sledge wrote that differed.
    Replaced,
    /// Written over a file that is not sledge's, as `--force` asked.
    Forced,
    /// Left as it was: the same bytes were already there.
    Unchanged,
}

/// What `write_pages` did: each page's name and outcome, in the order
/// given, and the directory they are in.
#[derive(Debug)]
pub struct Written {
    /// DIR as given on the command line.
    pub dir: PathBuf,
    /// Where DIR led once its links were followed.
    pub resolved: PathBuf,
    /// Each page's file name and what happened to it.
    pub pages: Vec<(String, Outcome)>,
}

/// Writes `pages` into `dir` as the module's doc says: refused (a
/// [`UsageError`], nothing written) when `dir` is not a directory or a
/// page's name is taken by a link, a non-regular file, or (without
/// `force`) a file that is not a sledge page; an I/O failure midway names
/// the pages written before it.
pub fn write_pages(dir: &Path, pages: &[Page], force: bool) -> anyhow::Result<Written> {
    let resolved = resolve_dir(dir)?;
    let mut found = Vec::with_capacity(pages.len());
    for page in pages {
        let path = resolved.join(&page.file_name);
        let what = inspect(&path, page)
            .with_context(|| format!("cannot examine {} (nothing was written)", path.display()))?;
        found.push(what);
    }
    let outcomes = plan(dir, pages, &found, force)?;

    // Fails only if a handler is already set (then that one decides):
    // Ctrl-C waits until every page is written, so that none is left
    // as a stray temporary file.
    let _ = crate::suite::interrupt::try_install(vec![Box::new(|| {})]);
    let mut done = Vec::with_capacity(pages.len());
    for ((page, found), outcome) in pages.iter().zip(&found).zip(outcomes) {
        if outcome != Outcome::Unchanged
            && let Err(err) = replace_page(&resolved, page, found)
        {
            return Err(err.context(written_before_failure(&resolved, &done, pages.len())));
        }
        done.push((page.file_name.clone(), outcome));
    }
    // The renames themselves are made durable by syncing the directory.
    if done
        .iter()
        .any(|(_, outcome)| *outcome != Outcome::Unchanged)
    {
        std::fs::File::open(&resolved)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("cannot sync {}", resolved.display()))?;
    }
    Ok(Written {
        dir: dir.to_path_buf(),
        resolved,
        pages: done,
    })
}

/// `dir` with its links followed, once: a usage error when it is not an
/// existing directory.
fn resolve_dir(dir: &Path) -> Result<PathBuf, UsageError> {
    let not_a_dir = || {
        UsageError(format!(
            "--dir {}: not an existing directory; give an existing directory for the manual pages (nothing was written)",
            dir.display()
        ))
    };
    let resolved = match std::fs::canonicalize(dir) {
        Ok(resolved) => resolved,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(not_a_dir()),
        Err(err) => {
            return Err(UsageError(format!(
                "--dir {}: cannot be reached ({err}); give a directory you can write to (nothing was written)",
                dir.display()
            )));
        }
    };
    if !resolved.is_dir() {
        return Err(not_a_dir());
    }
    Ok(resolved)
}

/// What is at `path`, never following a link there.
fn inspect(path: &Path, page: &Page) -> std::io::Result<Found> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(err) => return Err(err),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Ok(Found::Link(std::fs::read_link(path)?));
    }
    if !kind.is_file() {
        return Ok(Found::NotRegular(non_regular_kind(&kind)));
    }
    if meta.len() > MAX_PAGE_BYTES {
        return Ok(Found::Foreign(None));
    }
    // O_NOFOLLOW: were the name made a link since it was looked at, the
    // open fails rather than read what the link points to; O_NONBLOCK:
    // were it made a pipe, the open does not wait for a writer.
    let content = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|file| {
            let mut content = Vec::new();
            file.take(MAX_PAGE_BYTES + 1).read_to_end(&mut content)?;
            Ok(content)
        });
    let content = match content {
        Ok(content) => content,
        Err(err) => return Ok(Found::Foreign(Some(format!("cannot be read: {err}")))),
    };
    Ok(if content == page.roff.as_bytes() {
        Found::SamePage
    } else if std::str::from_utf8(&content).is_ok_and(|text| is_sledge_page(text, page)) {
        Found::SledgePage
    } else {
        Found::Foreign(None)
    })
}

/// Whether `text` is a manual page sledge wrote for `page`'s name: its
/// first `.TH` line names the page (the file name without `.1`) in
/// section 1, and its source (the footer `man` shows) is `sledge
/// VERSION`, as `sledge man` renders every page, whatever its version.
pub fn is_sledge_page(text: &str, page: &Page) -> bool {
    let Some(title) = page.file_name.strip_suffix(".1") else {
        return false;
    };
    let Some(th) = text.lines().find(|line| line.starts_with(".TH ")) else {
        return false;
    };
    let Some(rest) = th.strip_prefix(&format!(".TH {title} 1 ")) else {
        return false;
    };
    // The source is the one quoted argument that starts with `sledge `
    // followed by a version (`0.1.0`, `1.2.0-rc.1`).
    rest.split('"').skip(1).step_by(2).any(|arg| {
        arg.strip_prefix("sledge ").is_some_and(|version| {
            version.starts_with(|c: char| c.is_ascii_digit())
                && version
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".+-".contains(c))
        })
    })
}

/// What a non-regular file is, in words.
fn non_regular_kind(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}

/// What will happen to each page, given what is at its name; or the
/// usage error for every page name that is taken by something sledge
/// will not replace, each named with what to do.
fn plan(
    dir: &Path,
    pages: &[Page],
    found: &[Found],
    force: bool,
) -> Result<Vec<Outcome>, UsageError> {
    let mut outcomes = Vec::with_capacity(pages.len());
    let mut refusals = Vec::new();
    for (page, found) in pages.iter().zip(found) {
        let path = dir.join(&page.file_name);
        let refusal = match found {
            Found::Nothing => {
                outcomes.push(Outcome::New);
                continue;
            }
            Found::SamePage => {
                outcomes.push(Outcome::Unchanged);
                continue;
            }
            Found::SledgePage => {
                outcomes.push(Outcome::Replaced);
                continue;
            }
            Found::Foreign(_) if force => {
                outcomes.push(Outcome::Forced);
                continue;
            }
            Found::Link(target) => format!(
                "{} is a symbolic link (to {}): sledge neither writes through nor replaces a link; remove it, or give another directory",
                path.display(),
                target.display()
            ),
            Found::NotRegular(kind) => format!(
                "{} is {kind}, not a manual page: move it away, or give another directory",
                path.display()
            ),
            Found::Foreign(why) => format!(
                "{} is not a manual page sledge wrote{}: --force replaces it, or give another directory",
                path.display(),
                why.as_ref()
                    .map(|why| format!(" ({why})"))
                    .unwrap_or_default()
            ),
        };
        refusals.push(refusal);
    }
    if refusals.is_empty() {
        return Ok(outcomes);
    }
    Err(UsageError(format!(
        "--dir {}: {} of the {} page names {} taken (nothing was written):\n  {}",
        dir.display(),
        refusals.len(),
        pages.len(),
        if refusals.len() == 1 { "is" } else { "are" },
        refusals.join("\n  ")
    )))
}

/// Writes `page` into `dir` through a temporary file renamed over its
/// name, after checking that the name still holds what `found` says.
fn replace_page(dir: &Path, page: &Page, found: &Found) -> anyhow::Result<()> {
    let path = dir.join(&page.file_name);
    let mut temp = temp_file_in(dir)?;
    temp.write_all(page.roff.as_bytes())
        .and_then(|()| keep_mode(&temp, std::fs::symlink_metadata(&path).ok()))
        .and_then(|()| temp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    let now = inspect(&path, page).with_context(|| format!("cannot examine {}", path.display()))?;
    let still = match (found, &now) {
        (Found::Nothing, Found::Nothing) => true,
        (Found::SledgePage | Found::Foreign(_), now) => {
            matches!(now, Found::SledgePage | Found::SamePage | Found::Foreign(_))
        }
        _ => false,
    };
    if !still {
        anyhow::bail!(
            "{} changed while the pages were written (now {}): not replaced",
            path.display(),
            match now {
                Found::Link(_) => "a symbolic link",
                Found::NotRegular(kind) => kind,
                Found::Nothing => "gone",
                _ => "a file",
            }
        );
    }
    // The temporary file is removed when `persist`'s error drops it.
    temp.persist(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// What a failure midway says: which pages were written before it.
fn written_before_failure(dir: &Path, done: &[(String, Outcome)], total: usize) -> String {
    let written: Vec<&str> = done
        .iter()
        .filter(|(_, outcome)| *outcome != Outcome::Unchanged)
        .map(|(name, _)| name.as_str())
        .collect();
    if written.is_empty() {
        format!(
            "writing the manual pages into {} failed before any was written",
            dir.display()
        )
    } else {
        format!(
            "writing the manual pages into {} failed after {} of {} {} written ({}); the others were not",
            dir.display(),
            written.len(),
            total,
            if written.len() == 1 { "was" } else { "were" },
            written.join(", ")
        )
    }
}

impl Written {
    /// What was written, for stderr: the count and the directory, then
    /// the pages that were new, replaced and unchanged, by name (or `all
    /// N` when every page is in one group).
    pub fn summary(&self) -> String {
        let total = self.pages.len();
        let written = self
            .pages
            .iter()
            .filter(|(_, outcome)| *outcome != Outcome::Unchanged)
            .count();
        let place = if self.resolved == self.dir {
            self.dir.display().to_string()
        } else {
            format!(
                "{} (which leads to {})",
                self.dir.display(),
                self.resolved.display()
            )
        };
        let mut text = format!(
            "wrote {written} of {total} manual {} to {place}",
            if total == 1 { "page" } else { "pages" }
        );
        for (outcome, label) in [
            (Outcome::New, "new"),
            (
                Outcome::Replaced,
                "replaced (pages sledge wrote that differed)",
            ),
            (
                Outcome::Forced,
                "replaced with --force (not sledge's pages)",
            ),
            (Outcome::Unchanged, "unchanged (the same page was there)"),
        ] {
            let names: Vec<&str> = self
                .pages
                .iter()
                .filter(|(_, o)| *o == outcome)
                .map(|(name, _)| name.as_str())
                .collect();
            if names.is_empty() {
                continue;
            }
            let listed = if names.len() == total && total > 1 {
                format!("all {total}")
            } else {
                names.join(", ")
            };
            text.push_str(&format!("\n  {label}: {listed}"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(file_name: &str, version: &str) -> Page {
        let title = file_name.trim_end_matches(".1");
        Page {
            file_name: file_name.to_owned(),
            roff: format!(
                ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH {title} 1  \"{title} \" \"sledge {version}\"\n.SH NAME\n{title}\n"
            ),
        }
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_sledge_page_is_told_by_its_title_and_source() {
        let run = page("sledge-run.1", "0.1.0");
        assert!(is_sledge_page(&page("sledge-run.1", "0.0.9").roff, &run));
        assert!(is_sledge_page(
            &page("sledge-run.1", "1.2.0-rc.1").roff,
            &run
        ));
        for foreign in [
            // Another page's title, or another section.
            page("sledge-show.1", "0.1.0").roff,
            page("sledge-run.1", "0.1.0").roff.replace(" 1  ", " 8  "),
            // Another program's page of the same name.
            ".TH sledge-run 1 \"2024\" \"sledgehammer 2.0\"\n".to_owned(),
            ".TH sledge-run 1 \"2024\" \"sledge\"\n".to_owned(),
            "a text file\n".to_owned(),
            String::new(),
        ] {
            assert!(!is_sledge_page(&foreign, &run), "{foreign}");
        }
    }

    #[test]
    fn a_failure_midway_names_the_pages_written_before_it_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let pages = [
            page("sledge.1", "0.1.0"),
            page("sledge-run.1", "0.1.0"),
            page("sledge-show.1", "0.1.0"),
        ];
        let found = [Found::Nothing, Found::Nothing, Found::Nothing];
        replace_page(dir.path(), &pages[0], &found[0]).unwrap();
        // A directory appears at the second page's name after the check.
        std::fs::create_dir(dir.path().join("sledge-run.1")).unwrap();
        let err = replace_page(dir.path(), &pages[1], &found[1]).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "{} changed while the pages were written (now a directory): not replaced",
                dir.path().join("sledge-run.1").display()
            )),
            "{err}"
        );
        assert_eq!(names_in(dir.path()), ["sledge-run.1", "sledge.1"]);
        let said = written_before_failure(dir.path(), &[("sledge.1".into(), Outcome::New)], 3);
        assert!(
            said.ends_with("failed after 1 of 3 was written (sledge.1); the others were not"),
            "{said}"
        );
        // A link that appears is not replaced either.
        std::os::unix::fs::symlink("elsewhere", dir.path().join("sledge-show.1")).unwrap();
        let err = replace_page(dir.path(), &pages[2], &found[2]).unwrap_err();
        assert!(err.to_string().contains("(now a symbolic link)"), "{err}");
        assert_eq!(
            std::fs::read_link(dir.path().join("sledge-show.1")).unwrap(),
            Path::new("elsewhere")
        );
        assert_eq!(
            names_in(dir.path()),
            ["sledge-run.1", "sledge-show.1", "sledge.1"]
        );
    }

    #[test]
    fn the_summary_names_each_group_of_pages() {
        let written = Written {
            dir: PathBuf::from("/m/man1"),
            resolved: PathBuf::from("/real/man1"),
            pages: vec![
                ("sledge.1".into(), Outcome::Replaced),
                ("sledge-run.1".into(), Outcome::New),
                ("sledge-show.1".into(), Outcome::Forced),
                ("sledge-list.1".into(), Outcome::Unchanged),
                ("sledge-plan.1".into(), Outcome::Unchanged),
            ],
        };
        assert_eq!(
            written.summary(),
            "wrote 3 of 5 manual pages to /m/man1 (which leads to /real/man1)\n  \
             new: sledge-run.1\n  \
             replaced (pages sledge wrote that differed): sledge.1\n  \
             replaced with --force (not sledge's pages): sledge-show.1\n  \
             unchanged (the same page was there): sledge-list.1, sledge-plan.1"
        );
        let all_new = Written {
            dir: PathBuf::from("/m"),
            resolved: PathBuf::from("/m"),
            pages: vec![("a.1".into(), Outcome::New), ("b.1".into(), Outcome::New)],
        };
        assert_eq!(
            all_new.summary(),
            "wrote 2 of 2 manual pages to /m\n  new: all 2"
        );
    }
}

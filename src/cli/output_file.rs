//! Writing a command's output to a file (`export -o`, `report -o`) without
//! ever destroying what is there first.
//!
//! Two ways an output file could cost the user data: naming the store
//! itself (`export 1 -o results.db`, or a link to it), which would replace
//! every stored run with one document; and a write that fails halfway,
//! which would leave a truncated file where a good one was. So an output
//! that is the store, or one of SQLite's files beside it, is refused before
//! anything is written, and a regular file is written into a temporary
//! file in its directory and renamed over it once complete, never
//! truncated in place, with the permission bits it had (a private file
//! stays private). A disk (a block device) is refused: nothing sledge
//! prints belongs on one.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::output::UsageError;
use crate::store::StoreLocation;

/// The files SQLite keeps beside a store, by the suffix of their name: a
/// file written there would be taken for the store's journal or log (and
/// roll the store back or damage it) the next time it is opened.
const SIDE_FILES: [(&str, &str); 3] = [
    ("-journal", "its rollback journal"),
    ("-wal", "its write-ahead log"),
    ("-shm", "its shared-memory index"),
];

/// How many symbolic links are followed before giving up, as the kernel's
/// own limit (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Refuses an output file that is the store at `store`, or one of SQLite's
/// files beside it: the same path once links are followed, or the same file
/// (device and inode: a hard link, a bind mount). The error names both
/// paths; nothing is written. A PostgreSQL store has no file to protect.
pub fn refuse_store_as_output(output: &Path, store: &StoreLocation) -> Result<(), UsageError> {
    let StoreLocation::File(store_path) = store else {
        return Ok(());
    };
    let output_target = final_target(output);
    let output_file = std::fs::metadata(output).ok().map(|m| (m.dev(), m.ino()));
    let store_target = final_target(store_path);
    let candidates = std::iter::once((store_target.clone(), "the store")).chain(
        SIDE_FILES.iter().map(|(suffix, what)| {
            let mut name = store_target.clone().into_os_string();
            name.push(suffix);
            (PathBuf::from(name), *what)
        }),
    );
    for (candidate, what) in candidates {
        let same_file = output_file.is_some()
            && std::fs::metadata(&candidate)
                .ok()
                .map(|m| (m.dev(), m.ino()))
                == output_file;
        if same_file || candidate == output_target {
            let which = if what == "the store" {
                String::new()
            } else {
                format!(" ({what}, {})", candidate.display())
            };
            return Err(UsageError(format!(
                "the output file {} is the store {}{which}: writing there would destroy the stored runs; give another file name (nothing was written)",
                output.display(),
                store_path.display()
            )));
        }
    }
    Ok(())
}

/// The path `path` finally names: symbolic links followed (also a dangling
/// one, to the file it would create), its directory made canonical. A
/// path whose directory cannot be resolved is returned as given.
fn final_target(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        current = match current.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
    }
    let dir = match current.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), current.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => current,
    }
}

/// Writes `text` to `path` whole or not at all: into a temporary file
/// beside the file `path` finally names (a symbolic link is followed and
/// kept), renamed over it once complete, so a failed write leaves neither
/// a half-written file nor the temporary one, and the old file is never
/// truncated first; the new file keeps the permission bits of the one it
/// replaces. A character device or a pipe is written to as it is, never
/// replaced nor truncated; a block device is refused. Ctrl-C (or SIGTERM) is held off from here to the
/// end of the command, which is only this write: killed between creating
/// and renaming the temporary file, the process would leave it behind.
pub fn write_file_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    // Fails only if a handler is already set (then that one decides).
    let _ = crate::suite::interrupt::try_install(vec![Box::new(|| {})]);
    if path.is_dir() {
        anyhow::bail!(
            "{} is a directory; give a file name for the output",
            path.display()
        );
    }
    let target = final_target(path);
    // A device or a pipe is written through, never replaced: renaming
    // over `/dev/null` would put a plain file in its place. A disk is
    // not: a report written over its first bytes would destroy its file
    // system, and no output of sledge belongs there.
    if let Ok(meta) = std::fs::metadata(&target)
        && !meta.file_type().is_file()
    {
        if meta.file_type().is_block_device() {
            return Err(UsageError(format!(
                "the output file {} is a block device (a disk): writing there would overwrite its data; give a file name (nothing was written)",
                path.display()
            ))
            .into());
        }
        return std::fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()));
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut temp = temp_file_in(dir)?;
    temp.write_all(text.as_bytes())
        .and_then(|()| keep_mode(&temp, std::fs::metadata(&target).ok()))
        .and_then(|()| temp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(&target)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// A new temporary file in `dir`, to be renamed over a file there once it
/// is complete: hidden (`.sledge-` and random letters), created with
/// `O_EXCL` (so never through a link an attacker put in its place), and
/// removed when dropped unless it was renamed.
pub fn temp_file_in(dir: &Path) -> anyhow::Result<tempfile::NamedTempFile> {
    // 0666 before the umask, as for any new file (tempfile's default is
    // 0600, too strict for a report or a manual page meant to be read by
    // others).
    tempfile::Builder::new()
        .prefix(".sledge-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| {
            // tempfile ends its message with ` at path "..."`, the
            // temporary name it tried, which the user never gave and can
            // do nothing with: the system's error before it is enough.
            let text = e.to_string();
            let why = text.split(" at path \"").next().unwrap_or(&text);
            anyhow::anyhow!("cannot create a file in {}: {why}", dir.display())
        })
}

/// Gives `temp` the permission bits of the file it is about to replace
/// (`old`, if there is one): a file the user made private (`chmod 600`
/// on an export that names their hosts) must not come back readable by
/// everyone because it was written anew.
pub fn keep_mode(
    temp: &tempfile::NamedTempFile,
    old: Option<std::fs::Metadata>,
) -> std::io::Result<()> {
    match old {
        Some(old) if old.file_type().is_file() => temp.as_file().set_permissions(old.permissions()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        write_file_atomically(&path, "new text").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new text");
        assert_eq!(names_in(dir.path()), ["out.json"]);
        let err = write_file_atomically(dir.path(), "x").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        // A directory that is not there is named with the system's error,
        // not with the temporary name tried in it.
        let missing = dir.path().join("nope");
        let err = write_file_atomically(&missing.join("out.json"), "x").unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "cannot create a file in {}: No such file or directory (os error 2)",
                missing.display()
            )
        );
    }

    #[test]
    fn a_replaced_file_keeps_its_permission_bits() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode_of = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private.json");
        std::fs::write(&private, "old").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_file_atomically(&private, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&private).unwrap(), "new");
        assert_eq!(mode_of(&private), 0o600);
        let shared = dir.path().join("shared.html");
        std::fs::write(&shared, "old").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_file_atomically(&shared, "new").unwrap();
        assert_eq!(mode_of(&shared), 0o664);
    }

    #[test]
    fn a_block_device_is_refused_and_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir.path().join("disk");
        let c_path = std::ffi::CString::new(disk.as_os_str().as_encoded_bytes()).unwrap();
        // Device 0:0 has no driver: were the refusal missing, opening it
        // would fail rather than write anywhere.
        // SAFETY: mknod with a valid NUL-terminated path.
        if unsafe { libc::mknod(c_path.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(0, 0)) } != 0
        {
            crate::say!(
                "skipped: cannot make a block device node here ({}); needs root",
                std::io::Error::last_os_error()
            );
            return;
        }
        let err = write_file_atomically(&disk, "report").unwrap_err();
        assert!(err.is::<UsageError>(), "{err}");
        assert!(
            err.to_string().contains(&format!(
                "the output file {} is a block device (a disk)",
                disk.display()
            )),
            "{err}"
        );
        // Through a link to it as well.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("disk", &link).unwrap();
        assert!(
            write_file_atomically(&link, "report")
                .unwrap_err()
                .is::<UsageError>()
        );
    }

    #[test]
    fn a_link_is_kept_and_its_target_replaced_not_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.html");
        std::fs::write(&target, "old").unwrap();
        // Held open: a file truncated in place would read empty here.
        let old = std::fs::File::open(&target).unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink("target.html", &link).unwrap();
        write_file_atomically(&link, "through the link").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "through the link"
        );
        assert_eq!(std::io::read_to_string(old).unwrap(), "old");
        assert_eq!(names_in(dir.path()), ["link.html", "target.html"]);
        // A dangling link: the file it names is created.
        let dangling = dir.path().join("dangling.html");
        std::os::unix::fs::symlink("new.html", &dangling).unwrap();
        write_file_atomically(&dangling, "made").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new.html")).unwrap(),
            "made"
        );
    }

    #[test]
    fn pipes_are_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file_atomically(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        use std::os::unix::fs::FileTypeExt as _;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn the_store_and_its_side_files_are_refused_as_output_by_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let store_path = dir.path().join("r.db");
        std::fs::write(&store_path, "stored runs").unwrap();
        let store = StoreLocation::File(store_path.clone());
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink("r.db", &link).unwrap();
        let hard = dir.path().join("hard.db");
        std::fs::hard_link(&store_path, &hard).unwrap();
        let to_wal = dir.path().join("to-wal");
        std::os::unix::fs::symlink("r.db-wal", &to_wal).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        for refused in [
            store_path.clone(),
            dir.path().join("./r.db"),
            sub.join("../r.db"),
            link,
            hard,
            dir.path().join("r.db-journal"),
            dir.path().join("r.db-shm"),
            to_wal,
        ] {
            let err = refuse_store_as_output(&refused, &store).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&format!("the output file {}", refused.display()))
                    && text.contains(&format!("is the store {}", store_path.display()))
                    && text.contains("nothing was written"),
                "{text}"
            );
        }
        let err = refuse_store_as_output(&dir.path().join("r.db-wal"), &store).unwrap_err();
        assert!(err.to_string().contains("write-ahead log"), "{err}");
        // Through a link to the store, the store's side files are the
        // linked file's.
        let via_link = StoreLocation::File(dir.path().join("link.db"));
        assert!(refuse_store_as_output(&dir.path().join("r.db-journal"), &via_link).is_err());
        for allowed in ["r.json", "r.db.json", "r.db-journal.bak", "sub/r.db"] {
            refuse_store_as_output(&dir.path().join(allowed), &store).unwrap();
        }
        refuse_store_as_output(
            &store_path,
            &StoreLocation::Postgres("postgres://h/d".into()),
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&store_path).unwrap(), "stored runs");
    }
}

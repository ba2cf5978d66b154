//! What a store's schema version means to this build, decided in one
//! place for both databases and every way of opening a store: opening to
//! write, opening read-only, and the migrations themselves (which read the
//! version again under their lock).
//!
//! A newer version is refused, since this build cannot know what a later
//! step changed; a negative one is damage, since sledge never writes one;
//! an older one is upgraded by a command that writes, and read through a
//! copy (SQLite) or refused (PostgreSQL) by one that only reads: that
//! choice is the caller's, so it gets [`Version::Older`] back.

use std::path::Path;

use super::error::StoreError;
use super::migrations::SCHEMA_VERSION;

/// A schema version this build can read, at once or after an upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// [`SCHEMA_VERSION`]: nothing to upgrade.
    Current,
    /// Made by an older sledge (0: a new, empty store); the steps from
    /// this version on are missing.
    Older(i64),
}

/// Judges `found`, the schema version of the store at `path` (for a
/// PostgreSQL store its masked URL), read from `kept_in`
/// (`user_version` on SQLite, `sledge_meta` on PostgreSQL), which the
/// message about a negative version names.
pub(crate) fn check_version(
    path: &Path,
    found: i64,
    kept_in: &'static str,
) -> Result<Version, StoreError> {
    if found < 0 {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            what: format!("schema version {found} ({kept_in}) is negative"),
        });
    }
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(if found == SCHEMA_VERSION {
        Version::Current
    } else {
        Version::Older(found)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_is_current_older_too_new_or_negative() {
        let path = Path::new("results.db");
        assert_eq!(
            check_version(path, SCHEMA_VERSION, "user_version").unwrap(),
            Version::Current
        );
        assert_eq!(
            check_version(path, 0, "user_version").unwrap(),
            Version::Older(0)
        );
        let newer = check_version(path, SCHEMA_VERSION + 1, "user_version").unwrap_err();
        assert!(
            matches!(newer, StoreError::TooNew { found, supported, .. }
                if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "{newer:?}"
        );
        let negative = check_version(path, -3, "sledge_meta").unwrap_err();
        assert!(
            matches!(&negative, StoreError::Corrupt { what, .. }
                if what == "schema version -3 (sledge_meta) is negative"),
            "{negative:?}"
        );
    }
}

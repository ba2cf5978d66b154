//! Where a store lives: an SQLite file, or a PostgreSQL database named by
//! a `postgres://` or `postgresql://` URL (`--store`, `SLEDGE_STORE`).
//!
//! A URL may hold a password. The location keeps it to connect with, and
//! shows itself only masked ([`StoreLocation::shown`], `Debug`), so that a
//! message, a log or a stored run never carries it.

use std::path::{Path, PathBuf};

/// A store's place, as the user named it.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL database: the URL as given, password included.
    Postgres(String),
}

impl StoreLocation {
    /// A PostgreSQL store when `arg` starts with `postgres://` or
    /// `postgresql://` (in any case), else a file.
    pub fn from_arg(arg: &Path) -> StoreLocation {
        if let Some(text) = arg.to_str() {
            let lower = text.to_ascii_lowercase();
            if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
                return StoreLocation::Postgres(text.to_string());
            }
        }
        StoreLocation::File(arg.to_path_buf())
    }

    /// What messages call the store: the file's path, or the URL with its
    /// password masked.
    pub fn shown(&self) -> PathBuf {
        match self {
            StoreLocation::File(path) => path.clone(),
            StoreLocation::Postgres(url) => PathBuf::from(crate::secrets::redact(url)),
        }
    }

    /// Whether the store is a PostgreSQL database (a server that can be
    /// lost in the middle of a run, unlike a local file).
    pub fn is_remote(&self) -> bool {
        matches!(self, StoreLocation::Postgres(_))
    }
}

impl std::fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::File(path) => f.debug_tuple("File").field(path).finish(),
            StoreLocation::Postgres(_) => f
                .debug_tuple("Postgres")
                .field(&self.shown().display().to_string())
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_picks_postgres_and_anything_else_a_file() {
        for url in [
            "postgres://u@h/db",
            "postgresql://u@h/db",
            "POSTGRES://u@h/db",
        ] {
            assert!(StoreLocation::from_arg(Path::new(url)).is_remote(), "{url}");
        }
        for path in ["results.db", "/tmp/postgres/r.db", "./postgres:/x", ""] {
            assert_eq!(
                StoreLocation::from_arg(Path::new(path)),
                StoreLocation::File(PathBuf::from(path))
            );
        }
    }

    #[test]
    fn the_password_is_kept_but_never_shown() {
        let loc = StoreLocation::from_arg(Path::new("postgres://bob:s3cret@db1:5432/bench"));
        assert_eq!(
            loc,
            StoreLocation::Postgres("postgres://bob:s3cret@db1:5432/bench".into())
        );
        assert_eq!(
            loc.shown(),
            PathBuf::from("postgres://bob:***@db1:5432/bench")
        );
        let debug = format!("{loc:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
        let query = StoreLocation::from_arg(Path::new("postgres://db1/b?password=s3cret"));
        assert!(!query.shown().display().to_string().contains("s3cret"));
    }
}

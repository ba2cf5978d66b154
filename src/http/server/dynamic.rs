//! The dynamic page: per request, connect to a database, read one row
//! holding a 100 B string, send it, disconnect, as the reference article's
//! PHP + MySQL page did. The connection set-up is the point: it is what
//! such a page costs a server.
//!
//! The database is an embedded SQLite file, created when the server starts
//! and removed when it stops; PostgreSQL and MariaDB are not built in yet
//! (see `Database::from_param`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags};

/// Length of the string the page reads, as in the reference article.
pub const ROW_BYTES: usize = 100;

/// The database behind the dynamic page.
#[derive(Debug)]
pub struct Database {
    path: PathBuf,
}

/// The text of the one row: 100 printable bytes.
pub fn row_text() -> String {
    (0..ROW_BYTES)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

impl Database {
    /// Checks a `db` parameter: `sqlite` (the default) or a server URL.
    pub fn check_param(db: &str) -> anyhow::Result<()> {
        if db == "sqlite" {
            return Ok(());
        }
        if db.starts_with("postgres://")
            || db.starts_with("postgresql://")
            || db.starts_with("mysql://")
        {
            bail!(
                "db={db}: PostgreSQL and MariaDB/MySQL back-ends are not built into this version; use db=sqlite"
            );
        }
        bail!("db={db}: expected `sqlite`, `postgres://...` or `mysql://...`")
    }

    /// Creates a fresh SQLite file with the one row, in the temporary
    /// directory.
    pub fn create_sqlite() -> anyhow::Result<Database> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "sledge-http-{}-{}.db",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path)
            .with_context(|| format!("creating the page database {}", path.display()))?;
        conn.execute_batch("CREATE TABLE page (id INTEGER PRIMARY KEY, body TEXT NOT NULL);")
            .and_then(|_| conn.execute("INSERT INTO page (id, body) VALUES (1, ?1)", [row_text()]))
            .with_context(|| format!("filling the page database {}", path.display()))?;
        Ok(Database { path })
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One page: connect, read the row, disconnect.
    pub fn fetch_row(&self) -> anyhow::Result<String> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("opening {}", self.path.display()))?;
        let body = conn
            .query_row("SELECT body FROM page WHERE id = 1", [], |row| row.get(0))
            .with_context(|| format!("reading the row from {}", self.path.display()))?;
        drop(conn);
        Ok(body)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_comes_back_and_the_file_goes_away() {
        let db = Database::create_sqlite().unwrap();
        let path = db.path().to_path_buf();
        assert_eq!(db.fetch_row().unwrap(), row_text());
        assert_eq!(row_text().len(), ROW_BYTES);
        drop(db);
        assert!(!path.exists());
    }

    #[test]
    fn server_urls_are_a_clear_error() {
        Database::check_param("sqlite").unwrap();
        let e = Database::check_param("postgres://u@127.0.0.1/db").unwrap_err();
        assert!(e.to_string().contains("not built into"), "{e}");
        assert!(Database::check_param("oracle").is_err());
    }
}

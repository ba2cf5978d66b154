//! `db=postgres-local`: a throwaway PostgreSQL server that a case starts
//! from the installed server binaries (`/usr/lib/postgresql/<version>/bin`,
//! the newest), in a marked scratch directory of the temporary directory:
//! `initdb` (trust login for `postgres`), then `pg_ctl start` on a free
//! loopback port with its Unix socket in the same directory and the
//! `pg_conf` settings as `-c name=value` options. Stopping (`pg_ctl stop
//! -m fast`, then `-m immediate`) and removing the directory happen in
//! the case's cleanup, or when the server is dropped.
//!
//! PostgreSQL refuses to run as root: run as root, sledge starts it as
//! the `postgres` user (the Debian package's), owning the directory.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, anyhow, bail};

use crate::monitor::maker_mark::MarkedDir;

/// Where Debian and Ubuntu install the server binaries.
const PG_LIB: &str = "/usr/lib/postgresql";

/// A server this process started.
pub struct LocalPostgres {
    dir: MarkedDir,
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    owner: Option<(u32, u32)>,
    running: bool,
}

/// The `pg_conf` settings as `-c name=value` options: whitespace-separated
/// `name=value` words, names of letters, digits, `_` and `.`, values
/// without quotes, backslashes or spaces.
pub fn conf_options(pg_conf: &str) -> anyhow::Result<Vec<String>> {
    pg_conf
        .split_whitespace()
        .map(|word| {
            let (name, value) = word.split_once('=').ok_or_else(|| {
                anyhow!("pg_conf: `{word}` is not `name=value` (for example synchronous_commit=off)")
            })?;
            let name_ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            let value_ok = !value.is_empty() && !value.contains(['\'', '"', '\\']);
            if !name_ok || !value_ok {
                bail!(
                    "pg_conf: `{word}`: a setting is name=value, the name of letters, digits, `_` and `.`, the value without quotes or backslashes"
                );
            }
            Ok(format!("-c {name}={value}"))
        })
        .collect()
}

/// The newest installed server's `bin` directory (with `initdb` and
/// `pg_ctl`).
pub fn server_bin() -> anyhow::Result<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(PG_LIB)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        anyhow!(
            "db=postgres-local: no PostgreSQL server binaries (initdb and pg_ctl) in {PG_LIB}/<version>/bin; install the server (Debian: apt-get install postgresql) or give a server's URL (db=postgres://...)"
        )
    })
}

/// The `postgres` user's uid and gid, for running the server as root.
fn postgres_user() -> anyhow::Result<(u32, u32)> {
    let name = CString::new("postgres").expect("no NUL in a literal");
    // SAFETY: getpwnam reads a NUL-terminated name; the record it returns
    // is read at once, before any other call could overwrite it.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        bail!(
            "db=postgres-local: PostgreSQL refuses to run as root and there is no `postgres` user to run it as"
        );
    }
    // SAFETY: not null, checked above.
    let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
    Ok((uid, gid))
}

fn chown(path: &Path, (uid, gid): (u32, u32)) -> anyhow::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .with_context(|| format!("giving {} to the postgres user", path.display()))
}

/// A loopback port free at the moment.
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

impl LocalPostgres {
    /// Makes and starts the server with `pg_conf`'s settings.
    pub fn start(pg_conf: &str) -> anyhow::Result<LocalPostgres> {
        let options = conf_options(pg_conf)?;
        let bin = server_bin()?;
        // SAFETY: geteuid has no preconditions.
        let owner = if unsafe { libc::geteuid() } == 0 {
            Some(postgres_user()?)
        } else {
            None
        };
        let dir = MarkedDir::create(&std::env::temp_dir(), "db-postgres-local")?;
        let data = dir.path().join("data");
        let mut server = LocalPostgres {
            port: 0,
            bin,
            data,
            owner,
            running: false,
            dir,
        };
        if let Some(owner) = owner {
            chown(server.dir.path(), owner)?;
        }
        server.run(
            "initdb",
            &[
                "-D",
                &server.data.display().to_string(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        server.port = free_port()?;
        let mut server_options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            server.port,
            server.dir.path().display()
        );
        for option in &options {
            server_options.push(' ');
            server_options.push_str(option);
        }
        let log = server.dir.path().join("server.log").display().to_string();
        server.running = true;
        let started = server.run(
            "pg_ctl",
            &[
                "-D",
                &server.data.display().to_string(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &server_options,
                "start",
            ],
        );
        if let Err(e) = started {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(e.context(format!("its log: {}", tail.join(" | "))));
        }
        Ok(server)
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Its data directory (with `postmaster.pid`).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Runs one of the server's programs (as the `postgres` user when
    /// root), failing with its output.
    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<()> {
        let mut command = Command::new(self.bin.join(program));
        command.args(args).current_dir(self.dir.path());
        if let Some((uid, gid)) = self.owner {
            command.uid(uid).gid(gid);
        }
        let output = command
            .output()
            .with_context(|| format!("db=postgres-local: running {program}"))?;
        if !output.status.success() {
            let text = String::from_utf8_lossy(&output.stderr);
            bail!(
                "db=postgres-local: {program} failed ({}): {}",
                output.status,
                text.trim()
            );
        }
        Ok(())
    }

    /// Stops the server and removes its directory.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        if self.running {
            self.running = false;
            let data = self.data.display().to_string();
            let fast = self.run(
                "pg_ctl",
                &["-D", &data, "-m", "fast", "-w", "-t", "30", "stop"],
            );
            if fast.is_err() {
                let immediate = self.run(
                    "pg_ctl",
                    &["-D", &data, "-m", "immediate", "-w", "-t", "30", "stop"],
                );
                // A server that died by itself has nothing to stop: `pg_ctl
                // status` fails when none runs.
                let still_running = self.run("pg_ctl", &["-D", &data, "status"]).is_ok();
                if let Err(e) = immediate
                    && still_running
                {
                    return Err(e.context(format!(
                        "stopping the local PostgreSQL server (its files are kept in {})",
                        self.dir.path().display()
                    )));
                }
            }
        }
        self.dir
            .remove()
            .map_err(|e| anyhow!("removing the local PostgreSQL server's directory: {e:#}"))
    }
}

impl Drop for LocalPostgres {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            crate::say!("warning: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_options_and_bad_ones_are_refused() {
        assert_eq!(
            conf_options("synchronous_commit=off shared_buffers=256MB").unwrap(),
            ["-c synchronous_commit=off", "-c shared_buffers=256MB"]
        );
        assert!(conf_options("").unwrap().is_empty());
        for bad in ["synchronous_commit", "a=b'c", "x;y=1", "=1"] {
            let e = conf_options(bad).unwrap_err().to_string();
            assert!(e.starts_with("pg_conf:"), "{e}");
        }
    }

    #[test]
    fn a_local_server_starts_answers_and_goes_away() {
        if server_bin().is_err() {
            crate::say!("skipped: no PostgreSQL server binaries in {PG_LIB}");
            return;
        }
        let mut server = LocalPostgres::start("synchronous_commit=off").unwrap();
        let dir = server.dir.path().to_path_buf();
        let config = crate::http::server::dynamic::postgres_login(&server.url()).unwrap();
        let target = super::super::conn::Target::Postgres {
            config: Box::new(config),
            shown: server.url(),
            schema: "public".to_string(),
        };
        let mut conn = target.connect(super::super::conn::LOAD_LIMIT).unwrap();
        assert_eq!(
            conn.scalar("SHOW synchronous_commit").unwrap().as_deref(),
            Some("off")
        );
        drop(conn);
        server.stop().unwrap();
        assert!(!dir.exists());
    }
}

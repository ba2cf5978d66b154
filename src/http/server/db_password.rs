//! Where a database password comes from when the `db` value carries none,
//! looked up the way each database's own client looks for it, so that it
//! need not be on the command line, where every local user sees it (`ps`,
//! `/proc/PID/cmdline`).
//!
//! - PostgreSQL, as libpq: `PGPASSWORD`, then the password file
//!   (`PGPASSFILE`, default `~/.pgpass`): lines
//!   `host:port:database:user:password`, `*` matching anything, `\`
//!   escaping `:` and `\`, the first matching line winning; a file that
//!   its group or others may read is ignored with a warning, as libpq does.
//! - MySQL and MariaDB, as their clients: the `password` of the `[client]`
//!   group (or MariaDB's `[client-server]`, `[client-mariadb]`) of
//!   `~/.my.cnf`, then `MYSQL_PWD`; a world-writable option file is
//!   ignored with a warning, as the clients do.
//!
//! The environment comes in as a function so that tests need not change
//! the process's own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Reads an environment variable.
pub(super) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment, non-empty values only (libpq and the MySQL
/// client treat an empty variable as unset).
pub(super) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// What a PostgreSQL login is for: the fields a password file matches on.
#[derive(Debug, Clone, Copy)]
pub(super) struct PgLogin<'a> {
    pub host: &'a str,
    pub port: u16,
    pub database: &'a str,
    pub user: &'a str,
}

/// The PostgreSQL password for `login` from the environment or the
/// password file, if either has one.
pub(super) fn postgres(env: Env<'_>, login: PgLogin<'_>) -> Option<String> {
    if let Some(password) = env("PGPASSWORD") {
        return Some(password);
    }
    let path = match env("PGPASSFILE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env("HOME")?).join(".pgpass"),
    };
    let text = read_private(
        &path,
        0o077,
        "group or world access; permissions should be u=rw (0600) or less",
    )?;
    pgpass_lookup(&text, login)
}

/// The first line of a password file that matches `login`.
fn pgpass_lookup(text: &str, login: PgLogin<'_>) -> Option<String> {
    let port = login.port.to_string();
    let wanted = [login.host, port.as_str(), login.database, login.user];
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass(line)?;
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want);
            matches.then(|| fields[4].clone())
        })
}

/// The five fields of a password-file line, unescaped; `None` for a line
/// with fewer (libpq skips it). The password is the rest of the line.
fn split_pgpass(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut()?.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    (fields.len() == 5).then_some(fields)
}

/// The MySQL or MariaDB password from `~/.my.cnf` or the environment.
pub(super) fn mysql(env: Env<'_>) -> Option<String> {
    let from_file = env("HOME").and_then(|home| {
        let path = PathBuf::from(home).join(".my.cnf");
        let text = read_private(&path, 0o002, "world-writable, so it is ignored")?;
        option_file_password(&text)
    });
    from_file.or_else(|| env("MYSQL_PWD"))
}

/// The last `password` set in a client group of a MySQL option file. A
/// `password` without a value (which makes the mysql client prompt) sets
/// none.
fn option_file_password(text: &str) -> Option<String> {
    const GROUPS: [&str; 3] = ["client", "client-server", "client-mariadb"];
    let mut in_client = false;
    let mut password = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';', '!']) {
            continue;
        }
        if let Some(group) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_client = GROUPS.contains(&group.trim().to_ascii_lowercase().as_str());
            continue;
        }
        if !in_client {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key
            .trim()
            .replace('-', "_")
            .eq_ignore_ascii_case("password")
        {
            password = Some(option_value(value.trim())).filter(|v| !v.is_empty());
        }
    }
    password
}

/// An option file value: quoted (the quotes removed) or up to a `#`
/// comment, with the escapes `\b \t \n \r \\ \s` (a space) decoded.
fn option_value(raw: &str) -> String {
    let quoted = raw
        .chars()
        .next()
        .filter(|&q| (q == '"' || q == '\'') && raw.len() >= 2 && raw.ends_with(q));
    let body = match quoted {
        Some(_) => &raw[1..raw.len() - 1],
        None => raw.split('#').next().unwrap_or("").trim_end(),
    };
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('s') => out.push(' '),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The file's text, unless it is missing, unreadable, or has any of the
/// permission bits in `forbidden`: then `None`, with a warning naming
/// `why` for the last.
fn read_private(path: &Path, forbidden: u32, why: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.permissions().mode() & forbidden != 0 {
        crate::say!(
            "warning: password file {} has {why}; not used",
            path.display()
        );
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn login() -> PgLogin<'static> {
        PgLogin {
            host: "127.0.0.1",
            port: 5432,
            database: "test",
            user: "bob",
        }
    }

    #[test]
    fn the_first_matching_pgpass_line_wins_with_wildcards_and_escapes() {
        let text = "\
# comment
otherhost:5432:test:bob:wrong
127.0.0.1:5433:test:bob:wrong port
127.0.0.1:*:test:bob:pa\\:ss\\\\word:with colons
*:*:*:*:fallback
";
        assert_eq!(
            pgpass_lookup(text, login()).as_deref(),
            Some("pa:ss\\word:with colons")
        );
        let other = PgLogin {
            user: "alice",
            ..login()
        };
        assert_eq!(pgpass_lookup(text, other).as_deref(), Some("fallback"));
        assert_eq!(pgpass_lookup("127.0.0.1:5432:test:bob", login()), None);
        assert_eq!(pgpass_lookup("", login()), None);
    }

    #[test]
    fn option_files_give_the_client_groups_password() {
        let text = "\
[mysqld]
password = server side
[client]
user = bob
# password = commented
password = \"sec ret\\tx\"
[mysql]
password = only for the mysql program
";
        assert_eq!(option_file_password(text).as_deref(), Some("sec ret\tx"));
        assert_eq!(
            option_file_password("[client-mariadb]\npassword=abc # note\n").as_deref(),
            Some("abc")
        );
        // A bare `password` prompts in the mysql client: nothing here.
        assert_eq!(option_file_password("[client]\npassword\n"), None);
        assert_eq!(option_file_password("[client]\npassword=\n"), None);
        assert_eq!(option_file_password("password=outside a group\n"), None);
    }

    fn env_of(vars: &[(&str, String)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn private_file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn postgres_looks_in_the_environment_then_the_password_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        private_file(dir.path(), ".pgpass", "*:*:*:bob:from home\n", 0o600);
        let file = private_file(dir.path(), "other", "*:*:*:bob:from PGPASSFILE\n", 0o600);
        let file = file.to_string_lossy().into_owned();
        let env = env_of(&[("HOME", home.clone())]);
        assert_eq!(postgres(&env, login()).as_deref(), Some("from home"));
        let env = env_of(&[("HOME", home.clone()), ("PGPASSFILE", file.clone())]);
        assert_eq!(postgres(&env, login()).as_deref(), Some("from PGPASSFILE"));
        let env = env_of(&[("PGPASSFILE", file), ("PGPASSWORD", "from env".into())]);
        assert_eq!(postgres(&env, login()).as_deref(), Some("from env"));
        // A file others may read is not used (libpq's rule).
        private_file(dir.path(), ".pgpass", "*:*:*:bob:exposed\n", 0o644);
        assert_eq!(postgres(&env_of(&[("HOME", home)]), login()), None);
        assert_eq!(postgres(&env_of(&[]), login()), None);
    }

    #[test]
    fn mysql_prefers_the_option_file_to_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        let env = env_of(&[("HOME", home.clone()), ("MYSQL_PWD", "from env".into())]);
        assert_eq!(mysql(&env).as_deref(), Some("from env"));
        private_file(
            dir.path(),
            ".my.cnf",
            "[client]\npassword=from file\n",
            0o600,
        );
        assert_eq!(mysql(&env).as_deref(), Some("from file"));
        // World-writable option files are ignored, as the clients do.
        private_file(
            dir.path(),
            ".my.cnf",
            "[client]\npassword=from file\n",
            0o666,
        );
        assert_eq!(mysql(&env).as_deref(), Some("from env"));
        assert_eq!(mysql(&env_of(&[("HOME", home)])), None);
    }
}

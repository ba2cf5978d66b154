//! Keeping passwords out of what sledge prints and stores.
//!
//! Parameters and the command line are shown in tables and stored with
//! every run, and errors quote the database they were about; a database
//! given in any form PostgreSQL or MySQL accepts may carry a password.
//! Everything shown or stored goes through [`redact`] first, while the
//! workload still gets the real value. It masks, without needing to know
//! which database the text is for:
//!
//! - the user part of a URL: `postgres://user:PASSWORD@host/db`, also
//!   malformed ones (everything from the first `:` after the user name to
//!   the last `@` before the host goes);
//! - a query parameter: `?password=PASSWORD`, `&sslpassword=...`, with the
//!   name percent-encoded or not (drivers decode it);
//! - libpq's keyword form: `host=h password=PASSWORD dbname=d`, with
//!   spaces around `=` and quoted values (`password = 'a b\'c'`);
//! - an option: `--password=PASSWORD`.
//!
//! A key counts as secret when its name contains `pass` or `pwd`
//! (`password`, `sslpassword`, `pkcs12_password`, `MYSQL_PWD`), except a
//! name ending in `file`, which names where a password is, not the
//! password. Masking too much is harmless; too little is not.

/// What a password is replaced with.
pub const MASK: &str = "***";

/// `text` with every password in it replaced by [`MASK`].
pub fn redact(text: &str) -> String {
    redact_keys(&redact_user_parts(text))
}

/// Each argument of a command line redacted, then joined with spaces.
pub fn redact_args<S: AsRef<str>>(args: &[S]) -> String {
    args.iter()
        .map(|a| redact(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Masks the password of every URL's user part. A URL runs from its
/// `scheme://` to the next whitespace or the next `://`, so that two URLs
/// in one text (a sweep: `db=postgres://a:b@h/d,mysql://c:d@h/e`) are
/// masked each on its own.
fn redact_user_parts(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let after = i + 3;
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        let end = rest
            .find(|c: char| c.is_whitespace())
            .unwrap_or(rest.len())
            .min(rest.find("://").unwrap_or(rest.len()));
        let url = &rest[..end];
        match url.rfind('@') {
            Some(at) => match url[..at].find(':') {
                Some(colon) => {
                    out.push_str(&url[..=colon]);
                    out.push_str(MASK);
                    out.push_str(&url[at..]);
                }
                None => out.push_str(url),
            },
            None => out.push_str(url),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Whether a key (as written, maybe percent-encoded, maybe `--option`)
/// names a password.
fn is_secret_key(key: &str) -> bool {
    let name = percent_decode(key.trim_start_matches('-')).to_ascii_lowercase();
    (name.contains("pass") || name.contains("pwd")) && !name.ends_with("file")
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'%')
}

/// Masks the value of every secret `key=value`.
fn redact_keys(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        // A key starts where the previous byte cannot belong to one.
        if !is_key_byte(bytes[i]) || (i > 0 && is_key_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let key_start = i;
        while i < bytes.len() && is_key_byte(bytes[i]) {
            i += 1;
        }
        let key = &text[key_start..i];
        // A query parameter (`?k=v`, `&k=v`) ends at `&` and has no spaces
        // around `=`; libpq's keyword form may have them.
        let in_query = key_start > 0 && matches!(bytes[key_start - 1], b'?' | b'&');
        let mut j = i;
        if !in_query {
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
        }
        if j >= bytes.len() || bytes[j] != b'=' || !is_secret_key(key) {
            continue;
        }
        j += 1;
        if !in_query {
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
        }
        let value_end = value_end(bytes, j, in_query);
        out.push_str(&text[copied..j]);
        out.push_str(MASK);
        copied = value_end;
        i = value_end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Where a value starting at `start` ends: after its closing quote when it
/// is quoted (a backslash escapes the next byte), else at whitespace, and
/// in a query also at `&` or `#`.
fn value_end(bytes: &[u8], start: usize, in_query: bool) -> usize {
    let mut k = start;
    if let Some(&quote) = bytes.get(k).filter(|&&b| b == b'\'' || b == b'"') {
        k += 1;
        while k < bytes.len() {
            match bytes[k] {
                b'\\' => k += 2,
                b if b == quote => return k + 1,
                _ => k += 1,
            }
        }
        return bytes.len();
    }
    while k < bytes.len()
        && !bytes[k].is_ascii_whitespace()
        && !(in_query && matches!(bytes[k], b'&' | b'#'))
    {
        k += 1;
    }
    k
}

/// `%XX` sequences decoded (invalid ones kept as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text redacts to its shown form.
    fn assert_redacts(cases: &[(&str, &str)]) {
        for (text, shown) in cases {
            assert_eq!(redact(text), *shown, "{text}");
        }
    }

    #[test]
    fn url_user_parts_are_masked_and_the_rest_kept() {
        assert_redacts(&[
            (
                "postgres://bob:s3cret@127.0.0.1:5432/test",
                "postgres://bob:***@127.0.0.1:5432/test",
            ),
            ("mysql://root@127.0.0.1/test", "mysql://root@127.0.0.1/test"),
            // Malformed: an unencoded `/` and `@` in the password.
            ("mysql://u:se/c@ret@h/db", "mysql://u:***@h/db"),
            // libpq's several hosts.
            (
                "postgresql://u:pw@h1:5432,h2:5433/db",
                "postgresql://u:***@h1:5432,h2:5433/db",
            ),
            // Two URLs in one sweep value, each masked on its own.
            (
                "db=postgres://a:b1@h/d,mysql://c:d1@h/e",
                "db=postgres://a:***@h/d,mysql://c:***@h/e",
            ),
            ("sqlite", "sqlite"),
            (
                "http://127.0.0.1:8080/static/1",
                "http://127.0.0.1:8080/static/1",
            ),
        ]);
    }

    #[test]
    fn query_parameters_are_masked_whatever_their_spelling() {
        assert_redacts(&[
            (
                "mysql://root@127.0.0.1/test?password=x&ssl=0",
                "mysql://root@127.0.0.1/test?password=***&ssl=0",
            ),
            (
                "postgres://u@h/db?sslmode=disable&PassWord=x#frag",
                "postgres://u@h/db?sslmode=disable&PassWord=***#frag",
            ),
            // Drivers decode the name: `pass%77ord` is `password`.
            (
                "postgres://u@h/db?pass%77ord=x",
                "postgres://u@h/db?pass%77ord=***",
            ),
            (
                "postgres://u@h/db?sslpassword=x&passfile=/home/u/.pgpass",
                "postgres://u@h/db?sslpassword=***&passfile=/home/u/.pgpass",
            ),
            (
                "mysql://u@h/db?pkcs12_password=x",
                "mysql://u@h/db?pkcs12_password=***",
            ),
        ]);
    }

    #[test]
    fn libpq_keyword_values_are_masked_plain_spaced_and_quoted() {
        assert_redacts(&[
            (
                "host=127.0.0.1 user=u password=secretpw dbname=x",
                "host=127.0.0.1 user=u password=*** dbname=x",
            ),
            ("db=host=h password=secretpw", "db=host=h password=***"),
            ("password = secretpw port=5432", "password = *** port=5432"),
            // A `&` is an ordinary character in the keyword form.
            ("password=se&cret dbname=x", "password=*** dbname=x"),
            (
                r"host=h password='se cret\' pw' dbname=x",
                "host=h password=*** dbname=x",
            ),
            ("password='unterminated secret", "password=***"),
            ("PASSWORD=x", "PASSWORD=***"),
            ("--password=x --user=u", "--password=*** --user=u"),
            ("MYSQL_PWD=x sledge", "MYSQL_PWD=*** sledge"),
            // Not a key: part of a longer word, or not followed by `=`.
            ("mypassword is=x", "mypassword is=x"),
            ("the password is kept", "the password is kept"),
            ("passwords=", "passwords=***"),
        ]);
    }

    #[test]
    fn a_command_line_is_redacted_argument_by_argument() {
        let args = [
            "sledge",
            "run",
            "http.dynamic",
            "-p",
            "db=host=h user=u password='a b' dbname=x",
            "-p",
            "db=postgres://a:b@h/d",
        ];
        assert_eq!(
            redact_args(&args),
            "sledge run http.dynamic -p db=host=h user=u password=*** dbname=x -p db=postgres://a:***@h/d"
        );
    }
}

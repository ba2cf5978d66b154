//! Text sledge did not write, made safe to show.
//!
//! A stored run or an imported document may carry any text: a host name,
//! a profile, notes, warnings, parameters, metric names, the inventory.
//! Written raw to a terminal, an escape sequence in it could move the
//! cursor, rewrite lines already printed, set the window title or colour
//! a verdict; a carriage return or a backspace could overwrite what sledge
//! wrote; a bidi override could make `slower` read as something else.
//! Every human format shows such characters escaped instead, the way Rust
//! writes them (`\x1b`, `\r`, `\u{202e}`), so that they are visible and
//! inert. JSON output needs none of this: serde escapes them there.
//!
//! The choke point is the data, not each `format!`: [`Escaped::new`]
//! escapes every text field of a record (through [`EscapeText`]), and the
//! renderers of the terminal tables, CSV and Markdown take only
//! [`Escaped`] records, so sledge's own styling (the colours of a verdict)
//! survives and a column's width is that of what is shown. Each record's
//! [`EscapeText`] names all of its fields in one pattern, so that a field
//! added later does not compile until it is escaped or said to hold no
//! text.
//!
//! What is escaped: the control characters (C0, DEL and C1), the bidi
//! embeddings, overrides, isolates and marks, and the line and paragraph
//! separators. A backslash is left as it is: the escaped form is for
//! reading, and the exact text is in the JSON.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;

/// Whether `c` changes how a terminal (or a browser) shows what follows
/// instead of showing itself: a control character, a bidi control or a
/// line or paragraph separator.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' // ARABIC LETTER MARK
                | '\u{200e}' // LEFT-TO-RIGHT MARK
                | '\u{200f}' // RIGHT-TO-LEFT MARK
                | '\u{202a}'..='\u{202e}' // embeddings and overrides
                | '\u{2066}'..='\u{2069}' // isolates
                | '\u{2028}' // LINE SEPARATOR
                | '\u{2029}' // PARAGRAPH SEPARATOR
        )
}

/// `text` with every [hidden](is_hidden) character escaped: for one field
/// (a table cell, a CSV value, part of a line), where a line break is
/// escaped too.
pub fn escape(text: &str) -> Cow<'_, str> {
    escape_where(text, is_hidden)
}

/// `text` with every [hidden](is_hidden) character but `\n` escaped: for
/// a whole message of several lines.
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && is_hidden(c))
}

fn escape_where(text: &str, hidden: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
            continue;
        }
        // Infallible: writing to a String.
        let _ = match c {
            '\0' => out.write_str("\\0"),
            '\t' => out.write_str("\\t"),
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            c if u32::from(c) < 0x80 => write!(out, "\\x{:02x}", u32::from(c)),
            c => write!(out, "\\u{{{:x}}}", u32::from(c)),
        };
    }
    Cow::Owned(out)
}

/// A value whose text can be escaped in place for showing.
pub trait EscapeText {
    /// Escapes every text this value holds with [`escape`].
    fn escape_text(&mut self);
}

impl EscapeText for String {
    fn escape_text(&mut self) {
        if let Cow::Owned(escaped) = escape(self) {
            *self = escaped;
        }
    }
}

impl<T: EscapeText> EscapeText for Option<T> {
    fn escape_text(&mut self) {
        if let Some(value) = self {
            value.escape_text();
        }
    }
}

impl<T: EscapeText> EscapeText for Vec<T> {
    fn escape_text(&mut self) {
        for value in self {
            value.escape_text();
        }
    }
}

/// Keys are text too (a parameter's name, a vulnerability's file name).
impl<V: EscapeText> EscapeText for BTreeMap<String, V> {
    fn escape_text(&mut self) {
        if self.keys().any(|k| k.chars().any(is_hidden)) {
            *self = std::mem::take(self)
                .into_iter()
                .map(|(k, v)| (escape(&k).into_owned(), v))
                .collect();
        }
        for value in self.values_mut() {
            value.escape_text();
        }
    }
}

/// A value with its text [escaped](EscapeText), ready for a human format;
/// the only way to make one is [`Escaped::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct Escaped<T>(T);

impl<T: EscapeText> Escaped<T> {
    /// `value` with every text in it escaped.
    pub fn new(mut value: T) -> Self {
        value.escape_text();
        Escaped(value)
    }
}

impl<T> std::ops::Deref for Escaped<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Writes a line to standard error: what `eprintln!` would, under the two
/// rules every message of sledge follows, which is why nothing else in
/// the crate writes to stderr or stdout itself (a test holds it to that):
///
/// - **Shown, not obeyed**: a message may quote a path, a knob's value, a
///   host's output or a store's text, so its [hidden](is_hidden)
///   characters but the line breaks are escaped ([`escape_lines`]); an
///   ESC in a `--store` path cannot recolour the terminal.
/// - **A closed stderr ends nothing**: `sledge ab ... 2>&1 | head` closes
///   the pipe long before the end, and the run must still finish, store
///   its results and put its knobs back. A failed write is dropped, as
///   ripgrep treats a broken pipe: the reader has gone, and nothing else
///   could be told.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::visible::say_line(&::std::format!($($arg)*))
    };
}

/// Writes `text` with a line break to standard error by the rules of
/// [`say!`](crate::say).
pub fn say_line(text: &str) {
    write_stderr(text, "\n");
}

/// Writes `question` to standard error without a line break, for an
/// answer typed on the same line (`delete? [y/N] `), by the rules of
/// [`say!`](crate::say).
pub fn ask(question: &str) {
    write_stderr(question, "");
}

fn write_stderr(text: &str, end: &str) {
    let shown = escape_lines(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(shown.as_bytes())
        .and_then(|()| stderr.write_all(end.as_bytes()))
        .and_then(|()| stderr.flush());
}

/// Writes `text` as it is to standard output, where results go; a closed
/// pipe (`sledge show 1 | head`) is the end of the output, not an error.
/// Results are escaped where they are made (the [`Escaped`] records), so
/// that a table keeps sledge's own colours; this only writes.
pub fn print_text(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_separators_are_escaped_the_rest_kept() {
        let cases = [
            ("plain text, ünïcödé ✓ 漢字", "plain text, ünïcödé ✓ 漢字"),
            ("a\x1b]0;title\x07b", "a\\x1b]0;title\\x07b"),
            ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),
            ("over\rwrite\x08\x7f", "over\\rwrite\\x08\\x7f"),
            ("nul\0tab\tline\n", "nul\\0tab\\tline\\n"),
            ("c1 \u{9b}31m \u{85}", "c1 \\u{9b}31m \\u{85}"),
            (
                "\u{202e}drow\u{202c} \u{2066}x\u{2069}",
                "\\u{202e}drow\\u{202c} \\u{2066}x\\u{2069}",
            ),
            (
                "\u{200f}\u{061c}\u{2028}\u{2029}",
                "\\u{200f}\\u{61c}\\u{2028}\\u{2029}",
            ),
            // A backslash is shown as it is.
            ("C:\\dir \\x1b", "C:\\dir \\x1b"),
        ];
        for (text, shown) in cases {
            assert_eq!(escape(text), shown, "{text:?}");
            // Escaping twice changes nothing more.
            assert_eq!(escape(shown), shown);
        }
        assert!(matches!(escape("nothing to do"), Cow::Borrowed(_)));
        assert_eq!(escape_lines("one\x1b\ntwo\r\n"), "one\\x1b\ntwo\\r\n");
    }

    #[test]
    fn containers_escape_their_text_and_their_keys() {
        let mut map = BTreeMap::from([("k\x1b".to_string(), vec![Some("v\r".to_string())])]);
        map.escape_text();
        assert_eq!(
            map,
            BTreeMap::from([("k\\x1b".to_string(), vec![Some("v\\r".to_string())])])
        );
        let shown = Escaped::new("a\u{202e}b".to_string());
        assert_eq!(shown.as_str(), "a\\u{202e}b");
    }
}

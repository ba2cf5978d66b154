//! Placeholders in a command line: `make -j{jobs}` with `-p jobs=1,all` is
//! a sweep, as hyperfine's `{name}` with `--parameter-list` is.
//!
//! A placeholder is `{name}` where the name is a lowercase identifier
//! (`[a-z][a-z0-9_]*`), so that the shell's own braces are left as they
//! are: `${HOME}`'s name is uppercase, awk's `{print $1}` is no
//! identifier, and `{{` and `}}` stand for a literal brace. Each name is a
//! parameter of the case: `threads`, `copies`, `jobs` and `clients` take a
//! count or `all` (one per CPU), as the built-in workloads' do, so the
//! scaling block, the speed-up and the USL fit follow; any other name
//! takes any text.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use crate::engine::{ParamKind, ParamRole, ParamSpec};

/// The placeholder names that count CPUs: `all` means one per CPU.
const PER_CPU: &[&str] = &["threads", "copies", "jobs", "clients"];

/// The largest count a per-CPU placeholder takes.
const MAX_COUNT: u64 = 65_536;

/// The placeholder names of `text`, in order of first appearance.
pub fn names(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for piece in pieces(text) {
        if let Piece::Name(name) = piece
            && !found.iter().any(|f: &String| f == name)
        {
            found.push(name.to_string());
        }
    }
    found
}

/// `text` with every placeholder replaced by its value in `values`; an
/// error names a placeholder without one.
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Literal(literal) => out.push_str(literal),
            Piece::Name(name) => match values.get(name) {
                Some(value) if !value.is_empty() => out.push_str(value),
                _ => {
                    return Err(format!(
                        "`{text}` uses {{{name}}}; give it a value: -p {name}=VALUE (or several, -p {name}=a,b, for a sweep)"
                    ));
                }
            },
        }
    }
    Ok(out)
}

/// The parameter a placeholder is: a count for the per-CPU names, text
/// otherwise (with no default: a case must give it).
pub fn spec(name: &str) -> ParamSpec {
    let name = intern(name);
    if PER_CPU.contains(&name) {
        ParamSpec {
            name,
            role: ParamRole::CpuCount,
            help: "a placeholder of the command: a count, or `all` (one per CPU)",
            kind: ParamKind::Threads { max: MAX_COUNT },
            default: "1",
        }
    } else {
        ParamSpec {
            name,
            role: ParamRole::Other,
            help: "a placeholder of the command",
            kind: ParamKind::Text,
            default: "",
        }
    }
}

/// Whether `name` could be a placeholder's.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A parameter's name lives as long as the process (a [`ParamSpec`]'s
/// name is `&'static str`): each distinct placeholder name is kept once.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(known) = names.get(name) {
        return known;
    }
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(kept);
    kept
}

enum Piece<'a> {
    Literal(&'a str),
    Name(&'a str),
}

/// `text` cut into literal text and placeholders; `{{` and `}}` are a
/// literal brace each.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        let (before, from) = rest.split_at(open);
        if !before.is_empty() {
            pieces.push(Piece::Literal(before));
        }
        if from.starts_with("{{") || from.starts_with("}}") {
            pieces.push(Piece::Literal(&from[..1]));
            rest = &from[2..];
            continue;
        }
        if from.starts_with('{')
            && let Some(close) = from.find('}')
            && is_name(&from[1..close])
        {
            pieces.push(Piece::Name(&from[1..close]));
            rest = &from[close + 1..];
            continue;
        }
        pieces.push(Piece::Literal(&from[..1]));
        rest = &from[1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Literal(rest));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn placeholders_are_lowercase_names_in_braces_and_the_shells_braces_stay() {
        let text = "make -j{jobs} -C {dir} && echo ${HOME} | awk '{print $1}' {{x}} {jobs}";
        assert_eq!(names(text), ["jobs", "dir"]);
        assert_eq!(
            fill(text, &values(&[("jobs", "4"), ("dir", "/src")])).unwrap(),
            "make -j4 -C /src && echo ${HOME} | awk '{print $1}' {x} 4"
        );
    }

    #[test]
    fn a_placeholder_without_a_value_is_named() {
        let err = fill("sha256sum {file}", &values(&[])).unwrap_err();
        assert!(
            err.contains("uses {file}; give it a value: -p file=VALUE"),
            "{err}"
        );
        let err = fill("x {file}", &values(&[("file", "")])).unwrap_err();
        assert!(err.contains("{file}"), "{err}");
    }

    #[test]
    fn counting_names_take_all_and_the_rest_any_text() {
        assert!(matches!(spec("jobs").kind, ParamKind::Threads { .. }));
        assert!(matches!(spec("size").kind, ParamKind::Text));
        // One name, one interned string.
        assert!(std::ptr::eq(spec("size").name, spec("size").name));
        assert!(is_name("a_1") && !is_name("A") && !is_name("1a") && !is_name(""));
    }

    #[test]
    fn unclosed_and_odd_braces_are_literal() {
        assert_eq!(names("{ {} {a b} {x"), Vec::<String>::new());
        assert_eq!(fill("{ {} }", &values(&[])).unwrap(), "{ {} }");
    }
}

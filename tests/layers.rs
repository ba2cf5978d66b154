//! The layers of `src/` are true: no module imports one listed above it in
//! the order `src/lib.rs` gives (and README.md repeats).
//!
//! Test code inside `src/` (a `#[cfg(test)]` module or file) may use any
//! layer: it exercises the whole stack, as these integration tests do.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ORDER_PREFIX: &str = "Layers, highest first: ";

/// The layer order from a line `Layers, highest first: a > b > ...`.
fn order_in(text: &str, file: &str) -> Vec<String> {
    let line = text
        .lines()
        .find_map(|l| l.split_once(ORDER_PREFIX).map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("{file} has no line `{ORDER_PREFIX}...`"));
    line.trim_end_matches(['.', '`'])
        .split('>')
        .map(|m| m.trim().trim_matches('`').to_string())
        .collect()
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Names of the modules declared right after `#[cfg(test)]` in `text`.
pub(crate) fn test_only_modules(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| {
            let decl = w[1].strip_suffix(';')?;
            let name = decl.rsplit(' ').next()?;
            decl.contains("mod ").then(|| name.to_string())
        })
        .collect()
}

/// The code of a file without its `#[cfg(test)]` items: everything from
/// the first `#[cfg(test)]` on (test modules go last, by the style).
pub(crate) fn non_test_code(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// The top-level modules that `code` names through `crate::`, including
/// `use crate::{a, b::c}` groups.
fn crate_modules(code: &str, known: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group
                .split(',')
                .map(|part| part.trim().split("::").next().unwrap_or(""))
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        for name in names {
            if known.iter().any(|k| k == name) {
                found.insert(name.to_string());
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_higher_layer() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let order = order_in(&lib, "src/lib.rs");

    // Every module of lib.rs has its place in the order, and only those.
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    let ordered: BTreeSet<String> = order.iter().cloned().collect();
    assert_eq!(declared, ordered, "src/lib.rs: modules vs the layer order");

    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let test_only: Vec<String> = files
        .iter()
        .flat_map(|f| test_only_modules(&std::fs::read_to_string(f).unwrap()))
        .collect();

    let mut back_edges = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(src()).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let Some(level) = order.iter().position(|m| *m == top) else {
            continue; // lib.rs and main.rs sit above every layer
        };
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        if test_only.contains(&stem) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for used in crate_modules(non_test_code(&text), &order) {
            let used_level = order.iter().position(|m| *m == used).unwrap();
            if used_level < level {
                back_edges.push(format!("{} uses {used}", rel.display()));
            }
        }
    }
    assert!(
        back_edges.is_empty(),
        "lower layers import higher ones (order: {}):\n{}",
        order.join(" > "),
        back_edges.join("\n")
    );
}

#[test]
fn the_readme_gives_the_same_order() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert_eq!(order_in(&readme, "README.md"), order_in(&lib, "src/lib.rs"));
}

#[test]
fn the_checker_finds_uses_and_ignores_tests() {
    let known: Vec<String> = ["engine", "report", "sys"].map(String::from).to_vec();
    let code = "use crate::{engine::Case, sys};\nfn f() { crate::report::x(); }\n\
                #[cfg(test)]\nmod tests { use crate::report::fixtures; }";
    let found = crate_modules(non_test_code(code), &known);
    assert_eq!(
        found,
        ["engine", "report", "sys"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let only_code = crate_modules(non_test_code("#[cfg(test)]\nuse crate::report;"), &known);
    assert!(only_code.is_empty());
    assert_eq!(
        test_only_modules("#[cfg(test)]\npub(crate) mod fixtures;\nmod real;"),
        vec!["fixtures".to_string()]
    );
    assert_eq!(
        order_in("x\n//! Layers, highest first: `a` > `b` > `c`.\n", "f"),
        vec!["a", "b", "c"]
    );
}

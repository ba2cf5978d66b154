//! No two sibling modules of one folder under `src/` import each other,
//! directly or round a longer loop. The layers (`layers.rs`) order the
//! top-level modules; inside one, a cycle means the two files are one
//! idea split in two, or that the idea they share has no home of its own:
//! either way, neither can be read, tested or moved without the other.
//!
//! A sibling is a file of the folder or a subfolder (a module with files
//! of its own); `mod.rs` and `x.rs` beside `x/` are the folder's module
//! itself, which re-exports its children and is no sibling of them. An
//! import is any path through `crate::`, `super::` or `$crate::` in a
//! file's code, `use` trees with their nested groups included; comments,
//! string literals and test code (a `#[cfg(test)]` module or file, as in
//! `layers.rs`) are left out. A `super::` inside an inline module of a
//! file would be read as the file's own; `src/` has none that uses one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::layers::{non_test_code, rust_files, src, test_only_modules};

/// A module's path from the crate root: `src/report/html/charts.rs` is
/// `["report", "html", "charts"]`, `src/report/mod.rs` and `src/results.rs`
/// are `["report"]` and `["results"]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The modules `text` (the file of module `module`) declares test-only:
/// `#[cfg(test)]` then `mod name;` (`pub` or `pub(crate)` allowed).
fn test_only_children(module: &[String], text: &str) -> Vec<Vec<String>> {
    test_only_modules(text)
        .into_iter()
        .map(|name| {
            let mut path = module.to_vec();
            path.push(name);
            path
        })
        .collect()
}

/// `code` without its comments and with every string and character
/// literal emptied, so that neither a doc link nor a message that names
/// a module counts as an import.
fn code_only(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            i += 2;
            while i < chars.len() && !at(i, "*/") {
                i += 1;
            }
            i += 2;
        } else if c == 'r'
            && (i == 0 || !ident(chars[i - 1]))
            && raw_string_hashes(&chars[i + 1..]).is_some()
        {
            // r"..." or r#"..."#: ends at the quote and as many hashes.
            let hashes = raw_string_hashes(&chars[i + 1..]).unwrap_or(0);
            i += 2 + hashes;
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !at(i, &close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && char_literal_len(&chars[i..]).is_some() {
            // A lifetime (`'a`) is no literal and stays.
            i += char_literal_len(&chars[i..]).unwrap_or(1);
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// After the `r` of a raw string: its number of hashes, `None` when what
/// follows is no raw string.
fn raw_string_hashes(after_r: &[char]) -> Option<usize> {
    let hashes = after_r.iter().take_while(|&&c| c == '#').count();
    (after_r.get(hashes) == Some(&'"')).then_some(hashes)
}

/// The length of the character literal `chars` starts with (`'x'`,
/// `'\n'`, `'\u{7f}'`), `None` for a lifetime.
fn char_literal_len(chars: &[char]) -> Option<usize> {
    match chars.get(1)? {
        // After the backslash and the escaped character (`'\''`).
        '\\' => chars
            .get(3..)?
            .iter()
            .position(|&c| c == '\'')
            .map(|end| end + 4),
        _ => (chars.get(2) == Some(&'\'')).then_some(3),
    }
}

/// The paths a path or `use` tree at the start of `text` names, each as
/// its segments: `a::{b, c::{d, e as f}}` names `a::b`, `a::c::d` and
/// `a::c::e`. Returns them and how much of `text` the tree took.
fn use_tree(text: &[char]) -> (Vec<Vec<String>>, usize) {
    let mut i = 0;
    let mut segments: Vec<String> = Vec::new();
    let skip_space = |i: &mut usize| {
        while text.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        if text.get(i) == Some(&'{') {
            i += 1;
            let mut paths = Vec::new();
            loop {
                while text.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match text.get(i) {
                    None => return (paths, i),
                    Some('}') => return (paths, i + 1),
                    Some(_) => {
                        let (inner, used) = use_tree(&text[i..]);
                        // A tree that takes nothing is not one: stop
                        // rather than loop on what no path starts with.
                        if used == 0 {
                            return (paths, i);
                        }
                        paths.extend(inner.into_iter().map(|p| [segments.clone(), p].concat()));
                        i += used;
                    }
                }
            }
        }
        let word: String = text[i..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '*')
            .collect();
        if word.is_empty() {
            return (vec![segments], i);
        }
        i += word.chars().count();
        segments.push(word);
        skip_space(&mut i);
        if text[i..].starts_with(&[':', ':']) {
            i += 2;
            continue;
        }
        // `name as other`: the other name is no path.
        if text[i..].starts_with(&['a', 's']) && text.get(i + 2).is_some_and(|c| c.is_whitespace())
        {
            i += 2;
            skip_space(&mut i);
            i += text[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .count();
        }
        return (vec![segments], i);
    }
}

/// The absolute paths (from the crate root) that the code of module
/// `module` names through `crate::`, `$crate::` and `super::`.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    for start in 0..chars.len() {
        // Not inside a word, nor a later `super` of `super::super::`,
        // which the first one's tree already reads.
        let before = |back: usize| start.checked_sub(back).map(|i| chars[i]);
        if before(1).is_some_and(|c| c.is_alphanumeric() || c == '_')
            || (before(1) == Some(':') && before(2) == Some(':'))
        {
            continue;
        }
        let rest = &chars[start..];
        let base: Vec<String> = if rest.starts_with(&['c', 'r', 'a', 't', 'e', ':', ':']) {
            Vec::new()
        } else if rest.starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
            module[..module.len().saturating_sub(1)].to_vec()
        } else {
            continue;
        };
        // The tree begins after the `crate`/`super` keyword's `::`.
        let (trees, _) = use_tree(&rest[rest.iter().position(|&c| c == ':').unwrap_or(0) + 2..]);
        for tree in trees {
            let mut path = base.clone();
            for segment in tree {
                if segment == "super" {
                    path.pop();
                } else {
                    path.push(segment);
                }
            }
            paths.push(path);
        }
    }
    paths
}

/// An import between two siblings: the folder (as a module path), the
/// sibling that imports, the one imported, and the file it is in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    folder: Vec<String>,
    from: String,
    to: String,
    file: String,
}

/// The imports between siblings of every folder that `path` named in
/// the file `file` of module `module` make.
fn sibling_imports(module: &[String], path: &[String], file: &str) -> Vec<Import> {
    // The file belongs to one child of each folder above it: `report/
    // html/charts.rs` is `html` in `report` and `charts` in `report/html`.
    (0..module.len())
        .filter(|&depth| depth > 0)
        .filter(|&depth| path.len() > depth && path[..depth] == module[..depth])
        .filter(|&depth| path[depth] != module[depth])
        .map(|depth| Import {
            folder: module[..depth].to_vec(),
            from: module[depth].clone(),
            to: path[depth].clone(),
            file: file.to_string(),
        })
        .collect()
}

/// The sets of siblings of one folder that reach each other through
/// `edges` (the strongly connected parts with more than one sibling),
/// each in name order.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from).chain(to))
        .collect();
    let reach = |start: &String| {
        let mut seen: BTreeSet<&String> = BTreeSet::new();
        let mut next = vec![start];
        while let Some(node) = next.pop() {
            for to in edges.get(node).into_iter().flatten() {
                if seen.insert(to) {
                    next.push(to);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<&String>> =
        nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for &node in &nodes {
        let part: BTreeSet<String> = nodes
            .iter()
            .filter(|&&other| other != node)
            .filter(|&&other| reached[node].contains(other) && reached[other].contains(node))
            .chain(std::iter::once(&node))
            .map(|n| n.to_string())
            .collect();
        if part.len() > 1 && !found.contains(&part) {
            found.push(part);
        }
    }
    found
}

#[test]
fn no_sibling_modules_import_each_other() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let texts: Vec<(Vec<String>, String, String)> = files
        .iter()
        .map(|file| {
            let relative = file.strip_prefix(src()).unwrap();
            let text = std::fs::read_to_string(file).unwrap();
            (module_path(relative), relative.display().to_string(), text)
        })
        .collect();
    let test_only: Vec<Vec<String>> = texts
        .iter()
        .flat_map(|(module, file, text)| {
            // lib.rs and main.rs are the crate root.
            let module = if file == "lib.rs" || file == "main.rs" {
                &[][..]
            } else {
                &module[..]
            };
            test_only_children(module, text)
        })
        .collect();
    // Every folder's children: its files and subfolders.
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (module, _, _) in &texts {
        for depth in 1..module.len() {
            children
                .entry(module[..depth].to_vec())
                .or_default()
                .insert(module[depth].clone());
        }
    }

    let mut imports: BTreeSet<Import> = BTreeSet::new();
    for (module, file, text) in &texts {
        let root = file == "lib.rs" || file == "main.rs";
        if root || test_only.iter().any(|t| module.starts_with(t)) {
            continue;
        }
        for path in named_paths(module, &code_only(non_test_code(text))) {
            for import in sibling_imports(module, &path, file) {
                if children[&import.folder].contains(&import.to) {
                    imports.insert(import);
                }
            }
        }
    }

    let mut by_folder: BTreeMap<&Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for import in &imports {
        by_folder
            .entry(&import.folder)
            .or_default()
            .entry(import.from.clone())
            .or_default()
            .insert(import.to.clone());
    }
    let mut found = Vec::new();
    for (folder, edges) in &by_folder {
        for part in cycles(edges) {
            let how: Vec<String> = imports
                .iter()
                .filter(|i| &&i.folder == folder && part.contains(&i.from) && part.contains(&i.to))
                .map(|i| format!("  {} uses {} ({})", i.from, i.to, i.file))
                .collect();
            found.push(format!(
                "src/{}: {}\n{}",
                folder.join("/"),
                part.into_iter().collect::<Vec<_>>().join(", "),
                how.join("\n")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "sibling modules import each other:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_reads_use_trees_and_skips_comments_and_strings() {
    let module: Vec<String> = ["report", "html", "charts"].map(String::from).to_vec();
    let code = "use super::{format, sweeps::{self, Step as S}};\n\
                use crate::report::{pivot, run_table::value};\n\
                // super::in_a_comment\n\
                /* crate::report::in_a_block */\n\
                fn f<'a>(x: &'a str) -> char { let _ = \"super::in_a_string\"; \
                let _ = r#\"crate::raw\"#; super::super::listing::runs(); '\"' }\n\
                fn g() { $crate::engine::Case; }";
    let named: Vec<String> = named_paths(&module, &code_only(code))
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        named,
        [
            "report::html::format",
            "report::html::sweeps::self",
            "report::html::sweeps::Step",
            "report::pivot",
            "report::run_table::value",
            "report::listing::runs",
            "engine::Case",
        ]
    );
    let imports = sibling_imports(&module, &["report".into(), "pivot".into()], "f.rs");
    assert_eq!(imports.len(), 1);
    assert_eq!(
        (imports[0].from.as_str(), imports[0].to.as_str()),
        ("html", "pivot")
    );
    assert!(sibling_imports(&module, &["report".into(), "html".into()], "f.rs").is_empty());
}

#[test]
fn the_checker_finds_a_loop_of_any_length() {
    let edges = |pairs: &[(&str, &str)]| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in pairs {
            map.entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        map
    };
    assert!(cycles(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    let three = cycles(&edges(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
    assert_eq!(three.len(), 1);
    assert_eq!(three[0], ["a", "b", "c"].map(String::from).into());
    assert_eq!(cycles(&edges(&[("x", "y"), ("y", "x")])).len(), 1);
    assert_eq!(
        module_path(Path::new("report/mod.rs")),
        vec!["report".to_string()]
    );
    assert_eq!(
        test_only_children(&["report".into()], "#[cfg(test)]\npub(crate) mod fixtures;"),
        vec![vec!["report".to_string(), "fixtures".to_string()]]
    );
}

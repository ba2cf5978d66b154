//! No two sibling modules of one folder under `src/` import each other,
//! directly or round a longer loop. The layers (`layers.rs`) order the
//! top-level modules; inside one, a cycle means the two files are one
//! idea split in two, or that the idea they share has no home of its own:
//! either way, neither can be read, tested or moved without the other.
//!
//! A sibling is a file of the folder or a subfolder (a module with files
//! of its own). The folder's front (`mod.rs`, or `x.rs` beside `x/`) is a
//! sibling like the others, named `mod`: a child that names something
//! through the front (`super::Name`, `crate::folder::Name`, where `Name`
//! is no child: the front defines or re-exports it) imports the front, and
//! the front's `pub use child::...` imports the child, so a child that
//! imports through the front what the front takes from that child closes
//! a loop. Children import a thing from the file that defines it, never
//! through the front.
//!
//! An import is any path through `crate::`, `super::`, `self::` or
//! `$crate::` in a file's code, and in a front any path that starts with
//! the name of one of its children, `use` trees with their nested groups
//! included; comments, string literals and test code (a `#[cfg(test)]`
//! module or file, as in `layers.rs`) are left out. A `super::` inside an
//! inline module of a file would be read as the file's own; `src/` has
//! none that uses one.

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

/// What a folder's front (`mod.rs`, or `x.rs` beside `x/`) is called
/// among the folder's children: no module can have the keyword's name.
const FRONT: &str = "mod";

/// Whether the file at `relative` (under `src/`) is a folder's front:
/// `mod.rs`, or `x.rs` beside a folder `x/`.
fn is_front(relative: &Path) -> bool {
    relative.file_name().is_some_and(|name| name == "mod.rs")
        || src().join(relative.with_extension("")).is_dir()
}

/// Where a file sits among siblings: its module path, with [`FRONT`]
/// added for a folder's front (`src/store/mod.rs` is `["store", "mod"]`).
fn node_path(module: &[String], front: bool) -> Vec<String> {
    let mut node = module.to_vec();
    if front {
        node.push(FRONT.to_string());
    }
    node
}

/// `text` without its `#[cfg(test)]` items: a front's test-only `mod x;`
/// declarations, which may stand among its other declarations, and then
/// everything from the first `#[cfg(test)]` on ([`non_test_code`]).
fn code_without_tests(text: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let declares_mod = |next: &&str| {
            let next = next.trim();
            next.ends_with(';') && next.contains("mod ") && !next.contains('{')
        };
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(declares_mod) {
            lines.next();
            continue;
        }
        kept.push(line);
    }
    non_test_code(&kept.join("\n")).to_string()
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
/// `module` names through `crate::`, `$crate::`, `super::` and `self::`,
/// or through the name of one of `own_children` (the modules a front
/// declares: `use child::Name`).
fn named_paths(module: &[String], code: &str, own_children: &BTreeSet<String>) -> Vec<Vec<String>> {
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
        let word: String = rest
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        let after_word = word.chars().count();
        if !rest[after_word..].starts_with(&[':', ':']) {
            continue;
        }
        let (base, tree_start): (Vec<String>, usize) = match word.as_str() {
            "crate" => (Vec::new(), after_word + 2),
            "super" => (
                module[..module.len().saturating_sub(1)].to_vec(),
                after_word + 2,
            ),
            "self" => (module.to_vec(), after_word + 2),
            // A child's name starts the tree itself.
            child if own_children.contains(child) => (module.to_vec(), 0),
            _ => continue,
        };
        let (trees, _) = use_tree(&rest[tree_start..]);
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
/// the file `file` at `node` ([`node_path`]) make, where `children`
/// holds every folder's children: a name no child of its folder bears is
/// the front's (defined or re-exported there).
fn sibling_imports(
    node: &[String],
    path: &[String],
    file: &str,
    children: &BTreeMap<Vec<String>, BTreeSet<String>>,
) -> Vec<Import> {
    // The file belongs to one child of each folder above it: `report/
    // html/charts.rs` is `html` in `report` and `charts` in `report/html`.
    (0..node.len())
        .filter(|&depth| depth > 0)
        .filter(|&depth| path.len() > depth && path[..depth] == node[..depth])
        .filter_map(|depth| {
            let folder = &node[..depth];
            let to = if children
                .get(folder)
                .is_some_and(|c| c.contains(&path[depth]))
            {
                path[depth].clone()
            } else {
                FRONT.to_string()
            };
            (to != node[depth]).then(|| Import {
                folder: folder.to_vec(),
                from: node[depth].clone(),
                to,
                file: file.to_string(),
            })
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
    let found = sibling_cycles();
    assert!(
        found.is_empty(),
        "sibling modules, a folder's front (mod) included, import each other:\n{}",
        found.join("\n")
    );
}

/// Every cycle among the siblings of a folder of `src/`, a folder's
/// front included, each as one message: the folder (`src/report/html`),
/// the siblings in the cycle and the imports that make it.
fn sibling_cycles() -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let texts: Vec<(Vec<String>, String, String, bool)> = files
        .iter()
        .map(|file| {
            let relative = file.strip_prefix(src()).unwrap();
            let text = std::fs::read_to_string(file).unwrap();
            (
                module_path(relative),
                relative.display().to_string(),
                text,
                is_front(relative),
            )
        })
        .collect();
    let test_only: Vec<Vec<String>> = texts
        .iter()
        .flat_map(|(module, file, text, _)| {
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
    for (module, _, _, _) in &texts {
        for depth in 1..module.len() {
            children
                .entry(module[..depth].to_vec())
                .or_default()
                .insert(module[depth].clone());
        }
    }

    let mut imports: BTreeSet<Import> = BTreeSet::new();
    let no_children = BTreeSet::new();
    for (module, file, text, front) in &texts {
        let root = file == "lib.rs" || file == "main.rs";
        if root || test_only.iter().any(|t| module.starts_with(t)) {
            continue;
        }
        let own_children = match front {
            true => children.get(module).unwrap_or(&no_children),
            false => &no_children,
        };
        let node = node_path(module, *front);
        for path in named_paths(module, &code_only(&code_without_tests(text)), own_children) {
            imports.extend(sibling_imports(&node, &path, file, &children));
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
    found
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
    let named: Vec<String> = named_paths(&module, &code_only(code), &BTreeSet::new())
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
    let children: BTreeMap<Vec<String>, BTreeSet<String>> = [
        (vec!["report"], vec!["html", "pivot"]),
        (vec!["report", "html"], vec!["charts", "format"]),
    ]
    .into_iter()
    .map(|(folder, names)| {
        (
            folder.into_iter().map(String::from).collect(),
            names.into_iter().map(String::from).collect(),
        )
    })
    .collect();
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let pairs = |imports: Vec<Import>| {
        imports
            .into_iter()
            .map(|i| (i.folder.join("/"), i.from, i.to))
            .collect::<Vec<_>>()
    };
    let imports = sibling_imports(&module, &path(&["report", "pivot"]), "f.rs", &children);
    assert_eq!(
        pairs(imports),
        [(
            "report".to_string(),
            "html".to_string(),
            "pivot".to_string()
        )]
    );
    assert!(sibling_imports(&module, &path(&["report", "html"]), "f.rs", &children).is_empty());
    // A name that is no child of its folder is the front's.
    let imports = sibling_imports(
        &module,
        &path(&["report", "html", "Chart"]),
        "f.rs",
        &children,
    );
    assert_eq!(
        pairs(imports),
        [(
            "report/html".to_string(),
            "charts".to_string(),
            "mod".to_string()
        )]
    );

    // A front names its children by name or through `self::`, and is
    // the sibling `mod` of its folder.
    let front: Vec<String> = path(&["report", "html"]);
    let code = "pub use charts::Chart;
use self::format::cell;
use std::fmt::format;";
    let named: Vec<String> = named_paths(&front, &code_only(code), &children[&front])
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        named,
        ["report::html::charts::Chart", "report::html::format::cell"]
    );
    let node = node_path(&front, true);
    let imports = sibling_imports(
        &node,
        &path(&["report", "html", "charts", "Chart"]),
        "mod.rs",
        &children,
    );
    assert_eq!(
        pairs(imports),
        [(
            "report/html".to_string(),
            "mod".to_string(),
            "charts".to_string()
        )]
    );
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
        code_without_tests(
            "mod a;\n#[cfg(test)]\nmod tests;\npub use a::X;\n#[cfg(test)]\nfn t() {}"
        ),
        "mod a;\npub use a::X;\n"
    );
    assert_eq!(
        test_only_children(&["report".into()], "#[cfg(test)]\npub(crate) mod fixtures;"),
        vec![vec!["report".to_string(), "fixtures".to_string()]]
    );
}

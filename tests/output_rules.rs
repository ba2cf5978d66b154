//! One rule for everything sledge writes to a terminal: its messages go
//! through `say!` (`src/visible.rs`), which escapes the control
//! characters of the text it quotes (a path, a knob's value, another
//! host's output) and treats a closed stderr as the end of the output
//! rather than a reason to panic; results go through `print_text`, which
//! ends quietly on a closed stdout. `eprintln!` and `println!` panic when
//! the pipe is closed (`sledge ab ... 2>&1 | head`) and print what they
//! are given raw, so no file but `src/visible.rs` may use them, test
//! code included (a test's notice is a message like any other).

use crate::layers::{rust_files, src};

/// The macros that write to stdout or stderr themselves.
const RAW_PRINTS: &[&str] = &["eprintln!", "eprint!", "println!", "print!", "dbg!"];

/// Whether `line` calls `mac` (not as part of a longer name: `say!` is not
/// `eprint!`), outside a comment.
fn calls(line: &str, mac: &str) -> bool {
    let code = line.split("//").next().unwrap_or(line);
    code.match_indices(mac).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn only_the_visible_module_writes_to_the_terminal() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for file in files {
        if file.ends_with("src/visible.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for mac in RAW_PRINTS {
                if calls(line, mac) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "write messages with crate::say! and results with visible::print_text:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_raw_print_and_not_its_lookalikes() {
    assert!(calls("    eprintln!(\"x\");", "eprintln!"));
    assert!(calls("x; println!(\"{y}\")", "println!"));
    assert!(!calls("    crate::say!(\"x\");", "print!"));
    assert!(!calls("    // eprintln!(\"x\") would panic", "eprintln!"));
    assert!(!calls("    eprintln!(\"x\");", "print!"));
}

//! The import document (`sledge import FILE`) on arbitrary bytes, as a
//! file copied from another machine could hold them.
//!
//! Nothing may panic; a document that is accepted must export and import
//! again as the same runs, since that is how runs travel between stores.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sledge::report::portable::{export, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(runs) = parse(data, "fuzz") else {
        return;
    };
    let text = export(&runs, "2026-03-01T12:00:00Z", false).expect("imported runs export");
    let back = parse(text.as_bytes(), "fuzz")
        .unwrap_or_else(|e| panic!("an export of imported runs is refused: {e}"));
    assert_eq!(back, runs, "runs changed on their way out and back in");
});

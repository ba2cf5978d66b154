//! The built-in server's request parser on arbitrary bytes, as a client
//! could send them.
//!
//! Besides never panicking, a request the parser accepts must be
//! consistent: its head lies within the input, its path is non-empty, the
//! same head comes back from the input cut right after it, and every
//! shorter prefix waits for more (so a request arriving in pieces is
//! never refused or misread halfway).

#![no_main]

use libfuzzer_sys::fuzz_target;
use sledge::http::server::request_parser::{Method, asks_for_head, parse};

fuzz_target!(|data: &[u8]| {
    let head_asked = asks_for_head(data);
    let Ok(Some(head)) = parse(data) else {
        return;
    };
    assert!(head.len <= data.len(), "head past the input");
    assert!(!head.path.is_empty(), "empty path accepted");
    assert_eq!(head_asked, head.method == Method::Head);
    let again = parse(&data[..head.len]).expect("the head alone parses");
    assert_eq!(
        again.as_ref(),
        Some(&head),
        "the head alone reads differently"
    );
    // A prefix of a good request is only ever unfinished: check the one
    // just short of the end and one in the middle.
    for cut in [head.len - 1, head.len / 2] {
        assert_eq!(
            parse(&data[..cut]),
            Ok(None),
            "a prefix of {cut} bytes of an accepted head is not unfinished"
        );
    }
});

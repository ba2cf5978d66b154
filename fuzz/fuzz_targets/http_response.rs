//! The load generator's HTTP response parser on arbitrary bytes, as a
//! server (or anything listening on the port) could send them.
//!
//! The first byte of the input says where the rest is split in two, as
//! the network splits a response over reads. The parser must not panic,
//! and where a response ends must not depend on how the bytes arrived:
//! the split feed, the whole input in one read, and a reader that skips
//! the body bytes the parser says it need not see all agree.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sledge::http::response::{ParseError, ResponseParser};

/// What the parser made of a connection's bytes: each response's end (as
/// an offset into the stream) and status, then how the stream stopped.
#[derive(Debug, PartialEq)]
struct Outcome {
    responses: Vec<(usize, u16)>,
    error: Option<ParseError>,
    ended_by_close: bool,
}

/// Feeds `pieces` in turn; with `skip`, body bytes the parser calls
/// skippable are passed over with `skipped` instead of being fed.
fn run(pieces: &[&[u8]], skip: bool) -> Outcome {
    let mut parser = ResponseParser::default();
    let mut outcome = Outcome {
        responses: Vec::new(),
        error: None,
        ended_by_close: false,
    };
    let mut offset = 0;
    for piece in pieces {
        let mut rest = *piece;
        while !rest.is_empty() {
            if skip && parser.skippable() > 0 {
                let n = parser.skippable().min(rest.len() as u64);
                let ended = parser.skipped(n);
                rest = &rest[n as usize..];
                offset += n as usize;
                if ended {
                    outcome.responses.push((offset, parser.status()));
                }
                continue;
            }
            match parser.feed(rest) {
                Ok(Some(n)) => {
                    assert!(
                        n > 0 && n <= rest.len(),
                        "response end {n} of {}",
                        rest.len()
                    );
                    rest = &rest[n..];
                    offset += n;
                    outcome.responses.push((offset, parser.status()));
                }
                Ok(None) => {
                    offset += rest.len();
                    rest = &[];
                }
                Err(e) => {
                    outcome.error = Some(e);
                    return outcome;
                }
            }
        }
    }
    outcome.ended_by_close = parser.finish_on_close();
    outcome
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let at = usize::from(first) * stream.len() / 255;
    let (a, b) = stream.split_at(at);
    let split = run(&[a, b], false);
    // A head longer than the limit is refused when it is buffered over
    // reads but parsed when it is in one read; libFuzzer's inputs are far
    // shorter, and the limit's own test is in the parser's unit tests.
    assert_eq!(
        split,
        run(&[stream], false),
        "split at {at} differs from whole"
    );
    assert_eq!(
        split,
        run(&[a, b], true),
        "skipping bodies differs from reading them"
    );
});

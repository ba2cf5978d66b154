//! The line protocol between the coordinator of a distributed load and
//! its agents, on arbitrary lines, as a broken or hostile host (or a
//! mangled ssh session) could send them.
//!
//! Every message type is decoded from the input as a line; a result's
//! histograms are decoded as the coordinator does; and the histogram
//! decoder also gets the input as text and, base64-encoded, as the raw
//! bytes of a serialization. Nothing may panic, and a histogram that
//! decodes must survive encoding and decoding again unchanged.
//!
//! A load share is not turned into a generator configuration here: that
//! resolves its URLs' host names, which would send name lookups from a
//! fuzzer; the URL parser has its offline form in the `params` target.

#![no_main]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use libfuzzer_sys::fuzz_target;
use sledge::http::distributed::protocol::{
    AgentResult, FromAgent, ToAgent, decode_histogram, encode_histogram, to_line,
};

/// Decodes `text` as a histogram and, when it is one, checks the round
/// trip.
fn histogram(text: &str) {
    if let Ok(h) = decode_histogram(text) {
        let again = encode_histogram(&h).expect("a decoded histogram encodes");
        let back = decode_histogram(&again).expect("an encoded histogram decodes");
        assert_eq!(back, h, "a histogram changed on the wire");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        let line = line.trim_end();
        if let Ok(message) = serde_json::from_str::<ToAgent>(line) {
            // What the coordinator sends, the agent reads back the same.
            let back: ToAgent = serde_json::from_str(to_line(&message).trim_end())
                .expect("a message's own line decodes");
            assert_eq!(back, message);
        }
        match serde_json::from_str::<FromAgent>(line) {
            Ok(FromAgent::Result(result)) => {
                let _ = result.tally();
            }
            Ok(_) | Err(_) => {}
        }
        if let Ok(result) = serde_json::from_str::<AgentResult>(line) {
            let _ = result.tally();
        }
        histogram(line);
    }
    histogram(&BASE64.encode(data));
});

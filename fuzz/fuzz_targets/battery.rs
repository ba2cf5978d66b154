//! A battery file (`sledge run ./web-tier.toml`) on arbitrary text, as a
//! file someone else wrote could hold it.
//!
//! Nothing may panic; a battery that is accepted yields cases whose
//! parameters read back as `-p` would take them (each assignment splits
//! into a name and values), since that is the form they travel in to the
//! planner.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sledge::engine::params::split_assignment;
use sledge::suite::battery::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(profile) = parse(text, "fuzz") else {
        return;
    };
    assert!(!profile.entries.is_empty(), "an accepted battery has cases");
    for entry in &profile.entries {
        for assignment in &entry.params {
            let (name, values) = split_assignment(assignment)
                .unwrap_or_else(|e| panic!("battery assignment `{assignment}` does not split: {e}"));
            assert!(!name.is_empty() && !values.is_empty(), "{assignment}");
        }
    }
});

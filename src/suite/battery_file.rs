//! A battery file as a run carries it: where it was read from, its text
//! and the hash that tells two files apart.

use std::path::PathBuf;

use crate::results::{BATTERY_NOTE, BATTERY_TEXT_NOTE};

/// A battery as read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatteryFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its whole text.
    pub text: String,
    /// The SHA-256 of its text, in hex.
    pub sha256: String,
}

impl BatteryFile {
    /// The notes a run of it carries: its name and hash, and its text.
    pub fn notes(&self, name: &str) -> Vec<String> {
        vec![
            format!("{BATTERY_NOTE}={name} sha256:{}", self.sha256),
            format!("{BATTERY_TEXT_NOTE}={}", self.text),
        ]
    }
}

//! Cryptography workloads: the `openssl speed` battery.
//!
//! The algorithms live in [`algorithm`], behind one small trait, so that
//! the timing loop in [`speed`] cannot tell a digest from a cipher and the
//! known-answer tests exercise exactly the code that is timed.

pub mod algorithm;
pub mod speed;

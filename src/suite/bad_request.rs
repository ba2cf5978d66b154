//! A mistake in what the command line asked a run (or an A/B run) to do:
//! its own file, since both requests (`request.rs`, `ab/request.rs`)
//! report it and neither should import the other for it.

/// A mistake in the request, named with the flag it is about.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

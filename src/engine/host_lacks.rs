//! A case this host cannot run because something outside sledge is
//! missing (a program, a package's headers, the kernel source), as opposed
//! to a case whose parameters are wrong.
//!
//! The difference decides what a run does: a profile is a menu for any
//! host, so its cases that the host lacks something for are skipped with a
//! warning that says what to install; a workload the user named is refused,
//! as every case that cannot run is.

/// The host lacks what a workload needs; the message says what and how
/// to get it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HostLacks(pub String);

/// Whether `err` (or one of its causes) is a [`HostLacks`].
pub fn is_host_lacks(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.is::<HostLacks>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn found_anywhere_in_the_chain() {
        let lacks: anyhow::Result<()> = Err(HostLacks("no make".into()).into());
        let wrapped = lacks.context("building the case").unwrap_err();
        assert!(is_host_lacks(&wrapped));
        assert_eq!(format!("{wrapped:#}"), "building the case: no make");
        assert!(!is_host_lacks(&anyhow::anyhow!(
            "block_size must be a multiple of 16"
        )));
    }
}

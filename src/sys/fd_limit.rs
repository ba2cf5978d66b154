//! The open-file limit. Every connection is a file descriptor, on the
//! generator's side and on the server's; at concurrency 500 a default soft
//! limit of 1024 is too low for both in one process.

use anyhow::bail;

/// Raises the soft `RLIMIT_NOFILE` to at least `needed` (up to the hard
/// limit), or says which limit is in the way.
// `rlim_t` is u64 on 64-bit targets (the casts are no-ops there) and u32
// on i686.
#[allow(clippy::unnecessary_cast)]
pub fn ensure_open_files(needed: u64) -> anyhow::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if limit.rlim_cur as u64 >= needed {
        return Ok(());
    }
    if (limit.rlim_max as u64) < needed {
        bail!(
            "{needed} open files are needed but the hard limit (RLIMIT_NOFILE, `ulimit -Hn`) is {}; raise it (e.g. in /etc/security/limits.conf) or lower the concurrency",
            limit.rlim_max
        );
    }
    // At most the hard limit, so it fits in `rlim_t`.
    limit.rlim_cur = needed as libc::rlim_t;
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        let e = std::io::Error::last_os_error();
        bail!("raising the open-file limit (RLIMIT_NOFILE) to {needed} failed: {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_need_is_met() {
        ensure_open_files(64).unwrap();
    }

    #[test]
    fn an_impossible_need_names_the_limit() {
        let err = ensure_open_files(u64::MAX - 1).unwrap_err().to_string();
        assert!(err.contains("RLIMIT_NOFILE"), "{err}");
    }
}

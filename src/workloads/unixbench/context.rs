//! `unixbench.context`: UnixBench's pipe-based context switching
//! (`context1`), in loops per second.
//!
//! A copy forks a partner when released; the copy writes its loop counter to one pipe,
//! the partner reads it, checks it, and writes its own counter back on a
//! second pipe, which the copy reads and checks. Each loop is two context
//! switches when both processes share a CPU. When the time is up the copy
//! closes its pipes; the partner sees the end of its input and exits.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::libc_process::{self, Forked};
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use super::timed;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, Params, RunSection, Workload};

/// The counter passed back and forth (C's `unsigned long`).
type Counter = u64;
const COUNTER: usize = std::mem::size_of::<Counter>();

/// Exit codes of the partner.
const PARTNER_DONE: i32 = 0;
const PARTNER_IO_ERROR: i32 = 1;
const PARTNER_SYNC_ERROR: i32 = 2;

/// The `unixbench.context` workload.
pub struct ContextWorkload;

impl Workload for ContextWorkload {
    fn id(&self) -> &'static str {
        "unixbench.context"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "two processes passing a counter over two pipes, loops per second; UnixBench's context1 (\"Pipe-based Context Switching\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ContextWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = ContextWorkloadParams::from_set(p);
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Context,
            p.copies,
            p.time,
            None,
        )?))
    }

    /// Two processes pass a token back and forth.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        Some(2)
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("context1"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.context`.
    pub struct ContextWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("10"),
    }
}

/// One copy: once released, fork the partner and pass the counter for
/// `seconds`. The partner is forked after the start, as UnixBench's
/// program forks right before its loop: where the scheduler puts the two
/// processes (one CPU or two) decides the rate, and a partner forked
/// earlier and left waiting was placed differently (here up to 2-3 times
/// faster than UnixBench's placement).
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let (to_partner_read, to_partner_write) = libc_process::pipe().context("context: pipe")?;
    let (from_partner_read, from_partner_write) = libc_process::pipe().context("context: pipe")?;
    gate.open()?;
    let partner = match libc_process::fork().context("context: fork failed")? {
        Forked::Child => {
            drop(to_partner_write);
            drop(from_partner_read);
            let code = partner_loop(to_partner_read.as_raw_fd(), from_partner_write.as_raw_fd());
            libc_process::exit_now(code);
        }
        Forked::Parent(pid) => pid,
    };
    drop(to_partner_read);
    drop(from_partner_write);
    let outcome = lead(to_partner_write, &from_partner_read, seconds);
    let status = libc_process::wait_for(partner).context("context: waiting for the partner")?;
    let outcome = outcome?;
    if !libc_process::exited_cleanly(status) {
        bail!(
            "context: the partner failed ({}; 2 means it read a wrong counter)",
            libc_process::describe_status(status)
        );
    }
    Ok(outcome)
}

/// The copy's side: write the counter, read the partner's, check it.
/// Consumes the write end so that returning closes it.
fn lead(to_partner: OwnedFd, from_partner: &OwnedFd, seconds: f64) -> anyhow::Result<Outcome> {
    let (w, r) = (to_partner.as_raw_fd(), from_partner.as_raw_fd());
    let mut iter: Counter = 0;
    timed::run_for(seconds, 1, |_| {
        if !write_counter(w, iter) {
            bail!(
                "context: write to the partner failed: {}",
                std::io::Error::last_os_error()
            );
        }
        match read_counter(r) {
            Some(check) if check == iter => {}
            Some(check) => bail!("context: sync error: expected {iter}, got {check}"),
            None => bail!("context: the partner stopped answering"),
        }
        iter += 1;
        Ok(())
    })
}

/// The partner's side: read, check, answer, until the end of input.
/// Makes no allocation, so it is safe in any forked child.
fn partner_loop(from_lead: RawFd, to_lead: RawFd) -> i32 {
    let mut iter: Counter = 0;
    loop {
        match read_counter(from_lead) {
            None => return PARTNER_DONE,
            Some(check) if check != iter => return PARTNER_SYNC_ERROR,
            Some(_) => {}
        }
        if !write_counter(to_lead, iter) {
            return if std::io::Error::last_os_error().raw_os_error() == Some(libc::EPIPE) {
                PARTNER_DONE
            } else {
                PARTNER_IO_ERROR
            };
        }
        iter += 1;
    }
}

fn write_counter(fd: RawFd, value: Counter) -> bool {
    let bytes = value.to_ne_bytes();
    // SAFETY: `bytes` is valid for COUNTER bytes.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), COUNTER) == COUNTER as isize }
}

/// The next counter, or `None` at the end of input or on an error.
fn read_counter(fd: RawFd) -> Option<Counter> {
    let mut bytes = [0u8; COUNTER];
    // SAFETY: `bytes` is valid and writable for COUNTER bytes.
    let n = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), COUNTER) };
    (n == COUNTER as isize).then(|| Counter::from_ne_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_ping_pongs_with_its_partner() {
        // The partner only makes system calls, so forking from the
        // multi-threaded test harness is safe.
        let outcome = run_copy(0.05, &mut Gate::open_at_once()).unwrap();
        assert!(outcome.count >= 1.0, "{outcome:?}");
    }

    #[test]
    fn the_partner_stops_at_the_end_of_input_and_checks_the_counter() {
        let (r1, w1) = libc_process::pipe().unwrap();
        let (r2, w2) = libc_process::pipe().unwrap();
        assert!(write_counter(w1.as_raw_fd(), 0));
        assert!(write_counter(w1.as_raw_fd(), 1));
        assert!(write_counter(w1.as_raw_fd(), 5));
        drop(w1);
        assert_eq!(
            partner_loop(r1.as_raw_fd(), w2.as_raw_fd()),
            PARTNER_SYNC_ERROR
        );
        assert_eq!(read_counter(r2.as_raw_fd()), Some(0));
        assert_eq!(read_counter(r2.as_raw_fd()), Some(1));

        let (r1, w1) = libc_process::pipe().unwrap();
        drop(w1);
        assert_eq!(partner_loop(r1.as_raw_fd(), w2.as_raw_fd()), PARTNER_DONE);
    }
}

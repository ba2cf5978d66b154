//! Compute workloads: crypto.speed, memory.stream and memory.latency, end
//! to end with tiny parameters, plus the checks their numbers rest on.

use predicates::prelude::*;

use crate::common::{FAST, Sandbox};
use sledge::workloads::memory::chase;
use sledge::workloads::memory::stream_kernels::{self, Isa, Kernel, Share};

#[test]
fn every_algorithm_runs_at_one_and_two_copies() {
    Sandbox::new()
        .sledge()
        .args(["run", "crypto.speed"])
        .args([
            "-p",
            "algorithm=md5,sha256,sha512,aes-256-cbc,aes-128-gcm,aes-256-gcm,chacha20-poly1305",
            "-p",
            "block_size=16,1K",
            "-p",
            "copies=1,2",
            "-p",
            "time=0.01",
        ])
        .args(["--metrics", "all"])
        .args(FAST)
        .assert()
        .success()
        .stdout(predicate::str::contains("mb_per_sec_per_copy"))
        .stdout(predicate::str::contains(
            "algorithm=chacha20-poly1305 block_size=1K copies=2",
        ));
}

#[test]
fn stream_and_latency_run_small_cases() {
    Sandbox::new()
        .sledge()
        .args(["run", "memory.stream", "memory.latency"])
        .args([
            "-p",
            "array_size=100000",
            "-p",
            "ntimes=3",
            "-p",
            "copies=1,2",
        ])
        .args(["-p", "size=16K,1M", "-p", "time=0.02", "-p", "numa=remote"])
        .args(["--metrics", "all"])
        .args(FAST)
        .assert()
        .success()
        .stdout(predicate::str::contains("triad_mb_per_sec_per_copy"))
        .stdout(predicate::str::contains("ns_per_load"));
}

#[test]
fn bad_compute_parameters_name_the_allowed_values() {
    let usage_errors = [
        (
            "crypto.speed",
            "algorithm=rot13",
            "one of: md5, sha256, sha512, aes-256-cbc",
        ),
        ("crypto.speed", "block_size=0", "a size (1 to 16M"),
        ("crypto.speed", "copies=0", "a count from 1"),
        ("memory.latency", "size=1000", "a power of two, 16K to"),
        ("memory.latency", "numa=far", "one of: local, remote"),
        ("memory.stream", "ntimes=1", "an integer from 2 to 200"),
    ];
    for (workload, param, allowed) in usage_errors {
        Sandbox::new()
            .sledge()
            .args(["run", workload, "-p", param])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(allowed));
    }
    // Checks that need the whole case refuse the run before anything is
    // measured, with the reason.
    let case_errors = [
        (
            "crypto.speed",
            ["algorithm=aes-256-cbc", "block_size=100"],
            "must be a multiple of 16",
        ),
        (
            "memory.stream",
            ["array_size=100", "threads=1"],
            "too small to be meaningful; allowed is 0 (auto",
        ),
    ];
    for (workload, params, reason) in case_errors {
        let sandbox = Sandbox::new();
        let out = sandbox
            .sledge()
            .args(["run", workload, "-p", params[0], "-p", params[1]])
            .args(FAST)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{workload} {params:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{workload} {params:?} printed a run");
        assert!(stderr.contains(reason), "{workload} {params:?}: {stderr}");
    }
}

fn stream_arrays(n: usize, passes: u32) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut a, mut b, mut c) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut share = Share {
        a: &mut a,
        b: &mut b,
        c: &mut c,
    };
    stream_kernels::initialise(&mut share);
    for _ in 0..passes {
        for kernel in Kernel::ALL {
            stream_kernels::run(kernel, &mut share, Isa::detect());
        }
    }
    (a, b, c)
}

#[test]
fn stream_validation_catches_a_corrupted_array() {
    let (mut a, mut b, mut c) = stream_arrays(10_000, 10);
    let share = Share {
        a: &mut a,
        b: &mut b,
        c: &mut c,
    };
    stream_kernels::validate(&share, 10).expect("a clean run validates");

    // One element of b off by one part in a billion is caught and named.
    let (mut a, mut b, mut c) = stream_arrays(10_000, 10);
    b[1234] *= 1.0 + 1e-9;
    let share = Share {
        a: &mut a,
        b: &mut b,
        c: &mut c,
    };
    let err = stream_kernels::validate(&share, 10).unwrap_err();
    assert_eq!((err.array, err.wrong, err.index), ('b', 1, 1234));
    assert!(
        err.to_string().contains("STREAM validation failed"),
        "{err}"
    );
}

#[test]
fn the_latency_chase_is_one_cycle_through_every_line() {
    let lines = 4096;
    let mut buffer = vec![0u8; lines * chase::LINE + chase::LINE];
    // Align the start to a line, as the page-aligned mapping is.
    let offset = buffer.as_ptr().align_offset(chase::LINE);
    let region = &mut buffer[offset..offset + lines * chase::LINE];
    let base = region.as_ptr() as usize;
    let start = chase::link(region, &chase::single_cycle(lines, 7));
    let mut seen = vec![false; lines];
    let mut p = start;
    for _ in 0..lines {
        let line = (p as usize - base) / chase::LINE;
        assert!(!seen[line], "line {line} visited twice");
        seen[line] = true;
        p = unsafe { *p } as *const usize;
    }
    assert_eq!(
        p, start,
        "the chase did not close after visiting every line"
    );
    assert!(seen.iter().all(|&s| s));
    // The timed loop follows the same links: 16 x lines loads end at the start.
    assert_eq!(unsafe { chase::chase(start, 16 * lines as u64) }, start);
}

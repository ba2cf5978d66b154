//! `unixbench.whetstone`: the double-precision Whetstone as UnixBench runs
//! it (`whetstone-double`), in MWIPS.
//!
//! Curnow and Wichmann's Whetstone (1976) in Roy Longbottom's C/C++ version
//! of 1996 ("whets.c"), which UnixBench builds with `-DDP -DUNIXBENCH`: the
//! eight sections N1 to N8 (array elements, array as parameter, conditional
//! jumps, integer arithmetic, trigonometric functions, procedure calls,
//! array references, standard functions), each a loop repeated `xtra`
//! times. The program calibrates `xtra` by running with 1, 5, 25, ...
//! passes until one run takes over half a second (UnixBench's threshold for
//! its 10-second duration; scaled down for shorter durations here), sets
//! `xtra` so that the measured run lasts the duration, runs, and reports
//! `MWIPS = xtra * 100 / (10 * seconds)`, section 1's time divided by its
//! extra factor of 10. Sections are timed with the wall clock, as
//! UnixBench's `-DGTODay` build does.
//!
//! The trigonometric and exponential functions are the C library's (Rust's
//! `f64::sin` and friends call libm), as in the C version. UnixBench
//! compiles with `-O3 -ffast-math`, which lets gcc reassociate and
//! vectorise the floating-point sections; Rust keeps IEEE semantics, so the
//! scores differ (see `bench/unixbench.sh`).

use std::hint::black_box;
use std::time::Instant;

use super::case::{UnixbenchCase, copies_param, time_param};
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, Params, RunSection, Workload};

/// The inner-loop multiplier (`x100`): each section's loop count is a
/// constant times 100.
const X100: i64 = 100;

/// Section 1 runs this many times longer than the others; its time is
/// divided by it.
const N1_MULT: i64 = 10;

/// UnixBench's calibration threshold for its 10 s duration: calibrate until
/// a run takes over 0.5 s.
const CALIBRATION_SECONDS: f64 = 0.5;

/// The most calibration runs (whets.c's `count = 10`).
const CALIBRATION_RUNS: u32 = 10;

/// What one `whetstones()` call produced: the time of each section (index
/// 1 to 8, section 1 already divided by [`N1_MULT`]) and the value each
/// section leaves behind (its "Result" column).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pass {
    pub seconds: [f64; 9],
    pub results: [f64; 9],
}

impl Pass {
    /// The sum of the section times (whets.c's `TimeUsed`).
    pub fn time_used(&self) -> f64 {
        self.seconds[1..].iter().sum()
    }
}

/// whets.c's `whetstones(xtra, x100, calibrate)`: every section `xtra`
/// times.
pub fn whetstones(xtra: i64, x100: i64) -> Pass {
    let mut pass = Pass::default();
    // The pass count comes from the calibration at run time in C: keep it
    // opaque so the compiler cannot fold whole sections for a known count.
    let xtra = black_box(xtra);

    let mut t: f64 = 0.49999975;
    let t0 = t;
    let t1: f64 = 0.50000025;
    let t2: f64 = 2.0;

    let n1 = 12 * x100;
    let n2 = 14 * x100;
    let n3 = 345 * x100;
    let n4 = 210 * x100;
    let n5 = 32 * x100;
    let n6 = 899 * x100;
    let n7 = 616 * x100;
    let n8 = 93 * x100;

    // Section 1, array elements.
    let mut e1: [f64; 4] = [1.0, -1.0, -1.0, -1.0];
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n1 * N1_MULT {
            e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
            e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
            e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
            e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        }
        t = 1.0 - t;
    }
    t = t0;
    pass.seconds[1] = start.elapsed().as_secs_f64() / N1_MULT as f64;
    pass.results[1] = e1[3];

    // Section 2, array as parameter.
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n2 {
            pa(&mut e1, t, t2);
        }
        t = 1.0 - t;
    }
    t = t0;
    pass.seconds[2] = start.elapsed().as_secs_f64();
    pass.results[2] = e1[3];

    // Section 3, conditional jumps.
    let mut j: i64 = 1;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n3 {
            j = if j == 1 { 2 } else { 3 };
            j = if j > 2 { 0 } else { 1 };
            j = if j < 1 { 1 } else { 0 };
        }
    }
    pass.seconds[3] = start.elapsed().as_secs_f64();
    pass.results[3] = j as f64;

    // Section 4, integer arithmetic.
    j = 1;
    let mut k: i64 = 2;
    let mut l: i64 = 3;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n4 {
            j = j * (k - j) * (l - k);
            k = l * k - (l - j) * k;
            l = (l - k) * (k + j);
            e1[(l - 2) as usize] = (j + k + l) as f64;
            e1[(k - 2) as usize] = (j * k * l) as f64;
        }
    }
    pass.seconds[4] = start.elapsed().as_secs_f64();
    pass.results[4] = e1[0] + e1[1];

    // Section 5, trigonometric functions.
    let mut x: f64 = 0.5;
    let mut y: f64 = 0.5;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 1..n5 {
            x = t * (t2 * x.sin() * x.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            y = t * (t2 * y.sin() * y.cos() / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        }
        t = 1.0 - t;
    }
    t = t0;
    pass.seconds[5] = start.elapsed().as_secs_f64();
    pass.results[5] = y;

    // Section 6, procedure calls.
    x = 1.0;
    y = 1.0;
    let mut z: f64 = 1.0;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n6 {
            p3(&mut x, &mut y, &mut z, t, t1, t2);
        }
    }
    pass.seconds[6] = start.elapsed().as_secs_f64();
    pass.results[6] = z;

    // Section 7, array references.
    j = 0;
    k = 1;
    l = 2;
    e1[0] = 1.0;
    e1[1] = 2.0;
    e1[2] = 3.0;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n7 {
            po(&mut e1, j as usize, k as usize, l as usize);
        }
    }
    pass.seconds[7] = start.elapsed().as_secs_f64();
    pass.results[7] = e1[2];

    // Section 8, standard functions.
    x = 0.75;
    let start = Instant::now();
    for _ in 0..xtra {
        for _ in 0..n8 {
            x = ((x.ln() / t1).exp()).sqrt();
        }
    }
    pass.seconds[8] = start.elapsed().as_secs_f64();
    pass.results[8] = x;

    pass
}

/// whets.c's `pa`: the array as a parameter, six rounds.
#[inline]
fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

/// whets.c's `po`: three array assignments.
#[inline]
fn po(e1: &mut [f64; 4], j: usize, k: usize, l: usize) {
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

/// whets.c's `p3`: assignments through pointers.
#[inline]
fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t1: f64, t2: f64) {
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

/// The calibration of whets.c's `main`: passes of 1, 5, 25, ... until one
/// takes over `threshold` seconds (at most 10 tries), then the `xtra` that
/// should last `seconds`.
pub fn calibrate(seconds: f64, threshold: f64) -> i64 {
    let mut xtra: i64 = 1;
    let mut time_used = 0.0;
    for _ in 0..CALIBRATION_RUNS {
        time_used = whetstones(xtra, X100).time_used();
        if time_used > threshold {
            break;
        }
        xtra *= 5;
    }
    if time_used > 0.0 {
        xtra = (seconds * xtra as f64 / time_used) as i64;
    }
    xtra.max(1)
}

/// MWIPS of a run of `xtra` passes that took `time_used` seconds.
pub fn mwips(xtra: i64, time_used: f64) -> f64 {
    if time_used > 0.0 {
        xtra as f64 * X100 as f64 / (10.0 * time_used)
    } else {
        0.0
    }
}

/// The `unixbench.whetstone` workload.
pub struct WhetstoneWorkload;

impl Workload for WhetstoneWorkload {
    fn id(&self) -> &'static str {
        "unixbench.whetstone"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "double-precision Whetstone in MWIPS; UnixBench's whetstone-double (\"Double-Precision Whetstone\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        WhetstoneWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = WhetstoneWorkloadParams::from_set(p);
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Whetstone,
            p.copies,
            p.time,
            None,
        )?))
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("whetstone-double"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.whetstone`.
    pub struct WhetstoneWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("10"),
    }
}

/// One copy: calibrate, then one measured run of about `seconds`.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let xtra = calibrate(seconds, CALIBRATION_SECONDS.min(seconds / 20.0));
    gate.open()?;
    let pass = whetstones(xtra, X100);
    let time_used = pass.time_used();
    Ok(Outcome {
        count: mwips(xtra, time_used),
        seconds: time_used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "Result" column of whets.c's published double-precision run
    /// (Watcom C/C++ 10.5, Win32NT): the values one pass leaves behind.
    /// "Slight variations are normal with different compilers", so they
    /// are compared to 1e-9. The digits are kept as published.
    #[allow(clippy::excessive_precision)]
    const PUBLISHED: [f64; 9] = [
        0.0,
        -1.12398255667391900,
        -1.12187079889284400,
        1.0,
        12.0,
        0.49902937281515140,
        0.99999987890802820,
        3.0,
        0.75100163018457870,
    ];

    #[test]
    fn one_pass_leaves_the_published_values() {
        let pass = whetstones(1, X100);
        for (section, &want) in PUBLISHED.iter().enumerate().skip(1) {
            let got = pass.results[section];
            assert!(
                (got - want).abs() < 1e-9,
                "section {section}: {got} instead of {want}"
            );
            assert!(pass.seconds[section] >= 0.0);
        }
        assert!(pass.time_used() > 0.0);
    }

    #[test]
    fn mwips_follow_whets_c() {
        // whets.c's example: 676 passes (x 100) in about 100 s, 67.5 MWIPS.
        assert!((mwips(676, 100.134) - 67.50951).abs() < 1e-4);
        assert_eq!(mwips(5, 0.0), 0.0);
    }

    #[test]
    fn calibration_aims_at_the_duration() {
        let xtra = calibrate(0.2, 0.01);
        let pass = whetstones(xtra, X100);
        // Noisy hosts: only check it is the right order of magnitude.
        assert!(
            pass.time_used() > 0.02 && pass.time_used() < 2.0,
            "{xtra} passes took {} s",
            pass.time_used()
        );
    }
}

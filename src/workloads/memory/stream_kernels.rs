//! STREAM's four kernels on one thread's share of the arrays, and the
//! check of their results.
//!
//! The reference is STREAM built with `gcc -O3 -march=native`: plain
//! loops that gcc vectorises to the widest registers the CPU has, with
//! ordinary stores (gcc 12 emits no non-temporal stores and no `memcpy`
//! for them), so the write-allocate traffic STREAM does not count is paid
//! but not counted. We do the same: Scale, Add and Triad are plain loops
//! built three times, for AVX-512, AVX2 and the baseline, with the widest
//! one the CPU supports chosen at run time; Copy is written with vector
//! loads and stores because the compiler would otherwise turn the loop
//! into a `memcpy` call, and glibc's `memcpy` switches to non-temporal
//! stores for large copies, which would make Copy a different
//! measurement from STREAM's. The vector kernels are built for 32-bit x86
//! (i686) too, so that a 32-bit sledge runs the same kernels as a 64-bit
//! one, with the 8 vector registers that mode has instead of 16.

/// STREAM's scalar (`scalar = 3.0`).
pub const SCALAR: f64 = 3.0;

/// Relative error allowed per element: STREAM's `epsilon` for doubles.
pub const EPSILON: f64 = 1e-13;

/// The four kernels in STREAM's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Copy,
    Scale,
    Add,
    Triad,
}

impl Kernel {
    /// In the order a STREAM pass runs them.
    pub const ALL: [Kernel; 4] = [Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad];

    /// Bytes STREAM counts per element: two arrays touched for Copy and
    /// Scale, three for Add and Triad (8-byte doubles).
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale => 16,
            Kernel::Add | Kernel::Triad => 24,
        }
    }

    /// Lower-case name, used in metric names.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
        }
    }
}

/// One thread's share of the three arrays (equal lengths).
pub struct Share<'a> {
    pub a: &'a mut [f64],
    pub b: &'a mut [f64],
    pub c: &'a mut [f64],
}

/// Which vector width the kernels use, found once per case.
///
/// An opaque token: outside this module it can only be had from
/// [`Isa::detect`] (or [`Isa::BASELINE`], which needs nothing), so holding
/// an `Isa` proves the CPU has every feature its kernels were compiled
/// for, and [`run`] can stay a safe function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isa(Level);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "x86")),
    allow(dead_code)
)]
enum Level {
    /// AVX-512 kernels: built with `avx512f,avx2,fma`.
    Avx512,
    /// AVX2 kernels: built with `avx2,fma`.
    Avx2,
    Baseline,
}

/// The features the AVX-512 kernels are compiled with (`kernels_for!` and
/// `vector_copy!` below); detection must check every one of them.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn has_avx512_kernel_features() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
}

/// The features the AVX2 kernels are compiled with.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn has_avx2_kernel_features() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

impl Isa {
    /// Plain loops: safe on every CPU.
    pub const BASELINE: Isa = Isa(Level::Baseline);

    /// The widest the CPU supports, with all the features its kernels
    /// enable.
    pub fn detect() -> Isa {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        {
            if has_avx512_kernel_features() {
                return Isa(Level::Avx512);
            }
            if has_avx2_kernel_features() {
                return Isa(Level::Avx2);
            }
        }
        Isa::BASELINE
    }
}

/// Copy for the baseline: element by element. (Only used where neither
/// AVX2 nor AVX-512 exists; the compiler may make it a `memcpy`.)
#[inline(always)]
fn copy_loop(c: &mut [f64], a: &[f64]) {
    c.copy_from_slice(a);
}

/// Copy with explicit vector loads and stores, four registers per step, so
/// that the compiler cannot turn it into a `memcpy` call.
macro_rules! vector_copy {
    ($name:ident, $features:literal, $vector:ty, $lanes:literal, $load:ident, $store:ident) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        #[target_feature(enable = $features)]
        fn $name(c: &mut [f64], a: &[f64]) {
            #[cfg(target_arch = "x86")]
            use std::arch::x86::*;
            #[cfg(target_arch = "x86_64")]
            use std::arch::x86_64::*;
            let n = c.len().min(a.len());
            const STEP: usize = 4 * $lanes;
            let mut i = 0;
            while i + STEP <= n {
                // SAFETY: i + STEP <= n, the length of both slices;
                // unaligned loads and stores need no alignment.
                unsafe {
                    let pa = a.as_ptr().add(i);
                    let pc = c.as_mut_ptr().add(i);
                    let v0: $vector = $load(pa);
                    let v1: $vector = $load(pa.add($lanes));
                    let v2: $vector = $load(pa.add(2 * $lanes));
                    let v3: $vector = $load(pa.add(3 * $lanes));
                    $store(pc, v0);
                    $store(pc.add($lanes), v1);
                    $store(pc.add(2 * $lanes), v2);
                    $store(pc.add(3 * $lanes), v3);
                }
                i += STEP;
            }
            for j in i..n {
                c[j] = a[j];
            }
        }
    };
}

vector_copy!(
    copy_avx512,
    "avx512f",
    __m512d,
    8,
    _mm512_loadu_pd,
    _mm512_storeu_pd
);
vector_copy!(
    copy_avx2,
    "avx2",
    __m256d,
    4,
    _mm256_loadu_pd,
    _mm256_storeu_pd
);

#[inline(always)]
fn scale_loop(b: &mut [f64], c: &[f64]) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = SCALAR * *c;
    }
}

#[inline(always)]
fn add_loop(c: &mut [f64], a: &[f64], b: &[f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = *a + *b;
    }
}

#[inline(always)]
fn triad_loop(a: &mut [f64], b: &[f64], c: &[f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = *b + SCALAR * *c;
    }
}

/// Builds the plain-loop kernels for one instruction set.
macro_rules! kernels_for {
    ($module:ident, $features:literal) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        mod $module {
            #[target_feature(enable = $features)]
            pub fn scale(b: &mut [f64], c: &[f64]) {
                super::scale_loop(b, c)
            }
            #[target_feature(enable = $features)]
            pub fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
                super::add_loop(c, a, b)
            }
            #[target_feature(enable = $features)]
            pub fn triad(a: &mut [f64], b: &[f64], c: &[f64]) {
                super::triad_loop(a, b, c)
            }
        }
    };
}

// Keep these feature lists in step with `has_avx512_kernel_features` and
// `has_avx2_kernel_features`.
kernels_for!(avx512, "avx512f,avx2,fma");
kernels_for!(avx2, "avx2,fma");

/// Runs `kernel` over `share` with the instruction set `isa`.
#[inline]
pub fn run(kernel: Kernel, share: &mut Share<'_>, isa: Isa) {
    // SAFETY (every `unsafe` below): an `Isa` other than the baseline is
    // made only by `Isa::detect`, after checking that the CPU has every
    // feature the chosen functions were compiled with.
    match kernel {
        Kernel::Copy => match isa.0 {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx512 => unsafe { copy_avx512(share.c, share.a) },
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx2 => unsafe { copy_avx2(share.c, share.a) },
            _ => copy_loop(share.c, share.a),
        },
        Kernel::Scale => match isa.0 {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx512 => unsafe { avx512::scale(share.b, share.c) },
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx2 => unsafe { avx2::scale(share.b, share.c) },
            _ => scale_loop(share.b, share.c),
        },
        Kernel::Add => match isa.0 {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx512 => unsafe { avx512::add(share.c, share.a, share.b) },
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx2 => unsafe { avx2::add(share.c, share.a, share.b) },
            _ => add_loop(share.c, share.a, share.b),
        },
        Kernel::Triad => match isa.0 {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx512 => unsafe { avx512::triad(share.a, share.b, share.c) },
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            Level::Avx2 => unsafe { avx2::triad(share.a, share.b, share.c) },
            _ => triad_loop(share.a, share.b, share.c),
        },
    }
}

/// Sets a share to STREAM's starting values (a = 1, b = 2, c = 0, then
/// a = 2a, as STREAM does while it checks the timer). This write is also
/// the first touch that places the pages near the thread that uses them.
pub fn initialise(share: &mut Share<'_>) {
    share.a.fill(1.0);
    share.b.fill(2.0);
    share.c.fill(0.0);
    for a in share.a.iter_mut() {
        *a *= 2.0;
    }
}

/// The values every element of a, b and c should hold after `passes`
/// STREAM passes from [`initialise`], computed as STREAM's
/// `checkSTREAMresults` does.
pub fn expected_after(passes: u32) -> [f64; 3] {
    let (mut a, mut b, mut c) = (1.0_f64, 2.0_f64, 0.0_f64);
    a *= 2.0;
    for _ in 0..passes {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    [a, b, c]
}

/// A result that does not match what STREAM expects.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "STREAM validation failed: array {array} has {wrong} element(s) off by more than {EPSILON:e} relative; first at index {index}: {found}, expected {expected}"
)]
pub struct ValidationError {
    /// `a`, `b` or `c`.
    pub array: char,
    /// How many elements of that array are wrong.
    pub wrong: u64,
    /// The first wrong element's index within the share.
    pub index: usize,
    /// Its value.
    pub found: f64,
    /// The value it should have.
    pub expected: f64,
}

/// Checks every element of a share against [`expected_after`]`(passes)`.
/// STREAM compares the average error per array, which a single bad
/// element can hide in; we check each element, which costs one untimed
/// read of the arrays.
pub fn validate(share: &Share<'_>, passes: u32) -> Result<(), ValidationError> {
    let expected = expected_after(passes);
    for (array, values, want) in [
        ('a', &*share.a, expected[0]),
        ('b', &*share.b, expected[1]),
        ('c', &*share.c, expected[2]),
    ] {
        // NaN fails the comparison, so it counts as wrong.
        let close = |x: f64| (x - want).abs() <= EPSILON * want.abs();
        let off = |x: f64| !close(x);
        let wrong = values.iter().filter(|&&x| off(x)).count() as u64;
        if wrong > 0 {
            let index = values.iter().position(|&x| off(x)).unwrap_or(0);
            return Err(ValidationError {
                array,
                wrong,
                index,
                found: values[index],
                expected: want,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays(n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        (vec![0.0; n], vec![0.0; n], vec![0.0; n])
    }

    #[test]
    fn every_isa_computes_the_same_passes() {
        for isa in [Isa::detect(), Isa::BASELINE] {
            let (mut a, mut b, mut c) = arrays(1003);
            let mut share = Share {
                a: &mut a,
                b: &mut b,
                c: &mut c,
            };
            initialise(&mut share);
            for _ in 0..5 {
                for k in Kernel::ALL {
                    run(k, &mut share, isa);
                }
            }
            validate(&share, 5).unwrap();
            assert!(validate(&share, 4).is_err());
        }
    }
}

//! The effective clock of the run's CPUs during a trial: how fast the
//! cores really ran, which on real hardware drifts with turbo budgets,
//! power limits, temperature and the governor.
//!
//! Three sources, best first:
//!
//! 1. **APERF/MPERF** from `/dev/cpu/N/msr` (x86; root and the `msr`
//!    module). APERF counts busy cycles at the actual clock, MPERF busy
//!    cycles at the TSC rate, so `TSC rate × ΔAPERF / ΔMPERF` is the mean
//!    clock while busy (turbostat's `Bzy_MHz`).
//! 2. **perf `cycles` and `ref-cycles`** of each CPU (see
//!    [`perf_counters`](super::perf_counters)): the same ratio where the
//!    kernel exposes a hardware PMU.
//! 3. **cpufreq `scaling_cur_freq`**, sampled with the monitor's other
//!    counters during the trial and averaged, each sample weighted by how
//!    busy its CPU was in the interval it ends (an idle CPU's low clock
//!    says nothing about the workload's). Readable by everyone; coarser,
//!    since it is the kernel's estimate at the sampling instant.
//!
//! Otherwise the clock is not available (a VM without any of these), which
//! the run says once. The TSC rate the counters need is measured over the
//! trial itself, from `rdtsc` against the monotonic clock read right next
//! to it (so a slow read of the counters does not bend the rate), and so
//! needs an invariant TSC (`constant_tsc` and `nonstop_tsc` in
//! `/proc/cpuinfo`).
//!
//! Readers take a root directory so that tests run on fixture trees.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::perf_counters::{self, CycleCounters};
use super::sysfs_value::{ReadFailure, read_text, read_u64};

/// `IA32_MPERF`: busy cycles at the TSC rate.
pub(crate) const MSR_MPERF: u64 = 0xE7;
/// `IA32_APERF`: busy cycles at the actual clock.
pub(crate) const MSR_APERF: u64 = 0xE8;

/// Where a trial's effective clock came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// APERF/MPERF model-specific registers.
    AperfMperf,
    /// perf `cycles` / `ref-cycles`.
    PerfCycles,
    /// cpufreq `scaling_cur_freq`, sampled.
    Cpufreq,
}

/// How this host's clock will be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockMethod {
    Msr,
    Perf,
    Cpufreq,
}

/// What [`discover`] found: the method to use, and why the better ones
/// cannot be (or why none can).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClockDiscovery {
    pub method: Option<ClockMethod>,
    pub why_not: Vec<String>,
}

/// The TSC now, on x86-64 and 32-bit x86 (i686).
pub(crate) fn tsc_now() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc reads a counter and has no other effect; every
        // x86-64 CPU has it.
        #[allow(unused_unsafe)]
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(target_arch = "x86")]
    {
        // SAFETY: as above; every CPU the i686 target runs on (Pentium
        // Pro and later) has rdtsc.
        #[allow(unused_unsafe)]
        Some(unsafe { core::arch::x86::_rdtsc() })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    {
        None
    }
}

/// The TSC and the monotonic clock (nanoseconds since an origin fixed for
/// the process), read back to back.
fn tsc_and_time() -> Option<(u64, u64)> {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    let tsc = tsc_now()?;
    let ns = u64::try_from(origin.elapsed().as_nanos()).ok()?;
    Some((tsc, ns))
}

/// Whether `/proc/cpuinfo` under `root` says the TSC ticks at a constant
/// rate through frequency changes and idle states.
fn tsc_is_invariant(root: &Path) -> bool {
    let Ok(text) = read_text(&root.join("proc/cpuinfo")) else {
        return false;
    };
    text.lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .is_some_and(|(_, flags)| {
            let flags: Vec<&str> = flags.split_whitespace().collect();
            flags.contains(&"constant_tsc") && flags.contains(&"nonstop_tsc")
        })
}

/// `/dev/cpu/N/msr` under `root`.
fn msr_path(root: &Path, cpu: usize) -> PathBuf {
    root.join(format!("dev/cpu/{cpu}/msr"))
}

/// `scaling_cur_freq` of `cpu` under `root`.
fn cur_freq_path(root: &Path, cpu: usize) -> PathBuf {
    root.join(format!(
        "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"
    ))
}

/// Reads one 64-bit MSR: the msr device maps register numbers to file
/// offsets.
pub(crate) fn read_msr(file: &File, register: u64) -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    file.read_exact_at(&mut bytes, register)?;
    Ok(u64::from_le_bytes(bytes))
}

/// `(APERF, MPERF)` of one CPU.
fn read_aperf_mperf(file: &File) -> std::io::Result<(u64, u64)> {
    Ok((read_msr(file, MSR_APERF)?, read_msr(file, MSR_MPERF)?))
}

/// Finds the best clock source of the host under `root`, trying it on
/// `probe_cpu`. perf is only tried when `real_host` (counters are the
/// kernel's, not files a fixture can hold).
pub(crate) fn discover(root: &Path, probe_cpu: usize, real_host: bool) -> ClockDiscovery {
    let mut why_not = Vec::new();
    let counters_timed = tsc_now().is_some() && tsc_is_invariant(root);
    if !counters_timed {
        why_not.push("no invariant TSC to time cycle counters".to_string());
    } else {
        let path = msr_path(root, probe_cpu);
        match File::open(&path) {
            Ok(file) => match read_aperf_mperf(&file) {
                Ok(_) => {
                    return ClockDiscovery {
                        method: Some(ClockMethod::Msr),
                        why_not,
                    };
                }
                Err(err) => why_not.push(format!(
                    "APERF/MPERF not readable from {} ({err})",
                    path.display()
                )),
            },
            Err(err) => why_not.push(match ReadFailure::of(&err) {
                ReadFailure::Missing => format!(
                    "no {} (the msr module is not loaded: modprobe msr)",
                    path.display()
                ),
                ReadFailure::Denied => format!("{} needs root", path.display()),
                ReadFailure::Unreadable => format!("{} cannot be opened ({err})", path.display()),
            }),
        }
        if real_host {
            match CycleCounters::open(probe_cpu) {
                Ok(_) => {
                    return ClockDiscovery {
                        method: Some(ClockMethod::Perf),
                        why_not,
                    };
                }
                Err(err) => why_not.push(perf_counters::explain(&err)),
            }
        }
    }
    let path = cur_freq_path(root, probe_cpu);
    match read_u64(&path) {
        Ok(_) => ClockDiscovery {
            method: Some(ClockMethod::Cpufreq),
            why_not,
        },
        Err(failure) => {
            why_not.push(match failure {
                ReadFailure::Missing => "no cpufreq scaling_cur_freq".to_string(),
                ReadFailure::Denied => format!("{} needs root", path.display()),
                ReadFailure::Unreadable => format!("{} is unreadable", path.display()),
            });
            ClockDiscovery {
                method: None,
                why_not,
            }
        }
    }
}

/// The clock readers of one trial's CPUs.
#[derive(Debug)]
pub(crate) enum ClockReaders {
    Msr(Vec<(usize, Option<File>)>),
    Perf(Vec<(usize, Option<CycleCounters>)>),
    Cpufreq(Vec<(usize, PathBuf)>),
}

/// One reading of the clock source.
#[derive(Debug, Clone, PartialEq)]
pub enum ClockReading {
    /// Cycle counters, read at the start and end of a trial: per CPU
    /// `(cycles at the actual clock, cycles at the TSC rate)`, and the TSC
    /// and the monotonic clock read right after them.
    Counters {
        /// Which counters.
        source: ClockSource,
        /// The TSC at the reading.
        tsc: u64,
        /// The monotonic clock at the TSC's reading, nanoseconds from an
        /// arbitrary origin.
        tsc_ns: u64,
        /// Per CPU number, its counters if they could be read.
        per_cpu: Vec<(usize, Option<(u64, u64)>)>,
    },
    /// cpufreq's current clock per CPU number, in kHz.
    Cpufreq(Vec<(usize, Option<u64>)>),
}

impl ClockReaders {
    /// Opens the readers of `method` for `cpus` under `root`. A CPU whose
    /// reader cannot be opened is left out of the readings.
    pub(crate) fn open(root: &Path, method: ClockMethod, cpus: &[usize]) -> Self {
        match method {
            ClockMethod::Msr => ClockReaders::Msr(
                cpus.iter()
                    .map(|&cpu| (cpu, File::open(msr_path(root, cpu)).ok()))
                    .collect(),
            ),
            ClockMethod::Perf => ClockReaders::Perf(
                cpus.iter()
                    .map(|&cpu| (cpu, CycleCounters::open(cpu).ok()))
                    .collect(),
            ),
            ClockMethod::Cpufreq => ClockReaders::Cpufreq(
                cpus.iter()
                    .map(|&cpu| (cpu, cur_freq_path(root, cpu)))
                    .collect(),
            ),
        }
    }

    /// Reads the clock. Counters are read at the trial's edges only (they
    /// count the whole interval by themselves); cpufreq at every sample.
    pub(crate) fn read(&self, edge: bool) -> Option<ClockReading> {
        match self {
            ClockReaders::Msr(files) if edge => {
                let per_cpu = files
                    .iter()
                    .map(|(cpu, file)| (*cpu, file.as_ref().and_then(|f| read_aperf_mperf(f).ok())))
                    .collect();
                let (tsc, tsc_ns) = tsc_and_time()?;
                Some(ClockReading::Counters {
                    source: ClockSource::AperfMperf,
                    tsc,
                    tsc_ns,
                    per_cpu,
                })
            }
            ClockReaders::Perf(counters) if edge => {
                let per_cpu = counters
                    .iter()
                    .map(|(cpu, c)| (*cpu, c.as_ref().and_then(|c| c.read().ok())))
                    .collect();
                let (tsc, tsc_ns) = tsc_and_time()?;
                Some(ClockReading::Counters {
                    source: ClockSource::PerfCycles,
                    tsc,
                    tsc_ns,
                    per_cpu,
                })
            }
            ClockReaders::Cpufreq(paths) => Some(ClockReading::Cpufreq(
                paths
                    .iter()
                    .map(|(cpu, path)| (*cpu, read_u64(path).ok()))
                    .collect(),
            )),
            _ => None,
        }
    }
}

/// Folds a trial's clock readings into its effective clock.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClockAccumulator {
    /// The first and the latest counter readings.
    first_counters: Option<ClockReading>,
    last_counters: Option<ClockReading>,
    /// cpufreq: Σ kHz × busy ticks and Σ busy ticks.
    busy_weighted: (f64, f64),
    /// cpufreq: Σ kHz × seconds and Σ seconds, for when no CPU was busy
    /// (or busy time is unknown).
    time_weighted: (f64, f64),
    /// cpufreq: the plain mean of the first reading, for a trial with no
    /// interval at all.
    first_mean_khz: Option<f64>,
}

impl ClockAccumulator {
    /// Takes a reading ending an interval of `interval` seconds (0 for the
    /// first reading) in which each CPU (indexed by number) was busy
    /// `busy[cpu]` ticks (an empty slice when unknown).
    pub(crate) fn push(&mut self, interval: f64, reading: &ClockReading, busy: &[u64]) {
        match reading {
            ClockReading::Counters { .. } => {
                if self.first_counters.is_none() {
                    self.first_counters = Some(reading.clone());
                } else {
                    self.last_counters = Some(reading.clone());
                }
            }
            ClockReading::Cpufreq(per_cpu) => {
                let known: Vec<(usize, f64)> = per_cpu
                    .iter()
                    .filter_map(|(cpu, khz)| khz.map(|k| (*cpu, k as f64)))
                    .collect();
                if known.is_empty() {
                    return;
                }
                if self.first_mean_khz.is_none() {
                    self.first_mean_khz =
                        Some(known.iter().map(|(_, k)| k).sum::<f64>() / known.len() as f64);
                }
                if interval <= 0.0 || !interval.is_finite() {
                    return;
                }
                for (cpu, khz) in known {
                    let weight = busy.get(cpu).copied().unwrap_or(0) as f64;
                    self.busy_weighted.0 += khz * weight;
                    self.busy_weighted.1 += weight;
                    self.time_weighted.0 += khz * interval;
                    self.time_weighted.1 += interval;
                }
            }
        }
    }

    /// The effective clock in MHz and where it came from; `None` when no
    /// reading gave one.
    pub(crate) fn finish(&self) -> Option<(f64, ClockSource)> {
        if let (Some(first), Some(last)) = (&self.first_counters, &self.last_counters) {
            return counters_mhz(first, last);
        }
        let khz = if self.busy_weighted.1 > 0.0 {
            self.busy_weighted.0 / self.busy_weighted.1
        } else if self.time_weighted.1 > 0.0 {
            self.time_weighted.0 / self.time_weighted.1
        } else {
            self.first_mean_khz?
        };
        Some((khz / 1000.0, ClockSource::Cpufreq))
    }
}

/// `TSC rate × ΣΔactual / ΣΔreference` over the CPUs read at both ends, in
/// MHz; `None` when no CPU was busy or the readings do not fit together.
fn counters_mhz(first: &ClockReading, last: &ClockReading) -> Option<(f64, ClockSource)> {
    let (
        ClockReading::Counters {
            source,
            tsc: tsc0,
            tsc_ns: ns0,
            per_cpu: before,
        },
        ClockReading::Counters {
            tsc: tsc1,
            tsc_ns: ns1,
            per_cpu: after,
            ..
        },
    ) = (first, last)
    else {
        return None;
    };
    if ns1 <= ns0 || tsc1 <= tsc0 {
        return None;
    }
    let seconds = (ns1 - ns0) as f64 / 1e9;
    let (mut actual, mut reference) = (0u128, 0u128);
    for (cpu, end) in after {
        let start = before.iter().find(|(c, _)| c == cpu).and_then(|(_, r)| *r);
        // A counter that went backwards was reset (or the CPU went offline
        // and came back): its interval says nothing.
        if let (Some((a0, m0)), Some((a1, m1))) = (start, *end)
            && a1 >= a0
            && m1 >= m0
        {
            actual += u128::from(a1 - a0);
            reference += u128::from(m1 - m0);
        }
    }
    if reference == 0 {
        return None;
    }
    let tsc_hz = (tsc1 - tsc0) as f64 / seconds;
    let mhz = tsc_hz * (actual as f64 / reference as f64) / 1e6;
    mhz.is_finite().then_some((mhz, *source))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counters read with a 2 GHz TSC: `tsc` ticks after the origin, at
    /// `tsc / 2` nanoseconds.
    fn counters(tsc: u64, per_cpu: Vec<(usize, Option<(u64, u64)>)>) -> ClockReading {
        ClockReading::Counters {
            source: ClockSource::AperfMperf,
            tsc,
            tsc_ns: tsc / 2,
            per_cpu,
        }
    }

    #[test]
    fn counters_give_the_busy_clock() {
        // A 2 GHz TSC over half a second; CPU 0 ran 1.5x the reference
        // rate while busy, CPU 1 1.2x for twice as long: (1.5 + 2.4) / 3.
        let mut acc = ClockAccumulator::default();
        acc.push(
            0.0,
            &counters(1_000, vec![(0, Some((0, 0))), (1, Some((10, 10)))]),
            &[],
        );
        acc.push(
            0.5,
            &counters(
                1_000 + 1_000_000_000,
                vec![(0, Some((150, 100))), (1, Some((250, 210)))],
            ),
            &[],
        );
        let (mhz, source) = acc.finish().unwrap();
        assert_eq!(source, ClockSource::AperfMperf);
        assert!((mhz - 2000.0 * 3.9 / 3.0).abs() < 1e-6, "{mhz}");
    }

    #[test]
    fn counters_that_went_back_or_never_ran_are_left_out() {
        let first = counters(0, vec![(0, Some((500, 500))), (1, Some((0, 0))), (2, None)]);
        let last = counters(
            1_000_000_000,
            vec![
                (0, Some((100, 100))),
                (1, Some((300, 100))),
                (2, Some((9, 9))),
            ],
        );
        // Only CPU 1 counts: 3x the 2 GHz reference.
        let (mhz, _) = counters_mhz(&first, &last).unwrap();
        assert!((mhz - 6000.0).abs() < 1e-9, "{mhz}");
        // Idle throughout: no clock rather than a division by zero.
        let idle = counters(1_000_000_000, vec![(0, Some((500, 500)))]);
        assert_eq!(counters_mhz(&first, &idle), None);
        // A TSC that did not move, or no time between the readings.
        assert_eq!(counters_mhz(&first, &counters(0, vec![])), None);
        let ClockReading::Counters { per_cpu, .. } = last.clone() else {
            unreachable!()
        };
        let frozen = ClockReading::Counters {
            source: ClockSource::AperfMperf,
            tsc: 1_000_000_000,
            tsc_ns: 0,
            per_cpu,
        };
        assert_eq!(counters_mhz(&first, &frozen), None);
    }

    #[test]
    fn cpufreq_is_weighted_by_busy_time() {
        // CPU 0 busy at 3 GHz, CPU 1 idle at 800 MHz: the clock is CPU 0's.
        let reading = ClockReading::Cpufreq(vec![(0, Some(3_000_000)), (1, Some(800_000))]);
        let mut acc = ClockAccumulator::default();
        acc.push(0.0, &reading, &[]);
        acc.push(0.2, &reading, &[20, 0]);
        let (mhz, source) = acc.finish().unwrap();
        assert_eq!(source, ClockSource::Cpufreq);
        assert!((mhz - 3000.0).abs() < 1e-9, "{mhz}");

        // Busy time unknown: every CPU and interval counts by its length.
        let mut acc = ClockAccumulator::default();
        acc.push(0.0, &reading, &[]);
        acc.push(0.2, &reading, &[]);
        acc.push(
            0.4,
            &ClockReading::Cpufreq(vec![(0, Some(2_000_000)), (1, None)]),
            &[],
        );
        let (mhz, _) = acc.finish().unwrap();
        // (3000 × 0.2 + 800 × 0.2 + 2000 × 0.4) / 0.8
        assert!((mhz - 1950.0).abs() < 1e-9, "{mhz}");

        // One reading only: its plain mean.
        let mut acc = ClockAccumulator::default();
        acc.push(0.0, &reading, &[]);
        assert!((acc.finish().unwrap().0 - 1900.0).abs() < 1e-9);
        assert_eq!(ClockAccumulator::default().finish(), None);
    }

    #[test]
    fn msr_reads_use_the_register_as_offset() {
        // A regular file stands in for the msr device: APERF's 8 bytes
        // start at 0xE8 and MPERF's at 0xE7, so they overlap by 7 bytes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("msr");
        let mut bytes = vec![0u8; 0x100];
        bytes[0xE7] = 0x11;
        bytes[0xE8..0xF0].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(read_msr(&file, MSR_APERF).unwrap(), 0x0102_0304_0506_0708);
        assert_eq!(read_msr(&file, MSR_MPERF).unwrap(), 0x0203_0405_0607_0811);
        // Past the end, as a register the device does not have (EIO).
        assert!(read_msr(&file, 0x1000).is_err());
    }

    #[test]
    fn discovery_prefers_msr_then_cpufreq_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let none = discover(root, 0, false);
        assert_eq!(none.method, None);
        assert!(
            none.why_not.iter().any(|w| w.contains("scaling_cur_freq")),
            "{:?}",
            none.why_not
        );

        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(
            root.join("proc/cpuinfo"),
            "processor\t: 0\nflags\t\t: fpu tsc msr constant_tsc nonstop_tsc aperfmperf\n",
        )
        .unwrap();
        let freq = cur_freq_path(root, 0);
        std::fs::create_dir_all(freq.parent().unwrap()).unwrap();
        std::fs::write(&freq, "2400000\n").unwrap();
        let found = discover(root, 0, false);
        assert_eq!(found.method, Some(ClockMethod::Cpufreq));
        if tsc_now().is_some() {
            assert!(
                found.why_not.iter().any(|w| w.contains("modprobe msr")),
                "{:?}",
                found.why_not
            );
            let msr = msr_path(root, 0);
            std::fs::create_dir_all(msr.parent().unwrap()).unwrap();
            std::fs::write(&msr, vec![0u8; 0x100]).unwrap();
            assert_eq!(discover(root, 0, false).method, Some(ClockMethod::Msr));
        }
    }

    #[test]
    fn cpufreq_readers_read_each_cpu() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let freq = cur_freq_path(root, 1);
        std::fs::create_dir_all(freq.parent().unwrap()).unwrap();
        std::fs::write(&freq, "1800000\n").unwrap();
        let readers = ClockReaders::open(root, ClockMethod::Cpufreq, &[0, 1]);
        assert_eq!(
            readers.read(false),
            Some(ClockReading::Cpufreq(vec![(0, None), (1, Some(1_800_000))]))
        );
        // Counters are not read between the edges.
        let msr = ClockReaders::open(root, ClockMethod::Msr, &[0]);
        assert_eq!(msr.read(false), None);
    }

    #[test]
    fn msr_readers_read_each_cpu_at_the_edges() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let msr = msr_path(root, 0);
        std::fs::create_dir_all(msr.parent().unwrap()).unwrap();
        let mut bytes = vec![0u8; 0x100];
        bytes[0xE8] = 3; // APERF 3, MPERF 3 × 256 (the registers overlap here)
        std::fs::write(&msr, &bytes).unwrap();
        // CPU 1 has no device: it is left out, not an error.
        let readers = ClockReaders::open(root, ClockMethod::Msr, &[0, 1]);
        match readers.read(true) {
            Some(ClockReading::Counters {
                source, per_cpu, ..
            }) => {
                assert_eq!(source, ClockSource::AperfMperf);
                assert_eq!(per_cpu, [(0, Some((3, 3 * 256))), (1, None)]);
            }
            None => assert!(tsc_now().is_none(), "x86-64 has a TSC"),
            other => panic!("{other:?}"),
        }
    }
}

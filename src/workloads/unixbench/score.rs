//! How UnixBench turns its copies' counts into one score, as its `Run`
//! script does (`runOnePass` and `combinePassResults`).
//!
//! Every program reports a count and a time. For most the count is loops
//! and the score is loops per second (or per minute for the shell scripts);
//! with several copies, `Run` adds up the counts and divides by the copies'
//! mean time. `fstime` and Whetstone report a rate already (KBps, MWIPS),
//! which `Run` adds up as they are.

/// What one copy measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Loops done, or the rate itself for [`Timebase::Rate`] programs.
    pub count: f64,
    /// The copy's own timed seconds.
    pub seconds: f64,
}

/// How a program's count becomes a score (UnixBench's "timebase").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timebase {
    /// Loops per second (`lps`): timebase 1.
    PerSecond,
    /// Loops per minute (`lpm`): timebase 60.
    PerMinute,
    /// The count is already a rate (`KBps`, `MWIPS`): timebase 0.
    Rate,
}

impl Timebase {
    /// UnixBench's number for it: seconds per unit of the score, 0 for a rate.
    pub fn seconds(self) -> f64 {
        match self {
            Timebase::PerSecond => 1.0,
            Timebase::PerMinute => 60.0,
            Timebase::Rate => 0.0,
        }
    }
}

/// The score of one pass of `copies` copies: the sum of the counts divided
/// by the mean time over the timebase, or the sum of the rates. `None`
/// without outcomes or without time.
pub fn combine(outcomes: &[Outcome], timebase: Timebase) -> Option<f64> {
    if outcomes.is_empty() {
        return None;
    }
    let count: f64 = outcomes.iter().map(|o| o.count).sum();
    let base = timebase.seconds();
    if base == 0.0 {
        return Some(count);
    }
    let mean_seconds = outcomes.iter().map(|o| o.seconds).sum::<f64>() / outcomes.len() as f64;
    (mean_seconds > 0.0).then(|| count / (mean_seconds / base))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(count: f64, seconds: f64) -> Outcome {
        Outcome { count, seconds }
    }

    #[test]
    fn loops_per_second_sum_the_counts_over_the_mean_time() {
        // Run's example: two copies of 100 and 140 loops in 9.9 s and
        // 10.1 s score 240 / 10 = 24 lps.
        let score = combine(
            &[outcome(100.0, 9.9), outcome(140.0, 10.1)],
            Timebase::PerSecond,
        );
        assert!((score.unwrap() - 24.0).abs() < 1e-12);
    }

    #[test]
    fn loops_per_minute_scale_by_sixty() {
        let score = combine(&[outcome(30.0, 60.0)], Timebase::PerMinute).unwrap();
        assert!((score - 30.0).abs() < 1e-12);
        let score = combine(&[outcome(5.0, 10.0)], Timebase::PerMinute).unwrap();
        assert!((score - 30.0).abs() < 1e-12);
    }

    #[test]
    fn rates_add_up_as_they_are() {
        let score = combine(
            &[outcome(1000.0, 30.0), outcome(900.0, 29.0)],
            Timebase::Rate,
        );
        assert_eq!(score, Some(1900.0));
    }

    #[test]
    fn nothing_or_no_time_is_no_score() {
        assert_eq!(combine(&[], Timebase::Rate), None);
        assert_eq!(combine(&[outcome(5.0, 0.0)], Timebase::PerSecond), None);
    }
}

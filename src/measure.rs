//! Sampling and statistics: warm-up, a batch size calibrated so one rep lasts the profile's
//! target time, reps taken round-robin across a block of arms, Student-t 95% intervals, and
//! allocation counts from a counting global allocator in a separate, untimed pass.
//!
//! Why round-robin: on a shared machine the speed drifts over seconds. Taking every rep of one
//! arm in one burst puts that drift between arms (and outside each arm's interval); rep 1 of
//! every arm, then rep 2, ... spreads it into every arm's interval alike.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::arm::Runner;

/// How long and how often to sample.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    pub name: &'static str,
    /// Warm-up time per arm, which also calibrates the batch size.
    pub warmup: Duration,
    /// Target duration of one rep (one timed batch of iterations).
    pub rep_time: Duration,
    pub reps: usize,
}

impl Profile {
    /// For wiring checks (tests, offline Nix checks): the numbers mean nothing.
    pub const SMOKE: Profile = Profile {
        name: "smoke",
        warmup: Duration::from_millis(2),
        rep_time: Duration::from_millis(4),
        reps: 3,
    };
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup: Duration::from_millis(20),
        rep_time: Duration::from_millis(40),
        reps: 5,
    };
    pub const FULL: Profile = Profile {
        name: "full",
        warmup: Duration::from_millis(300),
        rep_time: Duration::from_secs(1),
        reps: 9,
    };
    pub const ALL: [Profile; 3] = [Profile::SMOKE, Profile::QUICK, Profile::FULL];

    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|profile| profile.name == name)
    }
}

/// What measuring one arm produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub reps: usize,
    /// Iterations in one rep.
    pub batch: u64,
    pub mean_ns: f64,
    pub ci95_low_ns: f64,
    pub ci95_high_ns: f64,
    pub allocs_per_op: f64,
    pub alloc_bytes_per_op: f64,
}

/// Measures a block of arms that are compared with each other, reps interleaved
/// round-robin. `done` is called once per arm, in block order, when the block's last
/// round is over, with the arm's measurement or the error its runner returned.
pub fn measure_block(
    runners: &mut [Box<dyn Runner>],
    profile: &Profile,
    mut on_rep: impl FnMut(),
) -> Vec<Result<Measurement>> {
    let mut states: Vec<Result<ArmState>> = runners
        .iter_mut()
        .map(|runner| ArmState::calibrate(runner.as_mut(), profile))
        .collect();
    for _ in 0..profile.reps {
        for (runner, state) in runners.iter_mut().zip(states.iter_mut()) {
            if let Ok(arm) = state
                && let Err(error) = arm.sample(runner.as_mut())
            {
                *state = Err(error);
            }
            on_rep();
        }
    }
    states
        .into_iter()
        .map(|state| state.map(ArmState::finish))
        .collect()
}

struct ArmState {
    batch: u64,
    samples_ns: Vec<f64>,
    allocs_per_op: f64,
    alloc_bytes_per_op: f64,
}

impl ArmState {
    /// Warms up by doubling the iteration count until one call lasts the warm-up time, which
    /// gives the per-iteration estimate for the batch size; then counts allocations.
    fn calibrate(runner: &mut dyn Runner, profile: &Profile) -> Result<ArmState> {
        let mut iterations = 1u64;
        let per_iteration_ns = loop {
            let start = Instant::now();
            runner.run(iterations)?;
            let elapsed = start.elapsed();
            if elapsed >= profile.warmup || iterations >= 1 << 40 {
                break elapsed.as_nanos() as f64 / iterations as f64;
            }
            iterations *= 2;
        };
        let batch = (profile.rep_time.as_nanos() as f64 / per_iteration_ns.max(0.1)).ceil() as u64;
        let (allocs_per_op, alloc_bytes_per_op) = count_allocations(runner, batch.clamp(1, 64))?;
        Ok(ArmState {
            batch: batch.max(1),
            samples_ns: Vec::new(),
            allocs_per_op,
            alloc_bytes_per_op,
        })
    }

    fn sample(&mut self, runner: &mut dyn Runner) -> Result<()> {
        let start = Instant::now();
        runner.run(self.batch)?;
        let elapsed = start.elapsed();
        self.samples_ns
            .push(elapsed.as_nanos() as f64 / self.batch as f64);
        Ok(())
    }

    fn finish(self) -> Measurement {
        let summary = Summary::of(&self.samples_ns);
        Measurement {
            reps: self.samples_ns.len(),
            batch: self.batch,
            mean_ns: summary.mean,
            ci95_low_ns: summary.mean - summary.half_width,
            ci95_high_ns: summary.mean + summary.half_width,
            allocs_per_op: self.allocs_per_op,
            alloc_bytes_per_op: self.alloc_bytes_per_op,
        }
    }
}

/// Mean and Student-t 95% half-width of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub half_width: f64,
}

impl Summary {
    pub fn of(samples: &[f64]) -> Summary {
        let count = samples.len();
        if count == 0 {
            return Summary {
                mean: f64::NAN,
                half_width: f64::NAN,
            };
        }
        let mean = samples.iter().sum::<f64>() / count as f64;
        if count == 1 {
            return Summary {
                mean,
                half_width: f64::INFINITY,
            };
        }
        let variance = samples.iter().map(|sample| (sample - mean).powi(2)).sum::<f64>() / (count - 1) as f64;
        let half_width = student_t_975(count - 1) * (variance / count as f64).sqrt();
        Summary { mean, half_width }
    }
}

/// The 97.5% quantile of Student's t distribution (two-sided 95%) for `df` degrees of freedom.
pub fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Cornish-Fisher expansion around the normal quantile; within 0.001 above 30.
        _ => {
            let z: f64 = 1.959_964;
            let n = df as f64;
            z + (z.powi(3) + z) / (4.0 * n) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        }
    }
}

/// Runs `iterations` with the allocation counter on; returns allocations and bytes per op.
fn count_allocations(runner: &mut dyn Runner, iterations: u64) -> Result<(f64, f64)> {
    ALLOCATIONS.store(0, Ordering::Relaxed);
    ALLOCATED_BYTES.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::SeqCst);
    let result = runner.run(iterations);
    COUNTING.store(false, Ordering::SeqCst);
    result?;
    let per_op = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64 / iterations as f64;
    Ok((per_op(&ALLOCATIONS), per_op(&ALLOCATED_BYTES)))
}

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The system allocator plus counters that are only touched during a counting pass: outside
/// one, an allocation costs one relaxed load and a branch more than the system allocator.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[inline]
fn record(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_matches_a_hand_computation() {
        // mean 10, sample sd 1.5811 (values 8..12), n 5: half-width 2.776 * 1.5811 / sqrt(5)
        let summary = Summary::of(&[8.0, 9.0, 10.0, 11.0, 12.0]);
        assert_eq!(summary.mean, 10.0);
        assert!((summary.half_width - 1.9630).abs() < 1e-3, "{summary:?}");
    }

    #[test]
    fn t_quantile_is_continuous_past_the_table() {
        assert!((student_t_975(30) - student_t_975(31)).abs() < 0.01);
        assert!((student_t_975(1000) - 1.962).abs() < 0.002);
    }

    struct Allocating;
    impl Runner for Allocating {
        fn run(&mut self, iterations: u64) -> Result<()> {
            for _ in 0..iterations {
                std::hint::black_box(vec![0u8; 100]);
            }
            Ok(())
        }
    }

    #[test]
    fn counts_one_allocation_per_op() {
        let (allocs, bytes) = count_allocations(&mut Allocating, 10).unwrap();
        // Other test threads may allocate during the pass, so only a lower bound is exact.
        assert!(allocs >= 1.0, "{allocs}");
        assert!(bytes >= 100.0, "{bytes}");
    }
}

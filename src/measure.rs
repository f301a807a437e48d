//! Sampling: warm-up, a batch size calibrated so one rep lasts the profile's target time, reps
//! taken round-robin across a block of arms, their summary (a Student-t 95% interval from
//! [`crate::stats`], over the reps or over worker processes' means for a profile with
//! [`Processes`]), and allocation counts from the counting allocator ([`crate::alloc`]) in a
//! separate, untimed pass.
//!
//! Why round-robin: on a shared machine the speed drifts over seconds. Taking every rep of one
//! arm in one burst puts that drift between arms (and outside each arm's interval); rep 1 of
//! every arm, then rep 2, ... spreads it into every arm's interval alike.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::arm::Runner;
use crate::stats::Summary;

/// How long and how often to sample.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    pub name: &'static str,
    /// Warm-up time per arm, which also calibrates the batch size.
    pub warmup: Duration,
    /// Target duration of one rep (one timed batch of iterations).
    pub rep_time: Duration,
    pub min_reps: usize,
    pub max_reps: usize,
    /// Adaptive stopping: after `min_reps`, an arm stops once its 95% half-width is at or under
    /// this fraction of its mean, or once `budget` of its reps is spent.
    pub precision: Option<f64>,
    pub budget: Duration,
    /// `None`: every rep in this process. Otherwise each block is sampled by worker processes
    /// (see [`Processes`]), and `min_reps`, `max_reps`, `precision` and `budget` apply to the
    /// reps of all of them together.
    pub processes: Option<Processes>,
}

/// Sampling a block in worker processes, one after another: each worker prepares the block's
/// arms afresh, warms each up, and takes `reps_each` reps of every arm it is given
/// (round-robin, as in one process). The parent starts workers for the arms that, by the
/// profile's rule over all their reps so far ([`Profile::has_enough`]), still need reps: so
/// `min_reps / reps_each` workers at least and `max_reps / reps_each` at most.
///
/// Why: a process fixes things that move an arm's speed by a few percent and stay fixed for
/// the life of the process: where its buffers, the decoded values and the library's own state
/// land in memory (alignment, cache sets, 4 KiB aliasing between buffers), and the seeds of
/// the std hashers inside libraries. Reps in one process never see that spread, so their
/// interval is too narrow for a rerun, which is a new process. The processes are the units of
/// the interval (see [`Summary::of_units`]), so it holds that spread; and since they follow
/// each other, the machine's drift across the block lands in it too.
#[derive(Clone, Copy, Debug)]
pub struct Processes {
    pub reps_each: usize,
}

impl Profile {
    /// For wiring checks (tests, offline Nix checks): the numbers mean nothing.
    pub const SMOKE: Profile = Profile {
        name: "smoke",
        warmup: Duration::from_millis(2),
        rep_time: Duration::from_millis(4),
        min_reps: 3,
        max_reps: 3,
        precision: None,
        budget: Duration::from_secs(1),
        processes: None,
    };
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup: Duration::from_millis(20),
        rep_time: Duration::from_millis(40),
        min_reps: 5,
        max_reps: 5,
        precision: None,
        budget: Duration::from_secs(1),
        processes: None,
    };
    /// Adaptive, in worker processes: each warms every arm it is given up (25 ms, in each
    /// worker), then takes 2 reps of 100 ms of each, round-robin; at least 4 workers, then more
    /// for the arms whose 95% interval is not yet within ±1% of the mean (at most 8 workers,
    /// 16 reps).
    pub const FULL: Profile = Profile {
        name: "full",
        warmup: Duration::from_millis(25),
        rep_time: Duration::from_millis(100),
        min_reps: 8,
        max_reps: 16,
        precision: Some(0.01),
        budget: Duration::from_secs(3),
        processes: Some(Processes { reps_each: 2 }),
    };
    pub const ALL: [Profile; 3] = [Profile::SMOKE, Profile::QUICK, Profile::FULL];

    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|profile| profile.name == name)
    }

    /// What one worker process does: `reps_each` reps of each of its arms, after its own
    /// warm-up; no stopping rule of its own.
    pub fn worker(&self) -> Profile {
        let processes = self
            .processes
            .expect("a profile that samples in worker processes");
        Profile {
            min_reps: processes.reps_each,
            max_reps: processes.reps_each,
            precision: None,
            processes: None,
            ..*self
        }
    }

    /// Whether the reps an arm has so far (`samples` from `units` processes, or from this
    /// process when `units` is 1) are enough: the rule `measure_block` applies within a process.
    pub fn has_enough(&self, samples: &[(usize, f64)], units: usize, sampled: Duration) -> bool {
        let reps = samples.len();
        if reps >= self.max_reps {
            return true;
        }
        reps >= self.min_reps && (self.precise_enough(samples, units) == Some(true) || sampled >= self.budget)
    }

    /// With a precision target: whether the interval of these samples meets it.
    pub fn precise_enough(&self, samples: &[(usize, f64)], units: usize) -> Option<bool> {
        let target = self.precision?;
        let summary = Summary::of_units(samples, units);
        Some(summary.half_width <= target * summary.mean)
    }
}

/// How the reps of a block's arms are ordered in time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Schedule {
    /// Rep 1 of every arm, then rep 2, ...: drift lands in every arm's interval alike.
    Interleaved,
    /// Every rep of one arm, then the next arm: the classic way, kept to measure the difference.
    Burst,
}

impl Schedule {
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Interleaved => "interleaved",
            Schedule::Burst => "burst",
        }
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
    /// With a precision target: whether the arm's interval reached it within its budget.
    pub target_met: Option<bool>,
}

/// Measures a block of arms that are compared with each other, in this process. With
/// [`Schedule::Interleaved`] the reps run round-robin: each round takes one rep of every arm
/// still sampling, and an arm stops sampling when the profile says it has enough (see
/// [`Profile::precision`]). Returns one measurement (or the error its runner returned) per arm,
/// in block order.
pub fn measure_block(
    runners: &mut [Box<dyn Runner>],
    profile: &Profile,
    schedule: Schedule,
    on_rep: impl FnMut(),
) -> Vec<Result<Measurement>> {
    sample_block(runners, profile, schedule, on_rep)
        .into_iter()
        .map(|sampled| sampled.map(|sampled| Measurement::of(&[sampled], profile)))
        .collect()
}

/// The reps of a block, before any summary: what a worker process reports to its parent.
pub fn sample_block(
    runners: &mut [Box<dyn Runner>],
    profile: &Profile,
    schedule: Schedule,
    mut on_rep: impl FnMut(),
) -> Vec<Result<Sampled>> {
    let mut states: Vec<Result<ArmState>> = runners
        .iter_mut()
        .map(|runner| unpanicked(|| ArmState::calibrate(runner.as_mut(), profile)))
        .collect();
    let mut take_rep = |runner: &mut Box<dyn Runner>, state: &mut Result<ArmState>| {
        let Ok(arm) = state else { return false };
        if arm.has_enough(profile) {
            return false;
        }
        if let Err(error) = unpanicked(|| arm.sample(runner.as_mut())) {
            *state = Err(error);
        }
        on_rep();
        true
    };
    match schedule {
        Schedule::Interleaved => {
            let mut sampling = true;
            while sampling {
                sampling = false;
                for (runner, state) in runners.iter_mut().zip(states.iter_mut()) {
                    sampling |= take_rep(runner, state);
                }
            }
        }
        Schedule::Burst => {
            for (runner, state) in runners.iter_mut().zip(states.iter_mut()) {
                while take_rep(runner, state) {}
            }
        }
    }
    states
        .into_iter()
        .map(|state| state.map(|arm| arm.sampled))
        .collect()
}

/// Runs `step` of one arm; a panic in it (a library's, while timed) becomes that arm's error,
/// so the other arms of the block go on. The arm is not touched again after an error.
fn unpanicked<T>(step: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Err(anyhow::anyhow!("panicked: {message}"))
    })
}

/// One arm's reps in one process, and its allocations per operation.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sampled {
    /// Iterations in one rep.
    pub batch: u64,
    /// Mean nanoseconds per operation of each rep.
    pub samples_ns: Vec<f64>,
    pub allocs_per_op: f64,
    pub alloc_bytes_per_op: f64,
}

impl Sampled {
    /// Time spent in reps.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos((self.samples_ns.iter().sum::<f64>() * self.batch as f64) as u64)
    }
}

impl Measurement {
    /// The measurement of one arm from its reps in one or more processes (`parts`, one per
    /// process): with more than one, the processes are the units of the interval.
    pub fn of(parts: &[Sampled], profile: &Profile) -> Measurement {
        let samples = unit_samples(parts);
        let units = parts.len();
        let summary = Summary::of_units(&samples, units);
        let first = parts.first();
        Measurement {
            reps: samples.len(),
            batch: first.map_or(0, |part| part.batch),
            mean_ns: summary.mean,
            ci95_low_ns: summary.mean - summary.half_width,
            ci95_high_ns: summary.mean + summary.half_width,
            allocs_per_op: first.map_or(f64::NAN, |part| part.allocs_per_op),
            alloc_bytes_per_op: first.map_or(f64::NAN, |part| part.alloc_bytes_per_op),
            target_met: profile.precise_enough(&samples, units),
        }
    }
}

/// Every rep of `parts`, tagged with the index of the part (the process) it came from.
pub fn unit_samples(parts: &[Sampled]) -> Vec<(usize, f64)> {
    parts
        .iter()
        .enumerate()
        .flat_map(|(unit, part)| part.samples_ns.iter().map(move |&sample| (unit, sample)))
        .collect()
}

struct ArmState {
    sampled: Sampled,
    elapsed: Duration,
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
            sampled: Sampled {
                batch: batch.max(1),
                samples_ns: Vec::new(),
                allocs_per_op,
                alloc_bytes_per_op,
            },
            elapsed: Duration::ZERO,
        })
    }

    /// Whether the arm can stop: at its maximum reps, or past its minimum with the precision
    /// target met or the time budget spent.
    fn has_enough(&self, profile: &Profile) -> bool {
        let samples = unit_samples(std::slice::from_ref(&self.sampled));
        profile.has_enough(&samples, 1, self.elapsed)
    }

    fn sample(&mut self, runner: &mut dyn Runner) -> Result<()> {
        let batch = self.sampled.batch;
        let start = Instant::now();
        runner.run(batch)?;
        let elapsed = start.elapsed();
        self.elapsed += elapsed;
        self.sampled
            .samples_ns
            .push(elapsed.as_nanos() as f64 / batch as f64);
        Ok(())
    }
}

/// Runs `iterations` with the allocation counter on; returns allocations and bytes per op.
fn count_allocations(runner: &mut dyn Runner, iterations: u64) -> Result<(f64, f64)> {
    let (result, counted) = crate::alloc::count(|| runner.run(iterations));
    result?;
    let per_op = |total: u64| total as f64 / iterations as f64;
    Ok((per_op(counted.allocations), per_op(counted.bytes)))
}

/// What the harness itself costs: the timing loop around a no-op, and copy bandwidth.
#[derive(Clone, Debug)]
pub struct Overhead {
    /// The timed loop around an operation that does nothing (but `black_box` its counter).
    pub noop: Measurement,
    /// Copying a buffer that fits in cache, as the copy-only arms do (1 MiB).
    pub cached_copy_gb_per_s: f64,
    /// Copying a buffer far beyond the caches (256 MiB): the machine's memory bandwidth.
    pub memory_copy_gb_per_s: f64,
}

impl std::fmt::Display for Overhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let noop = &self.noop;
        writeln!(
            f,
            "no-op loop: {:.3} ns per iteration (95% CI {:.3}-{:.3}), {} allocations and {} bytes per iteration",
            noop.mean_ns, noop.ci95_low_ns, noop.ci95_high_ns, noop.allocs_per_op, noop.alloc_bytes_per_op
        )?;
        writeln!(
            f,
            "copy of 1 MiB (in cache, as the copy-only arms): {:.2} GB/s",
            self.cached_copy_gb_per_s
        )?;
        writeln!(
            f,
            "copy of 256 MiB (memory bandwidth): {:.2} GB/s",
            self.memory_copy_gb_per_s
        )
    }
}

struct Noop;

impl Runner for Noop {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for iteration in 0..iterations {
            std::hint::black_box(iteration);
        }
        Ok(())
    }
}

struct Copy {
    source: Vec<u8>,
    target: Vec<u8>,
}

impl Runner for Copy {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            self.target.clear();
            self.target.extend_from_slice(std::hint::black_box(&self.source));
            std::hint::black_box(&mut self.target);
        }
        Ok(())
    }
}

/// Measures the no-op loop and the two copies with `profile`.
pub fn overhead(profile: &Profile) -> Result<Overhead> {
    let copy = |bytes: usize| -> Box<dyn Runner> {
        Box::new(Copy {
            source: vec![7u8; bytes],
            target: Vec::with_capacity(bytes),
        })
    };
    let mut runners: Vec<Box<dyn Runner>> = vec![Box::new(Noop), copy(1 << 20), copy(256 << 20)];
    let mut measured = measure_block(&mut runners, profile, Schedule::Interleaved, || {}).into_iter();
    let mut next = || measured.next().expect("three runners, three measurements");
    let noop = next()?;
    let gb_per_s = |measurement: Measurement, bytes: usize| bytes as f64 / measurement.mean_ns;
    Ok(Overhead {
        noop,
        cached_copy_gb_per_s: gb_per_s(next()?, 1 << 20),
        memory_copy_gb_per_s: gb_per_s(next()?, 256 << 20),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_are_the_units_of_the_interval() {
        // Unit 0 reps 9, 11 (mean 10); unit 1 reps 19, 21 (mean 20): mean 15, and the interval
        // of two means 10 and 20 (sd 7.071, n 2): 12.706 * 7.071 / sqrt(2) = 63.53.
        let part = |samples_ns: Vec<f64>| Sampled {
            batch: 10,
            samples_ns,
            allocs_per_op: 1.0,
            alloc_bytes_per_op: 8.0,
        };
        let combined = Measurement::of(&[part(vec![9.0, 11.0]), part(vec![19.0, 21.0])], &Profile::FULL);
        assert_eq!((combined.reps, combined.batch, combined.mean_ns), (4, 10, 15.0));
        assert!((combined.ci95_high_ns - 15.0 - 63.53).abs() < 0.01);
        assert_eq!(combined.target_met, Some(false));
    }

    struct PanicsWhenTimed;
    impl Runner for PanicsWhenTimed {
        fn run(&mut self, iterations: u64) -> Result<()> {
            assert!(iterations < 1_000, "a library bug at 1,000 iterations");
            Ok(())
        }
    }

    #[test]
    fn a_panicking_arm_fails_alone() {
        let mut runners: Vec<Box<dyn Runner>> = vec![Box::new(PanicsWhenTimed), Box::new(Allocating)];
        let sampled = sample_block(&mut runners, &Profile::SMOKE, Schedule::Interleaved, || {});
        let error = sampled[0].as_ref().unwrap_err().to_string();
        assert!(
            error.contains("panicked: a library bug at 1,000 iterations"),
            "{error}"
        );
        assert_eq!(
            sampled[1].as_ref().unwrap().samples_ns.len(),
            Profile::SMOKE.max_reps
        );
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

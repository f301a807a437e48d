//! Sampling: warm-up, a batch size calibrated so one rep lasts the profile's target time, reps
//! taken round-robin across a block of arms (one section: a payload and operation) in a random
//! order per round, their summary (a Student-t 95% interval from
//! [`crate::stats`], over the reps or over worker processes' means for a profile with
//! [`Passes`]), and allocation counts and the heap's peak from the counting allocator
//! ([`crate::alloc`]) in a separate, untimed pass.
//!
//! `serbench vs` samples two arms differently, slice by slice ([`versus`]).
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
    /// `None`: every rep in this process. Otherwise the run samples every arm in worker
    /// processes over several passes of the whole matrix (see [`Passes`]); `min_reps` and
    /// `max_reps` are then each worker's reps, and `precision` applies to the workers' means.
    pub passes: Option<Passes>,
}

/// How the full profile samples: the run makes passes over the whole matrix, and in each pass
/// every payload's arms that still need samples are sampled by one fresh worker process (its
/// `reps_each` reps of each arm, round-robin), one payload after another. An arm stops after
/// `min_workers` once the 95% interval over its workers' means is within the profile's
/// `precision`, and at `max_workers` at the latest; no pass starts after `run_budget`.
///
/// Why processes: a process fixes things that move an arm's speed by a few percent and stay
/// fixed for its life: where its buffers, the decoded values and the library's own state land in
/// memory (alignment, cache sets, 4 KiB aliasing), and the seeds of the std hashers inside
/// libraries. Reps in one process never see that spread, so their interval is too narrow for a
/// rerun, which is a new process. Why passes: an arm's workers are then spread over the whole
/// run, so drift at the time scale of the run (minutes) lands inside its interval too, and the
/// arms of one payload share each worker, which pairs them for ratios that cancel that
/// worker's shared noise (see [`crate::stats::paired_ratio`]).
#[derive(Clone, Copy, Debug)]
pub struct Passes {
    pub reps_each: usize,
    pub min_workers: usize,
    pub max_workers: usize,
    pub run_budget: Duration,
}

impl Passes {
    /// Whether an arm with these worker means has enough: at `max_workers`, or past
    /// `min_workers` with its interval within `precision` of its mean.
    pub fn has_enough(&self, means: &[f64], precision: Option<f64>) -> bool {
        let workers = means.len();
        workers >= self.max_workers
            || (workers >= self.min_workers && precise(means, precision) != Some(false))
    }
}

/// With a precision target: whether the interval of `samples` is within it.
fn precise(samples: &[f64], precision: Option<f64>) -> Option<bool> {
    let target = precision?;
    let summary = Summary::of(samples);
    Some(summary.half_width <= target * summary.mean)
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
        passes: None,
    };
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup: Duration::from_millis(20),
        rep_time: Duration::from_millis(40),
        min_reps: 5,
        max_reps: 5,
        precision: None,
        budget: Duration::from_secs(1),
        passes: None,
    };
    /// Adaptive, in worker processes over passes of the whole run (see [`Passes`]): each worker
    /// warms each of its arms up (10 ms), counts its allocations, then takes slices of about
    /// 1 ms of each arm of a section (payload and operation) in turns, in a random order per
    /// round, 60 rounds or 60 ms of each arm (at least 5 slices); every section gets at least 6
    /// workers, then more (at most 20) while the 95% interval of an arm's ratio to the section's
    /// reference is wider than ±1%, and no pass starts after 22 minutes.
    pub const FULL: Profile = Profile {
        name: "full",
        warmup: Duration::from_millis(10),
        rep_time: SLICE,
        min_reps: 5,
        max_reps: 60,
        precision: Some(0.01),
        budget: Duration::from_millis(60),
        passes: Some(Passes {
            reps_each: 60,
            min_workers: 6,
            max_workers: 20,
            run_budget: Duration::from_secs(22 * 60),
        }),
    };
    pub const ALL: [Profile; 3] = [Profile::SMOKE, Profile::QUICK, Profile::FULL];

    /// What one worker process does: up to `reps_each` reps of each of its arms (at least
    /// `min_reps`, and fewer once the profile's `budget` of an arm is spent: an arm slower
    /// than a slice takes fewer), after its own warm-up; no precision target of its own.
    pub fn worker(&self) -> Profile {
        let passes = self.passes.expect("a profile that samples in worker processes");
        Profile {
            min_reps: self.min_reps.min(passes.reps_each),
            max_reps: passes.reps_each,
            precision: None,
            passes: None,
            ..*self
        }
    }

    /// Whether the reps an arm has so far in this process are enough: at its maximum, or past
    /// its minimum with the precision target met or the time budget spent.
    pub fn has_enough(&self, samples: &[f64], sampled: Duration) -> bool {
        let reps = samples.len();
        reps >= self.max_reps
            || (reps >= self.min_reps
                && (precise(samples, self.precision) == Some(true) || sampled >= self.budget))
    }
}

/// How the reps of a block's arms are ordered in time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Schedule {
    /// Rep 1 of every arm, then rep 2, ..., in a random order in each round: drift lands in
    /// every arm's interval alike, and no arm always follows the same one.
    Interleaved,
    /// Every rep of one arm, then the next arm: the classic way, kept to measure the difference.
    Burst,
}

impl Schedule {
    pub const ALL: [Schedule; 2] = [Schedule::Interleaved, Schedule::Burst];

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
    /// The units of the interval: worker processes (1: the reps of one process).
    pub workers: usize,
    /// Iterations in one rep.
    pub batch: u64,
    pub mean_ns: f64,
    pub ci95_low_ns: f64,
    pub ci95_high_ns: f64,
    pub allocs_per_op: f64,
    pub alloc_bytes_per_op: f64,
    /// The highest the live heap rose above its start while one operation ran (the largest
    /// over the counting pass's operations).
    pub peak_heap_bytes: f64,
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
        .map(|sampled| sampled.map(|sampled| Measurement::of_process(&sampled, profile)))
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
            let mut order = Order::seeded();
            let mut turns: Vec<usize> = (0..runners.len()).collect();
            let mut sampling = true;
            while sampling {
                sampling = false;
                order.shuffle(&mut turns);
                for &arm in &turns {
                    sampling |= take_rep(&mut runners[arm], &mut states[arm]);
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
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step))
        .unwrap_or_else(|panic| Err(anyhow::anyhow!("panicked: {}", panic_message(&*panic))))
}

/// A caught panic's message, where it is a string (`panic!` with text or a format).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
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
    pub peak_heap_bytes: f64,
}

impl Sampled {
    /// The mean of this process's reps: one unit of a full-profile interval.
    pub fn mean_ns(&self) -> f64 {
        Summary::of(&self.samples_ns).mean
    }
}

impl Measurement {
    /// The measurement of one arm from its reps in one process.
    pub fn of_process(sampled: &Sampled, profile: &Profile) -> Measurement {
        let summary = Summary::of(&sampled.samples_ns);
        Measurement {
            reps: sampled.samples_ns.len(),
            workers: 1,
            batch: sampled.batch,
            mean_ns: summary.mean,
            ci95_low_ns: summary.mean - summary.half_width,
            ci95_high_ns: summary.mean + summary.half_width,
            allocs_per_op: sampled.allocs_per_op,
            alloc_bytes_per_op: sampled.alloc_bytes_per_op,
            peak_heap_bytes: sampled.peak_heap_bytes,
            target_met: precise(&sampled.samples_ns, profile.precision),
        }
    }

    /// The measurement of one arm from its workers (`means`, one per process; `reps` in all):
    /// the processes are the units of the interval. The batch and the allocation figures are
    /// those of the first worker's [`Sampled`] (`first`).
    pub fn of_workers(means: &[f64], reps: usize, first: &Sampled, profile: &Profile) -> Measurement {
        let summary = Summary::of(means);
        Measurement {
            reps,
            workers: means.len(),
            mean_ns: summary.mean,
            ci95_low_ns: summary.mean - summary.half_width,
            ci95_high_ns: summary.mean + summary.half_width,
            target_met: precise(means, profile.precision),
            ..Measurement::of_process(first, profile)
        }
    }
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
        let counted = count_allocations(runner, batch.clamp(1, 64))?;
        Ok(ArmState {
            sampled: Sampled {
                batch: batch.max(1),
                samples_ns: Vec::new(),
                ..counted
            },
            elapsed: Duration::ZERO,
        })
    }

    /// Whether the arm can stop: at its maximum reps, or past its minimum with the precision
    /// target met or the time budget spent.
    fn has_enough(&self, profile: &Profile) -> bool {
        profile.has_enough(&self.sampled.samples_ns, self.elapsed)
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

/// Runs `iterations` with the allocation counter on: allocations and bytes per op, and the
/// heap's peak over the pass (values are dropped inside each operation, so that is the largest
/// single operation's peak).
fn count_allocations(runner: &mut dyn Runner, iterations: u64) -> Result<Sampled> {
    let (result, counted) = crate::alloc::count(|| runner.run(iterations));
    result?;
    let per_op = |total: u64| total as f64 / iterations as f64;
    Ok(Sampled {
        batch: 0,
        samples_ns: Vec::new(),
        allocs_per_op: per_op(counted.allocations),
        alloc_bytes_per_op: per_op(counted.bytes),
        peak_heap_bytes: counted.peak_live_bytes as f64,
    })
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

/// What [`versus`] measured: the ratio of arm `a`'s time per iteration to arm `b`'s with its 95%
/// interval, over how many paired rounds, in how long.
#[derive(Clone, Copy, Debug)]
pub struct Versus {
    pub interval: crate::stats::RatioInterval,
    pub rounds: usize,
    pub elapsed: Duration,
}

/// How [`versus`] gets a fresh runner of an arm (its buffers allocated anew).
pub type MakeRunner<'a> = &'a mut dyn FnMut() -> Result<Box<dyn Runner>>;

/// `serbench vs`: two arms take turns in slices of about [`SLICE`] each, in a random order per
/// round (tango's paired method), so both are measured in the same moments and what the
/// machine does to both cancels in each round's log-ratio. Each batch of [`BATCH_ROUNDS`] rounds
/// runs on runners made anew behind a spacer allocation of random size, so where their buffers
/// land differs from batch to batch: two copies of one arm in one process were up to 2% apart
/// from placement alone, a difference that one placement would report as real. Stops once
/// the ratio's 95% interval ([`crate::stats::batched_ratio`]) is within `precision` of it on
/// both sides, after at least [`MIN_BATCHES`] batches, or when `budget` is spent.
pub fn versus(make_a: MakeRunner, make_b: MakeRunner, precision: f64, budget: Duration) -> Result<Versus> {
    let started = Instant::now();
    let slices = Slices::of(make_a()?.as_mut(), make_b()?.as_mut())?;
    let mut order = Order::seeded();
    let mut log_ratios: Vec<f64> = Vec::new();
    let mut interval = None;
    while started.elapsed() < budget {
        let spacer = order.spacer();
        let (mut a, mut b) = if order.a_first() {
            let a = make_a()?;
            (a, make_b()?)
        } else {
            let b = make_b()?;
            (make_a()?, b)
        };
        log_ratios.extend(paired_rounds(
            a.as_mut(),
            b.as_mut(),
            slices,
            BATCH_ROUNDS,
            &mut order,
        )?);
        drop(spacer);
        if log_ratios.len() >= MIN_BATCHES * BATCH_ROUNDS {
            interval = crate::stats::batched_ratio(&log_ratios, BATCH_ROUNDS);
            if interval.is_some_and(|found| found.high / found.ratio - 1.0 <= precision) {
                break;
            }
        }
    }
    let rounds = log_ratios.len();
    let interval = interval
        .or_else(|| crate::stats::batched_ratio(&log_ratios, BATCH_ROUNDS))
        .ok_or_else(|| {
            anyhow::anyhow!("{rounds} paired rounds in the time given: too few for an interval")
        })?;
    Ok(Versus {
        interval,
        rounds,
        elapsed: started.elapsed(),
    })
}

/// Iterations per slice of two arms taken in turns: each lasts about [`SLICE`].
#[derive(Clone, Copy, Debug)]
pub struct Slices {
    a: u64,
    b: u64,
}

impl Slices {
    /// Warms each arm up (50 ms) and sizes its slice.
    pub fn of(a: &mut dyn Runner, b: &mut dyn Runner) -> Result<Slices> {
        Ok(Slices {
            a: slice_iterations(a)?,
            b: slice_iterations(b)?,
        })
    }
}

/// `rounds` paired rounds of arms `a` and `b` (after [`WARM_ROUNDS`] untimed ones), each a slice
/// of each in a random order: the log-ratio `ln(a / b)` of every round, in order. The machine's
/// state in those two milliseconds is shared by both slices and cancels in the round's ratio.
pub fn paired_rounds(
    a: &mut dyn Runner,
    b: &mut dyn Runner,
    slices: Slices,
    rounds: usize,
    order: &mut Order,
) -> Result<Vec<f64>> {
    for _ in 0..WARM_ROUNDS {
        timed(a, slices.a)?;
        timed(b, slices.b)?;
    }
    let mut log_ratios = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (a_ns, b_ns) = if order.a_first() {
            let a_ns = timed(a, slices.a)?;
            (a_ns, timed(b, slices.b)?)
        } else {
            let b_ns = timed(b, slices.b)?;
            (timed(a, slices.a)?, b_ns)
        };
        log_ratios.push((a_ns / b_ns).ln());
    }
    Ok(log_ratios)
}

/// How long one arm runs per turn: short enough that the two arms' turns see the same state of
/// the machine (here two kernels' 1 ms slices correlate 0.91), long enough that the clock's
/// cost is noise.
pub const SLICE: Duration = Duration::from_millis(1);
/// Rounds per batch of the interval: 25 rounds of two 1 ms slices, 50 ms.
pub const BATCH_ROUNDS: usize = 25;
/// No verdict before this many batches (500 rounds, 1 s of slices at the least).
pub const MIN_BATCHES: usize = 20;
/// Rounds each batch's new runners run untimed first (their caches and branch history).
const WARM_ROUNDS: usize = 3;

/// Iterations that take about [`SLICE`], after 50 ms of warm-up.
fn slice_iterations(runner: &mut dyn Runner) -> Result<u64> {
    let warm = Instant::now();
    let mut iterations = 1u64;
    let mut per_iteration_ns;
    loop {
        let start = Instant::now();
        runner.run(iterations)?;
        per_iteration_ns = start.elapsed().as_nanos() as f64 / iterations as f64;
        if warm.elapsed() >= Duration::from_millis(50) || iterations >= 1 << 40 {
            break;
        }
        if per_iteration_ns * (iterations as f64) < SLICE.as_nanos() as f64 {
            iterations *= 2;
        }
    }
    Ok(((SLICE.as_nanos() as f64 / per_iteration_ns.max(0.1)).round() as u64).max(1))
}

/// Nanoseconds per iteration of one slice.
fn timed(runner: &mut dyn Runner, iterations: u64) -> Result<f64> {
    let start = Instant::now();
    runner.run(iterations)?;
    Ok(start.elapsed().as_nanos() as f64 / iterations as f64)
}

/// Which arm goes first in each round, and the spacers' sizes: a xorshift generator seeded by
/// the clock, so no order or placement is favoured from run to run.
pub struct Order(u64);

impl Order {
    pub fn seeded() -> Order {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64);
        Order(nanos | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `bound` (at least 1).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }

    /// An allocation of 1 to 8,192 bytes (anywhere within two pages) to hold while arms are
    /// prepared, so where their buffers land moves from one preparation to the next.
    pub fn spacer(&mut self) -> Vec<u8> {
        std::hint::black_box(vec![0u8; 1 + (self.next() % 8192) as usize])
    }

    pub fn a_first(&mut self) -> bool {
        self.next() & 1 == 0
    }

    /// A Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for last in (1..items.len()).rev() {
            items.swap(last, (self.next() % (last as u64 + 1)) as usize);
        }
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
        // Worker 0 reps 9, 11 (mean 10); worker 1 reps 19, 21 (mean 20): mean 15, and the
        // interval of two means 10 and 20 (sd 7.071, n 2): 12.706 * 7.071 / sqrt(2) = 63.53.
        let first = Sampled {
            batch: 10,
            samples_ns: vec![9.0, 11.0],
            allocs_per_op: 1.0,
            alloc_bytes_per_op: 8.0,
            peak_heap_bytes: 64.0,
        };
        let means = [first.mean_ns(), 20.0];
        let combined = Measurement::of_workers(&means, 4, &first, &Profile::FULL);
        assert_eq!(
            (combined.reps, combined.workers, combined.batch, combined.mean_ns),
            (4, 2, 10, 15.0)
        );
        assert!((combined.ci95_high_ns - 15.0 - 63.53).abs() < 0.01);
        assert_eq!((combined.allocs_per_op, combined.peak_heap_bytes), (1.0, 64.0));
        assert_eq!(combined.target_met, Some(false));
    }

    #[test]
    fn an_arm_stops_between_its_minimum_and_maximum_of_workers() {
        let passes = Profile::FULL.passes.unwrap();
        let precision = Profile::FULL.precision;
        let steady = vec![100.0; passes.min_workers];
        assert!(passes.has_enough(&steady, precision));
        assert!(
            !passes.has_enough(&steady[1..], precision),
            "fewer than the minimum"
        );
        let wide: Vec<f64> = (0..passes.min_workers)
            .map(|worker| 90.0 + 5.0 * worker as f64)
            .collect();
        assert!(!passes.has_enough(&wide, precision), "wider than the target");
        let wide_at_max: Vec<f64> = (0..passes.max_workers)
            .map(|worker| 90.0 + 5.0 * (worker % 5) as f64)
            .collect();
        assert!(passes.has_enough(&wide_at_max, precision), "at the maximum");
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
        let counted = count_allocations(&mut Allocating, 10).unwrap();
        // Other test threads may allocate during the pass, so only a lower bound is exact.
        assert!(counted.allocs_per_op >= 1.0, "{counted:?}");
        assert!(counted.alloc_bytes_per_op >= 100.0, "{counted:?}");
        assert!(counted.peak_heap_bytes >= 100.0, "{counted:?}");
    }
}

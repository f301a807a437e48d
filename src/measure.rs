//! Sampling and statistics: warm-up, a batch size calibrated so one rep lasts the profile's
//! target time, reps taken round-robin across a block of arms, Student-t 95% intervals (over
//! the reps, or over worker processes' means for a profile with [`Processes`]), and
//! allocation counts from a counting global allocator in a separate, untimed pass.
//!
//! Why round-robin: on a shared machine the speed drifts over seconds. Taking every rep of one
//! arm in one burst puts that drift between arms (and outside each arm's interval); rep 1 of
//! every arm, then rep 2, ... spreads it into every arm's interval alike.
//!
//! The same allocator has a capped mode for the robustness worker ([`cap_allocations`]): it
//! tracks live bytes and their peak, and refuses (returns null for) any request that would
//! take the live total over the cap, so "a hostile length prefix asks for 4 GiB" becomes a
//! recorded failure of one worker process instead of an OOM.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicU64, AtomicUsize, Ordering};
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

    /// The summary of reps taken in `units` processes (`(unit, sample)` pairs). With one
    /// unit, that of the samples. With more, the units are what is independent: the mean of
    /// their means, and the Student-t interval of that mean over the units (a cluster
    /// interval), which holds the spread between units as well as that of reps within each.
    pub fn of_units(samples: &[(usize, f64)], units: usize) -> Summary {
        if units <= 1 {
            let values: Vec<f64> = samples.iter().map(|&(_, value)| value).collect();
            return Summary::of(&values);
        }
        let means: Vec<f64> = (0..units)
            .filter_map(|unit| {
                let values: Vec<f64> = samples
                    .iter()
                    .filter(|&&(owner, _)| owner == unit)
                    .map(|&(_, value)| value)
                    .collect();
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
            })
            .collect();
        Summary::of(&means)
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
    MODE.fetch_or(COUNTING, Ordering::SeqCst);
    let result = runner.run(iterations);
    MODE.fetch_and(!COUNTING, Ordering::SeqCst);
    result?;
    let per_op = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64 / iterations as f64;
    Ok((per_op(&ALLOCATIONS), per_op(&ALLOCATED_BYTES)))
}

/// What the allocator does besides allocating: a bit set of [`COUNTING`] and [`CAPPING`].
/// Zero outside a counting pass or a robustness worker, so the common path is one relaxed
/// load and a branch.
static MODE: AtomicU8 = AtomicU8::new(0);
const COUNTING: u8 = 1;
const CAPPING: u8 = 2;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The system allocator plus counters that are only touched during a counting pass (or in a
/// capped robustness worker): outside one, an allocation or a deallocation costs one relaxed
/// load and a branch more than the system allocator.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to the system allocator, except that a request
// the capped mode refuses returns null, which `GlobalAlloc` allows for any failure.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(0, layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(0, layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !admit(layout.size(), new_size) {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if MODE.load(Ordering::Relaxed) & CAPPING != 0 {
            LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Counts a request of `new` bytes (replacing `old` bytes, for a realloc) and, when capped,
/// decides whether it may be served.
#[inline]
fn admit(old: usize, new: usize) -> bool {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == 0 {
        return true;
    }
    if mode & COUNTING != 0 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new as u64, Ordering::Relaxed);
    }
    mode & CAPPING == 0 || admit_capped(old, new)
}

static CAP_BYTES: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Live bytes since the cap was turned on: memory allocated before and freed after makes it
/// drift below the truth, never above.
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
static PEAK_BYTES: AtomicIsize = AtomicIsize::new(0);
static PEAK_BASE: AtomicIsize = AtomicIsize::new(0);
static CAP_HITS: AtomicU64 = AtomicU64::new(0);
static REPORTING: AtomicBool = AtomicBool::new(false);

#[cold]
fn admit_capped(old: usize, new: usize) -> bool {
    let cap = CAP_BYTES.load(Ordering::Relaxed);
    let growth = new as isize - old as isize;
    let live = LIVE_BYTES.fetch_add(growth, Ordering::Relaxed) + growth;
    if new > cap || live > cap as isize {
        LIVE_BYTES.fetch_sub(growth, Ordering::Relaxed);
        CAP_HITS.fetch_add(1, Ordering::Relaxed);
        report_cap_hit(new);
        return false;
    }
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
    true
}

/// Writes `ALLOC-CAP requested=<bytes>` to stderr from a stack buffer: no allocation here,
/// since this runs inside the allocator (std's stderr is unbuffered and its lock reentrant).
fn report_cap_hit(requested: usize) {
    if REPORTING.swap(true, Ordering::Relaxed) {
        return;
    }
    const PREFIX: &[u8] = b"ALLOC-CAP requested=";
    let mut line = [0u8; PREFIX.len() + 21];
    line[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 20];
    let mut count = 0;
    let mut rest = requested;
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for (slot, digit) in line[PREFIX.len()..].iter_mut().zip(digits[..count].iter().rev()) {
        *slot = *digit;
    }
    line[PREFIX.len() + count] = b'\n';
    use std::io::Write;
    let _ = std::io::stderr().write_all(&line[..PREFIX.len() + count + 1]);
    REPORTING.store(false, Ordering::Relaxed);
}

/// Turns on the capped mode for the rest of the process (the robustness worker): live bytes
/// are tracked from now on, and any request taking them over `cap_bytes` gets null (std then
/// aborts the process, unless the caller used a fallible API such as `try_reserve`).
pub fn cap_allocations(cap_bytes: usize) {
    CAP_BYTES.store(cap_bytes, Ordering::Relaxed);
    LIVE_BYTES.store(0, Ordering::Relaxed);
    reset_allocation_peak();
    MODE.fetch_or(CAPPING, Ordering::SeqCst);
}

/// Starts a new peak measurement (and a new count of refused requests) from the current live
/// total.
pub fn reset_allocation_peak() {
    let live = LIVE_BYTES.load(Ordering::Relaxed);
    PEAK_BASE.store(live, Ordering::Relaxed);
    PEAK_BYTES.store(live, Ordering::Relaxed);
    CAP_HITS.store(0, Ordering::Relaxed);
}

/// The highest live total since [`reset_allocation_peak`], above the live total at that reset.
pub fn allocation_peak_bytes() -> u64 {
    (PEAK_BYTES.load(Ordering::Relaxed) - PEAK_BASE.load(Ordering::Relaxed)).max(0) as u64
}

/// How many requests the cap refused since [`reset_allocation_peak`].
pub fn allocation_cap_hits() -> u64 {
    CAP_HITS.load(Ordering::Relaxed)
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
    fn interval_matches_a_hand_computation() {
        // mean 10, sample sd 1.5811 (values 8..12), n 5: half-width 2.776 * 1.5811 / sqrt(5)
        let summary = Summary::of(&[8.0, 9.0, 10.0, 11.0, 12.0]);
        assert_eq!(summary.mean, 10.0);
        assert!((summary.half_width - 1.9630).abs() < 1e-3, "{summary:?}");
    }

    #[test]
    fn processes_are_the_units_of_the_interval() {
        // Unit 0 reps 9, 11 (mean 10); unit 1 reps 19, 21 (mean 20): mean 15, and the interval
        // of two means 10 and 20 (sd 7.071, n 2): 12.706 * 7.071 / sqrt(2) = 63.53.
        let samples = [(0, 9.0), (1, 19.0), (0, 11.0), (1, 21.0)];
        let summary = Summary::of_units(&samples, 2);
        assert_eq!(summary.mean, 15.0);
        assert!((summary.half_width - 63.53).abs() < 0.01, "{summary:?}");
        // One unit: the plain interval of the reps.
        assert_eq!(
            Summary::of_units(&samples, 1),
            Summary::of(&[9.0, 19.0, 11.0, 21.0])
        );
        // Combining two processes' parts: the same figures, and the first part's batch.
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

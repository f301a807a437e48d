//! Sampling and statistics: warm-up, a batch size calibrated so one rep lasts the profile's
//! target time, reps taken round-robin across a block of arms, Student-t 95% intervals, and
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
    };
    pub const QUICK: Profile = Profile {
        name: "quick",
        warmup: Duration::from_millis(20),
        rep_time: Duration::from_millis(40),
        min_reps: 5,
        max_reps: 5,
        precision: None,
        budget: Duration::from_secs(1),
    };
    /// Adaptive: reps of 100 ms, round-robin across the payload's arms, until the 95% interval
    /// is within ±1% of the mean (at least 8 reps) or the arm has had 3 s of reps (at most 30).
    pub const FULL: Profile = Profile {
        name: "full",
        warmup: Duration::from_millis(200),
        rep_time: Duration::from_millis(100),
        min_reps: 8,
        max_reps: 30,
        precision: Some(0.01),
        budget: Duration::from_secs(3),
    };
    pub const ALL: [Profile; 3] = [Profile::SMOKE, Profile::QUICK, Profile::FULL];

    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|profile| profile.name == name)
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

/// Measures a block of arms that are compared with each other. With [`Schedule::Interleaved`]
/// the reps run round-robin: each round takes one rep of every arm still sampling, and an arm
/// stops sampling when the profile says it has enough (see [`Profile::precision`]). Returns one
/// measurement (or the error its runner returned) per arm, in block order.
pub fn measure_block(
    runners: &mut [Box<dyn Runner>],
    profile: &Profile,
    schedule: Schedule,
    mut on_rep: impl FnMut(),
) -> Vec<Result<Measurement>> {
    let mut states: Vec<Result<ArmState>> = runners
        .iter_mut()
        .map(|runner| ArmState::calibrate(runner.as_mut(), profile))
        .collect();
    let mut take_rep = |runner: &mut Box<dyn Runner>, state: &mut Result<ArmState>| {
        let Ok(arm) = state else { return false };
        if arm.has_enough(profile) {
            return false;
        }
        if let Err(error) = arm.sample(runner.as_mut()) {
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
        .map(|state| state.map(|arm| arm.finish(profile)))
        .collect()
}

struct ArmState {
    batch: u64,
    samples_ns: Vec<f64>,
    sampled: Duration,
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
            sampled: Duration::ZERO,
            allocs_per_op,
            alloc_bytes_per_op,
        })
    }

    /// Whether the arm can stop: at its maximum reps, or past its minimum with the precision
    /// target met or the time budget spent.
    fn has_enough(&self, profile: &Profile) -> bool {
        let reps = self.samples_ns.len();
        if reps >= profile.max_reps {
            return true;
        }
        reps >= profile.min_reps
            && (self.precise_enough(profile) == Some(true) || self.sampled >= profile.budget)
    }

    fn precise_enough(&self, profile: &Profile) -> Option<bool> {
        let target = profile.precision?;
        let summary = Summary::of(&self.samples_ns);
        Some(summary.half_width <= target * summary.mean)
    }

    fn sample(&mut self, runner: &mut dyn Runner) -> Result<()> {
        let start = Instant::now();
        runner.run(self.batch)?;
        let elapsed = start.elapsed();
        self.sampled += elapsed;
        self.samples_ns
            .push(elapsed.as_nanos() as f64 / self.batch as f64);
        Ok(())
    }

    fn finish(self, profile: &Profile) -> Measurement {
        let summary = Summary::of(&self.samples_ns);
        let target_met = self.precise_enough(profile);
        Measurement {
            reps: self.samples_ns.len(),
            batch: self.batch,
            mean_ns: summary.mean,
            ci95_low_ns: summary.mean - summary.half_width,
            ci95_high_ns: summary.mean + summary.half_width,
            allocs_per_op: self.allocs_per_op,
            alloc_bytes_per_op: self.alloc_bytes_per_op,
            target_met,
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

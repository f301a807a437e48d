//! The counting and capping global allocator (process-wide atomics), used in every serbench
//! process ([`CountingAllocator`], installed in lib.rs).
//!
//! Counting: inside [`count`], every allocation of the calling thread and its size is counted,
//! so the untimed allocation pass of an arm sees exactly what the arm allocates (an arm runs on
//! one thread; what other threads allocate meanwhile, such as other tests, is not its cost). Capping (the robustness
//! worker, [`cap_allocations`]): live bytes and their peak are tracked, and a request that would
//! take the live total over the cap gets null, so "a hostile length prefix asks for 4 GiB"
//! becomes a recorded failure of one worker process instead of an OOM.
//!
//! Out of memory anywhere else (the system allocator returns null: `ulimit -v`, a full machine)
//! ends the process with one line and exit status 1 instead of std's abort ([`out_of_memory`]);
//! [`room`] tells a reader beforehand how much more the process may take.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// What [`count`] saw: allocations (including reallocations), the bytes they asked for, and
/// the highest the live heap rose above where it stood when the count began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counted {
    pub allocations: u64,
    pub bytes: u64,
    pub peak_live_bytes: u64,
}

/// Runs `work` with the counter on and returns its result with what the calling thread
/// allocated meanwhile. Counts on several threads take turns.
pub fn count<T>(work: impl FnOnce() -> T) -> (T, Counted) {
    static ONE_COUNT_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_COUNT_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    COUNTING_THREAD.store(this_thread(), Ordering::Relaxed);
    ALLOCATIONS.store(0, Ordering::Relaxed);
    ALLOCATED_BYTES.store(0, Ordering::Relaxed);
    COUNTED_LIVE.store(0, Ordering::Relaxed);
    COUNTED_PEAK.store(0, Ordering::Relaxed);
    MODE.fetch_or(COUNTING, Ordering::SeqCst);
    let result = work();
    MODE.fetch_and(!COUNTING, Ordering::SeqCst);
    let counted = Counted {
        allocations: ALLOCATIONS.load(Ordering::Relaxed),
        bytes: ALLOCATED_BYTES.load(Ordering::Relaxed),
        peak_live_bytes: COUNTED_PEAK.load(Ordering::Relaxed).max(0) as u64,
    };
    (result, counted)
}

/// What the allocator does besides allocating: a bit set of [`COUNTING`] and [`CAPPING`].
/// Zero outside a counting pass or a robustness worker, so the common path is one relaxed
/// load and a branch.
static MODE: AtomicU8 = AtomicU8::new(0);
const COUNTING: u8 = 1;
const CAPPING: u8 = 2;
/// The thread [`count`] counts ([`this_thread`]).
static COUNTING_THREAD: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);
/// Live bytes since the count began (memory allocated before and freed during it makes this
/// negative), and their highest value.
static COUNTED_LIVE: AtomicIsize = AtomicIsize::new(0);
static COUNTED_PEAK: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Only its address is used: it names the thread, without allocating (a constant
    /// initializer and no destructor, so it is usable inside the allocator at any time).
    static THREAD_MARK: u8 = const { 0 };
}

fn this_thread() -> usize {
    THREAD_MARK.with(|mark| mark as *const u8 as usize)
}

/// Whether the counter is on and this is the thread it counts.
#[inline]
fn counted_here(mode: u8) -> bool {
    mode & COUNTING != 0 && COUNTING_THREAD.load(Ordering::Relaxed) == this_thread()
}

/// The system allocator plus counters that are only touched during a counting pass (or in a
/// capped robustness worker): outside one, an allocation or a deallocation costs one relaxed
/// load and a branch more than the system allocator.
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to the system allocator, except that a request
// the capped mode refuses returns null, which `GlobalAlloc` allows for any failure, and that
// the system's own failure outside the capped mode ends the process.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(0, layout.size()) {
            return std::ptr::null_mut();
        }
        served(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(0, layout.size()) {
            return std::ptr::null_mut();
        }
        served(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !admit(layout.size(), new_size) {
            return std::ptr::null_mut();
        }
        served(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let mode = MODE.load(Ordering::Relaxed);
        if mode & CAPPING != 0 {
            LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        if counted_here(mode) {
            COUNTED_LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The system allocator's answer, unless it failed outside the capped mode.
#[inline]
fn served(pointer: *mut u8, size: usize) -> *mut u8 {
    if pointer.is_null() && MODE.load(Ordering::Relaxed) & CAPPING == 0 {
        out_of_memory(size);
    }
    pointer
}

/// Ends the process with one line and exit status 1: std would abort (SIGABRT, a core file, no
/// word a user can act on). What a run has written stays: results.csv is synced per block.
/// Written from a stack buffer with `_exit`: this runs inside the allocator, and nothing may
/// allocate or unwind here.
#[cold]
fn out_of_memory(size: usize) -> ! {
    const FIRST: &[u8] = b"serbench: out of memory: a request of ";
    const LAST: &[u8] = b" bytes failed (the memory this process may use is spent: see `ulimit -v` and \
the machine's free memory; fewer formats or a smaller --data file need less)\n";
    let mut digits = [0u8; 20];
    let count = decimal(size, &mut digits);
    for part in [FIRST, &digits[..count], LAST] {
        // SAFETY: writing a live buffer of its own length to the standard error descriptor.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
    // SAFETY: `_exit` ends the process without running anything that could allocate.
    unsafe { libc::_exit(1) }
}

/// Writes `number` in decimal into `digits` without allocating (the allocator's messages);
/// returns how many digits it wrote.
fn decimal(number: usize, digits: &mut [u8; 20]) -> usize {
    let mut count = 0;
    let mut rest = number;
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    digits[..count].reverse();
    count
}

/// How many more bytes this process may take, as far as it can tell, and the limit that says
/// so: the address-space limit (`ulimit -v`) less what it maps now, or what the machine has free
/// (MemAvailable and free swap: past it Linux's OOM killer ends the process with no word).
/// `None` where neither is known.
pub fn room() -> Option<(u64, &'static str)> {
    let mut limits: Vec<(u64, &'static str)> = Vec::new();
    let mut address_space = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut address_space) } == 0;
    if known && address_space.rlim_cur != libc::RLIM_INFINITY {
        // /proc/self/statm: the pages the process maps now, first.
        let mapped = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|statm| statm.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |pages| pages * page_size());
        limits.push((
            address_space.rlim_cur.saturating_sub(mapped),
            "the address-space limit, ulimit -v",
        ));
    }
    if let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") {
        let kib = |key: &str| {
            meminfo.lines().find_map(|line| {
                line.strip_prefix(key)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        };
        if let (Some(available), Some(swap)) = (kib("MemAvailable:"), kib("SwapFree:")) {
            limits.push(((available + swap) * 1024, "the machine's free memory and swap"));
        }
    }
    limits.into_iter().min_by_key(|(bytes, _)| *bytes)
}

fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as u64 } else { 4096 }
}

/// Counts a request of `new` bytes (replacing `old` bytes, for a realloc) and, when capped,
/// decides whether it may be served.
#[inline]
fn admit(old: usize, new: usize) -> bool {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == 0 {
        return true;
    }
    if counted_here(mode) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new as u64, Ordering::Relaxed);
        let growth = new as isize - old as isize;
        let live = COUNTED_LIVE.fetch_add(growth, Ordering::Relaxed) + growth;
        COUNTED_PEAK.fetch_max(live, Ordering::Relaxed);
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
    let count = decimal(requested, &mut digits);
    line[PREFIX.len()..PREFIX.len() + count].copy_from_slice(&digits[..count]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_calling_thread() {
        use std::hint::black_box;
        use std::sync::atomic::AtomicBool;
        static STARTED: AtomicBool = AtomicBool::new(false);
        static STOP: AtomicBool = AtomicBool::new(false);
        let noise = std::thread::spawn(|| {
            while !STOP.load(Ordering::Relaxed) {
                black_box(vec![0u8; 1000]);
                STARTED.store(true, Ordering::Relaxed);
            }
        });
        while !STARTED.load(Ordering::Relaxed) {
            std::thread::yield_now();
        }
        let ((), counted) = count(|| {
            for _ in 0..10_000 {
                black_box(vec![0u8; 100]);
            }
        });
        STOP.store(true, Ordering::Relaxed);
        noise.join().unwrap();
        assert_eq!(
            counted,
            Counted {
                allocations: 10_000,
                bytes: 1_000_000,
                peak_live_bytes: 100,
            }
        );
    }

    #[test]
    fn counts_what_the_work_allocates_and_its_peak() {
        let (length, counted) = count(|| {
            // Two buffers live at once, then both freed: the peak holds both, the live total
            // returns to where it began.
            let first = std::hint::black_box(vec![0u8; 100_000]);
            let second = std::hint::black_box(vec![0u8; 50_000]);
            first.len() + second.len()
        });
        assert_eq!(length, 150_000);
        // Other test threads may allocate during the pass, so only lower bounds are exact.
        assert!(counted.allocations >= 2, "{counted:?}");
        assert!(counted.bytes >= 150_000, "{counted:?}");
        assert!(counted.peak_live_bytes >= 150_000, "{counted:?}");
        let (_, small) = count(|| std::hint::black_box(vec![0u8; 10]).len());
        assert!(small.peak_live_bytes < 100_000, "{small:?}");
    }
}

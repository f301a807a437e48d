//! A run that makes no progress for its stall limit stops with one line. A decoder stuck on a
//! data file cannot be stopped from outside its thread (or, in the full profile, its worker is
//! waited on), and every finished block's rows are already in results.csv, so ending the process
//! loses nothing measured. Progress is a proof or rep finished here, or a worker answering.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The default stall limit: far beyond the slowest real arm's proof or rep (a 64 MiB data file
/// decodes in about a second), short enough that a stuck one is named the same hour.
pub const DEFAULT_STALL_LIMIT: Duration = Duration::from_secs(600);

/// Milliseconds since [`epoch`] of the last progress, for the whole process (one run at a time).
static LAST_BEAT_MS: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Something finished: the watchdog's clock starts again.
pub fn beat() {
    LAST_BEAT_MS.store(epoch().elapsed().as_millis() as u64, Ordering::Relaxed);
}

/// Watches the run until dropped.
pub struct Watchdog {
    done: Arc<AtomicBool>,
}

impl Watchdog {
    /// Ends the process with one line naming `out` once nothing has progressed for `limit`.
    pub fn start(limit: Duration, out: String) -> Watchdog {
        let out = crate::escape::terminal(&out).into_owned();
        beat();
        let done = Arc::new(AtomicBool::new(false));
        let watching = Arc::clone(&done);
        let tick = (limit / 4).clamp(Duration::from_millis(1), Duration::from_secs(1));
        std::thread::spawn(move || {
            while !watching.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                let idle = epoch()
                    .elapsed()
                    .saturating_sub(Duration::from_millis(LAST_BEAT_MS.load(Ordering::Relaxed)));
                if idle > limit && !watching.load(Ordering::Relaxed) {
                    eprintln!(
                        "serbench: no arm made progress for {} s (a decoder stuck on its data?); stopped: \
                         every finished block's rows are in {out}, `--resume` runs the rest",
                        limit.as_secs_f64()
                    );
                    std::process::exit(1);
                }
            }
        });
        Watchdog { done }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

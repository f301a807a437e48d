//! The worker's side (`serbench worker`, a [`CasesRequest`]): runs one decoder's cases from a
//! given index on, in a thread with a fixed stack, under the allocation cap, each inside
//! `catch_unwind`, and reports one line per finished case (see [`super::supervise`]).

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

use super::report::Outcome;
use super::{Target, cases, targets};
use crate::alloc;
use crate::format::Registry;
use crate::worker::{CaseLine, CaseReport, CasesRequest, start_line};

/// The decode thread's stack: 8 MiB, the usual main-thread stack on Linux, so "overflows the
/// stack" means what it would mean in a plain program (a tokio worker has only 2 MiB).
pub const DECODE_STACK_BYTES: usize = 8 << 20;

/// Where the silent panic hook leaves the location of the last panic.
static PANIC_LOCATION: Mutex<String> = Mutex::new(String::new());

/// Runs the request's cases, one [`CaseLine`] per case on stdout.
pub fn worker(args: &CasesRequest) -> Result<()> {
    let registry = Registry::build();
    let mut found = targets(&registry, args.fault_injection, &|id| *id == args.target)?;
    let target = match (found.pop(), found.is_empty()) {
        (Some(target), true) => target,
        (None, _) => bail!("no decoder {}", args.target),
        (Some(_), false) => bail!("more than one decoder is {}", args.target),
    };
    let plan = cases::plan(
        target.original.len(),
        &target.id.codec.format,
        args.cases,
        args.seed,
    );
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", CaseLine::Ready { cases: plan.len() }.to_line())?;
        stdout.flush()?;
    }
    // Panics are outcomes here, reported on stdout; the default hook would flood stderr.
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|location| location.to_string())
            .unwrap_or_default();
        let place = if in_std(&location) {
            // `capacity overflow` is raised inside std: the caller is the frame worth naming.
            let backtrace = std::backtrace::Backtrace::force_capture().to_string();
            first_caller(&backtrace).unwrap_or(location)
        } else {
            location
        };
        if let Ok(mut last) = PANIC_LOCATION.lock() {
            *last = short_path(&place).to_string();
        }
    }));
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("decode".to_string())
            .stack_size(DECODE_STACK_BYTES)
            .spawn_scoped(scope, || run_cases(&target, plan, args))
            .context("cannot start the decode thread")?
            .join()
            .map_err(|_| anyhow::anyhow!("the decode thread panicked outside a case"))?
    })
}

fn in_std(path: &str) -> bool {
    path.contains("/rustc/") || path.starts_with("library/")
}

/// The first `at <file>:<line>` of a backtrace outside std and outside this module: the
/// library code that panicked.
fn first_caller(backtrace: &str) -> Option<String> {
    backtrace
        .lines()
        .filter_map(|line| line.trim().strip_prefix("at "))
        .find(|path| !in_std(path) && !path.contains("src/robustness/"))
        .map(str::to_string)
}

/// `.../registry/src/index.crates.io-xxx/bincode-2.0.1/src/de.rs:1:2` -> `bincode-2.0.1/src/de.rs:1:2`.
fn short_path(path: &str) -> &str {
    match path.find("/registry/src/") {
        Some(start) => {
            let rest = &path[start + "/registry/src/".len()..];
            rest.split_once('/')
                .map_or(rest, |(_index, crate_path)| crate_path)
        }
        None => path,
    }
}

fn run_cases(target: &Target, plan: cases::Plan, args: &CasesRequest) -> Result<()> {
    alloc::cap_allocations(args.alloc_cap);
    let stdout = std::io::stdout();
    for (index, mutation) in plan.enumerate().skip(args.start) {
        // stderr is unbuffered: this line is out before the case can kill the process.
        writeln!(std::io::stderr(), "{}", start_line(index))?;
        let input = mutation.apply(&target.original);
        alloc::reset_allocation_peak();
        let result = catch_unwind(AssertUnwindSafe(|| (target.decode)(&input)));
        let peak = alloc::allocation_peak_bytes();
        let refused = alloc::allocation_cap_hits();
        drop(input);
        let (outcome, detail) = match result {
            // A request over the cap that the decoder survived (a `try_reserve`) still means it
            // would have taken that much memory had the machine had it.
            _ if refused > 0 => (
                Outcome::OverCap,
                format!("{refused} request(s) over the cap refused, decoder survived"),
            ),
            Ok(Ok(true)) => (Outcome::OkEqual, String::new()),
            Ok(Ok(false)) => (Outcome::OkDifferent, String::new()),
            Ok(Err(_)) => (Outcome::Error, String::new()),
            Err(payload) => {
                let message = crate::measure::panic_message(&*payload);
                let location = PANIC_LOCATION.lock().map(|last| last.clone()).unwrap_or_default();
                (Outcome::Panic, format!("{message} at {location}"))
            }
        };
        let mut out = stdout.lock();
        let report = CaseReport {
            index,
            outcome,
            peak_bytes: peak,
            detail,
        };
        writeln!(out, "{}", CaseLine::Case(report).to_line())?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_std_is_named_by_its_caller() {
        let backtrace = "   0: std::backtrace::Backtrace::force_capture
             at /rustc/abc/library/std/src/backtrace.rs:312:13
   1: serbench::robustness::worker::worker::{{closure}}
             at ./src/robustness/worker.rs:120:29
   2: alloc::raw_vec::capacity_overflow
             at /rustc/abc/library/alloc/src/raw_vec/mod.rs:28:5
   3: bincode::features::impl_alloc::decode
             at /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/bincode-2.0.1/src/features/impl_alloc.rs:275:27";
        let caller = first_caller(backtrace).unwrap();
        assert_eq!(
            short_path(&caller),
            "bincode-2.0.1/src/features/impl_alloc.rs:275:27"
        );
        assert_eq!(short_path("src/format/csv.rs:3:1"), "src/format/csv.rs:3:1");
    }
}

//! `serbench robustness`: every decoder (every format, backend and mode the registry has) fed
//! hostile inputs derived from its real encoded payloads ([`cases`]): truncations, bit flips,
//! byte replacements, garbage, length bombs and deep nesting. Each case ends as one
//! [`Outcome`]: decoded to the payload, decoded to something else (silent corruption),
//! refused with an error, panicked, hung, asked for more memory than the cap, or crashed.
//!
//! Why worker processes: a Rust allocation failure aborts the process (`handle_alloc_error`
//! does not unwind) and so does a stack overflow, so no in-process harness survives the inputs
//! that matter most. The parent ([`run`]) starts one worker process per decoder (the same
//! executable's hidden `worker` subcommand, [`crate::worker`]'s protocol, [`worker`]); the worker caps the
//! allocator ([`crate::alloc::cap_allocations`]), catches panics, and reports one line per
//! case; when it dies, the parent records the case it died in and starts a new worker from the
//! next case ([`supervise`]). Deterministic for a given `--seed` and `--cases`: the plan
//! depends on nothing else, and every decoder of the same bytes sees the same cases. The plan
//! is generated case by case and the outcomes are counted as they arrive, so memory does not
//! grow with `--cases`.

pub mod cases;
mod faults;
mod report;
pub mod supervise;
mod worker;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

pub use crate::schema::robustness::{FILE_NAME, Outcome, RobustnessRow, WorstCase, read_csv, write_csv};
pub use crate::worker::CaseReport;
pub use cases::{CaseKind, Mutation, Plan};
pub use report::Tally;
pub use worker::{DECODE_STACK_BYTES, worker};

use crate::UsageError;
use crate::arm::{ArmId, CodecId, Framing, Mode, Operation};
use crate::format::Registry;
use crate::payload::data::read;
use crate::worker::{CasesRequest, Launcher, Request};

/// Random cases per kind (and the most truncation lengths; bombs get four times as many):
/// about 1,160 cases per decoder and payload; every decoder of every format on the small
/// payloads (183 of them) takes under a minute even in a debug build.
pub const DEFAULT_CASES: usize = 128;
/// `--cases` is 1 to this: a billion per kind already takes days per decoder.
pub const MAX_CASES: usize = 1_000_000_000;
pub const DEFAULT_SEED: u64 = 0x5EED_0B05;
/// 256 MiB: more than a thousand times the largest default payload, far below the machine.
pub const DEFAULT_ALLOC_CAP: usize = 256 << 20;
/// `--alloc-cap-mib` is 1 to this (1 TiB).
pub const MAX_ALLOC_CAP_MIB: usize = 1 << 20;
/// A decode of a few KiB takes microseconds; ten seconds without an answer is a hang.
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(10);
/// `--case-timeout` is 1 to this many seconds (a day).
pub const MAX_CASE_TIMEOUT_SECS: u64 = 86_400;
/// The small payloads: the 10,000-record ones only make every case slower, not different.
pub const DEFAULT_PAYLOADS: [&str; 7] = [
    "readings",
    "order",
    "telemetry",
    "checkout-request",
    "checkout-response",
    "map-small",
    "vec-small",
];
/// Set to `1` to offer the `fault-injection` format (fake decoders that misbehave on purpose).
pub const FAULT_INJECTION_ENV: &str = "SERBENCH_FAULT_INJECTION";
pub use faults::FORMAT as FAULT_INJECTION_FORMAT;

/// A decoder with the real payload bytes its cases are derived from.
pub struct Target<'a> {
    pub id: ArmId,
    pub original: Vec<u8>,
    pub decode: DecodeFn<'a>,
}

/// What [`crate::arm::Decoder::decode`] is: `Ok(true)` the payload, `Ok(false)` another value.
pub type DecodeFn<'a> = Box<dyn Fn(&[u8]) -> Result<bool> + Send + Sync + 'a>;

/// The format and backend names of the `--data` reader's targets: serbench's own JSON reader,
/// fed hostile variants of each payload's serde_json bytes, `ok-equal` when it reads the
/// payload's records.
pub const DATA_READER: (&str, &str) = ("data", "reader");

/// Every decoder `select` keeps, in registry order, with its payload encoded by the encoder of
/// the same codec; then `serbench check`'s path of every codec ([`Mode::Check`]) and the
/// `--data` reader ([`DATA_READER`]); the fakes of [`FAULT_INJECTION_FORMAT`] too, when
/// `fault_injection`.
pub fn targets<'a>(
    registry: &'a Registry,
    fault_injection: bool,
    select: &dyn Fn(&ArmId) -> bool,
) -> Result<Vec<Target<'a>>> {
    let mut targets = Vec::new();
    for decoder in &registry.decoders {
        let id = decoder.id.clone();
        if !select(&id) {
            continue;
        }
        let encoder = registry
            .encoders
            .iter()
            .find(|encoder| encoder.id == decoder.id.codec)
            .with_context(|| format!("{id}: no encoder of the same codec"))?;
        let original = encoder.encode().with_context(|| format!("{id}: encode failed"))?;
        targets.push(Target {
            id,
            original,
            decode: Box::new(|bytes| decoder.decode(bytes)),
        });
    }
    for encoder in &registry.encoders {
        let id = ArmId {
            codec: encoder.id.clone(),
            operation: Operation::Decode,
            mode: Mode::Check,
        };
        if !select(&id) {
            continue;
        }
        let original = encoder.encode().with_context(|| format!("{id}: encode failed"))?;
        targets.push(Target {
            id,
            original,
            decode: Box::new(|bytes| Ok(encoder.check(bytes)?.is_none())),
        });
    }
    let json_documents = registry.encoders.iter().filter(|encoder| {
        let codec = &encoder.id;
        (
            codec.format.as_str(),
            codec.backend.as_str(),
            codec.variant.as_str(),
            codec.framing,
        ) == ("json", "serde_json", "", Framing::Document)
    });
    for encoder in json_documents {
        let id = ArmId {
            codec: CodecId {
                format: DATA_READER.0.to_string(),
                backend: DATA_READER.1.to_string(),
                payload: encoder.id.payload.clone(),
                ..CodecId::default()
            },
            operation: Operation::Decode,
            mode: Mode::Dynamic,
        };
        if !select(&id) {
            continue;
        }
        let original = encoder.encode().with_context(|| format!("{id}: encode failed"))?;
        let expected = read::parse("the payload's JSON", &original, None)?.records;
        targets.push(Target {
            id,
            original,
            decode: Box::new(move |bytes| Ok(read::parse("a case", bytes, None)?.records == expected)),
        });
    }
    if fault_injection {
        for fault in &faults::FAULTS {
            let id = fault.id();
            if select(&id) {
                targets.push(Target {
                    id,
                    original: faults::ORIGINAL.to_vec(),
                    decode: Box::new(fault.decode),
                });
            }
        }
    }
    Ok(targets)
}

/// The format names `--format` accepts: the registry's, `data` (the `--data` reader), plus
/// `fault-injection` when `SERBENCH_FAULT_INJECTION=1`.
pub fn format_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = crate::format::all().iter().map(|format| format.name).collect();
    names.push(DATA_READER.0);
    if fault_injection_enabled() {
        names.push(FAULT_INJECTION_FORMAT);
    }
    names
}

/// The backend names `--backend` accepts, each once, in registry order (and the fakes' when
/// `fault_injection`).
pub fn backend_names(registry: &Registry, fault_injection: bool) -> Vec<String> {
    let fakes = faults::FAULTS
        .iter()
        .filter(|_| fault_injection)
        .map(|fault| fault.id().codec.backend);
    let mut names: Vec<String> = Vec::new();
    for name in registry
        .decoders
        .iter()
        .map(|decoder| decoder.id.codec.backend.to_string())
        .chain([DATA_READER.1.to_string()])
        .chain(fakes)
    {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

pub fn fault_injection_enabled() -> bool {
    std::env::var_os(FAULT_INJECTION_ENV).is_some_and(|value| value == "1")
}

/// This test binary as its own robustness worker (for integration tests, which cannot reach the
/// `serbench` binary's subcommand): libtest runs only `entry_test`, a test whose body is
/// [`test_worker_entry`], and [`TEST_WORKER_ENV`] tells it to read its request.
pub fn test_binary_launcher(entry_test: &str) -> Result<Launcher> {
    Ok(Launcher {
        program: std::env::current_exe().context("cannot find the test binary")?,
        args: ["--exact", entry_test, "--nocapture", "--test-threads=1"]
            .map(String::from)
            .to_vec(),
        envs: vec![(TEST_WORKER_ENV.to_string(), "1".to_string())],
    })
}

/// Set (to `1`) in a test binary started by [`test_binary_launcher`].
pub const TEST_WORKER_ENV: &str = "SERBENCH_ROBUSTNESS_TEST_WORKER";

/// The body of a test binary's worker entry test: nothing in a normal test run; in a worker
/// started by [`test_binary_launcher`], reads its request, runs it and exits the process with
/// its status (before libtest can print anything more on stdout).
pub fn test_worker_entry() {
    if std::env::var_os(TEST_WORKER_ENV).is_none() {
        return;
    }
    let outcome = match crate::worker::read_request(std::io::stdin().lock()) {
        Ok(Request::Robustness(request)) => worker(&request),
        Ok(other) => Err(anyhow::anyhow!("a robustness test worker got {other:?}")),
        Err(error) => Err(error),
    };
    let code = match outcome {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("robustness worker: {error:#}");
            3
        }
    };
    std::process::exit(code);
}

/// The selection and the knobs of a robustness run.
#[derive(Clone, Debug)]
pub struct RobustnessOptions {
    /// Formats to test (empty: every registry format; `fault-injection` only when named).
    pub formats: Vec<String>,
    pub backends: Vec<String>,
    /// Payloads (empty: [`DEFAULT_PAYLOADS`]).
    pub payloads: Vec<String>,
    pub cases: usize,
    pub seed: u64,
    pub alloc_cap: usize,
    pub case_timeout: Duration,
    /// Offer the fake decoders of [`FAULT_INJECTION_FORMAT`].
    pub fault_injection: bool,
    /// How to start a worker (default: [`Launcher::current_exe`]).
    pub worker: Option<Launcher>,
    /// One line per decoder on stderr.
    pub progress: bool,
}

impl Default for RobustnessOptions {
    fn default() -> Self {
        RobustnessOptions {
            formats: Vec::new(),
            backends: Vec::new(),
            payloads: Vec::new(),
            cases: DEFAULT_CASES,
            seed: DEFAULT_SEED,
            alloc_cap: DEFAULT_ALLOC_CAP,
            case_timeout: DEFAULT_CASE_TIMEOUT,
            fault_injection: fault_injection_enabled(),
            worker: None,
            progress: false,
        }
    }
}

impl RobustnessOptions {
    fn selects(&self, id: &ArmId) -> bool {
        let listed = |list: &[String], name: &str| list.iter().any(|item| item == name);
        let format = if id.codec.format == FAULT_INJECTION_FORMAT {
            listed(&self.formats, &id.codec.format)
        } else {
            self.formats.is_empty() || listed(&self.formats, &id.codec.format)
        };
        let payload = if self.payloads.is_empty() {
            DEFAULT_PAYLOADS.contains(&id.codec.payload.as_str()) || id.codec.payload == faults::PAYLOAD
        } else {
            listed(&self.payloads, &id.codec.payload)
        };
        format && payload && (self.backends.is_empty() || listed(&self.backends, &id.codec.backend))
    }
}

/// The decoders a run of `options` tests, after checking its options: the ranges of the
/// numbers, and that the selection holds at least one decoder (a refusal otherwise, before any
/// work).
pub fn select<'a>(registry: &'a Registry, options: &RobustnessOptions) -> Result<Vec<Target<'a>>> {
    if !(1..=MAX_CASES).contains(&options.cases) {
        return Err(UsageError::error(format!(
            "--cases {} is outside its range 1..={MAX_CASES}",
            options.cases
        )));
    }
    if !((1 << 20)..=(MAX_ALLOC_CAP_MIB << 20)).contains(&options.alloc_cap) {
        return Err(UsageError::error(format!(
            "the allocation cap of {} bytes is outside its range 1 MiB..={MAX_ALLOC_CAP_MIB} MiB",
            options.alloc_cap
        )));
    }
    if !(1..=MAX_CASE_TIMEOUT_SECS).contains(&options.case_timeout.as_secs()) {
        return Err(UsageError::error(format!(
            "the case timeout of {:?} is outside its range 1..={MAX_CASE_TIMEOUT_SECS} s",
            options.case_timeout
        )));
    }
    if options
        .formats
        .iter()
        .any(|format| format == FAULT_INJECTION_FORMAT)
        && !options.fault_injection
    {
        return Err(UsageError::error(format!(
            "the {FAULT_INJECTION_FORMAT} format needs {FAULT_INJECTION_ENV}=1"
        )));
    }
    let targets = targets(registry, options.fault_injection, &|id| options.selects(id))?;
    if targets.is_empty() {
        return Err(UsageError::error("no decoder matches the selection"));
    }
    Ok(targets)
}

/// Runs every selected decoder's cases, each decoder in its own worker processes, and returns
/// one row per decoder and case kind.
pub fn run(registry: &Registry, options: &RobustnessOptions) -> Result<Vec<RobustnessRow>> {
    run_targets(&select(registry, options)?, options)
}

/// [`run`] of the decoders [`select`] chose.
pub fn run_targets(targets: &[Target], options: &RobustnessOptions) -> Result<Vec<RobustnessRow>> {
    let worker = match &options.worker {
        Some(worker) => worker.clone(),
        None => Launcher::current_exe()?,
    };
    let mut rows = Vec::new();
    for (number, target) in targets.iter().enumerate() {
        let started = Instant::now();
        let plan = || {
            cases::plan(
                target.original.len(),
                &target.id.codec.format,
                options.cases,
                options.seed,
            )
        };
        let cases = plan().len();
        let mut spawn = |start: usize| -> Result<Box<dyn supervise::Worker>> {
            let request = Request::Robustness(CasesRequest {
                target: target.id.clone(),
                seed: options.seed,
                cases: options.cases,
                start,
                alloc_cap: options.alloc_cap,
                fault_injection: target.id.codec.format == FAULT_INJECTION_FORMAT,
            });
            Ok(Box::new(supervise::ProcessWorker::spawn(
                worker.command(),
                &request,
            )?))
        };
        let mut tally = Tally::new(&target.id, target.original.len(), plan());
        supervise::supervise(cases, options.case_timeout, &mut spawn, &mut |report| {
            tally.add(&report)
        })
        .with_context(|| format!("robustness of {}", target.id))?;
        let target_rows = tally.rows();
        if options.progress {
            let failures: usize = target_rows
                .iter()
                .map(|row| row.panic + row.over_cap + row.crash + row.timeout)
                .sum();
            eprintln!(
                "[{}/{}] {} {}: {cases} cases, {failures} failures, {:.1} s",
                number + 1,
                targets.len(),
                target.id.decoder_label(),
                target.id.codec.payload,
                started.elapsed().as_secs_f64()
            );
        }
        rows.extend(target_rows);
    }
    Ok(rows)
}

//! The one protocol between serbench and the worker processes it starts of itself (or of another
//! build of it, or of a test binary): the parent writes one typed [`Request`] as JSON to the
//! worker's standard input ([`spawn`]); the worker, the hidden `serbench worker` subcommand
//! (whose `--data` flags build the same registry), reads it ([`read_request`]) and answers on
//! standard output in its role's own way:
//!
//! - [`Request::Block`] (the full profile's sampling): one JSON list of [`BlockReport`], one per
//!   arm, in request order, at the end.
//! - [`Request::Robustness`] (hostile inputs): one [`CaseLine`] per line as the cases finish,
//!   streamed because the worker may die in a case; before each case it writes
//!   [`start_line`] to its (unbuffered) standard error, so the parent can name the case it
//!   died in.
//! - [`Request::Instructions`] (one arm under callgrind): nothing; callgrind writes the counts.
//! - [`Request::Versus`] (`serbench vs`, one process of many): one JSON [`VersusReport`].
//!
//! A timing worker is a fresh draw of what a process fixes ([`Launcher::fresh_draw`],
//! [`with_random_offsets`]): the size of its environment, where its stack and heap start.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::arm::ArmId;
use crate::measure::Sampled;
use crate::schema::robustness::Outcome;

/// The hidden subcommand every worker process runs.
pub const SUBCOMMAND: &str = "worker";

/// What a parent asks of one worker process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Request {
    /// Prove `arms` (fresh, in the worker) and sample them with the worker's share of the
    /// profile named `profile`, each section with the A/A twin of its reference.
    Block {
        arms: Vec<ArmId>,
        profile: String,
        burst: bool,
    },
    /// Run one decoder's hostile cases from `start` on.
    Robustness(CasesRequest),
    /// Prove, warm and count one arm (under callgrind, which the parent starts).
    Instructions { arm: ArmId },
    /// Prove arms `a` and `b` (fresh, in the worker) and time `rounds` paired rounds of them.
    Versus { a: ArmId, b: ArmId, rounds: usize },
}

/// A versus worker's answer: each paired round's log-ratio (`ln(a / b)`), in order, and the
/// seconds those rounds took (the rest of the worker's life is its setup).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersusReport {
    pub log_ratios: Vec<f64>,
    pub timed_s: f64,
}

/// One decoder's hostile cases: the plan is fixed by the decoder's payload, `seed` and `cases`,
/// so parent and worker build the same one without exchanging any input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasesRequest {
    pub target: ArmId,
    pub seed: u64,
    pub cases: usize,
    /// The first case to run (a new worker after one died starts after its case).
    pub start: usize,
    /// The allocation cap, bytes (the worker aborts on a request over it).
    pub alloc_cap: usize,
    /// Whether `target` is one of the fault-injection fakes.
    pub fault_injection: bool,
}

/// A block worker's answer for one arm.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockReport {
    pub arm: ArmId,
    pub encoded_bytes: usize,
    /// The SHA-256 of the data file the worker read for the arm's payload, for a `data:` one:
    /// the parent checks it is the file the run proved.
    pub data_sha256: Option<String>,
    /// The reps, or the error (with the arm's name) that stopped the arm.
    pub result: Result<Sampled, String>,
    /// For the reference arm of a section: the mean time per operation of its A/A twin.
    pub twin_mean_ns: Option<f64>,
}

/// One finished hostile case, as the worker reports it (or the parent infers it from a dead
/// worker).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseReport {
    pub index: usize,
    pub outcome: Outcome,
    /// Peak live bytes the decoder held during the case (0 when the worker died).
    pub peak_bytes: u64,
    /// Panic message and location, the refused request, or how the worker died.
    pub detail: String,
}

/// A line of a robustness worker's standard output: `READY <cases>` once the plan is built,
/// then `CASE\t<index>\t<outcome>\t<peak>\t<detail>` per case.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseLine {
    Ready { cases: usize },
    Case(CaseReport),
}

impl CaseLine {
    pub fn to_line(&self) -> String {
        match self {
            CaseLine::Ready { cases } => format!("READY {cases}"),
            CaseLine::Case(report) => format!(
                "CASE\t{}\t{}\t{}\t{}",
                report.index,
                report.outcome.name(),
                report.peak_bytes,
                one_line(&report.detail)
            ),
        }
    }

    /// The protocol line `line` holds; `None` for anything else (a test binary's own output).
    pub fn parse(line: &str) -> Option<CaseLine> {
        if let Some(cases) = line.strip_prefix("READY ") {
            return Some(CaseLine::Ready {
                cases: cases.trim().parse().ok()?,
            });
        }
        let mut fields = line.strip_prefix("CASE\t")?.splitn(4, '\t');
        Some(CaseLine::Case(CaseReport {
            index: fields.next()?.parse().ok()?,
            outcome: Outcome::by_name(fields.next()?)?,
            peak_bytes: fields.next()?.parse().ok()?,
            detail: fields.next().unwrap_or_default().to_string(),
        }))
    }
}

/// What a robustness worker writes to standard error before case `index`.
pub fn start_line(index: usize) -> String {
    format!("START {index}")
}

/// The case index of a [`start_line`].
pub fn parse_start(line: &str) -> Option<usize> {
    line.strip_prefix("START ")?.trim().parse().ok()
}

/// `text` on one protocol line: control characters (the separators among them) become spaces,
/// and past 400 characters it is cut.
pub fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(400) {
        Some((cut, _)) => format!("{}...", &flat[..cut]),
        None => flat,
    }
}

/// How to start a worker: a program and the arguments that make it one, before any flags of
/// the caller's (`--data`).
#[derive(Clone, Debug)]
pub struct Launcher {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub envs: Vec<(String, String)>,
}

impl Launcher {
    /// `program worker`: this executable, or another build of it.
    pub fn serbench(program: &Path) -> Launcher {
        Launcher {
            program: program.to_path_buf(),
            args: vec![SUBCOMMAND.to_string()],
            envs: Vec::new(),
        }
    }

    /// This executable's `worker` subcommand.
    pub fn current_exe() -> Result<Launcher> {
        let program = std::env::current_exe().context("cannot find this executable for its workers")?;
        Ok(Launcher::serbench(&program))
    }

    /// The same launcher with an environment of a random size: a variable `SERBENCH_PAD` of 0 to
    /// 4,095 bytes moves where the stack starts (the environment lies above it), one of the
    /// setup biases of Mytkowicz et al. (ASPLOS 2009), drawn anew for each timing worker.
    pub fn fresh_draw(mut self) -> Launcher {
        let bytes = crate::measure::Order::seeded().below(4096) as usize;
        self.envs.push(("SERBENCH_PAD".to_string(), "x".repeat(bytes)));
        self
    }

    /// The command, its standard streams piped, without the request.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.envs.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }
}

/// Starts `command` (a [`Launcher::command`], or a wrapper such as valgrind around it) and
/// writes `request` to its standard input, then closes it. A worker that dies before reading
/// it is not an error here: its exit says what happened.
pub fn spawn(mut command: Command, request: &Request) -> Result<Child> {
    let mut child = command
        .stdin(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start a worker ({})", command.get_program().display()))?;
    let mut stdin = child.stdin.take().expect("a piped stdin");
    match stdin.write_all(&serde_json::to_vec(request)?) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(error).context("cannot send a worker its request");
        }
        _ => {}
    }
    Ok(child)
}

/// Runs `work` behind a random stack offset (0 to 255 frames of a small recursive function
/// between here and it) and a random heap offset (an allocation of 1 to 8,192 bytes held while
/// it runs): a timing worker's draw of where its stack frames and first buffers land.
pub fn with_random_offsets<T>(work: impl FnOnce() -> T) -> T {
    let mut order = crate::measure::Order::seeded();
    let spacer = order.spacer();
    let frames = order.below(256) as usize;
    let mut work = Some(work);
    let result = descend(frames, &mut || (work.take().expect("the work runs once"))());
    drop(spacer);
    result
}

#[inline(never)]
fn descend<T>(frames: usize, work: &mut dyn FnMut() -> T) -> T {
    let pad = std::hint::black_box([0u8; 16]);
    if frames == 0 {
        return work();
    }
    let result = descend(frames - 1, work);
    std::hint::black_box(&pad);
    result
}

/// The worker's side: the request on standard input, whole.
pub fn read_request(input: impl Read) -> Result<Request> {
    serde_json::from_reader(input).context("a worker reads one request as JSON on its standard input")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::{CodecId, Mode, Operation};

    #[test]
    fn requests_round_trip_and_unknown_roles_or_fields_are_refused() {
        let arm = ArmId {
            codec: CodecId {
                format: "json".into(),
                backend: "serde_json".into(),
                payload: "order".into(),
                ..Default::default()
            },
            operation: Operation::Decode,
            mode: Mode::Typed,
        };
        for request in [
            Request::Block {
                arms: vec![arm.clone()],
                profile: "full".into(),
                burst: false,
            },
            Request::Robustness(CasesRequest {
                target: arm.clone(),
                seed: 42,
                cases: 10,
                start: 3,
                alloc_cap: 1 << 28,
                fault_injection: true,
            }),
            Request::Instructions { arm: arm.clone() },
        ] {
            let json = serde_json::to_vec(&request).unwrap();
            assert_eq!(read_request(json.as_slice()).unwrap(), request);
        }
        assert!(read_request(r#"{"role":"bogus"}"#.as_bytes()).is_err());
        let extra = serde_json::to_string(&Request::Instructions { arm })
            .unwrap()
            .replacen('{', r#"{"x":1,"#, 1);
        assert!(read_request(extra.as_bytes()).is_err(), "{extra}");
        assert!(read_request("".as_bytes()).is_err());
    }

    #[test]
    fn case_lines_round_trip_and_foreign_lines_are_ignored() {
        let report = CaseReport {
            index: 7,
            outcome: Outcome::Panic,
            peak_bytes: 4096,
            detail: "index out of bounds\tat src/x.rs:1".into(),
        };
        let line = CaseLine::Case(report.clone()).to_line();
        let CaseLine::Case(parsed) = CaseLine::parse(&line).unwrap() else {
            panic!("{line}");
        };
        assert_eq!(parsed.detail, "index out of bounds at src/x.rs:1");
        assert_eq!(
            (parsed.index, parsed.outcome, parsed.peak_bytes),
            (7, Outcome::Panic, 4096)
        );
        assert_eq!(
            CaseLine::parse(&CaseLine::Ready { cases: 12 }.to_line()),
            Some(CaseLine::Ready { cases: 12 })
        );
        for foreign in [
            "running 1 test",
            "CASE\tx\terror\t0\t",
            "CASE\t1\tweird\t0\t",
            "READY many",
        ] {
            assert_eq!(CaseLine::parse(foreign), None, "{foreign}");
        }
        assert_eq!(one_line("a\tb\nc"), "a b c");
        assert_eq!(one_line(&"x".repeat(500)).len(), 403);
        assert_eq!(parse_start(&start_line(5)), Some(5));
        assert_eq!(parse_start("STARTED 5"), None);
    }
}

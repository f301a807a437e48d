//! Drives the stages for one `serbench run`: select arms from the registry, claim the output
//! folder (its lock, then a fresh set, a `--replace`d one or a `--resume`d one, everything the
//! run will read validated first), prove and time the arms block by block (a block is every
//! selected arm of one payload, measured round-robin), append each finished block's rows to
//! results.csv, then write what is derived from the whole results.csv: sizes.csv, the headline
//! ratios (ratios.csv) and the report. A profile with [`Processes`] times each block in worker
//! processes (this executable's hidden `block-worker` subcommand, [`block_worker`]) and
//! combines their reps.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::UsageError;
use crate::arm::{Arm, ArmId, CodecId, Encoder};
use crate::format::Registry;
use crate::measure::{Measurement, Processes, Profile, Sampled, Schedule, sample_block, unit_samples};
use crate::report::files::{self, DERIVED_FILES, OutDir, Record, SetKind};
use crate::report::host::{Host, utc_timestamp};
use crate::report::results::{self, ResultRow, STATUS_OK};
use crate::report::{load, markdown, ratios, sizes};

/// Which part of the matrix to touch; an empty list selects everything on that axis.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub formats: Vec<String>,
    pub backends: Vec<String>,
    pub payloads: Vec<String>,
    pub operations: Vec<String>,
}

fn allows(list: &[String], name: &str) -> bool {
    list.is_empty() || list.iter().any(|item| item == name)
}

impl Selection {
    pub fn allows_format(&self, format: &str) -> bool {
        allows(&self.formats, format)
    }

    pub fn allows_payload(&self, payload: &str) -> bool {
        allows(&self.payloads, payload)
    }

    pub fn codec(&self, id: &CodecId) -> bool {
        allows(&self.formats, &id.format)
            && allows(&self.backends, &id.backend)
            && allows(&self.payloads, &id.payload)
    }

    pub fn arm(&self, id: &ArmId) -> bool {
        self.codec(&id.codec) && allows(&self.operations, id.operation.name())
    }

    pub fn arms<'r>(&self, registry: &'r Registry) -> Vec<&'r Arm> {
        registry.arms.iter().filter(|arm| self.arm(&arm.id)).collect()
    }

    pub fn encoders<'r>(&self, registry: &'r Registry) -> Vec<&'r Encoder> {
        registry
            .encoders
            .iter()
            .filter(|encoder| self.codec(&encoder.id))
            .collect()
    }
}

/// How one run measures and where it writes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub profile: Profile,
    pub schedule: Schedule,
    pub out: PathBuf,
    /// Extend the folder's result set, which must be of the same machine, build, profile and
    /// schedule: measure the selected arms it does not hold yet, and again those that failed.
    pub resume: bool,
    /// Move the result set the folder holds into `replaced/` and start anew.
    pub replace: bool,
}

/// What a run leaves: every row of its results.csv, and its report.
#[derive(Debug)]
pub struct RunSummary {
    pub rows: Vec<ResultRow>,
    pub report: PathBuf,
}

/// Measures the selected arms into `out/results.csv`, then writes `out/sizes.csv`,
/// `out/ratios.csv` and the report from the whole file. Without `resume` or `replace`, a folder
/// that holds a result set is refused; with `resume`, the folder's set is extended (see
/// [`RunOptions::resume`]).
pub fn run(registry: &Registry, selection: &Selection, options: &RunOptions) -> Result<RunSummary> {
    let RunOptions {
        profile, schedule, ..
    } = options;
    let selected = selection.arms(registry);
    if selected.is_empty() {
        return Err(UsageError::error(
            "the selection matches no arm (see `serbench list`)",
        ));
    }
    let out = OutDir::lock(&options.out)?;
    let this_run = ResultRow::of_run(
        &Host::detect(),
        profile.name,
        *schedule,
        &utc_timestamp(SystemTime::now()),
    );
    let kept = if options.resume {
        resumed(&out, &this_run, &selected)?
    } else {
        out.claim(SetKind::Run, options.replace)?;
        Kept::default()
    };
    // The report at the end reads the folder's robustness.csv: it must be valid before anything
    // is measured.
    let robustness = out.file(crate::robustness::FILE_NAME);
    if robustness.exists() {
        crate::robustness::read_csv(&robustness)?;
    }
    let arms: Vec<&Arm> = selected
        .into_iter()
        .filter(|arm| !kept.rows.iter().any(|row| row.is_arm(&arm.id)))
        .collect();
    if options.resume {
        eprintln!(
            "resuming {}: {} arms kept; {} arms to run, {} of them failed before (resume retries failed arms)",
            out.path().display(),
            kept.rows.len(),
            arms.len(),
            kept.retried
        );
    }

    let mut results = if kept.rewrite {
        out.start_csv(results::FILE_NAME, &kept.rows)?
    } else {
        out.append_csv(results::FILE_NAME)?
    };
    // Until they are written again from the whole results.csv, they would describe another one.
    out.remove(&DERIVED_FILES)?;
    let progress = Progress::new(arms.len() as u64, profile);
    let mut rows = kept.rows;
    for payload in crate::payload::specs() {
        let block: Vec<&Arm> = arms
            .iter()
            .copied()
            .filter(|arm| arm.id.codec.payload == payload.name)
            .collect();
        if block.is_empty() {
            continue;
        }
        progress.block(payload.name);
        let outcomes = match profile.processes {
            None => measure_here(&block, profile, *schedule, &progress),
            Some(processes) => measure_in_workers(&block, profile, processes, *schedule, &progress),
        };
        let block_rows: Vec<ResultRow> = block
            .iter()
            .zip(outcomes)
            .map(|(arm, outcome)| {
                let row = this_run.for_arm(&arm.id, arm.spec.records);
                let row = match outcome {
                    Ok((measurement, encoded_bytes)) => row.measured(encoded_bytes, &measurement),
                    Err(error) => row.failed(&error),
                };
                progress.finished(&arm.id, &row);
                row
            })
            .collect();
        results.append(&block_rows)?;
        rows.extend(block_rows);
    }
    progress.done();

    let codecs: Vec<&Encoder> = registry
        .encoders
        .iter()
        .filter(|encoder| rows.iter().any(|row| row.is_codec(&encoder.id)))
        .collect();
    out.write_csv(sizes::FILE_NAME, &compute_sizes(&codecs))?;
    out.write_csv(ratios::FILE_NAME, &ratios::headline(&rows))?;
    let report = markdown::write(&[load::load(out.path())?], &out)?.report;
    Ok(RunSummary { rows, report })
}

/// What a run keeps of the folder's results.csv, and whether the file must be written anew
/// (without a torn last row or the rows of arms measured again) before rows are appended.
struct Kept {
    rows: Vec<ResultRow>,
    /// Failed arms whose rows were dropped, to be measured again.
    retried: usize,
    rewrite: bool,
}

impl Default for Kept {
    /// A new result set: a fresh results.csv.
    fn default() -> Kept {
        Kept {
            rows: Vec::new(),
            retried: 0,
            rewrite: true,
        }
    }
}

/// The folder's set that `--resume` extends: validated, of the same machine, build, profile and
/// schedule as `this_run`; its failed arms among `selected`, and a torn last row, are dropped to
/// be measured again.
fn resumed(out: &OutDir, this_run: &ResultRow, selected: &[&Arm]) -> Result<Kept> {
    if !out.holds(results::FILE_NAME) {
        out.claim(SetKind::Run, false)?;
        eprintln!("nothing to resume in {}: a new result set", out.path().display());
        return Ok(Kept::default());
    }
    let table = files::read::<ResultRow>(&out.file(results::FILE_NAME))?;
    if let Some(first) = table.rows.first() {
        for ((column, theirs), (_, ours)) in first.set().into_iter().zip(this_run.set()) {
            if theirs != ours {
                return Err(UsageError::error(format!(
                    "{}: cannot resume a set of {column} {theirs:?} with this run's {ours:?}: --resume \
                     extends only the same set (machine, build, profile, schedule); pass --replace to \
                     move it aside and start anew, or choose another --out",
                    table.path.display()
                )));
            }
        }
    }
    let (retried, rows): (Vec<ResultRow>, Vec<ResultRow>) = table
        .rows
        .into_iter()
        .partition(|row| row.status != STATUS_OK && selected.iter().any(|arm| row.is_arm(&arm.id)));
    if let Some(line) = table.torn_line {
        eprintln!(
            "{}:{line}: a torn last row (an interrupted write) is dropped; its arm is measured again",
            table.path.display()
        );
    }
    Ok(Kept {
        rows,
        retried: retried.len(),
        rewrite: table.torn_line.is_some() || !retried.is_empty(),
    })
}

/// What measuring one arm gave: its measurement and encoded size, or why it has none.
type Outcome = Result<(Measurement, usize)>;

/// Proves and times a block in this process.
fn measure_here(block: &[&Arm], profile: &Profile, schedule: Schedule, progress: &Progress) -> Vec<Outcome> {
    sample_here(block, profile, schedule, || progress.rep())
        .into_iter()
        .map(|sampled| {
            sampled.map(|(sampled, encoded_bytes)| (Measurement::of(&[sampled], profile), encoded_bytes))
        })
        .collect()
}

/// Proves every arm of `block` in this process and samples the proven ones together: their
/// reps and encoded sizes, or why an arm has none, in block order.
fn sample_here(
    block: &[&Arm],
    profile: &Profile,
    schedule: Schedule,
    on_rep: impl FnMut(),
) -> Vec<Result<(Sampled, usize)>> {
    let mut failures: Vec<Option<anyhow::Error>> = Vec::new();
    let mut runners = Vec::new();
    let mut encoded = Vec::new();
    for arm in block {
        match arm.prepare() {
            Ok(prepared) => {
                runners.push(prepared.runner);
                encoded.push(prepared.encoded_bytes);
                failures.push(None);
            }
            Err(error) => failures.push(Some(error)),
        }
    }
    let mut sampled = sample_block(&mut runners, profile, schedule, on_rep)
        .into_iter()
        .zip(encoded);
    block
        .iter()
        .zip(failures)
        .map(|(arm, failure)| match failure {
            Some(error) => Err(error),
            None => {
                let (sampled, encoded_bytes) = sampled.next().expect("one sample set per proven arm");
                sampled
                    .map(|sampled| (sampled, encoded_bytes))
                    .map_err(|error| error.context(format!("{}: failed while timed", arm.id)))
            }
        })
        .collect()
}

/// Times a block in worker processes, one after another (see [`Processes`]): each worker
/// samples the arms that still need reps by the profile's rule, until none does. An arm whose
/// worker fails (its proof, an error while timed, or the worker process itself) is failed with
/// the reason; the others go on.
fn measure_in_workers(
    block: &[&Arm],
    profile: &Profile,
    processes: Processes,
    schedule: Schedule,
    progress: &Progress,
) -> Vec<Outcome> {
    /// One arm's reps so far, one part per worker process, or why it has none.
    struct Sampling<'a> {
        arm: &'a Arm,
        parts: Vec<Sampled>,
        encoded_bytes: usize,
        error: Option<anyhow::Error>,
    }
    let mut arms: Vec<Sampling> = block
        .iter()
        .map(|&arm| Sampling {
            arm,
            parts: Vec::new(),
            encoded_bytes: 0,
            error: None,
        })
        .collect();
    // Ends: every worker adds reps to each arm it samples, or fails it, and an arm has enough
    // at `max_reps` at the latest.
    loop {
        let mut wanted: Vec<&mut Sampling> = arms
            .iter_mut()
            .filter(|sampling| sampling.error.is_none() && !has_enough(profile, &sampling.parts))
            .collect();
        if wanted.is_empty() {
            break;
        }
        let ids: Vec<ArmId> = wanted.iter().map(|sampling| sampling.arm.id.clone()).collect();
        match start_worker(&ids, profile, schedule) {
            Ok(reports) => {
                for (sampling, report) in wanted.iter_mut().zip(reports) {
                    match report.result {
                        Ok(sampled) => {
                            sampling.encoded_bytes = report.encoded_bytes;
                            sampling.parts.push(sampled);
                        }
                        Err(message) => sampling.error = Some(anyhow!(message)),
                    }
                    (0..processes.reps_each).for_each(|_| progress.rep());
                }
            }
            Err(error) => {
                for sampling in &mut wanted {
                    sampling.error = Some(anyhow!("{}: {error:#}", sampling.arm.id));
                }
            }
        }
    }
    arms.into_iter()
        .map(|sampling| match sampling.error {
            Some(error) => Err(error),
            None => Ok((Measurement::of(&sampling.parts, profile), sampling.encoded_bytes)),
        })
        .collect()
}

fn has_enough(profile: &Profile, parts: &[Sampled]) -> bool {
    let sampled = parts.iter().map(Sampled::duration).sum();
    profile.has_enough(&unit_samples(parts), parts.len(), sampled)
}

/// One arm as a worker reports it to its parent.
#[derive(Debug, Serialize, Deserialize)]
pub struct WorkerReport {
    pub arm: ArmId,
    pub encoded_bytes: usize,
    /// The reps, or the error (with the arm's name) that stopped the arm.
    pub result: Result<Sampled, String>,
}

/// Runs one `block-worker` process over the arms `ids` (given on its standard input) and reads
/// its reports: one per arm, in the same order, each naming its arm.
fn start_worker(ids: &[ArmId], profile: &Profile, schedule: Schedule) -> Result<Vec<WorkerReport>> {
    use std::io::Write;
    use std::process::Stdio;
    let program = std::env::current_exe().context("cannot find this executable for the block workers")?;
    let mut command = Command::new(program);
    command.args(["block-worker", "--profile", profile.name]);
    if schedule == Schedule::Burst {
        command.arg("--burst");
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start a block worker")?;
    let request = serde_json::to_vec(ids)?;
    child
        .stdin
        .take()
        .expect("a piped stdin")
        .write_all(&request)
        .context("cannot send a block worker its arms")?;
    let output = child.wait_with_output().context("cannot read a block worker")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("no message");
        bail!("its block worker failed ({}): {last}", output.status);
    }
    let reports: Vec<WorkerReport> =
        serde_json::from_slice(&output.stdout).context("a block worker's report is not valid JSON")?;
    let reported: Vec<&ArmId> = reports.iter().map(|report| &report.arm).collect();
    if reported.len() != ids.len() || reported.iter().zip(ids).any(|(reported, id)| *reported != id) {
        bail!("a block worker reported other arms than it was given");
    }
    Ok(reports)
}

/// What a `block-worker` process does: proves the arms `ids` (fresh, in this process) and
/// samples them with the profile's worker share ([`Profile::worker`]).
pub fn block_worker(
    registry: &Registry,
    ids: &[ArmId],
    profile: &Profile,
    schedule: Schedule,
) -> Result<Vec<WorkerReport>> {
    let block = ids
        .iter()
        .map(|id| {
            registry
                .arm(id)
                .with_context(|| format!("{id}: no such arm in this build"))
        })
        .collect::<Result<Vec<&Arm>>>()?;
    Ok(sample_here(&block, &profile.worker(), schedule, || {})
        .into_iter()
        .zip(ids)
        .map(|(sampled, id)| match sampled {
            Ok((sampled, encoded_bytes)) => WorkerReport {
                arm: id.clone(),
                encoded_bytes,
                result: Ok(sampled),
            },
            Err(error) => WorkerReport {
                arm: id.clone(),
                encoded_bytes: 0,
                result: Err(format!("{error:#}")),
            },
        })
        .collect())
}

/// The sizes of `codecs`, against the compact JSON of each payload.
fn compute_sizes(codecs: &[&Encoder]) -> Vec<sizes::SizeRow> {
    sizes::compute(codecs, &crate::payload::json_reference_bytes())
}

/// `serbench sizes`: writes `out/sizes.csv` for the selected codecs, in a folder that holds no
/// result set (or, with `replace`, after moving it aside).
pub fn write_sizes(registry: &Registry, selection: &Selection, out: &Path, replace: bool) -> Result<PathBuf> {
    let codecs = selection.encoders(registry);
    if codecs.is_empty() {
        return Err(UsageError::error(
            "the selection matches no codec (see `serbench list`)",
        ));
    }
    let out = OutDir::for_new_set(out, SetKind::Sizes, replace)?;
    out.write_csv(sizes::FILE_NAME, &compute_sizes(&codecs))
}

/// A progress bar on a terminal (one step per rep, at most `max_reps` per arm); otherwise one
/// line per finished arm on stderr.
struct Progress {
    bar: Option<ProgressBar>,
    reps_per_arm: u64,
    arms_done: std::cell::Cell<u64>,
}

impl Progress {
    fn new(arms: u64, profile: &Profile) -> Progress {
        let reps_per_arm = profile.max_reps as u64;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(arms * reps_per_arm);
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {percent:>3}% eta {eta} {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            reps_per_arm,
            arms_done: std::cell::Cell::new(0),
        }
    }

    fn block(&self, payload: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(payload.to_string());
        }
    }

    fn rep(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finished(&self, id: &ArmId, row: &ResultRow) {
        let line = match (row.ns_per_record, row.relative_half_width()) {
            (Some(ns), Some(half)) => format!("{id}: {ns:.1} ns/record ±{:.1}%", half * 100.0),
            _ => format!("{id}: {} {}", row.status, row.note),
        };
        match &self.bar {
            Some(bar) => {
                // Arms may stop before their maximum reps: the position follows finished arms.
                self.arms_done.set(self.arms_done.get() + 1);
                bar.set_position(bar.position().max(self.arms_done.get() * self.reps_per_arm));
                if row.status != "ok" {
                    bar.println(line);
                }
            }
            None => eprintln!("{line}"),
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

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
    pub fn codec(&self, id: &CodecId) -> bool {
        allows(&self.formats, id.format)
            && allows(&self.backends, id.backend)
            && allows(&self.payloads, id.payload.name)
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
    for payload in registry.payloads() {
        let block: Vec<&Arm> = arms
            .iter()
            .copied()
            .filter(|arm| arm.id.codec.payload.name == payload.name)
            .collect();
        if block.is_empty() {
            continue;
        }
        progress.block(payload.name);
        let outcomes = match profile.processes {
            None => measure_here(&block, profile, *schedule, &progress),
            Some(processes) => measure_in_workers(registry, &block, profile, processes, *schedule, &progress),
        };
        let block_rows: Vec<ResultRow> = block
            .iter()
            .zip(outcomes)
            .map(|(arm, outcome)| {
                let row = this_run.for_arm(&arm.id);
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
    out.write_csv(sizes::FILE_NAME, &compute_sizes(registry, &codecs))?;
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
/// worker fails (its proof, an error while timed, or the
/// worker process itself) is failed with the reason; the others go on.
fn measure_in_workers(
    registry: &Registry,
    block: &[&Arm],
    profile: &Profile,
    processes: Processes,
    schedule: Schedule,
    progress: &Progress,
) -> Vec<Outcome> {
    let indices: Vec<usize> = block
        .iter()
        .map(|arm| {
            registry
                .arms
                .iter()
                .position(|other| std::ptr::eq(other, *arm))
                .expect("a selected arm is in the registry")
        })
        .collect();
    let mut parts: Vec<Vec<Sampled>> = vec![Vec::new(); block.len()];
    let mut encoded = vec![0; block.len()];
    let mut errors: Vec<Option<anyhow::Error>> = block.iter().map(|_| None).collect();
    // Ends: every worker adds `reps_each` reps to each arm it samples, or fails it, and an arm
    // has enough at `max_reps` at the latest.
    loop {
        let wanted: Vec<usize> = (0..block.len())
            .filter(|&arm| errors[arm].is_none() && !has_enough(profile, &parts[arm]))
            .collect();
        if wanted.is_empty() {
            break;
        }
        let arm_indices: Vec<usize> = wanted.iter().map(|&arm| indices[arm]).collect();
        match start_worker(&arm_indices, profile, schedule, &registry.data_request) {
            Ok(reports) => {
                for (&arm, report) in wanted.iter().zip(reports) {
                    match report.result {
                        Ok(sampled) => {
                            encoded[arm] = report.encoded_bytes;
                            parts[arm].push(sampled);
                        }
                        Err(message) => errors[arm] = Some(anyhow!(message)),
                    }
                    (0..processes.reps_each).for_each(|_| progress.rep());
                }
            }
            Err(error) => {
                for &arm in &wanted {
                    errors[arm] = Some(anyhow!("{}: {error:#}", block[arm].id));
                }
            }
        }
    }
    errors
        .into_iter()
        .zip(parts)
        .zip(encoded)
        .map(|((error, parts), encoded_bytes)| match error {
            Some(error) => Err(error),
            None => Ok((Measurement::of(&parts, profile), encoded_bytes)),
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
    pub encoded_bytes: usize,
    /// The reps, or the error (with the arm's name) that stopped the arm.
    pub result: Result<Sampled, String>,
}

/// Runs one `block-worker` process over the arms `arm_indices` (registry order, the registry
/// built with `data`) and reads its reports, one per arm in the same order.
fn start_worker(
    arm_indices: &[usize],
    profile: &Profile,
    schedule: Schedule,
    data: &crate::payload::data::Request,
) -> Result<Vec<WorkerReport>> {
    let program = std::env::current_exe().context("cannot find this executable for the block workers")?;
    let arms: Vec<String> = arm_indices.iter().map(usize::to_string).collect();
    let mut command = Command::new(program);
    command.args([
        "block-worker",
        "--profile",
        profile.name,
        "--arms",
        &arms.join(","),
    ]);
    if schedule == Schedule::Burst {
        command.arg("--burst");
    }
    command.args(data.to_args());
    let output = command.output().context("cannot start a block worker")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("no message");
        bail!("its block worker failed ({}): {last}", output.status);
    }
    let reports: Vec<WorkerReport> =
        serde_json::from_slice(&output.stdout).context("a block worker's report is not valid JSON")?;
    if reports.len() != arm_indices.len() {
        bail!(
            "a block worker reported {} arms of {}",
            reports.len(),
            arm_indices.len()
        );
    }
    Ok(reports)
}

/// What a `block-worker` process does: proves the registry's arms `arm_indices` (fresh, in
/// this process) and samples them with the profile's worker share ([`Profile::worker`]).
pub fn block_worker(
    registry: &Registry,
    arm_indices: &[usize],
    profile: &Profile,
    schedule: Schedule,
) -> Result<Vec<WorkerReport>> {
    let block = arm_indices
        .iter()
        .map(|&index| {
            registry
                .arms
                .get(index)
                .with_context(|| format!("no arm number {index} in the registry"))
        })
        .collect::<Result<Vec<&Arm>>>()?;
    Ok(sample_here(&block, &profile.worker(), schedule, || {})
        .into_iter()
        .map(|sampled| match sampled {
            Ok((sampled, encoded_bytes)) => WorkerReport {
                encoded_bytes,
                result: Ok(sampled),
            },
            Err(error) => WorkerReport {
                encoded_bytes: 0,
                result: Err(format!("{error:#}")),
            },
        })
        .collect())
}

/// The sizes of `codecs`, against the compact JSON of each payload.
fn compute_sizes(registry: &Registry, codecs: &[&Encoder]) -> Vec<sizes::SizeRow> {
    sizes::compute(codecs, &registry.json_reference_bytes())
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
    out.write_csv(sizes::FILE_NAME, &compute_sizes(registry, &codecs))
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

//! Drives the stages for one `serbench run`: select arms from the registry, claim the output
//! folder (its lock, then a fresh set, a `--replace`d one or a `--resume`d one, everything the
//! run will read validated first), prove and time the arms block by block (a block is every
//! selected arm of one payload, measured round-robin), append each finished block's rows to
//! results.csv, then write what is derived from the whole results.csv: sizes.csv, the headline
//! ratios (ratios.csv) and the report. A profile with [`Processes`] times each block in worker
//! processes (this executable's hidden `worker` subcommand, [`block_worker`]) and
//! combines their reps.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use crate::UsageError;
use crate::arm::{Arm, ArmId, CodecId, Encoder, Operation};
use crate::escape;
use crate::files::{self, OutDir, Record, ResultSet};
use crate::format::Registry;
use crate::host::{Host, utc_timestamp};
use crate::measure::{Measurement, Profile, Schedule};
use crate::schema::results::{self, ResultRow, STATUS_OK};
use crate::schema::samples::{self, SampleRow};
use crate::schema::{self, SetKind, load, ratios, sizes, sources};

pub mod layouts;
mod passes;
pub mod sessions;
pub mod versus;
pub mod watchdog;
mod workers;

use workers::sample_here;
pub use workers::{ArmSample, block_worker};

/// Which part of the matrix to touch; an empty list selects everything on that axis.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub formats: Vec<String>,
    pub backends: Vec<String>,
    pub payloads: Vec<String>,
    pub operations: Vec<Operation>,
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
        self.codec(&id.codec) && (self.operations.is_empty() || self.operations.contains(&id.operation))
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
    /// Other builds of this serbench (code layouts) whose worker processes the full profile
    /// takes turns with, pass by pass; empty: this executable only.
    pub layouts: Vec<PathBuf>,
    /// How long the run may go without progress before it stops ([`watchdog`]).
    pub stall_limit: Duration,
}

/// What a run leaves: every row of its results.csv, its headline ratios, and its folder, still
/// locked, for the report to be written into.
#[derive(Debug)]
pub struct RunSummary {
    pub rows: Vec<ResultRow>,
    /// The headline ratios (ratios.csv), paired where the run kept its workers.
    pub ratios: Vec<ratios::Ratio>,
    pub out: OutDir,
}

/// Measures the selected arms into `out/results.csv`, then writes `out/sizes.csv` and
/// `out/ratios.csv` from the whole file (the report is the caller's to write). Without `resume` or `replace`, a folder
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
    if !options.layouts.is_empty() {
        if profile.passes.is_none() {
            return Err(UsageError::error(format!(
                "--layout takes turns between worker processes, which only the full profile starts (not --profile {})",
                profile.name
            )));
        }
        layouts::check_versions(&options.layouts)?;
    }
    let out = OutDir::lock(&options.out)?;
    // The full profile's workers draw their programs from this build's layouts (or those given).
    let pool = match (profile.passes, options.layouts.is_empty()) {
        (None, _) => None,
        (Some(_), true) => Some(layouts::Pool::of_this_build()?),
        (Some(_), false) => Some(layouts::Pool {
            programs: options.layouts.clone(),
            none_because: None,
        }),
    };
    let _watchdog = watchdog::Watchdog::start(
        options.stall_limit,
        out.file(results::FILE_NAME).display().to_string(),
    );
    let this_run = ResultRow::of_run(
        &Host::detect(),
        profile.name,
        *schedule,
        &utc_timestamp(SystemTime::now()),
    );
    // The report at the end reads the folder's other files: they must be valid before anything
    // is moved aside or measured.
    load::check_besides(out.path(), SetKind::Run.files())?;
    // A resumed set's report is written anew at the end: a file of another's among its files
    // is refused now, before anything is measured (a new set's claim moves or refuses them).
    if options.resume {
        out.check_owned(schema::REPORT)?;
    }
    // A quick or smoke set reads a samples.csv only at the end (the full profile's resume reads
    // it first): it must be valid before a row is added.
    if options.resume && profile.passes.is_none() && out.holds(samples::FILE_NAME) {
        files::read_complete::<SampleRow>(&out.file(samples::FILE_NAME))?;
    }
    let kept = if options.resume {
        resumed(&out, &this_run, &selected)?
    } else {
        out.claim(SetKind::Run, options.replace)?;
        Kept::default()
    };
    let held = if options.resume && out.holds(sources::FILE_NAME) {
        files::read_complete(&out.file(sources::FILE_NAME))?
    } else {
        Vec::new()
    };
    let ours = registry
        .data
        .iter()
        .map(|data| sources::SourceRow::of(data))
        .collect();
    let sources = sources::check_and_merge(held, &kept.rows, ours, &out.path().display().to_string())?;
    if !sources.is_empty() {
        out.write_csv(sources::FILE_NAME, &sources)?;
    }
    let rows = match profile.passes {
        None => run_here(
            registry,
            &selected,
            kept,
            profile,
            *schedule,
            &this_run,
            &out,
            options.resume,
        )?,
        Some(passes) => {
            let resumed = if options.resume {
                resumed_samples(&out, &this_run, &selected, &kept)?
            } else {
                passes::Resumed {
                    samples: Vec::new(),
                    rewrite: true,
                }
            };
            schema::remove_derived(&out)?;
            passes::run(
                registry,
                &selected,
                resumed,
                profile,
                passes,
                *schedule,
                pool.as_ref().expect("the full profile has a pool"),
                &this_run,
                &out,
            )?
        }
    };

    let codecs: Vec<&Encoder> = registry
        .encoders
        .iter()
        .filter(|encoder| rows.iter().any(|row| row.is_codec(&encoder.id)))
        .collect();
    out.write_csv(sizes::FILE_NAME, &compute_sizes(registry, &codecs))?;
    let samples: Option<Vec<SampleRow>> = out
        .holds(samples::FILE_NAME)
        .then(|| files::read_complete(&out.file(samples::FILE_NAME)))
        .transpose()?;
    let ratios = ratios::headline(&rows, samples.as_deref());
    out.write_csv(ratios::FILE_NAME, &ratios)?;
    Ok(RunSummary { rows, ratios, out })
}

/// The quick and smoke profiles: every selected arm the folder does not hold yet, payload by
/// payload in this process, each block's rows appended to results.csv as it ends.
#[allow(clippy::too_many_arguments)]
fn run_here(
    registry: &Registry,
    selected: &[&Arm],
    kept: Kept,
    profile: &Profile,
    schedule: Schedule,
    this_run: &ResultRow,
    out: &OutDir,
    resume: bool,
) -> Result<Vec<ResultRow>> {
    let arms: Vec<&Arm> = selected
        .iter()
        .copied()
        .filter(|arm| !kept.rows.iter().any(|row| row.is_arm(&arm.id)))
        .collect();
    if resume {
        eprintln!(
            "resuming {}: {} arms kept; {} arms to run, {} of them failed before (resume retries failed arms)",
            escape::terminal(&out.path().display().to_string()),
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
    schema::remove_derived(out)?;
    let progress = Progress::new(arms.len() as u64, profile);
    let mut rows = kept.rows;
    for payload in registry.payloads() {
        let block: Vec<&Arm> = arms
            .iter()
            .copied()
            .filter(|arm| arm.id.codec.payload == payload.name)
            .collect();
        if block.is_empty() {
            continue;
        }
        progress.block(payload.name);
        let mark = crate::busy::mark();
        let outcomes = measure_here(&block, profile, schedule, &progress);
        let busy = mark.and_then(|mark| mark.since());
        let block_rows: Vec<ResultRow> = block
            .iter()
            .zip(outcomes)
            .map(|(arm, outcome)| {
                let row = this_run.for_arm(&arm.id, arm.spec.records).with_busy(busy);
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
    Ok(rows)
}

/// The samples a full-profile `--resume` continues from: the folder's samples.csv (validated,
/// of this run's set), less the samples of the selected arms that failed (measured again). A
/// set that has results but no samples.csv cannot be continued and is refused.
fn resumed_samples(
    out: &OutDir,
    this_run: &ResultRow,
    selected: &[&Arm],
    kept: &Kept,
) -> Result<passes::Resumed> {
    if !out.holds(samples::FILE_NAME) {
        if !kept.rows.is_empty() {
            return Err(UsageError::error(format!(
                "{}: a full-profile set without samples.csv (the workers its intervals come from) cannot \
                 be continued; pass --replace to move it aside and start anew",
                out.path().display()
            )));
        }
        return Ok(passes::Resumed {
            samples: Vec::new(),
            rewrite: true,
        });
    }
    let table = files::read::<SampleRow>(&out.file(samples::FILE_NAME))?;
    let expected = SampleRow::new(this_run, &ArmId::default(), 1, 0, 0, 0.0);
    if let Some(first) = table.rows.first() {
        for ((column, theirs), (_, ours)) in first.set().into_iter().zip(expected.set()) {
            if theirs != ours {
                return Err(UsageError::error(format!(
                    "{}: cannot resume a set of {column} {theirs:?} with this run's {ours:?}",
                    table.path.display()
                )));
            }
        }
    }
    let failed: Vec<ArmId> = table
        .rows
        .iter()
        .filter(|sample| sample.status != STATUS_OK && selected.iter().any(|arm| arm.id == sample.arm))
        .map(|sample| sample.arm.clone())
        .collect();
    let kept_samples: Vec<SampleRow> = table
        .rows
        .into_iter()
        .filter(|sample| !failed.contains(&sample.arm))
        .collect();
    eprintln!(
        "resuming {}: {} worker samples kept, {} failed arms measured again; the passes continue",
        escape::terminal(&out.path().display().to_string()),
        kept_samples.len(),
        failed.len()
    );
    Ok(passes::Resumed {
        samples: kept_samples,
        rewrite: table.torn_line.is_some() || !failed.is_empty(),
    })
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
        eprintln!(
            "nothing to resume in {}: a new result set",
            escape::terminal(&out.path().display().to_string())
        );
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
            "{}:{line}: a torn last row (an interrupted write) is dropped; its arm is measured again \
             if this run selects it",
            escape::terminal(&table.path.display().to_string())
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
    sample_here(block, profile, schedule, false, || {
        progress.rep();
        watchdog::beat();
    })
    .into_iter()
    .map(|sampled| {
        sampled.map(|sample| {
            (
                Measurement::of_process(&sample.sampled, profile),
                sample.encoded_bytes,
            )
        })
    })
    .collect()
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
            bar.set_message(escape::terminal(payload).into_owned());
        }
    }

    fn rep(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finished(&self, id: &ArmId, row: &ResultRow) {
        // The arm's name and its note may hold anything a data file's name or an error held.
        let line = match (row.ns_per_record, row.relative_half_width()) {
            (Some(ns), Some(half)) => format!("{id}: {ns:.1} ns/record ±{:.1}%", half * 100.0),
            _ => format!("{id}: {} {}", row.status, row.note),
        };
        let line = escape::terminal(&line).into_owned();
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

//! Drives the stages for one `serbench run`: select arms from the registry, prove and time
//! them block by block (a block is every selected arm of one payload, measured round-robin),
//! append each finished block's rows to results.csv, then write sizes.csv and the headline
//! ratios (ratios.csv). A profile with [`Processes`] times each block in worker processes (this
//! executable's hidden `block-worker` subcommand, [`block_worker`]) and combines their reps.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::arm::{Arm, ArmId, CodecId, Encoder};
use crate::format::Registry;
use crate::measure::{Measurement, Processes, Profile, Sampled, Schedule, sample_block, unit_samples};
use crate::report::host::Host;
use crate::report::results::{ResultRow, ResultsWriter, write_rows};
use crate::report::{ratios, sizes};

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
    /// Keep `out/results.csv` and skip the arms it holds for this commit and profile.
    pub resume: bool,
}

/// Measures the selected arms into `out/results.csv` and writes `out/sizes.csv` and
/// `out/ratios.csv`. With `resume`, arms already recorded by the same commit and profile are
/// skipped and the file is appended to; the returned rows are the whole file's.
pub fn run(registry: &Registry, selection: &Selection, options: &RunOptions) -> Result<Vec<ResultRow>> {
    let RunOptions {
        profile,
        schedule,
        out,
        resume,
    } = options;
    let (profile, out, resume) = (profile, out.as_path(), *resume);
    let host = Host::detect();
    // Opening the file first proves the folder is writable before anything is measured.
    let (mut writer, recorded) = ResultsWriter::open(out, resume)?;
    let done: Vec<&ResultRow> = recorded
        .iter()
        .filter(|row| row.commit == host.commit && row.profile == profile.name)
        .collect();
    let arms: Vec<&Arm> = selection
        .arms(registry)
        .into_iter()
        .filter(|arm| !done.iter().any(|row| row.is_arm(&arm.id)))
        .collect();
    if resume {
        eprintln!(
            "resuming: {} arms already recorded, {} to run",
            done.len(),
            arms.len()
        );
    } else {
        anyhow::ensure!(
            !arms.is_empty(),
            "the selection matches no arm (see `serbench list`)"
        );
    }
    let timestamp = utc_timestamp(SystemTime::now());
    let progress = Progress::new(arms.len() as u64, profile);
    let mut rows = recorded;

    for payload in crate::payload::specs() {
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
        for (arm, outcome) in block.iter().zip(outcomes) {
            let row = ResultRow::new(&arm.id, &host, profile.name, &timestamp).scheduled(*schedule);
            let row = match outcome {
                Ok((measurement, encoded_bytes)) => row.measured(encoded_bytes, &measurement),
                Err(error) => row.failed(&error),
            };
            progress.finished(&arm.id, &row);
            writer.append(&row)?;
            rows.push(row);
        }
    }
    progress.done();
    write_sizes(registry, selection, out)?;
    write_rows(&out.join(ratios::FILE_NAME), &ratios::headline(&rows))?;
    Ok(rows)
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
        match start_worker(&arm_indices, profile, schedule) {
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

/// Runs one `block-worker` process over the arms `arm_indices` (registry order) and reads its
/// reports, one per arm in the same order.
fn start_worker(arm_indices: &[usize], profile: &Profile, schedule: Schedule) -> Result<Vec<WorkerReport>> {
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

/// Writes `out/sizes.csv` for the selected codecs.
pub fn write_sizes(registry: &Registry, selection: &Selection, out: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let rows = sizes::compute(
        &selection.encoders(registry),
        &crate::payload::json_reference_bytes(),
    );
    let path = out.join(sizes::FILE_NAME);
    write_rows(&path, &rows)?;
    Ok(path)
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

/// `YYYY-MM-DDTHH:MM:SSZ` without a date-time dependency (days-to-civil, Howard Hinnant).
pub fn utc_timestamp(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()) as i64;
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(utc_timestamp(leap_day), "2000-02-29T01:01:01Z");
    }
}

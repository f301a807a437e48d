//! The full profile's run: passes over the whole matrix (see [`Passes`]). In each pass every
//! payload's arms that still need samples are sampled by one fresh worker process, one payload
//! after another; each worker's samples are appended to samples.csv (synced) as it ends, and
//! results.csv is made again from all samples after every pass. An interrupted run keeps every
//! finished worker; `run --resume` reads samples.csv and continues with the next pass.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::workers::start_worker;
use crate::arm::{Arm, ArmId};
use crate::format::Registry;
use crate::measure::{Measurement, Passes, Profile, Schedule};
use crate::report::files::{Appender, OutDir};
use crate::report::results::{self, ResultRow, STATUS_OK};
use crate::report::samples::{self, SampleRow};
use crate::stats::percentile;

/// One arm's workers so far.
struct Arms<'a> {
    /// The selected arms, to sample; arms of a resumed set outside the selection keep their
    /// samples and rows but are not sampled.
    selected: Vec<&'a Arm>,
    samples: BTreeMap<ArmId, Vec<SampleRow>>,
}

impl Arms<'_> {
    fn means(&self, id: &ArmId) -> Vec<f64> {
        self.samples
            .get(id)
            .into_iter()
            .flatten()
            .filter_map(|sample| sample.mean_ns)
            .collect()
    }

    fn failed(&self, id: &ArmId) -> bool {
        self.samples
            .get(id)
            .is_some_and(|samples| samples.iter().any(|sample| sample.status != STATUS_OK))
    }

    /// The selected arms of `payload` that still need a worker by the profile's rule.
    fn wanted(&self, payload: &str, passes: &Passes, profile: &Profile) -> Vec<&Arm> {
        self.selected
            .iter()
            .copied()
            .filter(|arm| arm.id.codec.payload == payload)
            .filter(|arm| {
                !self.failed(&arm.id) && !passes.has_enough(&self.means(&arm.id), profile.precision)
            })
            .collect()
    }

    /// One results row per arm with samples, from all of its workers.
    fn rows(&self, this_run: &ResultRow, profile: &Profile) -> Vec<ResultRow> {
        let mut ids: Vec<&ArmId> = self.samples.keys().collect();
        ids.sort_by_key(|id| id.sort_key());
        ids.into_iter()
            .map(|id| {
                let samples = &self.samples[id];
                let row = this_run.for_arm(id, samples[0].records);
                match samples.iter().find(|sample| sample.status != STATUS_OK) {
                    Some(failed) => row.failed(&anyhow::anyhow!("{}", failed.note)),
                    None => {
                        let first = &samples[0];
                        let means: Vec<f64> = samples.iter().filter_map(|sample| sample.mean_ns).collect();
                        let reps = samples.iter().filter_map(|sample| sample.reps).sum();
                        let sampled = first.sampled().expect("an ok sample has its figures");
                        let measurement = Measurement::of_workers(&means, reps, &sampled, profile);
                        row.measured(first.encoded_bytes.unwrap_or(0), &measurement)
                    }
                }
            })
            .collect()
    }
}

/// The samples of a set being resumed: validated and of this run's set (by the caller), with the
/// samples of the selected arms that failed dropped, so they are measured again.
pub struct Resumed {
    pub samples: Vec<SampleRow>,
    /// Whether samples.csv must be written anew before appending (a torn last row, or samples
    /// dropped).
    pub rewrite: bool,
}

/// Samples `arms` (with `resumed` samples of an earlier, interrupted run of the same set) in
/// passes, into OUT/samples.csv and OUT/results.csv; returns the results rows.
#[allow(clippy::too_many_arguments)]
pub fn run(
    registry: &Registry,
    arms: &[&Arm],
    resumed: Resumed,
    profile: &Profile,
    passes: Passes,
    schedule: Schedule,
    layouts: &[PathBuf],
    this_run: &ResultRow,
    out: &OutDir,
) -> Result<Vec<ResultRow>> {
    let first_pass = resumed
        .samples
        .iter()
        .map(|sample| sample.pass + 1)
        .max()
        .unwrap_or(0);
    let mut file: Appender<SampleRow> = if resumed.rewrite || !out.holds(samples::FILE_NAME) {
        out.start_csv(samples::FILE_NAME, &resumed.samples)?
    } else {
        out.append_csv(samples::FILE_NAME)?
    };
    let mut state = Arms {
        selected: arms.to_vec(),
        samples: BTreeMap::new(),
    };
    for sample in resumed.samples {
        state.samples.entry(sample.arm.clone()).or_default().push(sample);
    }
    let programs: Vec<PathBuf> = if layouts.is_empty() {
        vec![std::env::current_exe()?]
    } else {
        check_layouts(layouts)?;
        layouts.to_vec()
    };
    let started = Instant::now();
    let mut rows = state.rows(this_run, profile);
    for pass in first_pass.. {
        if started.elapsed() >= passes.run_budget {
            eprintln!(
                "pass {pass}: the run's budget of {} s is spent; arms still wider than the target stay so",
                passes.run_budget.as_secs()
            );
            break;
        }
        let layout = pass % programs.len();
        let mut sampled = 0;
        for payload in registry.payloads() {
            let block = state.wanted(payload.name, &passes, profile);
            if block.is_empty() {
                continue;
            }
            let started_s = started.elapsed().as_secs_f64();
            let ids: Vec<ArmId> = block.iter().map(|arm| arm.id.clone()).collect();
            let new =
                |arm: &Arm| SampleRow::new(this_run, &arm.id, arm.spec.records, pass, layout, started_s);
            let block_samples: Vec<SampleRow> =
                match start_worker(&programs[layout], &ids, profile, schedule, &registry.data_request) {
                    Ok(reports) => block
                        .iter()
                        .zip(reports)
                        .map(|(arm, report)| match &report.result {
                            Ok(sampled) => new(arm).measured(sampled, report.encoded_bytes),
                            Err(message) => new(arm).failed(message),
                        })
                        .collect(),
                    Err(error) => block
                        .iter()
                        .map(|arm| new(arm).failed(&format!("{}: {error:#}", arm.id)))
                        .collect(),
                };
            file.append(&block_samples)?;
            sampled += block_samples.len();
            for sample in block_samples {
                state.samples.entry(sample.arm.clone()).or_default().push(sample);
            }
        }
        if sampled == 0 {
            break;
        }
        rows = state.rows(this_run, profile);
        out.write_csv(results::FILE_NAME, &rows)?;
        eprintln!("{}", pass_line(pass, sampled, &rows, profile, started.elapsed()));
    }
    out.write_csv(results::FILE_NAME, &rows)?;
    Ok(rows)
}

/// Refuses a layout that is not a build of this serbench: its `--version` (which names the
/// commit it was built from) must be this executable's.
fn check_layouts(layouts: &[PathBuf]) -> Result<()> {
    let version = |program: &std::path::Path| -> Result<String> {
        let output = std::process::Command::new(program)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run the layout {}", program.display()))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let ours = version(&std::env::current_exe()?)?;
    for layout in layouts {
        let theirs = version(layout)?;
        if theirs != ours {
            return Err(crate::UsageError::error(format!(
                "{}: {theirs:?} is not a build of this serbench ({ours:?})",
                layout.display()
            )));
        }
    }
    Ok(())
}

/// What a pass leaves, for the terminal: arms sampled, how many meet the target, the median
/// half-width, the time so far.
fn pass_line(
    pass: usize,
    sampled: usize,
    rows: &[ResultRow],
    profile: &Profile,
    elapsed: Duration,
) -> String {
    let halves: Vec<f64> = rows.iter().filter_map(ResultRow::relative_half_width).collect();
    let met = rows.iter().filter(|row| row.target_met == Some(true)).count();
    let target = profile.precision.map_or(String::new(), |precision| {
        format!(", {met} within ±{:.0}%", precision * 100.0)
    });
    format!(
        "pass {pass}: {sampled} arms sampled{target}, median ±{:.2}% over {} arms, {:.1} min",
        percentile(&halves, 0.5) * 100.0,
        rows.len(),
        elapsed.as_secs_f64() / 60.0
    )
}

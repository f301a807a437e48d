//! The full profile's run: passes over the whole matrix (see [`Passes`]). In each pass every
//! payload's arms that still need samples are sampled by one fresh worker process, one payload
//! after another; each worker's samples are appended to samples.csv (synced) as it ends, and
//! results.csv is made again from all samples after every pass. An interrupted run keeps every
//! finished worker; `run --resume` reads samples.csv and continues with the next pass.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::layouts::Pool;
use super::workers::start_worker;
use crate::arm::{Arm, ArmId};
use crate::files::{Appender, OutDir};
use crate::format::Registry;
use crate::measure::{Measurement, Passes, Profile, Schedule};
use crate::schema::ratios::{SelfCheckSummary, layout_checks, paired, self_checks, top_level, worker_means};
use crate::schema::results::{self, ResultRow, STATUS_OK};
use crate::schema::samples::{self, SampleRow};
use crate::stats::{self, Summary, percentile};

/// One arm's workers so far.
struct Arms<'a> {
    /// The selected arms, to sample; arms of a resumed set outside the selection keep their
    /// samples and rows but are not sampled.
    selected: Vec<&'a Arm>,
    samples: BTreeMap<ArmId, Vec<SampleRow>>,
}

impl<'a> Arms<'a> {
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

    /// Every section (payload and operation) of the selected arms that have not failed, in
    /// payload order, with how many workers measured it and how wide its widest ratio is.
    fn sections(&self) -> Vec<Section<'a>> {
        let mut sections: Vec<Section<'a>> = Vec::new();
        let mut arms: Vec<&'a Arm> = self
            .selected
            .iter()
            .copied()
            .filter(|arm| !self.failed(&arm.id))
            .collect();
        arms.sort_by_key(|arm| arm.id.sort_key());
        for arm in arms {
            match sections.last_mut() {
                Some(section)
                    if section.arms[0].id.codec.payload == arm.id.codec.payload
                        && section.arms[0].id.operation == arm.id.operation =>
                {
                    section.arms.push(arm)
                }
                _ => sections.push(Section {
                    arms: vec![arm],
                    workers: 0,
                    widest: None,
                }),
            }
        }
        let workers = worker_means(self.samples.values().flatten());
        for section in &mut sections {
            let reference = &section.arms[0].id;
            section.workers = section
                .arms
                .iter()
                .map(|arm| self.means(&arm.id).len())
                .min()
                .unwrap_or(0);
            section.widest = match section.arms.len() {
                1 => Some(Summary::of(&self.means(reference)))
                    .filter(|summary| summary.half_width.is_finite())
                    .map(|summary| summary.relative_half_width()),
                _ => section.arms[1..]
                    .iter()
                    .map(|arm| {
                        stats::paired_ratio(&paired(&workers, &arm.id, reference))
                            .map(|ratio| ratio.relative_half_width())
                    })
                    .collect::<Option<Vec<f64>>>()
                    .map(|halves| halves.into_iter().fold(0.0, f64::max)),
            };
        }
        sections
    }

    /// The arms to sample in this pass, payload by payload, the payloads whose widest section is
    /// widest first (so a run that ends at its budget has narrowed those).
    fn wanted(&self, passes: &Passes, profile: &Profile) -> Vec<Vec<&'a Arm>> {
        let mut blocks: Vec<(Vec<&'a Arm>, f64)> = Vec::new();
        for section in self.sections() {
            if !section.wants(passes, profile) {
                continue;
            }
            let widest = section.widest.unwrap_or(f64::INFINITY);
            match blocks.last_mut() {
                Some((arms, width)) if arms[0].id.codec.payload == section.arms[0].id.codec.payload => {
                    arms.extend(&section.arms);
                    *width = width.max(widest);
                }
                _ => blocks.push((section.arms, widest)),
            }
        }
        blocks.sort_by(|(_, a), (_, b)| b.total_cmp(a));
        blocks.into_iter().map(|(arms, _)| arms).collect()
    }

    /// One results row per arm with samples, from all of its workers. An interval over workers
    /// needs two: until then an arm has no row (its samples are in samples.csv), so results.csv
    /// never holds an unbounded interval; when the run ends (`finished`) an arm still at one
    /// worker is a failed row that says so.
    fn rows(&self, this_run: &ResultRow, profile: &Profile, finished: bool) -> Vec<ResultRow> {
        let mut ids: Vec<&ArmId> = self.samples.keys().collect();
        ids.sort_by_key(|id| id.sort_key());
        ids.into_iter()
            .filter_map(|id| {
                let samples = &self.samples[id];
                let row = this_run.for_arm(id, samples[0].records);
                if let Some(failed) = samples.iter().find(|sample| sample.status != STATUS_OK) {
                    return Some(row.failed(&anyhow::anyhow!("{}", failed.note)));
                }
                let units: Vec<(usize, f64, f64)> = samples
                    .iter()
                    .filter_map(|sample| Some((sample.layout, sample.mean_ns?, 1.0)))
                    .collect();
                // The top level drawn: workers, or layouts where workers shared them.
                let means: Vec<f64> = top_level(&units).into_iter().map(|(mean, _)| mean).collect();
                if units.len() < 2 {
                    return finished.then(|| {
                        row.failed(&anyhow::anyhow!(
                            "{id}: one worker only, so no interval: the run ended before a second"
                        ))
                    });
                }
                let first = &samples[0];
                let reps = samples.iter().filter_map(|sample| sample.reps).sum();
                let sampled = first.sampled().expect("an ok sample has its figures");
                let measurement = Measurement::of_workers(&means, reps, &sampled, profile);
                let busiest = samples
                    .iter()
                    .map(SampleRow::busy)
                    .reduce(|a, b| Some(a?.max(b?)))
                    .flatten();
                Some(
                    row.measured(first.encoded_bytes.unwrap_or(0), &measurement)
                        .with_busy(busiest),
                )
            })
            .collect()
    }
}

/// The selected arms of one payload and operation, measured together in each worker: the first
/// in sort order is the reference every other arm's ratio is taken to.
struct Section<'a> {
    arms: Vec<&'a Arm>,
    /// Workers that measured every arm of the section.
    workers: usize,
    /// The widest relative half-width of an arm's paired ratio to the reference (a lone arm:
    /// of its own interval); `None` before two workers.
    widest: Option<f64>,
}

impl Section<'_> {
    /// Whether the section needs another worker: below `min_workers`, or below `max_workers`
    /// with a ratio wider than the profile's precision.
    fn wants(&self, passes: &Passes, profile: &Profile) -> bool {
        let wide = match (self.widest, profile.precision) {
            (Some(widest), Some(precision)) => widest > precision,
            (None, _) => true,
            (Some(_), None) => false,
        };
        self.workers < passes.min_workers || (self.workers < passes.max_workers && wide)
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
    pool: &Pool,
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
    // Every layout once before any twice, in an order of this run's (samples.csv records the
    // pool index of each worker's layout).
    let draws = pool.draw_order();
    eprintln!(
        "workers draw their program from {} code layout{} ({})",
        pool.layouts(),
        if pool.layouts() == 1 { "" } else { "s" },
        match (pool.layouts(), &pool.none_because) {
            (1, Some(why)) => format!("the plain binary: {why}"),
            (1, None) => "one program: process-level randomization only".to_string(),
            _ => "an interval spans layouts".to_string(),
        }
    );
    let started = Instant::now();
    for pass in first_pass.. {
        if started.elapsed() >= passes.run_budget {
            eprintln!(
                "pass {pass}: the run's budget of {} s is spent; arms still wider than the target stay so",
                passes.run_budget.as_secs()
            );
            break;
        }
        let layout = draws[pass % draws.len()];
        let mut sampled = 0;
        for block in state.wanted(&passes, profile) {
            let started_s = started.elapsed().as_secs_f64();
            let ids: Vec<ArmId> = block.iter().map(|arm| arm.id.clone()).collect();
            let new =
                |arm: &Arm| SampleRow::new(this_run, &arm.id, arm.spec.records, pass, layout, started_s);
            let mark = crate::busy::mark();
            let reports = start_worker(&pool.programs[layout], &ids, profile, schedule, registry);
            super::watchdog::beat();
            let busy = mark.and_then(|mark| mark.since());
            let new = |arm: &Arm| new(arm).with_busy(busy);
            let block_samples: Vec<SampleRow> = match reports {
                Ok(reports) => block
                    .iter()
                    .zip(reports)
                    .map(|(arm, report)| match &report.result {
                        Ok(sampled) => new(arm).measured(sampled, report.encoded_bytes, report.twin_mean_ns),
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
        let rows = state.rows(this_run, profile, false);
        out.write_csv(results::FILE_NAME, &rows)?;
        let widths: Vec<Option<f64>> = state.sections().iter().map(|section| section.widest).collect();
        eprintln!(
            "{}",
            pass_line(pass, sampled, &widths, profile, started.elapsed())
        );
    }
    let rows = state.rows(this_run, profile, true);
    out.write_csv(results::FILE_NAME, &rows)?;
    let samples: Vec<SampleRow> = state.samples.into_values().flatten().collect();
    if let Some(summary) = SelfCheckSummary::of(&self_checks(&samples)) {
        eprintln!("{}", summary.sentence());
    }
    match SelfCheckSummary::of(&layout_checks(&samples)) {
        Some(summary) => eprintln!("{}", summary.layouts_sentence()),
        None if pool.layouts() == 1 => {
            eprintln!(
                "A/A check across code layouts: not run, the workers ran one layout (`serbench layouts`)"
            )
        }
        None => {
            eprintln!("A/A check across code layouts: no section had two workers in each half of the layouts")
        }
    }
    Ok(rows)
}

/// What a pass leaves, for the terminal: arms sampled, how many sections' ratios meet the
/// target (`widths`: each section's widest ratio, see [`Section::widest`]), the median width,
/// the time so far.
fn pass_line(
    pass: usize,
    sampled: usize,
    widths: &[Option<f64>],
    profile: &Profile,
    elapsed: Duration,
) -> String {
    let halves: Vec<f64> = widths.iter().flatten().copied().collect();
    let target = profile.precision.map_or(String::new(), |precision| {
        let met = halves.iter().filter(|&&half| half <= precision).count();
        format!(
            ", {met} of {} sections within ±{:.0}%",
            widths.len(),
            precision * 100.0
        )
    });
    // After the first pass every arm has one worker, and an interval needs two.
    let median = match halves.is_empty() {
        true => "no interval yet (one worker per arm)".to_string(),
        false => format!(
            "widest ratio to each section's reference: median ±{:.2}%",
            percentile(&halves, 0.5) * 100.0,
        ),
    };
    format!(
        "pass {pass}: {sampled} arms sampled{target}, {median}, {:.1} min",
        elapsed.as_secs_f64() / 60.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::{ArmId, Operation};
    use crate::measure::Sampled;
    use crate::schema::results::STATUS_FAILED;

    #[test]
    fn a_pass_line_without_intervals_says_so() {
        let profile = Profile::FULL;
        let minute = Duration::from_secs(60);
        let line = pass_line(0, 2, &[None, None], &profile, minute);
        assert!(
            line.contains("no interval yet") && !line.contains("NaN"),
            "{line}"
        );
        let line = pass_line(1, 2, &[Some(0.02), Some(0.005), None], &profile, minute);
        assert!(
            line.contains(
                "1 of 3 sections within ±1%, widest ratio to each section's reference: median ±1.25%, 1.0 min"
            ),
            "{line}"
        );
    }

    #[test]
    fn an_arm_gets_a_row_once_two_workers_bound_its_interval() {
        let profile = Profile::FULL;
        let this_run = ResultRow::default();
        let id = ArmId::typed("json", "serde_json", "", "order", Operation::Decode);
        let worker = |pass: usize, mean_ns: f64| {
            let sampled = Sampled {
                batch: 10,
                samples_ns: vec![mean_ns; 3],
                allocs_per_op: 1.0,
                alloc_bytes_per_op: 8.0,
                peak_heap_bytes: 8.0,
            };
            SampleRow::new(&this_run, &id, 1, pass, 0, 0.0).measured(&sampled, 100, None)
        };
        let mut arms = Arms {
            selected: Vec::new(),
            samples: BTreeMap::from([(id.clone(), vec![worker(0, 100.0)])]),
        };
        assert!(arms.rows(&this_run, &profile, false).is_empty());
        let last = arms.rows(&this_run, &profile, true);
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].status, STATUS_FAILED);
        assert!(last[0].note.contains("one worker only"), "{}", last[0].note);
        arms.samples.get_mut(&id).unwrap().push(worker(1, 102.0));
        let rows = arms.rows(&this_run, &profile, false);
        assert_eq!(rows.len(), 1);
        let (low, high) = (rows[0].ci95_low_ns.unwrap(), rows[0].ci95_high_ns.unwrap());
        assert!(
            low.is_finite() && high.is_finite() && low < 101.0 && 101.0 < high,
            "{low} {high}"
        );
    }
}

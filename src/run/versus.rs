//! `serbench vs A B` over processes: its whole budget spread over fresh worker processes, each a
//! draw of a code layout from the pool ([`Pool`]), an environment size, stack and heap offsets
//! and a preparation order, each timing paired rounds of the two arms ([`paired_rounds`]). The
//! ratio's interval is Student t over [`BLOCKS`] consecutive blocks of processes
//! ([`stats::blocked_ratio`]): each block holds processes of several layouts and the machine's
//! state of its seconds, so the interval spans the process, layout and drift within the run. How
//! many rounds a process takes follows Kalibera & Jones' rule from the variances and costs the
//! first processes measure ([`stats::repetitions_per_unit`]).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::layouts::Pool;
use crate::arm::{Arm, ArmId};
use crate::format::Registry;
use crate::measure::{Order, Slices, paired_rounds};
use crate::stats::{self, RatioInterval};
use crate::worker::{self, Launcher, Request, VersusReport};

/// Processes measured with [`PILOT_ROUNDS`] each before the rule chooses the rounds.
const PILOT_PROCESSES: usize = 4;
const PILOT_ROUNDS: usize = 100;
/// The top-level units of the interval: blocks of consecutive processes (7 degrees of freedom).
pub const BLOCKS: usize = 8;
/// The bounds on the rounds per process the rule may choose.
const MIN_ROUNDS: usize = 50;
const MAX_ROUNDS: usize = 2000;
/// The share of a process's rounds left out at each end of its trimmed mean.
const TRIM: f64 = 0.1;
/// Rounds per batch when a process's own (within) variance is estimated.
const BATCH: usize = 25;

/// What `vs` over processes measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub interval: RatioInterval,
    /// The interval's degrees of freedom: its blocks less one.
    pub degrees_of_freedom: usize,
    pub processes: usize,
    /// Distinct code layouts the processes ran.
    pub layouts: usize,
    pub elapsed: Duration,
    /// The rounds per process the rule chose (the pilot's until it could), and its inputs.
    pub rounds_per_process: usize,
    pub levels: Option<Levels>,
}

/// The variance at each level as the processes measured it, on the log-ratio (so a standard
/// deviation reads as a relative spread), and the costs the rule weighs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Levels {
    /// Of one paired round, as its process's batch means imply (correlation between neighbouring
    /// rounds included).
    pub round_sd: f64,
    /// What a new process (and layout) adds to a process's mean beyond its rounds' noise.
    pub process_sd: f64,
    /// Seconds of one round, and of a process beyond its rounds (start, proofs, warm-up).
    pub round_s: f64,
    pub process_s: f64,
}

/// One worker's rounds and what it cost.
struct Process {
    log_ratios: Vec<f64>,
    timed_s: f64,
    wall_s: f64,
}

impl Process {
    /// The process's log-ratio: the mean of its rounds without the highest and lowest tenth
    /// ([`stats::trimmed_mean`]), so a round in which the scheduler took the core from one arm's
    /// slice (a log-ratio of ±2 or more where rounds spread by a few percent) does not move it.
    fn mean(&self) -> f64 {
        stats::trimmed_mean(&self.log_ratios, TRIM)
    }

    /// The variance of this process's mean from its own rounds (over batch means).
    fn within_variance(&self) -> Option<f64> {
        let means: Vec<f64> = self
            .log_ratios
            .chunks_exact(BATCH)
            .map(|batch| batch.iter().sum::<f64>() / BATCH as f64)
            .collect();
        (means.len() >= 2).then(|| variance(&means) / means.len() as f64)
    }
}

fn variance(values: &[f64]) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().map(|value| (value - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64
}

/// The levels the processes so far show; `None` before two processes with two batches each.
fn levels(processes: &[Process]) -> Option<Levels> {
    let within: Vec<(f64, usize)> = processes
        .iter()
        .map(|process| Some((process.within_variance()?, process.log_ratios.len())))
        .collect::<Option<_>>()?;
    if within.len() < 2 {
        return None;
    }
    let mean_within = within.iter().map(|(variance, _)| variance).sum::<f64>() / within.len() as f64;
    let round_variance = within
        .iter()
        .map(|&(variance, rounds)| variance * rounds as f64)
        .sum::<f64>()
        / within.len() as f64;
    let means: Vec<f64> = processes.iter().map(Process::mean).collect();
    let process_variance = (variance(&means) - mean_within).max(0.0);
    let count = processes.len() as f64;
    let rounds: usize = processes.iter().map(|process| process.log_ratios.len()).sum();
    let timed: f64 = processes.iter().map(|process| process.timed_s).sum();
    Some(Levels {
        round_sd: round_variance.sqrt(),
        process_sd: process_variance.sqrt(),
        round_s: timed / rounds as f64,
        process_s: processes
            .iter()
            .map(|process| process.wall_s - process.timed_s)
            .sum::<f64>()
            / count,
    })
}

/// Rounds per process by Kalibera & Jones' rule, within [`MIN_ROUNDS`]..=[`MAX_ROUNDS`].
fn chosen_rounds(levels: &Levels) -> usize {
    let rule = stats::repetitions_per_unit(
        levels.round_sd.powi(2),
        levels.process_sd.powi(2),
        levels.round_s,
        levels.process_s,
    );
    rule.map_or(MAX_ROUNDS, |rounds| rounds.round() as usize)
        .clamp(MIN_ROUNDS, MAX_ROUNDS)
}

/// Measures `a / b` over fresh processes drawn from `pool` until no further process fits in
/// `budget`. No stop at a precision: a run that stops once its interval looks narrow enough
/// stops when its noise happens to look small.
pub fn over_processes(
    registry: &Registry,
    pool: &Pool,
    a: &Arm,
    b: &Arm,
    budget: Duration,
) -> Result<Outcome> {
    let started = Instant::now();
    let draws = pool.draw_order();
    let mut processes: Vec<Process> = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    let mut rounds = PILOT_ROUNDS;
    let interval = loop {
        let layout = draws[processes.len() % draws.len()];
        let launched = Instant::now();
        let report = start(registry, &pool.programs[layout], &a.id, &b.id, rounds)?;
        let wall_s = launched.elapsed().as_secs_f64();
        processes.push(Process {
            log_ratios: report.log_ratios,
            timed_s: report.timed_s.min(wall_s),
            wall_s,
        });
        used.insert(layout);
        let means: Vec<f64> = processes.iter().map(Process::mean).collect();
        let interval = stats::blocked_ratio(&means, BLOCKS);
        let mut next_s = wall_s;
        if processes.len() >= PILOT_PROCESSES
            && let Some(levels) = levels(&processes)
        {
            rounds = chosen_rounds(&levels);
            next_s = levels.process_s + rounds as f64 * levels.round_s;
        }
        if started.elapsed().as_secs_f64() + next_s > budget.as_secs_f64() {
            break interval;
        }
    };
    let interval = interval.with_context(|| {
        format!(
            "{} process{} in {} s: too few for an interval (give --budget more)",
            processes.len(),
            if processes.len() == 1 { "" } else { "es" },
            budget.as_secs()
        )
    })?;
    let levels = levels(&processes);
    Ok(Outcome {
        interval,
        degrees_of_freedom: BLOCKS.min(processes.len()) - 1,
        processes: processes.len(),
        layouts: used.len(),
        elapsed: started.elapsed(),
        rounds_per_process: rounds,
        levels,
    })
}

/// One versus worker of `program` over arms `a` and `b`.
fn start(
    registry: &Registry,
    program: &std::path::Path,
    a: &ArmId,
    b: &ArmId,
    rounds: usize,
) -> Result<VersusReport> {
    let mut command = Launcher::serbench(program).fresh_draw().command();
    command.args(registry.data_request.to_args());
    let request = Request::Versus {
        a: a.clone(),
        b: b.clone(),
        rounds,
    };
    let output = worker::spawn(command, &request)?
        .wait_with_output()
        .context("cannot read a versus worker")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!(
            "its versus worker failed ({}): {}",
            output.status,
            stderr.lines().last().unwrap_or("no message")
        );
    }
    let report: VersusReport =
        serde_json::from_slice(&output.stdout).context("a versus worker's report is not valid JSON")?;
    if report.log_ratios.len() != rounds || report.log_ratios.iter().any(|log| !log.is_finite()) {
        bail!(
            "a versus worker reported {} rounds, not the {rounds} asked",
            report.log_ratios.len()
        );
    }
    Ok(report)
}

/// What a versus worker does: prepares (and so proves) the two arms in a random order behind a
/// spacer, sizes their slices, and times `rounds` paired rounds.
pub fn worker(registry: &Registry, a: &ArmId, b: &ArmId, rounds: usize) -> Result<VersusReport> {
    let find = |id: &ArmId| {
        registry
            .arm(id)
            .with_context(|| format!("{id}: no such arm in this build"))
    };
    let (a, b) = (find(a)?, find(b)?);
    let mut order = Order::seeded();
    let spacer = order.spacer();
    let (mut a, mut b) = if order.a_first() {
        let a = a.prepare()?.runner;
        (a, b.prepare()?.runner)
    } else {
        let b = b.prepare()?.runner;
        (a.prepare()?.runner, b)
    };
    let slices = Slices::of(a.as_mut(), b.as_mut())?;
    let timing = Instant::now();
    let log_ratios = paired_rounds(a.as_mut(), b.as_mut(), slices, rounds, &mut order)?;
    let timed_s = timing.elapsed().as_secs_f64();
    drop(spacer);
    Ok(VersusReport { log_ratios, timed_s })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(log_ratios: Vec<f64>) -> Process {
        Process {
            timed_s: log_ratios.len() as f64 * 0.002,
            wall_s: log_ratios.len() as f64 * 0.002 + 0.3,
            log_ratios,
        }
    }

    #[test]
    fn levels_separate_the_process_spread_from_the_rounds_and_choose_the_rounds() {
        // Rounds alternate ±0.03 around each process's own level (0.00, 0.10, 0.00, 0.10): the
        // batch means are that level (the alternation cancels in 25 rounds up to one round),
        // so the process level carries nearly all the spread of the means.
        let of_level = |level: f64| {
            process(
                (0..100)
                    .map(|round| level + if round % 2 == 0 { 0.03 } else { -0.03 } + round as f64 * 1e-5)
                    .collect(),
            )
        };
        let processes = vec![of_level(0.0), of_level(0.1), of_level(0.0), of_level(0.1)];
        let found = levels(&processes).unwrap();
        // The sample sd of 0, 0.1, 0, 0.1 is 0.0577.
        assert!((found.process_sd - 0.0577).abs() < 0.002, "{found:?}");
        assert!(found.round_sd < 0.01, "{found:?}");
        assert!((found.round_s - 0.002).abs() < 1e-12 && (found.process_s - 0.3).abs() < 1e-9);
        // sqrt(0.3 / 0.002 · round² / process²) is small: the floor.
        assert_eq!(chosen_rounds(&found), MIN_ROUNDS);
        // No spread between processes: as many rounds as allowed.
        let same = vec![of_level(0.0), of_level(0.0)];
        assert_eq!(chosen_rounds(&levels(&same).unwrap()), MAX_ROUNDS);
        // One batch per process gives no within variance: no levels yet.
        assert!(levels(&[process(vec![0.0; 30]), process(vec![0.0; 30])]).is_none());
    }
}

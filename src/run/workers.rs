//! Sampling a block of arms: here, in this process ([`sample_here`]), or in a fresh worker
//! process of this executable or of another build of it ([`start_worker`], the hidden
//! `block-worker` subcommand, [`block_worker`]). A worker receives its arms' identities as JSON
//! on its standard input and answers with one report per arm, each naming its arm.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::arm::{Arm, ArmId};
use crate::format::Registry;
use crate::measure::{Profile, Sampled, Schedule, sample_block};

/// Proves every arm of `block` in this process and samples the proven ones together: their
/// reps and encoded sizes, or why an arm has none, in block order.
pub fn sample_here(
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

/// One arm as a worker reports it to its parent.
#[derive(Debug, Serialize, Deserialize)]
pub struct WorkerReport {
    pub arm: ArmId,
    pub encoded_bytes: usize,
    /// The SHA-256 of the data file the worker read for the arm's payload, for a `data:` one:
    /// the parent checks it is the file the run proved.
    pub data_sha256: Option<String>,
    /// The reps, or the error (with the arm's name) that stopped the arm.
    pub result: Result<Sampled, String>,
}

/// The SHA-256 of the data file behind `id`'s payload in `registry`, for a `data:` payload.
fn data_sha256(registry: &Registry, id: &ArmId) -> Option<String> {
    registry
        .data
        .iter()
        .find(|data| data.spec.name == id.codec.payload)
        .map(|data| data.sha256.clone())
}

/// Runs one `block-worker` process of `program` (this executable, or another build of it) over
/// the arms `ids` of `registry` and reads its reports: one per arm, in the same order, each
/// naming its arm and, for a data payload, the file it read, which must be the one `registry`
/// was built from.
pub fn start_worker(
    program: &Path,
    ids: &[ArmId],
    profile: &Profile,
    schedule: Schedule,
    registry: &Registry,
) -> Result<Vec<WorkerReport>> {
    let mut command = Command::new(program);
    command.args(["block-worker", "--profile", profile.name]);
    if schedule == Schedule::Burst {
        command.arg("--burst");
    }
    // The worker reads the same data files to build the same registry.
    command.args(registry.data_request.to_args());
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start a block worker ({})", program.display()))?;
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
    for report in &reports {
        let proved = data_sha256(registry, &report.arm);
        if report.data_sha256 != proved {
            bail!(
                "its block worker read {} from other bytes (sha256 {}) than this run proved ({}): \
                 the --data file changed during the run",
                report.arm.codec.payload,
                report.data_sha256.as_deref().unwrap_or("none"),
                proved.as_deref().unwrap_or("none")
            );
        }
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
                data_sha256: data_sha256(registry, id),
                result: Ok(sampled),
            },
            Err(error) => WorkerReport {
                arm: id.clone(),
                encoded_bytes: 0,
                data_sha256: data_sha256(registry, id),
                result: Err(format!("{error:#}")),
            },
        })
        .collect())
}

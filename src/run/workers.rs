//! Sampling a block of arms: here, in this process ([`sample_here`]), or in a fresh worker
//! process of this executable or of another build of it ([`start_worker`], a
//! [`Request::Block`] of [`crate::worker`]'s protocol, served by [`block_worker`]): it answers
//! with one [`BlockReport`] per arm, each naming its arm.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::arm::{Arm, ArmId, Operation};
use crate::format::Registry;
use crate::measure::{Order, Profile, Sampled, Schedule, sample_block};
use crate::worker::{self, BlockReport, Launcher, Request};

/// What sampling one arm in a process gave.
#[derive(Debug)]
pub struct ArmSample {
    pub sampled: Sampled,
    pub encoded_bytes: usize,
    /// For the reference arm of a section sampled with `twins`: the mean time per operation of
    /// a second copy of it (prepared anew) that took its turns beside it, the A/A check.
    pub twin_mean_ns: Option<f64>,
}

/// Proves every arm of `block` in this process and samples the proven ones section by section
/// (the arms of one operation together, see [`sample_block`]): their reps and encoded sizes,
/// or why an arm has none, in block order. With `twins`, each section's first arm (its
/// reference) is prepared a second time and sampled beside it as one more arm.
pub fn sample_here(
    block: &[&Arm],
    profile: &Profile,
    schedule: Schedule,
    twins: bool,
    mut on_rep: impl FnMut(),
) -> Vec<Result<ArmSample>> {
    let mut order = Order::seeded();
    let mut outcomes: Vec<Option<Result<ArmSample>>> = block.iter().map(|_| None).collect();
    let mut operations: Vec<Operation> = block.iter().map(|arm| arm.id.operation).collect();
    operations.sort_by_key(|operation| Operation::ALL.iter().position(|known| known == operation));
    operations.dedup();
    for operation in operations {
        let section: Vec<usize> = (0..block.len())
            .filter(|&index| block[index].id.operation == operation)
            .collect();
        // The arms are prepared in a random order, each behind a spacer of random size, the
        // twin among them: where an arm's buffers land depends on what was allocated before
        // it, and a fixed order gave the arm prepared first the same placement in every
        // worker (its A/A twin, prepared last, ran up to 19% faster in every one).
        let twin_slot = section.len();
        let mut slots: Vec<usize> = (0..section.len() + usize::from(twins)).collect();
        order.shuffle(&mut slots);
        let mut spacers = Vec::new();
        let mut prepared = Vec::new();
        for slot in slots {
            spacers.push(order.spacer());
            let index = section[slot % twin_slot];
            match block[index].prepare() {
                Ok(arm) => prepared.push((slot, arm)),
                Err(error) if slot != twin_slot => outcomes[index] = Some(Err(error)),
                Err(_) => {}
            }
        }
        let (slots, mut runners): (Vec<(usize, usize)>, Vec<_>) = prepared
            .into_iter()
            .map(|(slot, arm)| ((slot, arm.encoded_bytes), arm.runner))
            .unzip();
        let sampled = sample_block(&mut runners, profile, schedule, &mut on_rep);
        drop(spacers);
        let mut twin_mean_ns = None;
        for ((slot, encoded_bytes), sampled) in slots.into_iter().zip(sampled) {
            if slot == twin_slot {
                twin_mean_ns = sampled.ok().map(|twin| twin.mean_ns());
                continue;
            }
            let index = section[slot];
            let arm = &block[index].id;
            outcomes[index] = Some(
                sampled
                    .map(|sampled| ArmSample {
                        sampled,
                        encoded_bytes,
                        twin_mean_ns: None,
                    })
                    .map_err(|error| error.context(format!("{arm}: failed while timed"))),
            );
        }
        // The twin is the section's first arm's, its reference.
        if let Some(Ok(reference)) = &mut outcomes[section[0]] {
            reference.twin_mean_ns = twin_mean_ns;
        }
    }
    outcomes
        .into_iter()
        .map(|outcome| outcome.expect("every arm of the block is in one section"))
        .collect()
}

/// The SHA-256 of the data file behind `id`'s payload in `registry`, for a `data:` payload.
fn data_sha256(registry: &Registry, id: &ArmId) -> Option<String> {
    registry
        .data
        .iter()
        .find(|data| data.spec.name == id.codec.payload)
        .map(|data| data.sha256.clone())
}

/// Runs one block worker process of `program` (this executable, or another build of it) over
/// the arms `ids` of `registry` and reads its reports: one per arm, in the same order, each
/// naming its arm and, for a data payload, the file it read, which must be the one `registry`
/// was built from.
pub fn start_worker(
    program: &Path,
    ids: &[ArmId],
    profile: &Profile,
    schedule: Schedule,
    registry: &Registry,
) -> Result<Vec<BlockReport>> {
    let mut command = Launcher::serbench(program).fresh_draw().command();
    // The worker reads the same data files to build the same registry.
    command.args(registry.data_request.to_args());
    let request = Request::Block {
        arms: ids.to_vec(),
        profile: profile.name.to_string(),
        burst: schedule == Schedule::Burst,
    };
    let child = worker::spawn(command, &request)?;
    let output = child.wait_with_output().context("cannot read a block worker")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("no message");
        bail!("its block worker failed ({}): {last}", output.status);
    }
    let reports: Vec<BlockReport> =
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

/// What a block worker does: proves the arms `ids` (fresh, in this process) and samples them
/// with the profile's worker share ([`Profile::worker`]), each section with the A/A twin of
/// its reference.
pub fn block_worker(
    registry: &Registry,
    ids: &[ArmId],
    profile: &Profile,
    schedule: Schedule,
) -> Result<Vec<BlockReport>> {
    let block = ids
        .iter()
        .map(|id| {
            registry
                .arm(id)
                .with_context(|| format!("{id}: no such arm in this build"))
        })
        .collect::<Result<Vec<&Arm>>>()?;
    Ok(sample_here(&block, &profile.worker(), schedule, true, || {})
        .into_iter()
        .zip(ids)
        .map(|(sampled, id)| match sampled {
            Ok(sample) => BlockReport {
                arm: id.clone(),
                encoded_bytes: sample.encoded_bytes,
                data_sha256: data_sha256(registry, id),
                result: Ok(sample.sampled),
                twin_mean_ns: sample.twin_mean_ns,
            },
            Err(error) => BlockReport {
                arm: id.clone(),
                encoded_bytes: 0,
                data_sha256: data_sha256(registry, id),
                result: Err(format!("{error:#}")),
                twin_mean_ns: None,
            },
        })
        .collect())
}

//! samples.csv (full profile): one row per worker process and arm, the units every interval
//! of the full profile is taken over. Appended and synced as each payload's worker of a pass
//! finishes, so an interrupted run keeps every finished worker and `run --resume` continues
//! its passes; results.csv is made from it after every pass. Which arms shared a worker (one
//! payload, one pass) is what pairs them for paired ratios.

use serde::{Deserialize, Serialize};

use super::results::{MAX_NS, MIN_NS, STATUS_FAILED, STATUS_OK};
use super::{SCHEMA_VERSION, domains};
use crate::arm::ArmId;
use crate::busy::Busy;
use crate::files::{Record, in_range};
use crate::measure::Sampled;

pub const FILE_NAME: &str = "samples.csv";

/// One worker's samples of one arm; figures empty for an arm that failed in that worker.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub schema_version: u32,
    pub host: String,
    pub commit: String,
    pub profile: String,
    pub schedule: String,
    pub arm: ArmId,
    pub records: usize,
    /// The pass of the run (0-based): every payload's arms of one pass share one worker.
    pub pass: usize,
    /// Which build of serbench (code layout, see docs/measurement.md) the worker ran: 0 without
    /// `--layouts`.
    pub layout: usize,
    /// When the worker started, in seconds since the run started.
    pub started_s: f64,
    pub reps: Option<usize>,
    pub batch: Option<u64>,
    /// The mean time per operation of the worker's reps.
    pub mean_ns: Option<f64>,
    pub encoded_bytes: Option<usize>,
    pub allocs_per_op: Option<f64>,
    pub alloc_bytes_per_op: Option<f64>,
    pub peak_heap_bytes_per_op: Option<f64>,
    /// The section's reference arm only: the mean time per operation of its A/A twin in this
    /// worker (see [`crate::run::ArmSample::twin_mean_ns`]).
    pub twin_mean_ns: Option<f64>,
    /// How busy the machine was while the worker ran ([`crate::busy`]).
    pub load_1m: Option<f64>,
    pub stolen_percent: Option<f64>,
    pub status: String,
    pub note: String,
}

impl SampleRow {
    /// The row of a worker's `sampled` reps (and the encoded size of the arm's bytes).
    pub fn measured(
        mut self,
        sampled: &Sampled,
        encoded_bytes: usize,
        twin_mean_ns: Option<f64>,
    ) -> SampleRow {
        self.twin_mean_ns = twin_mean_ns;
        self.status = STATUS_OK.to_string();
        self.reps = Some(sampled.samples_ns.len());
        self.batch = Some(sampled.batch);
        self.mean_ns = Some(sampled.mean_ns());
        self.encoded_bytes = Some(encoded_bytes);
        self.allocs_per_op = Some(sampled.allocs_per_op);
        self.alloc_bytes_per_op = Some(sampled.alloc_bytes_per_op);
        self.peak_heap_bytes_per_op = Some(sampled.peak_heap_bytes);
        self
    }

    /// The row of an arm that failed in this worker, with the reason on one line.
    pub fn failed(mut self, reason: &str) -> SampleRow {
        self.status = STATUS_FAILED.to_string();
        self.note = reason.replace('\n', " ");
        self
    }

    /// The row with how busy the machine was while the worker ran.
    pub fn with_busy(mut self, busy: Option<Busy>) -> SampleRow {
        (self.load_1m, self.stolen_percent) = Busy::columns(busy);
        self
    }

    /// How busy the machine was while the worker ran, where recorded.
    pub fn busy(&self) -> Option<Busy> {
        Busy::of_columns(self.load_1m, self.stolen_percent)
    }

    /// What the worker's figures were, as its parent received them.
    pub fn sampled(&self) -> Option<Sampled> {
        Some(Sampled {
            batch: self.batch?,
            samples_ns: vec![self.mean_ns?; self.reps?],
            allocs_per_op: self.allocs_per_op?,
            alloc_bytes_per_op: self.alloc_bytes_per_op?,
            peak_heap_bytes: self.peak_heap_bytes_per_op?,
        })
    }
}

impl Record for SampleRow {
    const ROW: &'static str = "worker sample";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    /// Every column in its domain ([`super::domains`]): a profile that samples in worker
    /// processes (no other writes samples.csv), the registry's names, a worker's reps.
    fn check(&self) -> Result<(), String> {
        super::check_versioned(self.schema_version, self.records)?;
        let profile = domains::profile(&self.profile)?;
        if profile.passes.is_none() {
            return Err(format!(
                "profile {}: only a profile that samples in worker processes ({}) writes {FILE_NAME}",
                profile.name,
                crate::measure::Profile::FULL.name
            ));
        }
        domains::schedule(&self.schedule)?;
        domains::codec(&self.arm.codec)?;
        domains::encoded_bytes("encoded_bytes", self.encoded_bytes, Some(&self.arm.codec.payload))?;
        if let Some(reps) = self.reps {
            domains::worker_reps(profile, reps)?;
        }
        match self.status.as_str() {
            STATUS_OK => {
                let mean = self.mean_ns.ok_or("an ok sample needs mean_ns")?;
                in_range("mean_ns", mean, MIN_NS, MAX_NS)?;
                if let Some(twin) = self.twin_mean_ns {
                    in_range("twin_mean_ns", twin, MIN_NS, MAX_NS)?;
                }
                if self.reps.is_none_or(|reps| reps == 0) || self.batch.is_none_or(|batch| batch == 0) {
                    return Err("reps and batch are at least 1 in an ok sample".to_string());
                }
                if self.encoded_bytes.is_none() {
                    return Err("encoded_bytes is empty in an ok sample".to_string());
                }
                for (column, value) in [
                    ("allocs_per_op", self.allocs_per_op),
                    ("alloc_bytes_per_op", self.alloc_bytes_per_op),
                    ("peak_heap_bytes_per_op", self.peak_heap_bytes_per_op),
                ] {
                    in_range(
                        column,
                        value.ok_or(format!("{column} is empty in an ok sample"))?,
                        0.0,
                        f64::MAX,
                    )?;
                }
            }
            STATUS_FAILED => {}
            other => return Err(format!("status {other:?}: {STATUS_OK} or {STATUS_FAILED}")),
        }
        super::results::check_busy(self.load_1m, self.stolen_percent)?;
        in_range("started_s", self.started_s, 0.0, 1e9)
    }

    fn key(&self) -> String {
        format!("{} pass {}", self.arm, self.pass)
    }

    /// One run: one machine, build, profile and schedule.
    fn set(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("host", &self.host),
            ("commit", &self.commit),
            ("profile", &self.profile),
            ("schedule", &self.schedule),
        ]
    }
}

impl SampleRow {
    /// A run's sample of `arm` over `records` records in pass `pass`, with no figures yet.
    pub fn new(
        run: &super::results::ResultRow,
        arm: &ArmId,
        records: usize,
        pass: usize,
        layout: usize,
        started_s: f64,
    ) -> SampleRow {
        SampleRow {
            schema_version: SCHEMA_VERSION,
            host: run.host.host.clone(),
            commit: run.host.commit.clone(),
            profile: run.profile.clone(),
            schedule: run.schedule.clone(),
            arm: arm.clone(),
            records,
            pass,
            layout,
            started_s,
            status: STATUS_FAILED.to_string(),
            ..SampleRow::default()
        }
    }
}

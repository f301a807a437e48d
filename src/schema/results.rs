//! results.csv: one row per arm, `schema_version` first, appended and synced as each block
//! of arms finishes (through [`crate::files::Appender`]), so an interrupted run keeps every
//! finished row; and what a valid row is ([`ResultRow`]'s [`Record`] checks), for writers and
//! readers alike.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{SCHEMA_VERSION, domains};
use crate::arm::{ArmId, CodecId};
use crate::busy::Busy;
use crate::files::{self, Record, in_range};
use crate::host::Host;
use crate::measure::{Measurement, Schedule};

pub const FILE_NAME: &str = "results.csv";

/// One arm's result. Numeric fields are empty for an arm that failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    pub schema_version: u32,
    /// Its columns: host, system, os, cpu, cores, rustc, commit, build, environment.
    pub host: Host,
    pub profile: String,
    /// `interleaved` (reps round-robin across the payload's arms) or `burst`.
    pub schedule: String,
    pub timestamp: String,
    /// Its columns: format, backend, variant, payload, framing, operation, mode.
    pub arm: ArmId,
    pub records: usize,
    pub encoded_bytes: Option<usize>,
    pub reps: Option<usize>,
    /// The units of the interval: worker processes (full profile), or 1 (the reps of one).
    pub workers: Option<usize>,
    pub batch: Option<u64>,
    /// With a precision target: whether the interval reached it within the arm's budget.
    pub target_met: Option<bool>,
    pub mean_ns: Option<f64>,
    pub ci95_low_ns: Option<f64>,
    pub ci95_high_ns: Option<f64>,
    pub ns_per_record: Option<f64>,
    pub records_per_s: Option<f64>,
    pub mb_per_s: Option<f64>,
    pub allocs_per_op: Option<f64>,
    pub alloc_bytes_per_op: Option<f64>,
    /// The highest the live heap rose above its start during one operation.
    pub peak_heap_bytes_per_op: Option<f64>,
    /// How busy the machine was while the arm ran ([`crate::busy`]; the busiest of its
    /// workers): the 1-minute load average and the percentage of CPU time stolen. Empty
    /// without /proc.
    pub load_1m: Option<f64>,
    pub stolen_percent: Option<f64>,
    pub status: String,
    pub note: String,
}

pub use super::domains::{STATUS_FAILED, STATUS_OK};

impl ResultRow {
    /// The metadata of one run's rows, without an arm: what [`Record::set`] of its rows is.
    pub fn of_run(host: &Host, profile: &str, schedule: Schedule, timestamp: &str) -> ResultRow {
        ResultRow {
            schema_version: SCHEMA_VERSION,
            host: host.clone(),
            profile: profile.to_string(),
            schedule: schedule.name().to_string(),
            timestamp: timestamp.to_string(),
            status: STATUS_FAILED.to_string(),
            ..ResultRow::default()
        }
    }

    /// This run's row of the arm `id` over `records` records, with no figures yet.
    pub fn for_arm(&self, id: &ArmId, records: usize) -> ResultRow {
        ResultRow {
            arm: id.clone(),
            records,
            ..self.clone()
        }
    }

    pub fn failed(mut self, reason: &anyhow::Error) -> ResultRow {
        self.status = STATUS_FAILED.to_string();
        // One line: the context chain joined, as the user reads it in the summary.
        self.note = format!("{reason:#}").replace('\n', " ");
        self
    }

    pub fn measured(mut self, encoded_bytes: usize, measurement: &Measurement) -> ResultRow {
        let mean_ns = measurement.mean_ns;
        let records = self.records as f64;
        self.status = STATUS_OK.to_string();
        self.encoded_bytes = Some(encoded_bytes);
        self.reps = Some(measurement.reps);
        self.workers = Some(measurement.workers);
        self.batch = Some(measurement.batch);
        self.target_met = measurement.target_met;
        self.mean_ns = Some(mean_ns);
        self.ci95_low_ns = Some(measurement.ci95_low_ns);
        self.ci95_high_ns = Some(measurement.ci95_high_ns);
        self.ns_per_record = Some(mean_ns / records);
        self.records_per_s = Some(records * 1e9 / mean_ns);
        // Bytes per nanosecond is GB/s; times 1000 is MB/s (10^6 bytes).
        self.mb_per_s = Some(encoded_bytes as f64 / mean_ns * 1e3);
        self.allocs_per_op = Some(measurement.allocs_per_op);
        self.alloc_bytes_per_op = Some(measurement.alloc_bytes_per_op);
        self.peak_heap_bytes_per_op = Some(measurement.peak_heap_bytes);
        self
    }

    /// The row with how busy the machine was while the arm ran.
    pub fn with_busy(mut self, busy: Option<Busy>) -> ResultRow {
        (self.load_1m, self.stolen_percent) = Busy::columns(busy);
        self
    }

    /// How busy the machine was while the arm ran, where recorded.
    pub fn busy(&self) -> Option<Busy> {
        Busy::of_columns(self.load_1m, self.stolen_percent)
    }

    /// Whether this row records the arm `id`.
    pub fn is_arm(&self, id: &ArmId) -> bool {
        self.arm == *id
    }

    /// Whether this row records an arm of the codec `id`.
    pub fn is_codec(&self, id: &CodecId) -> bool {
        self.arm.codec == *id
    }

    /// The CI half-width as a fraction of the mean.
    pub fn relative_half_width(&self) -> Option<f64> {
        Some((self.ci95_high_ns? - self.ci95_low_ns?) / 2.0 / self.mean_ns?)
    }
}

/// The longest time per operation or record a row may hold: 10^15 ns, over eleven days.
pub const MAX_NS: f64 = 1e15;
/// The shortest: a femtosecond (the harness's own loop costs a fifth of a nanosecond).
pub const MIN_NS: f64 = 1e-6;

impl Record for ResultRow {
    const ROW: &'static str = "arm";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    /// Every column in its domain ([`super::domains`]): names from the registry and the
    /// closed sets, counts the row's profile can produce; an ok row has every figure, each
    /// finite and in range (mean and upper end within [`MIN_NS`]..=[`MAX_NS`], `ci95_low_ns <=
    /// mean_ns <= ci95_high_ns` centred on the mean: the Student-t interval, whose low end can
    /// reach below 0 with few reps), counts and rates not negative; a failed row's figures are
    /// empty or in range too.
    fn check(&self) -> Result<(), String> {
        super::check_versioned(self.schema_version, self.records)?;
        domains::system(&self.host.system)?;
        if self.host.cores == 0 {
            return Err("cores 0: a machine has at least one core".to_string());
        }
        let profile = domains::profile(&self.profile)?;
        domains::schedule(&self.schedule)?;
        domains::timestamp(&self.timestamp)?;
        domains::codec(&self.arm.codec)?;
        domains::status(&self.status)?;
        let figures = [
            ("mean_ns", self.mean_ns, MIN_NS, MAX_NS),
            ("ci95_low_ns", self.ci95_low_ns, -MAX_NS, MAX_NS),
            ("ci95_high_ns", self.ci95_high_ns, MIN_NS, MAX_NS),
            ("ns_per_record", self.ns_per_record, MIN_NS, MAX_NS),
            ("records_per_s", self.records_per_s, 0.0, f64::MAX),
            ("mb_per_s", self.mb_per_s, 0.0, f64::MAX),
            ("allocs_per_op", self.allocs_per_op, 0.0, f64::MAX),
            ("alloc_bytes_per_op", self.alloc_bytes_per_op, 0.0, f64::MAX),
        ];
        for (column, value, low, high) in figures {
            match value {
                Some(value) => in_range(column, value, low, high)?,
                None if self.status == STATUS_OK => return Err(format!("{column} is empty in an ok row")),
                None => {}
            }
        }
        // Empty when the build that wrote the row did not measure it.
        if let Some(peak) = self.peak_heap_bytes_per_op {
            in_range("peak_heap_bytes_per_op", peak, 0.0, f64::MAX)?;
        }
        check_busy(self.load_1m, self.stolen_percent)?;
        domains::encoded_bytes("encoded_bytes", self.encoded_bytes, Some(&self.arm.codec.payload))?;
        if self.batch == Some(0) {
            return Err("batch 0: a rep runs at least one iteration".to_string());
        }
        // Only a profile with a precision target says whether it was met.
        if self.target_met.is_some() && profile.precision.is_none() {
            return Err(format!(
                "target_met is set, but profile {} has no precision target",
                profile.name
            ));
        }
        if self.status == STATUS_OK {
            for (column, empty) in [
                ("encoded_bytes", self.encoded_bytes.is_none()),
                ("reps", self.reps.is_none()),
                ("workers", self.workers.is_none()),
                ("batch", self.batch.is_none()),
            ] {
                if empty {
                    return Err(format!("{column} is empty in an ok row"));
                }
            }
        }
        if let (Some(reps), Some(workers)) = (self.reps, self.workers) {
            domains::counts(profile, reps, workers)?;
        }
        if let (Some(low), Some(mean), Some(high)) = (self.ci95_low_ns, self.mean_ns, self.ci95_high_ns) {
            if !(low <= mean && mean <= high) {
                return Err(format!(
                    "ci95_low_ns..=ci95_high_ns [{low}, {high}] does not hold its mean {mean}"
                ));
            }
            // serbench's intervals are mean ± half-width; a lopsided one was not measured.
            let scale = low.abs().max(high.abs());
            if ((high - mean) - (mean - low)).abs() > 1e-9 * scale {
                return Err(format!(
                    "ci95_low_ns..=ci95_high_ns [{low}, {high}] is not centred on its mean {mean}"
                ));
            }
        }
        Ok(())
    }

    fn key(&self) -> String {
        self.arm.to_string()
    }

    /// One run: one machine, build (compiler, commit, portable or native), profile and
    /// schedule.
    fn set(&self) -> Vec<(&'static str, &str)> {
        let mut set = self.host.run_columns().to_vec();
        set.extend([
            ("profile", self.profile.as_str()),
            ("schedule", self.schedule.as_str()),
        ]);
        set
    }
}

/// A recorded load average and stolen share are both there or both empty, and in range.
pub fn check_busy(load_1m: Option<f64>, stolen_percent: Option<f64>) -> Result<(), String> {
    match (load_1m, stolen_percent) {
        (Some(load), Some(stolen)) => {
            in_range("load_1m", load, 0.0, 1e6)?;
            in_range("stolen_percent", stolen, 0.0, 100.0)
        }
        (None, None) => Ok(()),
        _ => Err("load_1m and stolen_percent are recorded together or not at all".to_string()),
    }
}

/// The column names, in order, as serde writes them for [`ResultRow`].
pub fn header() -> Vec<String> {
    files::header::<ResultRow>()
}

/// Reads a complete results.csv back; a refusal names the file and the line.
pub fn read(path: &Path) -> Result<Vec<ResultRow>> {
    files::read_complete(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control character in a note (a library's error message) is written as its escape, so
    /// the file reads back; one written by anything else is refused with its column.
    #[test]
    fn a_note_is_written_without_control_characters_and_one_is_refused_on_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let host = Host {
            system: crate::host::system(),
            cores: 1,
            ..Host::default()
        };
        let run = ResultRow::of_run(&host, "smoke", Schedule::Interleaved, "2026-12-06T00:00:00Z");
        let id = ArmId::typed("json", "serde_json", "", "order", crate::arm::Operation::Decode);
        let row = run
            .for_arm(&id, 1)
            .failed(&anyhow::anyhow!("bad\0byte \u{1b}[2K"));
        std::fs::write(&path, files::to_csv(std::slice::from_ref(&row)).unwrap()).unwrap();
        let read = read(&path).unwrap();
        assert_eq!(read[0].note, "bad\\u{0}byte \\u{1b}[2K");

        let raw = std::fs::read_to_string(&path).unwrap().replace("\\u{0}", "\0");
        std::fs::write(&path, raw).unwrap();
        let error = format!("{:#}", super::read(&path).unwrap_err());
        assert!(error.ends_with("results.csv:2: note holds \\u{0} (a control or bidirectional character): serbench writes none, only its escape"), "{error}");
    }

    #[test]
    fn the_columns_of_a_results_row_hold_the_arm_coordinates() {
        let columns = crate::files::columns::of::<ResultRow>();
        let start = columns.iter().position(|column| column == "format").unwrap();
        assert_eq!(
            columns[start..start + 7],
            [
                "format",
                "backend",
                "variant",
                "payload",
                "framing",
                "operation",
                "mode"
            ]
        );
    }
}

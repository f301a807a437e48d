//! results.csv: one row per arm, `schema_version` first, appended and flushed as each block
//! of arms finishes, so an interrupted run keeps every finished row.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::SCHEMA_VERSION;
use super::host::Host;
use crate::arm::ArmId;
use crate::measure::Measurement;

pub const FILE_NAME: &str = "results.csv";

/// One arm's result. Numeric fields are empty for an arm that failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    pub schema_version: u32,
    pub host: String,
    pub system: String,
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub rustc: String,
    pub commit: String,
    /// `direct`, or `nix-build ...` for a run measured inside a Nix build (see [`Host`]).
    pub environment: String,
    pub profile: String,
    /// `interleaved` (reps round-robin across the payload's arms) or `burst`.
    pub schedule: String,
    pub timestamp: String,
    pub format: String,
    pub backend: String,
    pub variant: String,
    pub payload: String,
    pub operation: String,
    pub mode: String,
    pub framing: String,
    pub records: usize,
    pub encoded_bytes: Option<usize>,
    pub reps: Option<usize>,
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
    pub status: String,
    pub note: String,
}

pub const STATUS_OK: &str = "ok";
pub const STATUS_FAILED: &str = "failed";

impl ResultRow {
    /// A row with the arm's coordinates and no figures yet.
    pub fn new(id: &ArmId, host: &Host, profile: &str, timestamp: &str) -> ResultRow {
        let codec = &id.codec;
        ResultRow {
            schema_version: SCHEMA_VERSION,
            host: host.host.clone(),
            system: host.system.clone(),
            os: host.os.clone(),
            cpu: host.cpu.clone(),
            cores: host.cores,
            rustc: host.rustc.clone(),
            commit: host.commit.clone(),
            environment: host.environment.clone(),
            profile: profile.to_string(),
            schedule: "interleaved".to_string(),
            timestamp: timestamp.to_string(),
            format: codec.format.to_string(),
            backend: codec.backend.to_string(),
            variant: codec.variant.to_string(),
            payload: codec.payload.name.to_string(),
            operation: id.operation.name().to_string(),
            mode: id.mode.name().to_string(),
            framing: codec.framing.name().to_string(),
            records: codec.payload.records,
            encoded_bytes: None,
            reps: None,
            batch: None,
            target_met: None,
            mean_ns: None,
            ci95_low_ns: None,
            ci95_high_ns: None,
            ns_per_record: None,
            records_per_s: None,
            mb_per_s: None,
            allocs_per_op: None,
            alloc_bytes_per_op: None,
            status: STATUS_FAILED.to_string(),
            note: String::new(),
        }
    }

    pub fn scheduled(mut self, schedule: crate::measure::Schedule) -> ResultRow {
        self.schedule = schedule.name().to_string();
        self
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
        self
    }

    /// Whether this row records the arm `id`.
    pub fn is_arm(&self, id: &ArmId) -> bool {
        let codec = &id.codec;
        self.format == codec.format
            && self.backend == codec.backend
            && self.variant == codec.variant
            && self.payload == codec.payload.name
            && self.operation == id.operation.name()
            && self.mode == id.mode.name()
            && self.framing == codec.framing.name()
    }

    /// The CI half-width as a fraction of the mean.
    pub fn relative_half_width(&self) -> Option<f64> {
        Some((self.ci95_high_ns? - self.ci95_low_ns?) / 2.0 / self.mean_ns?)
    }
}

/// An open results.csv that rows are appended to and flushed one by one.
pub struct ResultsWriter {
    writer: csv::Writer<File>,
    pub path: PathBuf,
}

impl ResultsWriter {
    /// Opens `dir/results.csv` for this run: a fresh file, or with `resume` the existing one,
    /// appended to. An existing file must be a valid results.csv of this schema version, or it
    /// is refused (with the file and line) before anything is measured and left untouched.
    /// Returns the writer and, when resuming, the rows already recorded.
    pub fn open(dir: &Path, resume: bool) -> Result<(ResultsWriter, Vec<ResultRow>)> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results folder {}", dir.display()))?;
        let path = dir.join(FILE_NAME);
        let existing = existing_rows(&path)?;
        let append = resume && existing.is_some();
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        // The header is written here, once, so rows go through the header-less path.
        let mut writer = ResultsWriter {
            writer: csv::WriterBuilder::new().has_headers(false).from_writer(file),
            path,
        };
        if !append {
            writer.write(|csv| csv.write_record(header()))?;
        }
        Ok((
            writer,
            if resume {
                existing.unwrap_or_default()
            } else {
                Vec::new()
            },
        ))
    }

    pub fn append(&mut self, row: &ResultRow) -> Result<()> {
        self.write(|csv| csv.serialize(row))
    }

    /// Writes, flushes and syncs, so a full disk is reported here (at the header, before any
    /// measuring) rather than lost in a buffer, and a killed run keeps every appended row.
    fn write(&mut self, write: impl FnOnce(&mut csv::Writer<File>) -> csv::Result<()>) -> Result<()> {
        write(&mut self.writer)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(self.writer.flush()?))
            .and_then(|()| Ok(self.writer.get_ref().sync_data()?))
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// The column names, in order, as serde writes them for [`ResultRow`].
pub fn header() -> Vec<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(ResultRow::default()).expect("a row serializes");
    let bytes = writer.into_inner().expect("an in-memory writer cannot fail");
    let first_line = bytes.split(|&byte| byte == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(first_line)
        .split(',')
        .map(str::to_string)
        .collect()
}

/// The rows of an existing results.csv, `None` when there is none (or it is not a regular
/// file, e.g. a device the user points the output at). Anything that is not a valid results.csv
/// of this schema version is an error naming the file and line.
fn existing_rows(path: &Path) -> Result<Option<Vec<ResultRow>>> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {}
        _ => return Ok(None),
    }
    let refuse = |line: usize, why: String| {
        anyhow::anyhow!(
            "refusing to overwrite {}:{line}: {why}; move it away or pick another --out",
            path.display()
        )
    };
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if text.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut lines = text.split(|&byte| byte == b'\n');
    if !lines.next().unwrap_or_default().starts_with(b"schema_version,") {
        return Err(refuse(1, "not a serbench results header".to_string()));
    }
    if let Some(line) = lines.next().filter(|line| !line.is_empty()) {
        let version =
            String::from_utf8_lossy(line.split(|&byte| byte == b',').next().unwrap_or_default()).into_owned();
        if version != SCHEMA_VERSION.to_string() {
            return Err(refuse(
                2,
                format!("schema version {version:?}, this serbench writes version {SCHEMA_VERSION}"),
            ));
        }
    }
    let rows = read(path).map_err(|error| {
        anyhow::anyhow!("refusing to overwrite a results.csv that does not parse: {error:#}")
    })?;
    Ok(Some(rows))
}

/// Reads a results.csv back; an error names the file and the line.
pub fn read(path: &Path) -> Result<Vec<ResultRow>> {
    read_rows(path)
}

/// Reads any of serbench's CSV files into rows of `T`, naming file and line on error.
pub fn read_rows<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(file);
    let mut rows = Vec::new();
    for row in reader.deserialize::<T>() {
        let row = row.map_err(|error| {
            let line = error.position().map_or(0, |position| position.line());
            anyhow::anyhow!("{}:{line}: {}", path.display(), csv_error_text(&error))
        })?;
        rows.push(row);
    }
    Ok(rows)
}

fn csv_error_text(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(field) => format!("field {}: {}", field + 1, err.kind()),
            None => err.kind().to_string(),
        },
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("{len} fields where the header has {expected_len} (truncated or corrupt row)")
        }
        _ => error.to_string(),
    }
}

/// Writes rows of `T` to a fresh CSV file at `path` (used for sizes.csv).
pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut writer =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    writer.into_inner()?.flush()?;
    Ok(())
}

//! footprint.csv: what each format adds to a binary and to a clean build (`serbench footprint`,
//! measured by [`crate::footprint`]): one row per build, the baseline without a format first.

use serde::{Deserialize, Serialize};

use super::results::{STATUS_FAILED, STATUS_OK};
use crate::files::{Record, in_range};
use crate::host::Host;

pub const FILE_NAME: &str = "footprint.csv";

/// footprint.csv's own schema version: 5 gave it results.csv's host columns (`os` added), one
/// [`Host`] in both. A footprint.csv of version 4 is refused by its version.
pub const SCHEMA_VERSION: u32 = 5;

/// The `format` of the build with no format: the same program and library, nothing to encode.
pub const BASELINE: &str = "baseline";

/// The longest clean build a row may hold: a day.
pub const MAX_SECONDS: f64 = 86_400.0;

/// The highest load average a row may hold (any real machine's is far below).
pub const MAX_LOAD: f64 = 1_000_000.0;

/// One build's footprint: its binary and its clean compile time over `runs` builds. The figures
/// over the baseline are empty for the baseline itself and when the baseline failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FootprintRow {
    pub schema_version: u32,
    /// Its columns: host, system, os, cpu, cores, rustc, commit, build, environment, as in
    /// results.csv; the compiler, commit and build are the ones the programs themselves report.
    pub host: Host,
    pub timestamp: String,
    /// A format, or [`BASELINE`].
    pub format: String,
    pub runs: usize,
    /// The stripped binary's size in bytes.
    pub binary_bytes: Option<u64>,
    pub binary_bytes_over_baseline: Option<i64>,
    /// The size of its `.text` section (`__text` on macOS).
    pub text_bytes: Option<u64>,
    pub text_bytes_over_baseline: Option<i64>,
    /// The wall time of a clean build in a fresh target dir: the median over the runs, and the
    /// fastest and slowest run.
    pub compile_s: Option<f64>,
    pub compile_s_min: Option<f64>,
    pub compile_s_max: Option<f64>,
    /// The median over the baseline's median.
    pub compile_s_over_baseline: Option<f64>,
    /// The highest 1-minute load average (Linux's /proc/loadavg) at the end of this build's
    /// runs, empty where there is none: above `cores`, other work shared the CPUs with the
    /// builds, and their times are longer than on an idle machine.
    pub load_average_max: Option<f64>,
    pub status: String,
    pub note: String,
}

impl Record for FootprintRow {
    const ROW: &'static str = "build";
    const SCHEMA_VERSION: Option<u32> = Some(SCHEMA_VERSION);

    /// An ok row has its sizes and times; times are within 0..=[`MAX_SECONDS`] with
    /// `compile_s_min <= compile_s <= compile_s_max`.
    fn check(&self) -> Result<(), String> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "schema version {}, this serbench reads footprint.csv version {SCHEMA_VERSION}",
                self.schema_version
            ));
        }
        if self.runs == 0 {
            return Err("runs 0: a footprint is at least one build".to_string());
        }
        if self.status != STATUS_OK && self.status != STATUS_FAILED {
            return Err(format!(
                "status {:?}: {STATUS_OK} or {STATUS_FAILED}",
                self.status
            ));
        }
        let times = [
            ("compile_s", self.compile_s, 0.0),
            ("compile_s_min", self.compile_s_min, 0.0),
            ("compile_s_max", self.compile_s_max, 0.0),
            (
                "compile_s_over_baseline",
                self.compile_s_over_baseline,
                -MAX_SECONDS,
            ),
        ];
        for (column, value, low) in times {
            if let Some(value) = value {
                in_range(column, value, low, MAX_SECONDS)?;
            }
        }
        if let Some(load) = self.load_average_max {
            in_range("load_average_max", load, 0.0, MAX_LOAD)?;
        }
        if self.status == STATUS_OK {
            let (Some(_), Some(_), Some(low), Some(median), Some(high)) = (
                self.binary_bytes,
                self.text_bytes,
                self.compile_s_min,
                self.compile_s,
                self.compile_s_max,
            ) else {
                return Err("an ok row needs binary_bytes, text_bytes and its compile times".to_string());
            };
            if !(low <= median && median <= high) {
                return Err(format!(
                    "compile_s {median} is not within its runs' {low}..={high}"
                ));
            }
        }
        Ok(())
    }

    fn key(&self) -> String {
        self.format.clone()
    }

    /// One footprint run: one machine, compiler, commit and build.
    fn set(&self) -> Vec<(&'static str, &str)> {
        let mut set = self.host.run_columns().to_vec();
        set.push(("timestamp", self.timestamp.as_str()));
        set
    }
}

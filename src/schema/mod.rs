//! Every file serbench writes, as rows: one module per CSV file, each declaring its file name,
//! its columns (a [`crate::files::Record`]: the fields of its row type) and what a valid row
//! is, for writers and readers alike; the kinds of result set a command writes ([`SetKind`]);
//! and a results folder read back whole ([`load`]). The measurements (run, robustness,
//! instructions, footprint) write these rows and the report reads them; neither knows the
//! other.

pub mod domains;
pub mod footprint;
pub mod instructions;
pub mod load;
pub mod ratios;
pub mod results;
pub mod robustness;
pub mod samples;
pub mod sizes;
pub mod sources;

use std::path::Path;

use crate::files::{self, ResultSet};

/// The version of every versioned CSV file (results, samples, sizes, sources, ratios,
/// instructions); footprint.csv has its own ([`footprint::SCHEMA_VERSION`]). A folder holding files of another version is refused, never
/// overwritten or mixed.
/// Version 2 added results.csv's `environment` column; version 4 added results.csv's and
/// samples.csv's `load_1m` and `stolen_percent`, and samples.csv's `twin_mean_ns`.
pub const SCHEMA_VERSION: u32 = 4;

/// The Markdown report a run (or `serbench report`) writes beside results.csv.
pub const REPORT_FILE: &str = "report.md";
/// The report's charts, one SVG file each.
pub const CHARTS_DIR: &str = "charts";

/// What every row of a versioned file (results, sizes, instructions) is checked for first:
/// this schema version, and at least one record.
pub fn check_versioned(schema_version: u32, records: usize) -> Result<(), String> {
    check_schema_version(schema_version)?;
    if records == 0 {
        return Err("records 0: an operation or payload handles at least one record".to_string());
    }
    Ok(())
}

/// This schema version, or why not (every versioned file's first check).
pub fn check_schema_version(schema_version: u32) -> Result<(), String> {
    if schema_version != SCHEMA_VERSION {
        return Err(format!(
            "schema version {schema_version}, this serbench reads version {SCHEMA_VERSION}"
        ));
    }
    Ok(())
}

/// The result sets a command writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetKind {
    /// `run`: results.csv and what is derived from it.
    Run,
    /// `sizes`: sizes.csv, which in a run's folder belongs to that run.
    Sizes,
    /// `robustness`: robustness.csv.
    Robustness,
    /// `run --measure instructions`: instructions.csv.
    Instructions,
    /// `footprint`: footprint.csv.
    Footprint,
}

/// A run's files: results.csv (and the full profile's samples.csv it is made from, and the
/// sources.csv of the data files it was measured from), then what is derived from it (which
/// must describe it exactly).
pub const RUN_FILES: [&str; 7] = [
    results::FILE_NAME,
    samples::FILE_NAME,
    sources::FILE_NAME,
    sizes::FILE_NAME,
    ratios::FILE_NAME,
    REPORT_FILE,
    CHARTS_DIR,
];

/// The files derived from a run's results.csv.
pub const DERIVED_FILES: [&str; 4] = [sizes::FILE_NAME, ratios::FILE_NAME, REPORT_FILE, CHARTS_DIR];

impl ResultSet for SetKind {
    fn files(self) -> &'static [&'static str] {
        match self {
            SetKind::Run | SetKind::Sizes => &RUN_FILES,
            SetKind::Robustness => &[robustness::FILE_NAME],
            SetKind::Instructions => &[instructions::FILE_NAME],
            SetKind::Footprint => &[footprint::FILE_NAME],
        }
    }

    /// Only a run's set with results.csv can be resumed (a `--resume` run reaches a claim
    /// without one).
    fn resumable(self, present: &[&str]) -> bool {
        self == SetKind::Run && present.contains(&results::FILE_NAME)
    }

    /// What a results.csv holds: its arms and the run they came from.
    fn describe(self, name: &str, path: &Path) -> Option<String> {
        (name == results::FILE_NAME).then(|| match files::read::<results::ResultRow>(path) {
            Ok(table) => match table.rows.first() {
                Some(first) => format!(
                    "{} arms of commit {}, {} build, profile {}, schedule {}",
                    table.rows.len(),
                    first.host.commit,
                    first.host.build,
                    first.profile,
                    first.schedule
                ),
                None => "no rows".to_string(),
            },
            Err(error) => format!("{error:#}"),
        })
    }
}

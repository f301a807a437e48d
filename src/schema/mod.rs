//! Every file serbench writes, as rows: one module per CSV file, each declaring its file name,
//! its columns (a [`crate::files::Record`]: the fields of its row type) and what a valid row
//! is, for writers and readers alike; the kinds of result set a command writes ([`SetKind`]);
//! and a results folder read back whole ([`load`]). The measurements (run, robustness,
//! instructions, footprint) write these rows and the report reads them; neither knows the
//! other.

pub mod domains;
pub mod evolution;
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
/// The self-contained page beside report.md, and its model for tools.
pub const PAGE_FILE: &str = "report.html";
pub const MODEL_FILE: &str = "report.json";
/// What the report last wrote, each file with its SHA-256: a report rewrites only these.
pub const REPORT_MANIFEST: &str = "report.sha256";

/// Every file a report writes, in the order it writes them (report.md, which links into
/// charts/, last but for the manifest). A run's set holds them ([`DERIVED_FILES`]), so
/// `--replace` moves each and a resume removes each.
pub const REPORT_FILES: [&str; 5] = [CHARTS_DIR, PAGE_FILE, MODEL_FILE, REPORT_FILE, REPORT_MANIFEST];

/// The report's files as a group written together: a report overwrites or removes only what
/// its manifest records ([`files::Owned`]).
pub const REPORT: files::Owned = files::Owned {
    manifest: REPORT_MANIFEST,
    names: &REPORT_FILES,
};

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
    /// `evolve --out`: evolution.csv.
    Evolution,
}

/// The files derived from a run's results.csv: sizes, ratios and the report's files. Made
/// from [`REPORT_FILES`], so a file the report gains joins every set that holds a report.
pub const DERIVED_FILES: [&str; 2 + REPORT_FILES.len()] =
    concat([sizes::FILE_NAME, ratios::FILE_NAME], REPORT_FILES);

/// A run's files: results.csv (and the full profile's samples.csv it is made from, and the
/// sources.csv of the data files it was measured from), then what is derived from it (which
/// must describe it exactly). The one list `--replace` moves and a claim refuses.
pub const RUN_FILES: [&str; 3 + DERIVED_FILES.len()] = concat(
    [results::FILE_NAME, samples::FILE_NAME, sources::FILE_NAME],
    DERIVED_FILES,
);

/// `a` then `b`, in a constant.
const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N, "the length of both lists");
    let mut all = [""; N];
    let mut index = 0;
    while index < A {
        all[index] = a[index];
        index += 1;
    }
    while index < N {
        all[index] = b[index - A];
        index += 1;
    }
    all
}

/// Removes a run's derived files, which would no longer describe its results.csv: the report's
/// only where they are the ones it wrote ([`REPORT`]); anything else there is refused.
pub fn remove_derived(out: &files::OutDir) -> anyhow::Result<()> {
    out.remove_owned(REPORT)?;
    out.remove(&DERIVED_FILES)
}

impl ResultSet for SetKind {
    fn files(self) -> &'static [&'static str] {
        match self {
            SetKind::Run | SetKind::Sizes => &RUN_FILES,
            SetKind::Robustness => &[robustness::FILE_NAME],
            SetKind::Instructions => &[instructions::FILE_NAME],
            SetKind::Footprint => &[footprint::FILE_NAME],
            SetKind::Evolution => &[evolution::FILE_NAME],
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

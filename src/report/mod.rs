//! Everything written down: the versioned results.csv and sizes.csv schemas, the host
//! metadata every row carries, the file safety every writer shares ([`files`]), the tables
//! printed after a run, and a data file's inferred schema ([`schema`]).

pub mod charts;
pub mod codegen;
pub mod columns;
pub mod compare;
pub mod deterministic;
pub mod fidelity;
pub mod files;
pub mod footprint;
pub mod formats;
pub mod host;
pub mod load;
pub mod markdown;
pub mod ratios;
pub mod results;
pub mod samples;
pub mod schema;
pub mod sizes;
pub mod sources;
pub mod stamp;
pub mod table;
pub mod verdict;

/// The version of the results.csv and sizes.csv schemas. A folder holding files of another
/// version is refused, never overwritten or mixed.
/// Version 2 added results.csv's `environment` column; version 4 added results.csv's and
/// samples.csv's `load_1m` and `stolen_percent`, and samples.csv's `twin_mean_ns`.
pub const SCHEMA_VERSION: u32 = 4;

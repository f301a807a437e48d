//! serbench: which serialization format is cheapest for my data?
//!
//! The data flows one way: [`payload`] (the logical data) -> [`format`] (codecs that encode
//! and decode it) -> [`arm`] (the matrix of measured arms, each proving its round trip) ->
//! [`measure`] (timing and statistics) -> [`report`] (results.csv, sizes.csv, tables), with
//! [`run`] driving the stages for the CLI.

pub mod arm;
pub mod format;
pub mod instructions;
pub mod measure;
pub mod payload;
pub mod report;
pub mod robustness;
pub mod run;

/// A refusal: a bad command-line value, or a folder or file serbench will not use as it is (in
/// use by another writer, holding another result set, failing validation). Nothing was
/// changed; the command exits with status 2, as for clap's own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl UsageError {
    pub fn error(message: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(UsageError(message.into()))
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Every allocation in a serbench process goes through the counting allocator, so the
/// allocation pass of an arm sees exactly what the arm allocates.
#[global_allocator]
static ALLOCATOR: measure::CountingAllocator = measure::CountingAllocator;

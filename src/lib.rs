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

/// Every allocation in a serbench process goes through the counting allocator, so the
/// allocation pass of an arm sees exactly what the arm allocates.
#[global_allocator]
static ALLOCATOR: measure::CountingAllocator = measure::CountingAllocator;

//! instructions.csv: one arm's deterministic counts under callgrind per row (measured by
//! [`crate::instructions`]).

use serde::{Deserialize, Serialize};

use crate::arm::ArmId;
use crate::files::{Record, in_range};

pub const FILE_NAME: &str = "instructions.csv";

/// One arm's count; the counts are empty for an arm that failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InstructionRow {
    pub schema_version: u32,
    pub arm: ArmId,
    pub records: usize,
    pub iterations: u64,
    pub instructions_per_op: Option<f64>,
    pub instructions_per_record: Option<f64>,
    /// First-level data cache misses (reads and writes) per operation, in the simulated cache ([`crate::instructions::CACHE`]).
    pub d1_misses_per_op: Option<f64>,
    /// Last-level cache misses (instructions and data) per operation: accesses that go to RAM.
    pub ll_misses_per_op: Option<f64>,
    /// [`crate::instructions::Counts::estimated_cycles`] per operation.
    pub estimated_cycles_per_op: Option<f64>,
    pub status: String,
    pub note: String,
}

impl Record for InstructionRow {
    const ROW: &'static str = "arm";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    /// An ok row has every count, each finite; instructions and cycles are positive, misses
    /// may be none, and no more than the accesses (cycles) could have missed.
    fn check(&self) -> Result<(), String> {
        super::check_versioned(self.schema_version, self.records)?;
        if self.iterations == 0 {
            return Err("iterations 0: a count takes at least one".to_string());
        }
        let cycles = self.estimated_cycles_per_op.unwrap_or(f64::MAX);
        for (column, value, low, high) in [
            (
                "instructions_per_op",
                self.instructions_per_op,
                f64::MIN_POSITIVE,
                f64::MAX,
            ),
            (
                "instructions_per_record",
                self.instructions_per_record,
                f64::MIN_POSITIVE,
                f64::MAX,
            ),
            (
                "estimated_cycles_per_op",
                self.estimated_cycles_per_op,
                f64::MIN_POSITIVE,
                f64::MAX,
            ),
            ("d1_misses_per_op", self.d1_misses_per_op, 0.0, cycles),
            ("ll_misses_per_op", self.ll_misses_per_op, 0.0, cycles),
        ] {
            match value {
                Some(value) => in_range(column, value, low, high)?,
                None if self.status == "ok" => return Err(format!("{column} is empty in an ok row")),
                None => {}
            }
        }
        Ok(())
    }

    fn key(&self) -> String {
        self.arm.to_string()
    }
}

//! robustness.csv: one decoder and one kind of hostile input per row, with its outcome counts
//! and its worst case (measured by [`crate::robustness`]).

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::arm::ArmId;
use crate::files::{self, Record};

/// The file a robustness run writes into its output folder.
pub const FILE_NAME: &str = "robustness.csv";

/// The families of hostile input, in report order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum CaseKind {
    /// The payload cut short (every length, or an evenly spread sample).
    Truncate,
    /// One bit of the payload flipped.
    BitFlip,
    /// One byte of the payload replaced by another value.
    ByteReplace,
    /// Random bytes, as long as the payload.
    Garbage,
    /// Random bytes, 0 to 64 long (what a fuzzer or a port scanner sends first).
    GarbageShort,
    /// A length or count prefix rewritten to a huge value: fixed-width and varint patterns
    /// spliced in at every offset (or an evenly spread sample of offsets).
    LengthBomb,
    /// Format-aware deep nesting (JSON arrays and objects, BSON documents, protobuf groups and
    /// messages, CBOR arrays and maps), the classic stack overflow.
    Nesting,
}

impl CaseKind {
    pub const ALL: [CaseKind; 7] = [
        CaseKind::Truncate,
        CaseKind::BitFlip,
        CaseKind::ByteReplace,
        CaseKind::Garbage,
        CaseKind::GarbageShort,
        CaseKind::LengthBomb,
        CaseKind::Nesting,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CaseKind::Truncate => "truncate",
            CaseKind::BitFlip => "bit-flip",
            CaseKind::ByteReplace => "byte-replace",
            CaseKind::Garbage => "garbage",
            CaseKind::GarbageShort => "garbage-short",
            CaseKind::LengthBomb => "length-bomb",
            CaseKind::Nesting => "nesting",
        }
    }
}

/// What one hostile input did to one decoder, from harmless to worst.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Outcome {
    /// Decoded to exactly the payload (e.g. a bit flip in a byte the format ignores).
    OkEqual,
    /// The decoder refused the input with an error: the right answer to a hostile input.
    Error,
    /// Decoded without complaint to a different value: silent corruption. Expected of every
    /// format without a checksum for a bit flip inside a value; worth a look elsewhere.
    OkDifferent,
    /// The decoder panicked (caught; a `panic = "abort"` service would have died).
    Panic,
    /// The decoder hung: no answer within the case timeout.
    Timeout,
    /// The decoder asked for more memory than the cap (in one request or live in total).
    OverCap,
    /// The worker process died otherwise: a stack overflow or another abort.
    Crash,
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::OkEqual,
        Outcome::Error,
        Outcome::OkDifferent,
        Outcome::Panic,
        Outcome::Timeout,
        Outcome::OverCap,
        Outcome::Crash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::OkEqual => "ok-equal",
            Outcome::Error => "error",
            Outcome::OkDifferent => "ok-different",
            Outcome::Panic => "panic",
            Outcome::Timeout => "timeout",
            Outcome::OverCap => "over-cap",
            Outcome::Crash => "crash",
        }
    }

    pub fn by_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|outcome| outcome.name() == name)
    }

    /// A failure of the decoder (not merely a wrong or refused answer).
    pub fn is_failure(self) -> bool {
        self >= Outcome::Panic
    }
}

/// The most severe case of a row, named so it can be reproduced.
#[derive(Clone, Debug, PartialEq)]
pub struct WorstCase {
    pub outcome: Outcome,
    /// The case's index in the decoder's plan (`--seed` and `--cases` fix the plan).
    pub case: usize,
    pub input: String,
    pub detail: String,
}

/// Counts for one decoder and one kind of hostile input.
#[derive(Clone, Debug, PartialEq)]
pub struct RobustnessRow {
    pub id: ArmId,
    pub case_kind: CaseKind,
    pub cases: usize,
    pub ok_equal: usize,
    pub ok_different: usize,
    pub error: usize,
    pub panic: usize,
    pub over_cap: usize,
    pub crash: usize,
    pub timeout: usize,
    /// The highest peak of live bytes over the row's cases.
    pub peak_alloc_bytes: u64,
    /// Size of the real encoded payload the cases were derived from.
    pub input_bytes: usize,
    pub worst: Option<WorstCase>,
}

impl RobustnessRow {
    pub fn count(&self, outcome: Outcome) -> usize {
        match outcome {
            Outcome::OkEqual => self.ok_equal,
            Outcome::Error => self.error,
            Outcome::OkDifferent => self.ok_different,
            Outcome::Panic => self.panic,
            Outcome::Timeout => self.timeout,
            Outcome::OverCap => self.over_cap,
            Outcome::Crash => self.crash,
        }
    }
}

/// One line of robustness.csv: a [`RobustnessRow`] as flat columns, in file order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    /// The decoder: format, backend, variant, payload, framing, operation, mode.
    pub target: ArmId,
    pub case_kind: String,
    pub cases: usize,
    pub ok_equal: usize,
    pub ok_different: usize,
    pub error: usize,
    pub panic: usize,
    pub over_cap: usize,
    pub crash: usize,
    pub timeout: usize,
    pub peak_alloc_bytes: u64,
    pub input_bytes: usize,
    pub worst_outcome: String,
    /// `#<index>: <input>` for the row's first case of its most severe outcome.
    pub worst_case: String,
    pub worst_detail: String,
}

impl CsvRow {
    fn of(row: &RobustnessRow) -> CsvRow {
        let id = row.id.clone();
        let (worst_outcome, worst_case, worst_detail) = match &row.worst {
            Some(worst) => (
                worst.outcome.name().to_string(),
                format!("#{}: {}", worst.case, worst.input),
                worst.detail.clone(),
            ),
            None => Default::default(),
        };
        CsvRow {
            target: id,
            case_kind: row.case_kind.name().to_string(),
            cases: row.cases,
            ok_equal: row.ok_equal,
            ok_different: row.ok_different,
            error: row.error,
            panic: row.panic,
            over_cap: row.over_cap,
            crash: row.crash,
            timeout: row.timeout,
            peak_alloc_bytes: row.peak_alloc_bytes,
            input_bytes: row.input_bytes,
            worst_outcome,
            worst_case,
            worst_detail,
        }
    }

    /// The row this line holds, or why it holds none.
    fn row(&self) -> Result<RobustnessRow, String> {
        let case_kind = CaseKind::ALL
            .into_iter()
            .find(|kind| kind.name() == self.case_kind)
            .ok_or_else(|| format!("unknown case_kind {:?}", self.case_kind))?;
        let worst = match self.worst_outcome.as_str() {
            "" => None,
            name => {
                let outcome =
                    Outcome::by_name(name).ok_or_else(|| format!("unknown worst_outcome {name:?}"))?;
                let (case, input) = self
                    .worst_case
                    .strip_prefix('#')
                    .and_then(|rest| rest.split_once(": "))
                    .and_then(|(case, input)| Some((case.parse().ok()?, input)))
                    .ok_or_else(|| format!("worst_case {:?} is not `#<case>: <input>`", self.worst_case))?;
                Some(WorstCase {
                    outcome,
                    case,
                    input: input.to_string(),
                    detail: self.worst_detail.clone(),
                })
            }
        };
        Ok(RobustnessRow {
            id: self.target.clone(),
            case_kind,
            cases: self.cases,
            ok_equal: self.ok_equal,
            ok_different: self.ok_different,
            error: self.error,
            panic: self.panic,
            over_cap: self.over_cap,
            crash: self.crash,
            timeout: self.timeout,
            peak_alloc_bytes: self.peak_alloc_bytes,
            input_bytes: self.input_bytes,
            worst,
        })
    }
}

/// Writes `robustness.csv`: one line per decoder and case kind.
pub fn write_csv(out: &mut dyn std::io::Write, rows: &[RobustnessRow]) -> Result<()> {
    let lines: Vec<CsvRow> = rows.iter().map(CsvRow::of).collect();
    out.write_all(&files::to_csv(&lines)?)?;
    Ok(())
}

/// Reads a complete, valid robustness.csv back (see [`files::read_complete`]).
pub fn read_csv(path: &Path) -> Result<Vec<RobustnessRow>> {
    let lines: Vec<CsvRow> = files::read_complete(path)?;
    Ok(lines
        .iter()
        .map(|line| line.row().expect("a checked line holds a row"))
        .collect())
}

/// The most cases one row may count: far beyond `--cases`, and low enough that adding up every
/// row of a file cannot overflow.
pub const MAX_ROW_CASES: usize = 1_000_000_000_000;

impl Record for CsvRow {
    const ROW: &'static str = "decoder and case kind";

    /// Names that exist, every case with exactly one outcome, and a worst case named.
    fn check(&self) -> Result<(), String> {
        let row = self.row()?;
        if !(1..=MAX_ROW_CASES).contains(&row.cases) {
            return Err(format!(
                "cases {} is outside its range 1..={MAX_ROW_CASES}",
                row.cases
            ));
        }
        let classified = Outcome::ALL
            .into_iter()
            .try_fold(0usize, |sum, outcome| sum.checked_add(row.count(outcome)));
        if classified != Some(row.cases) {
            return Err(format!(
                "the outcome counts do not add up to its {} cases",
                row.cases
            ));
        }
        if row.worst.is_none() {
            return Err("worst_outcome is empty in a row with cases".to_string());
        }
        Ok(())
    }

    fn key(&self) -> String {
        format!("{} {}", self.target, self.case_kind)
    }
}

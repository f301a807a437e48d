//! Outcomes, their per-(decoder, case kind) counts (tallied as the cases stream in),
//! `robustness.csv` and what a valid row of it is, and the Markdown section of the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::cases::{CaseKind, Mutation};
use crate::arm::ArmId;
use crate::report::files::{self, Record};

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

/// One finished case, as the worker reports it (or the parent infers it from a dead worker).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseReport {
    pub index: usize,
    pub outcome: Outcome,
    /// Peak live bytes the decoder held during the case (0 when the worker died).
    pub peak_bytes: u64,
    /// Panic message and location, the refused request, or how the worker died.
    pub detail: String,
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
    fn new(id: &ArmId, case_kind: CaseKind, input_bytes: usize) -> Self {
        RobustnessRow {
            id: id.clone(),
            case_kind,
            cases: 0,
            ok_equal: 0,
            ok_different: 0,
            error: 0,
            panic: 0,
            over_cap: 0,
            crash: 0,
            timeout: 0,
            peak_alloc_bytes: 0,
            input_bytes,
            worst: None,
        }
    }

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

    fn add(&mut self, mutation: &Mutation, report: &CaseReport) {
        self.cases += 1;
        *match report.outcome {
            Outcome::OkEqual => &mut self.ok_equal,
            Outcome::Error => &mut self.error,
            Outcome::OkDifferent => &mut self.ok_different,
            Outcome::Panic => &mut self.panic,
            Outcome::Timeout => &mut self.timeout,
            Outcome::OverCap => &mut self.over_cap,
            Outcome::Crash => &mut self.crash,
        } += 1;
        self.peak_alloc_bytes = self.peak_alloc_bytes.max(report.peak_bytes);
        // The first case of the most severe outcome: the one to reproduce.
        if self
            .worst
            .as_ref()
            .is_none_or(|worst| report.outcome > worst.outcome)
        {
            self.worst = Some(WorstCase {
                outcome: report.outcome,
                case: report.index,
                input: mutation.describe(),
                detail: report.detail.clone(),
            });
        }
    }
}

/// One decoder's rows, counted case by case as the reports arrive (in plan order), so that
/// neither the plan nor the reports are ever held whole.
pub struct Tally<P> {
    id: ArmId,
    input_bytes: usize,
    plan: P,
    rows: BTreeMap<CaseKind, RobustnessRow>,
}

impl<P: Iterator<Item = Mutation>> Tally<P> {
    pub fn new(id: &ArmId, input_bytes: usize, plan: P) -> Self {
        Tally {
            id: id.clone(),
            input_bytes,
            plan,
            rows: BTreeMap::new(),
        }
    }

    /// Counts the next case of the plan.
    pub fn add(&mut self, report: &CaseReport) {
        let mutation = self.plan.next().expect("a report per planned case");
        let kind = mutation.kind();
        self.rows
            .entry(kind)
            .or_insert_with(|| RobustnessRow::new(&self.id, kind, self.input_bytes))
            .add(&mutation, report);
    }

    /// One row per case kind the plan has, in [`CaseKind`] order.
    pub fn rows(self) -> Vec<RobustnessRow> {
        self.rows.into_values().collect()
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

/// The report's robustness section: one table line per decoder (every payload and case kind
/// added up), then every decoder's worst case when it is a failure.
pub fn markdown_table(rows: &[RobustnessRow]) -> String {
    struct Decoder<'a> {
        totals: [usize; Outcome::ALL.len()],
        cases: usize,
        peak: u64,
        payloads: usize,
        worst: Option<(&'a RobustnessRow, &'a WorstCase)>,
    }
    let mut decoders: Vec<(String, Decoder)> = Vec::new();
    for row in rows {
        let label = row.id.decoder_label();
        let index = match decoders.iter().position(|(existing, _)| *existing == label) {
            Some(index) => index,
            None => {
                let empty = Decoder {
                    totals: [0; Outcome::ALL.len()],
                    cases: 0,
                    peak: 0,
                    payloads: 0,
                    worst: None,
                };
                decoders.push((label, empty));
                decoders.len() - 1
            }
        };
        let decoder = &mut decoders[index].1;
        for (total, outcome) in decoder.totals.iter_mut().zip(Outcome::ALL) {
            *total += row.count(outcome);
        }
        decoder.cases += row.cases;
        decoder.peak = decoder.peak.max(row.peak_alloc_bytes);
        if row.case_kind == CaseKind::Truncate {
            decoder.payloads += 1;
        }
        if let Some(worst) = &row.worst
            && decoder
                .worst
                .is_none_or(|(_, current)| worst.outcome > current.outcome)
        {
            decoder.worst = Some((row, worst));
        }
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "| decoder | payloads | cases | ok, equal | error | ok, different | panic | timeout | over cap | crash | peak alloc | worst |"
    );
    let _ = writeln!(text, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    for (label, decoder) in &decoders {
        let worst = match decoder.worst {
            Some((row, worst)) if worst.outcome.is_failure() => {
                format!(
                    "{} on {} ({})",
                    worst.outcome.name(),
                    row.case_kind.name(),
                    row.id.codec.payload
                )
            }
            _ => "-".to_string(),
        };
        let _ = write!(text, "| {label} | {} | {} |", decoder.payloads, decoder.cases);
        for (total, outcome) in decoder.totals.iter().zip(Outcome::ALL) {
            if outcome.is_failure() && *total > 0 {
                let _ = write!(text, " **{total}** |");
            } else {
                let _ = write!(text, " {total} |");
            }
        }
        let _ = writeln!(text, " {} | {worst} |", human_bytes(decoder.peak));
    }
    let failures: Vec<String> = decoders
        .iter()
        .filter_map(|(label, decoder)| {
            let (row, worst) = decoder.worst?;
            worst.outcome.is_failure().then(|| {
                let detail = if worst.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", worst.detail)
                };
                format!(
                    "- {label}: {} on {} (payload {}, case #{}: {}){detail}",
                    worst.outcome.name(),
                    row.case_kind.name(),
                    row.id.codec.payload,
                    worst.case,
                    worst.input,
                )
            })
        })
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(
            text,
            "\nWorst case of every decoder that failed (reproduce with the same `--seed` and `--cases`):\n"
        );
        for line in failures {
            let _ = writeln!(text, "{line}");
        }
    }
    text
}

fn human_bytes(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(backend: &str) -> ArmId {
        ArmId {
            codec: crate::arm::CodecId {
                format: "fmt".into(),
                backend: backend.into(),
                payload: "order".into(),
                ..Default::default()
            },
            operation: crate::arm::Operation::Decode,
            mode: crate::arm::Mode::Typed,
        }
    }

    fn report(index: usize, outcome: Outcome) -> CaseReport {
        CaseReport {
            index,
            outcome,
            peak_bytes: index as u64 * 10,
            detail: format!("d{index}"),
        }
    }

    #[test]
    fn rows_count_every_case_and_name_the_first_worst_one() {
        let plan = vec![
            Mutation::Truncate { len: 0 },
            Mutation::Truncate { len: 1 },
            Mutation::FlipBit { offset: 0, bit: 1 },
            Mutation::Truncate { len: 2 },
            Mutation::Truncate { len: 3 },
        ];
        let reports = [
            report(0, Outcome::Error),
            report(1, Outcome::Panic),
            report(2, Outcome::OkDifferent),
            report(3, Outcome::Panic),
            report(4, Outcome::OkEqual),
        ];
        let mut tally = Tally::new(&id("b"), 9, plan.into_iter());
        reports.iter().for_each(|report| tally.add(report));
        let rows = tally.rows();
        assert_eq!(rows.len(), 2);
        let truncate = &rows[0];
        assert_eq!(truncate.case_kind, CaseKind::Truncate);
        assert_eq!(
            (truncate.cases, truncate.error, truncate.panic, truncate.ok_equal),
            (4, 1, 2, 1)
        );
        assert_eq!(truncate.peak_alloc_bytes, 40);
        let worst = truncate.worst.as_ref().unwrap();
        assert_eq!(
            (worst.outcome, worst.case, worst.detail.as_str()),
            (Outcome::Panic, 1, "d1")
        );
        assert_eq!(rows[1].ok_different, 1);
    }

    #[test]
    fn csv_round_trips_and_markdown_names_the_worst_case() {
        let plan = vec![Mutation::Truncate { len: 0 }, Mutation::Truncate { len: 1 }];
        let rows = |backend: &str, outcomes: [Outcome; 2]| {
            let mut tally = Tally::new(&id(backend), 2, plan.clone().into_iter());
            for (index, outcome) in outcomes.into_iter().enumerate() {
                tally.add(&report(index, outcome));
            }
            tally.rows()
        };
        let mut all = rows("good", [Outcome::Error, Outcome::OkEqual]);
        all.extend(rows("bad", [Outcome::Error, Outcome::OverCap]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robustness.csv");
        let mut bytes = Vec::new();
        write_csv(&mut bytes, &all).unwrap();
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(read_csv(&path).unwrap(), all);
        let table = markdown_table(&all);
        assert!(
            table.contains("| fmt/good typed | 1 | 2 | 1 | 1 | 0 | 0 | 0 | 0 | 0 |"),
            "{table}"
        );
        assert!(
            table.contains("| fmt/bad typed | 1 | 2 | 0 | 1 | 0 | 0 | 0 | **1** | 0 |"),
            "{table}"
        );
        assert!(
            table.contains(
                "- fmt/bad typed: over-cap on truncate (payload order, case #1: truncated to 1 bytes): d1"
            ),
            "{table}"
        );
        assert!(!table.contains("- fmt/good"), "{table}");
    }
}

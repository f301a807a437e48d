//! Outcomes tallied per (decoder, case kind) as the cases stream in, into the rows of
//! robustness.csv ([`crate::schema::robustness`]).

use std::collections::BTreeMap;

use super::cases::Mutation;
use crate::arm::ArmId;
pub use crate::schema::robustness::{CaseKind, Outcome, RobustnessRow, WorstCase};
use crate::worker::CaseReport;

impl RobustnessRow {
    pub(super) fn new(id: &ArmId, case_kind: CaseKind, input_bytes: usize) -> Self {
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

    pub(super) fn add(&mut self, mutation: &Mutation, report: &CaseReport) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::robustness::{read_csv, write_csv};

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
    fn tallied_rows_round_trip_through_robustness_csv() {
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
    }
}

//! The report's robustness section (robustness.csv, [`crate::schema::robustness`]).

use std::fmt::Write as _;

use crate::escape;
use crate::schema::robustness::{CaseKind, Outcome, RobustnessRow, WorstCase};

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
                    escape::markdown(&row.id.codec.payload)
                )
            }
            _ => "-".to_string(),
        };
        let _ = write!(
            text,
            "| {} | {} | {} |",
            escape::markdown(label),
            decoder.payloads,
            decoder.cases
        );
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
                    format!(": {}", escape::markdown(&worst.detail))
                };
                format!(
                    "- {}: {} on {} (payload {}, case #{}: {}){detail}",
                    escape::markdown(label),
                    worst.outcome.name(),
                    row.case_kind.name(),
                    escape::markdown(&row.id.codec.payload),
                    worst.case,
                    escape::markdown(&worst.input),
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
    use crate::arm::{ArmId, CodecId, Mode, Operation};

    /// One decoder's truncate row: two cases, the first refused, the second `second`.
    fn row(backend: &str, second: Outcome) -> RobustnessRow {
        let mut row = RobustnessRow {
            id: ArmId {
                codec: CodecId {
                    format: "fmt".into(),
                    backend: backend.into(),
                    payload: "order".into(),
                    ..Default::default()
                },
                operation: Operation::Decode,
                mode: Mode::Typed,
            },
            case_kind: CaseKind::Truncate,
            cases: 2,
            ok_equal: 0,
            ok_different: 0,
            error: 1,
            panic: 0,
            over_cap: 0,
            crash: 0,
            timeout: 0,
            peak_alloc_bytes: 10,
            input_bytes: 2,
            worst: Some(WorstCase {
                outcome: second.max(Outcome::Error),
                case: if second > Outcome::Error { 1 } else { 0 },
                input: "truncated to 1 bytes".into(),
                detail: "d1".into(),
            }),
        };
        match second {
            Outcome::OkEqual => row.ok_equal += 1,
            Outcome::OverCap => row.over_cap += 1,
            other => panic!("no counter for {other:?} in this test"),
        }
        row
    }

    #[test]
    fn the_table_adds_up_each_decoder_and_names_only_failures() {
        let table = markdown_table(&[row("good", Outcome::OkEqual), row("bad", Outcome::OverCap)]);
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

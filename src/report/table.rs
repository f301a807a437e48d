//! Plain-text tables for the terminal: the arm list and its unsupported combinations, the
//! summary after a run, the headline ratios, instruction counts and fidelity pairs.

use crate::arm::Arm;
use crate::format::Unsupported;
use crate::schema::instructions::InstructionRow;
use crate::schema::ratios::Ratio;
use crate::schema::results::ResultRow;

/// Left-aligned text columns; numbers are right-aligned when a column header says so with a
/// leading `>`. Cells are shown through [`crate::escape::terminal`], so the columns line up
/// with the escapes a control character becomes (stdout escapes them too; escaping is
/// idempotent).
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| crate::escape::terminal(cell).into_owned())
                .collect()
        })
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = headers
        .iter()
        .map(|header| header.trim_start_matches('>').len())
        .collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (index, (cell, header)) in cells.iter().zip(headers).enumerate() {
            let width = widths[index];
            let padding = " ".repeat(width.saturating_sub(cell.chars().count()));
            if index > 0 {
                text.push_str("  ");
            }
            if header.starts_with('>') {
                text.push_str(&padding);
                text.push_str(cell);
            } else {
                text.push_str(cell);
                text.push_str(&padding);
            }
        }
        text.trim_end().to_string() + "\n"
    };
    let mut text = line(
        headers
            .iter()
            .map(|header| header.trim_start_matches('>'))
            .collect(),
    );
    for row in rows {
        text.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    text
}

/// The summary printed after `serbench run`: per payload, operation and mode (typed, borrowed
/// and dynamic decodes are different jobs), fastest first, a blank line between groups. Time is
/// per record; bytes and allocations per operation, and counts print as whole numbers where
/// they are whole.
pub fn summary(rows: &[ResultRow]) -> String {
    let mut sorted: Vec<&ResultRow> = rows.iter().collect();
    let group = |row: &ResultRow| {
        let (rank, payload, operation, _) = row.arm.sort_key();
        (rank, payload, operation, row.arm.mode, row.arm.codec.framing)
    };
    sorted.sort_by(|a, b| {
        group(a).cmp(&group(b)).then(
            a.ns_per_record
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.ns_per_record.unwrap_or(f64::INFINITY)),
        )
    });
    let cells: Vec<Vec<String>> = sorted
        .iter()
        .enumerate()
        .flat_map(|(index, row)| {
            let separator = (index > 0 && group(sorted[index - 1]) != group(row)).then(Vec::new);
            let figure = |value: Option<f64>, digits: usize| {
                value.map_or("-".to_string(), |value| format!("{value:.digits$}"))
            };
            let cells = vec![
                row.arm.codec.payload.clone(),
                row.arm.operation.name().to_string(),
                format!("{} {}", row.arm.mode.name(), row.arm.codec.framing.name()),
                row.arm.codec.backend_label(),
                figure(row.ns_per_record, 1),
                figure(row.relative_half_width().map(|fraction| fraction * 100.0), 1),
                row.encoded_bytes
                    .map_or("-".to_string(), |bytes| bytes.to_string()),
                row.allocs_per_op.map_or("-".to_string(), count),
                if row.status == "ok" {
                    String::new()
                } else {
                    format!("{}: {}", row.status, row.note)
                },
            ];
            separator.into_iter().chain(std::iter::once(cells))
        })
        .collect();
    render(
        &[
            "payload",
            "op",
            "mode",
            "arm",
            ">ns/record",
            ">±%",
            ">bytes/op",
            ">allocs/op",
            "status",
        ],
        &cells,
    )
}

/// A count as a whole number where it is one (5, not 5.0), else with one decimal (a mean over
/// operations that allocate unevenly).
pub fn count(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

/// `serbench list`: one line per arm, then the unsupported combinations with their reasons.
pub fn arms(arms: &[&Arm], unsupported: &[&Unsupported]) -> String {
    let rows: Vec<Vec<String>> = arms
        .iter()
        .map(|arm| {
            let id = &arm.id;
            vec![
                id.codec.format.clone(),
                id.codec.backend.clone(),
                id.codec.variant.clone(),
                id.codec.payload.clone(),
                id.operation.name().to_string(),
                id.mode.name().to_string(),
                id.codec.framing.name().to_string(),
            ]
        })
        .collect();
    let mut text = render(
        &["format", "backend", "variant", "payload", "op", "mode", "framing"],
        &rows,
    );
    text += &format!("\n{} arms\n", rows.len());
    if !unsupported.is_empty() {
        let rows: Vec<Vec<String>> = unsupported
            .iter()
            .map(|unsupported| {
                vec![
                    unsupported.format.to_string(),
                    unsupported.backend.to_string(),
                    unsupported.payload.to_string(),
                    match unsupported.mode {
                        Some(mode) => format!("{} {}", unsupported_operation(unsupported), mode.name()),
                        None => unsupported_operation(unsupported).to_string(),
                    },
                    unsupported.reason.clone(),
                ]
            })
            .collect();
        text += "\nunsupported:\n";
        text += &render(&["format", "backend", "payload", "op", "reason"], &rows);
    }
    text
}

/// `serbench list --json`: the formats, payloads, arms and unsupported combinations.
pub fn arms_json(
    payloads: &[&crate::payload::PayloadSpec],
    arms: &[&Arm],
    unsupported: &[&Unsupported],
) -> serde_json::Value {
    serde_json::json!({
        "formats": crate::format::all().iter().map(|format| serde_json::json!({"name": format.name, "about": format.about})).collect::<Vec<_>>(),
        "payloads": payloads.iter().map(|spec| serde_json::json!({"name": spec.name, "records": spec.records, "description": spec.description})).collect::<Vec<_>>(),
        "arms": arms.iter().map(|arm| {
            let id = &arm.id;
            serde_json::json!({
                "format": id.codec.format, "backend": id.codec.backend, "variant": id.codec.variant,
                "payload": id.codec.payload, "operation": id.operation.name(),
                "mode": id.mode.name(), "framing": id.codec.framing.name(),
            })
        }).collect::<Vec<_>>(),
        "unsupported": unsupported.iter().map(|unsupported| serde_json::json!({
            "format": unsupported.format, "backend": unsupported.backend,
            "payload": unsupported.payload,
            "operation": unsupported_operation(unsupported),
            "mode": unsupported.mode.map_or("*", |mode| mode.name()),
            "reason": unsupported.reason,
        })).collect::<Vec<_>>(),
    })
}

/// The operation an unsupported entry names, `*` for all of them.
fn unsupported_operation(unsupported: &Unsupported) -> &'static str {
    unsupported.operation.map_or("*", |operation| operation.name())
}

/// `run --measure instructions`: one line per counted arm, with its simulated cache misses.
pub fn instructions(rows: &[InstructionRow]) -> String {
    let count = |value: Option<f64>, decimals: usize| {
        value.map_or("-".to_string(), |value| format!("{value:.decimals$}"))
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.arm.label(),
                row.arm.codec.payload.clone(),
                row.arm.operation.name().to_string(),
                count(row.instructions_per_op, 0),
                count(row.instructions_per_record, 1),
                count(row.estimated_cycles_per_op, 0),
                count(row.d1_misses_per_op, 1),
                count(row.ll_misses_per_op, 1),
                row.status.clone(),
            ]
        })
        .collect();
    render(
        &[
            "arm",
            "payload",
            "op",
            ">instructions/op",
            ">per record",
            ">est. cycles/op",
            ">D1 misses/op",
            ">LL misses/op",
            "status",
        ],
        &cells,
    )
}

/// The headline ratios, as printed after a run.
pub fn ratios(ratios: &[Ratio]) -> String {
    let cells: Vec<Vec<String>> = ratios
        .iter()
        .map(|ratio| {
            vec![
                ratio.comparison.clone(),
                ratio.payload.clone(),
                ratio.operation.name().to_string(),
                format!("{} / {}", ratio.numerator, ratio.denominator),
                format!("{:.2}x", ratio.ratio),
                format!("[{:.2}, {:.2}]", ratio.ci95_low, ratio.ci95_high),
                match (ratio.paired_low, ratio.paired_high) {
                    (Some(low), Some(high)) => format!("[{low:.2}, {high:.2}]"),
                    _ => "-".to_string(),
                },
                match (ratio.holds_one, ratio.ratio < 1.0) {
                    (true, _) => "≈".to_string(),
                    (false, true) => "faster".to_string(),
                    (false, false) => "slower".to_string(),
                },
            ]
        })
        .collect();
    render(
        &[
            "comparison",
            "payload",
            "op",
            "arms",
            ">ratio",
            ">95% CI",
            ">paired CI",
            "verdict",
        ],
        &cells,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let text = render(
            &["name", ">n"],
            &[vec!["a".into(), "10".into()], vec!["long".into(), "2".into()]],
        );
        assert_eq!(text, "name   n\na     10\nlong   2\n");
    }
}

//! Plain-text tables for the terminal: the arm list and its unsupported combinations, the
//! summary after a run, the headline ratios, instruction counts and fidelity pairs.

use super::analysis::{Analysis, Answer, Placed, Sized};
use std::collections::BTreeMap;

use super::rank::Rank;
use crate::arm::{Arm, ArmId};
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
/// and dynamic decodes are different jobs), fastest first, a blank line between groups, each arm
/// with its rank in the group as the analysis gave it (`ranks`, [`super::rank`]: ties share
/// one). Time is per record; bytes and allocations per operation,
/// and counts print as whole numbers where they are whole.
pub fn summary(rows: &[ResultRow], ranks: &BTreeMap<ArmId, Rank>) -> String {
    let mut sorted: Vec<&ResultRow> = rows.iter().collect();
    let group = |row: &ResultRow| {
        let (rank, payload, operation, _) = row.arm.sort_key();
        (rank, payload, operation, row.arm.mode)
    };
    sorted.sort_by(|a, b| {
        group(a).cmp(&group(b)).then(
            a.ns_per_record
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.ns_per_record.unwrap_or(f64::INFINITY))
                .then_with(|| a.arm.cmp(&b.arm)),
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
                ranks.get(&row.arm).map_or("-".to_string(), ToString::to_string),
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
            ">rank",
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

/// A ratio's verdict in one word, by its quoted interval: `≈` where it holds 1, `≈ within ±s%`
/// where it lies inside the layout spread ([`crate::stats::LAYOUT_SPREAD`]: a tie all the same),
/// else faster or slower.
fn verdict(ratio: &Ratio) -> String {
    let (interval, _) = ratio.quoted();
    let spread = crate::stats::LAYOUT_SPREAD;
    if interval.holds(1.0) {
        "≈".to_string()
    } else if interval.is_tie(spread) {
        format!("≈ within ±{}%", super::verdict::percent(spread))
    } else if interval.ratio < 1.0 {
        "faster".to_string()
    } else {
        "slower".to_string()
    }
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
                super::text::ratio(ratio.ratio),
                super::text::ratio_bounds(ratio.ci95_low, ratio.ci95_high),
                match (ratio.paired_low, ratio.paired_high) {
                    (Some(low), Some(high)) => super::text::ratio_bounds(low, high),
                    _ => "-".to_string(),
                },
                verdict(ratio),
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

/// The answer printed after `serbench run` ([`super::analysis::Answer`]): per payload, the
/// cheapest to decode and to encode (the first rank: arms a rerun could order either way joined
/// by `=`), the fewest bytes and zstd bytes per record, then the front of round-trip time against
/// bytes.
pub fn answer(analysis: &Analysis) -> String {
    let Some(host) = analysis.hosts.first().filter(|_| !analysis.answers.is_empty()) else {
        return String::new();
    };
    let mut text = format!(
        "The answer on {} (per record; a = b: a rerun could order them either way):\n",
        host.label
    );
    let payload = |answer: &Answer| match answer.mode.as_str() {
        "typed" => answer.payload.clone(),
        mode => format!("{} ({mode})", answer.payload),
    };
    let timed = |placed: &[Placed]| {
        let first = Answer::first(placed);
        first.first().map_or("-".to_string(), |fastest| {
            format!(
                "{} {}",
                joined(first.iter().map(|arm| arm.label.as_str()), " = ", 2),
                fastest.time
            )
        })
    };
    let sized = |sized: &[Sized]| {
        let first = Answer::smallest(sized);
        first.first().map_or("-".to_string(), |smallest| {
            format!(
                "{} {}",
                joined(first.iter().map(|codec| codec.label.as_str()), " = ", 2),
                smallest.size
            )
        })
    };
    let rows: Vec<Vec<String>> = analysis
        .answers
        .iter()
        .map(|answer| {
            vec![
                payload(answer),
                timed(&answer.decode),
                timed(&answer.encode),
                sized(&answer.bytes),
                sized(&answer.zstd),
            ]
        })
        .collect();
    text += &render(&["payload", "decode", "encode", "bytes", "zstd bytes"], &rows);
    text += "\nThe front: nothing else is both faster (round trip) and smaller:\n";
    let fronts: Vec<Vec<String>> = analysis
        .answers
        .iter()
        .filter(|answer| !answer.points.is_empty())
        .map(|answer| {
            let front = answer
                .front()
                .map(|point| format!("{} {} {}", point.label, point.time, point.size));
            vec![payload(answer), joined(front, " · ", 3)]
        })
        .collect();
    text += &render(&["payload", "round trip, bytes"], &fronts);
    text
}

/// `items` joined by `separator`, the first `shown` of them and `+N` for the rest.
fn joined<S: AsRef<str>>(items: impl Iterator<Item = S>, separator: &str, shown: usize) -> String {
    let items: Vec<S> = items.collect();
    let mut text = items
        .iter()
        .take(shown)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > shown {
        text += &format!(" +{}", items.len() - shown);
    }
    text
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

    fn decode(backend: &str, mode: crate::arm::Mode, framing: crate::arm::Framing, mean: f64) -> ResultRow {
        let mut arm = crate::arm::ArmId::typed("f", backend, "", "order", crate::arm::Operation::Decode)
            .framed(framing);
        arm.mode = mode;
        ResultRow {
            arm,
            records: 1,
            mean_ns: Some(mean),
            ci95_low_ns: Some(mean * 0.99),
            ci95_high_ns: Some(mean * 1.01),
            ns_per_record: Some(mean),
            status: "ok".into(),
            ..ResultRow::default()
        }
    }

    /// Each line's (rank, arm) cells, blank lines as empty.
    fn ranks(text: &str) -> Vec<(String, String)> {
        text.lines()
            .skip(1)
            .map(|line| {
                let cells: Vec<&str> = line.split_whitespace().collect();
                match cells.len() {
                    0 => (String::new(), String::new()),
                    _ => (cells[4].to_string(), cells[5].to_string()),
                }
            })
            .collect()
    }

    #[test]
    fn the_summary_ranks_each_mode_of_a_section_with_ties_shared() {
        use crate::arm::{Framing, Mode};
        // Typed: a 100, b 101 (±1%: a tie), c 200 in NDJSON, which ranks with the other framings;
        // borrowed: d alone. A failed arm has no rank.
        let mut failed = decode("e", Mode::Typed, Framing::Document, 1.0);
        failed.status = "failed".into();
        failed.ns_per_record = None;
        let rows = vec![
            decode("c", Mode::Typed, Framing::Ndjson, 200.0),
            decode("b", Mode::Typed, Framing::Document, 101.0),
            decode("d", Mode::Borrowed, Framing::Document, 50.0),
            decode("a", Mode::Typed, Framing::Document, 100.0),
            failed,
        ];
        let text = summary(&rows, &crate::report::rank::of_rows(&rows, None));
        let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(header[..5], ["payload", "op", "mode", "rank", "arm"], "{text}");
        let pair = |rank: &str, arm: &str| (rank.to_string(), arm.to_string());
        assert_eq!(
            ranks(&text),
            [
                pair("=1", "f/a"),
                pair("=1", "f/b"),
                pair("3", "f/c"),
                pair("-", "f/e"),
                pair("", ""),
                pair("1", "f/d"),
            ],
            "{text}"
        );
    }

    #[test]
    fn the_verdict_column_says_a_tie_inside_the_layout_spread_apart_from_one_that_holds_one() {
        let ratio = |low: f64, value: f64, high: f64| Ratio {
            ratio: value,
            ci95_low: low,
            ci95_high: high,
            holds_one: low <= 1.0 && 1.0 <= high,
            ..Ratio::default()
        };
        let spread = crate::stats::LAYOUT_SPREAD;
        let inside = 1.0 + spread / 2.0;
        assert_eq!(verdict(&ratio(0.98, 1.0, 1.02)), "≈");
        assert_eq!(
            verdict(&ratio(1.0 + spread / 4.0, inside, 1.0 + spread * 0.75)),
            format!("≈ within ±{}%", super::super::verdict::percent(spread))
        );
        assert_eq!(verdict(&ratio(1.5, 2.0, 2.5)), "slower");
        assert_eq!(verdict(&ratio(0.4, 0.5, 0.6)), "faster");
        // The quoted (paired) interval decides, as the sentence does.
        let paired = Ratio {
            paired_ratio: Some(2.0),
            paired_low: Some(1.9),
            paired_high: Some(2.1),
            paired_workers: Some(4),
            ..ratio(0.5, 2.0, 3.0)
        };
        assert_eq!(verdict(&paired), "slower");
    }
}

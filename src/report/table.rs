//! Plain-text tables for the terminal: the arm list and the summary after a run.

use super::ratios::Ratio;
use super::results::ResultRow;

/// Left-aligned text columns; numbers are right-aligned when a column header says so with a
/// leading `>`.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
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

/// The summary printed after `serbench run`: per payload and operation, fastest first.
pub fn summary(rows: &[ResultRow]) -> String {
    let mut sorted: Vec<&ResultRow> = rows.iter().collect();
    let payload_order = super::load::payload_rank;
    sorted.sort_by(|a, b| {
        (payload_order(&a.payload), &a.operation, &a.mode, &a.framing)
            .cmp(&(payload_order(&b.payload), &b.operation, &b.mode, &b.framing))
            .then(
                a.ns_per_record
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&b.ns_per_record.unwrap_or(f64::INFINITY)),
            )
    });
    let cells: Vec<Vec<String>> = sorted
        .iter()
        .map(|row| {
            let backend = if row.variant.is_empty() {
                row.backend.clone()
            } else {
                format!("{}[{}]", row.backend, row.variant)
            };
            let figure = |value: Option<f64>, digits: usize| {
                value.map_or("-".to_string(), |value| format!("{value:.digits$}"))
            };
            vec![
                row.payload.clone(),
                row.operation.clone(),
                format!("{} {}", row.mode, row.framing),
                format!("{}/{backend}", row.format),
                figure(row.ns_per_record, 1),
                figure(row.relative_half_width().map(|fraction| fraction * 100.0), 1),
                row.encoded_bytes
                    .map_or("-".to_string(), |bytes| bytes.to_string()),
                figure(row.allocs_per_op, 1),
                if row.status == "ok" {
                    String::new()
                } else {
                    format!("{}: {}", row.status, row.note)
                },
            ]
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
            ">bytes",
            ">allocs",
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
                ratio.operation.clone(),
                format!("{} / {}", ratio.numerator, ratio.denominator),
                format!("{:.2}x", ratio.ratio),
                format!("[{:.2}, {:.2}]", ratio.ci95_low, ratio.ci95_high),
                if ratio.intervals_overlap {
                    "overlap".to_string()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    render(
        &["comparison", "payload", "op", "arms", ">ratio", ">95% CI", "CIs"],
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

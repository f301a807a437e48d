//! How every part of the report writes a figure, a name and a table: one formatter per kind
//! of number (a time, a count of bytes, a ratio), names in code font, and Markdown tables.

use crate::escape;

/// Short numbers for axis ticks and bar labels: 3 significant digits below 1000, thousands
/// grouped above.
pub fn short_number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude == 0.0 {
        "0".to_string()
    } else if magnitude < 1.0 {
        format!("{value:.3}")
    } else if magnitude < 10.0 {
        format!("{value:.2}")
    } else if magnitude < 100.0 {
        format!("{value:.1}")
    } else {
        grouped(value.round() as i64)
    }
}

/// A time in nanoseconds in the unit that keeps it short: `41.2 ns`, `368 µs`, `2.59 ms`,
/// `1.20 s`, the figure as [`short_number`].
pub fn duration(ns: f64) -> String {
    let (value, unit) = match ns.abs() {
        magnitude if magnitude >= 1e9 => (ns / 1e9, "s"),
        magnitude if magnitude >= 1e6 => (ns / 1e6, "ms"),
        magnitude if magnitude >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    format!("{} {unit}", short_number(value))
}

/// `4100` as `4,100`: thousands separated by commas.
pub fn grouped(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    if value < 0 { format!("-{text}") } else { text }
}

/// Nanoseconds with the digits that matter: one decimal from 10 ns up, more below.
pub fn ns(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// Two decimals, or two significant digits for a ratio below 0.1 (a copy-only share of
/// 0.0004 must not read 0.00).
pub fn ratio_text(value: f64) -> String {
    if value >= 0.1 || value <= 0.0 || !value.is_finite() {
        format!("{value:.2}")
    } else {
        let decimals = (-value.log10()).ceil() as usize + 1;
        format!("{value:.decimals$}")
    }
}

/// A ratio as every table and sentence writes it: `1.12x` ([`ratio_text`]).
pub fn ratio(value: f64) -> String {
    format!("{}x", ratio_text(value))
}

/// A ratio's interval: `[1.08, 1.16]`.
pub fn ratio_bounds(low: f64, high: f64) -> String {
    format!("[{}, {}]", ratio_text(low), ratio_text(high))
}

/// A ratio and its interval: `1.12x [1.08, 1.16]`.
pub fn ratio_interval(value: f64, low: f64, high: f64) -> String {
    format!("{} {}", ratio(value), ratio_bounds(low, high))
}

/// A name from a file (an arm's label, a format, a folder) in code font when a code span shows
/// it as it is (the names serbench gives: letters, digits and `-_./:+[] `), else as escaped text
/// ([`escape::markdown`]): a code span shows its content literally, so it cannot hold an
/// escape, and a backtick, a pipe, a brace or a line break in it would end it, the table cell,
/// or Liquid's raw block.
pub fn code(name: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:+[] ".contains(c);
    if !name.is_empty() && !name.starts_with(' ') && !name.ends_with(' ') && name.chars().all(plain) {
        format!("`{name}`")
    } else {
        escape::markdown(name)
    }
}

/// A Markdown table; a header starting with `>` is a right-aligned column. Cells are Markdown
/// already (text from a file passed [`escape::markdown`] or [`code`] where it was put in a
/// cell, so nothing here escapes it twice). Cells are padded to their column's width as
/// prettier pads them, so a formatter leaves the table as it is.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let right: Vec<bool> = header.iter().map(|name| name.starts_with('>')).collect();
    let mut lines: Vec<Vec<String>> = vec![
        header
            .iter()
            .map(|name| name.trim_start_matches('>').to_string())
            .collect(),
    ];
    lines.extend(rows.iter().cloned());
    let width = |cell: &str| cell.chars().count();
    let mut widths = vec![3; header.len()];
    for line in &lines {
        for (column, cell) in line.iter().enumerate() {
            widths[column] = widths[column].max(width(cell));
        }
    }
    let render = |cells: Vec<String>| -> String {
        let cells: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(column, cell)| {
                let padding = " ".repeat(widths[column] - width(cell));
                if right[column] {
                    format!("{padding}{cell}")
                } else {
                    format!("{cell}{padding}")
                }
            })
            .collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let rules: Vec<String> = widths
        .iter()
        .zip(&right)
        .map(|(&width, &right)| {
            if right {
                "-".repeat(width - 1) + ":"
            } else {
                "-".repeat(width)
            }
        })
        .collect();
    let mut lines = lines.into_iter();
    let mut text = render(lines.next().expect("a header line"));
    text += &format!("| {} |\n", rules.join(" | "));
    for line in lines {
        text += &render(line);
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_takes_the_unit_that_keeps_it_short() {
        assert_eq!(duration(41.25), "41.2 ns");
        assert_eq!(duration(999.0), "999 ns");
        assert_eq!(duration(368_338.0), "368 µs");
        assert_eq!(duration(2_590_193.0), "2.59 ms");
        assert_eq!(duration(1.2e9), "1.20 s");
    }
}

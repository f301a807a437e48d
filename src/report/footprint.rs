//! The report's footprint section (footprint.csv, [`crate::schema::footprint`]): a table and
//! two charts.

use std::fmt::Write as _;

use anyhow::Result;

use super::charts::RenderedChart;
use super::charts::{self, Bar, BarChart, Panel};
use super::text::{code, table};
use crate::escape;
use crate::schema::footprint::{BASELINE, FootprintRow};
use crate::schema::results::STATUS_OK;

/// KiB with one decimal.
fn kib(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

fn signed_kib(bytes: Option<i64>) -> String {
    bytes.map_or("-".to_string(), |bytes| format!("{:+.1}", bytes as f64 / 1024.0))
}

/// The table of the rows, as report.md and `serbench footprint` show it.
pub fn markdown_table(rows: &[FootprintRow]) -> String {
    let header: Vec<String> = [
        "build",
        ">binary KiB",
        ">over baseline",
        ">.text KiB",
        ">over baseline",
        ">compile s (median)",
        ">min-max",
        ">over baseline",
        ">runs",
        ">load (max)",
    ]
    .map(String::from)
    .to_vec();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .filter(|row| row.status == STATUS_OK)
        .map(|row| {
            let seconds = |value: Option<f64>| value.map_or("-".to_string(), |value| format!("{value:.1}"));
            vec![
                code(&row.format),
                row.binary_bytes
                    .map_or("-".to_string(), |bytes| kib(bytes as f64)),
                signed_kib(row.binary_bytes_over_baseline),
                row.text_bytes.map_or("-".to_string(), |bytes| kib(bytes as f64)),
                signed_kib(row.text_bytes_over_baseline),
                seconds(row.compile_s),
                format!("{}-{}", seconds(row.compile_s_min), seconds(row.compile_s_max)),
                row.compile_s_over_baseline
                    .map_or("-".to_string(), |value| format!("{value:+.1}")),
                row.runs.to_string(),
                row.load_average_max
                    .map_or("-".to_string(), |load| format!("{load:.1}")),
            ]
        })
        .collect();
    let mut text = if cells.is_empty() {
        String::new()
    } else {
        table(&header, &cells)
    };
    for row in rows.iter().filter(|row| row.status != STATUS_OK) {
        text += &format!(
            "- {} failed: {}\n",
            code(&row.format),
            escape::markdown(&row.note)
        );
    }
    if rows.iter().any(|row| row.status != STATUS_OK) {
        text.push('\n');
    }
    text
}

/// The footprint section of one folder (`label` names it, and its chart files; it is escaped
/// here).
pub fn write_section(
    markdown: &mut String,
    charts: &mut Vec<RenderedChart>,
    label: &str,
    rows: &[FootprintRow],
) -> Result<()> {
    writeln!(markdown, "## Footprint: {}\n", escape::markdown(label))?;
    let runs = rows.iter().map(|row| row.runs).max().unwrap_or(0);
    let cores = rows.first().map_or(0, |row| row.host.cores);
    writeln!(
        markdown,
        "What each format adds to a program (`serbench footprint`, footprint.csv): the same small \
         program (footprint/src/main.rs, which encodes and decodes `order` through the registry) \
         built with that format's feature only, release profile, stripped; and once with no \
         format, the baseline. Sizes are of the stripped binary and its `.text` section; compile \
         is the wall time of a clean build in a fresh target dir, serbench's own dependencies \
         included (the baseline has them too), the median of {runs} run(s) with the fastest and \
         slowest. The program reaches its format through serbench's registry, so its binary holds \
         serbench's codecs of every payload for that format, not only of `order`: what the format \
         costs as serbench uses it, more than a program with one message type. Load is the highest \
         1-minute load average at the end of a build's runs: above the machine's {cores} core(s), \
         other work shared the CPUs and the times are longer than on an idle machine.\n"
    )?;
    let ok: Vec<&FootprintRow> = rows.iter().filter(|row| row.status == STATUS_OK).collect();
    let formats: Vec<&FootprintRow> = ok.iter().copied().filter(|row| row.format != BASELINE).collect();
    let sizes: Vec<(&FootprintRow, i64)> = formats
        .iter()
        .filter_map(|row| Some((*row, row.binary_bytes_over_baseline?)))
        .collect();
    let slug = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect::<String>();
    if !sizes.is_empty() {
        let mut sizes = sizes;
        sizes.sort_by_key(|(row, bytes)| (*bytes, row.format.clone()));
        let chart = BarChart {
            title: format!("{label}: stripped binary size over the baseline"),
            axis: "KiB".to_string(),
            labels: sizes.iter().map(|(row, _)| row.format.clone()).collect(),
            formats: sizes.iter().map(|(row, _)| row.format.clone()).collect(),
            baselines: vec![false; sizes.len()],
            panels: vec![Panel {
                title: String::new(),
                // A build smaller than the baseline draws no bar; the table has its figure.
                bars: sizes
                    .iter()
                    .map(|(_, bytes)| {
                        Some(Bar {
                            value: (*bytes).max(0) as f64 / 1024.0,
                            interval: None,
                        })
                    })
                    .collect(),
                failed: Vec::new(),
            }],
        };
        push_chart(markdown, charts, &format!("footprint-binary-{slug}.svg"), &chart)?;
    }
    let mut timed: Vec<&FootprintRow> = ok.clone();
    timed.sort_by(|a, b| {
        a.compile_s
            .unwrap_or_default()
            .total_cmp(&b.compile_s.unwrap_or_default())
            .then_with(|| a.format.cmp(&b.format))
    });
    if !timed.is_empty() {
        let chart = BarChart {
            title: format!("{label}: clean build time (median, fastest to slowest run)"),
            axis: "seconds".to_string(),
            labels: timed.iter().map(|row| row.format.clone()).collect(),
            formats: timed.iter().map(|row| row.format.clone()).collect(),
            baselines: timed.iter().map(|row| row.format == BASELINE).collect(),
            panels: vec![Panel {
                title: String::new(),
                bars: timed
                    .iter()
                    .map(|row| {
                        Some(Bar {
                            value: row.compile_s?,
                            interval: Some((row.compile_s_min?, row.compile_s_max?)),
                        })
                    })
                    .collect(),
                failed: Vec::new(),
            }],
        };
        push_chart(markdown, charts, &format!("footprint-compile-{slug}.svg"), &chart)?;
    }
    markdown.push_str(&markdown_table(rows));
    Ok(())
}

fn push_chart(
    markdown: &mut String,
    charts: &mut Vec<RenderedChart>,
    file_name: &str,
    chart: &BarChart,
) -> Result<()> {
    writeln!(
        markdown,
        "![{}, lower is better]({}/{file_name})\n",
        escape::markdown(&chart.title),
        crate::schema::CHARTS_DIR
    )?;
    charts.push(RenderedChart {
        file_name: file_name.to_string(),
        svg: charts::bar_chart(chart)?,
        bars: chart
            .panels
            .iter()
            .map(|panel| panel.bars.iter().flatten().count())
            .sum(),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files;
    use crate::host::Host;
    use crate::schema::footprint::{FILE_NAME, SCHEMA_VERSION};
    use crate::schema::results::STATUS_FAILED;

    fn row(format: &str, binary: u64, seconds: [f64; 3]) -> FootprintRow {
        FootprintRow {
            schema_version: SCHEMA_VERSION,
            host: Host {
                host: "vm".into(),
                system: "x86_64-linux".into(),
                rustc: "rustc 1.95.0".into(),
                commit: "0123456789ab".into(),
                build: "portable".into(),
                ..Host::default()
            },
            timestamp: "2026-12-01T00:00:00Z".into(),
            format: format.into(),
            runs: 3,
            binary_bytes: Some(binary),
            text_bytes: Some(binary / 2),
            compile_s_min: Some(seconds[0]),
            compile_s: Some(seconds[1]),
            compile_s_max: Some(seconds[2]),
            status: STATUS_OK.into(),
            ..FootprintRow::default()
        }
    }

    #[test]
    fn the_csv_round_trips_and_bad_rows_are_refused_with_their_line() {
        let mut postcard = row("postcard", 1_300_000, [60.0, 61.5, 70.0]);
        postcard.binary_bytes_over_baseline = Some(100_000);
        postcard.compile_s_over_baseline = Some(3.5);
        let rows = vec![row(BASELINE, 1_200_000, [55.0, 58.0, 59.0]), postcard];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, files::to_csv(&rows).unwrap()).unwrap();
        assert_eq!(files::read_complete::<FootprintRow>(&path).unwrap(), rows);
        let header = std::fs::read_to_string(&path).unwrap();
        assert!(header.starts_with(
            "schema_version,host,system,os,cpu,cores,rustc,commit,build,environment,timestamp,format,runs,binary_bytes,"
        ));
        // A footprint.csv of version 4 (no os column) is refused by its version.
        let old = header
            .replacen("system,os,", "system,", 1)
            .replace("\n5,vm,x86_64-linux,,", "\n4,vm,x86_64-linux,");
        std::fs::write(&path, old).unwrap();
        let error = format!("{:#}", files::read_complete::<FootprintRow>(&path).unwrap_err());
        assert!(
            error.contains("schema version \"4\", this serbench reads version 5"),
            "{error}"
        );

        let refused = |rows: &[FootprintRow]| {
            std::fs::write(&path, files::to_csv(rows).unwrap()).unwrap();
            format!("{:#}", files::read_complete::<FootprintRow>(&path).unwrap_err())
        };
        let mut outside = rows[1].clone();
        outside.compile_s = Some(80.0);
        assert!(refused(&[outside]).contains("footprint.csv:2: compile_s 80 is not within"));
        let mut infinite = rows[1].clone();
        infinite.compile_s_max = Some(f64::INFINITY);
        assert!(refused(&[infinite]).contains("compile_s_max inf is outside its range"));
        let mut other_commit = rows[1].clone();
        other_commit.host.commit = "fedcba987654".into();
        assert!(refused(&[rows[0].clone(), other_commit]).contains("footprint.csv:3: a row of another run"));
        assert!(
            refused(&[rows[0].clone(), rows[0].clone()]).contains("build baseline appears a second time")
        );
    }

    #[test]
    fn the_section_charts_sizes_over_the_baseline_and_every_build_time() {
        let mut postcard = row("postcard", 1_300_000, [60.0, 61.5, 70.0]);
        postcard.binary_bytes_over_baseline = Some(102_400);
        postcard.text_bytes_over_baseline = Some(51_200);
        postcard.compile_s_over_baseline = Some(3.5);
        let failed = FootprintRow {
            status: STATUS_FAILED.into(),
            note: "cargo build failed: error[E0425]".into(),
            binary_bytes: None,
            ..row("csv", 0, [0.0; 3])
        };
        let rows = [row(BASELINE, 1_200_000, [55.0, 58.0, 59.0]), postcard, failed];
        let (mut markdown, mut charts) = (String::new(), Vec::new());
        write_section(&mut markdown, &mut charts, "x86_64-linux", &rows).unwrap();
        assert!(markdown.contains(r"## Footprint: x86\_64-linux"));
        assert!(
            markdown.contains("| `postcard` |     1269.5 |        +100.0 |     634.8 |         +50.0 |"),
            "{markdown}"
        );
        assert!(markdown.contains(r"- `csv` failed: cargo build failed\: error\[E0425\]"));
        let names: Vec<&str> = charts.iter().map(|chart| chart.file_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "footprint-binary-x86_64-linux.svg",
                "footprint-compile-x86_64-linux.svg"
            ]
        );
        // One size bar (postcard over the baseline), two time bars (baseline and postcard).
        assert_eq!(charts.iter().map(|chart| chart.bars).collect::<Vec<_>>(), [1, 2]);
    }
}

//! `report` and `compare` on the small hand-made results folders in tests/fixtures/reports
//! (two hosts, a truncated results.csv, a corrupt sizes.csv, a future schema version; see
//! make_fixtures.py there for the figures the assertions below rely on).

mod common;
use common::serbench;

use std::path::{Path, PathBuf};

use serbench::arm::ArmId;
use serbench::report::charts::BAR_OPACITY;
use serbench::report::compare::compare;
use serbench::report::markdown::report;
use serbench::schema::load;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reports")
        .join(name)
}

/// Parses an SVG file and counts its data bars: filled rectangles with the bar opacity.
fn svg_bars(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let document =
        roxmltree::Document::parse(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert_eq!(
        document.root_element().tag_name().name(),
        "svg",
        "{}",
        path.display()
    );
    document
        .descendants()
        .filter(|node| node.has_tag_name("rect"))
        .filter(|node| {
            node.attribute("opacity") == Some(BAR_OPACITY.to_string().as_str())
                && node.attribute("fill").is_some_and(|fill| fill != "none")
        })
        .count()
}

/// The text of every `<text>` element of an SVG file, trimmed.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let document = roxmltree::Document::parse(&text).unwrap();
    document
        .descendants()
        .filter(|node| node.has_tag_name("text"))
        .map(|node| node.text().unwrap_or_default().trim().to_string())
        .collect()
}

/// Measured arms of one payload and operation over the given folders: the bars its chart
/// must have.
fn measured_arms(dirs: &[PathBuf], payload: &str, operation: &str) -> usize {
    dirs.iter()
        .map(|dir| {
            load::load(dir)
                .unwrap()
                .ok_rows()
                .filter(|row| row.arm.codec.payload == payload && row.arm.operation.name() == operation)
                .count()
        })
        .sum()
}

#[test]
fn report_on_two_hosts_writes_the_tables_headline_and_one_bar_per_arm() {
    let dirs = [fixture("x86_64-linux"), fixture("aarch64-darwin")];
    let out = tempfile::tempdir().unwrap();
    let summary = report(&dirs, out.path()).unwrap();
    let markdown = squeeze(&std::fs::read_to_string(&summary.report).unwrap());

    // Header: each host's metadata.
    for expected in [
        "| host | ci-runner | mac-studio |",
        "| CPU | AMD EPYC 7763 64-Core Processor | Apple M2 Max |",
        "| cores | 4 | 12 |",
        "| commit | c0995a09a257 | c0995a09a257 |",
        "| profile | full | full |",
        // Strings from the files are Markdown-escaped text (they render as written).
        r"| run started | 2026-11-20T10\:00\:00Z | 2026-11-20T11\:00\:00Z |",
        "| arms | 12 measured, 1 failed | 13 measured, 0 failed |",
    ] {
        assert!(markdown.contains(expected), "missing {expected:?} in\n{markdown}");
    }
    // Headline, in the readings section: 960 / 3200 on x86_64, 780 / 2600 on aarch64, both 0.30
    // with ~2-2.5% spread.
    let readings = &markdown[markdown.find("## readings").expect("a readings section")..];
    assert!(
        readings.starts_with("## readings\n\n### readings: headline ratios"),
        "{readings}"
    );
    assert!(
        readings.contains(
            r"| Avro \(serde\_avro\_fast\) vs JSON NDJSON \(serde\_json\) | decode | `avro/serde_avro_fast` / `json/serde_json ndjson` | 0.30x [0.29, 0.31] | 0.30x [0.29, 0.31] |"
        ),
        "{markdown}"
    );
    // The report opens with the answer (the reference host's), then the contents of the rest.
    assert!(
        markdown.contains("## The answer\n\nOn x86\\_64-linux, per record:"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "| `readings` | `bincode` 800 ns | `bincode` 400 ns | `serde_avro_fast` 24.4 B | `serde_avro_fast` 13.8 B | - |"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains(" |\n\n## Contents\n\n- [The answer](#the-answer)\n- [Hosts](#hosts)\n"),
        "{markdown}"
    );
    // simd-json vs serde_json: 2000/3000 on x86_64, 2200/2400 on aarch64.
    assert!(
        markdown
            .contains("| `json/simd-json` / `json/serde_json` | 0.67x [0.64, 0.69] | 0.92x [0.89, 0.94] |")
    );
    // A known arm's figures: 3000 ns/record ± 2%, 9 reps, 3079 bytes, 180 allocations; over the
    // section's fastest arm (bincode, 800 ± 1.5%) 3.75x, unpaired (no samples.csv): log
    // half-width sqrt(0.02² + 0.015²) = 0.025; over the x86_64-linux host 0.80x, the same width.
    assert!(
        markdown.contains(
            r"| `json/serde_json` | x86\_64-linux | 3000.0 | [2940.0, 3060.0] | 2.0% | 9 | 3079 | 180 | 3.75x [3.66, 3.84] * | 1.00x |"
        ),
        "{markdown}"
    );
    assert!(markdown.contains(
        "| `json/serde_json` | aarch64-darwin | 2400.0 | [2364.0, 2436.0] | 1.5% | 9 | 3079 | 180 | 3.75x [3.67, 3.83] * | 0.80x [0.78, 0.82] |"
    ));
    assert!(markdown.contains(
        r"| `json/simd-json[copy-only]` (baseline) | x86\_64-linux | 20.0 | [19.0, 21.0] | 5.0% |"
    ));
    assert!(
        markdown.contains(r"- `csv/csv` failed on x86\_64-linux: round trip differs\: field 3 \(price\)")
    );
    // Sizes: encoded, zstd and zlib, with % of JSON.
    assert!(
        markdown.contains("| `avro/serde_avro_fast` | 1220 | 24.4 | 690 | 13.8 | 702 | 14.0 | 39.6% |"),
        "{markdown}"
    );
    assert!(markdown.contains("aarch64-darwin has no sizes.csv") || markdown.contains("has no sizes.csv"));

    // Every chart is linked from report.md, parses as SVG and has one bar per measured arm.
    let charts = out.path().join("charts");
    let mut files: Vec<String> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "order-decode.svg",
            "order-sizes.svg",
            "readings-decode.svg",
            "readings-encode.svg",
            "readings-sizes.svg"
        ]
    );
    assert_eq!(summary.charts.len(), files.len());
    for file in &files {
        assert!(
            markdown.contains(&format!("](charts/{file})")),
            "{file} is not linked"
        );
        let bars = svg_bars(&charts.join(file));
        let expected = match file.strip_suffix(".svg").unwrap().split_once('-').unwrap() {
            // Sizes: an encoded and a compressed bar per codec (5 for readings, 3 for order).
            ("readings", "sizes") => 10,
            ("order", "sizes") => 6,
            (payload, operation) => measured_arms(&dirs, payload, operation),
        };
        assert_eq!(bars, expected, "{file}");
    }
    // 7 + 7 readings decode arms; order decode: 2 on x86_64 (csv failed), 4 on aarch64.
    assert_eq!(svg_bars(&charts.join("readings-decode.svg")), 14);
    assert_eq!(svg_bars(&charts.join("order-decode.svg")), 6);
    let texts = svg_texts(&charts.join("readings-decode.svg"));
    for expected in [
        "readings decode: time per record",
        "ns per record (lower is better)",
        "x86_64-linux",
        "aarch64-darwin",
        "json/serde_json ndjson",
        "json/simd-json[copy-only]",
        "json/serde_json dynamic",
    ] {
        assert!(
            texts.iter().any(|text| text == expected),
            "no {expected:?} in {texts:?}"
        );
    }
    // One fastest mark per host panel: bincode on both, not the copy-only baseline.
    let fastest: Vec<&String> = texts.iter().filter(|text| text.contains("fastest")).collect();
    assert_eq!(fastest, ["800  fastest", "640  fastest"]);
}

#[test]
fn report_is_deterministic() {
    let dirs = [fixture("x86_64-linux"), fixture("aarch64-darwin")];
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    report(&dirs, first.path()).unwrap();
    report(&dirs, second.path()).unwrap();
    for file in [
        "report.md",
        "charts/readings-decode.svg",
        "charts/readings-sizes.svg",
    ] {
        assert_eq!(
            std::fs::read(first.path().join(file)).unwrap(),
            std::fs::read(second.path().join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn a_folder_without_sizes_csv_reports_the_section_absent() {
    let out = tempfile::tempdir().unwrap();
    let summary = report(&[fixture("aarch64-darwin")], out.path()).unwrap();
    let markdown = squeeze(&std::fs::read_to_string(&summary.report).unwrap());
    assert!(markdown.contains(r"no folder has a sizes.csv\: the sizes sections are absent"));
    assert_eq!(
        summary.absent,
        ["no folder has a sizes.csv: the sizes sections are absent"]
    );
    assert!(!markdown.contains("sizes.svg"));
    assert!(
        summary
            .charts
            .iter()
            .all(|chart| !chart.to_string_lossy().contains("sizes"))
    );
    // One host: no host column.
    assert!(markdown.contains("| `bincode/bincode` | 640.0 | [630.4, 649.6] | 1.5% | 9 | 1300 | 180 |"));
}

#[test]
fn corrupt_input_is_one_line_naming_file_and_line_and_nothing_is_written() {
    let cases = [
        (
            vec![fixture("x86_64-linux"), fixture("truncated")],
            // Its last row lacks its end: a torn write, which `run --resume` repairs.
            "truncated/results.csv:5: a torn last row (an interrupted write)",
        ),
        (
            vec![fixture("corrupt-sizes")],
            "corrupt-sizes/sizes.csv:3: field 8 (encoded_bytes): ",
        ),
        (
            vec![fixture("schema-v5")],
            "schema-v5/results.csv:2: schema version \"5\", this serbench reads version 4",
        ),
        (
            vec![fixture("no-such-folder")],
            "no-such-folder: no such results folder",
        ),
    ];
    for (dirs, expected) in cases {
        let scratch = tempfile::tempdir().unwrap();
        let out = scratch.path().join("out");
        let error = format!("{:#}", report(&dirs, &out).unwrap_err());
        assert!(error.contains(expected), "{error:?} lacks {expected:?}");
        assert!(!error.contains('\n'), "{error:?}");
        assert!(!out.exists(), "{} was created", out.display());
    }
}

#[test]
fn compare_two_hosts_per_arm_and_agreement() {
    let comparison = compare(&fixture("x86_64-linux"), &fixture("aarch64-darwin")).unwrap();
    let arm = |payload: &str, operation: &str, label: &str| {
        comparison
            .arms
            .iter()
            .find(|arm| {
                arm.key.codec.payload == payload
                    && arm.key.operation.name() == operation
                    && arm.key.label() == label
            })
            .unwrap_or_else(|| panic!("no {payload} {operation} {label}"))
    };
    let serde_json = arm("readings", "decode", "json/serde_json");
    assert!((serde_json.ratio - 0.8).abs() < 1e-12);
    assert!((serde_json.a.mean - 3000.0).abs() < 1e-9 && (serde_json.b.mean - 2400.0).abs() < 1e-9);
    assert!(!serde_json.intervals_overlap && !serde_json.b_inside_a);
    assert!((arm("readings", "decode", "json/simd-json").ratio - 1.1).abs() < 1e-12);

    let labels = |keys: &[ArmId]| keys.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(labels(&comparison.only_a), ["bincode/bincode readings encode"]);
    assert_eq!(labels(&comparison.only_b), ["postcard/postcard order decode"]);
    assert_eq!(comparison.failed.len(), 1);
    assert_eq!(comparison.failed[0].0.to_string(), "csv/csv order decode");
    assert!(comparison.failed[0].1.starts_with("A failed: round trip differs"));

    // Every B mean is 10-25% off A's, beyond every interval.
    let agreement = comparison.agreement.unwrap();
    assert_eq!(agreement.shared, 11);
    assert_eq!(
        (agreement.coverage, agreement.overlap, agreement.agreement),
        (0.0, 0.0, 0.0)
    );
    assert!((agreement.median_drift - 0.2).abs() < 1e-12);
    assert!((agreement.p95_drift - 0.25).abs() < 1e-12);
    assert!((agreement.median_half_width_a - 0.02).abs() < 1e-12);
    assert!((agreement.median_half_width_b - 0.02).abs() < 1e-12);

    let text = comparison.text(false);
    assert!(text.contains("A: x86_64-linux") && text.contains("B: aarch64-darwin"));
    assert!(text.contains("coverage: B's mean inside A's 95% CI for 0 of 11 shared arms (0.0%;"));
    assert!(text.contains("agreement (|B - A| within the 95% interval of the difference"));
    assert!(text.contains("per payload:"), "{text}");
    assert!(text.contains("drift |B/A - 1|: median 20.0%, 95th percentile 25.0%"));
    let markdown = squeeze(&comparison.markdown());
    assert!(
        markdown
            .contains("| readings | decode | `json/serde_json` | 3000.0 | ±2.0% | 2400.0 | ±1.5% | 0.800 |")
    );
}

#[test]
fn compare_a_run_with_itself_covers_every_arm() {
    let agreement = compare(&fixture("x86_64-linux"), &fixture("x86_64-linux/results.csv"))
        .unwrap()
        .agreement
        .unwrap();
    assert_eq!(agreement.shared, 12);
    assert_eq!((agreement.coverage, agreement.overlap), (1.0, 1.0));
    assert_eq!((agreement.median_drift, agreement.p95_drift), (0.0, 0.0));
}

#[test]
fn compare_refuses_a_schema_mismatch_and_corrupt_files() {
    let error = format!(
        "{:#}",
        compare(&fixture("x86_64-linux"), &fixture("schema-v5")).unwrap_err()
    );
    assert!(error.contains("schema version mismatch"), "{error}");
    assert!(
        error.contains("x86_64-linux/results.csv has version 4")
            && error.contains("schema-v5/results.csv has version 5")
    );
    let error = format!(
        "{:#}",
        compare(&fixture("truncated"), &fixture("x86_64-linux")).unwrap_err()
    );
    assert!(error.contains("truncated/results.csv:5: "), "{error}");
}

/// Needs `serbench report` and `serbench compare` wired into the CLI (src/main.rs).
#[test]
fn the_binary_reports_compares_and_refuses_corrupt_input() {
    let (x86, arm) = (fixture("x86_64-linux"), fixture("aarch64-darwin"));
    let (x86, arm) = (x86.to_str().unwrap(), arm.to_str().unwrap());
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("report");
    let output = serbench(&["report", x86, arm, "--out", out.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(out.join("report.md").is_file() && out.join("charts/readings-decode.svg").is_file());

    let output = serbench(&["compare", x86, arm]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("coverage") && stdout.contains("0.800"),
        "{stdout}"
    );

    let refused = scratch.path().join("refused");
    let truncated = fixture("truncated");
    let output = serbench(&[
        "report",
        truncated.to_str().unwrap(),
        "--out",
        refused.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("truncated/results.csv:5: "), "{stderr}");
    assert!(!refused.exists());

    let future = fixture("schema-v5");
    let output = serbench(&["compare", x86, future.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("schema version mismatch"));
}

/// The Markdown with table padding folded (runs of spaces to one), so a test names a row by
/// its cells rather than by the column widths of the whole table.
fn squeeze(markdown: &str) -> String {
    let mut text = String::with_capacity(markdown.len());
    for character in markdown.chars() {
        if !(character == ' ' && text.ends_with(' ')) {
            text.push(character);
        }
    }
    text
}

/// `ratio` ends with the verdict as a sentence: the unpaired interval where the folder kept no
/// workers (48,000 ± 2% over 40,000 ± 1.5%: 1.2 · exp(±0.025) = [1.170, 1.230]).
#[test]
fn ratio_says_its_verdict_in_a_sentence() {
    let x86 = fixture("x86_64-linux");
    let x86 = x86.to_str().unwrap();
    let ratio = |a: &str, b: &str| {
        let output = serbench(&["ratio", x86, "--payload", "readings", "--op", "decode", a, b]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        ratio("avro/serde_avro_fast", "bincode/bincode"),
        "`avro/serde_avro_fast` decodes `readings` 1.20 ± 0.03 times slower than `bincode/bincode` (95%, unpaired: no worker of this folder measured both)"
    );
    assert_eq!(
        ratio("bincode/bincode", "avro/serde_avro_fast"),
        "`bincode/bincode` decodes `readings` 1.20 ± 0.03 times faster than `avro/serde_avro_fast` (95%, unpaired: no worker of this folder measured both)"
    );
}

/// The workflow's gathering job, run as it runs there: scripts/gather-report.sh over artifact
/// folders of three hosts (tests/fixtures/hosts: this machine's quick run of `order` and the
/// aarch64 binary's under qemu-user; and the committed full run), checked against the CSVs.
#[test]
fn the_gathering_script_reports_three_hosts_with_the_emulated_one_apart() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let artifacts = work.path().join("artifacts");
    let copy = |from: &Path, name: &str| {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(artifacts.join(name))
            .status()
            .unwrap();
        assert!(status.success());
    };
    std::fs::create_dir(&artifacts).unwrap();
    for host in ["results-x86_64-linux", "results-aarch64-linux"] {
        copy(&root.join("tests/fixtures/hosts").join(host), host);
    }
    copy(
        &root.join("results/x86_64-linux"),
        "results-x86_64-linux-2026-12-01",
    );
    let gather = |out: &Path| {
        std::process::Command::new("bash")
            .arg(root.join("scripts/gather-report.sh"))
            .arg(&artifacts)
            .arg(out)
            .env("SERBENCH", env!("CARGO_BIN_EXE_serbench"))
            .output()
            .unwrap()
    };
    let out = work.path().join("gathered");
    let output = gather(&out);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    // The page names each host's folder inside it, not where the job ran.
    assert!(
        squeeze(&markdown).contains("| folder | `hosts/results-x86_64-linux` |"),
        "{markdown}"
    );
    let across = &markdown[markdown.find("## Across hosts").expect("an Across hosts section")..];
    assert!(
        squeeze(across).contains(r"aarch64-linux \(emulated\) (run by an emulator on x86\_64)"),
        "{across}"
    );

    // τ of `order` decode between the two measured folders, recomputed from their CSVs.
    let section = |folder: &str| -> std::collections::BTreeMap<ArmId, f64> {
        load::load(&out.join("hosts").join(folder))
            .unwrap()
            .ok_rows()
            .filter(|row| row.arm.codec.payload == "order" && row.arm.operation.name() == "decode")
            .filter(|row| !row.arm.is_baseline())
            .map(|row| (row.arm.clone(), row.mean_ns.unwrap() / row.records as f64))
            .collect()
    };
    let (reference, other) = (
        section("results-x86_64-linux"),
        section("results-x86_64-linux-2026-12-01"),
    );
    let pairs: Vec<(f64, f64)> = reference
        .iter()
        .filter_map(|(arm, time)| Some((*time, *other.get(arm)?)))
        .collect();
    let tau = serbench::stats::kendall_tau(&pairs).unwrap();
    let row: Vec<String> = across
        .lines()
        .find(|line| line.starts_with("| order ") && line.contains("| decode "))
        .unwrap_or_else(|| panic!("no order decode row: {across}"))
        .split('|')
        .map(|cell| cell.trim().to_string())
        .collect();
    assert_eq!(row[3], reference.len().to_string(), "{row:?}");
    assert_eq!(row[4], format!("{tau:.2}"), "{row:?}");
    assert_eq!(row.len(), 7, "one measured host beside the reference: {row:?}");

    // Sizes of one commit must match: the emulated host's changed by one byte is an error.
    let sizes = artifacts.join("results-aarch64-linux/sizes.csv");
    let text = std::fs::read_to_string(&sizes).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let column = header.iter().position(|name| *name == "encoded_bytes").unwrap();
    let mut cells: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    cells[column] = (cells[column].parse::<u64>().unwrap() + 1).to_string();
    // The codec's coordinates, to change its encoded_bytes in results.csv too (a reader checks
    // sizes.csv against it).
    let codec = |cells: &[&str], header: &[&str]| -> Vec<String> {
        ["format", "backend", "variant", "payload", "framing"]
            .iter()
            .map(|name| cells[header.iter().position(|column| column == name).unwrap()].to_string())
            .collect()
    };
    let changed = codec(&cells.iter().map(String::as_str).collect::<Vec<_>>(), &header);
    lines[1] = cells.join(",");
    std::fs::write(&sizes, lines.join("\n") + "\n").unwrap();
    let results = artifacts.join("results-aarch64-linux/results.csv");
    let text = std::fs::read_to_string(&results).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: Vec<String> = lines[0].split(',').map(str::to_string).collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let column = header.iter().position(|name| *name == "encoded_bytes").unwrap();
    for line in &mut lines[1..] {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        let ours = codec(&cells.iter().map(String::as_str).collect::<Vec<_>>(), &header);
        if ours == changed && !cells[column].is_empty() {
            cells[column] = (cells[column].parse::<u64>().unwrap() + 1).to_string();
            *line = cells.join(",");
        }
    }
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let output = gather(&work.path().join("again"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("sizes differ between hosts at one commit"),
        "{stderr}"
    );
    // A refused input leaves no OUT, and no staging folder beside it.
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "only artifacts/ and gathered/ remain: {left:?}");

    // compare across the two hosts says the shift first, and that B's was an emulator's.
    let hosts = root.join("tests/fixtures/hosts");
    let output = serbench(&[
        "compare",
        hosts.join("results-x86_64-linux").to_str().unwrap(),
        hosts.join("results-aarch64-linux").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    let sentence = text
        .find("B's host ran the 116 shared arms")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(sentence < text.find("payload").unwrap(), "{text}");
    assert!(
        text.contains("B: aarch64-linux ran under an emulator on x86_64"),
        "{text}"
    );

    // No artifacts: one line, exit 2.
    let empty = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("bash")
        .arg(root.join("scripts/gather-report.sh"))
        .arg(empty.path())
        .arg(work.path().join("none"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no results folder"));
}

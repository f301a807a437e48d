//! `serbench footprint` through the real binary: real cargo builds of the real program in fresh
//! target dirs. Two clean release builds of serbench's dependencies take minutes, so the run is
//! ignored by default: `cargo test --test footprint -- --ignored`. The refusals need no build.

use std::path::Path;
use std::process::{Command, Output};

use serbench::report::files;
use serbench::report::footprint::{BASELINE, FootprintRow};

fn serbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_source_tree_without_the_program_or_a_bad_count_is_refused_before_any_build() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let source = dir.path().to_str().unwrap();
    let refused = serbench(&["footprint", "--source", source, "--out", out.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("not serbench's source tree"),
        "{}",
        stderr(&refused)
    );
    assert!(!out.join("footprint.csv").exists());
    let runs = serbench(&["footprint", "--runs", "0"]);
    assert_eq!(runs.status.code(), Some(2), "{}", stderr(&runs));
}

#[test]
#[ignore = "two clean release builds: minutes"]
fn postcard_and_the_baseline_are_built_measured_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A folder with results: its report is written again with the footprint section.
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/x86_64-linux/results.csv");
    std::fs::copy(fixture, out.join("results.csv")).unwrap();
    let output = serbench(&[
        "footprint",
        "--format",
        "postcard",
        "--runs",
        "1",
        "--source",
        env!("CARGO_MANIFEST_DIR"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<FootprintRow> = files::read_complete(&out.join("footprint.csv")).unwrap();
    let formats: Vec<&str> = rows.iter().map(|row| row.format.as_str()).collect();
    assert_eq!(formats, [BASELINE, "postcard"]);
    for row in &rows {
        assert_eq!(row.status, "ok", "{row:?}");
        assert!(
            row.text_bytes.unwrap() > 0 && row.text_bytes < row.binary_bytes,
            "{row:?}"
        );
        assert!(row.compile_s.unwrap() > 0.0 && row.runs == 1, "{row:?}");
        assert_eq!(row.build, "portable");
    }
    // The format's code is there: its binary and its .text are larger than the baseline's.
    let postcard = &rows[1];
    assert!(postcard.binary_bytes_over_baseline.unwrap() > 0, "{postcard:?}");
    assert!(postcard.text_bytes_over_baseline.unwrap() > 0, "{postcard:?}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Footprint"), "{report}");
    assert!(out.join("charts/footprint-binary-x86_64-linux.svg").is_file());
    // A second run into the same folder is refused unless asked to replace it.
    let again = serbench(&["footprint", "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("already holds a result set (footprint.csv)"),
        "{}",
        stderr(&again)
    );
}

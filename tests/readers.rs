//! Every reader checks every column against its domain, and the files of a result set against
//! each other (issue 41): a smoke run of the real binary makes a valid folder, each test edits
//! one thing in it, and `report`, `ratio` and `compare` refuse it in one line naming the file,
//! the line and the column, with exit status 2.

mod common;
use common::{serbench, stderr};

use std::path::{Path, PathBuf};
use std::process::Output;

use serbench::schema::results::{self, ResultRow};
use serbench::schema::samples::SampleRow;

/// A valid smoke set of json and postcard on `order` in a fresh folder.
fn smoke_set() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("set");
    let output = serbench(&[
        "run",
        "--format",
        "json,postcard",
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    (dir, out)
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The three readers of a results folder, each on `out`.
fn readers(out: &Path) -> Vec<(&'static str, Output)> {
    vec![
        ("report", serbench(&["report", text(out)])),
        (
            "ratio",
            serbench(&[
                "ratio",
                text(out),
                "--payload",
                "order",
                "--op",
                "decode",
                "json/serde_json",
                "postcard/postcard",
            ]),
        ),
        ("compare", serbench(&["compare", text(out), text(out)])),
    ]
}

/// Every reader refuses `out` with exit status 2 and one line that holds each of `words`.
fn assert_every_reader_refuses(out: &Path, words: &[&str]) {
    for (command, output) in readers(out) {
        let said = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{command} accepted what it should refuse ({words:?}): {said}"
        );
        assert_eq!(said.trim_end().lines().count(), 1, "{command}: {said}");
        for word in words {
            assert!(said.contains(word), "{command}: {word:?} not in {said}");
        }
    }
}

/// The header and rows of a CSV file, as text fields.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    let mut records = reader.records().map(|record| {
        record
            .unwrap()
            .iter()
            .map(str::to_string)
            .collect::<Vec<String>>()
    });
    let header = records.next().unwrap();
    (header, records.collect())
}

fn write_csv(path: &Path, header: &[String], rows: &[Vec<String>]) {
    let mut writer = csv::Writer::from_path(path).unwrap();
    writer.write_record(header).unwrap();
    for row in rows {
        writer.write_record(row).unwrap();
    }
    writer.flush().unwrap();
}

/// Sets `column` of the first data row (line 2) of `file` to `value`.
fn set_first(path: &Path, column: &str, value: &str) {
    set_rows(path, column, value, 1);
}

/// Sets `column` of the first `count` data rows of `file` to `value`.
fn set_rows(path: &Path, column: &str, value: &str, count: usize) {
    let (header, mut rows) = read_csv(path);
    let at = header.iter().position(|name| name == column).unwrap();
    for row in rows.iter_mut().take(count) {
        row[at] = value.to_string();
    }
    write_csv(path, &header, &rows);
}

/// Defect 18, and NULs in notes (defect 20): each value outside its column's domain is refused
/// by every reader, naming results.csv, line 2 and the column. A column every row of one run
/// shares is set in every row, as a whole file of another run would have it.
#[test]
fn every_column_outside_its_domain_is_refused_with_file_line_and_column() {
    let (_dir, clean) = smoke_set();
    let every = usize::MAX;
    let cases = [
        ("profile", "ultra", every),
        ("schedule", "chaos", every),
        ("format", "Bincode", 1),
        ("backend", "Postcard", 1),
        ("payload", "Order", 1),
        ("system", "my laptop", every),
        ("encoded_bytes", "0", 1),
        ("workers", "100000000", 1),
        ("reps", "100000000", 1),
        ("timestamp", "yesterday", every),
        ("note", "a\u{0}b", 1),
        ("host", "vm\u{1b}[2K", every),
    ];
    for (column, value, rows) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("set");
        std::fs::create_dir(&out).unwrap();
        for name in ["results.csv", "sizes.csv"] {
            std::fs::copy(clean.join(name), out.join(name)).unwrap();
        }
        set_rows(&out.join("results.csv"), column, value, rows);
        let place = format!("results.csv:2: {column} ");
        assert_every_reader_refuses(&out, &[&place]);
    }
}

/// Defect 15: a samples.csv of another run beside a smoke set gave `ratio` a pairing over
/// workers the set never had.
#[test]
fn samples_of_another_run_beside_a_smoke_set_are_refused() {
    let (_dir, out) = smoke_set();
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    let samples_of = |profile: &str| -> Vec<SampleRow> {
        let mut run = rows[0].clone();
        run.profile = profile.to_string();
        rows.iter()
            .filter(|row| row.status == "ok")
            .flat_map(|row| {
                let run = &run;
                (0..8).map(move |pass| SampleRow {
                    status: "ok".into(),
                    reps: Some(3),
                    batch: Some(10),
                    mean_ns: Some(row.mean_ns.unwrap() * (1.4 + pass as f64 / 100.0)),
                    encoded_bytes: row.encoded_bytes,
                    allocs_per_op: Some(0.0),
                    alloc_bytes_per_op: Some(0.0),
                    peak_heap_bytes_per_op: Some(0.0),
                    ..SampleRow::new(run, &row.arm, row.records, pass, 0, 0.0)
                })
            })
            .collect()
    };
    let samples = out.join("samples.csv");
    std::fs::write(&samples, serbench::files::to_csv(&samples_of("full")).unwrap()).unwrap();
    assert_every_reader_refuses(
        &out,
        &[
            "samples.csv:2: profile \"full\"",
            "results.csv's rows have \"smoke\"",
        ],
    );

    // Of this run's own profile: no smoke run writes samples.csv.
    std::fs::write(&samples, serbench::files::to_csv(&samples_of("smoke")).unwrap()).unwrap();
    assert_every_reader_refuses(&out, &["samples.csv:2: profile smoke"]);
}

/// Defect 17: a sizes.csv that says 999 bytes where results.csv says otherwise is refused, naming
/// both values.
#[test]
fn sizes_that_contradict_results_are_refused_naming_both() {
    let (_dir, out) = smoke_set();
    let sizes = out.join("sizes.csv");
    let (header, rows) = read_csv(&sizes);
    let at = header.iter().position(|name| name == "encoded_bytes").unwrap();
    let ours = rows[0][at].clone();
    assert_ne!(ours, "999");
    set_first(&sizes, "encoded_bytes", "999");
    assert_every_reader_refuses(&out, &["sizes.csv:2: encoded_bytes 999", &format!("has {ours}")]);
}

/// The full profile's samples.csv of an arm the results do not hold is another run's.
#[test]
fn a_sample_of_an_arm_without_a_row_is_refused() {
    let (_dir, out) = smoke_set();
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    // A full set of one arm made from the smoke rows: two workers each.
    let mut full: Vec<ResultRow> = Vec::new();
    let mut samples: Vec<SampleRow> = Vec::new();
    for row in rows.iter().filter(|row| row.status == "ok").take(2) {
        let mut row = row.clone();
        row.profile = "full".into();
        let mean = row.mean_ns.unwrap();
        let (reps, workers) = (6, 2);
        row.reps = Some(reps);
        row.workers = Some(workers);
        row.ci95_low_ns = Some(mean * 0.9);
        row.ci95_high_ns = Some(mean * 1.1);
        for pass in 0..workers {
            samples.push(SampleRow {
                status: "ok".into(),
                reps: Some(reps / workers),
                batch: row.batch,
                mean_ns: Some(mean),
                encoded_bytes: row.encoded_bytes,
                allocs_per_op: Some(0.0),
                alloc_bytes_per_op: Some(0.0),
                peak_heap_bytes_per_op: Some(0.0),
                ..SampleRow::new(&row, &row.arm, row.records, pass, 0, 0.0)
            });
        }
        full.push(row);
    }
    std::fs::remove_file(out.join("sizes.csv")).unwrap();
    std::fs::write(
        out.join("results.csv"),
        serbench::files::to_csv(&full[..1]).unwrap(),
    )
    .unwrap();
    std::fs::write(
        out.join("samples.csv"),
        serbench::files::to_csv(&samples).unwrap(),
    )
    .unwrap();
    assert_every_reader_refuses(&out, &["samples.csv:4: a worker's sample of"]);
    // With both rows, the same files are one set.
    std::fs::write(out.join("results.csv"), serbench::files::to_csv(&full).unwrap()).unwrap();
    let output = serbench(&["report", text(&out)]);
    assert!(output.status.success(), "{}", stderr(&output));
}

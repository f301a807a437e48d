//! The harness under faults, through the real binary: a killed run keeps its rows and
//! `--resume` completes it without duplicates; bad output folders fail before measuring.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serbench::schema::results::{self, ResultRow};

fn serbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_serbench"))
}

fn data_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// A format that carries every payload, with the fewest arms: many blocks, short run.
fn format_with_many_blocks() -> String {
    let listing = serbench().args(["list", "--json"]).output().unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    let arms = listing["arms"].as_array().unwrap();
    let payloads = listing["payloads"].as_array().unwrap().len();
    listing["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|format| format["name"].as_str().unwrap().to_string())
        .filter(|name| {
            let mut covered: Vec<&str> = arms
                .iter()
                .filter(|arm| arm["format"] == name.as_str())
                .map(|arm| arm["payload"].as_str().unwrap())
                .collect();
            covered.dedup();
            covered.len() == payloads
        })
        .min_by_key(|name| arms.iter().filter(|arm| arm["format"] == name.as_str()).count())
        .expect("a format that carries every payload")
}

#[test]
fn a_killed_run_keeps_its_rows_and_resume_adds_only_the_missing_arms() {
    let format = format_with_many_blocks();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let csv = dir.path().join("results.csv");
    let args = [
        "run",
        "--format",
        &format,
        "--op",
        "decode",
        "--profile",
        "smoke",
        "--out",
        out,
    ];

    let mut child = serbench()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while data_lines(&csv).len() < 2 {
        assert!(Instant::now() < deadline, "no rows appeared");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run finished before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before_kill = data_lines(&csv);
    let rows: Vec<ResultRow> = results::read(&csv).unwrap();
    assert_eq!(
        rows.len(),
        before_kill.len(),
        "every row written before the kill parses"
    );

    let resumed = serbench().args(args).arg("--resume").output().unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let after = data_lines(&csv);
    assert_eq!(
        &after[..before_kill.len()],
        &before_kill[..],
        "rows before the kill are intact"
    );

    let rows: Vec<ResultRow> = results::read(&csv).unwrap();
    let mut keys: Vec<String> = rows.iter().map(|row| row.arm.to_string()).collect();
    let total = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), total, "no arm recorded twice");
    let listing = serbench()
        .args(["list", "--json", "--format", &format])
        .output()
        .unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    let expected = listing["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|arm| arm["operation"] == "decode")
        .count();
    assert_eq!(total, expected, "the resumed run completed the selection");
    assert!(
        rows.len() > before_kill.len(),
        "the resumed run added the missing arms"
    );
}

#[test]
fn a_hand_edited_invalid_results_file_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("results.csv");
    // A valid header and first row, then a row whose number was edited into text.
    let format = format_with_many_blocks();
    let args = [
        "run",
        "--format",
        &format,
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
    ];
    let ok = serbench().args(args).arg(dir.path()).output().unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    let mut lines: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(lines.len() >= 3);
    lines[2] = lines[2].replacen(",1,", ",one,", 1);
    let edited = lines.join("\n") + "\n";
    std::fs::write(&csv, &edited).unwrap();
    for resume in [false, true] {
        let mut command = serbench();
        command.args(args).arg(dir.path());
        if resume {
            command.arg("--resume");
        }
        let output = command.output().unwrap();
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{message}");
        assert!(message.contains(&format!("{}:3", csv.display())), "{message}");
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            edited,
            "the file was touched"
        );
    }
}

/// (A full disk is tested in tests/files.rs, on a real full file system.)
#[test]
fn an_unwritable_output_fails_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let started = Instant::now();
    let output = serbench()
        .args(["run", "--profile", "full", "--out"])
        .arg(file.join("out"))
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("cannot create the output folder"), "{message}");
    assert_eq!(message.lines().count(), 1, "one readable line: {message}");
    // A full profile over every arm takes minutes: failing in seconds proves nothing was measured.
    assert!(started.elapsed() < Duration::from_secs(30));
}

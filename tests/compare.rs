//! Drives the real `serbench` binary on small result sets it ran itself: `compare`'s per-ratio
//! agreement, and `report --history`'s prediction intervals and refusals.

mod common;
use common::{serbench, stderr};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The selection every set here measures: two formats (so the run compares each with each) on
/// `order` decode.
const SELECTION: [&str; 10] = [
    "--format",
    "json,postcard",
    "--backend",
    "serde_json,postcard",
    "--payload",
    "order",
    "--op",
    "decode",
    "--profile",
    "smoke",
];

/// `serbench run` of [`SELECTION`] into `out`, its commit stamped `commit` when given.
fn run(out: &Path, commit: Option<&str>) -> PathBuf {
    let mut command = Command::new(env!("CARGO_BIN_EXE_serbench"));
    command.arg("run").args(SELECTION).arg("--out").arg(out);
    if let Some(commit) = commit {
        command.env("SERBENCH_COMMIT", commit);
    }
    let output = command.output().expect("serbench runs");
    assert!(output.status.success(), "{}", stderr(&output));
    out.to_path_buf()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn compare_judges_ratios_and_report_predicts_reruns_from_history() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b, c] = ["a", "b", "c"].map(|name| run(&dir.path().join(name), None));

    // compare: the ratios both runs hold, judged one by one, summed up in one line.
    let output = serbench(&["compare", arg(&a), arg(&b)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = text(&output);
    let line = printed
        .lines()
        .find(|line| line.starts_with("ratios: "))
        .unwrap_or_else(|| panic!("no ratio line: {printed}"));
    assert!(
        line.contains(" agree (")
            && line.contains("calibrated intervals give about 95%); median half-width A ±"),
        "{line}"
    );
    let verbose = text(&serbench(&["compare", arg(&a), arg(&b), "--verbose"]));
    assert!(
        verbose.contains("json/serde_json / postcard/postcard"),
        "every ratio listed: {verbose}"
    );
    let markdown = text(&serbench(&["compare", arg(&a), arg(&b), "--markdown"]));
    assert!(markdown.contains("## Ratios\n\nratios: "), "{markdown}");

    // report --history: the spread line, and report.md's prediction intervals.
    let output = serbench(&["report", arg(&a), "--history", arg(&b), arg(&c)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = text(&output);
    assert!(
        printed.starts_with("session spread: σ_s = ") && printed.contains("from 2 history sets of host "),
        "{printed}"
    );
    let report = std::fs::read_to_string(a.join("report.md")).unwrap();
    let section = &report[report
        .find("\n## Later runs: prediction intervals\n")
        .unwrap_or_else(|| panic!("no section: {report}"))..];
    assert!(
        section.contains("95% prediction interval |")
            && section.contains("`json/serde_json` / `postcard/postcard`"),
        "{section}"
    );

    // Refusals, one line each, exit 2, nothing rewritten.
    let other = run(&dir.path().join("other"), Some("0123456789ab"));
    for (args, expected) in [
        (
            vec!["report", arg(&a), "--history", arg(&b), arg(&other)],
            "other/results.csv: commit \"0123456789ab\", where ",
        ),
        (
            vec!["report", arg(&a), "--history", arg(&b)],
            "--history takes at least 2 earlier result sets",
        ),
    ] {
        let output = serbench(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(
            message.contains(expected) && message.trim().lines().count() == 1,
            "{args:?}: {message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(a.join("report.md")).unwrap(),
        report,
        "a refused report writes nothing"
    );
}

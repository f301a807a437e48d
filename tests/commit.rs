//! The commit every result row carries: one id for one commit (12 hex digits of HEAD, `-dirty`
//! for uncommitted changes, as nix/commit.nix gives a flake build), and a run-time
//! SERBENCH_COMMIT (the flake's wrapper) stamped on the same binary without rebuilding it.

use std::path::Path;
use std::process::Command;

/// The commit column of the rows a one-payload, one-format run writes.
fn commits_of_a_run(commit_variable: Option<&str>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_serbench"));
    command.args([
        "run",
        "--profile",
        "smoke",
        "--payload",
        "order",
        "--format",
        "postcard",
    ]);
    command.arg("--out").arg(dir.path());
    command.env_remove("SERBENCH_COMMIT");
    if let Some(commit) = commit_variable {
        command.env("SERBENCH_COMMIT", commit);
    }
    let output = command.output().expect("serbench runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = serbench::schema::results::read(&dir.path().join("results.csv")).unwrap();
    assert!(!rows.is_empty());
    rows.into_iter().map(|row| row.host.commit).collect()
}

fn git_head() -> Option<String> {
    let output = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[test]
fn a_cargo_build_stamps_the_first_12_hex_digits_of_head() {
    // A Nix build has no git checkout: its binary says `unknown` and its wrapper sets the commit.
    let Some(head) = git_head().filter(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists())
    else {
        eprintln!("no git checkout: the compiled-in commit is not checked here");
        return;
    };
    let short = &head[..12];
    for commit in commits_of_a_run(None) {
        assert!(
            commit == short || commit == format!("{short}-dirty"),
            "the binary says commit {commit:?}, git HEAD is {head}"
        );
    }
}

#[test]
fn a_run_time_commit_is_stamped_on_every_row() {
    let commits = commits_of_a_run(Some("feedfacecafe-dirty"));
    assert!(
        commits.iter().all(|commit| commit == "feedfacecafe-dirty"),
        "{commits:?}"
    );
}

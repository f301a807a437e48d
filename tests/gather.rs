//! scripts/gather-report.sh, the workflow's gathering job, run with the real binary on a copy
//! of a fixture host folder: what it publishes is regular files only, every artifact it leaves
//! out is named with the reason, and bad arguments are refused in one line before any work.
//! (tests/report.rs checks the report it makes of three hosts.)

mod common;
use common::{output_within, stderr};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `scripts/gather-report.sh ARTIFACTS OUT` with this build's serbench, run in `cwd`; killed
/// after two minutes (the old script read a FIFO forever).
fn gather(cwd: &Path, artifacts: &Path, out: &str) -> Output {
    let mut command = Command::new("bash");
    command
        .arg(root().join("scripts/gather-report.sh"))
        .arg(artifacts)
        .arg(out)
        .current_dir(cwd)
        .env("SERBENCH", env!("CARGO_BIN_EXE_serbench"));
    output_within(command, Duration::from_secs(120))
        .expect("the gathering script still ran after two minutes")
}

/// A copy of one fixture host folder (regular files) at `to`.
fn host_folder(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let from = root().join("tests/fixtures/hosts/results-x86_64-linux");
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every path under `dir` that is neither a regular file nor a folder (not following links).
fn not_regular(dir: &Path) -> Vec<PathBuf> {
    let mut odd = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(entry.path());
            } else if !kind.is_file() {
                odd.push(entry.path());
            }
        }
    }
    odd
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(
        unsafe { libc::mkfifo(name.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// A host folder holding links to /etc/passwd and to a file outside ARTIFACTS, and a FIFO: the
/// report is made, OUT holds none of them, and stderr names each.
#[test]
fn the_gathering_script_publishes_regular_files_only() {
    let work = tempfile::tempdir().unwrap();
    let artifacts = work.path().join("artifacts");
    let host = artifacts.join("results-x86_64-linux");
    host_folder(&host);
    std::fs::write(work.path().join("secret"), "outside ARTIFACTS\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", host.join("passwd")).unwrap();
    std::os::unix::fs::symlink("../../secret", host.join("secret")).unwrap();
    std::fs::create_dir(host.join("charts")).unwrap();
    std::os::unix::fs::symlink("/etc", host.join("charts/etc")).unwrap();
    mkfifo(&host.join("fifo"));

    let output = gather(work.path(), &artifacts, "gathered");
    let message = stderr(&output);
    assert!(output.status.success(), "{message}");
    let out = work.path().join("gathered");
    assert!(out.join("report.md").is_file());
    let copied = out.join("hosts/results-x86_64-linux");
    assert!(copied.join("results.csv").is_file());
    assert_eq!(not_regular(&out), Vec::<PathBuf>::new());
    for (name, why) in [
        ("passwd", "a symbolic link, not copied"),
        ("secret", "a symbolic link, not copied"),
        ("charts/etc", "a symbolic link, not copied"),
        ("fifo", "not a regular file"),
    ] {
        assert!(
            std::fs::symlink_metadata(copied.join(name)).is_err(),
            "{name} copied"
        );
        assert!(
            message.contains(&format!("skipped results-x86_64-linux/{name}: {why}")),
            "{name}: {message}"
        );
    }
}

/// Artifacts that are not results folders are each named with the reason (the old script
/// dropped them silently, and split a name at its newline); the others are gathered. When none
/// is left: exit 2.
#[test]
fn the_gathering_script_names_every_artifact_it_skips() {
    let work = tempfile::tempdir().unwrap();
    let artifacts = work.path().join("artifacts");
    host_folder(&artifacts.join("results-x86_64-linux"));
    host_folder(&artifacts.join("results-new\nline"));
    std::os::unix::fs::symlink("results-x86_64-linux", artifacts.join("results-linked")).unwrap();
    host_folder(&artifacts.join("results-csv-folder"));
    std::fs::remove_file(artifacts.join("results-csv-folder/results.csv")).unwrap();
    std::fs::create_dir(artifacts.join("results-csv-folder/results.csv")).unwrap();
    std::fs::create_dir(artifacts.join("results-empty")).unwrap();

    let output = gather(work.path(), &artifacts, "gathered");
    let message = stderr(&output);
    assert!(output.status.success(), "{message}");
    for line in [
        r"skipped $'results-new\nline': its name holds a control character",
        "skipped results-linked: a symbolic link, not followed",
        "skipped results-csv-folder: its results.csv is not a regular file",
        "skipped results-empty: no results.csv",
    ] {
        assert!(message.contains(line), "{line}: {message}");
    }
    assert_eq!(
        names(&work.path().join("gathered/hosts")),
        ["results-x86_64-linux"]
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("skipped 4 (named above)"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );

    // None left: one refusal after the names, and no OUT.
    std::fs::remove_dir_all(artifacts.join("results-x86_64-linux")).unwrap();
    let output = gather(work.path(), &artifacts, "none");
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("skipped results-linked: a symbolic link"),
        "{message}"
    );
    assert!(
        message
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("no results folder"),
        "{message}"
    );
    assert!(!work.path().join("none").exists());
}

/// Bad arguments: exit 2, one line, before any work (nothing printed on stdout, nothing made).
#[test]
fn the_gathering_script_refuses_bad_arguments_before_working() {
    let work = tempfile::tempdir().unwrap();
    let artifacts = work.path().join("artifacts");
    host_folder(&artifacts.join("results-x86_64-linux"));
    std::fs::create_dir(work.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("elsewhere", work.path().join("linked")).unwrap();
    std::fs::write(work.path().join("empty-file"), "").unwrap();
    std::fs::create_dir(work.path().join("full")).unwrap();
    std::fs::write(work.path().join("full/kept"), "").unwrap();
    std::os::unix::fs::symlink("artifacts", work.path().join("artifacts-link")).unwrap();
    let before = names(work.path());

    for (artifacts, out, why) in [
        ("artifacts", "", "OUT is empty"),
        ("artifacts", "linked", "linked is a symbolic link"),
        ("artifacts", "empty-file", "empty-file is a file, not a folder"),
        ("artifacts", "full", "full is not empty"),
        ("artifacts", "empty-file/out", "empty-file is not a folder"),
        ("artifacts-link", "out", "artifacts-link is a symbolic link"),
        ("empty-file", "out", "empty-file is not a folder"),
        ("", "out", "ARTIFACTS is empty"),
    ] {
        let output = gather(work.path(), Path::new(artifacts), out);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{artifacts:?} {out:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{artifacts:?} {out:?}: {message}");
        assert!(message.contains(why), "{artifacts:?} {out:?}: {message}");
        assert!(
            output.stdout.is_empty(),
            "{artifacts:?} {out:?}: worked before refusing"
        );
        assert_eq!(names(work.path()), before, "{artifacts:?} {out:?}");
        assert!(names(&work.path().join("elsewhere")).is_empty());
    }

    // An empty OUT folder is taken.
    std::fs::create_dir(work.path().join("ready")).unwrap();
    let output = gather(work.path(), &artifacts, "ready");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(work.path().join("ready/report.md").is_file());
}

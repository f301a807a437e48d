//! What serbench promises about a user's files, one test per promise, through the real binary
//! on small selections (the smoke profile): everything validated before anything is written, a
//! result set never replaced unless asked and then kept, resume extends without duplicates, a
//! torn row repaired, a full disk losing nothing, one writer per folder, readers that refuse bad
//! numbers at once, a closed stdout ending quietly, numeric options checked before any work.

mod common;
use common::{output_within, stderr};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serbench::files::{self, LOCK_FILE};
use serbench::schema::results::{self, ResultRow};
use serbench::schema::sizes::SizeRow;

fn serbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_serbench"))
}

fn run(args: &[&str]) -> Output {
    serbench().args(args).output().expect("serbench runs")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `run --format postcard --payload P... --profile smoke --out OUT` plus `extra`.
fn smoke(out: &Path, payloads: &[&str], extra: &[&str]) -> Output {
    profiled("smoke", out, payloads, extra)
}

/// [`smoke`] with another profile.
fn profiled(profile: &str, out: &Path, payloads: &[&str], extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--format",
        "postcard",
        "--profile",
        profile,
        "--out",
        text(out),
    ];
    for payload in payloads {
        args.extend(["--payload", payload]);
    }
    args.extend(extra);
    run(&args)
}

/// A folder holding a finished smoke run of postcard on `order`.
fn finished_run(out: &Path) {
    let output = smoke(out, &["order"], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A temporary folder with [`finished_run`] in its `out`, and that results.csv.
fn with_a_run() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    finished_run(&out);
    let csv = out.join("results.csv");
    (dir, out, csv)
}

/// Every file under `dir` with its bytes: "no file changed" is the same snapshot before and
/// after.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Sets `column` of data row `row` (0-based; `None`: every row) of a CSV file to `value`.
fn edit(path: &Path, row: Option<usize>, column: &str, value: &str) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let index = header.iter().position(|name| name == column).unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut writer = csv::Writer::from_path(path).unwrap();
    writer.write_record(&header).unwrap();
    for (number, record) in records.iter().enumerate() {
        let mut fields: Vec<&str> = record.iter().collect();
        if row.is_none_or(|row| row == number) {
            fields[index] = value;
        }
        writer.write_record(fields).unwrap();
    }
    writer.flush().unwrap();
}

/// The arms of a results.csv as `payload operation label` keys, checking there is no duplicate.
/// Each arm of a results.csv as `payload operation label`, sorted; an arm twice fails.
fn arms(path: &Path) -> Vec<String> {
    let rows: Vec<ResultRow> = results::read(path).unwrap();
    let mut keys: Vec<String> = rows
        .iter()
        .map(|row| {
            let arm = &row.arm;
            format!("{} {} {}", arm.codec.payload, arm.operation.name(), arm.label())
        })
        .collect();
    let total = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), total, "an arm recorded twice in {}", path.display());
    keys
}

/// Asserts a refusal: exit 2, one line on stderr containing `expected`.
fn assert_refused(output: &Output, expected: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    assert_eq!(message.trim_end().lines().count(), 1, "one line: {message}");
}

#[test]
fn everything_is_validated_before_anything_is_written() {
    let (_dir, out, csv) = with_a_run();
    let before = snapshot(&out);

    // An empty selection, for every command that writes (also without --resume: that run would
    // otherwise start the folder's set anew).
    let no_csv_telemetry = ["--format", "csv", "--payload", "telemetry", "--out", text(&out)];
    for (command, refusal) in [
        ("run", "the selection matches no arm"),
        ("sizes", "the selection matches no codec"),
        ("robustness", "no decoder matches the selection"),
    ] {
        assert_refused(&run(&[&[command][..], &no_csv_telemetry].concat()), refusal);
    }
    // CSV text has no in-place access (JSON does: sonic-rs's lazy access).
    let csv_access = [
        "run",
        "--format",
        "csv",
        "--op",
        "access-all",
        "--out",
        text(&out),
    ];
    assert_refused(&run(&csv_access), "the selection matches no arm");
    assert_refused(
        &run(&[&csv_access[..], &["--resume"]].concat()),
        "the selection matches no arm",
    );
    assert_eq!(snapshot(&out), before, "an empty selection changed a file");

    // Columns in another order: refused by the writer that would extend it and by the reader.
    let original = std::fs::read_to_string(&csv).unwrap();
    let swapped = original.replacen("schema_version,host,system", "schema_version,system,host", 1);
    std::fs::write(&csv, &swapped).unwrap();
    let before = snapshot(&out);
    assert_refused(
        &smoke(&out, &["order"], &["--resume"]),
        "results.csv:1: not this serbench's header",
    );
    assert_refused(
        &run(&["report", text(&out)]),
        "results.csv:1: not this serbench's header",
    );
    assert_eq!(snapshot(&out), before, "a bad header changed a file");

    // Numbers out of range, in a row that otherwise parses.
    for (column, value) in [
        ("mean_ns", "inf"),
        ("mean_ns", "NaN"),
        ("mean_ns", "-5"),
        ("ns_per_record", "1e308"),
        ("ci95_high_ns", "0.5"),
        ("records", "0"),
    ] {
        std::fs::write(&csv, &original).unwrap();
        edit(&csv, Some(0), column, value);
        let before = snapshot(&out);
        let output = smoke(&out, &["order", "readings"], &["--resume"]);
        assert_refused(&output, &format!("{}:2: ", csv.display()));
        assert_eq!(snapshot(&out), before, "{column} {value}: a file changed");
    }
}

#[test]
fn a_result_set_is_replaced_only_when_asked_and_then_kept() {
    let (_dir, out, csv) = with_a_run();
    let before = snapshot(&out);
    let old_results = std::fs::read(&csv).unwrap();

    let refused = smoke(&out, &["readings"], &[]);
    assert_refused(&refused, "already holds a result set");
    for choice in ["--resume", "--replace", "another --out"] {
        assert!(stderr(&refused).contains(choice), "{}", stderr(&refused));
    }
    assert_eq!(snapshot(&out), before, "a refused run changed a file");
    // A chart of no run at all: replacing must not leave it either.
    std::fs::write(out.join("charts/stale.svg"), "<svg/>").unwrap();

    let replaced = smoke(&out, &["readings"], &["--replace"]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
    let moved: Vec<PathBuf> = std::fs::read_dir(out.join("replaced"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(std::fs::read(moved[0].join("results.csv")).unwrap(), old_results);
    assert!(moved[0].join("charts/order-decode.svg").is_file());

    // Every derived file describes the new results.csv, and only it.
    assert!(
        arms(&out.join("results.csv"))
            .iter()
            .all(|arm| arm.starts_with("readings "))
    );
    let sizes: Vec<SizeRow> = files::read_complete(&out.join("sizes.csv")).unwrap();
    assert!(!sizes.is_empty() && sizes.iter().all(|row| row.codec.payload == "readings"));
    let charts: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !charts.is_empty() && charts.iter().all(|name| name.starts_with("readings-")),
        "{charts:?}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## readings") && !report.contains("## order"));

    // `report` rewrites its own charts whole, and refuses a chart it did not write (#41).
    let output = run(&["report", text(&out)]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(out.join("charts/stale.svg"), "<svg/>").unwrap();
    assert_refused(&run(&["report", text(&out)]), "charts/stale.svg");
    assert!(out.join("charts/stale.svg").is_file());
}

#[test]
fn resume_refuses_another_set_and_extends_its_own_without_duplicates() {
    let (_dir, out, csv) = with_a_run();
    let before = snapshot(&out);
    for (output, reason) in [
        (
            profiled("quick", &out, &["order"], &["--resume"]),
            "profile \"smoke\"",
        ),
        (
            smoke(&out, &["order"], &["--resume", "--burst"]),
            "schedule \"interleaved\"",
        ),
    ] {
        assert_refused(&output, "cannot resume a set of ");
        assert!(stderr(&output).contains(reason), "{}", stderr(&output));
        assert_eq!(snapshot(&out), before);
    }
    let original = std::fs::read_to_string(&csv).unwrap();
    edit(&csv, None, "commit", "0123456789ab");
    let foreign = snapshot(&out);
    assert_refused(
        &smoke(&out, &["order"], &["--resume"]),
        "cannot resume a set of commit \"0123456789ab\"",
    );
    assert_eq!(snapshot(&out), foreign);
    // Another build (compiled for another CPU) is another set too.
    std::fs::write(&csv, &original).unwrap();
    edit(&csv, None, "build", "target-cpu=z80");
    let other_build = snapshot(&out);
    assert_refused(
        &smoke(&out, &["order"], &["--resume"]),
        "cannot resume a set of build \"target-cpu=z80\"",
    );
    assert_eq!(snapshot(&out), other_build);

    // The same set: extended by the arms it lacks, each once, the old rows as they were; a
    // failed arm is measured again.
    std::fs::write(&csv, &original).unwrap();
    edit(&csv, Some(1), "status", "failed");
    for column in [
        "encoded_bytes",
        "reps",
        "batch",
        "mean_ns",
        "ci95_low_ns",
        "ci95_high_ns",
        "ns_per_record",
        "records_per_s",
        "mb_per_s",
        "allocs_per_op",
        "alloc_bytes_per_op",
    ] {
        edit(&csv, Some(1), column, "");
    }
    let with_failure = std::fs::read_to_string(&csv).unwrap();
    let resumed = smoke(&out, &["order", "readings"], &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("1 of them failed before (resume retries failed arms)"),
        "{}",
        stderr(&resumed)
    );
    let rows: Vec<ResultRow> = results::read(&csv).unwrap();
    assert!(rows.iter().all(|row| row.status == "ok"), "{rows:?}");
    let after = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = with_failure
        .lines()
        .enumerate()
        .filter(|(line, _)| *line != 2)
        .map(|(_, line)| line)
        .collect();
    assert_eq!(&after.lines().collect::<Vec<_>>()[..kept.len()], &kept[..]);
    let keys = arms(&csv);
    assert!(
        keys.iter().any(|arm| arm.starts_with("order "))
            && keys.iter().any(|arm| arm.starts_with("readings "))
    );

    // Nothing left to run: nothing added.
    let again = smoke(&out, &["order", "readings"], &["--resume"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(arms(&csv), keys);
}

#[test]
fn a_torn_last_row_is_reported_dropped_and_measured_again() {
    let (_dir, out, csv) = with_a_run();
    let complete = arms(&csv);
    let bytes = std::fs::read(&csv).unwrap();
    std::fs::write(&csv, &bytes[..bytes.len() - 40]).unwrap();

    assert_refused(&run(&["report", text(&out)]), "a torn last row");
    let resumed = smoke(&out, &["order"], &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let message = stderr(&resumed);
    assert!(
        // postcard's four arms of `order` (encode, decode, borrowed decode, round-trip): the last is line 5.
        message.contains(&format!("{}:5: a torn last row", csv.display())),
        "{message}"
    );
    assert!(std::fs::read(&csv).unwrap().ends_with(b"\n"));
    assert_eq!(arms(&csv), complete);
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `None` (with the reason printed) where the test cannot mount one: not root, or no
    /// permission to mount.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let uid = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", text(dir)])
            .output()
            .ok()?;
        if !mounted.status.success() {
            eprintln!("skipped: cannot mount a tmpfs: {}", stderr(&mounted).trim());
            return None;
        }
        Some(Tmpfs(dir.to_path_buf()))
    }

    /// Fills the file system with 4 KiB files, then frees `pages` of them.
    fn fill_leaving(&self, pages: usize) -> Vec<PathBuf> {
        let mut fillers = Vec::new();
        loop {
            let path = self.0.join(format!("filler-{}", fillers.len()));
            match std::fs::write(&path, [0u8; 4096]) {
                Ok(()) => fillers.push(path),
                Err(_) => {
                    let _ = std::fs::remove_file(&path);
                    break;
                }
            }
        }
        for path in fillers.drain(fillers.len().saturating_sub(pages)..) {
            std::fs::remove_file(path).unwrap();
        }
        fillers
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A failure for want of space: exit 1, saying so.
fn assert_disk_full(output: &Output) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("No space left on device"), "{message}");
}

fn free(fillers: Vec<PathBuf>) {
    fillers
        .into_iter()
        .for_each(|path| std::fs::remove_file(path).unwrap());
}

#[test]
fn a_full_disk_loses_and_tears_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), "512k") else {
        return;
    };
    let out = disk.0.join("out");

    // Full at the start: refused before measuring, and no empty results.csv left behind.
    let fillers = disk.fill_leaving(0);
    let output = smoke(&out, &[], &[]);
    assert_disk_full(&output);
    assert!(!out.join("results.csv").exists());
    free(fillers);

    // Full in the middle: the run fails, its file holds whole rows only, and resume completes it.
    let fillers = disk.fill_leaving(2);
    let output = smoke(&out, &[], &[]);
    assert_disk_full(&output);
    let csv = out.join("results.csv");
    assert!(
        std::fs::read(&csv).unwrap().ends_with(b"\n"),
        "a torn row was left"
    );
    let partial = arms(&csv);
    assert!(!partial.is_empty());
    free(fillers);
    let resumed = smoke(&out, &[], &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let all = arms(&csv);
    assert!(all.len() > partial.len() && partial.iter().all(|arm| all.contains(arm)));

    // A report that no longer fits: the previous one stays whole.
    std::fs::remove_dir_all(out.join("charts")).unwrap();
    let before = snapshot(&out);
    disk.fill_leaving(2);
    let output = run(&["report", text(&out)]);
    assert_disk_full(&output);
    assert_eq!(snapshot(&out), before, "a failed report changed the previous one");
}

/// A process killed (and reaped) when dropped, also when a test fails.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A long robustness run holding `out`'s lock.
fn lock_holder(out: &Path) -> Running {
    let holder = Running(
        serbench()
            .args(["robustness", "--format", "postcard", "--payload", "order"])
            .args(["--cases", "200000", "--out", text(out)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // The holder writes its process id into the lock file once it holds the lock (a probe
        // taking the lock itself could steal it from the holder).
        let pid = std::fs::read_to_string(out.join(LOCK_FILE)).unwrap_or_default();
        if pid.trim() == holder.0.id().to_string() {
            return holder;
        }
        assert!(
            Instant::now() < deadline,
            "the robustness run never took its lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_writer_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut holder = lock_holder(&out);
    let pid = holder.0.id();
    let path = text(&out);
    let results_csv = text(&out.join("results.csv")).to_string();
    let run_order = [
        "run",
        "--format",
        "postcard",
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
        path,
    ];
    let one_case = [
        "--format",
        "postcard",
        "--payload",
        "order",
        "--cases",
        "1",
        "--out",
        path,
    ];
    for args in [
        run_order.to_vec(),
        [&run_order[..], &["--resume"]].concat(),
        vec!["sizes", "--format", "postcard", "--out", path],
        [&["robustness"][..], &one_case].concat(),
        vec!["report", path],
        // A file written outside a result set waits its turn as well.
        vec![
            "dump",
            "--format",
            "postcard",
            "--payload",
            "order",
            "-o",
            &results_csv,
        ],
    ] {
        let started = Instant::now();
        let output = run(&args);
        assert_refused(&output, &format!("is in use by another serbench (process {pid})"));
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?} waited");
    }
    assert!(
        holder.0.try_wait().unwrap().is_none(),
        "the holder ended: nothing was proven"
    );
    assert!(!out.join("results.csv").exists() && !out.join("sizes.csv").exists());
    drop(holder);
    // A killed writer's lock is gone with it.
    finished_run(&out);
}

#[test]
fn readers_refuse_numbers_out_of_range_within_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    finished_run(&good);
    let bad = dir.path().join("bad");
    for (columns, value) in [
        (
            &["mean_ns", "ns_per_record", "ci95_low_ns", "ci95_high_ns"][..],
            "inf",
        ),
        (
            &["mean_ns", "ns_per_record", "ci95_low_ns", "ci95_high_ns"],
            "1e308",
        ),
        (&["mean_ns", "ns_per_record"], "NaN"),
        (&["mean_ns", "ns_per_record", "ci95_low_ns"], "-5"),
        // In range, but no mean ± half-width: the report drew [-1e15, 132] and "±7.6e12%".
        (&["ci95_low_ns"], "-1e15"),
        (&["records"], "0"),
    ] {
        let _ = std::fs::remove_dir_all(&bad);
        std::fs::create_dir(&bad).unwrap();
        std::fs::copy(good.join("results.csv"), bad.join("results.csv")).unwrap();
        for column in columns {
            edit(&bad.join("results.csv"), Some(0), column, value);
        }
        let report_out = dir.path().join("report");
        for args in [
            &["report", text(&bad), "--out", text(&report_out)][..],
            &["compare", text(&good), text(&bad)],
            &["fidelity", text(&bad), "--criterion", text(dir.path())],
        ] {
            let mut command = serbench();
            command.args(args);
            let output = output_within(command, Duration::from_secs(10))
                .unwrap_or_else(|| panic!("{args:?} with {columns:?} {value} ran for 10 s"));
            assert_refused(&output, &format!("{}:2: ", bad.join("results.csv").display()));
        }
        assert!(
            !report_out.exists(),
            "a refused report wrote {}",
            report_out.display()
        );
    }
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    for args in [&["list"][..], &["dump", "--payload", "vec-big", "--logical"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = serbench()
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}

#[test]
fn numeric_options_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (flag, value, range) in [
        ("--cases", "0", "1..=1000000000"),
        ("--cases", "1000000001", "1..=1000000000"),
        ("--alloc-cap-mib", "0", "1..=1048576"),
        ("--alloc-cap-mib", "1048577", "1..=1048576"),
        ("--case-timeout", "0", "1..=86400"),
        ("--case-timeout", "86401", "1..=86400"),
        ("--seed", "0x", "0x-hex"),
        ("--seed", "-1", "0x-hex"),
    ] {
        let output = run(&["robustness", &format!("{flag}={value}"), "--out", text(&out)]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{flag} {value}: {message}");
        assert!(message.contains(range), "{flag} {value}: {message}");
        assert!(!out.exists(), "{flag} {value} created the folder");
    }
    // docs/commands.md's own spelling of the default seed.
    let output = run(&[
        "robustness",
        "--format",
        "postcard",
        "--payload",
        "order",
        "--cases",
        "1",
        "--seed",
        "0x5EED0B05",
        "--out",
        text(&out),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("seed 0x5eed0b05"));

    // An unwritable folder is found before the work (the whole default selection takes minutes).
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let mut command = serbench();
    command.args(["robustness", "--out", text(&file.join("out"))]);
    let output = output_within(command, Duration::from_secs(20)).expect("robustness worked before failing");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot create the output folder"),
        "{}",
        stderr(&output)
    );
}

/// Linux: the resident memory of a process, from /proc.
#[cfg(target_os = "linux")]
fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(target_os = "linux")]
#[test]
fn robustness_memory_does_not_grow_with_cases() {
    let dir = tempfile::tempdir().unwrap();
    const LIMIT: u64 = 300 << 20;
    let mut child = serbench()
        .args([
            "robustness",
            "--format",
            "postcard",
            "--payload",
            "order",
            "--cases",
            "1000000000",
        ])
        .args(["--out", text(&dir.path().join("out"))])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut peak = 0;
    while started.elapsed() < Duration::from_secs(3) {
        match resident_bytes(child.id()) {
            Some(bytes) => peak = peak.max(bytes),
            None => break,
        }
        if peak > LIMIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended = child.try_wait().unwrap();
    child.kill().ok();
    child.wait().unwrap();
    assert!(ended.is_none(), "robustness ended early: {ended:?}");
    assert!(
        peak <= LIMIT,
        "robustness grew past {} MiB with a billion cases per kind",
        peak >> 20
    );
}

#[test]
fn unknown_backends_list_each_valid_name_once() {
    for args in [
        &["run", "--backend", "nope", "--out", "/nonexistent/never-written"][..],
        &[
            "robustness",
            "--backend",
            "nope",
            "--out",
            "/nonexistent/never-written",
        ],
        &[
            "dump",
            "--format",
            "json",
            "--payload",
            "order",
            "--backend",
            "nope",
        ],
    ] {
        let output = run(args);
        assert_refused(&output, "unknown backend 'nope' [possible values: ");
        let message = stderr(&output);
        let names: Vec<&str> = message[message.find("possible values: ").unwrap() + 17..]
            .trim_end()
            .trim_end_matches(']')
            .split(", ")
            .collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{args:?}: {message}");
        assert!(names.contains(&"serde_json"), "{args:?}: {message}");
    }
}

#[test]
fn an_unknown_variant_lists_the_default_as_leaving_it_out() {
    for (format, listed) in [
        ("json", "[possible values: none (leave it out)]"),
        ("bincode", "[possible values: none (leave it out), hardened]"),
    ] {
        let output = run(&[
            "dump",
            "--format",
            format,
            "--payload",
            "order",
            "--variant",
            "nosuch",
        ]);
        assert_refused(&output, &format!("unknown variant 'nosuch' {listed}"));
    }
}

#[test]
fn dump_never_replaces_a_file_unless_asked_and_then_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("order.postcard");
    std::fs::write(&target, b"the user's file").unwrap();
    let dump = |extra: &[&str]| {
        let args = [
            "dump",
            "--format",
            "postcard",
            "--payload",
            "order",
            "-o",
            text(&target),
        ];
        run(&[&args[..], extra].concat())
    };
    let refused = dump(&[]);
    assert_refused(&refused, "already holds order.postcard: pass --replace");
    // The flag dump takes (#41: it offered `--out`).
    assert!(
        stderr(&refused).contains("choose another -o/--output")
            && !stderr(&refused).contains("another --out "),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"the user's file");
    let output = dump(&["--replace"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_ne!(std::fs::read(&target).unwrap(), b"the user's file");
    let replaced: Vec<PathBuf> = std::fs::read_dir(dir.path().join("replaced"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("order.postcard"))
        .collect();
    assert_eq!(replaced.len(), 1);
    assert_eq!(std::fs::read(&replaced[0]).unwrap(), b"the user's file");
    // No lock or temporary file is left beside the output.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["order.postcard", "replaced"]);
}

#[test]
fn a_link_planted_as_the_lock_is_refused_and_its_target_kept() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.csv");
    std::fs::write(&victim, b"rows of another run\n").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join(LOCK_FILE)).unwrap();
    for output in [
        smoke(&out, &["order"], &[]),
        run(&["sizes", "--format", "postcard", "--out", text(&out)]),
    ] {
        assert_refused(&output, "is not a regular file (a link, folder or FIFO)");
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"rows of another run\n");
}

/// One rule for links (issue 27, #20): a result set's files are the folder's own. A link in
/// their place was followed by `--resume` (appending to its target), replaced by a rewrite and
/// left dangling by `--replace`; every reader and writer now refuses it and changes nothing.
#[test]
fn a_linked_result_file_is_refused_by_every_reader_and_writer() {
    let (dir, out, csv) = with_a_run();
    let elsewhere = dir.path().join("kept.csv");
    std::fs::rename(&csv, &elsewhere).unwrap();
    std::os::unix::fs::symlink("../kept.csv", &csv).unwrap();
    let kept = std::fs::read(&elsewhere).unwrap();
    let mut report = serbench();
    report.args(["report", text(&out)]);
    for output in [
        smoke(&out, &["order", "telemetry"], &["--resume"]),
        smoke(&out, &["order"], &["--replace"]),
        report.output().unwrap(),
    ] {
        assert_refused(&output, "results.csv: a symbolic link");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), kept);
        assert!(csv.symlink_metadata().unwrap().file_type().is_symlink());
    }
    assert!(!out.join("replaced").exists());
}

/// A folder in place of results.csv is named for what it is, not "not found" (#18).
#[test]
fn a_folder_in_place_of_results_is_not_a_regular_file_to_every_reader() {
    let (_dir, out, csv) = with_a_run();
    std::fs::remove_file(&csv).unwrap();
    std::fs::create_dir(&csv).unwrap();
    let mut report = serbench();
    report.args(["report", text(&out)]);
    assert_refused(&report.output().unwrap(), "results.csv: not a regular file");
    let mut ratio = serbench();
    ratio.args([
        "ratio",
        text(&out),
        "--payload",
        "order",
        "--op",
        "decode",
        "a",
        "b",
    ]);
    assert_refused(&ratio.output().unwrap(), "results.csv: not a regular file");
}

#[test]
fn a_fifo_in_place_of_a_result_file_is_refused_not_waited_on() {
    let (_dir, out, csv) = with_a_run();
    let fifo = |path: &Path| {
        std::fs::remove_file(path).ok();
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success());
    };
    let resume = |out: &Path| {
        let mut command = serbench();
        command.args([
            "run",
            "--format",
            "postcard",
            "--payload",
            "order",
            "--profile",
            "smoke",
        ]);
        command.args(["--resume", "--out", text(out)]);
        command
    };
    for name in ["samples.csv", "robustness.csv"] {
        let path = out.join(name);
        let kept = std::fs::read(&path).ok();
        fifo(&path);
        let output = output_within(resume(&out), Duration::from_secs(20)).expect("--resume waited on a FIFO");
        // After the line that says what it resumes.
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{message}");
        let last = message.trim_end().lines().last().unwrap_or_default();
        assert!(last.contains(&format!("{name}: not a regular file")), "{message}");
        std::fs::remove_file(&path).unwrap();
        if let Some(bytes) = kept {
            std::fs::write(&path, bytes).unwrap();
        }
    }
    fifo(&csv);
    let output = output_within(resume(&out), Duration::from_secs(20)).expect("--resume waited on a FIFO");
    assert_refused(&output, "results.csv: not a regular file");
    let mut sizes = serbench();
    sizes.args(["sizes", "--format", "postcard", "--out", text(&out)]);
    let output = output_within(sizes, Duration::from_secs(20)).expect("sizes waited on a FIFO");
    assert_refused(&output, "results.csv: not a regular file");
}

#[test]
fn refusals_offer_only_the_flags_the_command_takes() {
    let dir = tempfile::tempdir().unwrap();
    // A folder with sizes.csv but no results.csv: a --resume run has nothing to extend.
    let sized = dir.path().join("sized");
    let output = run(&[
        "sizes",
        "--format",
        "postcard",
        "--payload",
        "order",
        "--out",
        text(&sized),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let resumed = smoke(&sized, &["order"], &["--resume"]);
    assert_refused(&resumed, "already holds a result set (sizes.csv): pass --replace");

    // selfcheck takes --replace, not --resume.
    let checked = dir.path().join("checked");
    finished_run(&checked.join("a"));
    let output = run(&[
        "selfcheck",
        "--format",
        "postcard",
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
        text(&checked),
    ]);
    assert_refused(&output, "a selfcheck run: pass --replace");
}

#[test]
fn an_out_that_is_a_file_is_a_usage_error_and_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "the user's\n").unwrap();
    assert_refused(&smoke(&file, &["order"], &[]), "is a file, not a folder");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "the user's\n");
}

/// `--replace` moves the old set aside only once the rest of the folder, which the report at
/// the end reads, is known valid: a refusal leaves every file where it was.
#[test]
fn a_refused_replace_moves_nothing() {
    let (_dir, out, _csv) = with_a_run();
    std::fs::write(out.join("footprint.csv"), "not,a,footprint\n1,2,3\n").unwrap();
    let before = snapshot(&out);
    let refused = smoke(&out, &["order"], &["--replace"]);
    assert_refused(&refused, "footprint.csv");
    assert_eq!(snapshot(&out), before, "a refused run --replace moved a file");

    std::fs::write(out.join("robustness.csv"), "the old robustness set\n").unwrap();
    let before = snapshot(&out);
    let refused = run(&["robustness", "--replace", "--out", text(&out)]);
    assert_refused(&refused, "footprint.csv");
    assert_eq!(
        snapshot(&out),
        before,
        "a refused robustness --replace moved a file"
    );

    std::fs::remove_file(out.join("footprint.csv")).unwrap();
    let before = snapshot(&out);
    let refused = run(&["footprint", "--replace", "--out", text(&out)]);
    assert_refused(&refused, "robustness.csv");
    assert_eq!(
        snapshot(&out),
        before,
        "a refused footprint --replace moved a file"
    );
}

/// A smoke `--resume` refuses an invalid samples.csv before it measures, not after it has
/// appended every new row.
#[test]
fn a_smoke_resume_checks_samples_before_adding_a_row() {
    let (_dir, out, _csv) = with_a_run();
    std::fs::write(out.join("samples.csv"), "not,samples\n").unwrap();
    let before = snapshot(&out);
    let refused = smoke(&out, &["readings"], &["--resume"]);
    let message = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{message}");
    assert!(message.contains("samples.csv"), "{message}");
    assert_eq!(snapshot(&out), before, "rows were added before the refusal");
}

/// `compare` reads a results.csv as `report` does: a UTF-8 BOM (a spreadsheet's save) is
/// accepted by both, and bytes that are not UTF-8 are refused by both in the same one line.
#[test]
fn compare_and_report_judge_a_results_file_alike() {
    let (dir, out, csv) = with_a_run();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let rows = std::fs::read(&csv).unwrap();
    for (prefix, accepted) in [(&b"\xef\xbb\xbf"[..], true), (&b"\xff\xfe"[..], false)] {
        std::fs::write(other.join("results.csv"), [prefix, &rows[..]].concat()).unwrap();
        let compare = run(&["compare", text(&out), text(&other)]);
        let report = run(&["report", text(&other)]);
        assert_eq!(
            compare.status.success(),
            accepted,
            "{prefix:?}: {}",
            stderr(&compare)
        );
        assert_eq!(
            report.status.success(),
            accepted,
            "{prefix:?}: {}",
            stderr(&report)
        );
        if !accepted {
            assert_refused(&compare, "results.csv:1");
            assert_eq!(stderr(&compare), stderr(&report));
        }
    }
}

/// The entries of `dir`, sorted (nothing when it does not exist).
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The one `replaced/<time>/` folder of `out`.
fn the_replaced(out: &Path) -> PathBuf {
    let moved: Vec<PathBuf> = std::fs::read_dir(out.join("replaced"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    moved[0].clone()
}

/// #41 defect 10: a `replaced` that is a link was followed, and the old set moved outside
/// the folder. `replaced` (and its `<time>/`) must be serbench's own folder: a link or a file
/// there is refused in one line, and nothing moves.
#[test]
fn replace_never_follows_a_replaced_link_out_of_the_folder() {
    let (dir, out, _csv) = with_a_run();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("replaced")).unwrap();
    let before = snapshot(&out);
    let sizes = [
        "sizes",
        "--format",
        "postcard",
        "--payload",
        "order",
        "--replace",
        "--out",
        text(&out),
    ];
    for output in [smoke(&out, &["order"], &["--replace"]), run(&sizes)] {
        assert_refused(&output, "replaced: a symbolic link, not a folder serbench made");
        assert_eq!(names(&elsewhere), Vec::<String>::new(), "moved through the link");
        assert_eq!(snapshot(&out), before, "a refused --replace changed a file");
    }

    // A file in its place, and a dangling link: refused the same way.
    std::fs::remove_file(out.join("replaced")).unwrap();
    std::fs::write(out.join("replaced"), "the user's file\n").unwrap();
    assert_refused(
        &smoke(&out, &["order"], &["--replace"]),
        "replaced: a regular file, not a folder serbench made",
    );
    std::fs::remove_file(out.join("replaced")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), out.join("replaced")).unwrap();
    assert_refused(
        &smoke(&out, &["order"], &["--replace"]),
        "replaced: a symbolic link",
    );
    assert!(!dir.path().join("nowhere").exists());
    std::fs::remove_file(out.join("replaced")).unwrap();
    assert_eq!(snapshot(&out), before);

    // dump --replace takes the same path.
    let target = dir.path().join("order.postcard");
    std::fs::write(&target, "the user's bytes").unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.path().join("replaced")).unwrap();
    let output = run(&[
        "dump",
        "--format",
        "postcard",
        "--payload",
        "order",
        "-o",
        text(&target),
        "--replace",
    ]);
    assert_refused(&output, "replaced: a symbolic link");
    assert_eq!(std::fs::read(&target).unwrap(), b"the user's bytes");
    assert_eq!(names(&elsewhere), Vec::<String>::new());
}

/// #41 defects 12 and 31: `dump -o` onto a device refused with a message naming `--out`, and
/// with `--replace` moved the device node aside and wrote a file in its place. Its output must
/// be a regular file or nothing: anything else is refused in one line naming `-o/--output`,
/// with or without `--replace`, and stays what it was.
#[test]
fn dump_writes_only_a_regular_file_and_never_moves_anything_else() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("victim");
    std::fs::write(&target, "the link's target\n").unwrap();
    let mut nodes: Vec<(&str, PathBuf)> = Vec::new();

    // A device with /dev/null's numbers (1:3), made here; only root may make one.
    let device = dir.path().join("null");
    let made = Command::new("mknod").arg(&device).args(["c", "1", "3"]).output();
    match made {
        Ok(made) if made.status.success() => nodes.push(("a character device", device)),
        _ if std::env::var_os("SERBENCH_REQUIRE_ROOT").is_some() => {
            panic!(
                "SERBENCH_REQUIRE_ROOT is set and `mknod {} c 1 3` failed: {made:?}",
                device.display()
            )
        }
        _ => {
            eprintln!("skipped the device case: mknod needs root (set SERBENCH_REQUIRE_ROOT to require it)")
        }
    }

    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    nodes.push(("a FIFO", fifo));
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    nodes.push(("a socket", socket));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    nodes.push(("a symbolic link", link));
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    nodes.push(("a folder", folder));
    let kind_of = |path: &Path| {
        let file_type = path.symlink_metadata().unwrap().file_type();
        (
            file_type.is_fifo(),
            file_type.is_socket(),
            file_type.is_symlink(),
            file_type.is_dir(),
            file_type.is_char_device(),
        )
    };
    for (kind, path) in &nodes {
        let was = kind_of(path);
        for flag in ["-o", "--output"] {
            for extra in [&[][..], &["--replace"][..]] {
                let args = [
                    &[
                        "dump",
                        "--format",
                        "postcard",
                        "--payload",
                        "order",
                        flag,
                        text(path),
                    ][..],
                    extra,
                ]
                .concat();
                let output = output_within(
                    {
                        let mut command = serbench();
                        command.args(&args);
                        command
                    },
                    Duration::from_secs(20),
                )
                .unwrap_or_else(|| panic!("{args:?} waited on {kind}"));
                assert_refused(
                    &output,
                    &format!("{}: {kind}, not a regular file", path.display()),
                );
                assert!(
                    stderr(&output).contains("choose another -o/--output"),
                    "{}",
                    stderr(&output)
                );
                assert_eq!(kind_of(path), was, "{args:?} changed {kind}");
                assert!(!dir.path().join("replaced").exists(), "{args:?} moved something");
                assert!(!dir.path().join(LOCK_FILE).exists());
            }
        }
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"the link's target\n");
    assert_eq!(names(&dir.path().join("folder")), Vec::<String>::new());
}

/// #41 defect 13: `report DIR --out X` overwrote X's report.md, report.html and report.json
/// and deleted X/charts/ with a file serbench never wrote in it. A report now rewrites only
/// the files its manifest (report.sha256) records with their bytes: anything else is refused,
/// and `--replace` moves the old report whole into `replaced/<time>/`.
#[test]
fn report_rewrites_only_the_files_it_wrote() {
    let (dir, out, _csv) = with_a_run();
    let x = dir.path().join("x");
    std::fs::create_dir_all(x.join("charts")).unwrap();
    std::fs::write(x.join("report.md"), "my notes\n").unwrap();
    std::fs::write(x.join("charts/mine.txt"), "my chart\n").unwrap();
    let report = |extra: &[&str]| run(&[&["report", text(&out), "--out", text(&x)][..], extra].concat());

    let before = snapshot(&x);
    let refused = report(&[]);
    assert_refused(&refused, "that serbench did not write there");
    for named in ["charts/mine.txt", "report.md", "--replace", "another --out"] {
        assert!(stderr(&refused).contains(named), "{}", stderr(&refused));
    }
    assert_eq!(snapshot(&x), before, "a refused report changed a file");
    // A charts/ holding only a file of the user's is refused too.
    std::fs::remove_file(x.join("report.md")).unwrap();
    assert_refused(&report(&[]), "charts/mine.txt");
    assert_eq!(std::fs::read(x.join("charts/mine.txt")).unwrap(), b"my chart\n");
    std::fs::write(x.join("report.md"), "my notes\n").unwrap();

    let output = report(&["--replace"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let moved = the_replaced(&x);
    assert_eq!(std::fs::read(moved.join("report.md")).unwrap(), b"my notes\n");
    assert_eq!(
        std::fs::read(moved.join("charts/mine.txt")).unwrap(),
        b"my chart\n"
    );
    assert!(!x.join("charts/mine.txt").exists());
    assert!(x.join("report.html").is_file() && x.join("report.sha256").is_file());

    // Its own files it rewrites, with no flag.
    let output = report(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    // A file of its own that the user changed is not its own any more.
    std::fs::write(x.join("report.html"), "edited\n").unwrap();
    assert_refused(&report(&[]), "report.html");
    assert_eq!(std::fs::read(x.join("report.html")).unwrap(), b"edited\n");
}

/// #41 defect 14: `--replace` left report.html and report.json behind (and after `sizes
/// --replace` the old run's page stayed beside the new sizes.csv). The set `--replace` moves is
/// one list, `schema::RUN_FILES`; each file of it is named here and must move.
#[test]
fn replace_moves_every_file_of_the_set() {
    let expected = [
        "results.csv",
        "samples.csv",
        "sources.csv",
        "sizes.csv",
        "ratios.csv",
        "charts",
        "report.html",
        "report.json",
        "report.md",
        "report.sha256",
    ];
    for command in ["run", "sizes"] {
        let (_dir, out, _csv) = with_a_run();
        // A smoke run of built-in payloads writes neither: stand-ins, which the move must take.
        for name in ["samples.csv", "sources.csv"] {
            assert!(!out.join(name).exists(), "{name}");
            std::fs::write(out.join(name), format!("{name} of the old set\n")).unwrap();
        }
        let before = snapshot(&out);
        let lacking: Vec<&str> = expected
            .into_iter()
            .filter(|name| !out.join(name).exists())
            .collect();
        let output = match command {
            "run" => smoke(&out, &["readings"], &["--replace"]),
            _ => run(&[
                "sizes",
                "--format",
                "postcard",
                "--payload",
                "readings",
                "--replace",
                "--out",
                text(&out),
            ]),
        };
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        let moved = the_replaced(&out);
        for (path, bytes) in &before {
            let inside = path.strip_prefix(&out).unwrap();
            assert_eq!(
                std::fs::read(moved.join(inside)).ok().as_ref(),
                Some(bytes),
                "{command} --replace did not move {}",
                inside.display()
            );
        }
        // After sizes, nothing of the old run beside the new sizes.csv.
        if command == "sizes" {
            assert_eq!(names(&out), ["replaced", "sizes.csv"]);
        }
        assert_eq!(lacking, Vec::<&str>::new(), "the old set lacks these");
    }
    assert_eq!(serbench::schema::RUN_FILES.as_slice(), expected.as_slice());
}

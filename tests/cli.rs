//! Drives the real `serbench` binary: runs, file schemas, determinism and bad input.

mod common;
use common::{serbench, stderr};

use std::path::Path;
use std::process::{Command, Output};

use serbench::files;
use serbench::schema::results::{self, ResultRow};
use serbench::schema::sizes::SizeRow;

fn list_json(args: &[&str]) -> serde_json::Value {
    let output = serbench(&[&["list", "--json"], args].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("list --json prints JSON")
}

/// The first format whose arms include `order`, so the test works with any feature set.
fn some_format() -> String {
    let listing = list_json(&["--payload", "order"]);
    listing["arms"][0]["format"]
        .as_str()
        .expect("at least one format carries order")
        .to_string()
}

/// `serbench run` of `format` on `order` with `profile` into `out`, plus `extra` arguments.
fn run_order(format: &str, profile: &str, extra: &[&str], out: &Path) -> Output {
    let args = [
        "run",
        "--format",
        format,
        "--payload",
        "order",
        "--profile",
        profile,
        "--out",
        out.to_str().unwrap(),
    ];
    serbench(&[&args[..], extra].concat())
}

#[test]
fn a_run_writes_one_row_per_selected_arm_and_both_files_parse_back() {
    let format = some_format();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let expected = list_json(&["--format", &format, "--payload", "order"])["arms"]
        .as_array()
        .unwrap()
        .len();

    let output = run_order(&format, "smoke", &[], &out);
    assert!(output.status.success(), "{}", stderr(&output));

    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    assert_eq!(rows.len(), expected);
    for row in &rows {
        assert_eq!(row.schema_version, serbench::schema::SCHEMA_VERSION);
        assert_eq!(
            (row.arm.codec.format.as_str(), row.arm.codec.payload.as_str()),
            (format.as_str(), "order")
        );
        assert_eq!(row.status, "ok", "{row:?}");
        let (low, mean, high) = (
            row.ci95_low_ns.unwrap(),
            row.mean_ns.unwrap(),
            row.ci95_high_ns.unwrap(),
        );
        assert!(low <= mean && mean <= high && mean > 0.0, "{row:?}");
        assert_eq!(row.ns_per_record, Some(mean / row.records as f64));
        assert!(row.encoded_bytes.unwrap() > 0 && row.reps == Some(3));
        assert!(
            !row.host.host.is_empty() && !row.host.cpu.is_empty() && row.host.rustc.starts_with("rustc ")
        );
    }
    let header = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(header.lines().next().unwrap(), results::header().join(","));

    let sizes: Vec<SizeRow> = files::read_complete(&out.join("sizes.csv")).unwrap();
    assert!(!sizes.is_empty());
    assert!(
        sizes
            .iter()
            .all(|row| row.codec.format == format && row.codec.payload == "order" && row.status == "ok")
    );
}

/// The full profile samples in worker processes over passes: every arm from at least the
/// minimum number of workers to the maximum, each worker's samples kept in samples.csv (one
/// row per arm and pass), with the stopping rule's verdict recorded.
#[test]
fn the_full_profile_combines_workers_over_passes() {
    let format = some_format();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = run_order(&format, "full", &["--op", "encode"], &out);
    assert!(output.status.success(), "{}", stderr(&output));
    let profile = serbench::measure::Profile::FULL;
    let passes = profile.passes.unwrap();
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    let samples: Vec<serbench::schema::samples::SampleRow> =
        serbench::files::read_complete(&out.join("samples.csv")).unwrap();
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row.status, "ok", "{row:?}");
        let workers = row.workers.unwrap();
        assert!(
            (passes.min_workers..=passes.max_workers).contains(&workers),
            "{row:?}"
        );
        // Each worker takes up to reps_each slices of an arm, fewer for an arm slower than a slice.
        let reps = row.reps.unwrap();
        assert!(
            (workers * profile.worker().min_reps..=workers * passes.reps_each).contains(&reps),
            "{row:?}"
        );
        assert!(row.load_1m.is_some() && row.stolen_percent.is_some(), "{row:?}");
        let (low, mean, high) = (
            row.ci95_low_ns.unwrap(),
            row.mean_ns.unwrap(),
            row.ci95_high_ns.unwrap(),
        );
        assert!(low < mean && mean < high, "{row:?}");
        // One sample per worker, in consecutive passes from 0; their mean is the row's.
        let mine: Vec<_> = samples.iter().filter(|sample| sample.arm == row.arm).collect();
        assert_eq!(mine.len(), workers);
        assert!(mine.iter().enumerate().all(|(pass, sample)| sample.pass == pass));
        let mean_of_workers = mine.iter().map(|sample| sample.mean_ns.unwrap()).sum::<f64>() / workers as f64;
        assert!(
            (mean_of_workers - mean).abs() <= 1e-9 * mean,
            "{mean_of_workers} vs {mean}"
        );
    }
    // One section (order encode): its reference is its first arm in sort order, which alone has
    // an A/A twin in every worker, and the section stopped before the maximum of workers only
    // with every ratio to the reference (a lone arm: its own interval) within the target.
    let mut ids: Vec<&serbench::arm::ArmId> = rows.iter().map(|row| &row.arm).collect();
    ids.sort_by_key(|id| id.sort_key());
    let of = |id: &serbench::arm::ArmId| -> Vec<&serbench::schema::samples::SampleRow> {
        samples.iter().filter(|sample| &sample.arm == id).collect()
    };
    assert!(of(ids[0]).iter().all(|sample| sample.twin_mean_ns.is_some()));
    assert!(
        ids[1..]
            .iter()
            .all(|id| of(id).iter().all(|sample| sample.twin_mean_ns.is_none()))
    );
    let workers = rows[0].workers.unwrap();
    if workers < passes.max_workers {
        let precision = profile.precision.unwrap();
        let widest = match ids.len() {
            1 => rows[0].relative_half_width().unwrap(),
            _ => ids[1..]
                .iter()
                .map(|id| {
                    let pairs: Vec<(f64, f64)> = of(id)
                        .iter()
                        .zip(of(ids[0]))
                        .map(|(arm, reference)| (arm.mean_ns.unwrap(), reference.mean_ns.unwrap()))
                        .collect();
                    serbench::stats::paired_ratio(&pairs)
                        .unwrap()
                        .relative_half_width()
                })
                .fold(0.0, f64::max),
        };
        assert!(
            widest <= precision,
            "stopped at {workers} workers with a ratio ±{widest}"
        );
    }
}

/// An interrupted full run keeps its finished workers in samples.csv; `--resume` continues with
/// the next pass and never samples an arm twice in one pass.
#[test]
fn a_resumed_full_run_continues_its_passes() {
    use serbench::schema::samples::SampleRow;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Round-trip: one arm (decode also has the borrowed arm), so each sample is one pass.
    let selection = ["--backend", "postcard", "--op", "roundtrip"];
    let first = run_order("postcard", "full", &selection, &out);
    assert!(first.status.success(), "{}", stderr(&first));
    // As if the run had been killed after its first two passes: their samples only.
    let samples_path = out.join("samples.csv");
    let text = std::fs::read_to_string(&samples_path).unwrap();
    let kept: Vec<&str> = text.lines().take(3).collect();
    std::fs::write(&samples_path, kept.join("\n") + "\n").unwrap();
    let resumed = run_order(
        "postcard",
        "full",
        &[&selection[..], &["--resume"]].concat(),
        &out,
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("2 worker samples kept"),
        "{}",
        stderr(&resumed)
    );
    let samples: Vec<SampleRow> = serbench::files::read_complete(&samples_path).unwrap();
    let passes: Vec<usize> = samples.iter().map(|sample| sample.pass).collect();
    let min_workers = serbench::measure::Profile::FULL.passes.unwrap().min_workers;
    assert!(passes.len() >= min_workers, "{passes:?}");
    assert_eq!(
        passes,
        (0..passes.len()).collect::<Vec<_>>(),
        "passes continue, none twice"
    );
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].workers, Some(passes.len()));
}

/// A samples.csv copied from another run of the same arm is refused by every reader, rather
/// than giving its pairing to these rows' ratios (it printed 0.99x beside an interval of
/// [1.31, 1.57] taken from the other run).
#[test]
fn a_samples_file_of_another_run_is_refused_by_the_readers() {
    let dir = tempfile::tempdir().unwrap();
    let selection = ["--backend", "postcard", "--op", "roundtrip"];
    let (ours, theirs) = (dir.path().join("ours"), dir.path().join("theirs"));
    for out in [&ours, &theirs] {
        let output = run_order("postcard", "full", &selection, out);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let report = serbench(&["report", ours.to_str().unwrap()]);
    assert!(
        report.status.success(),
        "its own samples are accepted: {}",
        stderr(&report)
    );
    std::fs::copy(theirs.join("samples.csv"), ours.join("samples.csv")).unwrap();
    for args in [
        vec!["report", ours.to_str().unwrap()],
        vec!["compare", ours.to_str().unwrap(), theirs.to_str().unwrap()],
    ] {
        let output = serbench(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(
            message.contains("it is not the samples.csv of this result set")
                && message.trim().lines().count() == 1,
            "{args:?}: {message}"
        );
    }
}

#[test]
fn sizes_are_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for name in ["first", "second"] {
        let out = dir.path().join(name);
        let output = serbench(&["sizes", "--out", out.to_str().unwrap()]);
        assert!(output.status.success(), "{}", stderr(&output));
        files.push(std::fs::read(out.join("sizes.csv")).unwrap());
    }
    assert!(files[0].len() > 100);
    assert_eq!(files[0], files[1]);
}

#[test]
fn unknown_names_exit_2_with_the_valid_names() {
    let format = some_format();
    for (flag, value, valid) in [
        ("--format", "nope", format.as_str()),
        ("--payload", "nope", "checkout-request"),
        ("--op", "nope", "roundtrip"),
        ("--profile", "nope", "quick"),
        ("--backend", "nope", "document"),
    ] {
        let output = serbench(&["run", flag, value, "--out", "/nonexistent/never-written"]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{flag}: {message}");
        if flag != "--backend" {
            assert!(
                message.contains("nope") && message.contains(valid),
                "{flag}: {message}"
            );
        } else {
            assert!(message.contains("unknown backend 'nope'"), "{message}");
        }
    }
}

#[test]
fn the_version_names_the_commit_and_the_build() {
    let output = serbench(&["--version"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let version = String::from_utf8(output.stdout).unwrap();
    let build = serbench::host::build();
    assert!(version.contains(&format!(", {build} build)")), "{version}");
    assert_eq!(version.trim(), format!("serbench {}", serbench::host::version()));
}

/// A layout must be this commit built for this CPU: another build of the same commit (here a
/// script that answers `--version` as a build for another CPU would), a missing file, or a
/// profile that starts no workers end with one line and exit 2 before the folder is touched.
#[cfg(unix)]
#[test]
fn a_layout_of_another_build_is_refused_before_anything_is_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ours = String::from_utf8(serbench(&["--version"]).stdout).unwrap();
    let build = serbench::host::build();
    // What a build of this commit for another CPU prints (with a version that names no build,
    // it prints exactly ours: the bug this test catches).
    let other = ours
        .trim()
        .replace(&format!(", {build} build)"), ", other-cpu build)");
    let script = dir.path().join("serbench-other-build");
    std::fs::write(&script, format!("#!/bin/sh\necho '{other}'\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    let format = some_format();
    for (layout, profile, expected) in [
        (
            script.to_str().unwrap(),
            "full",
            "a layout must be the same commit built for the same CPU",
        ),
        (
            "/nonexistent/serbench",
            "full",
            "cannot run the layout /nonexistent/serbench",
        ),
        (env!("CARGO_BIN_EXE_serbench"), "quick", "only the full profile"),
    ] {
        let output = run_order(&format, profile, &["--layout", layout], &out);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{layout}: {message}");
        assert!(
            message.contains(expected) && message.trim().lines().count() == 1,
            "{message}"
        );
        assert!(!out.exists(), "{layout}: the folder was written");
    }
}

#[test]
fn refuses_a_results_folder_of_another_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let old = "schema_version,host,format\n0,old-host,json\n";
    std::fs::write(&path, old).unwrap();
    let output = serbench(&["run", "--payload", "order", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("already holds a result set") && message.contains("schema version \"0\""),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), old);
    assert!(!dir.path().join("sizes.csv").exists());
}

#[test]
fn corrupt_results_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let mut text = results::header().join(",") + "\n";
    text.push_str("1,host,x86_64-linux\n");
    std::fs::write(&path, text).unwrap();
    let error = results::read(&path).unwrap_err().to_string();
    assert!(error.contains(&format!("{}:2", path.display())), "{error}");
}

#[test]
fn dump_writes_the_encoded_bytes_and_the_logical_data() {
    let format = some_format();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.bin");
    let output = serbench(&[
        "dump",
        "--format",
        &format,
        "--payload",
        "order",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let sizes_dir = dir.path().join("sizes");
    serbench(&[
        "sizes",
        "--format",
        &format,
        "--payload",
        "order",
        "--out",
        sizes_dir.to_str().unwrap(),
    ]);
    let sizes: Vec<SizeRow> = files::read_complete(&sizes_dir.join("sizes.csv")).unwrap();
    assert_eq!(
        Some(std::fs::metadata(&file).unwrap().len() as usize),
        sizes[0].encoded_bytes
    );

    let logical = serbench(&["dump", "--payload", "order", "--logical"]);
    let value: serde_json::Value = serde_json::from_slice(&logical.stdout).unwrap();
    assert_eq!(
        value.as_object().unwrap().len(),
        15,
        "order has exactly 15 fields"
    );
}

#[test]
fn list_json_names_every_enabled_format_and_reasons_for_the_unsupported() {
    let listing = list_json(&[]);
    let formats: Vec<&str> = listing["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let enabled: Vec<&str> = serbench::format::all().iter().map(|format| format.name).collect();
    assert_eq!(formats, enabled);
    for unsupported in listing["unsupported"].as_array().unwrap() {
        assert!(
            unsupported["reason"].as_str().unwrap().len() > 10,
            "{unsupported}"
        );
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml").exists());
}

#[test]
fn instruction_counts_are_identical_on_rerun() {
    let has_valgrind = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !has_valgrind {
        assert!(
            std::env::var_os("SERBENCH_REQUIRE_VALGRIND").is_none(),
            "valgrind is required (CI installs it)"
        );
        eprintln!("skipped: valgrind not on PATH (apt-get install valgrind)");
        return;
    }
    let format = some_format();
    // One backend's decodes (typed, dynamic, borrowed): each arm is a callgrind run of a debug
    // build, and determinism needs no more of them.
    let listing = list_json(&["--format", &format, "--payload", "order"]);
    let backend = listing["arms"][0]["backend"].as_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut counts = Vec::new();
    for name in ["first", "second"] {
        let out = dir.path().join(name);
        // The profile plays no part in counting instructions.
        let output = run_order(
            &format,
            "quick",
            &[
                "--measure",
                "instructions",
                "--op",
                "decode",
                "--backend",
                &backend,
            ],
            &out,
        );
        assert!(output.status.success(), "{}", stderr(&output));
        let rows: Vec<serbench::schema::instructions::InstructionRow> =
            files::read_complete(&out.join("instructions.csv")).unwrap();
        assert!(
            !rows.is_empty()
                && rows.iter().all(|row| row.status == "ok"
                    && row.instructions_per_op.is_some_and(|count| count > 100.0)
                    && row.estimated_cycles_per_op > row.instructions_per_op
                    && row.d1_misses_per_op.is_some()
                    && row.ll_misses_per_op.is_some()),
            "{rows:?}"
        );
        let of_row = |row: &serbench::schema::instructions::InstructionRow| {
            [
                row.instructions_per_op,
                row.d1_misses_per_op,
                row.ll_misses_per_op,
                row.estimated_cycles_per_op,
            ]
        };
        counts.push(rows.iter().map(of_row).collect::<Vec<_>>());
    }
    // Instructions and the simulated cache's misses alike.
    assert_eq!(counts[0], counts[1]);
}

/// `check` of an empty file with prost, on every payload: the bytes decode to a message with no
/// nested messages, which holds no model value; that is one line and exit 1, not a panic.
#[test]
fn check_of_an_empty_file_with_prost_is_a_refusal_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    let listing = list_json(&["--format", "protobuf", "--backend", "prost"]);
    let mut payloads: Vec<&str> = listing["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|arm| arm["payload"].as_str())
        .collect();
    payloads.sort_unstable();
    payloads.dedup();
    assert!(payloads.contains(&"telemetry"), "{payloads:?}");
    for payload in payloads {
        let output = serbench(&[
            "check",
            "--format",
            "protobuf",
            "--backend",
            "prost",
            "--payload",
            payload,
            empty.to_str().unwrap(),
        ]);
        let message = stderr(&output);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{payload}: {message}"
        );
        assert!(!message.contains("panicked"), "{payload}: {message}");
    }
}

/// `serbench vs`: two arms over fresh worker processes, one sentence on stdout naming them; the
/// first invocation in a cache holds the prior spread between sessions, the second the spread
/// the two show with it; `--one-process` says what it leaves out; an arm that does not exist
/// is a usage error listing those that do. What the sentence says of the two depends on the machine, so only its form is
/// checked here (its calibration is in the closing note of issue 42).
#[test]
fn vs_prints_one_sentence_of_two_arms_measured_over_processes() {
    let dir = tempfile::tempdir().unwrap();
    let cache = std::cell::RefCell::new(dir.path().join("cache"));
    let vs = |extra: &[&str]| {
        let mut args = vec![
            "vs",
            "postcard/postcard",
            "protobuf/prost",
            "--payload",
            "order",
            "--op",
            "decode",
        ];
        args.extend(extra);
        let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
            .args(&args)
            .env("SERBENCH_CACHE", &*cache.borrow())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let sentence = String::from_utf8(output.stdout.clone()).unwrap();
        assert_eq!(sentence.lines().count(), 1, "{sentence}");
        assert!(sentence.starts_with("`postcard/postcard` "), "{sentence}");
        assert!(
            sentence.contains("`order`") && sentence.contains("`protobuf/prost`"),
            "{sentence}"
        );
        (sentence, stderr(&output))
    };
    // A debug build keeps no link, so its processes all run one layout, and the sentence says so.
    let (sentence, levels) = vs(&["--budget", "20"]);
    assert!(
        sentence.contains(" processes of one layout (no layouts made"),
        "{sentence}"
    );
    let processes: usize = sentence
        .split(" processes ")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no process count in {sentence}"));
    assert!(processes >= 2, "{sentence}");
    assert!(
        levels.contains("rounds per process (Kalibera & Jones)"),
        "{levels}"
    );
    assert!(
        sentence.contains(
            ", and the spread between sessions: 1.5% (serbench's prior: no pair measured twice here yet)"
        ),
        "{sentence}"
    );
    // The second invocation of this build in the cache: the spread of the two sessions.
    let (again, levels) = vs(&["--budget", "10"]);
    assert!(
        again.contains(", and the spread between sessions: ")
            && again.contains("% (2 sessions of 1 pair on this host and the prior)"),
        "{again}"
    );
    assert!(
        levels.contains("a session's ") && levels.contains("this session alone "),
        "{levels}"
    );
    // A cache others can write is no place for the log: the measurement still stands, widened
    // by the prior, and says so.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    *cache.borrow_mut() = shared;
    let (unlogged, message) = vs(&["--budget", "6"]);
    assert!(
        unlogged.contains("(serbench's prior: no session log, see standard error)"),
        "{unlogged}"
    );
    assert!(
        message.contains("serbench: the session log is not used: "),
        "{message}"
    );
    let (sentence, _) = vs(&["--budget", "3", "--one-process"]);
    assert!(
        sentence.contains("one process: ")
            && sentence.contains(" paired slices, ")
            && sentence.contains("leaves out the spread between processes and code layouts"),
        "{sentence}"
    );
    let unknown = serbench(&[
        "vs",
        "postcard/postcard",
        "nosuch",
        "--payload",
        "order",
        "--op",
        "decode",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    let message = stderr(&unknown);
    assert!(
        message.contains("unknown arm of order decode 'nosuch'") && message.contains("protobuf/prost"),
        "{message}"
    );
}

/// A build that kept no link (every debug build) makes no layouts: one line, exit 2.
#[test]
fn layouts_of_a_build_without_its_link_are_refused_in_one_line() {
    let output = serbench(&["layouts", "2"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert_eq!(message.trim().lines().count(), 1, "{message}");
    assert!(message.contains("kept no link"), "{message}");
}

/// `serbench worker` on `request` (bytes on its standard input).
fn worker_on(request: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .arg("worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(request).unwrap();
    child.wait_with_output().unwrap()
}

/// Every worker role is the one hidden `worker` subcommand: a block request is answered with
/// one report per arm, in order; what is not a request of this build (garbage, an unknown
/// role, a profile without workers, an arm it lacks) is refused in one line with a failure
/// status, never a panic.
#[test]
fn the_worker_subcommand_serves_a_block_and_refuses_what_is_not_a_request() {
    use serbench::worker::{BlockReport, Request};
    let format = some_format();
    let registry = serbench::format::Registry::of_formats(|name| name == format);
    let arms: Vec<_> = registry
        .arms
        .iter()
        .filter(|arm| arm.id.codec.payload == "order")
        .take(2)
        .map(|arm| arm.id.clone())
        .collect();
    let block = |profile: &str| Request::Block {
        arms: arms.clone(),
        profile: profile.into(),
        burst: false,
    };
    let output = worker_on(&serde_json::to_vec(&block("full")).unwrap());
    assert!(output.status.success(), "{}", stderr(&output));
    let reports: Vec<BlockReport> = serde_json::from_slice(&output.stdout).unwrap();
    let answered: Vec<_> = reports.iter().map(|report| report.arm.clone()).collect();
    assert_eq!(answered, arms);
    assert!(reports.iter().all(|report| report.result.is_ok()), "{reports:?}");

    // A versus request: the rounds asked, each a finite log-ratio, and the time they took.
    let versus = Request::Versus {
        a: arms[0].clone(),
        b: arms[1].clone(),
        rounds: 30,
    };
    let output = worker_on(&serde_json::to_vec(&versus).unwrap());
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serbench::worker::VersusReport = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report.log_ratios.len(), 30);
    assert!(report.log_ratios.iter().all(|log| log.is_finite()) && report.timed_s > 0.0);

    let mut missing = arms[0].clone();
    missing.codec.backend = "no-such-backend".into();
    for (request, says) in [
        (b"\x00\xffgarbage".to_vec(), "a worker reads one request as JSON"),
        (
            br#"{"role":"teleport"}"#.to_vec(),
            "a worker reads one request as JSON",
        ),
        (
            serde_json::to_vec(&Request::Instructions { arm: missing }).unwrap(),
            "no such arm in this build",
        ),
    ] {
        let output = worker_on(&request);
        let text = stderr(&output);
        assert!(!output.status.success() && text.contains(says), "{text}");
        assert_eq!(text.trim_end().lines().count(), 1, "{text}");
        assert!(!text.contains("panicked"), "{text}");
    }
}

/// The flags a user types most have short forms, the same selection as the long ones.
#[test]
fn short_flags_select_what_the_long_ones_do() {
    let format = some_format();
    assert_eq!(
        list_json(&["-f", &format, "-p", "order"]),
        list_json(&["--format", &format, "--payload", "order"])
    );
}

/// `check` bounds the decode in time: past `--timeout` it stops with one line and exit 1,
/// rather than waiting on a decoder stuck on hostile bytes.
#[test]
fn check_stops_a_decode_that_outlasts_its_timeout() {
    let format = some_format();
    let dir = tempfile::tempdir().unwrap();
    let bytes = dir.path().join("vec-big.bin");
    let bytes = bytes.to_str().unwrap();
    let dump = serbench(&["dump", "-f", &format, "-p", "vec-big", "-o", bytes]);
    assert!(dump.status.success(), "{}", stderr(&dump));
    let check = |timeout: &str| {
        serbench(&[
            "check",
            "-f",
            &format,
            "-p",
            "vec-big",
            "--timeout",
            timeout,
            bytes,
        ])
    };
    let stopped = check("0.000001");
    assert_eq!(stopped.status.code(), Some(1), "{}", stderr(&stopped));
    assert!(stderr(&stopped).contains("did not finish decoding it within 0.000001 s; stopped"));
    assert_eq!(stderr(&stopped).lines().count(), 1, "{}", stderr(&stopped));
    assert!(check("60").status.success());
    assert_eq!(check("0").status.code(), Some(2));
}

/// A run that makes no progress for its stall limit (a decoder stuck on its data) stops with
/// one line and exit 1; what it finished is kept, and `--resume` completes the set.
#[test]
fn a_run_without_progress_stops_at_its_stall_limit_and_resumes() {
    let format = some_format();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stalled = run_order(&format, "smoke", &["--stall-limit", "0.000001"], &out);
    assert_eq!(stalled.status.code(), Some(1), "{}", stderr(&stalled));
    let line = stderr(&stalled);
    assert!(line.contains("no arm made progress for 0.000001 s"), "{line}");
    let resumed = run_order(&format, "smoke", &["--resume"], &out);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let listed = list_json(&["-f", &format, "-p", "order"]);
    let rows = results::read(&out.join("results.csv")).unwrap();
    assert_eq!(rows.len(), listed["arms"].as_array().unwrap().len());
}

/// `ratio` of an arm that failed: no figures to divide, which the user asked for, so a usage
/// error (exit 2) in one line naming the arm and why it failed, whichever side it is on.
#[test]
fn ratio_of_a_failed_arm_is_refused_in_one_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/x86_64-linux");
    let dir = dir.to_str().unwrap();
    for (a, b) in [("csv/csv", "bincode/bincode"), ("bincode/bincode", "csv/csv")] {
        let output = serbench(&["ratio", dir, "--payload", "order", "--op", "decode", a, b]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{a} over {b}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains("csv/csv order decode failed (round trip differs: field 3 (price))"),
            "{message}"
        );
        assert!(output.stdout.is_empty());
    }
}

/// `fidelity --criterion DIR` walks DIR without following links (two links to `.` made the
/// walk endless) and reads criterion's JSON from regular files only (a FIFO named
/// estimates.json blocked it forever): the result found once, then the FIFO refused in one line.
#[test]
fn fidelity_follows_no_link_and_reads_no_fifo() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/x86_64-linux");
    let criterion = tempfile::tempdir().unwrap();
    let new = criterion.path().join("bincode_readings_decode/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::write(
        new.join("benchmark.json"),
        r#"{"group_id":"bincode","full_id":"bincode/bincode/readings/decode"}"#,
    )
    .unwrap();
    let estimates = new.join("estimates.json");
    std::fs::write(&estimates, r#"{"mean":{"point_estimate":40000.0}}"#).unwrap();
    for link in ["here", "again"] {
        std::os::unix::fs::symlink(".", criterion.path().join(link)).unwrap();
    }
    let fidelity = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_serbench"));
        command
            .arg("fidelity")
            .arg(&results)
            .arg("--criterion")
            .arg(criterion.path());
        common::output_within(command, std::time::Duration::from_secs(60))
            .expect("fidelity still walking or reading after a minute")
    };
    let output = fidelity();
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        table.matches("bincode/bincode/readings/decode").count(),
        1,
        "the result once, not once per link: {table}"
    );

    std::fs::remove_file(&estimates).unwrap();
    let path = std::ffi::CString::new(estimates.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    let output = fidelity();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains(&format!("{}: not a regular file", estimates.display())),
        "{message}"
    );
}

/// A criterion folder that holds none of the folder's arms is the user's mistake: one line, 2.
#[test]
fn fidelity_without_a_matching_criterion_result_is_a_usage_error() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/x86_64-linux");
    let criterion = tempfile::tempdir().unwrap();
    let output = serbench(&[
        "fidelity",
        results.to_str().unwrap(),
        "--criterion",
        criterion.path().to_str().unwrap(),
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("has a criterion result in"), "{message}");
}

#[test]
fn run_prints_the_answer_first_and_every_arm_only_with_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let args = [
        "run",
        "--profile",
        "smoke",
        "--payload",
        "readings,order",
        "--op",
        "encode,decode,roundtrip",
    ];
    let plain = serbench(&[&args[..], &["--out", &out("plain")]].concat());
    assert!(plain.status.success(), "{}", stderr(&plain));
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(text.starts_with("The answer on "), "{text}");
    // A row per payload, then the front per payload, then where the files are.
    for payload in ["readings", "order"] {
        assert_eq!(
            text.lines().filter(|line| line.starts_with(payload)).count(),
            2,
            "{text}"
        );
    }
    assert!(text.contains("every arm's row: --verbose"), "{text}");
    assert!(
        !text.contains("ns/record"),
        "the per-arm table without --verbose:\n{text}"
    );
    assert!(
        text.lines().count() <= 20,
        "{} lines:\n{text}",
        text.lines().count()
    );
    let verbose = serbench(&[&args[..], &["--out", &out("verbose"), "--verbose"]].concat());
    assert!(verbose.status.success(), "{}", stderr(&verbose));
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(
        text.starts_with("payload") && text.contains("ns/record") && text.contains("The answer on "),
        "{text}"
    );
}

#[test]
fn evolve_prints_the_matrix_of_a_data_file_and_refuses_an_unknown_payload() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/orders.ndjson");
    let output = serbench(&["evolve", "--data", file]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with("data:orders: schema evolution of its record type"),
        "{text}"
    );
    for expected in [
        "json/serde_json",
        "add optional",
        "changes:",
        "mechanisms:",
        "not measured:",
    ] {
        assert!(text.contains(expected), "{expected} missing:\n{text}");
    }
    // A column for each of the eight changes.
    let header = text.lines().nth(1).unwrap();
    for change in [
        "add optional",
        "add with default",
        "remove",
        "rename",
        "reorder",
        "widen",
        "make nullable",
        "add enum variant",
    ] {
        assert!(header.contains(change), "{change} missing: {header}");
    }
    // Typed, the same matrix: its versions are typed already, so nothing is built.
    let typed = serbench(&["evolve", "--data", file, "--typed"]);
    assert!(typed.status.success(), "{}", stderr(&typed));
    assert_eq!(String::from_utf8_lossy(&typed.stdout), text);
    assert!(!stderr(&typed).contains("building"), "{}", stderr(&typed));
    let unknown = serbench(&["evolve", "--payload", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(stderr(&unknown).lines().count(), 1, "{}", stderr(&unknown));
}

/// A reader that asks for more memory than it can get on the other version's bytes (savefile
/// without its schema reads a length from a reordered field of another type: 8 EiB on
/// `readings`) ended the whole `evolve` with exit 1 and no matrix; each cell now runs in a child
/// of its own, and that cell is refused, saying how its reader crashed.
#[test]
fn evolve_survives_a_reader_that_crashes_on_the_other_versions_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("evolve");
    let evolve = serbench(&["evolve", "--payload", "readings", "--out", out.to_str().unwrap()]);
    assert!(evolve.status.success(), "{}", stderr(&evolve));
    let rows: Vec<serbench::schema::evolution::EvolutionRow> =
        serbench::files::read_complete(&out.join("evolution.csv")).unwrap();
    let crashed: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            [
                (&row.new_reads_old, &row.new_reads_old_detail),
                (&row.old_reads_new, &row.old_reads_new_detail),
            ]
            .into_iter()
            .filter(|(_, detail)| detail.contains("the reader crashed"))
            .map(move |(outcome, detail)| format!("{} {}: {outcome}: {detail}", row.label(), row.change))
        })
        .collect();
    assert!(
        crashed.iter().any(
            |cell| cell.starts_with("savefile/savefile[noschema] reorder: refused: ")
                && cell.contains("capped at 256 MiB")
        ),
        "{crashed:#?}"
    );
    // The other cells are as they were: serde_json's old reader refuses a renamed field.
    let serde_json = rows
        .iter()
        .find(|row| row.label() == "json/serde_json" && row.change == "rename")
        .unwrap();
    assert_eq!(
        (
            serde_json.new_reads_old.as_str(),
            serde_json.old_reads_new.as_str()
        ),
        ("ok", "refused")
    );
}

/// `evolve --out` beside a run: evolution.csv written, the report written again with the
/// matrices and the measured evolution column; a second write refused without --replace.
#[test]
fn evolve_out_writes_evolution_csv_and_the_folders_report_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run = serbench(&[
        "run",
        "--format",
        "json,protobuf",
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let evolve = serbench(&["evolve", "--payload", "order", "--out", out.to_str().unwrap()]);
    assert!(evolve.status.success(), "{}", stderr(&evolve));
    let rows: Vec<serbench::schema::evolution::EvolutionRow> =
        serbench::files::read_complete(&out.join("evolution.csv")).unwrap();
    let cell = |label: &str, change: &str| {
        rows.iter()
            .find(|row| row.label() == label && row.change == change)
            .map(|row| (row.new_reads_old.as_str(), row.old_reads_new.as_str()))
    };
    assert_eq!(cell("protobuf/prost", "rename"), Some(("ok", "ok")));
    assert_eq!(cell("json/serde_json", "rename"), Some(("ok", "refused")));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Schema evolution"), "{report}");
    assert!(report.contains("evolution (measured: new reads old / old reads new)"));
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let capability = |format: &str, backend: &str| {
        model["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["format"] == format && row["backend"] == backend)
            .unwrap()
            .clone()
    };
    // Protobuf reads an added optional and a renamed field both ways (an old reader takes a
    // removed required field as its default, silently wrong, which the constraint leaves out);
    // serde_json's old reader refuses a renamed field.
    let prost = capability("protobuf", "prost");
    assert_eq!(prost["evolved"]["survives"], true, "{prost}");
    assert_eq!(prost["evolved"]["silently_wrong"], serde_json::json!(["remove"]));
    let json = capability("json", "serde_json");
    assert_eq!(json["evolved"]["survives"], false, "{json}");
    let again = serbench(&["evolve", "--payload", "order", "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    let replaced = serbench(&[
        "evolve",
        "--payload",
        "order",
        "--out",
        out.to_str().unwrap(),
        "--replace",
    ]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
}

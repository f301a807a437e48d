//! The robustness harness survives what it is built to record: fake decoders that panic,
//! over-allocate (fatally and through `try_reserve`), overflow the stack and hang are reported
//! as panic, over-cap, crash and timeout, and every later case and every later decoder still
//! runs.
//!
//! The library-driven tests use this test binary as its own worker
//! ([`robustness::test_binary_launcher`]); the binary-driven ones run `serbench robustness` itself,
//! with its hidden `worker` subcommand.

use std::process::Command;
use std::time::Duration;

use serbench::format::Registry;
use serbench::robustness::{
    self, CaseKind, FAULT_INJECTION_ENV, FAULT_INJECTION_FORMAT, Outcome, RobustnessOptions, RobustnessRow,
};

/// When a test below starts this binary as its worker, this test is the worker.
#[test]
fn robustness_worker_entry() {
    robustness::test_worker_entry();
}

fn options(formats: &[&str], cases: usize) -> RobustnessOptions {
    RobustnessOptions {
        formats: formats.iter().map(|format| format.to_string()).collect(),
        cases,
        case_timeout: Duration::from_secs(2),
        fault_injection: true,
        worker: Some(robustness::test_binary_launcher("robustness_worker_entry").unwrap()),
        ..RobustnessOptions::default()
    }
}

fn row<'a>(rows: &'a [RobustnessRow], backend: &str, kind: CaseKind) -> &'a RobustnessRow {
    rows.iter()
        .find(|row| row.id.codec.backend == backend && row.case_kind == kind)
        .unwrap_or_else(|| panic!("no {backend} {} row", kind.name()))
}

fn assert_every_case_classified(rows: &[RobustnessRow]) {
    for row in rows {
        let classified: usize = Outcome::ALL.into_iter().map(|outcome| row.count(outcome)).sum();
        assert_eq!(classified, row.cases, "{:?} {}", row.id, row.case_kind.name());
    }
}

#[test]
fn every_injected_fault_is_recorded_and_the_run_goes_on() {
    // 16 cases per kind: every truncation length of the 16-byte synthetic payload, so the
    // lengths the fakes fail on (3, 5, 7, 9, multiples of 4) are all cases.
    let rows = robustness::run(&Registry::default(), &options(&[FAULT_INJECTION_FORMAT], 16)).unwrap();
    assert_every_case_classified(&rows);

    let truncate = |backend| row(&rows, backend, CaseKind::Truncate);
    // Lengths 0, 4, 8, 12 panic; the others are errors: the panics did not stop the worker.
    assert_eq!((truncate("panics").panic, truncate("panics").error), (4, 12));
    let worst = truncate("panics").worst.as_ref().unwrap();
    assert!(worst.detail.contains("injected panic on 0 bytes"), "{worst:?}");

    // Length 7 asks for 1 TiB: the worker aborts, the case is over-cap, the other 15 run.
    let fatal = truncate("over-allocates");
    assert_eq!((fatal.over_cap, fatal.error, fatal.cases), (1, 15, 16));
    assert!(
        fatal
            .worst
            .as_ref()
            .unwrap()
            .detail
            .contains("1099511627776 bytes"),
        "{fatal:?}"
    );
    // Length 9 asks through try_reserve: the decoder survives, the request still counts.
    assert_eq!(truncate("over-allocates-gracefully").over_cap, 1);

    let overflow = truncate("overflows-stack");
    assert_eq!((overflow.crash, overflow.error), (1, 15));
    assert!(
        overflow.worst.as_ref().unwrap().detail.contains("stack overflow"),
        "{overflow:?}"
    );

    let hang = truncate("hangs");
    assert_eq!((hang.timeout, hang.error), (1, 15));

    assert_eq!(truncate("corrupts").ok_different, 16);
    // The last decoder ran every case of every kind after the others crashed their workers.
    let well_behaved: Vec<&RobustnessRow> = rows
        .iter()
        .filter(|row| row.id.codec.backend == "well-behaved")
        .collect();
    assert!(well_behaved.len() >= 5, "{well_behaved:?}");
    assert!(
        well_behaved
            .iter()
            .all(|row| row.panic + row.over_cap + row.crash + row.timeout == 0)
    );

    let table = serbench::report::robustness::markdown_table(&rows);
    assert!(
        table.contains("- fault-injection/over-allocates typed: over-cap on truncate"),
        "{table}"
    );
    assert!(
        table.contains("- fault-injection/overflows-stack typed: crash on truncate"),
        "{table}"
    );
}

#[test]
fn the_same_seed_gives_the_same_rows() {
    if !serbench::format::all()
        .iter()
        .any(|format| format.name == "bincode")
    {
        return;
    }
    let options = options(&["bincode"], 4);
    let options = RobustnessOptions {
        payloads: vec!["order".into()],
        ..options
    };
    let first = robustness::run(&Registry::build(), &options).unwrap();
    let second = robustness::run(&Registry::build(), &options).unwrap();
    assert_every_case_classified(&first);
    let counts = |rows: &[RobustnessRow]| -> Vec<(String, &'static str, Vec<usize>)> {
        rows.iter()
            .map(|row| {
                let counts = Outcome::ALL
                    .into_iter()
                    .map(|outcome| row.count(outcome))
                    .collect();
                (row.id.to_string(), row.case_kind.name(), counts)
            })
            .collect()
    };
    assert_eq!(counts(&first), counts(&second));
}

#[test]
fn the_fault_injection_format_needs_its_switch() {
    let options = RobustnessOptions {
        fault_injection: false,
        ..options(&[FAULT_INJECTION_FORMAT], 4)
    };
    let error = robustness::run(&Registry::default(), &options).unwrap_err();
    assert!(error.to_string().contains(FAULT_INJECTION_ENV), "{error}");
}

/// The real command line, with `robustness` and its `worker` subcommand.
#[test]
fn the_binary_records_injected_faults() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args([
            "robustness",
            "--format",
            FAULT_INJECTION_FORMAT,
            "--cases",
            "16",
            "--case-timeout",
            "2",
        ])
        .arg("--out")
        .arg(out.path())
        .env(FAULT_INJECTION_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("fault-injection/over-allocates typed: over-cap"),
        "{stdout}"
    );
    let rows = robustness::read_csv(&out.path().join("robustness.csv")).unwrap();
    assert_every_case_classified(&rows);
    assert_eq!(row(&rows, "overflows-stack", CaseKind::Truncate).crash, 1);
    assert_eq!(row(&rows, "panics", CaseKind::Truncate).panic, 4);
}

#[test]
fn the_binary_hides_the_fault_injection_format_without_its_switch() {
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(["robustness", "--format", FAULT_INJECTION_FORMAT])
        .env_remove(FAULT_INJECTION_ENV)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `serbench check`'s path of a codec and the `--data` reader are decoders too: the binary
/// feeds them the same hostile cases and records them beside the codec's own decoders.
#[test]
fn the_binary_feeds_check_and_the_data_reader_hostile_bytes() {
    let Some(format) = serbench::format::all().first().map(|format| format.name) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(["robustness", "--format", format, "--format", "data"])
        .args(["--payload", "order", "--cases", "8"])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = robustness::read_csv(&out.path().join("robustness.csv")).unwrap();
    assert_every_case_classified(&rows);
    let checked = rows
        .iter()
        .filter(|row| row.id.codec.format == format && row.id.mode == serbench::arm::Mode::Check);
    assert!(checked.count() > 0, "{rows:?}");
    // The JSON reader of `--data` exists only with the json format's serde_json bytes to feed it.
    if serbench::format::all().iter().any(|known| known.name == "json") {
        assert!(
            rows.iter()
                .any(|row| row.id.codec.format == robustness::DATA_READER.0),
            "{rows:?}"
        );
    }
}

//! `serbench footprint` through the real binary: real cargo builds of the real program in fresh
//! target dirs. Two clean release builds of serbench's dependencies take minutes, so the run is
//! ignored by default: `cargo test --test footprint -- --ignored`. The refusals need no build.

use std::path::Path;
use std::process::{Command, Output};

use serbench::files;
use serbench::schema::footprint::{BASELINE, FootprintRow};

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
        assert_eq!(row.host.build, "portable");
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

/// The fake program: prints the report.json its fake build left beside it, as the real program
/// prints its own report.
const FAKE_PROGRAM: &str = r#"
fn main() {
    let path = std::env::current_exe().unwrap().with_file_name("report.json");
    print!("{}", std::fs::read_to_string(path).unwrap());
}
"#;

/// The fake cargo: checks the arguments `footprint` passes and that its target dir is fresh,
/// "builds" a copy of the fake program padded by a per-format number of bytes, and logs what it
/// did. `cbor` fails to build; `bson` builds a program that reports no format.
const FAKE_CARGO: &str = r#"#!/bin/sh
set -e
log="$(dirname "$0")/builds.log"
[ "$1 $2 $3 $4 $5" = "build --release --locked -p serbench-footprint" ] || { echo "error: args $*" >&2; exit 1; }
[ "$CARGO_PROFILE_RELEASE_STRIP" = symbols ] || { echo "error: not stripped" >&2; exit 1; }
[ -z "$RUSTFLAGS" ] || { echo "error: RUSTFLAGS leaked" >&2; exit 1; }
[ ! -e "$CARGO_TARGET_DIR" ] || { echo "error: target dir not fresh" >&2; exit 1; }
format=baseline; formats='[]'; pad=0
if [ "$6" = --features ]; then format="${7#serbench/}"; format="${format%%,*}"; formats="[\"$format\"]"; fi
# A format builds with its backends' features: cbor with cbor4ii's.
[ "$format" != cbor ] || [ "$7" = serbench/cbor,serbench/cbor4ii ] || { echo "error: cbor's features: $7" >&2; exit 1; }
case "$format" in
  cbor) echo "error[E0000]: fake failure of cbor" >&2; exit 101 ;;
  bson) formats='[]' ;;
  postcard) pad=4096 ;;
  msgpack) pad=10000 ;;
esac
mkdir -p "$CARGO_TARGET_DIR/release"
binary="$CARGO_TARGET_DIR/release/serbench-footprint"
cp "$(dirname "$0")/program" "$binary"
head -c "$pad" /dev/zero >> "$binary"
rounds=1; [ "$format" = baseline ] && rounds=0
printf '{"formats":%s,"round_trips":%s,"rustc":"rustc fake","commit":"fakecommit","build":"portable"}\n' "$formats" "$rounds" > "$CARGO_TARGET_DIR/release/report.json"
echo "$format $(wc -c < "$binary") $CARGO_TARGET_DIR" >> "$log"
"#;

/// The orchestration only, in seconds: `footprint` driven through the real binary with a fake
/// cargo (`$CARGO`, which `footprint` runs as cargo) that copies one small real executable
/// instead of compiling serbench. It proves the arguments and environment each build gets, a
/// fresh target dir per build that is removed afterwards, the sizes read from the binary that
/// was built, the figures over the baseline, a failed build and a program that does not report
/// its format as failed rows beside the others, the rows written and read back, the report
/// section, and the refusal to replace footprint.csv without --replace. It proves nothing
/// about real builds: the ignored test above does.
#[test]
fn the_orchestration_with_a_fake_cargo() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let source = tools.join("program.rs");
    std::fs::write(&source, FAKE_PROGRAM).unwrap();
    let compiled = Command::new("rustc")
        .args(["-C", "strip=symbols", "-o"])
        .arg(tools.join("program"))
        .arg(&source)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    let cargo = tools.join("cargo");
    std::fs::write(&cargo, FAKE_CARGO).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // A folder with results: its report is written again with the footprint section.
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports/x86_64-linux/results.csv");
    std::fs::copy(fixture, out.join("results.csv")).unwrap();
    let footprint = |extra: &[&str]| {
        let mut args = vec![
            "footprint",
            "--runs",
            "2",
            "--source",
            env!("CARGO_MANIFEST_DIR"),
            "--out",
            out.to_str().unwrap(),
        ];
        for format in ["postcard", "cbor", "bson", "msgpack"] {
            args.extend(["--format", format]);
        }
        args.extend(extra);
        Command::new(env!("CARGO_BIN_EXE_serbench"))
            .args(&args)
            .env("CARGO", &cargo)
            .env("RUSTFLAGS", "-C target-cpu=native")
            .output()
            .unwrap()
    };
    let output = footprint(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let log = std::fs::read_to_string(tools.join("builds.log")).unwrap();
    let builds: Vec<(&str, u64, &str)> = log
        .lines()
        .map(|line| {
            let mut fields = line.splitn(3, ' ');
            let format = fields.next().unwrap();
            let bytes = fields.next().unwrap().parse().unwrap();
            (format, bytes, fields.next().unwrap())
        })
        .collect();
    // Each build's two runs back to back; cbor failed to build (so it is not in the log) and
    // bson's program was refused in its first run, so neither is built again.
    let order: Vec<&str> = builds.iter().map(|build| build.0).collect();
    assert_eq!(
        order,
        [
            BASELINE, BASELINE, "postcard", "postcard", "bson", "msgpack", "msgpack"
        ]
    );
    assert!(builds.iter().all(|build| !Path::new(build.2).exists()), "{log}");

    let rows: Vec<FootprintRow> = files::read_complete(&out.join("footprint.csv")).unwrap();
    let by_format = |format: &str| rows.iter().find(|row| row.format == format).unwrap();
    let built = |format: &str| builds.iter().find(|build| build.0 == format).unwrap().1;
    let formats: Vec<&str> = rows.iter().map(|row| row.format.as_str()).collect();
    assert_eq!(formats, [BASELINE, "postcard", "cbor", "bson", "msgpack"]);
    let baseline = by_format(BASELINE);
    assert_eq!((baseline.binary_bytes, baseline.runs), (Some(built(BASELINE)), 2));
    assert_eq!(baseline.binary_bytes_over_baseline, None);
    for (format, pad) in [("postcard", 4096), ("msgpack", 10000)] {
        let row = by_format(format);
        assert_eq!(row.status, "ok", "{row:?}");
        assert_eq!(row.binary_bytes, Some(built(format)));
        assert_eq!(row.binary_bytes_over_baseline, Some(pad));
        // The padding is after the sections: the code is the same program's.
        assert_eq!(row.text_bytes_over_baseline, Some(0));
        assert_eq!(
            (row.host.rustc.as_str(), row.host.commit.as_str()),
            ("rustc fake", "fakecommit")
        );
        let (low, median, high) = (
            row.compile_s_min.unwrap(),
            row.compile_s.unwrap(),
            row.compile_s_max.unwrap(),
        );
        assert!(low <= median && median <= high, "{row:?}");
    }
    let cbor = by_format("cbor");
    assert_eq!(cbor.status, "failed");
    assert!(cbor.note.contains("fake failure of cbor"), "{}", cbor.note);
    let bson = by_format("bson");
    assert_eq!(bson.status, "failed");
    assert!(bson.note.contains("has the formats []"), "{}", bson.note);
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        printed.lines().any(|line| line.starts_with("| `msgpack`")),
        "{printed}"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Footprint"), "{report}");
    assert!(report.contains("- `cbor` failed: "), "{report}");
    assert!(out.join("charts/footprint-binary-x86_64-linux.svg").is_file());
    assert!(out.join("charts/footprint-compile-x86_64-linux.svg").is_file());

    // A second run is refused before any build; --replace moves the first one aside.
    let before = std::fs::read(out.join("footprint.csv")).unwrap();
    let again = footprint(&[]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("already holds a result set (footprint.csv)"),
        "{}",
        stderr(&again)
    );
    assert_eq!(std::fs::read(out.join("footprint.csv")).unwrap(), before);
    assert_eq!(std::fs::read_to_string(tools.join("builds.log")).unwrap(), log);
    let replaced = footprint(&["--replace"]);
    assert!(replaced.status.success(), "{}", stderr(&replaced));
    let kept: Vec<_> = std::fs::read_dir(out.join("replaced")).unwrap().collect();
    assert_eq!(kept.len(), 1);
}

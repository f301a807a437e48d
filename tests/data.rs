//! `--data` through the real binary: a user's NDJSON file measured, sized, dumped and checked;
//! the schema written; hostile files refused in one line; and `dump --framing`.

mod common;
use common::{output_within, serbench, stderr};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serbench::arm::Framing;
use serbench::schema::results::{self, ResultRow};
use serbench::schema::sizes::SizeRow;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Asserts exit status 2 with one line on stderr holding `expected`.
fn assert_refused(output: &Output, expected: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    assert_eq!(message.trim_end().lines().count(), 1, "one line: {message}");
}

/// Asserts exit status 1 (the work failed) with `expected` on stderr.
fn assert_failed(output: &Output, expected: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains(expected), "{message:?} lacks {expected:?}");
}

/// A user's orders, one per line: a nullable note, an optional coupon, nested items, a map of
/// tags keyed by data, an integer that is a float elsewhere.
const ORDERS: &str = include_str!("fixtures/orders.ndjson");

fn orders(dir: &Path) -> PathBuf {
    let path = dir.join("orders.ndjson");
    std::fs::write(&path, ORDERS).unwrap();
    path
}

fn list(args: &[&str]) -> serde_json::Value {
    let output = serbench(&[&["list", "--json"], args].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn a_users_ndjson_file_runs_on_every_format_that_can_carry_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = orders(dir.path());
    let file = file.to_str().unwrap();
    let listing = list(&["--data", file]);
    let arms = listing["arms"].as_array().unwrap();
    assert!(
        arms.iter()
            .all(|arm| arm["payload"] == "data:orders" && arm["mode"] == "dynamic")
    );
    let formats: std::collections::BTreeSet<&str> =
        arms.iter().map(|arm| arm["format"].as_str().unwrap()).collect();
    for format in ["json", "bson", "msgpack", "avro", "protobuf"] {
        assert!(
            formats.contains(format),
            "{format} carries the orders: {formats:?}"
        );
    }
    // Every format says something: arms, or the reason it has none.
    let unsupported = listing["unsupported"].as_array().unwrap();
    for format in serbench::format::all() {
        let explained = unsupported
            .iter()
            .any(|entry| entry["format"] == format.name && !entry["reason"].as_str().unwrap().is_empty());
        assert!(
            formats.contains(format.name) || explained,
            "{} says nothing",
            format.name
        );
    }
    let reason = |format: &str| {
        unsupported
            .iter()
            .find(|entry| entry["format"] == format)
            .map(|entry| entry["reason"].as_str().unwrap().to_string())
    };
    assert!(
        reason("bincode")
            .unwrap()
            .starts_with("no value tree: it decodes only into compiled Rust types (--typed")
    );
    assert_eq!(
        reason("dbus").unwrap(),
        "$.coupon: absent from some objects (a D-Bus struct has every field)"
    );

    // With --payload, the data joins the selection.
    let both = list(&["--data", file, "--payload", "order", "--format", "msgpack"]);
    let payloads: std::collections::BTreeSet<&str> = both["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arm| arm["payload"].as_str().unwrap())
        .collect();
    assert_eq!(payloads, ["data:orders", "order"].into());

    let out = dir.path().join("out");
    let output = serbench(&[
        "run",
        "--data",
        file,
        "--profile",
        "smoke",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    assert_eq!(rows.len(), arms.len());
    for row in &rows {
        assert_eq!(
            (row.arm.codec.payload.as_str(), row.records),
            ("data:orders", 3),
            "{row:?}"
        );
        assert_eq!(row.status, "ok", "{row:?}");
    }
    let sizes: Vec<SizeRow> = serbench::files::read_complete(&out.join("sizes.csv")).unwrap();
    let json_array = sizes
        .iter()
        .find(|row| {
            row.codec.format == "json"
                && row.codec.backend == "serde_json"
                && row.codec.framing == Framing::Array
        })
        .unwrap();
    assert_eq!(json_array.ratio_to_json, Some(1.0));
    assert!(
        std::fs::read_to_string(out.join("report.md"))
            .unwrap()
            .contains(r"## data\:orders")
    );
}

#[test]
fn data_sizes_are_the_same_bytes_every_run() {
    // Wide objects and maps: where a library keeps them in a hash map, sizes.csv must not
    // follow its order.
    let dir = tempfile::tempdir().unwrap();
    let wide: serde_json::Map<String, serde_json::Value> = (0..40)
        .map(|index| (format!("k{index:02}"), serde_json::json!(index)))
        .collect();
    let records: Vec<String> = (0..3)
        .map(|index| {
            serde_json::json!({"id": index, "wide": wide, "counts": {"a-1": index, "b-2": 2, "c-3": 3}})
                .to_string()
        })
        .collect();
    let file = dir.path().join("wide.ndjson");
    std::fs::write(&file, records.join("\n")).unwrap();
    let sizes = |name: &str| {
        let out = dir.path().join(name);
        let output = serbench(&[
            "sizes",
            "--data",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        std::fs::read(out.join("sizes.csv")).unwrap()
    };
    let first = sizes("a");
    assert_eq!(first, sizes("b"));
    assert_eq!(first, sizes("c"));
    let rows: Vec<SizeRow> = serbench::files::read_complete(&dir.path().join("a/sizes.csv")).unwrap();
    let row = |format: &str, backend: &str| {
        rows.iter()
            .find(|row| row.codec.format == format && row.codec.backend == backend)
            .unwrap_or_else(|| panic!("{format}/{backend}"))
    };
    // Protobuf writes its map entries sorted; the two that cannot say why.
    assert_eq!(row("protobuf", "prost").status, "ok");
    assert!(
        row("avro", "apache-avro").note.contains("HashMap"),
        "{:?}",
        row("avro", "apache-avro")
    );
    assert!(
        row("json", "simd-json")
            .note
            .contains("more than 32 keys ($[0].wide)"),
        "{:?}",
        row("json", "simd-json")
    );
    assert!(row("avro", "serde_avro_fast").encoded_bytes.is_some());
}

#[test]
fn schema_writes_the_avro_protobuf_and_summary_files_and_keeps_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = orders(dir.path());
    let out = dir.path().join("schema");
    let args = [
        "schema",
        "--data",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let output = serbench(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let avsc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("orders.avsc")).unwrap()).unwrap();
    assert_eq!(avsc["type"], "array");
    let proto = std::fs::read_to_string(out.join("orders.proto")).unwrap();
    assert!(
        proto.contains("message Records {\n  repeated Record records = 1;\n}"),
        "{proto}"
    );
    assert!(proto.contains("  optional string coupon = 1;"), "{proto}");
    let summary = std::fs::read_to_string(out.join("orders.schema.txt")).unwrap();
    assert!(
        summary.contains("$.tags: the key \"gift-wrap\" is not a field name"),
        "{summary}"
    );
    // Its typed records keep the key "gift-wrap", which Avro cannot name: no typed schema, and
    // the summary says why.
    assert!(
        summary.contains("no orders.typed.avsc: $.tags[\"gift-wrap\"]"),
        "{summary}"
    );
    // A file Avro carries typed: the typed arms' schema is the generated crate's, byte for byte,
    // and writes the always-null `gone` as a union, where the value trees' schema has `null`.
    let nulls = dir.path().join("nulls.ndjson");
    std::fs::write(&nulls, "{\"id\":1,\"gone\":null}\n{\"id\":2,\"gone\":null}\n").unwrap();
    let nulls_out = dir.path().join("nulls-schema");
    let crate_dir = dir.path().join("crate");
    for command in [
        [
            "schema",
            "--data",
            nulls.to_str().unwrap(),
            "--out",
            nulls_out.to_str().unwrap(),
        ],
        [
            "gen",
            "--data",
            nulls.to_str().unwrap(),
            "--out",
            crate_dir.to_str().unwrap(),
        ],
    ] {
        let output = serbench(&command);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let typed = std::fs::read_to_string(nulls_out.join("nulls.typed.avsc")).unwrap();
    assert_eq!(
        typed,
        std::fs::read_to_string(crate_dir.join("schemas/data_0.avsc")).unwrap()
    );
    let field = |text: &str| -> serde_json::Value {
        let schema: serde_json::Value = serde_json::from_str(text).unwrap();
        let record = match schema["type"].as_str() {
            Some("array") => schema["items"].clone(),
            _ => schema["fields"][0]["type"]["items"].clone(),
        };
        let fields = record["fields"].as_array().unwrap().clone();
        fields.into_iter().find(|field| field["name"] == "gone").unwrap()["type"].clone()
    };
    assert_eq!(field(&typed), serde_json::json!(["null", "string"]));
    let dynamic = std::fs::read_to_string(nulls_out.join("nulls.avsc")).unwrap();
    assert_eq!(field(&dynamic), serde_json::json!("null"));
    // Again: refused, the files untouched; with --replace, the old ones are moved aside.
    assert_refused(
        &serbench(&args),
        "already holds orders.avsc, orders.proto, orders.schema.txt",
    );
    let output = serbench(&[&args[..], &["--replace"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let replaced: Vec<_> = std::fs::read_dir(out.join("replaced")).unwrap().collect();
    assert_eq!(replaced.len(), 1);
}

#[test]
fn check_accepts_the_same_data_and_names_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let file = orders(dir.path());
    let file = file.to_str().unwrap();
    for (format, framing) in [
        ("json", "ndjson"),
        ("msgpack", "document"),
        ("avro", "document"),
        ("protobuf", "document"),
        ("bson", "document"),
    ] {
        let bytes = dir.path().join(format!("{format}.bin"));
        let bytes = bytes.to_str().unwrap();
        let dump = serbench(&[
            "dump",
            "--format",
            format,
            "--framing",
            framing,
            "--data",
            file,
            "-o",
            bytes,
        ]);
        assert!(dump.status.success(), "{format}: {}", stderr(&dump));
        let check = serbench(&[
            "check",
            "--format",
            format,
            "--framing",
            framing,
            "--data",
            file,
            bytes,
        ]);
        assert!(check.status.success(), "{format}: {}", stderr(&check));
        assert!(
            stdout(&check).contains("the same data as data:orders"),
            "{}",
            stdout(&check)
        );
    }
    // The same JSON with one value changed: exit 1, the path and both values.
    let changed = dir.path().join("changed.ndjson");
    std::fs::write(&changed, ORDERS.replace("\"qty\": 4", "\"qty\": 5")).unwrap();
    let check = serbench(&[
        "check",
        "--format",
        "json",
        "--framing",
        "ndjson",
        "--data",
        file,
        changed.to_str().unwrap(),
    ]);
    assert_failed(
        &check,
        "differs from data:orders at $[2].items[1].qty: expected 4, found 5",
    );
    // Bytes that do not decode: exit 1, why.
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, [0xFF; 9]).unwrap();
    let check = serbench(&[
        "check",
        "--format",
        "protobuf",
        "--data",
        file,
        garbage.to_str().unwrap(),
    ]);
    assert_failed(&check, "protobuf/prost cannot decode it");
    assert!(
        stderr(&check).contains("protobuf/prost cannot decode it"),
        "{}",
        stderr(&check)
    );
    // Usage errors: exit 2.
    assert_refused(
        &serbench(&[
            "check",
            "--format",
            "json",
            "--backend",
            "nope",
            "--data",
            file,
            garbage.to_str().unwrap(),
        ]),
        "unknown backend 'nope' [possible values: serde_json, simd-json, sonic-rs]",
    );
    assert_refused(
        &serbench(&[
            "check",
            "--format",
            "bincode",
            "--data",
            file,
            garbage.to_str().unwrap(),
        ]),
        "bincode cannot carry data:orders: no value tree: it decodes only into compiled Rust types",
    );
    // A built-in payload too.
    let order = dir.path().join("order.bin");
    let dump = serbench(&[
        "dump",
        "--format",
        "protobuf",
        "--payload",
        "order",
        "-o",
        order.to_str().unwrap(),
    ]);
    assert!(dump.status.success(), "{}", stderr(&dump));
    let check = serbench(&[
        "check",
        "--format",
        "protobuf",
        "--payload",
        "order",
        order.to_str().unwrap(),
    ]);
    assert!(check.status.success(), "{}", stderr(&check));
}

#[test]
fn dump_writes_each_json_framing_of_a_batch_payload() {
    let framed = |framing: &str| {
        serbench(&[
            "dump",
            "--format",
            "json",
            "--payload",
            "vec-small",
            "--framing",
            framing,
        ])
    };
    let ndjson = framed("ndjson");
    assert!(ndjson.status.success(), "{}", stderr(&ndjson));
    assert_eq!(stdout(&ndjson).lines().count(), 32);
    let array = stdout(&framed("array"));
    assert!(array.starts_with("[{") && array.ends_with("}]"), "{array}");
    let document = stdout(&framed("document"));
    assert!(document.starts_with("{\"items\":[{"), "{document}");
    // Framings only a batch payload has.
    assert_refused(
        &serbench(&[
            "dump",
            "--format",
            "json",
            "--payload",
            "order",
            "--framing",
            "ndjson",
        ]),
        "unknown framing 'ndjson' [possible values: document]",
    );
}

#[test]
fn hostile_data_files_are_refused_in_one_line_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    let run = |path: &str| serbench(&["list", "--data", path]);
    let malformed = write("bad.json", b"{\"a\": [1, 2,\n  \"b\": }");
    assert_refused(&run(&malformed), &format!("{malformed}:2:6: expected `,` or `]`"));
    let deep = write(
        "deep.json",
        ("[".repeat(100_000) + &"]".repeat(100_000)).as_bytes(),
    );
    assert_refused(
        &run(&deep),
        &format!("{deep}:1:128: nested deeper than 128 arrays or objects"),
    );
    let line = write("lines.ndjson", b"{\"a\": 1}\n{\"a\": 9223372036854775808}\n");
    assert_refused(
        &run(&line),
        &format!("{line}:2:25: $.a: the integer 9223372036854775808 is beyond"),
    );
    let empty = write("empty.json", b"[]");
    assert_refused(&run(&empty), "the file holds no records");
    let binary = write("binary.json", &[0x00, 0x9F, 0x92, 0x96]);
    assert_refused(&run(&binary), &format!("{binary}:1:1: expected value"));
    assert_refused(&run("/dev/zero"), "/dev/zero: not a regular file");
    assert_refused(
        &run(&dir.path().join("missing.json").display().to_string()),
        "missing.json: No such file",
    );

    // A 1 GB sparse file is refused by its size, before a byte is read.
    let sparse = dir.path().join("sparse.json");
    std::fs::File::create(&sparse).unwrap().set_len(1 << 30).unwrap();
    let started = std::time::Instant::now();
    let output = run(sparse.to_str().unwrap());
    assert_refused(
        &output,
        "1073741824 bytes is more than the data limit of 64 MiB (--max-data-mib raises it",
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn workers_of_the_full_profile_read_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let file = orders(dir.path());
    let out = dir.path().join("out");
    let output = serbench(&[
        "run",
        "--data",
        file.to_str().unwrap(),
        "--format",
        "msgpack",
        "--op",
        "decode",
        "--profile",
        "full",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<ResultRow> = results::read(&out.join("results.csv")).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].arm.codec.payload.as_str(), rows[0].status.as_str()),
        ("data:orders", "ok"),
        "{:?}",
        rows[0]
    );
    assert!(rows[0].reps.unwrap() >= serbench::measure::Profile::FULL.min_reps);
}

/// One empty object is data too: every format sizes it or says why not, none panics (D-Bus's
/// root was a dict there, where its code expected a struct).
#[test]
fn an_empty_object_is_sized_by_every_format_or_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.json");
    std::fs::write(&file, "{}").unwrap();
    let out = dir.path().join("out");
    let output = serbench(&[
        "sizes",
        "--data",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<SizeRow> = serbench::files::read_complete(&out.join("sizes.csv")).unwrap();
    let dbus: Vec<&SizeRow> = rows.iter().filter(|row| row.codec.format == "dbus").collect();
    assert!(
        !dbus.is_empty() && dbus.iter().all(|row| row.status == "ok"),
        "{dbus:?}"
    );
    assert!(rows.iter().all(|row| row.status == "ok"), "{rows:?}");
}

/// One object of 100,000 keys: sonic-rs's tree equality looked each key up in the other tree,
/// so proving its round trip took hours; the proof is linear now (seconds in a debug build).
#[test]
fn an_object_of_100000_keys_is_proven_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wide.json");
    let members: Vec<String> = (0..100_000).map(|key| format!("\"k{key}\": {key}")).collect();
    std::fs::write(&file, format!("{{{}}}", members.join(", "))).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_serbench"));
    command.args([
        "run",
        "--profile",
        "smoke",
        "--format",
        "json",
        "--backend",
        "sonic-rs",
    ]);
    command.args(["--op", "decode", "--data"]).arg(&file);
    command.arg("--out").arg(dir.path().join("out"));
    let output = output_within(command, Duration::from_secs(120)).expect("the proof took minutes");
    assert!(output.status.success(), "{}", stderr(&output));
    let rows: Vec<ResultRow> = results::read(&dir.path().join("out").join("results.csv")).unwrap();
    assert!(rows.len() == 1 && rows[0].status == "ok", "{rows:?}");
}

/// Out of memory is one line, never an abort (issue 27, #12): a file that could not be read in
/// the memory left is refused before it is read (exit 2), and memory spent later ends the run
/// with exit 1 (std aborted with SIGABRT). `ulimit -v` sets the limit, as the tester did.
#[test]
fn running_out_of_memory_is_one_line_and_never_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mid.ndjson");
    let lines: String = (0..40_000)
        .map(|id| {
            format!("{{\"id\": {id}, \"name\": \"user{id}\", \"tags\": [\"a\", \"b\"], \"score\": {id}.5}}\n")
        })
        .collect();
    std::fs::write(&file, lines).unwrap();
    let under = |kib: u32| {
        let script = format!("ulimit -v {kib}; exec \"$0\" run --profile smoke --data \"$1\" --out \"$2\"");
        // /bin/sh by its path: a sandboxed Nix build has it, and no `sh` on its PATH.
        Command::new("/bin/sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_serbench")])
            .arg(&file)
            .arg(dir.path().join(format!("out-{kib}")))
            .output()
            .unwrap()
    };
    // 2.9 MB may take 100 times that to read; 200 MB of address space is less.
    let refused = under(200_000);
    assert_refused(
        &refused,
        "this process may still use (the address-space limit, ulimit -v)",
    );
    // Enough to read the file, not to prepare every format's arms.
    let spent = under(500_000);
    let message = stderr(&spent);
    assert_eq!(spent.status.code(), Some(1), "{message}");
    assert!(
        message.ends_with("fewer formats or a smaller --data file need less)\n"),
        "{message}"
    );
    assert!(
        message
            .lines()
            .last()
            .unwrap()
            .starts_with("serbench: out of memory: a request of ")
    );
}

#[test]
fn payloads_whose_names_differ_only_in_unsafe_characters_keep_their_own_charts() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run".to_string()];
    for (stem, qty) in [("注文", 1), ("顧客", 2)] {
        let path = dir.path().join(format!("{stem}.json"));
        std::fs::write(&path, format!(r#"[{{"qty": {qty}}}, {{"qty": 3}}]"#)).unwrap();
        args.extend(["--data".to_string(), path.to_str().unwrap().to_string()]);
    }
    let out = dir.path().join("out");
    args.extend(
        [
            "--format",
            "json",
            "--backend",
            "serde_json",
            "--op",
            "decode",
            "--profile",
            "smoke",
        ]
        .map(String::from),
    );
    args.extend(["--out".to_string(), out.to_str().unwrap().to_string()]);
    let output = serbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(output.status.success(), "{}", stderr(&output));

    // Each payload's section links its own chart files, and they exist.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let charts_of = |payload: &str| -> Vec<String> {
        let section = report
            .split("\n## ")
            .find(|section| section.starts_with(payload))
            .unwrap_or_else(|| panic!("no section {payload}"));
        section
            .split("(charts/")
            .skip(1)
            .map(|rest| rest[..rest.find(')').unwrap()].to_string())
            .collect()
    };
    // Headings hold the names as escaped Markdown (`:` backslash-escaped).
    let (first, second) = (charts_of(r"data\:注文"), charts_of(r"data\:顧客"));
    assert!(!first.is_empty() && !second.is_empty(), "{report}");
    assert!(
        first.iter().all(|chart| !second.contains(chart)),
        "{first:?} {second:?}"
    );
    for chart in first.iter().chain(&second) {
        assert!(out.join("charts").join(chart).is_file(), "{chart}");
    }
}

/// A result set names the files it was measured from; `--resume` with the same bytes extends
/// it, with other bytes under the same name it is refused and the set is kept.
#[test]
fn resume_extends_a_set_only_from_the_same_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.json");
    std::fs::write(&file, r#"[{"qty": 1}, {"qty": 2}]"#).unwrap();
    let out = dir.path().join("out");
    let run = |op: &str, extra: &[&str]| {
        serbench(
            &[
                &[
                    "run",
                    "--data",
                    file.to_str().unwrap(),
                    "--format",
                    "json",
                    "--backend",
                    "serde_json",
                    "--op",
                    op,
                    "--profile",
                    "smoke",
                    "--out",
                    out.to_str().unwrap(),
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let first = run("decode", &[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let sources: Vec<serbench::schema::sources::SourceRow> =
        serbench::files::read_complete(&out.join("sources.csv")).unwrap();
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert_eq!(
        (sources[0].payload.as_str(), sources[0].bytes),
        ("data:events", 24)
    );

    let same = run("encode", &["--resume"]);
    assert!(same.status.success(), "{}", stderr(&same));
    let before = std::fs::read(out.join("results.csv")).unwrap();

    std::fs::write(&file, r#"[{"qty": 7}, {"qty": 8}, {"qty": 9}]"#).unwrap();
    let other = run("roundtrip", &["--resume"]);
    assert_refused(&other, "data:events was measured from");
    assert_eq!(
        std::fs::read(out.join("results.csv")).unwrap(),
        before,
        "the set is kept"
    );
}

//! `--typed` and `serbench gen` through the real binary: the crate generated for a data file, its
//! real cargo build (cached), and the typed arms it adds, each proven before it is timed.
//!
//! The build takes a minute or two here (serbench's library in the normal, non-test feature set,
//! then the generated crate), so the test runs only with `SERBENCH_TYPED_BUILD=1`, which `.ci/run`
//! sets; without it the test says it skipped.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::stderr;

/// Nested arrays and records, a map (`--map`), optional and null fields, keys Rust cannot spell
/// (`3ds`, `type`, `content-type`, `über`), two keys that map to one name (`userId`, `user_id`),
/// and records under keys that are names of Rust's prelude (`into`, `sized`, `clone`), which derive
/// macros use unqualified, and `into`, a method of every value.
fn events() -> String {
    (0..40)
        .map(|index| {
            let coupon = if index % 3 == 0 { format!(r#","coupon":"C{index}""#) } else { String::new() };
            let referrer = if index % 4 == 0 { "null".to_string() } else { format!(r#""r{index}""#) };
            format!(
                r#"{{"id":{index},"type":"view","3ds":{},"userId":"u{index}","user_id":{index},"über":1.5,"price":{}.25,"items":[{{"sku":"s{index}","qty":2,"tags":["a","b"]}}],"headers":{{"content-type":"json"}},"counts":{{"k{index}":{index}}},"into":{{"sized":{{"v":{index}}}}},"clone":{{"iterator":"i{index}"}},"referrer":{referrer}{coupon}}}"#,
                index % 2 == 0,
                index * 3
            ) + "\n"
        })
        .collect()
}

/// Keys every schema language can name: nested records and lists, a null-only field, floats
/// some of which are whole, an optional list, a string JSON writes with escapes. Avro carries this
/// one typed (not `events`).
fn orders() -> String {
    (0..25)
        .map(|index| {
            let notes = if index % 5 == 0 { r#","notes":["gift"]"# } else { "" };
            format!(
                r#"{{"order_id":{index},"total":{}.{},"paid":{},"gone":null,"memo":"a \"quoted\" {index}","lines":[{{"sku":"s{index}","qty":{index}}}],"ship":{{"city":"c{index}","zip":null}}{notes}}}"#,
                index * 7,
                if index % 2 == 0 { "0" } else { "5" },
                index % 3 == 0
            ) + "\n"
        })
        .collect()
}

fn serbench(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(args)
        .env("SERBENCH_CACHE", cache)
        .output()
        .expect("serbench runs")
}

/// What a command printed and, where it names a failed build's log, the log's errors.
fn with_build_log(output: &Output) -> String {
    let printed = stderr(output);
    let log = printed
        .rsplit_once("see ")
        .map(|(_, path)| path.trim())
        .filter(|path| path.ends_with("build.log"))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    let errors: Vec<&str> = log
        .lines()
        .skip_while(|line| !line.starts_with("error"))
        .take(40)
        .collect();
    format!("{printed}\n{}", errors.join("\n"))
}

/// Whether the test skips, saying so: building a generated crate takes a minute or two, so only
/// with `SERBENCH_TYPED_BUILD=1`.
fn skipped_without_typed_build() -> bool {
    let skipped = std::env::var_os("SERBENCH_TYPED_BUILD").is_none();
    if skipped {
        eprintln!("skipped: set SERBENCH_TYPED_BUILD=1 to build a generated crate (a minute or two)");
    }
    skipped
}

/// The results.csv rows as maps from column to value.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("results.csv reads");
    let header = reader.headers().expect("a header").clone();
    reader
        .records()
        .map(|record| {
            let record = record.expect("a row");
            header
                .iter()
                .zip(record.iter())
                .map(|(column, value)| (column.to_string(), value.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn typed_data_is_generated_built_once_and_measured_beside_the_dynamic_arms() {
    if skipped_without_typed_build() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let file = dir.path().join("events.ndjson");
    std::fs::write(&file, events()).unwrap();
    let file = file.to_str().unwrap();
    let orders_file = dir.path().join("orders.ndjson");
    std::fs::write(&orders_file, orders()).unwrap();
    let data = [
        "--data",
        file,
        "--data",
        orders_file.to_str().unwrap(),
        "--map",
        "$.counts",
    ];

    // gen writes the crate, readable, and refuses a folder that is not empty.
    let out = dir.path().join("crate");
    let generated = serbench(
        &cache,
        &[&["gen", "--out", out.to_str().unwrap()], &data[..]].concat(),
    );
    assert!(generated.status.success(), "{}", stderr(&generated));
    let main = std::fs::read_to_string(out.join("src/main.rs")).unwrap();
    for expected in [
        "#[serde(rename = \"3ds\")]\n        #[n(0)]\n        pub _3ds: bool,",
        "#[serde(rename = \"type\")]",
        "pub type_: String,",
        "#[serde(rename = \"userId\")]",
        "pub user_id: String,",
        "pub user_id_2: i64,",
        "#[serde(rename = \"\\u{fc}ber\")]",
        "pub u00fc_ber: f64,",
        "pub coupon: Option<String>,",
        "pub referrer: Option<String>,",
        "pub counts: BTreeMap<String, i64>,",
        "pub items: Vec<Items>,",
        "pub content_type: String,",
    ] {
        assert!(main.contains(expected), "{expected:?} not in:\n{main}");
    }
    // One build script runs the steps of every format that generates code from a schema file:
    // prost-build's, flatc's and capnpc's.
    let script = std::fs::read_to_string(out.join("build.rs")).unwrap();
    for step in ["capnp::run();", "flatbuffers::run();", "protobuf::run();"] {
        assert!(script.contains(step), "{step:?} not in:\n{script}");
    }
    let schema = std::fs::read_to_string(out.join("capnp/data_0.capnp")).unwrap();
    assert!(schema.contains("  n3ds @0 :Bool;"), "{schema}");
    let fbs = std::fs::read_to_string(out.join("fbs/data_0.fbs")).unwrap();
    for expected in [
        "table Record {\n  /// The key \"3ds\".\n  _3ds: bool;\n",
        "  counts: [RecordCountsEntry] (required);\n  coupon: string;\n",
        "  referrer: string;\n",
        "table RecordCountsEntry {\n  key: string (key);\n  value: long;\n}",
    ] {
        assert!(fbs.contains(expected), "{expected:?} not in:\n{fbs}");
    }
    let again = serbench(
        &cache,
        &[&["gen", "--out", out.to_str().unwrap()], &data[..]].concat(),
    );
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("not empty"), "{}", stderr(&again));

    // The first --typed command builds; the listing has the typed arms and every other reason.
    let list = serbench(&cache, &[&["list", "--typed"], &data[..]].concat());
    assert!(list.status.success(), "{}", with_build_log(&list));
    assert!(
        stderr(&list).contains("building the typed crate of data:events"),
        "{}",
        stderr(&list)
    );
    let listing = String::from_utf8_lossy(&list.stdout).into_owned();
    let typed_arm_of = |payload: &str, format: &str, backend: &str| {
        listing.lines().any(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.first() == Some(&format)
                && words.get(1) == Some(&backend)
                && words.contains(&payload)
                && words.contains(&"decode")
                && words.contains(&"typed")
        })
    };
    let typed_arm = |format: &str, backend: &str| typed_arm_of("data:events", format, backend);
    for backend in ["serde_avro_fast", "apache-avro"] {
        assert!(
            typed_arm_of("data:orders", "avro", backend),
            "no typed decode of avro/{backend} on data:orders in:\n{listing}"
        );
    }
    for (format, backend) in [
        ("json", "serde_json"),
        ("json", "simd-json"),
        ("json", "sonic-rs"),
        ("bincode", "bincode"),
        ("bitcode", "bitcode"),
        ("postcard", "postcard"),
        ("bson", "bson"),
        ("msgpack", "rmp-serde"),
        ("cbor", "ciborium"),
        ("cbor", "minicbor"),
        ("borsh", "borsh"),
        ("protobuf", "prost"),
        ("flatbuffers", "flatbuffers"),
        ("fory", "fory"),
        ("rkyv", "rkyv"),
        ("capnp", "capnp"),
    ] {
        assert!(
            typed_arm(format, backend),
            "no typed decode of {format}/{backend} in:\n{listing}"
        );
    }
    for (format, operation, reason) in [
        ("dbus", "*", "$.coupon: D-Bus has no null"),
        ("csv", "*", "CSV cannot hold a nested record in a cell"),
        ("avro", "*", "$[\"3ds\"]: \"3ds\" is not an Avro field name"),
    ] {
        let listed = listing.lines().any(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.starts_with(&[format, "*", "data:events", operation, "typed"]) && line.contains(reason)
        });
        assert!(listed, "no {format} line with {reason:?} in:\n{listing}");
    }

    // A second command on data of the same schema builds nothing.
    let cached = serbench(&cache, &[&["list", "--typed"], &data[..]].concat());
    assert!(cached.status.success(), "{}", stderr(&cached));
    assert!(!stderr(&cached).contains("building"), "{}", stderr(&cached));
    // The same schema in a file of another name is another crate (the name is in its
    // comments, and the key is every byte of it: issue 41): built anew, never the first's binary.
    let renamed = dir.path().join("events-tuesday.ndjson");
    std::fs::copy(file, &renamed).unwrap();
    let mut other = data;
    other[1] = renamed.to_str().unwrap();
    let same_schema = serbench(&cache, &[&["list", "--typed"], &other[..]].concat());
    assert!(same_schema.status.success(), "{}", stderr(&same_schema));
    assert!(
        stderr(&same_schema).contains("building"),
        "{}",
        stderr(&same_schema)
    );
    assert!(String::from_utf8_lossy(&same_schema.stdout).contains("data:events-tuesday"));

    // dump and check through the typed arms: protobuf carries `events` only typed (no .proto can
    // name its keys), so these bytes come from the generated prost messages; a cut copy is refused.
    // One file is another schema set, so this builds a second crate.
    let one = [data[0], data[1], data[4], data[5]];
    let dumped = serbench(
        &cache,
        &[&["dump", "--typed", "--format", "protobuf"], &one[..]].concat(),
    );
    assert!(dumped.status.success(), "{}", stderr(&dumped));
    assert!(!dumped.stdout.is_empty());
    let bytes = dir.path().join("events.pb");
    std::fs::write(&bytes, &dumped.stdout).unwrap();
    let check = |path: &Path| {
        serbench(
            &cache,
            &[
                &["check", "--typed", "--format", "protobuf"],
                &one[..],
                &[path.to_str().unwrap()],
            ]
            .concat(),
        )
    };
    let checked = check(&bytes);
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert!(
        String::from_utf8_lossy(&checked.stdout).contains("the same data as data:events"),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
    let cut = dir.path().join("cut.pb");
    std::fs::write(&cut, &dumped.stdout[..dumped.stdout.len() - 3]).unwrap();
    assert_eq!(check(&cut).status.code(), Some(1), "{}", stderr(&check(&cut)));

    // A smoke run: every typed arm proven and measured, beside the dynamic ones.
    let results = dir.path().join("results");
    let run = serbench(
        &cache,
        &[
            &[
                "run",
                "--profile",
                "smoke",
                "--typed",
                "--out",
                results.to_str().unwrap(),
            ],
            &data[..],
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let rows = rows(&results.join("results.csv"));
    let typed: Vec<&BTreeMap<String, String>> = rows.iter().filter(|row| row["mode"] == "typed").collect();
    let dynamic = rows.iter().filter(|row| row["mode"] == "dynamic").count();
    assert!(
        typed.len() >= 30 && dynamic >= 10,
        "{} typed, {dynamic} dynamic rows",
        typed.len()
    );
    for row in &typed {
        assert!(
            ["data:events", "data:orders"].contains(&row["payload"].as_str()),
            "{row:?}"
        );
        assert_eq!(row["status"], "ok", "{row:?}");
    }

    // The zero-copy arms read the generated types in place, proven against the owned folds, and
    // update the first required integer (`id`, `order_id`).
    for payload in ["data:events", "data:orders"] {
        for operation in ["access-all", "access-partial", "update"] {
            assert!(
                typed.iter().any(|row| row["payload"] == payload
                    && row["format"] == "rkyv"
                    && row["operation"] == operation),
                "no typed rkyv {operation} row of {payload}"
            );
        }
    }

    // The borrowed twins decode with every string pointing into the input (proven before timing).
    let borrowed = |payload: &str, format: &str, backend: &str| {
        rows.iter().any(|row| {
            row["payload"] == payload
                && row["format"] == format
                && row["backend"] == backend
                && row["mode"] == "borrowed"
                && row["status"] == "ok"
        })
    };
    for (format, backend) in [
        ("json", "serde_json"),
        ("json", "simd-json"),
        ("bincode", "bincode"),
        ("bitcode", "bitcode"),
        ("postcard", "postcard"),
        ("bson", "bson"),
        ("msgpack", "rmp-serde"),
        ("cbor", "minicbor"),
    ] {
        assert!(
            borrowed("data:events", format, backend),
            "no borrowed {format}/{backend} row"
        );
    }
    assert!(borrowed("data:orders", "avro", "serde_avro_fast"));
    // `memo` has escaped quotes: simd-json unescapes in its own buffer and borrows from there;
    // serde_json and sonic-rs unescape into a copy and say so.
    assert!(borrowed("data:orders", "json", "simd-json"));
    assert!(!borrowed("data:orders", "json", "serde_json"));
    for backend in ["serde_json", "sonic-rs"] {
        let listed = listing.lines().any(|line| {
            line.split_whitespace()
                .collect::<Vec<_>>()
                .starts_with(&["json", backend, "data:orders"])
                && line.contains("borrowed")
                && line.contains("written with an escape")
        });
        assert!(listed, "no escape reason for json/{backend} in:\n{listing}");
    }

    // Cap'n Proto through the generated .capnp: every arm unpacked, the update in place in the
    // received bytes, and the codec packed.
    for payload in ["data:events", "data:orders"] {
        for (variant, operation) in [
            ("", "encode"),
            ("", "decode"),
            ("", "access-all"),
            ("", "access-partial"),
            ("", "update"),
            ("packed", "encode"),
            ("packed", "decode"),
            ("packed", "roundtrip"),
        ] {
            assert!(
                typed.iter().any(|row| row["payload"] == payload
                    && row["format"] == "capnp"
                    && row["variant"] == variant
                    && row["operation"] == operation),
                "no typed capnp[{variant}] {operation} row of {payload}"
            );
        }
    }

    // FlatBuffers has every typed arm but update, read through flatc's tables of the generated
    // .fbs, the accesses proven against the owned folds.
    for payload in ["data:events", "data:orders"] {
        for operation in ["encode", "decode", "access-all", "access-partial"] {
            assert!(
                typed.iter().any(|row| row["payload"] == payload
                    && row["format"] == "flatbuffers"
                    && row["operation"] == operation
                    && row["status"] == "ok"),
                "no typed flatbuffers {operation} row of {payload}"
            );
        }
    }
    assert!(
        !typed
            .iter()
            .any(|row| row["format"] == "flatbuffers" && row["operation"] == "update")
    );

    // The typed Avro bytes are the dynamic ones (a record of one array is written as the array),
    // but for the always-null fields `gone` and `ship.zip`: the generated `Option<String>` is a
    // union there, one byte per value, where the dynamic schema has `null`, no byte.
    let avro_bytes = |mode: &str| {
        rows.iter()
            .find(|row| {
                row["payload"] == "data:orders"
                    && row["format"] == "avro"
                    && row["backend"] == "serde_avro_fast"
                    && row["operation"] == "encode"
                    && row["mode"] == mode
            })
            .map(|row| row["encoded_bytes"].parse::<usize>().expect("a size"))
    };
    assert!(avro_bytes("typed").is_some(), "no typed avro encode row");
    assert_eq!(
        avro_bytes("typed"),
        avro_bytes("dynamic").map(|bytes| bytes + 2 * 25)
    );

    // Protobuf's wire has field numbers, not names: the typed messages, named as the generated
    // structs, carry `events` (whose keys `3ds`, `über` no .proto can name, so it has no dynamic
    // protobuf arm) and are byte for byte the dynamic ones on `orders`.
    for payload in ["data:events", "data:orders"] {
        let prost_bytes = |mode: &str| {
            rows.iter()
                .find(|row| {
                    row["payload"] == payload
                        && row["format"] == "protobuf"
                        && row["variant"].is_empty()
                        && row["operation"] == "encode"
                        && row["mode"] == mode
                })
                .map(|row| row["encoded_bytes"].clone())
        };
        assert!(
            prost_bytes("typed").is_some(),
            "no typed prost encode row of {payload}"
        );
        if payload == "data:orders" {
            assert_eq!(prost_bytes("typed"), prost_bytes("dynamic"), "{payload}");
        }
    }
}

/// `CARGO` replaced by a script: the typed build's failures without a real build.
/// `dump --typed` and `check --typed` use the generated types' codec, not the value tree's that
/// shares its name, and a built binary of every format serves them without another build.
#[test]
fn typed_dump_and_check_speak_typed_and_reuse_the_build_of_every_format() {
    if skipped_without_typed_build() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let file = dir.path().join("orders.ndjson");
    std::fs::write(&file, orders()).unwrap();
    let data = ["--data", file.to_str().unwrap()];
    let listed = serbench(&cache, &[&["list", "--typed"], &data[..]].concat());
    assert!(listed.status.success(), "{}", with_build_log(&listed));
    assert!(stderr(&listed).contains("building"), "{}", stderr(&listed));
    // The typed binary holds the data's arms alone (feature `data-only`): the built-in payloads
    // the plain serbench lists are not in it.
    let builds: Vec<_> = std::fs::read_dir(cache.join("typed"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("serbench-typed"))
        .filter(|binary| binary.is_file())
        .collect();
    assert_eq!(builds.len(), 1, "{builds:?}");
    let order = ["list", "--payload", "order", "--format", "json"];
    let plain = serbench(&cache, &order);
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(String::from_utf8_lossy(&plain.stdout).contains("order"));
    let in_typed = Command::new(&builds[0]).args(order).output().unwrap();
    assert_eq!(in_typed.status.code(), Some(2), "{}", stderr(&in_typed));
    assert!(stderr(&in_typed).contains("'order'"), "{}", stderr(&in_typed));
    let json = ["--format", "json", "--framing", "ndjson"];
    let typed = serbench(&cache, &[&["dump", "--typed"], &json[..], &data[..]].concat());
    assert!(typed.status.success(), "{}", stderr(&typed));
    assert!(
        !stderr(&typed).contains("building"),
        "built again: {}",
        stderr(&typed)
    );
    let dynamic = serbench(&cache, &[&["dump"], &json[..], &data[..]].concat());
    assert!(dynamic.status.success(), "{}", stderr(&dynamic));
    // The generated struct writes the optional `notes` as null where a record lacks it; the value
    // tree writes the record as the file holds it.
    let (typed_text, dynamic_text) = (
        String::from_utf8(typed.stdout.clone()).unwrap(),
        String::from_utf8(dynamic.stdout.clone()).unwrap(),
    );
    assert!(typed_text.contains(r#""notes":null"#), "{typed_text}");
    assert!(!dynamic_text.contains(r#""notes":null"#), "{dynamic_text}");
    let bytes = dir.path().join("typed.ndjson");
    std::fs::write(&bytes, &typed.stdout).unwrap();
    let check = |typed: &[&str]| {
        serbench(
            &cache,
            &[
                &["check"],
                typed,
                &json[..],
                &data[..],
                &[bytes.to_str().unwrap()],
            ]
            .concat(),
        )
    };
    let checked = check(&["--typed"]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    assert!(
        !stderr(&checked).contains("building"),
        "built again: {}",
        stderr(&checked)
    );
    // The value tree's check holds these bytes to the file's own shape, absent `notes` and all.
    let strict = check(&[]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    assert!(stderr(&strict).contains("notes"), "{}", stderr(&strict));
    typed_avro_decodes_with_the_typed_schema_file(&cache, dir.path(), &data);
}

/// The typed Avro bytes (`dump --typed`) read by fastavro, an independent reader, with the
/// `<stem>.typed.avsc` that `serbench schema` writes: every byte, every record. With the value
/// trees' `<stem>.avsc` they do not: `gone` is always null, which only the typed schema writes as
/// a union.
fn typed_avro_decodes_with_the_typed_schema_file(cache: &Path, dir: &Path, data: &[&str]) {
    let probe = Command::new("python3").args(["-c", "import fastavro"]).output();
    if !probe.as_ref().is_ok_and(|probe| probe.status.success()) {
        assert!(
            std::env::var_os("SERBENCH_REQUIRE_PYTHON_INTEROP").is_none(),
            "SERBENCH_REQUIRE_PYTHON_INTEROP is set and python3 cannot import fastavro"
        );
        eprintln!("skipped the Avro part: python3 lacks fastavro (pip install fastavro==1.13.1)");
        return;
    }
    let avro = serbench(cache, &[&["dump", "--typed", "--format", "avro"], data].concat());
    assert!(avro.status.success(), "{}", stderr(&avro));
    let bytes = dir.join("typed.avro");
    std::fs::write(&bytes, &avro.stdout).unwrap();
    let schema = dir.join("schema");
    let written = serbench(
        cache,
        &[&["schema", "--out", schema.to_str().unwrap()], data].concat(),
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let read = |file: &str| {
        let script = "import fastavro, io, json, sys\n\
            schema = fastavro.parse_schema(json.load(open(sys.argv[1])))\n\
            data = open(sys.argv[2], 'rb').read()\n\
            stream = io.BytesIO(data)\n\
            try:\n    value = fastavro.schemaless_reader(stream, schema)\n\
            except Exception as error:\n    sys.exit(f'refused: {error!r}')\n\
            if stream.tell() != len(data):\n    sys.exit(f'read {stream.tell()} of {len(data)} bytes')\n\
            records = value['records'] if isinstance(value, dict) else value\n\
            print(len(records), records[24]['order_id'])\n";
        Command::new("python3")
            .args(["-c", script])
            .arg(schema.join(file))
            .arg(&bytes)
            .output()
            .unwrap()
    };
    let typed = read("orders.typed.avsc");
    assert!(typed.status.success(), "{}", stderr(&typed));
    assert_eq!(String::from_utf8_lossy(&typed.stdout).trim(), "25 24");
    let dynamic = read("orders.avsc");
    assert!(
        !dynamic.status.success(),
        "the value trees' schema read the typed bytes"
    );
}

fn fake_cargo(dir: &Path, body: &str) -> String {
    let path = dir.join("fake-cargo");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn an_empty_file_is_one_line_and_a_failed_build_names_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let refused = serbench(&cache, &["list", "--typed", "--data", empty.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(stderr(&refused).trim().lines().count(), 1, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("holds no JSON value"),
        "{}",
        stderr(&refused)
    );

    // cargo failing: one line naming the log (which holds cargo's words), exit 1.
    let file = dir.path().join("orders.ndjson");
    std::fs::write(&file, orders()).unwrap();
    let failing = fake_cargo(dir.path(), "echo 'error: the compiler said no' >&2; exit 101");
    let failed = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(["list", "--typed", "--data", file.to_str().unwrap()])
        .env("SERBENCH_CACHE", &cache)
        .env("CARGO", &failing)
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let last = stderr(&failed)
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(last.contains("the typed build failed"), "{last}");
    let log = last.rsplit("see ").next().unwrap().trim();
    assert!(log.ends_with("build.log"), "{last}");
    let logged = std::fs::read_to_string(log).unwrap();
    assert!(logged.contains("the compiler said no"), "{logged}");
}

/// A document that is a map of ids, one with 10,000 keys, one nested 126 deep, records with no
/// fields, a number, and records whose only field is always null: each carried typed by the
/// formats that can, with the reason of each other one, and no arm failing.
#[test]
fn hard_schemas_are_carried_or_given_a_reason() {
    if skipped_without_typed_build() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let ids: String = (0..20)
        .map(|id| format!(r#""{id}": {{"name": "n{id}", "score": {id}.5}}"#))
        .collect::<Vec<_>>()
        .join(", ");
    let wide: String = (0..10_000)
        .map(|key| format!(r#""k{key}": {key}"#))
        .collect::<Vec<_>>()
        .join(", ");
    let deep = (0..126).fold("1".to_string(), |inner, level| {
        format!(r#"{{"a{level}": {inner}}}"#)
    });
    let mut data: Vec<String> = Vec::new();
    for (name, text) in [
        ("ids", format!("{{{ids}}}")),
        ("wide", format!("{{{wide}}}")),
        ("deep", deep),
        ("empty", "[{}, {}]".to_string()),
        ("scalar", "42".to_string()),
        ("nulls", r#"[{"a": null}, {"a": null}]"#.to_string()),
    ] {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        data.extend(["--data".to_string(), path.to_str().unwrap().to_string()]);
    }
    let data: Vec<&str> = data.iter().map(String::as_str).collect();

    // An interrupted build (killed while cargo runs) leaves a cache the next command builds in.
    let sleeping = fake_cargo(dir.path(), "sleep 30");
    let mut interrupted = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args([&["list", "--typed"], &data[..]].concat())
        .env("SERBENCH_CACHE", &cache)
        .env("CARGO", &sleeping)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !std::fs::read_dir(cache.join("typed"))
        .map(|mut entries| entries.any(|entry| entry.unwrap().path().join("crate/src/main.rs").is_file()))
        .unwrap_or(false)
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the crate was never written"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    interrupted.kill().unwrap();
    interrupted.wait().unwrap();

    let list = serbench(&cache, &[&["list", "--typed"], &data[..]].concat());
    assert!(list.status.success(), "{}", with_build_log(&list));
    let listing = String::from_utf8_lossy(&list.stdout).into_owned();
    let reason = |format: &str, payload: &str, words: &str| {
        listing.lines().any(|line| {
            line.split_whitespace().next() == Some(format)
                && line.contains(payload)
                && line.contains("typed")
                && line.contains(words)
        })
    };
    // D-Bus signs structs only, and prost stops at 100 nested messages.
    assert!(reason("dbus", "data:ids", "transparent wrapper"), "{listing}");
    assert!(
        reason("protobuf", "data:deep", "prost's decode limit"),
        "{listing}"
    );
    assert!(reason("dbus", "data:deep", "nested"), "{listing}");
    // Borsh refuses a list of zero-sized structs; CSV's header and rows would be empty lines.
    assert!(reason("borsh", "data:empty", "zero-sized"), "{listing}");
    assert!(reason("csv", "data:empty", "no fields"), "{listing}");
    assert!(
        reason("bson", "data:scalar", "top level is a document"),
        "{listing}"
    );
    // The borrowed mode is its own column (`decode borrowed`), not `typed`.
    assert!(
        listing.lines().any(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.starts_with(&["postcard", "*", "data:nulls", "decode", "borrowed"])
                && line.contains("holds no string")
        }),
        "{listing}"
    );

    let results = dir.path().join("results");
    let run = serbench(
        &cache,
        &[
            &[
                "run",
                "--profile",
                "smoke",
                "--typed",
                "--out",
                results.to_str().unwrap(),
            ],
            &data[..],
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let rows = rows(&results.join("results.csv"));
    let failed: Vec<_> = rows.iter().filter(|row| row["status"] != "ok").collect();
    assert!(failed.is_empty(), "{failed:?}");
    for payload in [
        "data:ids",
        "data:wide",
        "data:deep",
        "data:empty",
        "data:scalar",
        "data:nulls",
    ] {
        let typed: Vec<&BTreeMap<String, String>> = rows
            .iter()
            .filter(|row| row["payload"] == payload && row["mode"] == "typed")
            .collect();
        assert!(typed.len() >= 20, "{payload}: {} typed rows", typed.len());
        assert!(
            typed.iter().all(|row| row["status"] == "ok"),
            "{payload}: {typed:?}"
        );
    }
}

/// Issue 24's strongest check: on the corpora that also have hand-written types, the generated
/// types encode to as many bytes wherever the two type sets have the same shape (citm_catalog
/// in JSON, BSON, CBOR and named MessagePack), and twitter's JSON differs by exactly what the
/// hand-written type adds: each retweet's inner status writes `"retweeted_status":null` (24
/// bytes), a field the data never has there.
#[test]
fn the_generated_types_encode_the_corpora_as_the_hand_written_ones_do() {
    if skipped_without_typed_build() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let formats = [
        "--format", "json", "--format", "bson", "--format", "cbor", "--format", "msgpack",
    ];
    let corpora = ["--payload", "citm_catalog", "--payload", "twitter"];
    // The typed binary holds the data's arms alone: the hand-written types are measured by
    // serbench itself, and a typed command naming them is refused before anything is built.
    let mut args = vec!["run", "--profile", "smoke", "--op", "encode"];
    args.extend(formats);
    let typed_args = [
        "--typed",
        "--data",
        "corpus:citm_catalog",
        "--data",
        "corpus:twitter",
    ];
    let mixed: Vec<&str> = args.iter().chain(&typed_args).chain(&corpora).copied().collect();
    let refused = serbench(&cache, &mixed);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("measure --payload citm_catalog in a command without --typed"),
        "{}",
        stderr(&refused)
    );
    assert!(
        !cache.join("typed").exists(),
        "nothing is built for a refused command"
    );
    let mut rows = Vec::new();
    for (name, extra) in [("typed", &typed_args[..]), ("hand-written", &corpora[..])] {
        let out = dir.path().join(name);
        let command: Vec<&str> = args
            .iter()
            .chain(extra)
            .chain(&["--out", out.to_str().unwrap()])
            .copied()
            .collect();
        let run = serbench(&cache, &command);
        assert!(run.status.success(), "{name}: {}", with_build_log(&run));
        rows.extend(self::rows(&out.join("results.csv")));
    }
    let size = |payload: &str, codec: &str| -> i64 {
        let found: Vec<i64> = rows
            .iter()
            .filter(|row| row["payload"] == payload && row["mode"] == "typed" && row["status"] == "ok")
            .filter(|row| match row["variant"].as_str() {
                "" => format!("{}/{}", row["format"], row["backend"]) == codec,
                variant => format!("{}/{}[{variant}]", row["format"], row["backend"]) == codec,
            })
            .map(|row| row["encoded_bytes"].parse().unwrap())
            .collect();
        assert_eq!(found.len(), 1, "{payload} {codec}: {found:?}");
        found[0]
    };
    let same_shape = [
        "json/serde_json",
        "json/simd-json",
        "json/sonic-rs",
        "bson/bson",
        "cbor/ciborium",
        "msgpack/rmp-serde[named]",
    ];
    for codec in same_shape {
        assert_eq!(
            size("citm_catalog", codec),
            size("data:citm_catalog", codec),
            "{codec}"
        );
    }
    let logical = serbench(&cache, &["dump", "--payload", "twitter", "--logical"]);
    let retweets = String::from_utf8(logical.stdout)
        .unwrap()
        .matches("\"retweeted_status\": {")
        .count();
    assert!(retweets > 0);
    for codec in &same_shape[..3] {
        let extra = size("twitter", codec) - size("data:twitter", codec);
        assert_eq!(extra, 24 * retweets as i64, "{codec}");
    }
}

/// Issue 41: a file named with a line break and `const _: &str = r#"` (its name ended the doc
/// comment of its module and opened a raw string) and a key that closes that string with code of
/// its own: a `OnceLock` whose `get` writes the file `pwned` in the working folder. The run
/// builds and measures the data; no code of the file's runs.
#[test]
fn a_file_name_and_a_key_run_no_code_of_theirs() {
    if skipped_without_typed_build() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let payload = concat!(
        "\"#; pub mod data_0 { use std::collections::BTreeMap; ",
        "struct OnceLock<T>(std::sync::OnceLock<T>); ",
        "impl<T> OnceLock<T> { const fn new() -> Self { OnceLock(std::sync::OnceLock::new()) } ",
        "fn get(&self) -> Option<&T> { let _ = std::fs::write(String::from_iter(['p','w','n','e','d']), [120u8]); self.0.get() } ",
        "fn set(&self, value: T) -> Result<(), T> { self.0.set(value) } } ",
        "#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)] pub struct Record { //",
    );
    let file = dir.path().join("x\nconst _: &str = r#\".ndjson");
    let records: String = (1..3)
        .map(|index| serde_json::json!({ payload: index, "zz": index }).to_string() + "\n")
        .collect();
    std::fs::write(&file, records).unwrap();
    let out = dir.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args([
            "run",
            "--typed",
            "--format",
            "postcard",
            "--profile",
            "smoke",
            "--data",
        ])
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .current_dir(dir.path())
        .env("SERBENCH_CACHE", &cache)
        .output()
        .unwrap();
    assert!(
        !dir.path().join("pwned").exists(),
        "the file's code ran: {}",
        with_build_log(&run)
    );
    assert!(run.status.success(), "{}", with_build_log(&run));
    let rows = rows(&out.join("results.csv"));
    assert!(
        rows.iter()
            .any(|row| row["mode"] == "typed" && row["format"] == "postcard"),
        "no typed row: {rows:?}"
    );
}

/// Issue 41, defect 23: a record of 100,000 fields (`--record $`) is refused before anything is built (the
/// estimate of rustc's memory is far past any machine's), in one line, exit 2, naming what fits;
/// cargo is never run.
#[test]
fn a_typed_build_too_big_for_the_memory_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let fields: Vec<String> = (0..100_000)
        .map(|index| format!("\"f{index}\": {index}"))
        .collect();
    let file = dir.path().join("wide.json");
    std::fs::write(&file, format!("{{{}}}", fields.join(", "))).unwrap();
    let marker = dir.path().join("cargo-ran");
    let cargo = fake_cargo(dir.path(), &format!("touch '{}'; exit 101", marker.display()));
    let refused = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args([
            "list", "--typed", "--format", "postcard", "--record", "$", "--data",
        ])
        .arg(&file)
        .env("SERBENCH_CACHE", &cache)
        .env("CARGO", &cargo)
        .output()
        .unwrap();
    let printed = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{printed}");
    assert_eq!(printed.trim().lines().count(), 1, "{printed}");
    for expected in ["of memory", "is available", "--map $"] {
        assert!(printed.contains(expected), "{expected:?} not in {printed}");
    }
    assert!(!marker.exists(), "cargo ran");
}

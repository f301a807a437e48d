//! `--typed` and `serbench gen` through the real binary: the crate generated for a data file, its
//! real cargo build (cached), and the typed arms it adds, each proven before it is timed.
//!
//! The build takes a minute or two here (serbench's library in the normal, non-test feature set,
//! then the generated crate), so the test runs only with `SERBENCH_TYPED_BUILD=1`, which `.ci/run`
//! sets; without it the test says it skipped.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use common::stderr;

/// Nested arrays and records, a map (`--map`), optional and null fields, keys Rust cannot spell
/// (`3ds`, `type`, `content-type`, `über`) and two keys that map to one name (`userId`, `user_id`).
fn events() -> String {
    (0..40)
        .map(|index| {
            let coupon = if index % 3 == 0 { format!(r#","coupon":"C{index}""#) } else { String::new() };
            let referrer = if index % 4 == 0 { "null".to_string() } else { format!(r#""r{index}""#) };
            format!(
                r#"{{"id":{index},"type":"view","3ds":{},"userId":"u{index}","user_id":{index},"über":1.5,"price":{}.25,"items":[{{"sku":"s{index}","qty":2,"tags":["a","b"]}}],"headers":{{"content-type":"json"}},"counts":{{"k{index}":{index}}},"referrer":{referrer}{coupon}}}"#,
                index % 2 == 0,
                index * 3
            ) + "\n"
        })
        .collect()
}

/// Keys every schema language can name: nested records and lists, a null-only field, floats
/// some of which are whole, an optional list. Avro carries this one typed (not `events`).
fn orders() -> String {
    (0..25)
        .map(|index| {
            let notes = if index % 5 == 0 { r#","notes":["gift"]"# } else { "" };
            format!(
                r#"{{"order_id":{index},"total":{}.{},"paid":{},"gone":null,"lines":[{{"sku":"s{index}","qty":{index}}}],"ship":{{"city":"c{index}","zip":null}}{notes}}}"#,
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
    if std::env::var_os("SERBENCH_TYPED_BUILD").is_none() {
        eprintln!("skipped: set SERBENCH_TYPED_BUILD=1 to build a generated crate (a minute or two)");
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
        "#[serde(rename = \"über\")]",
        "pub u00fc_ber: f64,",
        "pub coupon: Option<String>,",
        "pub referrer: Option<String>,",
        "pub counts: BTreeMap<String, i64>,",
        "pub items: Vec<Items>,",
        "pub content_type: String,",
    ] {
        assert!(main.contains(expected), "{expected:?} not in:\n{main}");
    }
    // One build script runs the steps of both formats that generate code from a schema file.
    let script = std::fs::read_to_string(out.join("build.rs")).unwrap();
    assert!(
        script.contains("fn main() {\n    protobuf();\n    flatbuffers();\n}"),
        "{script}"
    );
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
    assert!(list.status.success(), "{}", stderr(&list));
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
    ] {
        assert!(
            typed_arm(format, backend),
            "no typed decode of {format}/{backend} in:\n{listing}"
        );
    }
    for (format, operation, reason) in [
        ("dbus", "*", "$.coupon: D-Bus has no null"),
        ("csv", "*", "CSV cannot hold a nested list inside a record"),
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

//! `serbench check` on bytes written by another language's libraries: Python's `json`, Google's
//! `protobuf` (on the `.proto` `serbench schema` infers, compiled by `grpcio-tools`' protoc),
//! `fastavro` (on the inferred `.avsc`), the `flatbuffers` package's `flexbuffers` module, `cbor2`
//! and `msgpack`, and Python's `protobuf` reading and writing the bytes of every Protobuf backend on
//! the built-in schema. Without those Python packages the test says so and
//! passes, unless `SERBENCH_REQUIRE_PYTHON_INTEROP` is set (as `.ci/run` does, after installing
//! them pinned), so CI cannot skip it quietly.

mod common;
use common::serbench;

use std::path::Path;
use std::process::{Command, Output};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Orders a producer in another language might write: nullable and absent fields, nested
/// records, a map keyed by data, integers and floats in one field, non-ASCII text.
const ORDERS: &str = include_str!("fixtures/orders.ndjson");

/// What the Python side writes into `dir`, from `orders.ndjson`, the inferred schemas there
/// (`orders.avsc`, `orders_pb2.py`) and `canada.json`.
const PRODUCER: &str = r#"
import json, sys
import cbor2
import fastavro
from flatbuffers import flexbuffers
from google.protobuf import json_format
sys.path.insert(0, sys.argv[1])
import orders_pb2

folder = sys.argv[1]
def sorted_object(pairs):
    return dict(sorted(pairs))
with open(f"{folder}/orders.ndjson", encoding="utf-8") as lines:
    records = [json.loads(line, object_pairs_hook=sorted_object) for line in lines if line.strip()]

with open(f"{folder}/py.array.json", "w", encoding="utf-8") as out:
    json.dump(records, out, ensure_ascii=False)
with open(f"{folder}/py.ndjson", "w", encoding="utf-8") as out:
    for record in records:
        out.write(json.dumps(record) + "\n")

message = orders_pb2.Records()
json_format.ParseDict({"records": records}, message)
with open(f"{folder}/py.pb", "wb") as out:
    out.write(message.SerializeToString(deterministic=True))

with open(f"{folder}/orders.avsc", encoding="utf-8") as schema:
    parsed = fastavro.parse_schema(json.load(schema))
with open(f"{folder}/py.avro", "wb") as out:
    fastavro.schemaless_writer(out, parsed, records)

with open(f"{folder}/py.flexbuf", "wb") as out:
    out.write(flexbuffers.Dumps(records))

with open(f"{folder}/py.cbor", "wb") as out:
    out.write(cbor2.dumps(records))

with open(f"{folder}/canada.json", encoding="utf-8") as canada:
    document = json.load(canada)
with open(f"{folder}/py.canada.json", "w", encoding="utf-8") as out:
    json.dump(document, out, separators=(",", ":"))
"#;

/// Whether Python has the packages; the reason it cannot run otherwise.
fn python_ready() -> Result<(), String> {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import google.protobuf, grpc_tools, fastavro, flatbuffers.flexbuffers, cbor2, msgpack",
        ])
        .output()
        .map_err(|error| format!("no python3: {error}"))?;
    match probe.status.success() {
        true => Ok(()),
        false => Err(text(&probe.stderr)
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .to_string()),
    }
}

/// The Python packages, pinned as `.ci/run` installs them.
const PIP: &str = "protobuf==7.36.2 grpcio-tools==1.85.1 fastavro==1.13.1 flatbuffers==25.12.19 cbor2==6.3.0 msgpack==1.2.4";

/// Whether the Python side can run; if not, says so and returns false, unless
/// `SERBENCH_REQUIRE_PYTHON_INTEROP` is set, which fails instead.
fn python_ready_or_skip() -> bool {
    let Err(reason) = python_ready() else {
        return true;
    };
    assert!(
        std::env::var_os("SERBENCH_REQUIRE_PYTHON_INTEROP").is_none(),
        "SERBENCH_REQUIRE_PYTHON_INTEROP is set and Python cannot run the producer: {reason}"
    );
    eprintln!(
        "skipped: python3 lacks protobuf, grpcio-tools, fastavro, flatbuffers, cbor2 or msgpack ({reason}); `pip install {PIP}` runs it"
    );
    false
}

fn run(command: &mut Command) {
    let output = command.output().expect("the command runs");
    assert!(output.status.success(), "{command:?}: {}", text(&output.stderr));
}

fn check(dir: &Path, data: &str, args: &[&str], file: &str) -> Output {
    let data = dir.join(data);
    let bytes = dir.join(file);
    serbench(
        &[
            &["check", "--data", data.to_str().unwrap()],
            args,
            &[bytes.to_str().unwrap()],
        ]
        .concat(),
    )
}

#[test]
fn check_accepts_json_protobuf_avro_flexbuffers_and_cbor_written_by_python() {
    if !python_ready_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("orders.ndjson"), ORDERS).unwrap();
    let canada = serbench::payload::data::Corpus::by_name("canada").unwrap().json();
    std::fs::write(dir.join("canada.json"), canada).unwrap();
    let data = dir.join("orders.ndjson");
    let schema = serbench(&[
        "schema",
        "--data",
        data.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(schema.status.success(), "{}", text(&schema.stderr));
    let include = format!("-I{}", dir.display());
    let python_out = format!("--python_out={}", dir.display());
    run(Command::new("python3")
        .args(["-m", "grpc_tools.protoc", &include, &python_out])
        .arg(dir.join("orders.proto")));
    std::fs::write(dir.join("producer.py"), PRODUCER).unwrap();
    run(Command::new("python3").arg(dir.join("producer.py")).arg(dir));

    for (args, file) in [
        (&["--format", "json", "--framing", "array"][..], "py.array.json"),
        (&["--format", "json", "--framing", "ndjson"][..], "py.ndjson"),
        (
            &[
                "--format",
                "json",
                "--framing",
                "ndjson",
                "--backend",
                "simd-json",
            ][..],
            "py.ndjson",
        ),
        (&["--format", "protobuf"][..], "py.pb"),
        (
            &["--format", "avro", "--backend", "serde_avro_fast"][..],
            "py.avro",
        ),
        (&["--format", "avro", "--backend", "apache-avro"][..], "py.avro"),
        (&["--format", "flexbuffers"][..], "py.flexbuf"),
        (&["--format", "cbor", "--backend", "ciborium"][..], "py.cbor"),
        (&["--format", "cbor", "--backend", "cbor4ii"][..], "py.cbor"),
    ] {
        let output = check(dir, "orders.ndjson", args, file);
        assert!(
            output.status.success(),
            "{args:?} {file}: {}",
            text(&output.stderr)
        );
        assert!(
            text(&output.stdout).contains("the same data as data:orders"),
            "{}",
            text(&output.stdout)
        );
    }

    // Both sides write protobuf's deterministic serialization, and the same Avro datum (the
    // maps sorted on both sides), byte for byte.
    for (format, file) in [("protobuf", "py.pb"), ("avro", "py.avro")] {
        let dump = serbench(&["dump", "--format", format, "--data", data.to_str().unwrap()]);
        assert!(dump.status.success(), "{}", text(&dump.stderr));
        assert_eq!(dump.stdout, std::fs::read(dir.join(file)).unwrap(), "{format}");
    }

    // Python writes canada's doubles exactly; simd-json and serde_json (built with
    // float_roundtrip) both read every one of them back bit for bit.
    for backend in ["simd-json", "serde_json"] {
        let args = ["--format", "json", "--backend", backend];
        let output = check(dir, "canada.json", &args, "py.canada.json");
        assert!(output.status.success(), "{backend}: {}", text(&output.stderr));
        assert!(
            text(&output.stdout).contains("the same data as data:canada"),
            "{backend}: {}",
            text(&output.stdout)
        );
    }
}

/// Python's `msgpack` reads msgpacker's `order` as the logical order: its fields one value after
/// another with no array header (msgpacker's layout), the status by its name. The other way
/// differs, and the test pins it: Python writes a non-negative integer in MessagePack's unsigned
/// forms, which msgpacker's `i64` refuses (it reads only the signed forms it writes).
#[test]
fn python_msgpack_reads_msgpackers_field_stream_and_its_unsigned_ints_are_refused() {
    if !python_ready_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let logical = serbench(&["dump", "--payload", "order", "--logical"]);
    assert!(logical.status.success(), "{}", text(&logical.stderr));
    std::fs::write(dir.join("order.json"), &logical.stdout).unwrap();
    let dump = serbench(&[
        "dump",
        "--payload",
        "order",
        "--format",
        "msgpack",
        "--backend",
        "msgpacker",
    ]);
    assert!(dump.status.success(), "{}", text(&dump.stderr));
    std::fs::write(dir.join("rust.msgpacker"), &dump.stdout).unwrap();
    let consumer = r#"
import json, sys, msgpack
folder = sys.argv[1]
with open(f"{folder}/order.json", encoding="utf-8") as file:
    order = json.load(file)
with open(f"{folder}/rust.msgpacker", "rb") as file:
    values = list(msgpack.Unpacker(file, raw=False, strict_map_key=True))
assert values == list(order.values()), (values, list(order.values()))
with open(f"{folder}/py.msgpacker", "wb") as out:
    for value in order.values():
        out.write(msgpack.packb(value, use_bin_type=True))
"#;
    std::fs::write(dir.join("consumer.py"), consumer).unwrap();
    run(Command::new("python3").arg(dir.join("consumer.py")).arg(dir));
    let bytes = dir.join("py.msgpacker");
    let output = serbench(&[
        "check",
        "--payload",
        "order",
        "--format",
        "msgpack",
        "--backend",
        "msgpacker",
        bytes.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("UnexpectedFormatTag"),
        "{}",
        text(&output.stderr)
    );
    // The first value is the order id, a positive i64: Python wrote uint64 (0xcf), msgpacker int64 (0xd3).
    assert_eq!(std::fs::read(&bytes).unwrap()[0], 0xcf);
    assert_eq!(dump.stdout[0], 0xd3);
}

/// Google's Python `protobuf`, on the built-in schema (schemas/protobuf/serbench.proto, compiled
/// by `grpcio-tools`' protoc), reads the bytes of each Protobuf backend (prost, buffa and
/// rust-protobuf, its bytes with map entries by key as `dump` writes them) for every built-in
/// payload as one message, and writes that message back, deterministically, as the same bytes;
/// buffa and rust-protobuf each `check` Python's bytes as the payload.
#[test]
fn python_protobuf_reads_and_writes_the_bytes_of_every_protobuf_backend() {
    if !python_ready_or_skip() {
        return;
    }
    const BACKENDS: [&str; 3] = ["prost", "buffa", "rust-protobuf"];
    const PAYLOADS: [(&str, &str); 9] = [
        ("readings", "Readings"),
        ("order", "Order"),
        ("telemetry", "TelemetryEvent"),
        ("checkout-request", "CheckoutRequest"),
        ("checkout-response", "CheckoutResponse"),
        ("map-small", "Keyed"),
        ("map-big", "Keyed"),
        ("vec-small", "Items"),
        ("vec-big", "Items"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/protobuf");
    run(Command::new("python3")
        .args(["-m", "grpc_tools.protoc"])
        .arg(format!("-I{}", schemas.display()))
        .arg(format!("--python_out={}", dir.display()))
        .arg(schemas.join("serbench.proto")));
    let mut plan = Vec::new();
    for (payload, message) in PAYLOADS {
        for backend in BACKENDS {
            let dump = serbench(&[
                "dump",
                "--payload",
                payload,
                "--format",
                "protobuf",
                "--backend",
                backend,
            ]);
            assert!(
                dump.status.success(),
                "{payload} {backend}: {}",
                text(&dump.stderr)
            );
            std::fs::write(dir.join(format!("{payload}.{backend}.pb")), &dump.stdout).unwrap();
        }
        plan.push(format!("({payload:?}, {message:?})"));
    }
    let consumer = format!(
        r#"
import sys
sys.path.insert(0, sys.argv[1])
import serbench_pb2
folder = sys.argv[1]
for payload, name in [{plan}]:
    read = {{}}
    for backend in {BACKENDS:?}:
        with open(f"{{folder}}/{{payload}}.{{backend}}.pb", "rb") as file:
            data = file.read()
        message = getattr(serbench_pb2, name)()
        message.ParseFromString(data)
        assert message.SerializeToString(deterministic=True) == data, (payload, backend, "written back differently")
        read[backend] = message
    assert read["buffa"] == read["prost"] and read["rust-protobuf"] == read["prost"], payload
    with open(f"{{folder}}/{{payload}}.python.pb", "wb") as out:
        out.write(read["prost"].SerializeToString(deterministic=True))
"#,
        plan = plan.join(", ")
    );
    std::fs::write(dir.join("consumer.py"), consumer).unwrap();
    run(Command::new("python3").arg(dir.join("consumer.py")).arg(dir));
    for (payload, _) in PAYLOADS {
        let bytes = dir.join(format!("{payload}.python.pb"));
        for backend in ["buffa", "rust-protobuf"] {
            let output = serbench(&[
                "check",
                "--payload",
                payload,
                "--format",
                "protobuf",
                "--backend",
                backend,
                bytes.to_str().unwrap(),
            ]);
            assert!(
                output.status.success(),
                "{payload} {backend}: {}",
                text(&output.stderr)
            );
        }
    }
}

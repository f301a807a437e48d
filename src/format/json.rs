//! JSON through two backends on the same bytes: serde_json (the reference) and simd-json
//! (SIMD parsing, in place), in three framings for batch payloads and in two record modes.
//!
//! Framings (batch payloads `readings`, `vec-*`; the records are identical, only the layout
//! differs): `document` is the payload struct as one JSON object (`{"items":[...]}`), `array`
//! a top-level array of the records, `ndjson` one record per line with a fresh parse per line,
//! so a malformed line is an error for that line only ([`Ndjson::decode_each_line`]).
//!
//! Modes: typed decodes into the model structs; dynamic into the library's value tree
//! (`serde_json::Value`, simd-json's `OwnedValue`), proven equal by converting it back.
//!
//! Buffer policy: both encoders write into the harness's reused output buffer. simd-json parses
//! a `&mut [u8]` in place and clobbers it, so its decoder copies the borrowed input into a
//! scratch buffer it keeps (cleared, never freed) and reuses its parser `Buffers` too, as its
//! documentation recommends for repeated parsing. A `copy-only` arm per framing times that copy
//! alone, so users see what remains of simd-json's decode.
//!
//! Data payloads (`--data`): each backend's value tree (`serde_json::Value`, simd-json's
//! `OwnedValue`, written by its own writer) of the document, or of the records as a top-level
//! array and as NDJSON, compared exactly with the file's records. serbench's serde_json is built
//! without its `float_roundtrip` feature, so it reads some doubles one unit in the last place
//! off: on float-heavy data (canada) its arms fail their proof, naming the first such number.
//! simd-json keeps an object of more than 32 keys in a hash map whose order changes from
//! process to process, so on such data it writes no bytes for sizes.csv and `dump` (serde_json
//! writes the same JSON with its keys sorted).

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::hint::black_box;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, DataTree, Dynamic, Framing, Operation, Value};
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::{
    Batch, Model, Order, Payload, TelemetryEvent, Visit, VisitBatch, visit_all, visit_batches, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "json",
    about: "JSON: serde_json and simd-json; document, array and NDJSON framings",
    colour: [0x4E, 0x79, 0xA7],
    backends: &[
        BackendDoc {
            backend: "serde_json",
            variant: "",
            crates: &["serde_json"],
            crate_note: "",
            schema: "-",
            buffer_policy: "encode into a reused, cleared `Vec`; decode from the borrowed bytes",
        },
        BackendDoc {
            backend: "simd-json",
            variant: "",
            crates: &["simd-json"],
            crate_note: "",
            schema: "-",
            buffer_policy: "encode into a reused `Vec`; decode copies the borrowed input into a reused scratch buffer (simd-json parses in place and clobbers it) and reuses its parser `Buffers`",
        },
        BackendDoc {
            backend: "simd-json",
            variant: "copy-only",
            crates: &[],
            crate_note: "a baseline, not a decoder",
            schema: "-",
            buffer_policy: "only the copy simd-json's decode starts with (per line for NDJSON), so you see what remains of its decode",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "serde_json",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: serde_json_order_decode,
        },
        Fidelity {
            backend: "simd-json",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: simd_json_order_decode,
        },
        Fidelity {
            backend: "serde_json",
            variant: "",
            payload: "telemetry",
            operation: Operation::Encode,
            case: serde_json_telemetry_encode,
        },
    ],
    register: |registry| {
        visit_all(&mut Json(registry));
        visit_batches(&mut Json(registry));
        visit_corpora(&mut Json(registry));
    },
    data: DataSupport::Arms(register_data),
};

const SERDE_JSON: Backend = Backend::new("serde_json");
const SIMD_JSON: Backend = Backend::new("simd-json");
const COPY_ONLY: &str = "copy-only";

struct Json<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Json<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.codec(payload, SERDE_JSON, Document::<SerdeJson>::default);
        registry.codec(payload, SIMD_JSON, Document::<SimdJson>::default);
        registry.dynamic(payload, SERDE_JSON, Document::<SerdeJson>::default, || {
            SerdeJsonTree
        });
        registry.dynamic(
            payload,
            SIMD_JSON,
            Document::<SimdJson>::default,
            SimdJsonTree::default,
        );
        registry.copy_baseline(
            payload,
            SIMD_JSON.variant(COPY_ONLY),
            Document::<SimdJson>::default,
        );
    }
}

/// The batch payloads' records also as a top-level array and as NDJSON.
impl<B: Batch> VisitBatch<B> for Json<'_> {
    fn batch(&mut self, payload: &Payload<B>) {
        let registry = &mut *self.0;
        registry.codec(
            payload,
            SERDE_JSON.framing(Framing::Array),
            Array::<SerdeJson>::default,
        );
        registry.codec(
            payload,
            SERDE_JSON.framing(Framing::Ndjson),
            Ndjson::<SerdeJson>::default,
        );
        registry.codec(
            payload,
            SIMD_JSON.framing(Framing::Array),
            Array::<SimdJson>::default,
        );
        registry.codec(
            payload,
            SIMD_JSON.framing(Framing::Ndjson),
            Ndjson::<SimdJson>::default,
        );
        let copy_only = SIMD_JSON.variant(COPY_ONLY);
        registry.copy_baseline(
            payload,
            copy_only.framing(Framing::Array),
            Array::<SimdJson>::default,
        );
        registry.copy_baseline(
            payload,
            copy_only.framing(Framing::Ndjson),
            Ndjson::<SimdJson>::default,
        );
    }
}

/// What the framings need of a JSON library: write one value, read one value.
pub trait JsonLibrary: Default + Send + 'static {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()>;
    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T>;
}

#[derive(Default)]
pub struct SerdeJson;

impl JsonLibrary for SerdeJson {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        Ok(serde_json::to_writer(out, value)?)
    }

    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

#[derive(Default)]
pub struct SimdJson {
    scratch: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl JsonLibrary for SimdJson {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        Ok(simd_json::to_writer(out, value)?)
    }

    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T> {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        Ok(simd_json::serde::from_slice_with_buffers(
            &mut self.scratch,
            &mut self.buffers,
        )?)
    }
}

/// The payload as one JSON document.
#[derive(Default)]
pub struct Document<L>(L);

impl<P: Model, L: JsonLibrary> Codec<P> for Document<L> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write(out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        self.0.read(bytes)
    }
}

/// The batch's records as a top-level JSON array.
#[derive(Default)]
pub struct Array<L>(L);

impl<B: Batch, L: JsonLibrary> Codec<B> for Array<L> {
    fn encode<'a>(&'a mut self, value: &B, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write(out, value.records())?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<B> {
        Ok(B::from_records(self.0.read(bytes)?))
    }
}

/// The batch's records as NDJSON: one record per line, each line parsed on its own.
#[derive(Default)]
pub struct Ndjson<L>(L);

/// The non-empty lines of an NDJSON text, with their 1-based line numbers.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&byte| byte == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(index, line)| (index + 1, line))
}

impl<L: JsonLibrary> Ndjson<L> {
    /// Decodes every line on its own: a malformed line is an error for that line only, and
    /// every other line still decodes.
    pub fn decode_each_line<R: DeserializeOwned>(&mut self, bytes: &[u8]) -> Vec<Result<R>> {
        lines(bytes)
            .map(|(number, line)| self.0.read(line).with_context(|| format!("NDJSON line {number}")))
            .collect()
    }
}

impl<B: Batch, L: JsonLibrary> Codec<B> for Ndjson<L> {
    fn encode<'a>(&'a mut self, value: &B, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        for record in value.records() {
            self.0.write(out, record)?;
            out.push(b'\n');
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<B> {
        let mut records = Vec::new();
        for (number, line) in lines(bytes) {
            records.push(
                self.0
                    .read(line)
                    .with_context(|| format!("NDJSON line {number}"))?,
            );
        }
        Ok(B::from_records(records))
    }
}

/// serde_json's dynamic tree.
pub struct SerdeJsonTree;

impl<P: Model> Dynamic<P> for SerdeJsonTree {
    type Tree = serde_json::Value;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        Ok(serde_json::from_slice(bytes)?)
    }

    fn to_model(&mut self, tree: serde_json::Value) -> Result<P> {
        Ok(serde_json::from_value(tree)?)
    }
}

/// simd-json's owned tree, with the same scratch-copy and buffer reuse as its typed decode.
#[derive(Default)]
pub struct SimdJsonTree(SimdJson);

impl<P: Model> Dynamic<P> for SimdJsonTree {
    type Tree = simd_json::OwnedValue;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<simd_json::OwnedValue> {
        self.0.read_tree(bytes)
    }

    fn to_model(&mut self, tree: simd_json::OwnedValue) -> Result<P> {
        Ok(simd_json::serde::from_owned_value(tree)?)
    }
}

/// A data payload in each backend's value tree: the document, or the records as a top-level
/// array and as NDJSON.
fn register_data(registry: &mut Registry, payload: &'static DataPayload) {
    register_trees::<SerdeJson>(registry, payload, SERDE_JSON);
    register_trees::<SimdJson>(registry, payload, SIMD_JSON);
    // sonic-rs, where its backend is present, registers its `sonic_rs::Value` tree here the same
    // way (a `TreeLibrary` impl).
}

fn register_trees<L: TreeLibrary>(registry: &mut Registry, payload: &'static DataPayload, backend: Backend) {
    let operations = &Operation::CODEC;
    if payload.is_list() {
        let array = backend.framing(Framing::Array);
        registry.data_tree(payload, array, OneTree::<L>::default(), operations);
        let ndjson = backend.framing(Framing::Ndjson);
        registry.data_tree(payload, ndjson, TreeLines::<L>::default(), operations);
    } else {
        registry.data_tree(payload, backend, OneTree::<L>::default(), operations);
    }
}

/// What the data trees need of a JSON library: its own value tree, written and read by the
/// library itself, and converted from and to the file's records (untimed).
pub trait TreeLibrary: Default + Send + Sync + 'static {
    type Tree: Value;
    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &Self::Tree) -> Result<()>;
    fn read_tree(&mut self, bytes: &[u8]) -> Result<Self::Tree>;
    fn from_json(value: &serde_json::Value) -> Self::Tree;
    fn to_json(tree: &Self::Tree) -> serde_json::Value;
    /// Why the bytes of `payload`'s tree change from run to run, if they do.
    fn unstable(_payload: &DataPayload) -> Option<String> {
        None
    }
}

impl TreeLibrary for SerdeJson {
    type Tree = serde_json::Value;

    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &serde_json::Value) -> Result<()> {
        self.write(out, tree)
    }

    fn read_tree(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        self.read(bytes)
    }

    fn from_json(value: &serde_json::Value) -> serde_json::Value {
        value.clone()
    }

    fn to_json(tree: &serde_json::Value) -> serde_json::Value {
        tree.clone()
    }
}

impl TreeLibrary for SimdJson {
    type Tree = simd_json::OwnedValue;

    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &simd_json::OwnedValue) -> Result<()> {
        use simd_json::prelude::Writable;
        Ok(tree.write(out)?)
    }

    fn read_tree(&mut self, bytes: &[u8]) -> Result<simd_json::OwnedValue> {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        Ok(simd_json::to_owned_value_with_buffers(
            &mut self.scratch,
            &mut self.buffers,
        )?)
    }

    fn from_json(value: &serde_json::Value) -> simd_json::OwnedValue {
        use simd_json::OwnedValue;
        match value {
            serde_json::Value::Null => OwnedValue::Static(simd_json::StaticNode::Null),
            serde_json::Value::Bool(flag) => OwnedValue::from(*flag),
            serde_json::Value::Number(number) => match number.as_i64() {
                Some(integer) => OwnedValue::from(integer),
                None => OwnedValue::from(number.as_f64().expect("a JSON number is an i64 or a double here")),
            },
            serde_json::Value::String(text) => OwnedValue::from(text.clone()),
            serde_json::Value::Array(items) => {
                OwnedValue::Array(Box::new(items.iter().map(Self::from_json).collect()))
            }
            serde_json::Value::Object(object) => {
                let mut tree =
                    simd_json::owned::Object::with_capacity_and_hasher(object.len(), Default::default());
                for (key, value) in object {
                    tree.insert(key.clone(), Self::from_json(value));
                }
                OwnedValue::Object(Box::new(tree))
            }
        }
    }

    fn to_json(tree: &simd_json::OwnedValue) -> serde_json::Value {
        use simd_json::{OwnedValue, StaticNode};
        match tree {
            OwnedValue::Static(StaticNode::Null) => serde_json::Value::Null,
            OwnedValue::Static(StaticNode::Bool(flag)) => serde_json::Value::from(*flag),
            OwnedValue::Static(StaticNode::I64(integer)) => serde_json::Value::from(*integer),
            OwnedValue::Static(StaticNode::U64(integer)) => serde_json::Value::from(*integer),
            OwnedValue::Static(StaticNode::F64(float)) => serde_json::Value::from(*float),
            OwnedValue::String(text) => serde_json::Value::from(text.as_str()),
            OwnedValue::Array(items) => serde_json::Value::Array(items.iter().map(Self::to_json).collect()),
            OwnedValue::Object(object) => serde_json::Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.clone(), Self::to_json(value)))
                    .collect(),
            ),
        }
    }

    /// Objects of up to 32 keys keep their order (a vector); larger ones are a hash map.
    fn unstable(payload: &DataPayload) -> Option<String> {
        let place = payload.first_object_wider_than(32)?;
        Some(format!(
            "simd-json keeps an object of more than 32 keys ({place}) in a hash map whose order changes \
             from process to process, and so do its bytes; serde_json's are the same JSON, sorted"
        ))
    }
}

/// One JSON value per message: the document, or the records as a top-level array.
#[derive(Default)]
pub struct OneTree<L>(L);

impl<L: TreeLibrary> Codec<L::Tree> for OneTree<L> {
    fn encode<'a>(&'a mut self, tree: &L::Tree, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write_tree(out, tree)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<L::Tree> {
        self.0.read_tree(bytes)
    }
}

impl<L: TreeLibrary> DataTree<DataPayload> for OneTree<L> {
    type Tree = L::Tree;
    type Codec = OneTree<L>;

    fn codec(&self) -> OneTree<L> {
        OneTree::default()
    }

    fn tree(&self, data: &DataPayload) -> Result<L::Tree> {
        Ok(L::from_json(&data.as_value()))
    }

    fn holds(&self, tree: &L::Tree, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(&L::to_json(tree), Equivalence::Exact))
    }

    fn unstable(&self, data: &DataPayload) -> Option<String> {
        L::unstable(data)
    }
}

/// The records as NDJSON: one value per line, each line parsed on its own.
#[derive(Default)]
pub struct TreeLines<L>(L);

impl<L: TreeLibrary> Codec<Vec<L::Tree>> for TreeLines<L> {
    fn encode<'a>(&'a mut self, records: &Vec<L::Tree>, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        for record in records {
            self.0.write_tree(out, record)?;
            out.push(b'\n');
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Vec<L::Tree>> {
        lines(bytes)
            .map(|(number, line)| {
                self.0
                    .read_tree(line)
                    .with_context(|| format!("NDJSON line {number}"))
            })
            .collect()
    }
}

impl<L: TreeLibrary> DataTree<DataPayload> for TreeLines<L> {
    type Tree = Vec<L::Tree>;
    type Codec = TreeLines<L>;

    fn codec(&self) -> TreeLines<L> {
        TreeLines::default()
    }

    fn tree(&self, data: &DataPayload) -> Result<Vec<L::Tree>> {
        Ok(data.records.iter().map(L::from_json).collect())
    }

    fn holds(&self, tree: &Vec<L::Tree>, data: &DataPayload) -> Result<Option<Difference>> {
        let records: Vec<serde_json::Value> = tree.iter().map(L::to_json).collect();
        Ok(data.compare_records(&records, Equivalence::Exact))
    }

    fn unstable(&self, data: &DataPayload) -> Option<String> {
        L::unstable(data)
    }
}

/// Fidelity: `serde_json::from_slice` of `order`.
fn serde_json_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = serde_json::to_vec(order).expect("order serializes");
    Box::new(move || {
        black_box(serde_json::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

/// Fidelity: simd-json's serde decode of `order`, copying the input into a reused scratch
/// buffer and reusing its `Buffers`, as its documentation recommends.
fn simd_json_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let json = serde_json::to_vec(order).expect("order serializes");
    let (mut scratch, mut buffers) = (Vec::new(), simd_json::Buffers::default());
    Box::new(move || {
        scratch.clear();
        scratch.extend_from_slice(black_box(&json));
        black_box(
            simd_json::serde::from_slice_with_buffers::<Order>(&mut scratch, &mut buffers)
                .expect("it decodes"),
        );
    })
}

/// Fidelity: `serde_json::to_writer` of `telemetry` into a reused `Vec`.
fn serde_json_telemetry_encode() -> Box<dyn FnMut()> {
    let event: &TelemetryEvent =
        crate::payload::value_of("telemetry").expect("telemetry is a TelemetryEvent");
    let mut out = Vec::new();
    Box::new(move || {
        out.clear();
        serde_json::to_writer(&mut out, black_box(event)).expect("it encodes");
        black_box(&out);
    })
}

/// serbench's serde_json reads some doubles one unit in the last place off (no
/// `float_roundtrip`): its data arms say where instead of passing.
#[cfg(test)]
mod data_tests {
    use crate::format::Registry;
    use crate::payload::data::{TRICKY, test_payload};

    #[test]
    fn every_json_data_arm_proves_on_tricky_records() {
        let (proofs, reasons) = Registry::data_proofs(&super::FORMAT, test_payload("tricky", TRICKY));
        assert_eq!(
            proofs.len(),
            12,
            "two backends, array and NDJSON, three operations"
        );
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
    }

    #[test]
    fn serde_json_fails_where_it_misreads_a_double_and_simd_json_does_not() {
        let payload = test_payload("float", r#"{"x": [1.5, -59.879722999999956]}"#);
        let (proofs, _) = Registry::data_proofs(&super::FORMAT, payload);
        for (arm, proof) in proofs {
            match arm.starts_with("json/serde_json") {
                true => {
                    let error = format!("{:#}", proof.unwrap_err());
                    assert!(
                        error.ends_with("$.x[1]: expected -59.879722999999956, found -59.87972299999995"),
                        "{error}"
                    );
                }
                false => proof.unwrap_or_else(|error| panic!("{arm}: {error:#}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::{Item, Items, Reading, Readings};

    fn readings() -> Readings {
        serde_json::from_str(&crate::payload::logical_json("readings").unwrap()).unwrap()
    }

    fn round_trip<B: Batch, C: Codec<B> + Default>(value: &B) -> (Vec<u8>, B) {
        let mut out = Vec::new();
        let bytes = C::default().encode(value, &mut out).unwrap().to_vec();
        let decoded = C::default().decode(&bytes).unwrap();
        (bytes, decoded)
    }

    #[test]
    fn every_framing_of_a_batch_decodes_to_the_same_records() {
        let batch = readings();
        let (document, from_document) = round_trip::<_, Document<SerdeJson>>(&batch);
        let (array, from_array) = round_trip::<_, Array<SimdJson>>(&batch);
        let (ndjson, from_ndjson) = round_trip::<_, Ndjson<SerdeJson>>(&batch);
        assert_eq!(from_document, batch);
        assert_eq!(from_array, batch);
        assert_eq!(from_ndjson, batch);
        assert!(document.starts_with(b"{\"readings\":["));
        assert!(array.starts_with(b"[{"));
        assert_eq!(
            ndjson.iter().filter(|&&byte| byte == b'\n').count(),
            batch.readings.len()
        );
        // The same records in all three: only the framing bytes differ.
        assert_eq!(document.len(), array.len() + "{\"readings\":}".len());
        assert_eq!(
            ndjson.len(),
            array.len() - 2 - (batch.readings.len() - 1) + batch.readings.len()
        );
    }

    #[test]
    fn a_malformed_ndjson_line_is_an_error_for_that_line_only() {
        for backend in ["serde_json", "simd-json"] {
            let mut text = Vec::new();
            let batch = readings();
            Ndjson::<SerdeJson>::default().encode(&batch, &mut text).unwrap();
            let mut lines: Vec<&[u8]> = text.split(|&byte| byte == b'\n').collect();
            lines[2] = b"{\"valid\": tru";
            let broken = lines.join(&b'\n');
            let results: Vec<Result<Reading>> = match backend {
                "serde_json" => Ndjson::<SerdeJson>::default().decode_each_line(&broken),
                _ => Ndjson::<SimdJson>::default().decode_each_line(&broken),
            };
            assert_eq!(results.len(), batch.readings.len());
            for (index, result) in results.iter().enumerate() {
                match result {
                    Err(error) => {
                        assert_eq!(index, 2, "{backend}");
                        assert!(error.to_string().contains("NDJSON line 3"), "{backend}: {error}");
                    }
                    Ok(reading) => assert_eq!(reading, &batch.readings[index], "{backend}"),
                }
            }
            assert!(results[2].is_err());
            // The codec's whole-batch decode fails, naming the line.
            let error = Codec::<Readings>::decode(&mut Ndjson::<SerdeJson>::default(), &broken).unwrap_err();
            assert!(error.to_string().contains("line 3"), "{error}");
        }
    }

    #[test]
    fn dynamic_trees_agree_with_the_typed_decode() {
        let items = Items {
            items: vec![Item {
                id: 7,
                name: "a b".into(),
                category: "c".into(),
                price: 1.25,
                stock: 3,
                active: true,
            }],
        };
        let mut out = Vec::new();
        let bytes = Document::<SerdeJson>::default()
            .encode(&items, &mut out)
            .unwrap()
            .to_vec();
        let tree = Dynamic::<Items>::decode_tree(&mut SerdeJsonTree, &bytes).unwrap();
        assert_eq!(tree["items"][0]["price"], 1.25);
        assert_eq!(
            Dynamic::<Items>::to_model(&mut SerdeJsonTree, tree).unwrap(),
            items
        );
        let mut simd = SimdJsonTree::default();
        let tree = Dynamic::<Items>::decode_tree(&mut simd, &bytes).unwrap();
        assert_eq!(Dynamic::<Items>::to_model(&mut simd, tree).unwrap(), items);
    }
}

/// Where the two JSON backends are known to differ, each backend's behaviour is pinned here
/// (and tabled in README), instead of assuming they agree.
#[cfg(test)]
mod differential {
    fn serde_json_tree(text: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }

    fn simd_json_tree(text: &str) -> Result<simd_json::OwnedValue, String> {
        simd_json::to_owned_value(&mut text.as_bytes().to_vec()).map_err(|error| error.to_string())
    }

    fn simd_json_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        simd_json::serde::from_slice(&mut text.as_bytes().to_vec()).map_err(|error| error.to_string())
    }

    #[test]
    fn integers_beyond_u64_become_lossy_floats_in_serde_json_and_errors_in_simd_json() {
        let text = "18446744073709551616";
        assert_eq!(
            serde_json_tree(text).unwrap().as_f64(),
            Some(1.8446744073709552e19)
        );
        assert!(simd_json_tree(text).is_err());
        assert!(serde_json::from_str::<i64>(text).is_err());
        assert!(simd_json_typed::<i64>(text).is_err());
        let long_integer = "123456789012345678901234567890";
        assert!(serde_json_tree(long_integer).unwrap().is_f64());
        assert!(simd_json_tree(long_integer).is_err());
    }

    #[test]
    fn integers_between_i64_and_u64_are_u64_in_both_and_not_i64() {
        let text = "9223372036854775808";
        assert_eq!(
            serde_json_tree(text).unwrap().as_u64(),
            Some(9_223_372_036_854_775_808)
        );
        assert_eq!(
            simd_json_tree(text).unwrap(),
            simd_json::OwnedValue::from(9_223_372_036_854_775_808u64)
        );
        assert!(serde_json::from_str::<i64>(text).is_err());
        assert!(simd_json_typed::<i64>(text).is_err());
    }

    #[test]
    fn negative_zero_keeps_its_sign_in_serde_json_only() {
        let serde_zero = serde_json::from_str::<f64>("-0").unwrap();
        let simd_zero = simd_json_typed::<f64>("-0").unwrap();
        assert!(serde_zero == 0.0 && serde_zero.is_sign_negative());
        assert!(simd_zero == 0.0 && simd_zero.is_sign_positive());
        // serde_json reads `-0` as a float, so it is not an i64; simd-json reads integer 0.
        assert!(serde_json::from_str::<i64>("-0").is_err());
        assert_eq!(simd_json_typed::<i64>("-0").unwrap(), 0);
        // Written as `-0.0`, both keep the sign.
        assert!(simd_json_typed::<f64>("-0.0").unwrap().is_sign_negative());
    }

    #[test]
    fn very_long_numbers_round_to_the_same_double() {
        let text = "3.14159265358979323846264338327950288419716939937510582097494459";
        assert_eq!(serde_json::from_str::<f64>(text).unwrap(), std::f64::consts::PI);
        assert_eq!(simd_json_typed::<f64>(text).unwrap(), std::f64::consts::PI);
        assert!(serde_json::from_str::<f64>("1e400").is_err());
        assert!(simd_json_typed::<f64>("1e400").is_err());
    }

    #[test]
    fn duplicate_keys_last_wins_in_serde_json_tree_both_kept_in_simd_json_tree_typed_errors() {
        use simd_json::prelude::*;
        let text = r#"{"a":1,"a":2}"#;
        assert_eq!(serde_json_tree(text).unwrap(), serde_json::json!({"a": 2}));
        let simd = simd_json_tree(text).unwrap();
        assert_eq!(simd.as_object().unwrap().len(), 2, "{simd:?}");
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Single {
            a: i64,
        }
        assert!(
            serde_json::from_str::<Single>(text)
                .unwrap_err()
                .to_string()
                .contains("duplicate field")
        );
        assert!(
            simd_json_typed::<Single>(text)
                .unwrap_err()
                .contains("duplicate field")
        );
    }
}

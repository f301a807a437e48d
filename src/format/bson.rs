//! BSON (bson 3, serde feature): MongoDB's binary document format. Every payload is a struct,
//! so every payload is a top-level document as BSON requires. BSON has no unsigned 64-bit
//! integer, which is why every shared integer in the model is `i64`.
//!
//! Buffer policy: `bson::serialize_to_buffer` writes into the harness's reused output buffer;
//! the typed decode goes straight from the bytes (`deserialize_from_slice`), with no `Document`
//! built. The dynamic decode builds a `bson::Document` from a borrowed `RawDocument` (no copy
//! of the input first).
//!
//! Borrowed mode: `deserialize_from_slice` into the borrowed structs; bson's raw deserializer
//! hands serde the strings and field names of the input (`visit_borrowed_str`).
//!
//! Data payloads (`--data`): the `Document` tree, written by `Document::to_writer` (which builds
//! the document's bytes, then appends them to the reused output buffer) and read like the dynamic
//! decode. A document file must be an object (BSON's top level is a document); a list of
//! records is one document per record, one after another, as mongodump writes them. Integers
//! that fit 32 bits are `Int32`, as the MongoDB tools write JSON numbers, larger ones `Int64`.

use anyhow::{Context, Result};
use std::hint::black_box;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Dynamic, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence, Kind, Type};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "bson",
    about: "BSON: bson through serde",
    colour: [0x55, 0x88, 0x55],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "by field name (serde): `default` and `alias` attributes; unknown fields are ignored",
        languages: &[
            "C",
            "C++",
            "C#",
            "Go",
            "Java",
            "Kotlin",
            "JavaScript",
            "PHP",
            "Python",
            "Ruby",
            "Rust",
            "Scala",
            "Swift",
        ],
        languages_source: "https://www.mongodb.com/docs/drivers/ (MongoDB's maintained drivers)",
    },
    backends: &[BackendDoc {
        backend: "bson",
        variant: "",
        crates: &["bson"],
        crate_note: "serde feature",
        schema: "-",
        buffer_policy: "`serialize_to_buffer` into a reused `Vec`; typed decode straight from the bytes, no `Document`",
    }],
    fidelity: &[Fidelity {
        backend: "bson",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: bson_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Bson(registry));
        visit_borrowed(&mut Bson(registry));
        visit_corpora(&mut Bson(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        refuses: typed_refuses,
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(register_data),
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "bson",
            variant: "",
            encode: |value| ::bson::serialize_to_vec(value).map_err(|error| error.to_string()),
            decode: |bytes, seed| {
                crate::shape::read_as(seed.0, || {
                    ::bson::deserialize_from_slice::<crate::shape::Seeded>(bytes)
                })
            },
        }],
        schema: &[],
    },
};

/// BSON's top level is a document: a list's batch is one (`{"records": [...]}`), a single
/// document only where the file is an object.
fn typed_refuses(data: &DataPayload) -> Option<String> {
    (!data.is_list())
        .then(|| not_documents(&data.typed_schema.record, "the file"))
        .flatten()
}

/// Why values of type `record` (`what`: the file, or each record) cannot each be BSON's
/// top-level document, if they cannot.
fn not_documents(record: &Type, what: &str) -> Option<String> {
    let objects = matches!(record.kind, Kind::Record(_) | Kind::Map(_)) && !record.nullable();
    (!objects).then(|| {
        format!(
            "BSON's top level is a document (a JSON object), and {what} is not always one ({})",
            record.kind.name()
        )
    })
}

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model>(registry: &mut Registry, payload: &Payload<P>) {
    Bson(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Bson(registry).borrowed(payload);
}

struct Bson<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Bson<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("bson"), || BsonCodec);
        self.0
            .dynamic(payload, Backend::new("bson"), || BsonCodec, || DocumentTree);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Bson<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, Backend::new("bson"), || BsonCodec, || BsonCodec);
    }
}

pub struct BsonCodec;

impl<B: Borrowed> BorrowedDecode<B> for BsonCodec
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(::bson::deserialize_from_slice(bytes)?)
    }
}

impl<P: Model> Codec<P> for BsonCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::bson::serialize_to_buffer(value, out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(::bson::deserialize_from_slice(bytes)?)
    }
}

/// BSON's dynamic tree: `bson::Document`.
pub struct DocumentTree;

impl<P: Model> Dynamic<P> for DocumentTree {
    type Tree = ::bson::Document;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<::bson::Document> {
        Ok(::bson::RawDocument::from_bytes(bytes)?.try_into()?)
    }

    fn to_model(&mut self, tree: ::bson::Document) -> Result<P> {
        Ok(::bson::deserialize_from_document(tree)?)
    }
}

/// A data payload as `Document`s: the document, or one per record.
fn register_data(registry: &mut Registry, payload: &'static DataPayload) {
    let what = if payload.is_list() {
        "each record"
    } else {
        "the file"
    };
    match not_documents(&payload.schema.record, what) {
        None => registry.data_tree(payload, Backend::new("bson"), Documents, &Operation::CODEC),
        Some(reason) => registry.unsupported(payload.spec, "*", &reason),
    }
}

/// The data's documents (one, or one per record), encoded one after another.
pub struct Documents;

impl Codec<Vec<::bson::Document>> for Documents {
    fn encode<'a>(&'a mut self, documents: &Vec<::bson::Document>, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        for document in documents {
            document.to_writer(&mut *out)?;
        }
        Ok(out)
    }

    fn decode(&mut self, mut bytes: &[u8]) -> Result<Vec<::bson::Document>> {
        let mut documents = Vec::new();
        while !bytes.is_empty() {
            let length = bytes
                .get(..4)
                .map(|prefix| i32::from_le_bytes(prefix.try_into().expect("four bytes")))
                .and_then(|length| usize::try_from(length).ok())
                .filter(|&length| length >= 5 && length <= bytes.len())
                .with_context(|| format!("document {} has no valid length", documents.len() + 1))?;
            documents.push(::bson::RawDocument::from_bytes(&bytes[..length])?.try_into()?);
            bytes = &bytes[length..];
        }
        Ok(documents)
    }
}

impl DataTree<DataPayload> for Documents {
    type Tree = Vec<::bson::Document>;
    type Codec = Documents;

    fn codec(&self) -> Documents {
        Documents
    }

    fn tree(&self, data: &DataPayload) -> Result<Vec<::bson::Document>> {
        data.records
            .iter()
            .map(|record| match to_bson(record) {
                ::bson::Bson::Document(document) => Ok(document),
                other => anyhow::bail!("a record is not an object: {other}"),
            })
            .collect()
    }

    fn holds(&self, documents: &Vec<::bson::Document>, data: &DataPayload) -> Result<Option<Difference>> {
        let records = documents
            .iter()
            .map(|document| from_bson(&::bson::Bson::Document(document.clone())))
            .collect::<Result<Vec<_>>>()?;
        Ok(match data.is_list() {
            true => data.compare_records(&records, Equivalence::Exact),
            false => match records.as_slice() {
                [document] => data.compare(document, Equivalence::Exact),
                _ => Some(Difference {
                    path: "$".into(),
                    expected: "one document".into(),
                    found: format!("{} documents", records.len()),
                }),
            },
        })
    }
}

fn to_bson(value: &serde_json::Value) -> ::bson::Bson {
    use ::bson::Bson;
    match value {
        serde_json::Value::Null => Bson::Null,
        serde_json::Value::Bool(flag) => Bson::Boolean(*flag),
        serde_json::Value::Number(number) => match number.as_i64() {
            Some(integer) => i32::try_from(integer).map_or(Bson::Int64(integer), Bson::Int32),
            None => Bson::Double(number.as_f64().expect("a JSON number is an i64 or a double here")),
        },
        serde_json::Value::String(text) => Bson::String(text.clone()),
        serde_json::Value::Array(items) => Bson::Array(items.iter().map(to_bson).collect()),
        serde_json::Value::Object(object) => Bson::Document(
            object
                .iter()
                .map(|(key, value)| (key.clone(), to_bson(value)))
                .collect(),
        ),
    }
}

/// The JSON a BSON value stands for; a type the data never writes (decoded from bytes made
/// elsewhere) is an error naming it.
fn from_bson(value: &::bson::Bson) -> Result<serde_json::Value> {
    use ::bson::Bson;
    Ok(match value {
        Bson::Null => serde_json::Value::Null,
        Bson::Boolean(flag) => serde_json::Value::from(*flag),
        Bson::Int32(integer) => serde_json::Value::from(*integer),
        Bson::Int64(integer) => serde_json::Value::from(*integer),
        Bson::Double(float) => serde_json::Number::from_f64(*float)
            .map(serde_json::Value::Number)
            .with_context(|| format!("the double {float} is not a JSON number"))?,
        Bson::String(text) => serde_json::Value::from(text.as_str()),
        Bson::Array(items) => serde_json::Value::Array(items.iter().map(from_bson).collect::<Result<_>>()?),
        Bson::Document(document) => serde_json::Value::Object(
            document
                .iter()
                .map(|(key, value)| Ok((key.clone(), from_bson(value)?)))
                .collect::<Result<_>>()?,
        ),
        other => anyhow::bail!("a BSON {:?} is not JSON data", other.element_type()),
    })
}

/// Fidelity: `bson::deserialize_from_slice` of `order`.
fn bson_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ::bson::serialize_to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(::bson::deserialize_from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod data_tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    #[test]
    fn records_are_documents_one_after_another_and_a_top_level_array_is_unsupported() {
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, test_payload("tricky", TRICKY));
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
        let two = Documents.tree(test_payload("tricky", TRICKY)).unwrap();
        let mut out = Vec::new();
        let bytes = Documents.encode(&two, &mut out).unwrap().to_vec();
        assert_eq!(Documents.decode(&bytes).unwrap().len(), 2);
        assert!(Documents.decode(&bytes[..bytes.len() - 1]).is_err());
        let (_, reasons) = Registry::data_proofs(&FORMAT, test_payload("list", "[[1, 2], [3]]"));
        assert_eq!(
            reasons,
            ["BSON's top level is a document (a JSON object), and each record is not always one (array)"]
        );
    }
}

//! BSON (bson 3, serde feature): MongoDB's binary document format. Every payload is a struct,
//! so every payload is a top-level document as BSON requires. BSON has no unsigned 64-bit
//! integer, which is why every shared integer in the model is `i64`.
//!
//! Buffer policy: `bson::serialize_to_buffer` writes into the harness's reused output buffer;
//! the typed decode goes straight from the bytes (`deserialize_from_slice`), with no `Document`
//! built. The dynamic decode builds a `bson::Document` from a borrowed `RawDocument` (no copy
//! of the input first).

use anyhow::Result;
use std::hint::black_box;

use super::{BackendDoc, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, Dynamic, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all};

pub static FORMAT: Format = Format {
    name: "bson",
    about: "BSON: bson through serde",
    colour: [0x59, 0xA1, 0x4F],
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
    register: |registry| visit_all(&mut Bson(registry)),
};

struct Bson<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Bson<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("bson"), || BsonCodec);
        self.0
            .dynamic(payload, Backend::new("bson"), || BsonCodec, || DocumentTree);
    }
}

pub struct BsonCodec;

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

/// Fidelity: `bson::deserialize_from_slice` of `order`.
fn bson_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ::bson::serialize_to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(::bson::deserialize_from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

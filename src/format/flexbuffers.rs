//! FlexBuffers, FlatBuffers' schemaless sibling, through the `flexbuffers` crate (serde): structs
//! as maps keyed by field name (keys sorted, shared), every scalar in the narrowest width that
//! holds it, the root at the end of the buffer.
//!
//! Borrowed mode: `flexbuffers::from_slice` into the borrowed structs, whose `&str` fields point
//! into the input (a FlexBuffers string is its UTF-8 bytes in place).
//!
//! Buffer policy: one `FlexbufferSerializer` per codec, `reset` before each encode (its builder
//! keeps its buffers, as the crate's docs advise for repeated builds), and the bytes handed over
//! from the serializer's own buffer (`view`), no copy; decode reads from the borrowed bytes.
//! The crate's own tree is its lazy `Reader` (zero-copy, a view, not a decode); `--data` decodes
//! into an owned `serde_json::Value` through that reader's serde deserializer.

use std::hint::black_box;

use anyhow::Result;
use serde::Serialize;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "flexbuffers",
    about: "FlexBuffers (schemaless FlatBuffers), serde",
    colour: [0xDD, 0x44, 0xDD],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "by field name (serde `default`, `alias`): structs are maps keyed by name",
        languages: &["C++", "Java", "Kotlin", "JavaScript", "Python", "Rust", "C#"],
        languages_source: "https://flatbuffers.dev/flexbuffers/",
    },
    backends: &[BackendDoc {
        backend: "flexbuffers",
        variant: "",
        crates: &["flexbuffers"],
        crate_note: "`serde_json::Value` for --data (the crate's `Reader` is a lazy view, not a tree)",
        schema: "-",
        buffer_policy: "one `FlexbufferSerializer` per codec, `reset` per encode, bytes handed over from its buffer; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "flexbuffers",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: flexbuffers_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Flexbuffers(registry));
        visit_borrowed(&mut Flexbuffers(registry));
        visit_corpora(&mut Flexbuffers(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive::SERDE),
    data: DataSupport::Arms(|registry, payload| {
        registry.data_tree(payload, FLEXBUFFERS, ValueData, &Operation::CODEC);
    }),
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "flexbuffers",
            variant: "",
            encode: |value| flexbuffers::to_vec(value).map_err(|error| error.to_string()),
            decode: |bytes, seed| {
                let reader = flexbuffers::Reader::get_root(bytes).map_err(|error| error.to_string())?;
                serde::de::DeserializeSeed::deserialize(seed, reader).map_err(|error| error.to_string())
            },
        }],
        schema: &[],
    },
};

const FLEXBUFFERS: Backend = Backend::new("flexbuffers");

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model>(registry: &mut Registry, payload: &Payload<P>) {
    Flexbuffers(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Flexbuffers(registry).borrowed(payload);
}

struct Flexbuffers<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Flexbuffers<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, FLEXBUFFERS, FlexCodec::default);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Flexbuffers<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, FLEXBUFFERS, FlexCodec::default, FlexCodec::default);
    }
}

/// A reused serializer: its builder keeps its buffers between encodes.
#[derive(Default)]
pub struct FlexCodec {
    serializer: flexbuffers::FlexbufferSerializer,
}

impl FlexCodec {
    /// A key is a C string: the builder cuts a key at its first NUL, after a `debug_assert!`
    /// (a panic in debug builds), so such a value is an error here in both.
    fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<&[u8]> {
        self.serializer.reset();
        let serializer = &mut self.serializer;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| value.serialize(serializer))) {
            Ok(written) => written?,
            Err(_) => anyhow::bail!("flexbuffers cannot write a map key with NUL (its keys are C strings)"),
        }
        Ok(self.serializer.view())
    }
}

impl<P: Model> Codec<P> for FlexCodec {
    fn encode<'a>(&'a mut self, value: &P, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.write(value)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(flexbuffers::from_slice(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for FlexCodec
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(flexbuffers::from_slice(bytes)?)
    }
}

/// A data payload as one owned `serde_json::Value` (the document, or an array of the records),
/// written and read by flexbuffers' serde.
pub struct ValueData;

/// [`FlexCodec`] over the tree of `--data`.
#[derive(Default)]
pub struct TreeCodec(FlexCodec);

impl Codec<serde_json::Value> for TreeCodec {
    fn encode<'a>(&'a mut self, tree: &serde_json::Value, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write(tree)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        Ok(flexbuffers::from_slice(bytes)?)
    }
}

impl DataTree<DataPayload> for ValueData {
    type Tree = serde_json::Value;
    type Codec = TreeCodec;

    fn codec(&self) -> TreeCodec {
        TreeCodec::default()
    }

    fn tree(&self, data: &DataPayload) -> Result<serde_json::Value> {
        Ok(data.as_value())
    }

    fn holds(&self, tree: &serde_json::Value, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(tree, Equivalence::Exact))
    }
}

/// Fidelity: `flexbuffers::from_slice` of `order`.
fn flexbuffers_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = flexbuffers::to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(flexbuffers::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    /// A struct is a map keyed by its field names, read lazily by the crate's `Reader` too; a
    /// reused codec writes the same bytes as `to_vec` every time.
    #[test]
    fn structs_are_maps_by_name_and_a_reused_serializer_writes_the_same_bytes() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let fresh = flexbuffers::to_vec(order).unwrap();
        let mut codec = FlexCodec::default();
        let mut out = Vec::new();
        for _ in 0..2 {
            assert_eq!(
                Codec::<Order>::encode(&mut codec, order, &mut out).unwrap(),
                fresh
            );
        }
        let root = flexbuffers::Reader::get_root(fresh.as_slice()).unwrap();
        let map = root.as_map();
        assert_eq!(map.idx("order_id").as_i64(), order.order_id);
        assert_eq!(&Codec::<Order>::decode(&mut codec, &fresh).unwrap(), order);
    }

    #[test]
    fn every_flexbuffers_data_arm_proves_on_tricky_records() {
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, test_payload("tricky", TRICKY));
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
    }
}

//! RON (Rusty Object Notation) through the `ron` crate (serde): text like JSON's, with Rust's
//! shapes: structs as `(field: value, ...)`, unit enum variants by name, `Some(..)`/`None`, maps
//! as `{key: value}` with keys of any type.
//!
//! Borrowed mode: `ron::from_bytes` into the borrowed structs, whose `&str` fields point into the
//! input where the string needs no unescaping.
//!
//! Buffer policy: `Options::to_io_writer` appends to the harness's reused output buffer (through
//! ron's `fmt::Write` adapter); decode reads from the borrowed bytes (`from_bytes`, which refuses
//! anything after the value), with a recursion limit of 256 levels (ron's default is 128).
//! `ron::Value` is the value tree of `--data` (`ron::Value` keeps no
//! enum variant names, so the built-in payloads have no dynamic arm).

use std::hint::black_box;

use anyhow::Result;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "ron",
    about: "RON (Rusty Object Notation), serde",
    colour: [0xFF, 0x77, 0x00],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "by field name (serde `default`, `alias`), as JSON",
        languages: &["Rust"],
        languages_source: "https://github.com/ron-rs/ron (the specification and its one maintained implementation)",
    },
    backends: &[BackendDoc {
        backend: "ron",
        variant: "",
        crates: &["ron"],
        crate_note: "`ron::Value` for --data",
        schema: "-",
        buffer_policy: "`Options::to_io_writer` (compact, no pretty-printing) into a reused `Vec`; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "ron",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: ron_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Ron(registry));
        visit_borrowed(&mut Ron(registry));
        visit_corpora(&mut Ron(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive::SERDE),
    data: DataSupport::Arms(|registry, payload| {
        registry.data_tree(payload, RON, ValueData, &Operation::CODEC);
    }),
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "ron",
            variant: "",
            encode: |value| {
                let mut out = Vec::new();
                options()
                    .to_io_writer(&mut out, value)
                    .map_err(|error| error.to_string())?;
                Ok(out)
            },
            decode: |bytes, seed| {
                options()
                    .from_bytes_seed(bytes, seed)
                    .map_err(|error| error.to_string())
            },
        }],
        schema: &[],
    },
};

const RON: Backend = Backend::new("ron");

/// ron's options: its defaults, with a recursion limit of 256 instead of 128, so the deepest data
/// serbench reads (128 levels, which ron may count twice: an `Option` and its value) fits.
fn options() -> ron::Options {
    ron::Options::default().with_recursion_limit(256)
}

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model>(registry: &mut Registry, payload: &Payload<P>) {
    Ron(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Ron(registry).borrowed(payload);
}

struct Ron<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Ron<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, RON, || RonCodec);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Ron<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0.borrowed(payload, RON, || RonCodec, || RonCodec);
    }
}

pub struct RonCodec;

impl<P: Model> Codec<P> for RonCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        options().to_io_writer(&mut *out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(options().from_bytes(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for RonCodec
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(options().from_bytes(bytes)?)
    }
}

/// A data payload as one `ron::Value`: the document, or a list of the records.
pub struct ValueData;

impl Codec<ron::Value> for ValueData {
    fn encode<'a>(&'a mut self, tree: &ron::Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        options().to_io_writer(&mut *out, tree)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<ron::Value> {
        Ok(options().from_bytes(bytes)?)
    }
}

impl DataTree<DataPayload> for ValueData {
    type Tree = ron::Value;
    type Codec = ValueData;

    fn codec(&self) -> ValueData {
        ValueData
    }

    /// The JSON value written as RON and read back as ron's tree: objects become maps keyed by
    /// strings, `null` the unit `()`.
    fn tree(&self, data: &DataPayload) -> Result<ron::Value> {
        let text = options().to_string(&data.as_value())?;
        Ok(options().from_str(&text)?)
    }

    fn holds(&self, tree: &ron::Value, data: &DataPayload) -> Result<Option<Difference>> {
        let json: serde_json::Value = tree.clone().into_rust()?;
        Ok(data.compare(&json, Equivalence::Exact))
    }
}

/// Fidelity: `ron::de::from_bytes` of `order`.
fn ron_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ron::to_string(order).expect("order encodes").into_bytes();
    Box::new(move || {
        black_box(ron::de::from_bytes::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    /// A struct is written with its field names and no type name, a unit variant by its name.
    #[test]
    fn structs_are_named_tuples_and_variants_their_names() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let mut out = Vec::new();
        let text = String::from_utf8(RonCodec.encode(order, &mut out).unwrap().to_vec()).unwrap();
        assert!(text.starts_with("(order_id:"), "{text}");
        assert!(!text.contains('\n'), "compact, not pretty: {text}");
        let back: Order = Codec::<Order>::decode(&mut RonCodec, text.as_bytes()).unwrap();
        assert_eq!(&back, order);
        let mut trailing = text.into_bytes();
        trailing.extend_from_slice(b" 1");
        assert!(Codec::<Order>::decode(&mut RonCodec, &trailing).is_err());
    }

    /// `--data`: the tree of JSON data holds it and reads back from its own bytes unchanged.
    #[test]
    fn every_ron_data_arm_proves_on_tricky_records() {
        let data = test_payload("tricky", TRICKY);
        let tree = ValueData.tree(data).unwrap();
        assert_eq!(ValueData.holds(&tree, data).unwrap(), None);
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, data);
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
    }
}

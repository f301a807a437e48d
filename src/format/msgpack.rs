//! MessagePack through rmp-serde (serde) and rmpv's `Value` as the format's value tree for the
//! dynamic decode. Two variants of the one backend, each with its own bytes and size: structs as
//! arrays (the crate's compact default, `encode::write`: fields by position, so both ends must
//! agree on the field order) and `named`, structs as maps from field name to value
//! (`encode::write_named`: self-describing, what other languages' MessagePack libraries read as
//! objects). `rmp_serde::from_slice` reads either, so both variants decode with it.
//!
//! Borrowed mode (both variants): `rmp_serde::from_slice` into the borrowed structs, whose
//! `&str` fields point into the input (a MessagePack string is its UTF-8 bytes, never escaped).
//!
//! Buffer policy: `rmp_serde::encode::write` / `write_named` append to the harness's reused
//! output buffer; decode reads from the borrowed bytes (`from_slice`). The dynamic decode reads the bytes into
//! an owned `rmpv::Value` tree (`rmpv::decode::read_value`); only to prove it holds the same
//! data, the tree is written back and decoded to the model (untimed).
//!
//! Data payloads (`--data`): the `rmpv::Value` tree of the document, or an array of the records,
//! written by `rmpv::encode::write_value` into the reused output buffer and read back by
//! `read_value`; integers are written in their smallest MessagePack form.
//!
//! msgpacker (feature `msgpacker`, [`packer`]): its own `MsgPacker` derive, which writes a
//! struct's fields one after another with no array or map header (a stream of values, not one
//! value), and a unit enum as its variant index.

use std::hint::black_box;

use anyhow::{Context, Result};

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
#[cfg(feature = "msgpacker")]
use crate::arm::Mode;
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Dynamic, Operation};
#[cfg(feature = "msgpacker")]
use crate::payload::corpus_specs;
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "msgpack",
    about: "MessagePack: rmp-serde (structs as arrays, and as maps), rmpv value tree",
    colour: [0x66, 0x99, 0xFF],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "rmp-serde writes structs as arrays (positional: none) by default; the `named` variant writes maps, by field name (serde `default`, `alias`)",
        languages: &[
            "C",
            "C++",
            "C#",
            "Go",
            "Java",
            "JavaScript",
            "Python",
            "Ruby",
            "Rust",
            "Swift",
            "Erlang",
        ],
        languages_source: "https://msgpack.org",
    },
    backends: &[
        BackendDoc {
            backend: "rmp-serde",
            variant: "",
            crates: &["rmp-serde", "rmpv"],
            crate_note: "rmpv for the dynamic decode",
            schema: "-",
            buffer_policy: "`encode::write` (structs as arrays) into a reused `Vec`; decode from the borrowed bytes",
        },
        BackendDoc {
            backend: "rmp-serde",
            variant: "named",
            crates: &["rmp-serde", "rmpv"],
            crate_note: "rmpv for the dynamic decode",
            schema: "-",
            buffer_policy: "`encode::write_named` (structs as maps keyed by field name) into a reused `Vec`; decode from the borrowed bytes",
        },
        #[cfg(feature = "msgpacker")]
        BackendDoc {
            backend: "msgpacker",
            variant: "",
            crates: &["msgpacker"],
            crate_note: "`derive` feature; a struct is its fields' values in a row, with no array or map header; its `i64` refuses the unsigned forms other writers use for non-negative values",
            schema: "-",
            buffer_policy: "native `MsgPacker` derive; `pack` into the reused `Vec` (`BufMut`); `unpack` from the borrowed bytes",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "rmp-serde",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: rmp_serde_order_decode,
        },
        #[cfg(feature = "msgpacker")]
        Fidelity {
            backend: "msgpacker",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: packer::order_decode,
        },
    ],
    register: |registry| {
        visit_all(&mut Msgpack(registry));
        visit_borrowed(&mut Msgpack(registry));
        visit_corpora(&mut Msgpack(registry));
        #[cfg(feature = "msgpacker")]
        {
            visit_all(&mut packer::Packers(registry));
            for spec in corpus_specs() {
                registry.unsupported(spec, "msgpacker", packer::NO_GENERIC_BOUNDS);
            }
            for spec in crate::payload::borrowed_specs() {
                registry.unsupported_mode(spec, "msgpacker", Mode::Borrowed, packer::NO_BORROWED_MAP);
            }
        }
    },
    typed: TypedSupport::Derive(&TypedDerive {
        #[cfg(feature = "msgpacker")]
        derives: &["msgpacker::MsgPacker"],
        #[cfg(feature = "msgpacker")]
        crates: &["msgpacker"],
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(|registry, payload| {
        // The value tree writes objects as maps keyed by name: the `named` variant's shape, so its
        // arms are that variant's and pair with the named typed arms (`--typed`).
        registry.data_tree(payload, NAMED, ValueData, &Operation::CODEC);
        #[cfg(feature = "msgpacker")]
        registry.unsupported(payload.spec, "msgpacker", super::NEEDS_RUST_TYPES);
    }),
    evolution: super::EvolutionSupport::Measured {
        serde: &[
            super::SerdeEvolution {
                backend: "rmp-serde",
                variant: "",
                encode: |value| rmp_serde::to_vec(value).map_err(|error| error.to_string()),
                decode: |bytes, seed| {
                    let mut deserializer = rmp_serde::Deserializer::from_read_ref(bytes);
                    serde::de::DeserializeSeed::deserialize(seed, &mut deserializer)
                        .map_err(|error| error.to_string())
                },
            },
            super::SerdeEvolution {
                backend: "rmp-serde",
                variant: "named",
                encode: |value| rmp_serde::to_vec_named(value).map_err(|error| error.to_string()),
                decode: |bytes, seed| {
                    let mut deserializer = rmp_serde::Deserializer::from_read_ref(bytes);
                    serde::de::DeserializeSeed::deserialize(seed, &mut deserializer)
                        .map_err(|error| error.to_string())
                },
            },
        ],
        schema: &[],
    },
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Msgpack(registry).payload(payload);
    #[cfg(feature = "msgpacker")]
    packer::Packers(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Msgpack(registry).borrowed(payload);
    #[cfg(feature = "msgpacker")]
    registry.unsupported_mode(payload.spec, "msgpacker", Mode::Borrowed, packer::NO_BORROWED_MAP);
}

/// What a model type needs beyond serde: msgpacker's derive, with its feature.
#[cfg(feature = "msgpacker")]
pub use packer::Native;
/// What a model type needs beyond serde: nothing, without msgpacker.
#[cfg(not(feature = "msgpacker"))]
pub trait Native {}
#[cfg(not(feature = "msgpacker"))]
impl<T> Native for T {}

const RMP_SERDE: Backend = Backend::new("rmp-serde");
const NAMED: Backend = RMP_SERDE.variant("named");

struct Msgpack<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Msgpack<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, RMP_SERDE, || RmpSerde::<false>);
        self.0
            .dynamic(payload, RMP_SERDE, || RmpSerde::<false>, || ValueTree);
        self.0.codec(payload, NAMED, || RmpSerde::<true>);
        self.0.dynamic(payload, NAMED, || RmpSerde::<true>, || ValueTree);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Msgpack<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, RMP_SERDE, || RmpSerde::<false>, || RmpSerde::<false>);
        self.0
            .borrowed(payload, NAMED, || RmpSerde::<true>, || RmpSerde::<true>);
    }
}

/// msgpacker through its own derive: it carries every built-in payload; not the corpora (a
/// generic type) nor the borrowed twins (no borrowed map).
#[cfg(feature = "msgpacker")]
mod packer {
    use anyhow::Result;
    use msgpacker::{Packable, Unpackable};

    use crate::arm::{Backend, Codec};
    use crate::format::Registry;
    use crate::payload::{Model, Payload, Visit};

    pub const MSGPACKER: Backend = Backend::new("msgpacker");
    /// Why msgpacker carries no corpus.
    pub const NO_GENERIC_BOUNDS: &str = "msgpacker's derive bounds no type parameter, so twitter's generic `Status<Retweet>` cannot derive it (the corpora share one list of derives)";
    /// Why msgpacker has no borrowed decode here.
    pub const NO_BORROWED_MAP: &str = "msgpacker's `UnpackableBorrowed` has no map type: the borrowed twins' `BTreeMap<&str, &str>` (telemetry, checkout) cannot derive it";

    /// What msgpacker's derive gives a model type.
    pub trait Native: Packable + Unpackable {}
    impl<T: Packable + Unpackable> Native for T {}

    pub struct Packers<'a>(pub &'a mut Registry);

    impl<P: Model + Native> Visit<P> for Packers<'_> {
        fn payload(&mut self, payload: &Payload<P>) {
            self.0.codec(payload, MSGPACKER, || MsgPacker);
        }
    }

    pub struct MsgPacker;

    /// Fidelity: msgpacker's `Unpackable::unpack` of `order`.
    pub fn order_decode() -> Box<dyn FnMut()> {
        let order: &crate::payload::Order = crate::payload::value_of("order").expect("order is an Order");
        let mut bytes = Vec::new();
        order.pack(&mut bytes);
        Box::new(move || {
            std::hint::black_box(
                crate::payload::Order::unpack(std::hint::black_box(&bytes)).expect("it decodes"),
            );
        })
    }

    impl<P: Model + Native> Codec<P> for MsgPacker {
        fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
            value.pack(out);
            Ok(out)
        }

        fn decode(&mut self, bytes: &[u8]) -> Result<P> {
            let (read, value) = P::unpack_with_ofs(bytes).map_err(|error| anyhow::anyhow!("{error}"))?;
            anyhow::ensure!(
                read == bytes.len(),
                "{} bytes after the value",
                bytes.len() - read
            );
            Ok(value)
        }
    }
}

/// rmp-serde writing structs as maps keyed by field name (`NAMED`) or as arrays; a constant, so
/// each variant's encode is its own monomorphic code.
pub struct RmpSerde<const NAMED: bool>;

impl<P: Model, const NAMED: bool> Codec<P> for RmpSerde<NAMED> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        if NAMED {
            rmp_serde::encode::write_named(out, value)?;
        } else {
            rmp_serde::encode::write(out, value)?;
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(rmp_serde::from_slice(bytes)?)
    }
}

impl<B: Borrowed, const NAMED: bool> BorrowedDecode<B> for RmpSerde<NAMED>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(rmp_serde::from_slice(bytes)?)
    }
}

/// rmpv's owned value tree (of either variant's bytes).
pub struct ValueTree;

impl<P: Model> Dynamic<P> for ValueTree {
    type Tree = rmpv::Value;

    fn decode_tree(&mut self, mut bytes: &[u8]) -> Result<rmpv::Value> {
        Ok(rmpv::decode::read_value(&mut bytes)?)
    }

    /// Written back as MessagePack and read with rmp-serde: `rmpv::ext::from_value` cannot
    /// read the unit enum variants rmp-serde writes (as strings). The tree keeps the bytes'
    /// shape (arrays or maps), so this proves the variant's own tree.
    fn to_model(&mut self, tree: rmpv::Value) -> Result<P> {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &tree)?;
        Ok(rmp_serde::from_slice(&bytes)?)
    }
}

/// A data payload as one `rmpv::Value`: the document, or an array of the records.
pub struct ValueData;

impl Codec<rmpv::Value> for ValueData {
    fn encode<'a>(&'a mut self, tree: &rmpv::Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        rmpv::encode::write_value(out, tree)?;
        Ok(out)
    }

    fn decode(&mut self, mut bytes: &[u8]) -> Result<rmpv::Value> {
        let tree = rmpv::decode::read_value(&mut bytes)?;
        anyhow::ensure!(bytes.is_empty(), "{} bytes after the value", bytes.len());
        Ok(tree)
    }
}

impl DataTree<DataPayload> for ValueData {
    type Tree = rmpv::Value;
    type Codec = ValueData;

    fn codec(&self) -> ValueData {
        ValueData
    }

    fn tree(&self, data: &DataPayload) -> Result<rmpv::Value> {
        Ok(to_rmpv(&data.as_value()))
    }

    fn holds(&self, tree: &rmpv::Value, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(&from_rmpv(tree)?, Equivalence::Exact))
    }
}

fn to_rmpv(value: &serde_json::Value) -> rmpv::Value {
    match value {
        serde_json::Value::Null => rmpv::Value::Nil,
        serde_json::Value::Bool(flag) => rmpv::Value::Boolean(*flag),
        serde_json::Value::Number(number) => match number.as_i64() {
            Some(integer) => rmpv::Value::from(integer),
            None => rmpv::Value::F64(number.as_f64().expect("a JSON number is an i64 or a double here")),
        },
        serde_json::Value::String(text) => rmpv::Value::from(text.as_str()),
        serde_json::Value::Array(items) => rmpv::Value::Array(items.iter().map(to_rmpv).collect()),
        serde_json::Value::Object(object) => rmpv::Value::Map(
            object
                .iter()
                .map(|(key, value)| (rmpv::Value::from(key.as_str()), to_rmpv(value)))
                .collect(),
        ),
    }
}

/// The JSON a MessagePack value stands for; what JSON cannot hold (binary, extensions, a map
/// key that is not a string, bytes that are not UTF-8) is an error.
fn from_rmpv(value: &rmpv::Value) -> Result<serde_json::Value> {
    use rmpv::Value;
    Ok(match value {
        Value::Nil => serde_json::Value::Null,
        Value::Boolean(flag) => serde_json::Value::from(*flag),
        Value::Integer(integer) => match (integer.as_i64(), integer.as_u64()) {
            (Some(signed), _) => serde_json::Value::from(signed),
            (None, Some(unsigned)) => serde_json::Value::from(unsigned),
            (None, None) => anyhow::bail!("the integer {integer} is out of range"),
        },
        Value::F32(float) => serde_json::Value::from(f64::from(*float)),
        Value::F64(float) => serde_json::Number::from_f64(*float)
            .map(serde_json::Value::Number)
            .with_context(|| format!("the double {float} is not a JSON number"))?,
        Value::String(text) => serde_json::Value::from(text.as_str().context("a string that is not UTF-8")?),
        Value::Array(items) => serde_json::Value::Array(items.iter().map(from_rmpv).collect::<Result<_>>()?),
        Value::Map(entries) => serde_json::Value::Object(
            entries
                .iter()
                .map(|(key, value)| {
                    let key = key.as_str().context("a map key that is not a string")?;
                    Ok((key.to_string(), from_rmpv(value)?))
                })
                .collect::<Result<_>>()?,
        ),
        Value::Binary(_) | Value::Ext(..) => anyhow::bail!("binary data is not JSON"),
    })
}

/// Fidelity: `rmp_serde::from_slice` of `order`.
fn rmp_serde_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = rmp_serde::to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(rmp_serde::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    fn encode<const NAMED: bool>(order: &Order) -> Vec<u8> {
        let mut out = Vec::new();
        RmpSerde::<NAMED>.encode(order, &mut out).unwrap().to_vec()
    }

    /// The two variants write different bytes (arrays vs maps with the field names), and one
    /// decoder, `from_slice`, reads both back to the same value.
    #[test]
    fn named_writes_structs_as_maps_and_the_default_as_arrays_and_both_decode() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let (arrays, maps) = (encode::<false>(order), encode::<true>(order));
        let array = rmpv::decode::read_value(&mut arrays.as_slice()).unwrap();
        assert_eq!(array.as_array().map(Vec::len), Some(15));
        let map = rmpv::decode::read_value(&mut maps.as_slice()).unwrap();
        let keys: Vec<&str> = map
            .as_map()
            .unwrap()
            .iter()
            .map(|(key, _)| key.as_str().unwrap())
            .collect();
        assert_eq!(keys.len(), 15);
        assert_eq!(keys[..2], ["order_id", "customer_id"]);
        assert_eq!(
            maps.len() - arrays.len(),
            keys.iter().map(|key| 1 + key.len()).sum::<usize>()
        );
        for bytes in [&arrays, &maps] {
            assert_eq!(
                &Codec::<Order>::decode(&mut RmpSerde::<false>, bytes).unwrap(),
                order
            );
            assert_eq!(
                &Codec::<Order>::decode(&mut RmpSerde::<true>, bytes).unwrap(),
                order
            );
            let tree = Dynamic::<Order>::decode_tree(&mut ValueTree, bytes).unwrap();
            assert_eq!(&Dynamic::<Order>::to_model(&mut ValueTree, tree).unwrap(), order);
        }
    }

    /// msgpacker writes the fields of a struct as rmp-serde's compact variant does, without the
    /// array header: rmp-serde's `order` is one array of 15 values, msgpacker's the same 15 values
    /// in a row, each the same bytes (the status enum by index in both).
    #[cfg(feature = "msgpacker")]
    #[test]
    fn msgpacker_writes_rmp_serdes_fields_without_the_struct_header() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let compact = encode::<false>(order);
        let mut packed = Vec::new();
        let packed = packer::MsgPacker.encode(order, &mut packed).unwrap().to_vec();
        let array = rmpv::decode::read_value(&mut compact.as_slice()).unwrap();
        let fields = array.as_array().unwrap();
        let mut rest = packed.as_slice();
        let mut stream = Vec::new();
        while !rest.is_empty() {
            stream.push(rmpv::decode::read_value(&mut rest).unwrap());
        }
        assert_eq!(&stream, fields);
        assert_eq!(compact.len() - packed.len(), 1, "one fixarray header");
        assert_eq!(
            &Codec::<Order>::decode(&mut packer::MsgPacker, &packed).unwrap(),
            order
        );
        // Bytes left over are an error, not ignored.
        let mut longer = packed.clone();
        longer.push(0xc0);
        assert!(Codec::<Order>::decode(&mut packer::MsgPacker, &longer).is_err());
    }

    #[test]
    fn every_msgpack_data_arm_proves_on_tricky_records() {
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, test_payload("tricky", TRICKY));
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        // msgpacker needs Rust types.
        let expected = if cfg!(feature = "msgpacker") { 1 } else { 0 };
        assert_eq!(reasons.len(), expected, "{reasons:?}");
        // What JSON cannot hold is an error, not a silent change.
        assert!(from_rmpv(&rmpv::Value::Binary(vec![1])).is_err());
        assert!(from_rmpv(&rmpv::Value::Map(vec![(rmpv::Value::from(1), rmpv::Value::Nil)])).is_err());
    }
}

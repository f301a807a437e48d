//! CBOR (RFC 8949) through two crates that write different bytes for the same data:
//!
//! - `ciborium` (serde): structs as maps keyed by the field names (serde's data model, as JSON
//!   does), unit enum variants as their names, and every float in the shortest of half, single
//!   or double precision that holds it exactly. `ciborium::Value` is the format's value tree
//!   for the dynamic decode.
//! - `minicbor` with its own derive (`#[n(i)]` on every field of the model types): structs as
//!   arrays, the derive's default (minicbor's map encoding would key them by the index numbers,
//!   not the names, so it could not match ciborium's bytes either), the fieldless enum as its
//!   index (`#[cbor(index_only)]`), and every `f64` in double precision.
//!
//! Borrowed mode: minicbor decodes the borrowed structs (their derive's `#[b(i)]` fields), whose
//! `&str` fields point into the input; ciborium cannot borrow (see `CIBORIUM_COPIES`).
//!
//! Integers and lengths are written in the shortest head by both. The two encodings differ for
//! every payload (every payload is a struct); the tests below pin the differences.
//!
//! Buffer policy: both encode into the harness's reused output buffer (`ciborium::into_writer`
//! through `std::io::Write`, `minicbor::encode` through minicbor's `Write` for `Vec<u8>`) and
//! decode from the borrowed bytes. `ciborium::from_reader` zeroes a 4 KiB scratch buffer on the
//! stack per call (its documented entry point; strings up to 4 KiB pass through it); minicbor
//! decodes from the slice itself. The dynamic decode reads an owned `ciborium::Value` tree; only
//! to prove it holds the same data, the tree is converted back to the model (untimed).
//! Neither crate's decode checks that the input ends where the value ends.

use std::hint::black_box;

use anyhow::Result;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedBorrowed, TypedDerive, TypedSupport};
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Dynamic, Mode, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, corpus_specs, visit_all, visit_borrowed,
    visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "cbor",
    about: "CBOR: ciborium (serde, structs as maps) and minicbor (native derive, structs as arrays)",
    colour: [0xAA, 0xAA, 0x55],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "ciborium: by field name (serde `default`, `alias`); minicbor: by index (`#[n(i)]`), added optional fields with new indices",
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
        languages_source: "https://cbor.io/impls.html",
    },
    backends: &[
        BackendDoc {
            backend: "ciborium",
            variant: "",
            crates: &["ciborium"],
            crate_note: "last release 2024-01-24; `ciborium::Value` for the dynamic decode",
            schema: "-",
            buffer_policy: "`into_writer` (structs as maps) into a reused `Vec`; `from_reader` over the borrowed bytes (a 4 KiB stack scratch per call)",
        },
        BackendDoc {
            backend: "minicbor",
            variant: "",
            crates: &["minicbor"],
            crate_note: "`derive`, `std` features, not `half`; no declared MSRV, edition 2024 needs Rust 1.85; licence BlueOak-1.0.0",
            schema: "-",
            buffer_policy: "native `Encode`/`Decode` derive (structs as arrays); `encode` into a reused `Vec`; decode from the borrowed bytes",
        },
        #[cfg(feature = "cbor4ii")]
        BackendDoc {
            backend: "cbor4ii",
            variant: "",
            crates: &["cbor4ii"],
            crate_note: "`serde1`, `use_std` features; `cbor4ii::core::Value` for --data",
            schema: "-",
            buffer_policy: "`serde::to_vec` (structs as maps) appending to the reused `Vec` it is handed; `from_slice` over the borrowed bytes",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "ciborium",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: ciborium_order_decode,
        },
        Fidelity {
            backend: "minicbor",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: minicbor_order_decode,
        },
        #[cfg(feature = "cbor4ii")]
        Fidelity {
            backend: "cbor4ii",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: four::order_decode,
        },
    ],
    register: |registry| {
        visit_all(&mut Ciboriums(registry));
        visit_corpora(&mut Ciboriums(registry));
        visit_all(&mut Minicbors(registry));
        visit_borrowed(&mut Minicbors(registry));
        for spec in crate::payload::borrowed_specs() {
            registry.unsupported_mode(spec, CIBORIUM.name, Mode::Borrowed, CIBORIUM_COPIES);
        }
        for spec in corpus_specs() {
            registry.unsupported(
                spec,
                MINICBOR.name,
                "no minicbor derive written for the corpus types",
            );
        }
        #[cfg(feature = "cbor4ii")]
        {
            visit_all(&mut four::Cbor4iis(registry));
            visit_borrowed(&mut four::Cbor4iis(registry));
            visit_corpora(&mut four::Cbor4iis(registry));
        }
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["minicbor::Encode", "minicbor::Decode"],
        crates: &["minicbor"],
        field_attribute: "n({index})",
        borrowed: TypedBorrowed::Arms {
            derives: &["minicbor::Decode"],
            field_attribute: "b({index})",
        },
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(|registry, payload| {
        registry.data_tree(payload, CIBORIUM, ValueData, &Operation::CODEC);
        #[cfg(feature = "cbor4ii")]
        registry.data_tree(payload, four::CBOR4II, four::ValueData, &Operation::CODEC);
        registry.unsupported(
            payload.spec,
            MINICBOR.name,
            "minicbor decodes into types with its derive; the value tree of --data is ciborium's",
        );
    }),
    evolution: super::EvolutionSupport::Measured {
        serde: &[
            super::SerdeEvolution {
                backend: "ciborium",
                variant: "",
                encode: |value| {
                    let mut out = Vec::new();
                    ciborium::into_writer(value, &mut out).map_err(|error| error.to_string())?;
                    Ok(out)
                },
                decode: |bytes, seed| {
                    crate::shape::read_as(seed.0, || ciborium::from_reader::<crate::shape::Seeded, _>(bytes))
                },
            },
            #[cfg(feature = "cbor4ii")]
            super::SerdeEvolution {
                backend: "cbor4ii",
                variant: "",
                encode: |value| {
                    ::cbor4ii::serde::to_vec(Vec::new(), value).map_err(|error| error.to_string())
                },
                decode: |bytes, seed| {
                    let reader = ::cbor4ii::core::utils::SliceReader::new(bytes);
                    let mut deserializer = ::cbor4ii::serde::Deserializer::new(reader);
                    serde::de::DeserializeSeed::deserialize(seed, &mut deserializer)
                        .map_err(|error| error.to_string())
                },
            },
        ],
        schema: &[evolve::EVOLUTION],
    },
};

mod evolve;

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Ciboriums(registry).payload(payload);
    Minicbors(registry).payload(payload);
    #[cfg(feature = "cbor4ii")]
    four::Cbor4iis(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`): minicbor's; ciborium's
/// reason.
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'b> B::Ref<'b>: minicbor::Decode<'b, ()> + serde::Deserialize<'b>,
{
    Minicbors(registry).borrowed(payload);
    #[cfg(feature = "cbor4ii")]
    four::Cbor4iis(registry).borrowed(payload);
    registry.unsupported_mode(payload.spec, CIBORIUM.name, Mode::Borrowed, CIBORIUM_COPIES);
}

const CIBORIUM: Backend = Backend::new("ciborium");
/// Why ciborium has no borrowed decode.
const CIBORIUM_COPIES: &str = "ciborium reads every string into its scratch buffer and hands serde a transient `&str` (`visit_str`), never one of the input: `&str` fields are refused";
const MINICBOR: Backend = Backend::new("minicbor");

/// What minicbor's derive gives a model type.
pub trait Native: minicbor::Encode<()> + for<'b> minicbor::Decode<'b, ()> {}
impl<T: minicbor::Encode<()> + for<'b> minicbor::Decode<'b, ()>> Native for T {}

/// ciborium (serde) carries every payload, the corpora too.
struct Ciboriums<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Ciboriums<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, CIBORIUM, || Ciborium);
        self.0.dynamic(payload, CIBORIUM, || Ciborium, || ValueTree);
    }
}

/// minicbor carries the types with its derive.
struct Minicbors<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Minicbors<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, MINICBOR, || Minicbor);
    }
}

impl<B: Borrowed + Native> VisitBorrowed<B> for Minicbors<'_>
where
    for<'b> B::Ref<'b>: minicbor::Decode<'b, ()>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0.borrowed(payload, MINICBOR, || Minicbor, || Minicbor);
    }
}

pub struct Ciborium;

impl<P: Model> Codec<P> for Ciborium {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ciborium::into_writer(value, &mut *out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(ciborium::from_reader(bytes)?)
    }
}

/// cbor4ii through serde: ciborium's data model (structs as maps keyed by field name, unit
/// variants by name, integers and lengths in the shortest head), every `f64` in 9 bytes; its own
/// `core::Value` tree for `--data`.
#[cfg(feature = "cbor4ii")]
mod four {
    use ::cbor4ii::core::Value;
    use ::cbor4ii::core::dec::Decode;
    use ::cbor4ii::core::enc::Encode;
    use ::cbor4ii::core::utils::{BufWriter, SliceReader};
    use anyhow::{Context, Result};

    use crate::arm::{Backend, BorrowedDecode, Codec, DataTree};
    use crate::format::Registry;
    use crate::payload::data::{DataPayload, Difference, Equivalence};
    use crate::payload::{Borrowed, Model, Payload, Visit, VisitBorrowed};

    pub const CBOR4II: Backend = Backend::new("cbor4ii");

    /// cbor4ii carries every payload, the corpora and the borrowed twins too.
    pub struct Cbor4iis<'a>(pub &'a mut Registry);

    impl<P: Model> Visit<P> for Cbor4iis<'_> {
        fn payload(&mut self, payload: &Payload<P>) {
            self.0.codec(payload, CBOR4II, || Cbor4ii);
        }
    }

    impl<B: Borrowed> VisitBorrowed<B> for Cbor4iis<'_>
    where
        for<'a> B::Ref<'a>: serde::Deserialize<'a>,
    {
        fn borrowed(&mut self, payload: &Payload<B>) {
            self.0.borrowed(payload, CBOR4II, || Cbor4ii, || Cbor4ii);
        }
    }

    pub struct Cbor4ii;

    impl<P: Model> Codec<P> for Cbor4ii {
        /// `to_vec` takes the buffer it appends to and gives it back: the harness's, reused.
        fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
            *out = ::cbor4ii::serde::to_vec(std::mem::take(out), value)?;
            Ok(out)
        }

        fn decode(&mut self, bytes: &[u8]) -> Result<P> {
            Ok(::cbor4ii::serde::from_slice(bytes)?)
        }
    }

    impl<B: Borrowed> BorrowedDecode<B> for Cbor4ii
    where
        for<'a> B::Ref<'a>: serde::Deserialize<'a>,
    {
        fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
            Ok(::cbor4ii::serde::from_slice(bytes)?)
        }
    }

    /// Fidelity: `cbor4ii::serde::from_slice` of `order`.
    pub fn order_decode() -> Box<dyn FnMut()> {
        let order: &crate::payload::Order = crate::payload::value_of("order").expect("order is an Order");
        let bytes = ::cbor4ii::serde::to_vec(Vec::new(), order).expect("order encodes");
        Box::new(move || {
            std::hint::black_box(
                ::cbor4ii::serde::from_slice::<crate::payload::Order>(std::hint::black_box(&bytes))
                    .expect("it decodes"),
            );
        })
    }

    /// A data payload as one `cbor4ii::core::Value`: the document, or an array of the records.
    pub struct ValueData;

    impl Codec<Value> for ValueData {
        fn encode<'a>(&'a mut self, tree: &Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
            let mut writer = BufWriter::new(std::mem::take(out));
            tree.encode(&mut writer)?;
            *out = writer.into_inner();
            Ok(out)
        }

        fn decode(&mut self, bytes: &[u8]) -> Result<Value> {
            Ok(Value::decode(&mut SliceReader::new(bytes))?)
        }
    }

    impl DataTree<DataPayload> for ValueData {
        type Tree = Value;
        type Codec = ValueData;

        fn codec(&self) -> ValueData {
            ValueData
        }

        fn tree(&self, data: &DataPayload) -> Result<Value> {
            Ok(to_value(&data.as_value()))
        }

        fn holds(&self, tree: &Value, data: &DataPayload) -> Result<Option<Difference>> {
            Ok(data.compare(&from_value(tree)?, Equivalence::Exact))
        }
    }

    pub fn to_value(value: &serde_json::Value) -> Value {
        match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(flag) => Value::Bool(*flag),
            serde_json::Value::Number(number) => match (number.as_i64(), number.as_u64()) {
                (Some(integer), _) => Value::Integer(integer.into()),
                (None, Some(integer)) => Value::Integer(integer.into()),
                (None, None) => Value::Float(
                    number
                        .as_f64()
                        .expect("a JSON number is an integer or a double here"),
                ),
            },
            serde_json::Value::String(text) => Value::Text(text.clone()),
            serde_json::Value::Array(items) => Value::Array(items.iter().map(to_value).collect()),
            serde_json::Value::Object(object) => Value::Map(
                object
                    .iter()
                    .map(|(key, value)| (Value::Text(key.clone()), to_value(value)))
                    .collect(),
            ),
        }
    }

    /// The JSON a CBOR value stands for; what JSON cannot hold (bytes, tags, a key that is not
    /// text, an integer past 64 bits, a non-finite float) is an error.
    pub fn from_value(value: &Value) -> Result<serde_json::Value> {
        Ok(match value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(flag) => serde_json::Value::from(*flag),
            Value::Integer(integer) => match (i64::try_from(*integer), u64::try_from(*integer)) {
                (Ok(signed), _) => serde_json::Value::from(signed),
                (Err(_), Ok(unsigned)) => serde_json::Value::from(unsigned),
                _ => anyhow::bail!("the integer {integer} is out of range"),
            },
            Value::Float(float) => serde_json::Number::from_f64(*float)
                .map(serde_json::Value::Number)
                .with_context(|| format!("the double {float} is not a JSON number"))?,
            Value::Text(text) => serde_json::Value::from(text.as_str()),
            Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(from_value).collect::<Result<_>>()?)
            }
            Value::Map(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| match key {
                        Value::Text(key) => Ok((key.clone(), from_value(value)?)),
                        _ => anyhow::bail!("a map key that is not text"),
                    })
                    .collect::<Result<_>>()?,
            ),
            _ => anyhow::bail!("bytes or a tag is not JSON"),
        })
    }
}

/// ciborium's owned value tree.
pub struct ValueTree;

impl<P: Model> Dynamic<P> for ValueTree {
    type Tree = ciborium::Value;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<ciborium::Value> {
        Ok(ciborium::from_reader(bytes)?)
    }

    fn to_model(&mut self, tree: ciborium::Value) -> Result<P> {
        Ok(tree.deserialized()?)
    }
}

/// A data payload as one `ciborium::Value`: the document, or an array of the records. Built
/// from the records and compared with them through serde (untimed).
pub struct ValueData;

impl Codec<ciborium::Value> for ValueData {
    fn encode<'a>(&'a mut self, tree: &ciborium::Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ciborium::into_writer(tree, &mut *out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<ciborium::Value> {
        Ok(ciborium::from_reader(bytes)?)
    }
}

impl DataTree<DataPayload> for ValueData {
    type Tree = ciborium::Value;
    type Codec = ValueData;

    fn codec(&self) -> ValueData {
        ValueData
    }

    fn tree(&self, data: &DataPayload) -> Result<ciborium::Value> {
        Ok(ciborium::Value::serialized(&data.as_value())?)
    }

    fn holds(&self, tree: &ciborium::Value, data: &DataPayload) -> Result<Option<Difference>> {
        let json: serde_json::Value = tree.deserialized()?;
        Ok(data.compare(&json, Equivalence::Exact))
    }
}

pub struct Minicbor;

impl<P: Model + Native> Codec<P> for Minicbor {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        minicbor::encode(value, &mut *out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(minicbor::decode(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for Minicbor
where
    for<'b> B::Ref<'b>: minicbor::Decode<'b, ()>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(minicbor::decode(bytes)?)
    }
}

/// Fidelity: `ciborium::from_reader` of `order`.
fn ciborium_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let mut bytes = Vec::new();
    ciborium::into_writer(order, &mut bytes).expect("order encodes");
    Box::new(move || {
        black_box(ciborium::from_reader::<Order, _>(black_box(bytes.as_slice())).expect("it decodes"));
    })
}

/// Fidelity: `minicbor::decode` of `order` (its own derive).
fn minicbor_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = minicbor::to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(minicbor::decode::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ciborium::Value;

    use super::*;
    use crate::payload::{Items, OrderStatus};

    fn ciborium_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::into_writer(value, &mut out).unwrap();
        out
    }

    fn minicbor_bytes<T: minicbor::Encode<()>>(value: &T) -> Vec<u8> {
        minicbor::to_vec(value).unwrap()
    }

    /// CBOR's major type: the top 3 bits of an item's first byte.
    fn major_type(bytes: &[u8]) -> u8 {
        bytes[0] >> 5
    }

    #[test]
    fn integers_strings_lists_and_maps_are_written_alike() {
        // Every boundary of CBOR's integer heads (inline, 1, 2, 4 and 8 bytes), both signs.
        for n in [
            0,
            23,
            24,
            255,
            256,
            65_535,
            65_536,
            u32::MAX as i64,
            u32::MAX as i64 + 1,
            i64::MAX,
            -1,
            -24,
            -25,
            -256,
            -257,
            -65_537,
            i64::MIN,
        ] {
            assert_eq!(ciborium_bytes(&n), minicbor_bytes(&n), "{n}");
        }
        for len in [0, 23, 24, 255, 256, 70_000] {
            let text = "x".repeat(len);
            assert_eq!(ciborium_bytes(&text), minicbor_bytes(&text), "{len} bytes");
        }
        let list = vec!["a".to_string(), "bc".to_string()];
        assert_eq!(ciborium_bytes(&list), minicbor_bytes(&list));
        let map: BTreeMap<String, String> = [("k", "v"), ("a", "b")]
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .into();
        assert_eq!(ciborium_bytes(&map), minicbor_bytes(&map));
        assert_eq!(ciborium_bytes(&true), minicbor_bytes(&true));
    }

    /// cbor4ii writes ciborium's data model: its bytes, read as a `ciborium::Value` and written
    /// by ciborium, are ciborium's bytes of every payload and corpus but twitter, whose
    /// always-null fields are `()`: cbor4ii writes a unit as an empty array, ciborium as null.
    /// The bytes themselves differ only there and in the floats (always 9 bytes, as minicbor's):
    /// a value with neither is byte-identical.
    #[cfg(feature = "cbor4ii")]
    #[test]
    fn cbor4ii_writes_ciboriums_data_model_with_every_double_in_nine_bytes() {
        struct Same(Vec<&'static str>);
        impl<P: Model> Visit<P> for Same {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                let four = ::cbor4ii::serde::to_vec(Vec::new(), value).unwrap();
                let tree: Value = ciborium::from_reader(four.as_slice()).unwrap();
                let same = ciborium_bytes(&tree) == ciborium_bytes(value);
                assert_eq!(same, payload.spec.name != "twitter", "{}", payload.spec.name);
                self.0.push(payload.spec.name);
            }
        }
        let mut same = Same(Vec::new());
        visit_all(&mut same);
        visit_corpora(&mut same);
        assert_eq!(same.0.len(), crate::payload::specs().len());
        assert_eq!(::cbor4ii::serde::to_vec(Vec::new(), &()).unwrap(), [0x80]);
        assert_eq!(ciborium_bytes(&()), [0xF6]);
        let shipment = crate::payload::Shipment {
            shipment_id: "s-1".into(),
            carrier: "Ünïcode carrier".into(),
            tracking_number: "x".repeat(300),
            estimated_delivery_ms: -1_700_000_000_000,
            product_ids: vec!["p".into(); 30],
        };
        assert_eq!(
            ::cbor4ii::serde::to_vec(Vec::new(), &shipment).unwrap(),
            ciborium_bytes(&shipment)
        );
        let four = ::cbor4ii::serde::to_vec(Vec::new(), &0.5f64).unwrap();
        assert_eq!((four[0], four.len()), (0xFB, 9));
    }

    #[test]
    fn floats_are_shortest_in_ciborium_and_always_double_in_minicbor() {
        // (value, ciborium's encoded length): half (3), single (5) or double (9) precision,
        // whichever holds the value exactly.
        for (value, ciborium_len) in [(0.5, 3), (100_000.0, 5), (0.1, 9), (1.0e300, 9)] {
            let (shortest, double) = (ciborium_bytes(&value), minicbor_bytes(&value));
            assert_eq!(shortest.len(), ciborium_len, "{value}");
            assert_eq!((double[0], double.len()), (0xFB, 9), "{value}");
            assert_eq!(ciborium::from_reader::<f64, _>(double.as_slice()).unwrap(), value);
        }
        // Without its `half` feature, minicbor refuses the half-precision floats ciborium
        // writes (single precision it reads): the two backends do not read each other's bytes.
        assert!(minicbor::decode::<f64>(&ciborium_bytes(&0.5)).is_err());
        assert_eq!(
            minicbor::decode::<f64>(&ciborium_bytes(&100_000.0)).unwrap(),
            100_000.0
        );
    }

    #[test]
    fn structs_are_maps_of_field_names_in_ciborium_and_arrays_in_minicbor() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let as_map: Value = ciborium::from_reader(ciborium_bytes(order).as_slice()).unwrap();
        let as_array: Value = ciborium::from_reader(minicbor_bytes(order).as_slice()).unwrap();
        let (Value::Map(entries), Value::Array(items)) = (as_map, as_array) else {
            panic!("a struct should be a map in ciborium and an array in minicbor");
        };
        let names: Vec<&str> = entries.iter().map(|(key, _)| key.as_text().unwrap()).collect();
        assert_eq!(
            names,
            [
                "order_id",
                "customer_id",
                "created_at_ms",
                "quantity",
                "unit_price",
                "discount",
                "tax_rate",
                "total",
                "currency",
                "sku",
                "customer_email",
                "shipping_country",
                "status",
                "is_gift",
                "is_priority"
            ]
        );
        // The same values, in the same (declaration) order: `#[n(i)]` numbers the fields as
        // serde orders them.
        let values: Vec<Value> = entries.into_iter().map(|(_, value)| value).collect();
        assert_eq!(values, items);
    }

    #[test]
    fn the_enum_is_its_name_in_ciborium_and_its_index_in_minicbor() {
        assert_eq!(ciborium_bytes(&OrderStatus::Confirmed), b"\x69Confirmed");
        assert_eq!(minicbor_bytes(&OrderStatus::Confirmed), [0x01]);
    }

    #[test]
    fn an_array_head_claiming_2_40_records_is_an_error_not_an_allocation() {
        // The 32 records' array head (`0x98 0x20`) becomes an array of 2^40: a decoder that
        // reserved what the head announces would abort this test.
        let items: &Items = crate::payload::value_of("vec-small").unwrap();
        let splice = |bytes: Vec<u8>, at: usize| {
            assert_eq!(bytes[at..at + 2], [0x98, 32]);
            let mut bombed = bytes[..at].to_vec();
            bombed.extend_from_slice(&[0x9B, 0, 0, 0x01, 0, 0, 0, 0, 0]);
            bombed.extend_from_slice(&bytes[at + 2..]);
            bombed
        };
        // After the map head and the key "items" in ciborium, after the array head in minicbor.
        let maps = splice(ciborium_bytes(items), 7);
        assert!(ciborium::from_reader::<Items, _>(maps.as_slice()).is_err());
        assert!(ciborium::from_reader::<Value, _>(maps.as_slice()).is_err());
        let arrays = splice(minicbor_bytes(items), 1);
        assert!(minicbor::decode::<Items>(&arrays).is_err());
    }

    #[test]
    fn bytes_after_the_value_are_ignored_by_both() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let (mut maps, mut arrays) = (ciborium_bytes(order), minicbor_bytes(order));
        maps.push(0x00);
        arrays.push(0x00);
        assert_eq!(
            &ciborium::from_reader::<Order, _>(maps.as_slice()).unwrap(),
            order
        );
        assert_eq!(&minicbor::decode::<Order>(&arrays).unwrap(), order);
    }

    #[test]
    fn the_backends_write_different_bytes_for_every_payload() {
        struct Compare(Vec<&'static str>);
        impl<P: Model + Native> Visit<P> for Compare {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                let (maps, arrays) = (ciborium_bytes(value), minicbor_bytes(value));
                assert_ne!(maps, arrays, "{}", payload.spec.name);
                // Every payload is a struct: a map in one, an array in the other.
                assert_eq!(
                    (major_type(&maps), major_type(&arrays)),
                    (5, 4),
                    "{}",
                    payload.spec.name
                );
                self.0.push(payload.spec.name);
            }
        }
        let mut compare = Compare(Vec::new());
        visit_all(&mut compare);
        let corpora = crate::payload::corpus_specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>();
        assert_eq!(
            compare.0,
            crate::payload::specs()
                .iter()
                .map(|spec| spec.name)
                .filter(|name| !corpora.contains(name))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_ciborium_data_arm_proves_on_tricky_records() {
        use crate::payload::data::{TRICKY, test_payload};
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, test_payload("tricky", TRICKY));
        let trees = if cfg!(feature = "cbor4ii") { 2 } else { 1 };
        assert_eq!(proofs.len(), 3 * trees);
        for (arm, proof) in proofs {
            assert!(
                arm.starts_with("cbor/ciborium") || arm.starts_with("cbor/cbor4ii"),
                "{arm}"
            );
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert_eq!(reasons.len(), 1, "minicbor is listed unsupported: {reasons:?}");
    }
}

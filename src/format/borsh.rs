//! Borsh (Binary Object Representation Serializer for Hashing) through its native derive: one
//! canonical encoding per value, no names, no varints. Integers are fixed-width little endian
//! (an `i64` is always 8 bytes), every length is a `u32` (so no collection past 2^32 - 1
//! elements), a string is its length and its UTF-8 bytes, an enum its `u8` variant index.
//! Maps are written in key order (a `BTreeMap` as it iterates; borsh sorts a `HashMap`'s
//! entries first); the decode accepts keys in any order unless the `de_strict_order` feature
//! is on (it is not here: the crate's default). An `f64` NaN is refused both ways, by the
//! encoder and by the decoder: a model with NaN floats cannot be carried (the payloads here
//! hold none).
//!
//! Buffer policy: `borsh::to_writer` appends to the harness's reused output buffer through
//! `std::io::Write`; `borsh::from_slice` decodes from the borrowed bytes and refuses bytes
//! left over after the value.

use std::hint::black_box;

use anyhow::Result;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, Codec, Operation};
use crate::payload::data::schema::walk;
use crate::payload::data::{DataPayload, Kind, Type};
use crate::payload::{Model, Payload, TelemetryEvent, Visit, visit_all, visit_corpora};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str = "`BorshDeserialize` reads from an `io::Read` into owned values and has no lifetime: no `&str` can point into the input";

pub static FORMAT: Format = Format {
    name: "borsh",
    about: "Borsh: native derive, fixed-width integers, u32 lengths",
    colour: [0xAA, 0x00, 0x66],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged (a canonical, consensus-critical encoding)",
        languages: &[
            "Rust",
            "JavaScript",
            "TypeScript",
            "Go",
            "Python",
            "Java",
            "AssemblyScript",
        ],
        languages_source: "https://borsh.io",
    },
    backends: &[BackendDoc {
        backend: "borsh",
        variant: "",
        crates: &["borsh"],
        crate_note: "`derive` feature; `de_strict_order` off, as by default: map keys decode in any order",
        schema: "-",
        buffer_policy: "native `BorshSerialize`/`BorshDeserialize` derive; `to_writer` into a reused `Vec`; `from_slice` over the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "borsh",
        variant: "",
        payload: "telemetry",
        operation: Operation::Encode,
        case: borsh_telemetry_encode,
    }],
    register: |registry| {
        visit_all(&mut Borsh(registry));
        registry.unsupported_borrowed(NO_BORROWED);
        visit_corpora(&mut Borsh(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["borsh::BorshSerialize", "borsh::BorshDeserialize"],
        crates: &["borsh"],
        refuses: typed_refuses,
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Measured {
        serde: &[],
        schema: &[evolve::EVOLUTION],
    },
};

mod evolve;

/// Borsh refuses to write a list or a map of zero-sized values (a guard against a length that
/// costs nothing to claim): the generated struct of a record with no fields, or whose fields are
/// all such structs, is zero-sized.
fn typed_refuses(data: &DataPayload) -> Option<String> {
    let record = &data.typed_schema.record;
    let mut found = (data.is_list() && zero_sized(record)).then(|| "$".to_string());
    walk(record, &mut String::from("$"), &mut |path, ty, _| {
        let element = match &ty.kind {
            Kind::Array(item) => Some((item, "[]")),
            Kind::Map(value) => Some((value, ".*")),
            _ => None,
        };
        if let Some((item, step)) = element
            && found.is_none()
            && zero_sized(item)
        {
            found = Some(format!("{path}{step}"));
        }
    });
    found.map(|path| {
        format!("{path}: records with no fields in a list or map, which Borsh refuses (collections of zero-sized types)")
    })
}

/// Whether the generated type of `ty` has size 0: a struct whose fields are all such structs.
fn zero_sized(ty: &Type) -> bool {
    !ty.nullable()
        && matches!(&ty.kind, Kind::Record(fields)
            if fields.iter().all(|field| !field.optional() && zero_sized(&field.ty)))
}

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Borsh(registry).payload(payload);
}

/// What borsh's derive gives a model type.
pub trait Native: borsh::BorshSerialize + borsh::BorshDeserialize {}
impl<T: borsh::BorshSerialize + borsh::BorshDeserialize> Native for T {}

struct Borsh<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Borsh<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("borsh"), || NativeCodec);
    }
}

pub struct NativeCodec;

impl<P: Model + Native> Codec<P> for NativeCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        borsh::to_writer(&mut *out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(borsh::from_slice(bytes)?)
    }
}

/// Fidelity: `borsh::to_writer` of `telemetry` into a cleared, reused `Vec`.
fn borsh_telemetry_encode() -> Box<dyn FnMut()> {
    let event: &TelemetryEvent =
        crate::payload::value_of("telemetry").expect("telemetry is a TelemetryEvent");
    let mut out = Vec::new();
    Box::new(move || {
        out.clear();
        borsh::to_writer(&mut out, black_box(event)).expect("it encodes");
        black_box(&out);
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use crate::payload::{Item, Items};

    #[test]
    fn integers_are_fixed_width_and_lengths_are_u32() {
        assert_eq!(borsh::to_vec(&1i64).unwrap(), 1i64.to_le_bytes());
        assert_eq!(
            borsh::to_vec(&"ab".to_string()).unwrap(),
            [2, 0, 0, 0, b'a', b'b']
        );
    }

    #[test]
    fn a_hash_map_is_written_sorted_like_a_btree_map() {
        let entries = (0..64).map(|key| (format!("key-{key}"), key));
        let hashed: HashMap<String, i64> = entries.clone().collect();
        let sorted: BTreeMap<String, i64> = entries.collect();
        assert_eq!(borsh::to_vec(&hashed).unwrap(), borsh::to_vec(&sorted).unwrap());
    }

    #[test]
    fn nan_is_refused_by_the_encoder_and_the_decoder() {
        assert!(borsh::to_vec(&f64::NAN).is_err());
        assert!(borsh::from_slice::<f64>(&f64::NAN.to_le_bytes()).is_err());
        assert_eq!(
            borsh::from_slice::<f64>(&f64::INFINITY.to_le_bytes()).unwrap(),
            f64::INFINITY
        );
    }

    #[test]
    fn bytes_after_the_value_are_refused() {
        let mut bytes = borsh::to_vec(&7i64).unwrap();
        bytes.push(0);
        assert!(borsh::from_slice::<i64>(&bytes).is_err());
    }

    #[test]
    fn a_hostile_length_prefix_is_an_error_not_an_allocation() {
        // 4 GiB - 1 items, or a 4 GiB - 1 byte name, announced by 4 bytes: borsh caps what it
        // reserves up front (4 KiB of items, 1 MiB of bytes) and fails when the input ends.
        let mut items = u32::MAX.to_le_bytes().to_vec();
        items.extend_from_slice(
            &borsh::to_vec(&Item {
                id: 1,
                name: "n".to_string(),
                category: "c".to_string(),
                price: 1.0,
                stock: 1,
                active: true,
            })
            .unwrap(),
        );
        assert!(borsh::from_slice::<Items>(&items).is_err());
        let mut name = vec![1, 0, 0, 0];
        name.extend_from_slice(&[0; 8]);
        name.extend_from_slice(&u32::MAX.to_le_bytes());
        name.extend_from_slice(b"abc");
        assert!(borsh::from_slice::<Items>(&name).is_err());
    }
}

//! Bilrost, a Protobuf-like encoding (tagged fields, varints, length-delimited messages; not
//! Protobuf-compatible) through its own `Message` derive: fields tagged in declaration order from 1,
//! each in its `general` encoding (signed integers zigzag varints, `f64` fixed 8 bytes, a `Vec` of
//! messages repeated fields, a map alternating keys and values in one length-delimited value),
//! `OrderStatus` an `Enumeration` of explicit numbers, a field equal to its empty value (0, "",
//! false, an empty list) left out, as proto3 does.
//!
//! Borrowed mode: `BorrowedMessage::decode_borrowed` into the borrowed structs (the same derive),
//! whose `&str` fields point into the input.
//!
//! Typed data (`--typed`): the same derive on the generated types and their borrowed twins, unless
//! the data has an `Option` around a list or map or a list or map of `Option`s, which the derive
//! cannot encode ([`typed_refuses`] names the path).
//!
//! Buffer policy: `Message::encode` appends to the harness's reused output buffer (`Vec<u8>` is a
//! `BufMut`; bilrost measures the message, then writes it); `OwnedMessage::decode` reads the
//! borrowed bytes (a `Buf`) and refuses anything after the message.

use std::hint::black_box;

use anyhow::Result;
use bilrost::{BorrowedMessage, Message, OwnedMessage};

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, BorrowedDecode, Codec, Operation};
use crate::payload::data::schema::walk;
use crate::payload::data::{DataPayload, Kind, Type};
use crate::payload::{Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed};

pub static FORMAT: Format = Format {
    name: "bilrost",
    about: "Bilrost: Protobuf-like tagged fields, own derive, borrowed decode",
    colour: [0xEE, 0x00, 0x44],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "field tags, as Protobuf: add fields with new tags, skip removed ones, renames are free (names are not on the wire)",
        languages: &["Rust"],
        languages_source: "https://github.com/mumbleskates/bilrost (its encoding specification; one implementation, Rust)",
    },
    backends: &[BackendDoc {
        backend: "bilrost",
        variant: "",
        crates: &["bilrost"],
        crate_note: "default features (`derive`, `auto-optimize`, `std`)",
        schema: "-",
        buffer_policy: "own `Message` derive; `encode` into a reused `Vec`; `decode` (owned) and `decode_borrowed` from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "bilrost",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: bilrost_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Bilrost(registry));
        visit_borrowed(&mut Bilrost(registry));
        registry.unsupported_corpora(
            "no bilrost derive written for the corpus types (their nested lists need per-field encodings)",
        );
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["bilrost::Message"],
        crates: &["bilrost"],
        refuses: typed_refuses,
        borrowed: TypedBorrowed::Arms {
            derives: &["bilrost::Message"],
            field_attribute: "",
        },
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "bilrost reads only types its derive compiled (no reflection to build another version's message at run time); its rules are Protobuf's, by tag",
    ),
};

const BILROST: Backend = Backend::new("bilrost");

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Bilrost(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: BorrowedMessage<'a>,
{
    Bilrost(registry).borrowed(payload);
}

/// bilrost's derive has no encoding for an `Option` around a list or map, nor for a list or map
/// of `Option`s (a field is present or not; a repeated value cannot be absent): the first path of
/// the data whose generated type is one.
fn typed_refuses(data: &DataPayload) -> Option<String> {
    // Where the generated type is an `Option`: a nullable value, an always-null one, an absent field.
    let optional = |ty: &Type, absent: bool| absent || ty.nullable() || matches!(ty.kind, Kind::Null);
    let container = |ty: &Type| matches!(ty.kind, Kind::Array(_) | Kind::Map(_));
    let record = &data.typed_schema.record;
    let mut found = (data.is_list() && optional(record, false)).then(|| "$[]: a null record".to_string());
    walk(record, &mut String::from("$"), &mut |path, ty, parent| {
        if found.is_some() {
            return;
        }
        let absent = parent.is_some_and(|parent| match &parent.kind {
            Kind::Record(fields) => fields
                .iter()
                .any(|field| std::ptr::eq(&field.ty, ty) && field.optional()),
            _ => false,
        });
        if container(ty) && optional(ty, absent) {
            found = Some(format!(
                "{path}: a list or map that may be null or absent (`Option<Vec>`)"
            ));
        }
        let element = match &ty.kind {
            Kind::Array(item) => Some((item, "[]")),
            Kind::Map(value) => Some((value, ".*")),
            _ => None,
        };
        if let Some((item, step)) = element
            && optional(item, false)
        {
            found = Some(format!(
                "{path}{step}: a list or map of values that may be null (`Vec<Option>`)"
            ));
        }
    });
    found
        .map(|reason| format!("{reason}, which bilrost's derive cannot encode"))
        .or_else(|| too_deep(&data.typed_schema))
}

/// Where the data nests deeper than bilrost's decoder recurses (`RECURSION_LIMIT`, 100 nested
/// messages; one is the generated wrapper of a document or batch). Lists and maps are counted
/// too, so this may refuse data bilrost could read, never pass data it cannot.
fn too_deep(schema: &crate::payload::data::Schema) -> Option<String> {
    let counts = |kind: &Kind| matches!(kind, Kind::Record(_) | Kind::Array(_) | Kind::Map(_));
    crate::payload::data::schema::first_deeper_than(schema, 99, counts).map(|path| {
        format!(
            "{path}: nested deeper than bilrost's decoder recurses (100 messages, lists and maps counted)"
        )
    })
}

/// What bilrost's derive gives a model type.
pub trait Native: OwnedMessage {}
impl<T: OwnedMessage> Native for T {}

struct Bilrost<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Bilrost<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, BILROST, || BilrostCodec);
    }
}

impl<B: Borrowed + Native> VisitBorrowed<B> for Bilrost<'_>
where
    for<'a> B::Ref<'a>: BorrowedMessage<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, BILROST, || BilrostCodec, || BilrostCodec);
    }
}

pub struct BilrostCodec;

impl<P: Model + Native> Codec<P> for BilrostCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        value.encode(out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(P::decode(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for BilrostCodec
where
    for<'a> B::Ref<'a>: BorrowedMessage<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(B::Ref::decode_borrowed(bytes)?)
    }
}

/// Fidelity: `OwnedMessage::decode` of `order`.
fn bilrost_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = order.encode_to_vec();
    Box::new(move || {
        black_box(Order::decode(black_box(bytes.as_slice())).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::test_payload;

    /// The derive's limits, found by compiling each shape (2026-12-07, bilrost 0.1016.3):
    /// `Option<Vec<i64>>`, `Vec<Option<i64>>` and `BTreeMap<String, Option<String>>` do not derive;
    /// nested lists, maps of lists and `Option`s of scalars, strings and structs do.
    #[test]
    fn typed_refuses_an_optional_list_and_a_list_of_optionals_only() {
        let refuses = |name: &'static str, text: &'static str| typed_refuses(test_payload(name, text));
        assert_eq!(
            refuses(
                "fine",
                "{\"a\": [[1]], \"m\": {\"k\": [\"v\"]}, \"o\": 1}\n{\"a\": [], \"m\": {\"k\": []}, \"o\": null}"
            ),
            None
        );
        let absent = refuses("absent", "{\"a\": [1], \"b\": 1}\n{\"b\": 2}").unwrap();
        assert!(
            absent.starts_with("$.a: a list or map that may be null or absent"),
            "{absent}"
        );
        let null = refuses("null", "{\"a\": [1]}\n{\"a\": null}").unwrap();
        assert!(null.starts_with("$.a: a list or map"), "{null}");
        let items = refuses("items", "{\"a\": [1, null]}").unwrap();
        assert!(
            items.starts_with("$.a[]: a list or map of values that may be null"),
            "{items}"
        );
        let nested = refuses("nested", "{\"a\": [[1, null]]}").unwrap();
        assert!(nested.starts_with("$.a[][]: a list or map of values"), "{nested}");
        let deep = format!("{}1{}", "{\"a\": ".repeat(100), "}".repeat(100));
        let deep = refuses("deep", Box::leak(deep.into_boxed_str())).unwrap();
        assert!(
            deep.contains("nested deeper than bilrost's decoder recurses"),
            "{deep}"
        );
        let shallow = format!("{}1{}", "{\"a\": ".repeat(98), "}".repeat(98));
        assert_eq!(refuses("shallow", Box::leak(shallow.into_boxed_str())), None);
    }

    /// Fields are tagged from 1 in declaration order: `order_id` is the first key, tag 1 and
    /// wire type varint; a false bool is left out.
    #[test]
    fn fields_are_tagged_in_order_and_empty_values_left_out() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let mut out = Vec::new();
        let bytes = BilrostCodec.encode(order, &mut out).unwrap().to_vec();
        assert_eq!(&Codec::<Order>::decode(&mut BilrostCodec, &bytes).unwrap(), order);
        let mut plain = order.clone();
        plain.is_gift = false;
        plain.is_priority = false;
        let mut gift = plain.clone();
        gift.is_gift = true;
        assert_eq!(gift.encode_to_vec().len(), plain.encode_to_vec().len() + 2);
        let mut trailing = bytes.clone();
        trailing.push(0xFF);
        assert!(Codec::<Order>::decode(&mut BilrostCodec, &trailing).is_err());
    }
}

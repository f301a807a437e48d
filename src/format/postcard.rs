//! postcard (serde, varint integers, no field names): the embedded-friendly compact format.
//!
//! Borrowed mode: `postcard::from_bytes` into the borrowed structs, whose `&str` fields point
//! into the input.
//!
//! Buffer policy: `postcard::to_io` appends to the harness's reused output buffer.

use anyhow::Result;
use std::hint::black_box;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
use crate::arm::{Backend, BorrowedDecode, Codec, Operation};
use crate::payload::{
    Borrowed, Model, Order, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "postcard",
    about: "postcard, serde",
    colour: [0x66, 0xBB, 0xCC],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged",
        languages: &["Rust"],
        languages_source: "https://postcard.jamesmunns.com (the wire specification; its implementation is Rust)",
    },
    backends: &[BackendDoc {
        backend: "postcard",
        variant: "",
        crates: &["postcard"],
        crate_note: "",
        schema: "-",
        buffer_policy: "`to_io` into a reused `Vec`",
    }],
    fidelity: &[Fidelity {
        backend: "postcard",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: postcard_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Postcard(registry));
        visit_borrowed(&mut Postcard(registry));
        visit_corpora(&mut Postcard(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive::SERDE),
    data: DataSupport::Unsupported(
        "not self-describing (no type tags on the wire): it decodes only into compiled Rust types",
    ),
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "postcard",
            variant: "",
            encode: |value| postcard::to_allocvec(value).map_err(|error| error.to_string()),
            decode: |bytes, seed| {
                let mut deserializer = postcard::Deserializer::from_bytes(bytes);
                serde::de::DeserializeSeed::deserialize(seed, &mut deserializer)
                    .map_err(|error| error.to_string())
            },
        }],
        schema: &[],
    },
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model>(registry: &mut Registry, payload: &Payload<P>) {
    Postcard(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Postcard(registry).borrowed(payload);
}

struct Postcard<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Postcard<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("postcard"), || PostcardCodec);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Postcard<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0.borrowed(
            payload,
            Backend::new("postcard"),
            || PostcardCodec,
            || PostcardCodec,
        );
    }
}

pub struct PostcardCodec;

impl<B: Borrowed> BorrowedDecode<B> for PostcardCodec
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(::postcard::from_bytes(bytes)?)
    }
}

impl<P: Model> Codec<P> for PostcardCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::postcard::to_io(value, &mut *out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(::postcard::from_bytes(bytes)?)
    }
}

/// Fidelity: `postcard::from_bytes` of `order`.
fn postcard_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ::postcard::to_allocvec(order).expect("order encodes");
    Box::new(move || {
        black_box(::postcard::from_bytes::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

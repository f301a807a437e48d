//! bitcode through its native derive (the fast path, with a reused `bitcode::Buffer`) and,
//! as a second backend, through serde.
//!
//! Borrowed mode (both backends): the native `Decode` derive of the borrowed structs through
//! the reused `Buffer`, and serde's `deserialize`; their `&str` fields point into the input.
//!
//! Buffer policy: the native backend encodes into and decodes through one `bitcode::Buffer`
//! kept for the codec's life (the crate's documented way to reuse allocations); the bytes
//! are returned from that buffer, not copied. The serde backend has no buffer API: each call
//! returns a fresh `Vec`, copied into the harness's output buffer.

use anyhow::Result;
use std::hint::black_box;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, BorrowedDecode, Codec, Operation};
use crate::payload::{
    Borrowed, Items, Model, Payload, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "bitcode",
    about: "bitcode: native derive and serde",
    colour: [0xEE, 0x55, 0x66],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged, and the format may change between major versions",
        languages: &["Rust"],
        languages_source: "https://github.com/SoftbearStudios/bitcode (no specification; Rust only)",
    },
    backends: &[
        BackendDoc {
            backend: "bitcode",
            variant: "native",
            crates: &["bitcode"],
            crate_note: "",
            schema: "-",
            buffer_policy: "native derive; one `bitcode::Buffer` reused for encode and decode, the bytes returned from it (no copy)",
        },
        BackendDoc {
            backend: "bitcode",
            variant: "serde",
            crates: &["bitcode"],
            crate_note: "serde feature",
            schema: "-",
            buffer_policy: "no buffer API: each encode returns a fresh `Vec` (copied into the output)",
        },
    ],
    fidelity: &[Fidelity {
        backend: "bitcode",
        variant: "native",
        payload: "vec-small",
        operation: Operation::Decode,
        case: bitcode_vec_small_decode,
    }],
    register: |registry| {
        visit_all(&mut Bitcode(registry));
        visit_borrowed(&mut Bitcode(registry));
        visit_corpora(&mut Bitcode(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["bitcode::Encode", "bitcode::Decode"],
        crates: &["bitcode"],
        borrowed: TypedBorrowed::Arms {
            derives: &["bitcode::Decode"],
            field_attribute: "",
        },
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    // Its serde API: the derive (`native`) has no run-time twin.
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "bitcode",
            variant: "serde",
            encode: |value| bitcode::serialize(value).map_err(|error| error.to_string()),
            decode: |bytes, seed| {
                crate::shape::read_as(seed.0, || bitcode::deserialize::<crate::shape::Seeded>(bytes))
            },
        }],
        schema: &[],
    },
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Bitcode(registry).payload(payload);
}

/// The borrowed decodes of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: ::bitcode::Decode<'a> + serde::Deserialize<'a>,
{
    Bitcode(registry).borrowed(payload);
}

/// What bitcode's native path needs of a model type.
pub trait Native: ::bitcode::Encode + ::bitcode::DecodeOwned {}
impl<T: ::bitcode::Encode + ::bitcode::DecodeOwned> Native for T {}

struct Bitcode<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Bitcode<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(
            payload,
            Backend::new("bitcode").variant("native"),
            NativeCodec::default,
        );
        self.0
            .codec(payload, Backend::new("bitcode").variant("serde"), || SerdeCodec);
    }
}

impl<B: Borrowed + Native> VisitBorrowed<B> for Bitcode<'_>
where
    for<'a> B::Ref<'a>: ::bitcode::Decode<'a> + serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        let native = Backend::new("bitcode").variant("native");
        self.0
            .borrowed(payload, native, NativeCodec::default, NativeCodec::default);
        let serde = Backend::new("bitcode").variant("serde");
        self.0.borrowed(payload, serde, || SerdeCodec, || SerdeCodec);
    }
}

#[derive(Default)]
pub struct NativeCodec {
    buffer: ::bitcode::Buffer,
}

impl<P: Model + Native> Codec<P> for NativeCodec {
    fn encode<'a>(&'a mut self, value: &P, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        Ok(self.buffer.encode(value))
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(self.buffer.decode(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for NativeCodec
where
    for<'a> B::Ref<'a>: ::bitcode::Decode<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(self.buffer.decode(bytes)?)
    }
}

pub struct SerdeCodec;

impl<B: Borrowed> BorrowedDecode<B> for SerdeCodec
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(::bitcode::deserialize(bytes)?)
    }
}

impl<P: Model> Codec<P> for SerdeCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        out.extend_from_slice(&::bitcode::serialize(value)?);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(::bitcode::deserialize(bytes)?)
    }
}

/// Fidelity: a reused `bitcode::Buffer` decoding `vec-small`.
fn bitcode_vec_small_decode() -> Box<dyn FnMut()> {
    let items: &Items = crate::payload::value_of("vec-small").expect("vec-small is Items");
    let (mut buffer, bytes) = (::bitcode::Buffer::new(), ::bitcode::encode(items));
    Box::new(move || {
        black_box(buffer.decode::<Items>(black_box(&bytes)).expect("it decodes"));
    })
}

//! bitcode through its native derive (the fast path, with a reused `bitcode::Buffer`) and,
//! as a second backend, through serde.
//!
//! Buffer policy: the native backend encodes into and decodes through one `bitcode::Buffer`
//! kept for the codec's life (the crate's documented way to reuse allocations); the bytes
//! are returned from that buffer, not copied. The serde backend has no buffer API: each call
//! returns a fresh `Vec`, copied into the harness's output buffer.

use anyhow::Result;
use std::hint::black_box;

use super::{BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry};
use crate::arm::{Backend, Codec, Operation};
use crate::payload::{Items, Model, Payload, Visit, visit_all, visit_corpora};

pub static FORMAT: Format = Format {
    name: "bitcode",
    about: "bitcode: native derive and serde",
    colour: [0xE1, 0x57, 0x59],
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
        visit_corpora(&mut Bitcode(registry));
    },
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
};

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

pub struct SerdeCodec;

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

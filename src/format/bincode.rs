//! bincode 2 with its native `Encode`/`Decode` derive and the standard configuration
//! (little endian, variable-length integers). bincode 3.0.0 is an empty tombstone release,
//! so 2.0.1 is the current bincode.
//!
//! Buffer policy: encodes into the harness's reused output buffer through `std::io::Write`.

use anyhow::Result;

use super::Format;
use crate::arm::{Backend, Codec, Registry};
use crate::payload::{Model, Payload, PayloadVisitor, visit_all};

pub static FORMAT: Format = Format {
    name: "bincode",
    about: "bincode 2, native derive, standard config",
    register: |registry| visit_all(&mut Bincode(registry)),
};

/// What bincode's native path needs of a model type.
pub trait Native: ::bincode::Encode + ::bincode::Decode<()> {}
impl<T: ::bincode::Encode + ::bincode::Decode<()>> Native for T {}

struct Bincode<'a>(&'a mut Registry);

impl PayloadVisitor for Bincode<'_> {
    fn payload<P: Model>(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("bincode"), || NativeCodec);
    }
}

pub struct NativeCodec;

impl<P: Model> Codec<P> for NativeCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::bincode::encode_into_std_write(value, &mut *out, ::bincode::config::standard())?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let (value, _read) = ::bincode::decode_from_slice(bytes, ::bincode::config::standard())?;
        Ok(value)
    }
}

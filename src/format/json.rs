//! JSON through two backends on the same bytes: serde_json (the reference) and simd-json
//! (SIMD parsing, in place).
//!
//! Buffer policy: both encoders write into the harness's reused output buffer. simd-json parses
//! a `&mut [u8]` in place and clobbers it, so its decoder copies the borrowed input into a
//! scratch buffer it keeps (cleared, never freed) and reuses its parser `Buffers` too, as its
//! documentation recommends for repeated parsing.

use anyhow::Result;

use super::Format;
use crate::arm::{Backend, Codec, Registry};
use crate::payload::{Model, Payload, PayloadVisitor, visit_all};

pub static FORMAT: Format = Format {
    name: "json",
    about: "JSON: serde_json and simd-json",
    register: |registry| visit_all(&mut Json(registry)),
};

struct Json<'a>(&'a mut Registry);

impl PayloadVisitor for Json<'_> {
    fn payload<P: Model>(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("serde_json"), || SerdeJson);
        self.0
            .codec(payload, Backend::new("simd-json"), SimdJson::default);
    }
}

pub struct SerdeJson;

impl<P: Model> Codec<P> for SerdeJson {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        serde_json::to_writer(&mut *out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

#[derive(Default)]
pub struct SimdJson {
    scratch: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl<P: Model> Codec<P> for SimdJson {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        simd_json::to_writer(&mut *out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        Ok(simd_json::serde::from_slice_with_buffers(
            &mut self.scratch,
            &mut self.buffers,
        )?)
    }
}

//! wincode, the bincode-compatible successor its tombstone names (bincode 3.0.0's README lists it
//! first), with its native `SchemaWrite`/`SchemaRead` derive and its default configuration:
//! bincode 1's layout (fixed-width little-endian integers, `u64` lengths, `u32` enum tags), so
//! its bytes equal bincode 2's `config::legacy()`, not the `standard()` (varint) configuration the
//! `bincode` backend uses (tested below).
//!
//! Borrowed mode: the borrowed structs' `SchemaRead` derive, whose `&str` fields point into the
//! input.
//!
//! Buffer policy: `serialize_into` appends to the harness's reused output buffer (wincode reserves
//! the value's size once, then writes in place); `deserialize` reads from the borrowed bytes.
//! Its decoder refuses a length prefix that would preallocate more than 4 MiB (its default
//! `PREALLOCATION_SIZE_LIMIT`).

use anyhow::Result;
use std::hint::black_box;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, BorrowedDecode, Codec, Operation};
use crate::payload::{
    Borrowed, Model, Payload, TelemetryEvent, Visit, VisitBorrowed, visit_all, visit_borrowed, visit_corpora,
};

type Config = ::wincode::config::DefaultConfig;

pub static FORMAT: Format = Format {
    name: "wincode",
    about: "wincode, native derive, bincode 1's layout",
    colour: [0x88, 0x55, 0xFF],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged, as bincode's",
        languages: &["Rust"],
        languages_source: "https://github.com/anza-xyz/wincode (bincode's layout; Rust only)",
    },
    backends: &[BackendDoc {
        backend: "wincode",
        variant: "",
        crates: &["wincode"],
        crate_note: "`derive` feature; the successor bincode 3.0.0's tombstone names",
        schema: "-",
        buffer_policy: "native `SchemaWrite`/`SchemaRead` derive, default config; `serialize_into` a reused `Vec`; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "wincode",
        variant: "",
        payload: "telemetry",
        operation: Operation::Decode,
        case: wincode_telemetry_decode,
    }],
    register: |registry| {
        visit_all(&mut Wincode(registry));
        visit_borrowed(&mut Wincode(registry));
        visit_corpora(&mut Wincode(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["wincode::SchemaWrite", "wincode::SchemaRead"],
        crates: &["wincode"],
        borrowed: TypedBorrowed::Arms {
            derives: &["wincode::SchemaRead"],
            field_attribute: "",
        },
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "wincode reads only types its derive compiled (no serde or run-time type API to build another version's type); its layout is bincode 1's, positional",
    ),
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Wincode(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: ::wincode::SchemaRead<'a, Config, Dst = B::Ref<'a>>,
{
    Wincode(registry).borrowed(payload);
}

/// What wincode's derive gives a model type: written from itself, read into itself.
pub trait Native:
    ::wincode::SchemaWrite<Config, Src = Self> + for<'de> ::wincode::SchemaRead<'de, Config, Dst = Self>
{
}
impl<T> Native for T where
    T: ::wincode::SchemaWrite<Config, Src = T> + for<'de> ::wincode::SchemaRead<'de, Config, Dst = T>
{
}

const WINCODE: Backend = Backend::new("wincode");

struct Wincode<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Wincode<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, WINCODE, || WincodeCodec);
    }
}

impl<B: Borrowed + Native> VisitBorrowed<B> for Wincode<'_>
where
    for<'a> B::Ref<'a>: ::wincode::SchemaRead<'a, Config, Dst = B::Ref<'a>>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, WINCODE, || WincodeCodec, || WincodeCodec);
    }
}

pub struct WincodeCodec;

impl<P: Model + Native> Codec<P> for WincodeCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::wincode::serialize_into(&mut *out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(::wincode::deserialize(bytes)?)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for WincodeCodec
where
    for<'a> B::Ref<'a>: ::wincode::SchemaRead<'a, Config, Dst = B::Ref<'a>>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(::wincode::deserialize(bytes)?)
    }
}

/// Fidelity: `wincode::deserialize` of `telemetry`.
fn wincode_telemetry_decode() -> Box<dyn FnMut()> {
    let event: &TelemetryEvent =
        crate::payload::value_of("telemetry").expect("telemetry is a TelemetryEvent");
    let bytes = ::wincode::serialize(event).expect("telemetry encodes");
    Box::new(move || {
        black_box(::wincode::deserialize::<TelemetryEvent>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Order;

    /// wincode's bytes are bincode 2's legacy configuration's (bincode 1's) for `order` and
    /// `telemetry` (structs, strings, maps, lists, options): fixed-width integers and `u64`
    /// lengths, where `standard()` writes varints.
    #[cfg(feature = "bincode")]
    #[test]
    fn its_bytes_are_bincode_legacy_and_not_bincode_standard() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let event: &TelemetryEvent = crate::payload::value_of("telemetry").unwrap();
        let legacy = ::bincode::config::legacy();
        assert_eq!(
            ::wincode::serialize(order).unwrap(),
            ::bincode::encode_to_vec(order, legacy).unwrap()
        );
        assert_eq!(
            ::wincode::serialize(event).unwrap(),
            ::bincode::encode_to_vec(event, legacy).unwrap()
        );
        let standard = ::bincode::encode_to_vec(order, ::bincode::config::standard()).unwrap();
        assert!(standard.len() < ::wincode::serialize(order).unwrap().len());
        let mut out = Vec::new();
        let bytes = WincodeCodec.encode(order, &mut out).unwrap().to_vec();
        assert_eq!(&Codec::<Order>::decode(&mut WincodeCodec, &bytes).unwrap(), order);
    }

    /// A length prefix past the preallocation limit is refused before anything is allocated.
    #[test]
    fn a_length_bomb_is_refused() {
        let mut bomb = (u64::MAX / 2).to_le_bytes().to_vec();
        bomb.extend_from_slice(b"abc");
        assert!(::wincode::deserialize::<Vec<Order>>(&bomb).is_err());
        assert!(::wincode::deserialize::<String>(&bomb).is_err());
    }
}

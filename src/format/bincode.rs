//! bincode 2 with its native `Encode`/`Decode` derive and the standard configuration
//! (little endian, variable-length integers). bincode 3.0.0 is an empty tombstone release,
//! so 2.0.1 is the current bincode.
//!
//! Two backends over the same bytes: `bincode` (the standard configuration, no limit: a
//! length prefix is trusted, so a few hostile bytes can ask for terabytes) and
//! `bincode[hardened]`, the same configuration with `with_limit::<DECODE_LIMIT>()`, which
//! bincode's docs recommend for untrusted input: every container claims `len * size_of::<T>()`
//! bytes of the budget before it allocates, so a length bomb is a `LimitExceeded` error. The
//! encoded bytes are identical; only the decode differs.
//!
//! Borrowed mode (both backends): the borrowed structs' `BorrowDecode` derive through
//! `borrow_decode_from_slice`, whose `&str` fields point into the input.
//!
//! Buffer policy: encodes into the harness's reused output buffer through `std::io::Write`.

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

pub static FORMAT: Format = Format {
    name: "bincode",
    about: "bincode, native derive, standard config (plus a decode-limited variant)",
    colour: [0xBB, 0x66, 0x11],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged, so a change of fields fails or decodes wrongly",
        languages: &["Rust"],
        languages_source: "https://github.com/bincode-org/bincode (its spec describes the Rust encoding only)",
    },
    backends: &[
        BackendDoc {
            backend: "bincode",
            variant: "",
            crates: &["bincode"],
            crate_note: "3.0.0 is an empty tombstone release; 2.0.1 is unmaintained (RUSTSEC-2025-0141)",
            schema: "-",
            buffer_policy: "native `Encode`/`Decode` derive, standard config; encode into a reused `Vec`",
        },
        BackendDoc {
            backend: "bincode",
            variant: "hardened",
            crates: &["bincode"],
            crate_note: "",
            schema: "-",
            buffer_policy: "the same with `with_limit::<4 MiB>()`, the documented guard for untrusted input",
        },
    ],
    fidelity: &[Fidelity {
        backend: "bincode",
        variant: "",
        payload: "telemetry",
        operation: Operation::Decode,
        case: bincode_telemetry_decode,
    }],
    register: |registry| {
        visit_all(&mut Bincode(registry));
        visit_borrowed(&mut Bincode(registry));
        visit_corpora(&mut Bincode(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["bincode::Encode", "bincode::Decode"],
        crates: &["bincode"],
        borrowed: TypedBorrowed::Arms {
            derives: &["bincode::BorrowDecode"],
            field_attribute: "",
        },
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    // Through bincode's serde API, which writes what its derive writes for a struct of these
    // types (src/shape.rs tests it): the derive has no run-time twin.
    evolution: super::EvolutionSupport::Measured {
        serde: &[super::SerdeEvolution {
            backend: "bincode",
            variant: "",
            encode: |value| {
                bincode::serde::encode_to_vec(value, bincode::config::standard())
                    .map_err(|error| error.to_string())
            },
            // A read of another version's bytes can take any length for a string or a list: the
            // limit (16 MiB) refuses what would otherwise abort the process out of memory.
            decode: |bytes, seed| {
                let config = bincode::config::standard().with_limit::<{ 16 << 20 }>();
                bincode::serde::seed_decode_from_slice(seed, bytes, config)
                    .map(|(value, _)| value)
                    .map_err(|error| error.to_string())
            },
        }],
        schema: &[],
    },
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Bincode(registry).payload(payload);
}

/// The borrowed decodes of a generated payload's twin type (`--typed`).
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: ::bincode::BorrowDecode<'a, ()>,
{
    Bincode(registry).borrowed(payload);
}

/// The hardened decode budget: 4 MiB of claimed bytes (roughly the decoded in-memory size),
/// several times the largest payload here (`map-big`), so every payload decodes and a hostile
/// length prefix is refused before anything is allocated.
pub const DECODE_LIMIT: usize = 4 << 20;

/// What bincode's native path needs of a model type.
pub trait Native: ::bincode::Encode + ::bincode::Decode<()> {}
impl<T: ::bincode::Encode + ::bincode::Decode<()>> Native for T {}

struct Bincode<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Bincode<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("bincode"), || NativeCodec);
        self.0
            .codec(payload, Backend::new("bincode").variant("hardened"), || {
                HardenedCodec
            });
    }
}

impl<B: Borrowed + Native> VisitBorrowed<B> for Bincode<'_>
where
    for<'a> B::Ref<'a>: ::bincode::BorrowDecode<'a, ()>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0
            .borrowed(payload, Backend::new("bincode"), || NativeCodec, || NativeCodec);
        let hardened = Backend::new("bincode").variant("hardened");
        self.0
            .borrowed(payload, hardened, || HardenedCodec, || HardenedCodec);
    }
}

pub struct NativeCodec;

impl<B: Borrowed> BorrowedDecode<B> for NativeCodec
where
    for<'a> B::Ref<'a>: ::bincode::BorrowDecode<'a, ()>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        let (value, _read) = ::bincode::borrow_decode_from_slice(bytes, ::bincode::config::standard())?;
        Ok(value)
    }
}

impl<P: Model + Native> Codec<P> for NativeCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::bincode::encode_into_std_write(value, &mut *out, ::bincode::config::standard())?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let (value, _read) = ::bincode::decode_from_slice(bytes, ::bincode::config::standard())?;
        Ok(value)
    }
}

/// The standard configuration with a decode limit ([`DECODE_LIMIT`]).
pub struct HardenedCodec;

impl<P: Model + Native> Codec<P> for HardenedCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        let config = ::bincode::config::standard().with_limit::<DECODE_LIMIT>();
        ::bincode::encode_into_std_write(value, &mut *out, config)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let config = ::bincode::config::standard().with_limit::<DECODE_LIMIT>();
        let (value, _read) = ::bincode::decode_from_slice(bytes, config)?;
        Ok(value)
    }
}

impl<B: Borrowed> BorrowedDecode<B> for HardenedCodec
where
    for<'a> B::Ref<'a>: ::bincode::BorrowDecode<'a, ()>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        let config = ::bincode::config::standard().with_limit::<DECODE_LIMIT>();
        let (value, _read) = ::bincode::borrow_decode_from_slice(bytes, config)?;
        Ok(value)
    }
}

/// Fidelity: `bincode::decode_from_slice` of `telemetry`, standard configuration.
fn bincode_telemetry_decode() -> Box<dyn FnMut()> {
    let event: &TelemetryEvent =
        crate::payload::value_of("telemetry").expect("telemetry is a TelemetryEvent");
    let config = ::bincode::config::standard();
    let bytes = ::bincode::encode_to_vec(event, config).expect("telemetry encodes");
    Box::new(move || {
        black_box(
            ::bincode::decode_from_slice::<TelemetryEvent, _>(black_box(&bytes), config).expect("it decodes"),
        );
    })
}

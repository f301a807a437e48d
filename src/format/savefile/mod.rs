//! savefile through its own `Savefile` derive: a header (magic, savefile's own version, the data's
//! version number), then the fields in order, integers and floats fixed-width little endian,
//! lengths `u64`. Two variants of the one backend: `savefile::save`/`load`, its default, which
//! also writes the type's schema and, reading, compares it with the reader's (so a reader of
//! another layout refuses instead of misreading), and `noschema` (`save_noschema`/`load_noschema`),
//! which the crate offers to save the space and time of the schema.
//!
//! Versioning is savefile's own: the data's version number travels in the header and the derive
//! reads older versions by the fields' `#[savefile_versions = "..."]` ranges; every type here is
//! version 0. `serbench evolve` measures the versioning itself (savefile/evolve.rs).
//!
//! Buffer policy: both write into the harness's reused output buffer through `std::io::Write`
//! and read from the borrowed bytes through `std::io::Read` into owned values (no borrowing
//! decode).

mod evolve;

use std::hint::black_box;

use anyhow::Result;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, Codec, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all, visit_corpora};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str =
    "savefile decodes from an `io::Read` into owned values: no `&str` can point into the input";

/// The version number every model type is saved as.
const VERSION: u32 = 0;

pub static FORMAT: Format = Format {
    name: "savefile",
    about: "savefile: own derive, versioned, with or without its schema",
    colour: [0x77, 0x00, 0xFF],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "by version number: the derive reads older versions by each field's `#[savefile_versions]` range (added, removed, retyped fields), refuses newer ones; the saved schema checks the field types, not names",
        languages: &["Rust"],
        languages_source: "https://github.com/avl/savefile (Rust only)",
    },
    backends: &[
        BackendDoc {
            backend: "savefile",
            variant: "",
            crates: &["savefile"],
            crate_note: "`derive` feature only",
            schema: "its own, from the derive: written with the data and checked on load",
            buffer_policy: "own `Savefile` derive; `save` into a reused `Vec`; `load` from the borrowed bytes",
        },
        BackendDoc {
            backend: "savefile",
            variant: "noschema",
            crates: &["savefile"],
            crate_note: "",
            schema: "-",
            buffer_policy: "`save_noschema` into a reused `Vec`; `load_noschema` from the borrowed bytes",
        },
    ],
    fidelity: &[Fidelity {
        backend: "savefile",
        variant: "noschema",
        payload: "order",
        operation: Operation::Decode,
        case: savefile_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Savefile(registry));
        registry.unsupported_borrowed(NO_BORROWED);
        visit_corpora(&mut Savefile(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["savefile::prelude::Savefile"],
        crates: &["savefile"],
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Measured {
        serde: &[],
        schema: &[evolve::EVOLUTION, evolve::NOSCHEMA_EVOLUTION],
    },
};

const SAVEFILE: Backend = Backend::new("savefile");
const NOSCHEMA: Backend = SAVEFILE.variant("noschema");

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Savefile(registry).payload(payload);
}

/// What savefile's derive gives a model type.
pub trait Native: ::savefile::WithSchema + ::savefile::Serialize + ::savefile::Deserialize {}
impl<T: ::savefile::WithSchema + ::savefile::Serialize + ::savefile::Deserialize> Native for T {}

struct Savefile<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Savefile<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, SAVEFILE, || SavefileCodec::<true>);
        self.0.codec(payload, NOSCHEMA, || SavefileCodec::<false>);
    }
}

/// savefile with its schema (`SCHEMA`) or without; a constant, so each variant's code is its own.
pub struct SavefileCodec<const SCHEMA: bool>;

impl<P: Model + Native, const SCHEMA: bool> Codec<P> for SavefileCodec<SCHEMA> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        if SCHEMA {
            ::savefile::save(out, VERSION, value)?;
        } else {
            ::savefile::save_noschema(out, VERSION, value)?;
        }
        Ok(out)
    }

    fn decode(&mut self, mut bytes: &[u8]) -> Result<P> {
        Ok(if SCHEMA {
            ::savefile::load(&mut bytes, VERSION)?
        } else {
            ::savefile::load_noschema(&mut bytes, VERSION)?
        })
    }
}

/// Fidelity: `savefile::load_noschema` of `order`.
fn savefile_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let mut bytes = Vec::new();
    ::savefile::save_noschema(&mut bytes, VERSION, order).expect("order encodes");
    Box::new(move || {
        let mut input = black_box(bytes.as_slice());
        black_box(::savefile::load_noschema::<Order>(&mut input, VERSION).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema variant carries the type's schema, and a reader of another layout refuses it;
    /// without the schema the same bytes of data follow a shorter header.
    #[test]
    fn the_schema_variant_refuses_another_layout_and_noschema_is_shorter() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let (mut with, mut without) = (Vec::new(), Vec::new());
        SavefileCodec::<true>.encode(order, &mut with).unwrap();
        SavefileCodec::<false>.encode(order, &mut without).unwrap();
        assert!(with.len() > without.len());
        assert!(with.ends_with(&without[without.len() - 40..]));
        assert_eq!(
            &Codec::<Order>::decode(&mut SavefileCodec::<true>, &with).unwrap(),
            order
        );
        assert_eq!(
            &Codec::<Order>::decode(&mut SavefileCodec::<false>, &without).unwrap(),
            order
        );
        let other: Result<crate::payload::TelemetryEvent> = Codec::decode(&mut SavefileCodec::<true>, &with);
        let error = other.unwrap_err().to_string();
        assert!(error.to_lowercase().contains("schema"), "{error}");
    }
}

//! nanoserde's binary mode through its own `SerBin`/`DeBin` derive (no serde, no dependencies
//! besides its derive): fields in order, integers and floats fixed-width little endian, every
//! length a `u64`, an `Option` a one-byte tag, an enum its variant index.
//!
//! Buffer policy: `ser_bin` appends to the harness's reused output buffer; `deserialize_bin`
//! reads from the borrowed bytes into owned values (nanoserde has no borrowing decode) and does
//! not check that the input ends where the value ends. A length prefix is trusted as a
//! `Vec::with_capacity` (no limit).

use std::hint::black_box;

use anyhow::Result;
use nanoserde::{DeBin, SerBin};

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Backend, Codec, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all, visit_corpora};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str =
    "`DeBin` decodes into owned values only (no lifetime): no `&str` can point into the input";

pub static FORMAT: Format = Format {
    name: "nanoserde",
    about: "nanoserde: own derive, binary mode, fixed-width integers",
    colour: [0xDD, 0x00, 0x99],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: fields are positional and untagged",
        languages: &["Rust"],
        languages_source: "https://github.com/not-fl3/nanoserde (no specification; Rust only)",
    },
    backends: &[BackendDoc {
        backend: "nanoserde",
        variant: "bin",
        crates: &["nanoserde"],
        crate_note: "`binary` and `std` features only",
        schema: "-",
        buffer_policy: "own `SerBin`/`DeBin` derive; `ser_bin` into a reused `Vec`; `deserialize_bin` from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "nanoserde",
        variant: "bin",
        payload: "order",
        operation: Operation::Decode,
        case: nanoserde_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Nanoserde(registry));
        registry.unsupported_borrowed(NO_BORROWED);
        visit_corpora(&mut Nanoserde(registry));
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["nanoserde::SerBin", "nanoserde::DeBin"],
        crates: &["nanoserde"],
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "nanoserde reads only types its derive compiled (no serde or run-time type API to build another version's type); its binary mode is positional",
    ),
};

const BIN: Backend = Backend::new("nanoserde").variant("bin");

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Nanoserde(registry).payload(payload);
}

/// What nanoserde's binary derive gives a model type.
pub trait Native: SerBin + DeBin {}
impl<T: SerBin + DeBin> Native for T {}

struct Nanoserde<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Nanoserde<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, BIN, || BinCodec);
    }
}

pub struct BinCodec;

impl<P: Model + Native> Codec<P> for BinCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        value.ser_bin(out);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(P::deserialize_bin(bytes)?)
    }
}

/// Fidelity: `DeBin::deserialize_bin` of `order`.
fn nanoserde_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = order.serialize_bin();
    Box::new(move || {
        black_box(Order::deserialize_bin(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed-width: `order`'s 15 fields take their raw widths, each string its `u64` length
    /// and bytes, each bool one byte.
    #[test]
    fn integers_floats_and_lengths_are_fixed_width() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let strings = [
            &order.currency,
            &order.sku,
            &order.customer_email,
            &order.shipping_country,
            &order.status,
        ];
        let expected = 4 * 8 + 4 * 8 + strings.iter().map(|text| 8 + text.len()).sum::<usize>() + 2;
        let mut out = Vec::new();
        let bytes = BinCodec.encode(order, &mut out).unwrap().to_vec();
        assert_eq!(bytes.len(), expected);
        assert_eq!(&bytes[..8], order.order_id.to_le_bytes());
        assert_eq!(&Codec::<Order>::decode(&mut BinCodec, &bytes).unwrap(), order);
    }
}

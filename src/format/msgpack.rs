//! MessagePack through rmp-serde (serde; structs written as arrays, the crate's compact default
//! representation) and rmpv's `Value` as the format's value tree for the dynamic decode.
//!
//! Buffer policy: `rmp_serde::encode::write` appends to the harness's reused output buffer;
//! decode reads from the borrowed bytes (`from_slice`). The dynamic decode reads the bytes into
//! an owned `rmpv::Value` tree (`rmpv::decode::read_value`); only to prove it holds the same
//! data, the tree is written back and decoded to the model (untimed).

use std::hint::black_box;

use anyhow::Result;

use super::{BackendDoc, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, Dynamic, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all};

pub static FORMAT: Format = Format {
    name: "msgpack",
    about: "MessagePack: rmp-serde (structs as arrays), rmpv value tree",
    colour: [0x3B, 0x8E, 0xD0],
    backends: &[BackendDoc {
        backend: "rmp-serde",
        variant: "",
        crates: &["rmp-serde", "rmpv"],
        crate_note: "rmpv for the dynamic decode",
        schema: "-",
        buffer_policy: "`encode::write` (structs as arrays) into a reused `Vec`; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "rmp-serde",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: rmp_serde_order_decode,
    }],
    register: |registry| visit_all(&mut Msgpack(registry)),
};

const RMP_SERDE: Backend = Backend::new("rmp-serde");

struct Msgpack<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Msgpack<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, RMP_SERDE, || RmpSerde);
        self.0.dynamic(payload, RMP_SERDE, || RmpSerde, || ValueTree);
    }
}

pub struct RmpSerde;

impl<P: Model> Codec<P> for RmpSerde {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        rmp_serde::encode::write(out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(rmp_serde::from_slice(bytes)?)
    }
}

/// rmpv's owned value tree.
pub struct ValueTree;

impl<P: Model> Dynamic<P> for ValueTree {
    type Tree = rmpv::Value;

    fn decode_tree(&mut self, mut bytes: &[u8]) -> Result<rmpv::Value> {
        Ok(rmpv::decode::read_value(&mut bytes)?)
    }

    /// Written back as MessagePack and read with rmp-serde: `rmpv::ext::from_value` cannot
    /// read the unit enum variants rmp-serde writes (as strings).
    fn to_model(&mut self, tree: rmpv::Value) -> Result<P> {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &tree)?;
        Ok(rmp_serde::from_slice(&bytes)?)
    }
}

/// Fidelity: `rmp_serde::from_slice` of `order`.
fn rmp_serde_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = rmp_serde::to_vec(order).expect("order encodes");
    Box::new(move || {
        black_box(rmp_serde::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

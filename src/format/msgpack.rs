//! MessagePack through rmp-serde (serde) and rmpv's `Value` as the format's value tree for the
//! dynamic decode. Two variants of the one backend, each with its own bytes and size: structs as
//! arrays (the crate's compact default, `encode::write`: fields by position, so both ends must
//! agree on the field order) and `named`, structs as maps from field name to value
//! (`encode::write_named`: self-describing, what other languages' MessagePack libraries read as
//! objects). `rmp_serde::from_slice` reads either, so both variants decode with it.
//!
//! Buffer policy: `rmp_serde::encode::write` / `write_named` append to the harness's reused
//! output buffer; decode reads from the borrowed bytes (`from_slice`). The dynamic decode reads the bytes into
//! an owned `rmpv::Value` tree (`rmpv::decode::read_value`); only to prove it holds the same
//! data, the tree is written back and decoded to the model (untimed).

use std::hint::black_box;

use anyhow::Result;

use super::{BackendDoc, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, Dynamic, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all};

pub static FORMAT: Format = Format {
    name: "msgpack",
    about: "MessagePack: rmp-serde (structs as arrays, and as maps), rmpv value tree",
    colour: [0x3B, 0x8E, 0xD0],
    backends: &[
        BackendDoc {
            backend: "rmp-serde",
            variant: "",
            crates: &["rmp-serde", "rmpv"],
            crate_note: "rmpv for the dynamic decode",
            schema: "-",
            buffer_policy: "`encode::write` (structs as arrays) into a reused `Vec`; decode from the borrowed bytes",
        },
        BackendDoc {
            backend: "rmp-serde",
            variant: "named",
            crates: &["rmp-serde", "rmpv"],
            crate_note: "rmpv for the dynamic decode",
            schema: "-",
            buffer_policy: "`encode::write_named` (structs as maps keyed by field name) into a reused `Vec`; decode from the borrowed bytes",
        },
    ],
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
const NAMED: Backend = RMP_SERDE.variant("named");

struct Msgpack<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Msgpack<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, RMP_SERDE, || RmpSerde::<false>);
        self.0
            .dynamic(payload, RMP_SERDE, || RmpSerde::<false>, || ValueTree);
        self.0.codec(payload, NAMED, || RmpSerde::<true>);
        self.0.dynamic(payload, NAMED, || RmpSerde::<true>, || ValueTree);
    }
}

/// rmp-serde writing structs as maps keyed by field name (`NAMED`) or as arrays; a constant, so
/// each variant's encode is its own monomorphic code.
pub struct RmpSerde<const NAMED: bool>;

impl<P: Model, const NAMED: bool> Codec<P> for RmpSerde<NAMED> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        if NAMED {
            rmp_serde::encode::write_named(out, value)?;
        } else {
            rmp_serde::encode::write(out, value)?;
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(rmp_serde::from_slice(bytes)?)
    }
}

/// rmpv's owned value tree (of either variant's bytes).
pub struct ValueTree;

impl<P: Model> Dynamic<P> for ValueTree {
    type Tree = rmpv::Value;

    fn decode_tree(&mut self, mut bytes: &[u8]) -> Result<rmpv::Value> {
        Ok(rmpv::decode::read_value(&mut bytes)?)
    }

    /// Written back as MessagePack and read with rmp-serde: `rmpv::ext::from_value` cannot
    /// read the unit enum variants rmp-serde writes (as strings). The tree keeps the bytes'
    /// shape (arrays or maps), so this proves the variant's own tree.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn encode<const NAMED: bool>(order: &Order) -> Vec<u8> {
        let mut out = Vec::new();
        RmpSerde::<NAMED>.encode(order, &mut out).unwrap().to_vec()
    }

    /// The two variants write different bytes (arrays vs maps with the field names), and one
    /// decoder, `from_slice`, reads both back to the same value.
    #[test]
    fn named_writes_structs_as_maps_and_the_default_as_arrays_and_both_decode() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let (arrays, maps) = (encode::<false>(order), encode::<true>(order));
        let array = rmpv::decode::read_value(&mut arrays.as_slice()).unwrap();
        assert_eq!(array.as_array().map(Vec::len), Some(15));
        let map = rmpv::decode::read_value(&mut maps.as_slice()).unwrap();
        let keys: Vec<&str> = map
            .as_map()
            .unwrap()
            .iter()
            .map(|(key, _)| key.as_str().unwrap())
            .collect();
        assert_eq!(keys.len(), 15);
        assert_eq!(keys[..2], ["order_id", "customer_id"]);
        assert_eq!(
            maps.len() - arrays.len(),
            keys.iter().map(|key| 1 + key.len()).sum::<usize>()
        );
        for bytes in [&arrays, &maps] {
            assert_eq!(
                &Codec::<Order>::decode(&mut RmpSerde::<false>, bytes).unwrap(),
                order
            );
            assert_eq!(
                &Codec::<Order>::decode(&mut RmpSerde::<true>, bytes).unwrap(),
                order
            );
            let tree = Dynamic::<Order>::decode_tree(&mut ValueTree, bytes).unwrap();
            assert_eq!(&Dynamic::<Order>::to_model(&mut ValueTree, tree).unwrap(), order);
        }
    }
}

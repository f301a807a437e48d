//! D-Bus wire format, through `zbus::wire` of zbus 6 built with `default-features = false`:
//! the marshalling code without connections, proxies or an async runtime. zvariant 5 (the same
//! encoder as a separate crate) is deprecated since it was merged into zbus 6, so zbus 6 is
//! the maintained home of this code. Little endian, as on the hosts we run on.
//!
//! Buffer policy: encodes into the harness's reused output buffer through a `Cursor` (the
//! encoder needs `Seek` for alignment padding); decodes from the borrowed bytes. The dynamic
//! decode reads the message by its signature into an `OwnedStructure` (D-Bus's own value
//! tree: variants, arrays, dicts with owned strings).

use std::hint::black_box;
use std::io::Cursor;

use anyhow::Result;
use zbus::OwnedStructure;
use zbus::wire::LE;
use zbus::wire::serialized::{Context, Data};

use super::{BackendDoc, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, Dynamic, Operation};
use crate::payload::{Model, Order, Payload, Visit, visit_all};

pub static FORMAT: Format = Format {
    name: "dbus",
    about: "D-Bus wire format: zbus (zbus::wire)",
    colour: [0xED, 0xC9, 0x48],
    backends: &[BackendDoc {
        backend: "zbus",
        variant: "",
        crates: &["zbus"],
        crate_note: "`default-features = false`, `zbus::wire`",
        schema: "signatures from the `zbus::Type` derive",
        buffer_policy: "`to_writer` through a `Cursor` over a reused `Vec`; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "zbus",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: zbus_order_decode,
    }],
    register: |registry| visit_all(&mut Dbus(registry)),
};

/// D-Bus needs every type's signature, which the `zbus::Type` derive provides.
pub trait Native: zbus::Type {}
impl<T: zbus::Type> Native for T {}

struct Dbus<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Dbus<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("zbus"), || DbusCodec);
        self.0
            .dynamic(payload, Backend::new("zbus"), || DbusCodec, || StructureTree);
    }
}

pub struct DbusCodec;

fn context() -> Context {
    Context::new(LE, 0)
}

impl<P: Model + Native> Codec<P> for DbusCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        // SAFETY: `to_writer` is unsafe only because the returned `Written` may own file
        // descriptors that must outlive the bytes; the model types hold no file descriptors.
        let written = unsafe { zbus::wire::to_writer(&mut Cursor::new(&mut *out), context(), value)? };
        drop(written);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let (value, _read) = Data::new(bytes, context()).deserialize()?;
        Ok(value)
    }
}

/// D-Bus's dynamic tree: the message read by its signature alone into an `OwnedStructure`.
pub struct StructureTree;

impl<P: Model + Native> Dynamic<P> for StructureTree {
    type Tree = OwnedStructure;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<OwnedStructure> {
        let data = Data::new(bytes, context());
        let (tree, _read) = data.deserialize_for_dynamic_signature(P::SIGNATURE.clone())?;
        Ok(tree)
    }

    /// The tree holds the same data when it re-encodes, under the same signature, to bytes
    /// that decode to the payload.
    fn to_model(&mut self, tree: OwnedStructure) -> Result<P> {
        let bytes = zbus::wire::to_bytes_for_signature(context(), P::SIGNATURE.clone(), &tree)?;
        DbusCodec.decode(&bytes)
    }
}

/// Fidelity: `zbus::wire` deserialization of `order`, little endian.
fn zbus_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let context = Context::new(LE, 0);
    let bytes = zbus::wire::to_bytes(context, order)
        .expect("order encodes")
        .to_vec();
    Box::new(move || {
        let data = Data::new(black_box(&bytes[..]), context);
        black_box(data.deserialize::<Order>().expect("it decodes").0);
    })
}

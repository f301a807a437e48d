//! rust-protobuf 3 (stepancheg's `protobuf` crate), the second backend of the protobuf format,
//! on the same schema: build.rs generates its messages from `schemas/protobuf/serbench.proto`
//! with protobuf-codegen's pure-Rust parser (no `protoc`), with the generator's defaults
//! (reflection included, `String` and `Vec` fields, `HashMap` for map fields).
//!
//! The codec works on rust-protobuf's own generated message, as prost's plain variant does on
//! prost's: the message is built once, outside timing, from the model (through prost's message
//! of the same schema, [`Twin`]: field by field, not through either library's bytes); encode is
//! `Message::write_to_vec` and decode `Message::parse_from_bytes`.
//!
//! The bytes are prost's (canonical proto3, fields in number order, defaults omitted) except for
//! the order of map entries: rust-protobuf writes a std `HashMap` in its iteration order, which
//! differs from one map to another and from run to run, where prost writes its `BTreeMap`s
//! sorted by key. The sizes are the same; a test below holds them to it. sizes.csv, `dump` and
//! the compression arms take bytes that must not change between runs (`Codec::stable_encode`):
//! the same entries sorted by key, which prost writes from the same message ([`Stable`]).
//!
//! Buffer policy: `write_to_vec` appends to the harness's reused output buffer (it computes the
//! sizes, caching them in the message, then reserves once); `parse_from_bytes` builds a fresh
//! owned message from the borrowed bytes. Not covered: the corpora, the borrowed mode, the dynamic
//! decode (prost-reflect's is the format's), `--data` and `--typed` (prost's).

use std::collections::{BTreeMap, HashMap};

use ::rust_protobuf::{EnumOrUnknown, Message, MessageField};
use anyhow::Result;

use super::{Native, proto};
use crate::arm::{Backend, Codec, Value};
use crate::format::Registry;
use crate::payload::{
    CheckoutRequest, CheckoutResponse, Items, Keyed, Model, Order, Payload, Readings, TelemetryEvent, Visit,
};

/// The rust-protobuf messages generated from `schemas/protobuf/serbench.proto`.
mod generated {
    include!(concat!(env!("OUT_DIR"), "/rust_protobuf/mod.rs"));
}

/// The messages of package `serbench`, rust-protobuf's.
pub use generated::serbench as messages;

pub const RUST_PROTOBUF: Backend = Backend::new("rust-protobuf");

/// rust-protobuf carries every built-in payload.
pub struct RustProtobufs<'a>(pub &'a mut Registry);

impl<P: Model + Generated> Visit<P> for RustProtobufs<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.wire_codec(
            payload,
            RUST_PROTOBUF,
            <P as Generated>::to_rust,
            <P as Generated>::from_rust,
            || RustProtobufCodec,
        );
    }
}

/// A payload type's rust-protobuf message: built from the model through prost's message, and
/// read back the same way (prost's conversion checks what proto3 cannot declare).
/// Fidelity: rust-protobuf's `Message::parse_from_bytes` of `order`.
pub fn order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = order.to_rust().write_to_bytes().expect("order encodes");
    Box::new(move || {
        std::hint::black_box(
            messages::Order::parse_from_bytes(std::hint::black_box(&bytes)).expect("it decodes"),
        );
    })
}

pub trait Generated: Native {
    type Rust: Stable;
    fn to_rust(&self) -> Self::Rust;
    fn from_rust(message: &Self::Rust) -> Result<Self>;
}

macro_rules! generated {
    ($($model:ident),*) => {$(
        impl Generated for $model {
            type Rust = messages::$model;

            fn to_rust(&self) -> messages::$model {
                Native::to_message(self).twin()
            }

            fn from_rust(message: &messages::$model) -> Result<Self> {
                <Self as Native>::from_message(message.twin())
            }
        }

        impl Stable for messages::$model {
            fn sorted(&self) -> Vec<u8> {
                prost::Message::encode_to_vec(&Twin::<proto::$model>::twin(self))
            }
        }
    )*};
}

generated!(
    Readings,
    Order,
    TelemetryEvent,
    CheckoutRequest,
    CheckoutResponse,
    Items,
    Keyed
);

/// A payload's message as the bytes rust-protobuf writes when its maps iterate in key order: the
/// run-independent bytes of sizes.csv and `dump`. rust-protobuf has no deterministic mode, so
/// prost writes them, from the same message (a test holds them to rust-protobuf's own fields).
pub trait Stable: Message + Value {
    fn sorted(&self) -> Vec<u8>;
}

/// Encodes and decodes a rust-protobuf message: rust-protobuf's own cost.
pub struct RustProtobufCodec;

impl<M: Stable> Codec<M> for RustProtobufCodec {
    fn encode<'a>(&'a mut self, message: &M, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        message.write_to_vec(out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<M> {
        Ok(M::parse_from_bytes(bytes)?)
    }

    fn stable_encode(&mut self, message: &M) -> Result<Vec<u8>> {
        Ok(message.sorted())
    }
}

/// The same value in the other library's type: prost's message to rust-protobuf's and back.
pub trait Twin<T> {
    fn twin(&self) -> T;
}

macro_rules! same {
    ($($type:ty),*) => {$(
        impl Twin<$type> for $type {
            fn twin(&self) -> $type {
                self.clone()
            }
        }
    )*};
}

same!(bool, i64, f64, String);

impl<A: Twin<B>, B> Twin<Vec<B>> for Vec<A> {
    fn twin(&self) -> Vec<B> {
        self.iter().map(Twin::twin).collect()
    }
}

impl<A: Twin<B>, B> Twin<MessageField<B>> for Option<A> {
    fn twin(&self) -> MessageField<B> {
        MessageField::from_option(self.as_ref().map(Twin::twin))
    }
}

impl<A, B: Twin<A>> Twin<Option<A>> for MessageField<B> {
    fn twin(&self) -> Option<A> {
        self.as_ref().map(Twin::twin)
    }
}

impl<A: Twin<B>, B> Twin<HashMap<String, B>> for BTreeMap<String, A> {
    fn twin(&self) -> HashMap<String, B> {
        self.iter()
            .map(|(key, value)| (key.clone(), value.twin()))
            .collect()
    }
}

impl<A, B: Twin<A>> Twin<BTreeMap<String, A>> for HashMap<String, B> {
    fn twin(&self) -> BTreeMap<String, A> {
        self.iter()
            .map(|(key, value)| (key.clone(), value.twin()))
            .collect()
    }
}

/// prost keeps an enum field as its `i32`, rust-protobuf as `EnumOrUnknown`: the number as it is,
/// unknown values included.
impl Twin<EnumOrUnknown<messages::OrderStatus>> for i32 {
    fn twin(&self) -> EnumOrUnknown<messages::OrderStatus> {
        EnumOrUnknown::from_i32(*self)
    }
}

impl Twin<i32> for EnumOrUnknown<messages::OrderStatus> {
    fn twin(&self) -> i32 {
        self.value()
    }
}

/// Each message with its fields: prost's struct literal names every field (so a field missing
/// here does not compile), rust-protobuf's adds its `special_fields` (unknown fields, cached size).
macro_rules! twins {
    ($($name:ident { $($field:ident),* $(,)? })*) => {$(
        impl Twin<messages::$name> for proto::$name {
            fn twin(&self) -> messages::$name {
                messages::$name {
                    $($field: self.$field.twin(),)*
                    special_fields: Default::default(),
                }
            }
        }

        impl Twin<proto::$name> for messages::$name {
            fn twin(&self) -> proto::$name {
                proto::$name { $($field: self.$field.twin(),)* }
            }
        }
    )*};
}

twins! {
    Readings { readings }
    Reading { valid, value, labels }
    Order {
        order_id, customer_id, created_at_ms, quantity, unit_price, discount, tax_rate, total,
        currency, sku, customer_email, shipping_country, status, is_gift, is_priority,
    }
    TelemetryEvent { event_id, timestamp_ms, service, metric, unit, tags, attributes, samples }
    ServiceInfo { name, version, instance_id, region }
    MetricSample { timestamp_ms, value, count }
    CheckoutRequest {
        meta, customer_id, session_id, currency, items, shipping_address, payment, coupon_codes,
        attributes,
    }
    RequestMeta { request_id, trace_id, client, timestamp_ms }
    LineItem { product_id, name, quantity, unit_price_cents }
    Address { street, city, region, postal_code, country }
    PaymentMethod { kind, token, card_last4, expiry_month, expiry_year }
    CheckoutResponse {
        meta, order_id, status, subtotal_cents, discount_cents, tax_cents, shipping_cents,
        total_cents, shipments, attributes,
    }
    ResponseMeta { request_id, trace_id, server, timestamp_ms }
    Shipment { shipment_id, carrier, tracking_number, estimated_delivery_ms, product_ids }
    Items { items }
    Keyed { entries }
    Item { id, name, category, price, stock, active }
}

#[cfg(test)]
mod tests {
    use super::super::MessageCodec;
    use super::*;
    use crate::payload::visit_all;

    /// The payloads with a map field of more than one entry (every map is a field of the
    /// payload's top-level message): there, and only there, the two encodings differ, in the
    /// order of the map entries (prost's `BTreeMap` sorted by key, rust-protobuf's `HashMap` in
    /// its iteration order).
    const MAP_ORDER_DIFFERS: &[&str] = &[
        "telemetry",
        "checkout-request",
        "checkout-response",
        "map-small",
        "map-big",
    ];

    /// The top-level fields of an encoded message, each as its bytes (tag, length and value).
    fn fields(mut bytes: &[u8]) -> Vec<&[u8]> {
        fn varint(bytes: &mut &[u8]) -> u64 {
            let mut value = 0;
            for shift in (0..64).step_by(7) {
                let (&byte, rest) = bytes.split_first().expect("a complete varint");
                *bytes = rest;
                value |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    break;
                }
            }
            value
        }
        let mut fields = Vec::new();
        while !bytes.is_empty() {
            let all = bytes;
            let key = varint(&mut bytes);
            let length = match key & 7 {
                0 => {
                    varint(&mut bytes);
                    0
                }
                1 => 8,
                2 => varint(&mut bytes) as usize,
                5 => 4,
                wire => panic!("wire type {wire}"),
            };
            bytes = &bytes[length..];
            fields.push(&all[..all.len() - bytes.len()]);
        }
        fields
    }

    /// For every payload: rust-protobuf's bytes are prost's, byte for byte, except in
    /// [`MAP_ORDER_DIFFERS`], where they are the same top-level fields in another order (the map
    /// entries), of the same length; so its stable bytes (prost's, sorted) are its own entries in
    /// key order. Each library decodes the other's bytes to its own message of the payload, and
    /// rust-protobuf's decode converts back to the payload.
    #[test]
    fn rust_protobuf_writes_prosts_bytes_but_for_the_order_of_map_entries() {
        struct Check(Vec<&'static str>);
        impl<P: Model + Generated> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let name = payload.spec.name;
                let value = (payload.value)();
                let prost_message = Native::to_message(value);
                let rust_message = value.to_rust();
                let mut out = Vec::new();
                let prost = MessageCodec.encode(&prost_message, &mut out).unwrap().to_vec();
                let mut out = Vec::new();
                let rust = RustProtobufCodec
                    .encode(&rust_message, &mut out)
                    .unwrap()
                    .to_vec();
                assert_eq!(rust.len(), prost.len(), "{name}: the same size");
                let stable = RustProtobufCodec.stable_encode(&rust_message).unwrap();
                assert!(stable == prost, "{name}: the stable bytes are the sorted ones");
                if MAP_ORDER_DIFFERS.contains(&name) {
                    let (mut prost_fields, mut rust_fields) = (fields(&prost), fields(&rust));
                    prost_fields.sort_unstable();
                    rust_fields.sort_unstable();
                    assert!(prost_fields == rust_fields, "{name}: the same fields");
                    if rust != prost {
                        self.0.push(name);
                    }
                } else {
                    assert!(rust == prost, "{name}: the same bytes");
                }
                let decoded: messages_of::Rust<P> = RustProtobufCodec.decode(&prost).unwrap();
                assert!(
                    decoded == rust_message,
                    "{name}: rust-protobuf reads prost's bytes"
                );
                let decoded: <P as Native>::Message = MessageCodec.decode(&rust).unwrap();
                assert!(
                    decoded == prost_message,
                    "{name}: prost reads rust-protobuf's bytes"
                );
                let decoded: messages_of::Rust<P> = RustProtobufCodec.decode(&rust).unwrap();
                assert!(&P::from_rust(&decoded).unwrap() == value, "{name}: round trip");
            }
        }
        let mut check = Check(Vec::new());
        visit_all(&mut check);
        // Some map of several entries comes out of its HashMap in another order than sorted (all
        // five would be chance; one of them not, with maps of dozens of entries, is not).
        assert!(!check.0.is_empty(), "no map order differs: {:?}", check.0);
    }

    mod messages_of {
        pub type Rust<P> = <P as super::Generated>::Rust;
    }

    #[test]
    fn an_unknown_enum_value_survives_rust_protobuf_and_fails_the_conversion() {
        let mut message: proto::CheckoutResponse =
            Native::to_message(crate::payload::value_of::<CheckoutResponse>("checkout-response").unwrap());
        message.status = 99;
        let rust: messages::CheckoutResponse = message.twin();
        let mut out = Vec::new();
        let bytes = RustProtobufCodec.encode(&rust, &mut out).unwrap().to_vec();
        let decoded: messages::CheckoutResponse = RustProtobufCodec.decode(&bytes).unwrap();
        assert_eq!(decoded.status.value(), 99);
        let error = CheckoutResponse::from_rust(&decoded).unwrap_err();
        assert!(
            format!("{error:#}").contains("unknown OrderStatus value 99"),
            "{error:#}"
        );
    }
}

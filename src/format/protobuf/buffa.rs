//! Backend `buffa` of the protobuf format: the same `schemas/protobuf/serbench.proto`, compiled
//! at build time by buffa-build from the descriptor set protox writes for prost (no `protoc`),
//! into `$OUT_DIR/buffa/` ([`generated`]): an owned message per type (`BTreeMap` for every map,
//! as prost's, so the entries are written sorted) and a borrowed view per type
//! (`__buffa::view::OrderView<'a>`, whose strings are `&'a str` into the input).
//!
//! - `buffa` codec: encode and decode of buffa's own generated owned message, built once outside
//!   timing, as prost's plain variant. The message is built from the model through prost's bytes
//!   (buffa decodes what prost encodes, untimed), and proven by converting it back the same way:
//!   prost decodes buffa's encoding into the model. So both backends must write protobuf that
//!   holds the model; the unit test below compares their bytes.
//! - `access-all` and `access-partial`: `decode_view` (buffa's zero-copy view: scalars decoded,
//!   strings borrowed from the input, repeated and map fields as `Vec`s of views) then reading
//!   the payload's fields (`payload::fields`), folded as every zero-copy format folds them. A view
//!   decode is eager: it parses and validates the whole message (UTF-8 of every string
//!   included) before any field is read, so `access-partial` saves only the reads.
//!
//! Borrowed mode (the model's `*Ref<'a>` twins): not measured; the view is buffa's own type,
//! and converting it to the twin would time a conversion that is not buffa's. The view decode is
//! measured as the access arms instead. No update arm: a protobuf varint changes length with its
//! value, and buffa has no in-place write.
//!
//! Buffer policy: encode with `encode_with_cache` into the harness's reused output buffer and a
//! `SizeCache` kept in the codec (buffa's documented reuse for hot loops: its two-pass encode
//! records the nested messages' sizes there, cleared by each call); decode with
//! `decode_from_slice` into a fresh owned message; the access arms decode a view over the
//! borrowed bytes. Unknown fields are preserved (buffa's default); none occur here.
//!
//! Bytes: prost's for every payload (tested). They would differ on a `-0.0` double (buffa writes
//! it, prost leaves it out) and on a map entry with a default key or value (buffa writes it,
//! prost leaves it out of the entry); no payload has either.
//!
//! Not covered: `--data` and `--typed` (prost's, per format), the dynamic decode (prost-reflect),
//! the borrowed twins and the corpora.

use ::buffa::{HasMessageView, MessageView};
use anyhow::{Context, Result};
use prost::Message as _;

use super::{Native, order_status};
use crate::arm::{Access, Backend, Codec, Operation, Value};
use crate::format::Registry;
use crate::payload::fields::{self, Digest, Fields, model_fields};
use crate::payload::{
    CheckoutRequest, CheckoutResponse, Items, Keyed, Model, Order, Payload, Readings, TelemetryEvent, Visit,
};

/// buffa's owned messages and views generated from `schemas/protobuf/serbench.proto`.
#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    missing_docs,
    non_camel_case_types,
    unreachable_pub,
    unused_imports,
    unused_qualifications
)]
#[rustfmt::skip]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/buffa/mod.rs"));
}

use generated::serbench as pb;
use pb::__buffa::view as pv;

pub const BUFFA: Backend = Backend::new("buffa");

/// Why buffa has no borrowed decode of the model's twins.
pub const NO_BORROWED: &str = "buffa's borrowed decode is its own view type (`OrderView<'a>`, strings borrowed from the input), not the model's `*Ref<'a>` twin: measured as `access-all`/`access-partial` (view decode + reading the fields)";
/// Why buffa has no update arm.
const NO_UPDATE: &str = "a protobuf varint changes length with its value: buffa has no in-place write";

/// A payload type and its buffa message: the view's reads, whole and routing.
pub trait Buffa: Native + Fields {
    /// buffa's generated owned message of the type.
    type Wire: ::buffa::Message + HasMessageView + Default + Value;
    /// `decode_view`, then every field read and folded as [`Fields::fold_all`].
    fn access_all(bytes: &[u8]) -> Result<u64>;
    /// `decode_view`, then the routing fields read and folded as [`Fields::fold_route`].
    fn access_route(bytes: &[u8]) -> Result<u64>;
}

pub struct Buffas<'a>(pub &'a mut Registry);

impl<P: Model + Buffa> Visit<P> for Buffas<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.wire_codec(
            payload,
            BUFFA,
            to_buffa::<P>,
            to_model::<P>,
            MessageCodec::default,
        );
        registry.access(payload, BUFFA, Operation::AccessAll, ModelCodec::default, || {
            ReadAll
        });
        registry.access(
            payload,
            BUFFA,
            Operation::AccessPartial,
            ModelCodec::default,
            || ReadRoute,
        );
        registry.unsupported_operation(payload.spec, BUFFA.name, Operation::Update, NO_UPDATE);
    }
}

/// The buffa message of a model value: prost's bytes of it, decoded by buffa (untimed).
pub fn to_buffa<P: Buffa>(value: &P) -> P::Wire {
    let bytes = <P as Native>::to_message(value).encode_to_vec();
    <P::Wire as ::buffa::Message>::decode_from_slice(&bytes)
        .expect("buffa decodes prost's bytes of a model value")
}

/// The model value a buffa message holds: its bytes, decoded by prost and converted (untimed).
pub fn to_model<P: Buffa>(message: &P::Wire) -> Result<P> {
    let bytes = ::buffa::Message::encode_to_vec(message);
    let decoded = <<P as Native>::Message as prost::Message>::decode(bytes.as_slice())
        .context("prost decodes buffa's bytes")?;
    <P as Native>::from_message(decoded)
}

/// Encodes and decodes buffa's generated owned message: buffa's own cost.
/// Fidelity: buffa's `Message::decode_from_slice` of `order` into its owned message.
pub fn order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ::buffa::Message::encode_to_vec(&to_buffa(order));
    Box::new(move || {
        std::hint::black_box(
            <pb::Order as ::buffa::Message>::decode_from_slice(std::hint::black_box(&bytes))
                .expect("it decodes"),
        );
    })
}

#[derive(Default)]
pub struct MessageCodec {
    cache: ::buffa::SizeCache,
}

impl<M: ::buffa::Message + Value> Codec<M> for MessageCodec {
    fn encode<'a>(&'a mut self, message: &M, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        message.try_encode_with_cache(&mut self.cache, out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<M> {
        Ok(M::decode_from_slice(bytes)?)
    }
}

/// The access arms' codec on the model (untimed: it writes the bytes they read, and proves
/// them): the model through [`to_buffa`], encoded by buffa; decoded by buffa, through
/// [`to_model`].
#[derive(Default)]
pub struct ModelCodec {
    cache: ::buffa::SizeCache,
}

impl<P: Model + Buffa> Codec<P> for ModelCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        ::buffa::Message::try_encode_with_cache(&to_buffa(value), &mut self.cache, out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        to_model(&<P::Wire as ::buffa::Message>::decode_from_slice(bytes)?)
    }
}

/// `access-all`: decode the view, read every field.
pub struct ReadAll;

impl<P: Buffa> Access<P> for ReadAll {
    fn expected(value: &P) -> u64 {
        fields::digest_all(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        P::access_all(bytes)
    }
}

/// `access-partial`: decode the view, read the routing fields.
pub struct ReadRoute;

impl<P: Buffa> Access<P> for ReadRoute {
    fn expected(value: &P) -> u64 {
        fields::digest_route(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        P::access_route(bytes)
    }
}

/// Every field of a view, folded as the owned value's [`Fields::fold_all`].
trait ViewFields {
    fn fold_all(&self, digest: &mut Digest);
}

/// [`ViewFields::fold_all`] from [`model_fields!`]'s list: each field of the view, a string as
/// the `&str` it borrows, a nested message through its (always present) view, a map in wire
/// order (sorted by key, as both backends write it).
macro_rules! view_fold {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold_all(&self, digest: &mut Digest) {
            $(view_fold!(@ self digest $kind $field);)*
        }
    };
    (@ $s:tt $d:ident int $f:ident) => { $d.int($s.$f) };
    (@ $s:tt $d:ident float $f:ident) => { $d.float($s.$f) };
    (@ $s:tt $d:ident flag $f:ident) => { $d.flag($s.$f) };
    (@ $s:tt $d:ident text $f:ident) => { $d.text($s.$f) };
    (@ $s:tt $d:ident texts $f:ident) => { $d.texts($s.$f.iter().copied()) };
    (@ $s:tt $d:ident pairs $f:ident) => { $d.pairs($s.$f.iter().map(|(key, value)| (*key, *value))) };
    (@ $s:tt $d:ident record $f:ident) => { ViewFields::fold_all(&*$s.$f, $d) };
    (@ $s:tt $d:ident records $f:ident) => {{
        $d.count($s.$f.len());
        $s.$f.iter().for_each(|record| record.fold_all($d));
    }};
    (@ $s:tt $d:ident status $f:ident) => {
        $d.int(order_status($s.$f.to_i32()).map_or(-1, |status| status as i64))
    };
    (@ $s:tt $d:ident keyed $f:ident) => {{
        $d.count($s.$f.len());
        for (key, record) in $s.$f.iter() {
            $d.text(key);
            record.fold_all($d);
        }
    }};
}

macro_rules! view_fields {
    ($($model:ident => $view:ident),* $(,)?) => {$(
        impl ViewFields for pv::$view<'_> {
            model_fields!($model, view_fold);
        }
    )*};
}

view_fields!(
    Reading => ReadingView,
    Readings => ReadingsView,
    Order => OrderView,
    ServiceInfo => ServiceInfoView,
    MetricSample => MetricSampleView,
    TelemetryEvent => TelemetryEventView,
    RequestMeta => RequestMetaView,
    LineItem => LineItemView,
    Address => AddressView,
    PaymentMethod => PaymentMethodView,
    CheckoutRequest => CheckoutRequestView,
    ResponseMeta => ResponseMetaView,
    Shipment => ShipmentView,
    CheckoutResponse => CheckoutResponseView,
    Item => ItemView,
    Items => ItemsView,
    Keyed => KeyedView,
);

/// Each payload type's buffa message, and its view's reads: every field, and the routing
/// subset of `payload::fields` (the module doc there), read from the view.
macro_rules! buffa_payload {
    ($model:ident, $message:ident, $view:ident, |$v:ident, $d:ident| $route:block) => {
        impl Buffa for $model {
            type Wire = pb::$message;

            fn access_all(bytes: &[u8]) -> Result<u64> {
                let view = pv::$view::decode_view(bytes)?;
                let mut digest = Digest::default();
                view.fold_all(&mut digest);
                Ok(digest.finish())
            }

            fn access_route(bytes: &[u8]) -> Result<u64> {
                let $v = pv::$view::decode_view(bytes)?;
                let mut digest = Digest::default();
                let $d = &mut digest;
                $route
                Ok(digest.finish())
            }
        }
    };
}

buffa_payload!(Readings, Readings, ReadingsView, |view, digest| {
    digest.count(view.readings.len());
    if let Some(first) = view.readings.first() {
        digest.flag(first.valid);
    }
});

buffa_payload!(Order, Order, OrderView, |view, digest| {
    digest.int(view.order_id);
    digest.int(view.customer_id);
});

buffa_payload!(
    TelemetryEvent,
    TelemetryEvent,
    TelemetryEventView,
    |view, digest| {
        digest.text(view.service.name);
        digest.text(view.service.instance_id);
        digest.text(view.service.region);
        digest.text(view.metric);
        if let Some(latest) = view.samples.last() {
            latest.fold_all(digest);
        }
    }
);

buffa_payload!(
    CheckoutRequest,
    CheckoutRequest,
    CheckoutRequestView,
    |view, digest| {
        digest.text(view.meta.request_id);
        digest.text(view.customer_id);
    }
);

buffa_payload!(
    CheckoutResponse,
    CheckoutResponse,
    CheckoutResponseView,
    |view, digest| {
        digest.text(view.meta.request_id);
        digest.text(view.order_id);
    }
);

buffa_payload!(Items, Items, ItemsView, |view, digest| {
    digest.count(view.items.len());
    if let Some(first) = view.items.first() {
        digest.int(first.id);
    }
});

buffa_payload!(Keyed, Keyed, KeyedView, |view, digest| {
    digest.count(view.entries.len());
    if let Some((key, item)) = view.entries.iter().next() {
        digest.text(key);
        digest.int(item.id);
    }
});

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::format::protobuf::proto;
    use crate::payload::visit_all;

    /// buffa's bytes of every payload are prost's, byte for byte: both write proto3's canonical
    /// encoding (fields in number order, scalars equal to their default omitted, packed repeated
    /// scalars) and both keep maps in a `BTreeMap`, so map entries come in the same (sorted key)
    /// order. No difference is allowed here: the two known ones (a `-0.0` double, a map entry
    /// with a default key or value; see the next test) occur in no payload. Also: the buffa
    /// message decodes back to the model, and its view reads every field and the routing ones.
    #[test]
    fn buffa_writes_prost_bytes_for_every_payload() {
        struct Check(Vec<String>);
        impl<P: Model + Buffa> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let name = payload.spec.name;
                let value = (payload.value)();
                let prost = <P as Native>::to_message(value).encode_to_vec();
                let message = to_buffa(value);
                let mut out = Vec::new();
                let buffa = MessageCodec::default()
                    .encode(&message, &mut out)
                    .unwrap()
                    .to_vec();
                assert_eq!(buffa.len(), prost.len(), "{name}: sizes differ");
                assert!(buffa == prost, "{name}: buffa's bytes differ from prost's");
                let back: P::Wire = MessageCodec::default().decode(&buffa).unwrap();
                assert_eq!(back, message, "{name}");
                assert_eq!(&to_model::<P>(&back).unwrap(), value, "{name}");
                assert_eq!(
                    P::access_all(&buffa).unwrap(),
                    fields::digest_all(value),
                    "{name}"
                );
                assert_eq!(
                    P::access_route(&buffa).unwrap(),
                    fields::digest_route(value),
                    "{name}"
                );
                self.0.push(format!("{name} {}", buffa.len()));
            }
        }
        let mut check = Check(Vec::new());
        visit_all(&mut check);
        assert_eq!(check.0.len(), 9, "{:?}", check.0);
    }

    /// The two places where the backends' bytes differ, neither in any payload (the test above
    /// would fail if one were): a `-0.0` double, which buffa writes (its bits are not zero:
    /// 9 bytes, the sign kept) and prost leaves out (`-0.0 == 0.0`); and a map entry whose key
    /// or value is its default (`""` here), which prost leaves out of the entry and buffa
    /// writes (2 bytes: tag and zero length). Each side reads the other's bytes as the same
    /// message.
    #[test]
    fn negative_zero_and_a_default_map_value_are_the_byte_differences() {
        let prost_order = proto::Order {
            unit_price: -0.0,
            ..Default::default()
        };
        let buffa_order = pb::Order {
            unit_price: -0.0,
            ..Default::default()
        };
        let (prost, buffa) = (
            prost_order.encode_to_vec(),
            ::buffa::Message::encode_to_vec(&buffa_order),
        );
        assert_eq!((prost.len(), buffa.len()), (0, 9));
        let read = proto::Order::decode(buffa.as_slice()).unwrap();
        assert!(read.unit_price == 0.0 && read.unit_price.is_sign_negative());

        let prost_event = proto::TelemetryEvent {
            attributes: [("k".to_string(), String::new())].into(),
            ..Default::default()
        };
        let mut buffa_event = pb::TelemetryEvent::default();
        buffa_event.attributes.insert("k".to_string(), String::new());
        let (prost, buffa) = (
            prost_event.encode_to_vec(),
            ::buffa::Message::encode_to_vec(&buffa_event),
        );
        assert_eq!((prost.len(), buffa.len()), (5, 7));
        assert_eq!(
            proto::TelemetryEvent::decode(buffa.as_slice()).unwrap(),
            prost_event
        );
        let read = <pb::TelemetryEvent as ::buffa::Message>::decode_from_slice(&prost).unwrap();
        assert_eq!(read, buffa_event);
    }

    /// The view borrows its strings from the input: the headline of the crate.
    #[test]
    fn the_view_borrows_its_strings_from_the_input() {
        let order: &Order = crate::payload::value_of("order").expect("order is an Order");
        let bytes = ::buffa::Message::encode_to_vec(&to_buffa(order));
        let view = pv::OrderView::decode_view(&bytes).unwrap();
        let input = bytes.as_ptr_range();
        for text in [
            view.currency,
            view.sku,
            view.customer_email,
            view.shipping_country,
            view.status,
        ] {
            assert!(input.contains(&text.as_ptr()), "{text:?} is not in the input");
        }
        assert_eq!(view.currency, order.currency);
    }

    /// A missing nested message or an unknown enum value reads as a different digest, not as
    /// the payload.
    #[test]
    fn an_unknown_status_does_not_read_as_the_payload() {
        let response: &CheckoutResponse =
            crate::payload::value_of("checkout-response").expect("a CheckoutResponse");
        let mut message = to_buffa(response);
        message.status = ::buffa::EnumValue::Unknown(99);
        let bytes = ::buffa::Message::encode_to_vec(&message);
        assert_ne!(
            CheckoutResponse::access_all(&bytes).unwrap(),
            fields::digest_all(response)
        );
        assert!(to_model::<CheckoutResponse>(&message).is_err());
    }
}

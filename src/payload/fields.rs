//! The fields the in-place operations of the zero-copy formats touch, defined once per payload
//! so that FlatBuffers, rkyv and Cap'n Proto measure the same work and line up in one chart:
//!
//! - `access-all` reads every field; `access-partial` reads only the fields a router needs
//!   ([`Fields::fold_route`]): telemetry: service name, instance id, region, metric name and
//!   the latest (last) sample; checkout-request: meta request id and customer id;
//!   checkout-response: meta request id and order id; order: order id and customer id;
//!   readings, vec-*, map-*: the record count and the first record's key field (a reading's
//!   `valid` flag, an item's id; for a map also the first key).
//! - `update` changes one scalar in place ([`UpdateField`]): readings: the first reading's
//!   value; order: the quantity; telemetry: the timestamp; checkout-request: the meta
//!   timestamp; checkout-response: the total; vec-*: the first item's stock; map-*: the first
//!   entry's stock.
//!
//! What an access read is folded into a [`Digest`]; the harness compares it with the same fold
//! over the owned value, so an access that read the wrong bytes cannot pass.

use std::collections::BTreeMap;

use super::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Order,
    PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment, TelemetryEvent,
};

/// Each built-in model type's fields in schema (declaration) order, each with how a whole-value
/// fold reads it: the one list the owned fold ([`Fields::fold_all`]) and rkyv's in-place fold
/// follow. `model_fields!(Type, reader)` calls `reader!` with the type's list, and a reader macro
/// turns each kind into its own accessor: `int`, `float`, `flag`, `text`; `texts` (a list of
/// strings: its count, then each); `pairs` (a string map: its count, then each key and value in
/// key order); `record` (a nested record's whole fold); `records` (a count, then each record);
/// `record`, `records` and `keyed` name the record type, for the readers that need it;
/// `status` (the order status: its variant's position in the model enum, whatever number a
/// schema gives it); `keyed` (a map of records: its count, then each key and record in key
/// order). The routing subsets ([`Fields::fold_route`]) stay with each type.
macro_rules! model_fields {
    (Reading, $reader:ident) => {
        $reader! {
            flag valid, float value, texts labels,
        }
    };
    (Readings, $reader:ident) => {
        $reader! {
            records readings: Reading,
        }
    };
    (Order, $reader:ident) => {
        $reader! {
            int order_id, int customer_id, int created_at_ms, int quantity, float unit_price,
            float discount, float tax_rate, float total, text currency, text sku,
            text customer_email, text shipping_country, text status, flag is_gift,
            flag is_priority,
        }
    };
    (ServiceInfo, $reader:ident) => {
        $reader! {
            text name, text version, text instance_id, text region,
        }
    };
    (MetricSample, $reader:ident) => {
        $reader! {
            int timestamp_ms, float value, int count,
        }
    };
    (TelemetryEvent, $reader:ident) => {
        $reader! {
            text event_id, int timestamp_ms, record service: ServiceInfo, text metric, text unit,
            texts tags, pairs attributes, records samples: MetricSample,
        }
    };
    (RequestMeta, $reader:ident) => {
        $reader! {
            text request_id, text trace_id, text client, int timestamp_ms,
        }
    };
    (LineItem, $reader:ident) => {
        $reader! {
            text product_id, text name, int quantity, int unit_price_cents,
        }
    };
    (Address, $reader:ident) => {
        $reader! {
            text street, text city, text region, text postal_code, text country,
        }
    };
    (PaymentMethod, $reader:ident) => {
        $reader! {
            text kind, text token, text card_last4, int expiry_month, int expiry_year,
        }
    };
    (CheckoutRequest, $reader:ident) => {
        $reader! {
            record meta: RequestMeta, text customer_id, text session_id, text currency,
            records items: LineItem, record shipping_address: Address,
            record payment: PaymentMethod, texts coupon_codes, pairs attributes,
        }
    };
    (ResponseMeta, $reader:ident) => {
        $reader! {
            text request_id, text trace_id, text server, int timestamp_ms,
        }
    };
    (Shipment, $reader:ident) => {
        $reader! {
            text shipment_id, text carrier, text tracking_number, int estimated_delivery_ms,
            texts product_ids,
        }
    };
    (CheckoutResponse, $reader:ident) => {
        $reader! {
            record meta: ResponseMeta, text order_id, status status, int subtotal_cents,
            int discount_cents, int tax_cents, int shipping_cents, int total_cents,
            records shipments: Shipment, pairs attributes,
        }
    };
    (Item, $reader:ident) => {
        $reader! {
            int id, text name, text category, float price, int stock, flag active,
        }
    };
    (Items, $reader:ident) => {
        $reader! {
            records items: Item,
        }
    };
    (Keyed, $reader:ident) => {
        $reader! {
            keyed entries: Item,
        }
    };
}

// For the in-place readers' files; a build without any of them uses only the owned fold.
#[cfg_attr(
    not(any(feature = "rkyv", feature = "flatbuffers", feature = "capnp")),
    allow(unused_imports)
)]
pub(crate) use model_fields;

/// [`Fields::fold_all`] of the owned value, from [`model_fields!`]'s list.
macro_rules! owned_fold_all {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold_all(&self, digest: &mut Digest) {
            $(owned_fold_all!(@ self digest $kind $field);)*
        }
    };
    (@ $s:tt $d:ident int $f:ident) => { $d.int($s.$f) };
    (@ $s:tt $d:ident float $f:ident) => { $d.float($s.$f) };
    (@ $s:tt $d:ident flag $f:ident) => { $d.flag($s.$f) };
    (@ $s:tt $d:ident text $f:ident) => { $d.text(&$s.$f) };
    (@ $s:tt $d:ident texts $f:ident) => { $d.strings(&$s.$f) };
    (@ $s:tt $d:ident pairs $f:ident) => { $d.attributes(&$s.$f) };
    (@ $s:tt $d:ident record $f:ident) => { $s.$f.fold_all($d) };
    (@ $s:tt $d:ident records $f:ident) => { $d.records(&$s.$f) };
    (@ $s:tt $d:ident status $f:ident) => { $d.int($s.$f as i64) };
    (@ $s:tt $d:ident keyed $f:ident) => {{
        $d.count($s.$f.len());
        for (key, record) in &$s.$f {
            $d.text(key);
            record.fold_all($d);
        }
    }};
}

/// The fields an access read, folded in order into one number: integers, f64 bits, booleans,
/// counts, and each string's length with its first byte (which touches the string).
#[derive(Default)]
pub struct Digest(u64);

impl Digest {
    pub fn int(&mut self, value: i64) {
        self.mix(value as u64);
    }

    pub fn float(&mut self, value: f64) {
        self.mix(value.to_bits());
    }

    pub fn flag(&mut self, value: bool) {
        self.mix(u64::from(value));
    }

    pub fn count(&mut self, count: usize) {
        self.mix(count as u64);
    }

    pub fn text(&mut self, value: &str) {
        let first = value.as_bytes().first().copied().unwrap_or(0);
        self.mix(((value.len() as u64) << 8) | u64::from(first));
    }

    /// A list of strings: its length, then each string.
    pub fn texts<'a>(&mut self, values: impl ExactSizeIterator<Item = &'a str>) {
        self.count(values.len());
        values.for_each(|value| self.text(value));
    }

    /// String pairs in key order (the attributes maps): the count, then each key and value.
    pub fn pairs<'a>(&mut self, pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)>) {
        self.count(pairs.len());
        for (key, value) in pairs {
            self.text(key);
            self.text(value);
        }
    }

    /// Order-sensitive, so reading two fields swapped does not fold to the same number.
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    pub fn finish(self) -> u64 {
        self.0
    }

    fn attributes(&mut self, attributes: &BTreeMap<String, String>) {
        self.pairs(
            attributes
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str())),
        );
    }

    fn strings(&mut self, values: &[String]) {
        self.texts(values.iter().map(String::as_str));
    }

    fn records<T: Fields>(&mut self, records: &[T]) {
        self.count(records.len());
        records.iter().for_each(|record| record.fold_all(self));
    }
}

/// Every field, and the routing subset, of a model value, folded from the owned value: what an
/// in-place access of the same message must fold to.
pub trait Fields {
    /// Every field, in schema (declaration) order.
    fn fold_all(&self, digest: &mut Digest);
    /// The routing subset (see the module doc); record types that are never routed on their
    /// own fold their key field.
    fn fold_route(&self, digest: &mut Digest);
}

/// [`Fields::fold_all`] of a value, as one number.
pub fn digest_all<T: Fields>(value: &T) -> u64 {
    let mut digest = Digest::default();
    value.fold_all(&mut digest);
    digest.finish()
}

/// [`Fields::fold_route`] of a value, as one number.
pub fn digest_route<T: Fields>(value: &T) -> u64 {
    let mut digest = Digest::default();
    value.fold_route(&mut digest);
    digest.finish()
}

/// The scalar an `update` arm changes in place in an encoded payload (see the module doc).
pub trait UpdateField: Sized {
    type Scalar: Copy + PartialEq + std::fmt::Debug + Send + 'static;
    /// The field's value now.
    fn field(&self) -> Self::Scalar;
    /// The value to write in round `round`: the field's own value and another, alternating, so
    /// every round changes the bytes and the same size is written each time.
    fn value_for_round(&self, round: u64) -> Self::Scalar;
    /// This value with the field set: what decoding the updated bytes must give.
    fn with_field(&self, value: Self::Scalar) -> Self;
}

/// A value of a generated record (`--typed`): how it folds whole (`access-all`) and what it adds
/// to its record's envelope (`access-partial`). The rule for generated types, stated once here
/// and followed by every zero-copy format's generated reader:
///
/// - whole: a scalar as itself (a string by [`Digest::text`]); an optional value its presence
///   flag, then the value if present; a list its count, then each element; a map its count,
///   then each key and value in key order; a record each field in schema order;
/// - envelope: a scalar as itself; an optional value its flag, then its envelope if present; a
///   list or a map its count; a record nothing (nested records are not read);
/// - a payload's `access-partial` reads, for a list, the record count and the first record's
///   envelope, for one document its envelope: what a router reads of a message's header.
pub trait FieldValue {
    fn fold(&self, digest: &mut Digest);
    fn fold_envelope(&self, digest: &mut Digest);
}

macro_rules! scalar_field_value {
    ($($type:ty => $method:ident),* $(,)?) => {$(
        impl FieldValue for $type {
            fn fold(&self, digest: &mut Digest) {
                digest.$method(*self);
            }

            fn fold_envelope(&self, digest: &mut Digest) {
                digest.$method(*self);
            }
        }
    )*};
}

scalar_field_value!(i64 => int, f64 => float, bool => flag);

impl FieldValue for String {
    fn fold(&self, digest: &mut Digest) {
        digest.text(self);
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.text(self);
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn fold(&self, digest: &mut Digest) {
        digest.flag(self.is_some());
        if let Some(value) = self {
            value.fold(digest);
        }
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.flag(self.is_some());
        if let Some(value) = self {
            value.fold_envelope(digest);
        }
    }
}

impl<T: FieldValue> FieldValue for Vec<T> {
    fn fold(&self, digest: &mut Digest) {
        digest.count(self.len());
        self.iter().for_each(|item| item.fold(digest));
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.count(self.len());
    }
}

impl<T: FieldValue> FieldValue for BTreeMap<String, T> {
    fn fold(&self, digest: &mut Digest) {
        digest.count(self.len());
        for (key, value) in self {
            digest.text(key);
            value.fold(digest);
        }
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.count(self.len());
    }
}

/// The value a generated type's update writes in `round`: the field's own, then another (an
/// integer xor 1, a float negated, as the built-in payloads' updates do; see
/// [`UpdateField::value_for_round`]).
pub fn alternate<T: Alternate>(value: T, round: u64) -> T {
    if round.is_multiple_of(2) {
        value
    } else {
        value.other()
    }
}

/// A scalar an update alternates.
pub trait Alternate: Copy {
    fn other(self) -> Self;
}

impl Alternate for i64 {
    fn other(self) -> i64 {
        self ^ 1
    }
}

impl Alternate for f64 {
    fn other(self) -> f64 {
        // 0.0 negated is -0.0, which compares equal: 1.0 is another value.
        if self == 0.0 { 1.0 } else { -self }
    }
}

/// An alternation of an integer field between its value and another one of the same width.
fn alternate_int(value: i64, round: u64) -> i64 {
    if round.is_multiple_of(2) { value } else { value ^ 1 }
}

impl Fields for Reading {
    model_fields!(Reading, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.flag(self.valid);
    }
}

impl Fields for Readings {
    model_fields!(Readings, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.readings.len());
        if let Some(first) = self.readings.first() {
            first.fold_route(digest);
        }
    }
}

impl UpdateField for Readings {
    type Scalar = f64;

    fn field(&self) -> f64 {
        self.readings[0].value
    }

    fn value_for_round(&self, round: u64) -> f64 {
        if round.is_multiple_of(2) {
            self.field()
        } else {
            -self.field()
        }
    }

    fn with_field(&self, value: f64) -> Self {
        let mut updated = self.clone();
        updated.readings[0].value = value;
        updated
    }
}

impl Fields for Order {
    model_fields!(Order, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.int(self.order_id);
        digest.int(self.customer_id);
    }
}

impl UpdateField for Order {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.quantity
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.quantity, round)
    }

    fn with_field(&self, value: i64) -> Self {
        Order {
            quantity: value,
            ..self.clone()
        }
    }
}

impl Fields for ServiceInfo {
    model_fields!(ServiceInfo, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.name);
    }
}

impl Fields for MetricSample {
    model_fields!(MetricSample, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        self.fold_all(digest);
    }
}

impl Fields for TelemetryEvent {
    model_fields!(TelemetryEvent, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.service.name);
        digest.text(&self.service.instance_id);
        digest.text(&self.service.region);
        digest.text(&self.metric);
        if let Some(latest) = self.samples.last() {
            latest.fold_all(digest);
        }
    }
}

impl UpdateField for TelemetryEvent {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.timestamp_ms
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.timestamp_ms, round)
    }

    fn with_field(&self, value: i64) -> Self {
        TelemetryEvent {
            timestamp_ms: value,
            ..self.clone()
        }
    }
}

impl Fields for RequestMeta {
    model_fields!(RequestMeta, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.request_id);
    }
}

impl Fields for LineItem {
    model_fields!(LineItem, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.product_id);
    }
}

impl Fields for Address {
    model_fields!(Address, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.country);
    }
}

impl Fields for PaymentMethod {
    model_fields!(PaymentMethod, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.kind);
    }
}

impl Fields for CheckoutRequest {
    model_fields!(CheckoutRequest, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.meta.request_id);
        digest.text(&self.customer_id);
    }
}

impl UpdateField for CheckoutRequest {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.meta.timestamp_ms
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.meta.timestamp_ms, round)
    }

    fn with_field(&self, value: i64) -> Self {
        let mut updated = self.clone();
        updated.meta.timestamp_ms = value;
        updated
    }
}

impl Fields for ResponseMeta {
    model_fields!(ResponseMeta, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.request_id);
    }
}

impl Fields for Shipment {
    model_fields!(Shipment, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.shipment_id);
    }
}

impl Fields for CheckoutResponse {
    model_fields!(CheckoutResponse, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.meta.request_id);
        digest.text(&self.order_id);
    }
}

impl UpdateField for CheckoutResponse {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.total_cents
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.total_cents, round)
    }

    fn with_field(&self, value: i64) -> Self {
        CheckoutResponse {
            total_cents: value,
            ..self.clone()
        }
    }
}

impl Fields for Item {
    model_fields!(Item, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.int(self.id);
    }
}

impl Fields for Items {
    model_fields!(Items, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.items.len());
        if let Some(first) = self.items.first() {
            first.fold_route(digest);
        }
    }
}

impl UpdateField for Items {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.items[0].stock
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.field(), round)
    }

    fn with_field(&self, value: i64) -> Self {
        let mut updated = self.clone();
        updated.items[0].stock = value;
        updated
    }
}

impl Fields for Keyed {
    model_fields!(Keyed, owned_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.entries.len());
        if let Some((key, item)) = self.entries.first_key_value() {
            digest.text(key);
            item.fold_route(digest);
        }
    }
}

impl UpdateField for Keyed {
    type Scalar = i64;

    fn field(&self) -> i64 {
        self.first().stock
    }

    fn value_for_round(&self, round: u64) -> i64 {
        alternate_int(self.field(), round)
    }

    fn with_field(&self, value: i64) -> Self {
        let mut updated = self.clone();
        if let Some(mut first) = updated.entries.first_entry() {
            first.get_mut().stock = value;
        }
        updated
    }
}

impl Keyed {
    fn first(&self) -> &Item {
        self.entries
            .first_key_value()
            .map(|(_, item)| item)
            .expect("a map payload has entries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::{Payload, Visit, visit_all};

    /// Every payload's update writes a different value in odd rounds and the original in even
    /// ones, and `with_field` changes exactly that field.
    #[test]
    fn updates_alternate_and_change_one_field() {
        struct Check;
        impl<P: crate::payload::Model + UpdateField + Fields> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                assert_eq!(value.value_for_round(0), value.field(), "{}", payload.spec.name);
                let other = value.value_for_round(1);
                assert_ne!(other, value.field(), "{}", payload.spec.name);
                let updated = value.with_field(other);
                assert_eq!(updated.field(), other);
                assert_ne!(&updated, value);
                assert_eq!(updated.with_field(value.field()), *value, "{}", payload.spec.name);
                assert_ne!(digest_all(&updated), digest_all(value), "{}", payload.spec.name);
            }
        }
        visit_all(&mut Check);
    }
}

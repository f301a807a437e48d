//! The logical data every format encodes: one file per workload, all generated from a fixed
//! seed so the bytes are identical on every run and every host.
//!
//! A payload is a value of a plain Rust model type plus a [`PayloadSpec`] that names it and
//! states its record count (the unit of every per-record figure). Formats never see payloads
//! one by one: they implement [`Visit`] for the model types they can carry, and [`visit_all`]
//! hands them every payload with its concrete type, so a generic codec covers every workload
//! and a schema codec gets the type it has generated code for.
//!
//! This module knows no format. A format states what it needs of a model type (a native
//! derive, a generated schema type) as the bounds of its own `Visit` impl, and the compiler
//! checks at `visit_all` that every payload type meets them. The model types get the derives of
//! the crates that have one, each behind that format's Cargo feature, from one list per kind of
//! type (`owned_model!`, `corpus_model!`, `borrowed_model!`): a format with its own derive
//! adds its line there, not on every type. Per-field attributes (CBOR's indices) stay on the
//! fields.

/// serde's derives and every derive format's, for the built-in payloads' owned types.
macro_rules! owned_model {
    ($item:item) => {
        #[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
        #[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
        #[cfg_attr(feature = "dbus", derive(zbus::Type))]
        #[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
        #[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
        #[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
        #[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
        #[cfg_attr(feature = "wincode", derive(wincode::SchemaWrite, wincode::SchemaRead))]
        #[cfg_attr(
            feature = "nanoserde",
            derive(nanoserde::SerBin, nanoserde::DeBin, nanoserde::SerJson, nanoserde::DeJson)
        )]
        #[cfg_attr(feature = "savefile", derive(savefile::prelude::Savefile))]
        #[cfg_attr(feature = "bilrost", derive(bilrost::Message))]
        #[cfg_attr(feature = "msgpacker", derive(msgpacker::MsgPacker))]
        $item
    };
}

/// The public corpora's types: serde's derives and those of the derive formats that carry the
/// corpora (the others list them unsupported, with the reason).
macro_rules! corpus_model {
    ($item:item) => {
        #[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
        #[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
        #[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
        #[cfg_attr(feature = "wincode", derive(wincode::SchemaWrite, wincode::SchemaRead))]
        #[cfg_attr(feature = "nanoserde", derive(nanoserde::SerBin, nanoserde::DeBin))]
        #[cfg_attr(feature = "savefile", derive(savefile::prelude::Savefile))]
        $item
    };
}

/// The borrowed twins of the owned types (the borrowed mode): decode derives only.
macro_rules! borrowed_model {
    ($item:item) => {
        #[derive(Debug, serde::Deserialize)]
        #[cfg_attr(feature = "bincode", derive(bincode::BorrowDecode))]
        #[cfg_attr(feature = "bitcode", derive(bitcode::Decode))]
        #[cfg_attr(feature = "cbor", derive(minicbor::Decode))]
        #[cfg_attr(feature = "wincode", derive(wincode::SchemaRead))]
        #[cfg_attr(feature = "bilrost", derive(bilrost::Message))]
        $item
    };
}

mod checkout;
mod collections;
pub mod corpora;
pub mod data;
pub mod fields;
mod order;
mod readings;
mod rng;
mod telemetry;

use std::collections::BTreeMap;
use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use checkout::{
    Address, CheckoutRequest, CheckoutResponse, LineItem, OrderStatus, PaymentMethod, RequestMeta,
    ResponseMeta, Shipment,
};
pub use collections::{Item, ItemRef, Items, ItemsRef, Keyed};
pub use corpora::{CitmCatalog, Twitter};
pub use order::{Order, OrderRef};
pub use readings::{Reading, ReadingRef, Readings, ReadingsRef};
pub use rng::SplitMix64;

pub use telemetry::{MetricSample, ServiceInfo, ServiceInfoRef, TelemetryEvent, TelemetryEventRef};

/// rkyv's archived forms of the model types, by the names its derive gives them: the in-place
/// readers implement traits on these types, which another crate's impls must be able to tell
/// apart from its own (a projection such as `Archived<Order>` cannot be).
#[cfg(feature = "rkyv")]
pub mod archived {
    pub use super::checkout::{
        ArchivedAddress, ArchivedCheckoutRequest, ArchivedCheckoutResponse, ArchivedLineItem,
        ArchivedOrderStatus, ArchivedPaymentMethod, ArchivedRequestMeta, ArchivedResponseMeta,
        ArchivedShipment,
    };
    pub use super::collections::{ArchivedItem, ArchivedItems, ArchivedKeyed};
    pub use super::order::ArchivedOrder;
    pub use super::readings::{ArchivedReading, ArchivedReadings};
    pub use super::telemetry::{ArchivedMetricSample, ArchivedServiceInfo, ArchivedTelemetryEvent};
}

/// Everything every format may rely on: serde (the serde formats, the value-tree decodes) and
/// equality (the round-trip proof).
pub trait Model: Clone + PartialEq + Debug + Serialize + DeserializeOwned + Send + Sync + 'static {}

impl<T> Model for T where T: Clone + PartialEq + Debug + Serialize + DeserializeOwned + Send + Sync + 'static {}

/// A payload that is a sequence of records; the JSON framings and CSV work record by record.
pub trait Batch: Model {
    type Record: Model;
    fn records(&self) -> &[Self::Record];
    fn from_records(records: Vec<Self::Record>) -> Self;
}

/// A payload type with a borrowed twin (the borrowed mode): the same data with every string a
/// `&'a str` into the bytes it was decoded from, so a decode allocates for its containers but
/// copies no string. `&str`, not `Cow<str>`: serde borrows a `Cow` only when it is a struct's
/// own field, never inside a `Vec` or a map, so a `Cow` model would copy the labels, tags and
/// attributes silently and still be called borrowed. The price is that a JSON string with an
/// escape cannot be borrowed by a library that unescapes into a copy (serde_json, sonic-rs):
/// it is refused, not copied. No payload here has an escape.
pub trait Borrowed: Model {
    type Ref<'a>: Debug;
    /// The owned value holding the same data: how a borrowed decode is proven.
    fn to_owned_model(value: &Self::Ref<'_>) -> Self;
    /// Every string of the borrowed value: the proof checks that they point into the bytes the
    /// value was decoded from.
    fn strings<'s>(value: &'s Self::Ref<'_>) -> Vec<&'s str>;
}

/// A value of a generated borrowed twin (`--typed`): the owned value it holds the same data as,
/// and every string it borrows, so a generated root's [`Borrowed`] impl is a call of each.
pub trait BorrowedValue {
    type Owned;
    fn to_owned_value(&self) -> Self::Owned;
    fn strings<'s>(&'s self, out: &mut Vec<&'s str>);
}

macro_rules! copied_borrowed_value {
    ($($type:ty),*) => {$(
        impl BorrowedValue for $type {
            type Owned = $type;

            fn to_owned_value(&self) -> $type {
                *self
            }

            fn strings<'s>(&'s self, _: &mut Vec<&'s str>) {}
        }
    )*};
}

copied_borrowed_value!(i64, f64, bool);

impl BorrowedValue for &str {
    type Owned = String;

    fn to_owned_value(&self) -> String {
        (*self).to_string()
    }

    fn strings<'s>(&'s self, out: &mut Vec<&'s str>) {
        out.push(self);
    }
}

impl<T: BorrowedValue> BorrowedValue for Option<T> {
    type Owned = Option<T::Owned>;

    fn to_owned_value(&self) -> Option<T::Owned> {
        self.as_ref().map(T::to_owned_value)
    }

    fn strings<'s>(&'s self, out: &mut Vec<&'s str>) {
        if let Some(value) = self {
            value.strings(out);
        }
    }
}

impl<T: BorrowedValue> BorrowedValue for Vec<T> {
    type Owned = Vec<T::Owned>;

    fn to_owned_value(&self) -> Vec<T::Owned> {
        self.iter().map(T::to_owned_value).collect()
    }

    fn strings<'s>(&'s self, out: &mut Vec<&'s str>) {
        self.iter().for_each(|value| value.strings(out));
    }
}

impl<T: BorrowedValue> BorrowedValue for std::collections::BTreeMap<&str, T> {
    type Owned = std::collections::BTreeMap<String, T::Owned>;

    fn to_owned_value(&self) -> Self::Owned {
        self.iter()
            .map(|(key, value)| (key.to_string(), value.to_owned_value()))
            .collect()
    }

    fn strings<'s>(&'s self, out: &mut Vec<&'s str>) {
        for (key, value) in self {
            out.push(key);
            value.strings(out);
        }
    }
}

/// Receives the payloads that have a borrowed type, for the formats that decode borrowing.
pub trait VisitBorrowed<B: Borrowed> {
    fn borrowed(&mut self, payload: &Payload<B>);
}

/// A visitor of every borrowed type, as [`visit_borrowed`] needs.
pub trait BorrowedVisitor:
    VisitBorrowed<Readings> + VisitBorrowed<Order> + VisitBorrowed<TelemetryEvent> + VisitBorrowed<Items>
{
}

impl<V> BorrowedVisitor for V where
    V: VisitBorrowed<Readings> + VisitBorrowed<Order> + VisitBorrowed<TelemetryEvent> + VisitBorrowed<Items>
{
}

/// The payloads of [`visit_all`] that have a [`Borrowed`] type (those whose strings are most
/// of their data), in the same order.
#[cfg_attr(feature = "data-only", allow(unused_variables))]
pub fn visit_borrowed(visitor: &mut impl BorrowedVisitor) {
    #[cfg(not(feature = "data-only"))]
    {
        visitor.borrowed(&readings::READINGS);
        visitor.borrowed(&order::ORDER);
        visitor.borrowed(&telemetry::TELEMETRY);
        visitor.borrowed(&collections::VEC_SMALL);
        visitor.borrowed(&collections::VEC_BIG);
    }
}

/// The specs of [`visit_borrowed`]'s payloads: a format without a borrowed decode lists each
/// unsupported for the borrowed mode.
pub fn borrowed_specs() -> Vec<&'static PayloadSpec> {
    let mut specs = Specs(Vec::new());
    visit_borrowed(&mut specs);
    specs.0
}

/// The specs of the payloads a visit sees, in its order.
struct Specs(Vec<&'static PayloadSpec>);

impl<P: Model> Visit<P> for Specs {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.push(payload.spec);
    }
}

impl<B: Borrowed> VisitBorrowed<B> for Specs {
    fn borrowed(&mut self, payload: &Payload<B>) {
        self.0.push(payload.spec);
    }
}

/// How a payload is built, which decides what a record-oriented format (CSV) can do with it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// One record of scalar fields.
    FlatRecord,
    /// A [`Batch`] of records; `flat` when every record holds only scalar fields.
    Batch { flat: bool },
    /// String keys to records, in a `BTreeMap`, so every format writes the keys sorted.
    Map,
    /// One nested document (structs, lists and maps inside).
    Document,
}

/// What a payload is called and how many records one value of it holds.
#[derive(Debug)]
pub struct PayloadSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub records: usize,
    pub shape: Shape,
}

/// A payload: its spec and its (lazily generated, then shared) value.
pub struct Payload<P: 'static> {
    pub spec: &'static PayloadSpec,
    pub value: fn() -> &'static P,
}

/// Receives the payloads of model type `P`. A format implements it for every `P` it can carry
/// (`impl<P: Model + bitcode::Encode + ...> Visit<P> for Bitcode`): that is how its bounds
/// reach the payload types without this module naming the format.
pub trait Visit<P: Model> {
    fn payload(&mut self, payload: &Payload<P>);
}

/// Receives the batch payloads, for the formats that lay records out one by one (the JSON
/// framings, CSV).
pub trait VisitBatch<B: Batch> {
    fn batch(&mut self, payload: &Payload<B>);
}

/// A visitor of every model type, as [`visit_all`] needs: any type with a [`Visit`] impl for
/// each of them.
pub trait Visitor:
    Visit<Readings>
    + Visit<Order>
    + Visit<TelemetryEvent>
    + Visit<CheckoutRequest>
    + Visit<CheckoutResponse>
    + Visit<Keyed>
    + Visit<Items>
{
}

impl<V> Visitor for V where
    V: Visit<Readings>
        + Visit<Order>
        + Visit<TelemetryEvent>
        + Visit<CheckoutRequest>
        + Visit<CheckoutResponse>
        + Visit<Keyed>
        + Visit<Items>
{
}

/// A visitor of the typed corpora, as [`visit_corpora`] needs.
pub trait CorpusVisitor: Visit<Twitter> + Visit<CitmCatalog> {}

impl<V> CorpusVisitor for V where V: Visit<Twitter> + Visit<CitmCatalog> {}

/// A visitor of every batch type, as [`visit_batches`] needs.
pub trait BatchVisitor: VisitBatch<Readings> + VisitBatch<Items> {}

impl<V> BatchVisitor for V where V: VisitBatch<Readings> + VisitBatch<Items> {}

/// The one list of payloads, in the order reports show them. A build with the feature
/// `data-only` (the typed binary's) has none, nor corpora: it holds the arms of its data alone.
#[cfg_attr(feature = "data-only", allow(unused_variables))]
pub fn visit_all(visitor: &mut impl Visitor) {
    #[cfg(not(feature = "data-only"))]
    {
        visitor.payload(&readings::READINGS);
        visitor.payload(&order::ORDER);
        visitor.payload(&telemetry::TELEMETRY);
        visitor.payload(&checkout::CHECKOUT_REQUEST);
        visitor.payload(&checkout::CHECKOUT_RESPONSE);
        visitor.payload(&collections::MAP_SMALL);
        visitor.payload(&collections::MAP_BIG);
        visitor.payload(&collections::VEC_SMALL);
        visitor.payload(&collections::VEC_BIG);
    }
}

/// The public JSON corpora in Rust types ([`corpora`]), after [`visit_all`]'s payloads. They are
/// visited on their own so that a format whose bounds they do not meet (no schema or derive for
/// them) still compiles; such a format lists them unsupported ([`corpus_specs`]) with its reason.
#[cfg_attr(feature = "data-only", allow(unused_variables))]
pub fn visit_corpora(visitor: &mut impl CorpusVisitor) {
    #[cfg(not(feature = "data-only"))]
    {
        visitor.payload(&corpora::TWITTER);
        visitor.payload(&corpora::CITM_CATALOG);
    }
}

/// The specs of [`visit_corpora`]'s payloads.
pub fn corpus_specs() -> Vec<&'static PayloadSpec> {
    let mut specs = Specs(Vec::new());
    visit_corpora(&mut specs);
    specs.0
}

/// Every payload of [`visit_all`] and [`visit_corpora`].
fn visit_every(visitor: &mut (impl Visitor + CorpusVisitor)) {
    visit_all(visitor);
    visit_corpora(visitor);
}

/// The payloads of [`visit_all`] whose shape is [`Shape::Batch`], in the same order.
#[cfg_attr(feature = "data-only", allow(unused_variables))]
pub fn visit_batches(visitor: &mut impl BatchVisitor) {
    #[cfg(not(feature = "data-only"))]
    {
        visitor.batch(&readings::READINGS);
        visitor.batch(&collections::VEC_SMALL);
        visitor.batch(&collections::VEC_BIG);
    }
}

/// The position of the payload `name` in the payload list, the order of every table; a payload
/// this build does not know (from another build's results) sorts last.
pub fn rank(name: &str) -> usize {
    specs()
        .iter()
        .position(|spec| spec.name == name)
        .unwrap_or(usize::MAX)
}

/// Every payload's spec, in registry order (the typed corpora last).
pub fn specs() -> Vec<&'static PayloadSpec> {
    let mut specs = Specs(Vec::new());
    visit_every(&mut specs);
    specs.0
}

/// The value of the payload `name`, when it is of type `P` (the input of a fidelity case).
pub fn value_of<P: Model>(name: &str) -> Option<&'static P> {
    struct Find<'a, P: 'static> {
        name: &'a str,
        found: Option<&'static P>,
    }
    impl<P: Model, Q: Model> Visit<Q> for Find<'_, P> {
        fn payload(&mut self, payload: &Payload<Q>) {
            if payload.spec.name == self.name {
                let value: &'static dyn std::any::Any = (payload.value)();
                self.found = value.downcast_ref::<P>();
            }
        }
    }
    let mut find = Find { name, found: None };
    visit_every(&mut find);
    find.found
}

/// The logical data of one payload as pretty JSON (`serbench dump --logical`).
pub fn logical_json(name: &str) -> Option<String> {
    struct Find<'a> {
        name: &'a str,
        json: Option<String>,
    }
    impl<P: Model> Visit<P> for Find<'_> {
        fn payload(&mut self, payload: &Payload<P>) {
            if payload.spec.name == self.name {
                self.json = serde_json::to_string_pretty((payload.value)()).ok();
            }
        }
    }
    let mut find = Find { name, json: None };
    visit_every(&mut find);
    find.json
}

/// Four string attributes, the way tracing and RPC metadata carry them.
pub(crate) fn attributes(rng: &mut SplitMix64) -> BTreeMap<String, String> {
    const KEYS: [&str; 4] = ["deployment.environment", "host.name", "k8s.pod.name", "tenant"];
    KEYS.iter()
        .map(|key| (key.to_string(), rng.word_id("v")))
        .collect()
}

/// The compact serde_json size of every payload: the reference for `ratio_to_json`.
pub fn json_reference_bytes() -> BTreeMap<&'static str, usize> {
    struct Sizes(BTreeMap<&'static str, usize>);
    impl<P: Model> Visit<P> for Sizes {
        fn payload(&mut self, payload: &Payload<P>) {
            let bytes = serde_json::to_vec((payload.value)()).expect("model types serialize to JSON");
            self.0.insert(payload.spec.name, bytes.len());
        }
    }
    let mut sizes = Sizes(BTreeMap::new());
    visit_every(&mut sizes);
    sizes.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visit_batches_visits_exactly_the_batch_payloads_in_order() {
        struct Names(Vec<&'static str>);
        impl<B: Batch> VisitBatch<B> for Names {
            fn batch(&mut self, payload: &Payload<B>) {
                self.0.push(payload.spec.name);
            }
        }
        let mut batches = Names(Vec::new());
        visit_batches(&mut batches);
        let expected: Vec<&str> = specs()
            .into_iter()
            .filter(|spec| matches!(spec.shape, Shape::Batch { .. }))
            .map(|spec| spec.name)
            .collect();
        assert_eq!(batches.0, expected);
    }
}

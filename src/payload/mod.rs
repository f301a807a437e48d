//! The logical data every format encodes: one file per workload, all generated from a fixed
//! seed so the bytes are identical on every run and every host.
//!
//! A payload is a value of a plain Rust model type plus a [`PayloadSpec`] that names it and
//! states its record count (the unit of every per-record figure). Formats never see payloads
//! one by one: they implement [`PayloadVisitor`] and [`visit_all`] hands them every payload with
//! its concrete type, so a generic codec covers every workload and a schema codec gets the type
//! it has generated code for.

mod checkout;
mod collections;
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
pub use collections::{Item, Items, Keyed};
pub use order::Order;
pub use readings::{Reading, Readings};
pub use rng::SplitMix64;
pub use telemetry::{MetricSample, ServiceInfo, TelemetryEvent};

/// Everything a model type must offer: serde for the serde formats, equality for the
/// round-trip proof, and the native traits of the enabled formats ([`crate::format::Native`]).
pub trait Model:
    Clone + PartialEq + Debug + Serialize + DeserializeOwned + Send + Sync + 'static + crate::format::Native
{
}

impl<T> Model for T where
    T: Clone
        + PartialEq
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
        + crate::format::Native
{
}

/// A payload that is a sequence of records; the JSON framings and CSV work record by record.
pub trait Batch: Model {
    type Record: Model;
    fn records(&self) -> &[Self::Record];
    fn from_records(records: Vec<Self::Record>) -> Self;
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

/// Receives every payload with its concrete type. `record` and `batch` default to `payload`;
/// a visitor overrides them only where the record structure matters to it.
pub trait PayloadVisitor {
    fn payload<P: Model>(&mut self, payload: &Payload<P>);

    fn record<R: Model>(&mut self, payload: &Payload<R>) {
        self.payload(payload)
    }

    fn batch<B: Batch>(&mut self, payload: &Payload<B>) {
        self.payload(payload)
    }
}

/// The one list of payloads, in the order reports show them.
pub fn visit_all(visitor: &mut impl PayloadVisitor) {
    visitor.batch(&readings::READINGS);
    visitor.record(&order::ORDER);
    visitor.payload(&telemetry::TELEMETRY);
    visitor.payload(&checkout::CHECKOUT_REQUEST);
    visitor.payload(&checkout::CHECKOUT_RESPONSE);
    visitor.payload(&collections::MAP_SMALL);
    visitor.payload(&collections::MAP_BIG);
    visitor.batch(&collections::VEC_SMALL);
    visitor.batch(&collections::VEC_BIG);
}

/// Every payload's spec, in registry order.
pub fn specs() -> Vec<&'static PayloadSpec> {
    struct Specs(Vec<&'static PayloadSpec>);
    impl PayloadVisitor for Specs {
        fn payload<P: Model>(&mut self, payload: &Payload<P>) {
            self.0.push(payload.spec);
        }
    }
    let mut specs = Specs(Vec::new());
    visit_all(&mut specs);
    specs.0
}

/// The logical data of one payload as pretty JSON (`serbench dump --logical`).
pub fn logical_json(name: &str) -> Option<String> {
    struct Find<'a> {
        name: &'a str,
        json: Option<String>,
    }
    impl PayloadVisitor for Find<'_> {
        fn payload<P: Model>(&mut self, payload: &Payload<P>) {
            if payload.spec.name == self.name {
                self.json = serde_json::to_string_pretty((payload.value)()).ok();
            }
        }
    }
    let mut find = Find { name, json: None };
    visit_all(&mut find);
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
    impl PayloadVisitor for Sizes {
        fn payload<P: Model>(&mut self, payload: &Payload<P>) {
            let bytes = serde_json::to_vec((payload.value)()).expect("model types serialize to JSON");
            self.0.insert(payload.spec.name, bytes.len());
        }
    }
    let mut sizes = Sizes(BTreeMap::new());
    visit_all(&mut sizes);
    sizes.0
}

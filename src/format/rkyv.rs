//! rkyv 0.8: the model types' own derives (`Archive`, `Serialize`, `Deserialize`, see
//! src/payload), the default archive layout (little-endian, aligned, 32-bit relative pointers),
//! through the high-level API (`rkyv::api::high`).
//!
//! Backend `rkyv` (every payload), validated with bytecheck (the crate's default):
//! - encode: `to_bytes_in_with_alloc` into an `AlignedVec` and with an `Arena`, both kept in
//!   the codec for its life: the vector is cleared (its capacity kept) and the arena's memory
//!   is reused by every serialization, which is how rkyv's documentation says to serialize
//!   repeatedly without allocating; the bytes are returned from the `AlignedVec`, not copied;
//! - decode: `rkyv::access` (bytecheck validation of the whole buffer) then `rkyv::deserialize`
//!   into the owned model value, which is what `rkyv::from_bytes` does;
//! - access-all / access-partial: `rkyv::access`, then the fields of
//!   [`crate::payload::fields`] read from the archived types and folded into a [`Digest`] in
//!   the same order as the owned value's fold, so they line up with FlatBuffers' and Cap'n
//!   Proto's arms; validation walks the whole buffer, so access-partial saves only the reads;
//! - update: `rkyv::access_mut` (validated) gives a `Seal` of the archived root, munge
//!   destructures it down to the payload's [`UpdateField`] scalar, which is overwritten in the
//!   buffer; the registry proves it by decoding the updated bytes.
//!
//! Backend `rkyv`, variant `unchecked-unsafe`: the same decode and access arms through
//! `access_unchecked` (no validation, `unsafe`). Reading bytes that are not a valid archive this
//! way is undefined behaviour, so its arms are registered without a decoder
//! ([`Registry::trusted_decode`], [`Registry::trusted_access`]): robustness, the fuzz target and
//! the property tests never feed it, and it only ever reads what its own encoder wrote. Its
//! codec and accesses can only be made through `unsafe` constructors that state that contract.
//! It shows what validation costs; it is not what a receiver of untrusted bytes may run.
//!
//! Alignment: an archive must be read at an address aligned as its types need (here 8; rkyv's
//! `AlignedVec` gives 16). The harness hands a `&[u8]`; a receiver of bytes from elsewhere
//! (a socket buffer, a subslice) cannot count on it, so every read here checks the address
//! and, when it is not 16-aligned, first copies the bytes into an `AlignedVec` kept for that
//! (reused, so a warm copy allocates nothing). The harness's bytes live in a `Vec` whose
//! allocation the system allocator aligns to 16, so the timed loops normally copy nothing.
//! An update must change the received buffer itself, so it refuses a misaligned one with an
//! error instead of writing into a copy. Misaligned data is never read: the validator also
//! checks every pointer's alignment on its own.
//!
//! Model: rkyv needs no model change. `String`, `Vec`, `BTreeMap` (archived as a B-tree, in key
//! order), `i64`, `f64`, `bool` and the unit enum `OrderStatus` (archived as a `u8` tag) all
//! have archived forms; lengths are 32-bit and relative pointers signed 32-bit, so an archive
//! spans at most about 2 GiB.
//!
//! Typed data (`--typed`): the generated structs derive rkyv's three traits and get every arm of
//! both backends. The generated crate implements [`InPlaceValue`] and [`InPlace`] on each
//! archived struct (the fields of [`fields::FieldValue`]'s rule) and, where the data has a
//! scalar to change, [`SetInPlace`] on the root (a `munge` down to it).
//!
//! Maintenance: rkyv is maintained; the RUSTSEC advisories on 0.8 (2026-0001, -0122, -0233,
//! -0234, -0235: use-after-free and out-of-bounds reads on untrusted archives) are all fixed by
//! 0.8.17, so Cargo.toml asks for 0.8.18 or later.

use std::fmt::Write as _;
use std::hint::black_box;
use std::marker::PhantomData;
use std::ops::ControlFlow;

use ::rkyv::api::high::{HighDeserializer, HighSerializer, HighValidator};
use ::rkyv::bytecheck::CheckBytes;
use ::rkyv::collections::btree_map::ArchivedBTreeMap;
use ::rkyv::munge::munge;
use ::rkyv::rancor;
use ::rkyv::seal::Seal;
use ::rkyv::ser::allocator::{Arena, ArenaHandle};
use ::rkyv::string::ArchivedString;
use ::rkyv::util::AlignedVec;
use ::rkyv::vec::ArchivedVec;
use ::rkyv::{Archive, Archived, Deserialize, Serialize};
use anyhow::{Context, Result, ensure};

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedItems, TypedModule, TypedSupport,
};
use crate::arm::{Access, Backend, Codec, Operation, Update};
use crate::payload::archived::{
    ArchivedAddress, ArchivedCheckoutRequest, ArchivedCheckoutResponse, ArchivedItem, ArchivedItems,
    ArchivedKeyed, ArchivedLineItem, ArchivedMetricSample, ArchivedOrder, ArchivedOrderStatus,
    ArchivedPaymentMethod, ArchivedReading, ArchivedReadings, ArchivedRequestMeta, ArchivedResponseMeta,
    ArchivedServiceInfo, ArchivedShipment, ArchivedTelemetryEvent,
};
use crate::payload::fields::{self, Digest, Fields, UpdateField, model_fields};
use crate::payload::{
    CheckoutRequest, CheckoutResponse, Items, Keyed, Model, Order, OrderStatus, Payload, Readings,
    TelemetryEvent, Visit, visit_all,
};

pub static FORMAT: Format = Format {
    name: "rkyv",
    about: "rkyv: native derive, validated zero-copy access and in-place update",
    colour: [0x22, 0xDD, 0xCC],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: the archived layout is the type's; a changed type reads other bytes",
        languages: &["Rust"],
        languages_source: "https://rkyv.org",
    },
    backends: &[
        BackendDoc {
            backend: "rkyv",
            variant: "",
            crates: &["rkyv"],
            crate_note: "default features (std, bytecheck); the RUSTSEC-2026-0001, -0122, -0233, -0234, -0235 memory-safety bugs on untrusted archives are all fixed by 0.8.17",
            schema: "-",
            buffer_policy: "native derive; `AlignedVec` and `Arena` kept in the codec, reused, the bytes returned from the `AlignedVec`; decode, access, update validated (bytecheck); misaligned input copied to a reused `AlignedVec` (update refuses it)",
        },
        BackendDoc {
            backend: "rkyv",
            variant: "unchecked-unsafe",
            crates: &["rkyv"],
            crate_note: "",
            schema: "-",
            buffer_policy: "decode and access without validation (`access_unchecked`, `unsafe`): only ever fed its own encoding, never hostile bytes (no robustness, fuzz or property decoder)",
        },
    ],
    fidelity: &[Fidelity {
        backend: "rkyv",
        variant: "",
        payload: "order",
        operation: Operation::AccessPartial,
        case: rkyv_order_access_partial,
    }],
    register: |registry| {
        visit_all(&mut Rkyv(registry));
        registry.unsupported_borrowed(super::READS_IN_PLACE);
        registry.unsupported_corpora(
            "no rkyv derive and field readers (access, update) written for the corpus types",
        );
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["rkyv::Archive", "rkyv::Serialize", "rkyv::Deserialize"],
        crates: &["rkyv"],
        items: typed_items,
        in_place_update: true,
        borrowed: TypedBorrowed::Not(super::READS_IN_PLACE),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "an archived layout is a compiled type's; no run-time twin",
    ),
};

const RKYV: Backend = Backend::new("rkyv");
const UNCHECKED: Backend = RKYV.variant("unchecked-unsafe");

/// rkyv's boxed error, which carries the trace of where validation failed.
type Error = rancor::Error;

/// What rkyv's encode and decode need of a type: its derives, validation and deserialization
/// with the high-level API's strategies (a generated type of `--typed` has just these).
pub trait Archivable:
    Model
    + for<'a> Serialize<HighSerializer<AlignedVec, ArenaHandle<'a>, Error>>
    + Archive<
        Archived: for<'a> CheckBytes<HighValidator<'a, Error>> + Deserialize<Self, HighDeserializer<Error>>,
    >
{
}

impl<T> Archivable for T where
    T: Model
        + for<'a> Serialize<HighSerializer<AlignedVec, ArenaHandle<'a>, Error>>
        + Archive<
            Archived: for<'a> CheckBytes<HighValidator<'a, Error>> + Deserialize<T, HighDeserializer<Error>>,
        >
{
}

/// What rkyv needs of every model type (payloads and records): [`Archivable`], and the in-place
/// fold of its archived form.
pub trait Native: Archivable + Fields + Archive<Archived: InPlace> {}

impl<T> Native for T where T: Archivable + Fields + Archive<Archived: InPlace> {}

/// The typed arms of a generated payload type (`--typed`): encode, decode and the two accesses,
/// validated and unchecked, as for the built-in payloads. The generated crate implements
/// [`InPlace`] and [`InPlaceValue`] on every archived struct, following
/// [`fields::FieldValue`]'s rule.
pub fn register_typed<P: Native>(registry: &mut Registry, payload: &Payload<P>) {
    Rkyv(registry).reads(payload);
}

/// The update arm of a generated payload type whose data has a scalar to change
/// ([`crate::payload::data::update_target`]).
pub fn register_typed_update<P: Native + SetInPlace>(registry: &mut Registry, payload: &Payload<P>) {
    registry.update(payload, RKYV, RkyvCodec::checked, || SealedUpdate);
}

/// The fields of an archived model type read in place, folded exactly as [`Fields`] folds the
/// owned value (same fields, same order).
pub trait InPlace {
    fn fold_all(&self, digest: &mut Digest);
    fn fold_route(&self, digest: &mut Digest);
}

/// [`fields::FieldValue`] of the archived types: how a value of a generated record folds whole
/// and into its record's envelope, read in place.
pub trait InPlaceValue {
    fn fold(&self, digest: &mut Digest);
    fn fold_envelope(&self, digest: &mut Digest);
}

macro_rules! archived_scalar {
    ($($type:ty => $method:ident($value:ident) $read:expr),* $(,)?) => {$(
        impl InPlaceValue for $type {
            fn fold(&self, digest: &mut Digest) {
                let $value = self;
                digest.$method($read);
            }

            fn fold_envelope(&self, digest: &mut Digest) {
                self.fold(digest);
            }
        }
    )*};
}

archived_scalar!(
    ::rkyv::rend::i64_le => int(value) value.to_native(),
    ::rkyv::rend::f64_le => float(value) value.to_native(),
    bool => flag(value) *value,
    ArchivedString => text(value) value.as_str(),
);

impl<T: InPlaceValue> InPlaceValue for ::rkyv::option::ArchivedOption<T> {
    fn fold(&self, digest: &mut Digest) {
        digest.flag(self.is_some());
        if let Some(value) = self.as_ref() {
            value.fold(digest);
        }
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.flag(self.is_some());
        if let Some(value) = self.as_ref() {
            value.fold_envelope(digest);
        }
    }
}

impl<T: InPlaceValue> InPlaceValue for ArchivedVec<T> {
    fn fold(&self, digest: &mut Digest) {
        digest.count(self.len());
        self.iter().for_each(|item| item.fold(digest));
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.count(self.len());
    }
}

impl<T: InPlaceValue> InPlaceValue for ArchivedBTreeMap<ArchivedString, T> {
    fn fold(&self, digest: &mut Digest) {
        digest.count(self.len());
        self.visit(|key, value| {
            digest.text(key);
            value.fold(digest);
            ControlFlow::<()>::Continue(())
        });
    }

    fn fold_envelope(&self, digest: &mut Digest) {
        digest.count(self.len());
    }
}

/// A payload's [`UpdateField`] written into its archived form through the sealed root.
pub trait SetInPlace: UpdateField + Archive {
    fn set(root: Seal<'_, Self::Archived>, value: Self::Scalar) -> Result<()>;
}

struct Rkyv<'a>(&'a mut Registry);

impl<P: Native + SetInPlace> Visit<P> for Rkyv<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.reads(payload);
        register_typed_update(self.0, payload);
    }
}

impl Rkyv<'_> {
    /// Every arm but the update: encode, decode and the accesses, validated and unchecked.
    fn reads<P: Native>(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.codec(payload, RKYV, RkyvCodec::checked);
        registry.access(
            payload,
            RKYV,
            Operation::AccessAll,
            RkyvCodec::checked,
            Read::<All, Validated>::checked,
        );
        registry.access(
            payload,
            RKYV,
            Operation::AccessPartial,
            RkyvCodec::checked,
            Read::<Route, Validated>::checked,
        );
        // SAFETY (of the three constructors below): the trusted arms only ever read the bytes
        // their own codec encoded (the registry proves the round trip on them, then times the
        // same bytes), and they get no decoder, so nothing else reaches them.
        registry.trusted_decode(payload, UNCHECKED, || unsafe { RkyvCodec::unchecked() });
        registry.trusted_access(
            payload,
            UNCHECKED,
            Operation::AccessAll,
            || unsafe { RkyvCodec::unchecked() },
            || unsafe { Read::<All, Unchecked>::unchecked() },
        );
        registry.trusted_access(
            payload,
            UNCHECKED,
            Operation::AccessPartial,
            || unsafe { RkyvCodec::unchecked() },
            || unsafe { Read::<Route, Unchecked>::unchecked() },
        );
    }
}

/// How the archived root is found in the bytes: validated, or trusted.
trait Trust: Send + 'static {
    /// # Safety
    /// For [`Unchecked`], `bytes` must be an archive of a `P` that [`Writer`] wrote, at a
    /// 16-aligned address; [`Validated`] asks nothing.
    unsafe fn root<P: Archivable>(bytes: &[u8]) -> Result<&Archived<P>>;
}

/// `rkyv::access`: bytecheck validates the whole buffer first.
struct Validated;

impl Trust for Validated {
    unsafe fn root<P: Archivable>(bytes: &[u8]) -> Result<&Archived<P>> {
        ::rkyv::access::<Archived<P>, Error>(bytes).context("not a valid rkyv archive of this type")
    }
}

/// `rkyv::access_unchecked`: no validation. Only used by the [`RkyvCodec`] and [`Read`] made
/// through their `unsafe` constructors, whose callers promise to pass only bytes this module
/// encoded.
struct Unchecked;

impl Trust for Unchecked {
    unsafe fn root<P: Archivable>(bytes: &[u8]) -> Result<&Archived<P>> {
        // SAFETY: the caller passes an archive of a `P` that `Writer` wrote, aligned.
        Ok(unsafe { ::rkyv::access_unchecked::<Archived<P>>(bytes) })
    }
}

/// The alignment every read here ensures (see the module doc): `AlignedVec`'s.
const ALIGNMENT: usize = <AlignedVec>::ALIGNMENT;

fn is_aligned(bytes: &[u8]) -> bool {
    bytes.as_ptr().align_offset(ALIGNMENT) == 0
}

/// Where misaligned input is copied before it is read; reused, so its memory stays.
#[derive(Default)]
struct Aligned {
    copy: AlignedVec,
}

impl Aligned {
    /// `bytes` themselves when they are aligned, otherwise a copy that is.
    fn bytes<'a>(&'a mut self, bytes: &'a [u8]) -> &'a [u8] {
        if is_aligned(bytes) {
            return bytes;
        }
        self.copy.clear();
        self.copy.extend_from_slice(bytes);
        &self.copy
    }
}

/// The serializer's reused output vector and arena.
struct Writer {
    bytes: AlignedVec,
    arena: Arena,
}

impl Writer {
    fn new() -> Self {
        Writer {
            bytes: AlignedVec::new(),
            arena: Arena::new(),
        }
    }

    fn write<P: Archivable>(&mut self, value: &P) -> Result<&[u8]> {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        self.bytes =
            ::rkyv::api::high::to_bytes_in_with_alloc::<_, _, Error>(value, bytes, self.arena.acquire())?;
        Ok(&self.bytes)
    }
}

/// Encodes with the reused [`Writer`]; decodes through `T`'s access, then deserializes.
struct RkyvCodec<T: Trust> {
    writer: Writer,
    input: Aligned,
    trust: PhantomData<T>,
}

impl RkyvCodec<Validated> {
    fn checked() -> Self {
        RkyvCodec {
            writer: Writer::new(),
            input: Aligned::default(),
            trust: PhantomData,
        }
    }
}

impl RkyvCodec<Unchecked> {
    /// # Safety
    /// The codec must only be asked to decode bytes it (or another `RkyvCodec`) encoded for the
    /// same type.
    unsafe fn unchecked() -> Self {
        RkyvCodec {
            writer: Writer::new(),
            input: Aligned::default(),
            trust: PhantomData,
        }
    }
}

impl<P: Archivable, T: Trust> Codec<P> for RkyvCodec<T> {
    fn encode<'a>(&'a mut self, value: &P, _out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.writer.write(value)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        // SAFETY: nothing to uphold for `Validated`; a codec of `Unchecked` exists only through
        // `RkyvCodec::unchecked`, whose caller promised to decode only what a `Writer` wrote,
        // and `Aligned::bytes` returns a 16-aligned address.
        let root = unsafe { T::root::<P>(self.input.bytes(bytes))? };
        Ok(::rkyv::deserialize::<P, Error>(root)?)
    }
}

/// Which fields an access reads: every field, or the routing subset.
trait Subset: Send + 'static {
    fn expected<P: Fields>(value: &P) -> u64;
    fn fold<A: InPlace>(archived: &A, digest: &mut Digest);
}

struct All;

impl Subset for All {
    fn expected<P: Fields>(value: &P) -> u64 {
        fields::digest_all(value)
    }

    fn fold<A: InPlace>(archived: &A, digest: &mut Digest) {
        archived.fold_all(digest);
    }
}

struct Route;

impl Subset for Route {
    fn expected<P: Fields>(value: &P) -> u64 {
        fields::digest_route(value)
    }

    fn fold<A: InPlace>(archived: &A, digest: &mut Digest) {
        archived.fold_route(digest);
    }
}

/// An in-place access: the archived root found as `T` says, then `S`'s fields folded.
struct Read<S: Subset, T: Trust> {
    input: Aligned,
    marker: PhantomData<(S, T)>,
}

impl<S: Subset> Read<S, Validated> {
    fn checked() -> Self {
        Read {
            input: Aligned::default(),
            marker: PhantomData,
        }
    }
}

impl<S: Subset> Read<S, Unchecked> {
    /// # Safety
    /// The access must only be given bytes an [`RkyvCodec`] encoded for the type it reads.
    unsafe fn unchecked() -> Self {
        Read {
            input: Aligned::default(),
            marker: PhantomData,
        }
    }
}

impl<P: Native, S: Subset, T: Trust> Access<P> for Read<S, T> {
    fn expected(value: &P) -> u64 {
        S::expected(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        // SAFETY: as in `RkyvCodec::decode`, through `Read::unchecked`'s promise.
        let root = unsafe { T::root::<P>(self.input.bytes(bytes))? };
        S::fold(root, &mut digest);
        Ok(digest.finish())
    }
}

/// `update`: validated `access_mut`, then the payload's scalar written through its `Seal`.
struct SealedUpdate;

impl<P: Native + SetInPlace> Update<P> for SealedUpdate {
    fn update(&mut self, bytes: &mut [u8], value: P::Scalar) -> Result<()> {
        ensure!(
            is_aligned(bytes),
            "the buffer is not {ALIGNMENT}-byte aligned: an in-place update cannot copy it"
        );
        let root = ::rkyv::access_mut::<Archived<P>, Error>(bytes)
            .context("not a valid rkyv archive of this type")?;
        P::set(root, value)
    }
}

/// [`InPlace::fold_all`] of an archived value, from [`model_fields!`]'s list: the owned fold's
/// fields, read in place.
macro_rules! in_place_fold_all {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold_all(&self, digest: &mut Digest) {
            $(in_place_fold_all!(@ self digest $kind $field);)*
        }
    };
    (@ $s:tt $d:ident int $f:ident) => { $d.int($s.$f.to_native()) };
    (@ $s:tt $d:ident float $f:ident) => { $d.float($s.$f.to_native()) };
    (@ $s:tt $d:ident flag $f:ident) => { $d.flag($s.$f) };
    (@ $s:tt $d:ident text $f:ident) => { $d.text(&$s.$f) };
    (@ $s:tt $d:ident texts $f:ident) => { strings($d, &$s.$f) };
    (@ $s:tt $d:ident pairs $f:ident) => { attributes($d, &$s.$f) };
    (@ $s:tt $d:ident record $f:ident) => { $s.$f.fold_all($d) };
    (@ $s:tt $d:ident records $f:ident) => { records($d, &$s.$f) };
    (@ $s:tt $d:ident status $f:ident) => { $d.int(status_position(&$s.$f)) };
    // Through `visit`, which walks the B-tree in key order without the stack `iter()` allocates.
    (@ $s:tt $d:ident keyed $f:ident) => {{
        $d.count($s.$f.len());
        $s.$f.visit(|key, record| {
            $d.text(key);
            record.fold_all($d);
            ControlFlow::<()>::Continue(())
        });
    }};
}

// --- folds over the archived types ------------------------------------------------------------

fn strings(digest: &mut Digest, values: &ArchivedVec<ArchivedString>) {
    digest.texts(values.iter().map(ArchivedString::as_str));
}

/// The count, then each record, as [`Fields`] folds a list of records.
fn records<T: InPlace>(digest: &mut Digest, records: &ArchivedVec<T>) {
    digest.count(records.len());
    records.iter().for_each(|record| record.fold_all(digest));
}

/// The count, then each key and value in key order, as [`Digest::pairs`] folds a map. Through
/// `visit`, which walks the B-tree in order without the stack `iter()` allocates.
fn attributes(digest: &mut Digest, attributes: &ArchivedBTreeMap<ArchivedString, ArchivedString>) {
    digest.count(attributes.len());
    attributes.visit(|key, value| {
        digest.text(key);
        digest.text(value);
        ControlFlow::<()>::Continue(())
    });
}

impl InPlace for ArchivedReading {
    model_fields!(Reading, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.flag(self.valid);
    }
}

impl InPlace for ArchivedReadings {
    model_fields!(Readings, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.readings.len());
        if let Some(first) = self.readings.first() {
            first.fold_route(digest);
        }
    }
}

impl InPlace for ArchivedOrder {
    model_fields!(Order, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.int(self.order_id.to_native());
        digest.int(self.customer_id.to_native());
    }
}

impl InPlace for ArchivedServiceInfo {
    model_fields!(ServiceInfo, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.name);
    }
}

impl InPlace for ArchivedMetricSample {
    model_fields!(MetricSample, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        self.fold_all(digest);
    }
}

impl InPlace for ArchivedTelemetryEvent {
    model_fields!(TelemetryEvent, in_place_fold_all);

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

impl InPlace for ArchivedRequestMeta {
    model_fields!(RequestMeta, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.request_id);
    }
}

impl InPlace for ArchivedLineItem {
    model_fields!(LineItem, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.product_id);
    }
}

impl InPlace for ArchivedAddress {
    model_fields!(Address, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.country);
    }
}

impl InPlace for ArchivedPaymentMethod {
    model_fields!(PaymentMethod, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.kind);
    }
}

impl InPlace for ArchivedCheckoutRequest {
    model_fields!(CheckoutRequest, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.meta.request_id);
        digest.text(&self.customer_id);
    }
}

impl InPlace for ArchivedResponseMeta {
    model_fields!(ResponseMeta, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.request_id);
    }
}

impl InPlace for ArchivedShipment {
    model_fields!(Shipment, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.shipment_id);
    }
}

/// The variant's position in the model enum, as [`Fields`] folds `status as i64`.
fn status_position(status: &ArchivedOrderStatus) -> i64 {
    let status = match status {
        ArchivedOrderStatus::Pending => OrderStatus::Pending,
        ArchivedOrderStatus::Confirmed => OrderStatus::Confirmed,
        ArchivedOrderStatus::Shipped => OrderStatus::Shipped,
        ArchivedOrderStatus::Cancelled => OrderStatus::Cancelled,
    };
    status as i64
}

impl InPlace for ArchivedCheckoutResponse {
    model_fields!(CheckoutResponse, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.text(&self.meta.request_id);
        digest.text(&self.order_id);
    }
}

impl InPlace for ArchivedItem {
    model_fields!(Item, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.int(self.id.to_native());
    }
}

impl InPlace for ArchivedItems {
    model_fields!(Items, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.items.len());
        if let Some(first) = self.items.first() {
            first.fold_route(digest);
        }
    }
}

impl InPlace for ArchivedKeyed {
    model_fields!(Keyed, in_place_fold_all);

    fn fold_route(&self, digest: &mut Digest) {
        digest.count(self.entries.len());
        // The first entry in key order: `visit` stops there.
        self.entries.visit(|key, item| {
            digest.text(key);
            item.fold_route(digest);
            ControlFlow::Break(())
        });
    }
}

// --- in-place updates through the sealed root -------------------------------------------------

impl SetInPlace for Readings {
    fn set(root: Seal<'_, ArchivedReadings>, value: f64) -> Result<()> {
        munge!(let ArchivedReadings { readings } = root);
        let readings = ArchivedVec::as_slice_seal(readings);
        ensure!(!readings.is_empty(), "the archive holds no reading to update");
        munge!(let ArchivedReading { value: mut field, .. } = readings.index(0));
        *field = value.into();
        Ok(())
    }
}

impl SetInPlace for Order {
    fn set(root: Seal<'_, ArchivedOrder>, value: i64) -> Result<()> {
        munge!(let ArchivedOrder { mut quantity, .. } = root);
        *quantity = value.into();
        Ok(())
    }
}

impl SetInPlace for TelemetryEvent {
    fn set(root: Seal<'_, ArchivedTelemetryEvent>, value: i64) -> Result<()> {
        munge!(let ArchivedTelemetryEvent { mut timestamp_ms, .. } = root);
        *timestamp_ms = value.into();
        Ok(())
    }
}

impl SetInPlace for CheckoutRequest {
    fn set(root: Seal<'_, ArchivedCheckoutRequest>, value: i64) -> Result<()> {
        munge!(let ArchivedCheckoutRequest { meta: ArchivedRequestMeta { mut timestamp_ms, .. }, .. } = root);
        *timestamp_ms = value.into();
        Ok(())
    }
}

impl SetInPlace for CheckoutResponse {
    fn set(root: Seal<'_, ArchivedCheckoutResponse>, value: i64) -> Result<()> {
        munge!(let ArchivedCheckoutResponse { mut total_cents, .. } = root);
        *total_cents = value.into();
        Ok(())
    }
}

impl SetInPlace for Items {
    fn set(root: Seal<'_, ArchivedItems>, value: i64) -> Result<()> {
        munge!(let ArchivedItems { items } = root);
        let items = ArchivedVec::as_slice_seal(items);
        ensure!(!items.is_empty(), "the archive holds no item to update");
        munge!(let ArchivedItem { mut stock, .. } = items.index(0));
        *stock = value.into();
        Ok(())
    }
}

impl SetInPlace for Keyed {
    fn set(root: Seal<'_, ArchivedKeyed>, value: i64) -> Result<()> {
        munge!(let ArchivedKeyed { entries } = root);
        // The first entry in key order, as `UpdateField` picks it.
        ArchivedBTreeMap::visit_seal(entries, |_, item| {
            munge!(let ArchivedItem { mut stock, .. } = item);
            *stock = value.into();
            ControlFlow::Break(())
        })
        .context("the archive holds no entry to update")
    }
}

/// The generated crate's in-place folds of every archived struct and, where the data has a
/// scalar to change, the root's [`SetInPlace`].
fn typed_items(module: &TypedModule) -> TypedItems {
    let mut rust = String::new();
    for record in module.structs {
        let each = |method: &str| -> String {
            record
                .fields
                .iter()
                .map(|field| {
                    format!(
                        "        serbench::format::rkyv::InPlaceValue::{method}(&self.{field}, digest);\n"
                    )
                })
                .collect()
        };
        let name = &record.name;
        let route = if name == module.root && module.data.is_list() {
            "        digest.count(self.records.len());\n        if let Some(first) = self.records.first() {\n            serbench::format::rkyv::InPlace::fold_route(first, digest);\n        }\n".to_string()
        } else {
            each("fold_envelope")
        };
        write!(
            rust,
            "impl serbench::format::rkyv::InPlaceValue for Archived{name} {{\n    fn fold(&self, digest: &mut serbench::payload::fields::Digest) {{\n{all}    }}\n\n    fn fold_envelope(&self, _: &mut serbench::payload::fields::Digest) {{}}\n}}\n\nimpl serbench::format::rkyv::InPlace for Archived{name} {{\n    fn fold_all(&self, digest: &mut serbench::payload::fields::Digest) {{\n        serbench::format::rkyv::InPlaceValue::fold(self, digest);\n    }}\n\n    fn fold_route(&self, digest: &mut serbench::payload::fields::Digest) {{\n{route}    }}\n}}\n\n",
            all = each("fold"),
        )
        .expect("a String takes writes");
    }
    if let Ok(target) = module.update {
        // `Record { a: ArchivedA { mut b, .. }, .. }`: the munge pattern down to the scalar.
        let last = target.fields.len() - 1;
        let mut pattern = format!("mut {}", target.fields[last]);
        for (depth, field) in target.fields.iter().enumerate().rev() {
            let holder = &target.types[depth];
            pattern = if depth == last {
                format!("Archived{holder} {{ {pattern}, .. }}")
            } else {
                format!("Archived{holder} {{ {field}: {pattern}, .. }}")
            };
        }
        let root = module.root;
        let scalar = target.scalar;
        let (reach, record) = if module.data.is_list() {
            (
                "        ::rkyv::munge::munge!(let ArchivedRecords { records } = root);\n        let records = ::rkyv::vec::ArchivedVec::as_slice_seal(records);\n        anyhow::ensure!(!records.is_empty(), \"the archive holds no record to update\");\n",
                "records.index(0)",
            )
        } else {
            ("", "root")
        };
        write!(
            rust,
            "/// `update` writes `{path}` into the archive.\nimpl serbench::format::rkyv::SetInPlace for {root} {{\n    fn set(root: ::rkyv::seal::Seal<'_, Archived{root}>, value: {scalar}) -> anyhow::Result<()> {{\n{reach}        ::rkyv::munge::munge!(let {pattern} = {record});\n        *{field} = value.into();\n        Ok(())\n    }}\n}}\n",
            path = crate::escape::rust_comment(&target.path),
            field = target.fields[last],
        )
        .expect("a String takes writes");
    }
    TypedItems {
        rust,
        ..TypedItems::default()
    }
}

/// Fidelity: `rkyv::to_bytes` of `order`, then `rkyv::access` (validated) and the two routing
/// fields, as rkyv's documentation shows.
fn rkyv_order_access_partial() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = ::rkyv::to_bytes::<Error>(order).expect("order serializes");
    Box::new(move || {
        let archived = ::rkyv::access::<ArchivedOrder, Error>(black_box(&bytes)).expect("it validates");
        black_box((archived.order_id.to_native(), archived.customer_id.to_native()));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bytes` at an address that is not 16-aligned (nor 2-aligned): one byte into a copy.
    fn misaligned(bytes: &[u8]) -> (Vec<u8>, usize) {
        let mut storage = vec![0; bytes.len() + ALIGNMENT];
        let start = (0..ALIGNMENT)
            .find(|&start| storage[start..].as_ptr().align_offset(2) == 1)
            .expect("some offset is odd");
        storage[start..start + bytes.len()].copy_from_slice(bytes);
        (storage, start)
    }

    fn encode<P: Native>(value: &P) -> Vec<u8> {
        Codec::<P>::encode(&mut RkyvCodec::checked(), value, &mut Vec::new())
            .unwrap()
            .to_vec()
    }

    /// Reads `bytes` with every checked access and the checked decode.
    fn reads<P: Native>(bytes: &[u8]) -> [Result<u64>; 3] {
        [
            Access::<P>::access(&mut Read::<All, Validated>::checked(), bytes),
            Access::<P>::access(&mut Read::<Route, Validated>::checked(), bytes),
            Codec::<P>::decode(&mut RkyvCodec::checked(), bytes).map(|value| fields::digest_all(&value)),
        ]
    }

    struct RoundTrips;

    impl<P: Native + SetInPlace> Visit<P> for RoundTrips {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            let value = (payload.value)();
            let mut out = Vec::new();
            let mut codec = RkyvCodec::checked();
            let bytes = Codec::<P>::encode(&mut codec, value, &mut out).unwrap().to_vec();
            assert!(
                out.is_empty(),
                "{name}: the bytes come from the codec's AlignedVec"
            );
            // The reused vector and arena write the same bytes again.
            assert_eq!(
                Codec::<P>::encode(&mut codec, value, &mut out).unwrap(),
                bytes,
                "{name}"
            );
            assert_eq!(
                &Codec::<P>::decode(&mut codec, &bytes).unwrap(),
                value,
                "{name}: decode"
            );
            let [all, route, decoded] = reads::<P>(&bytes).map(Result::unwrap);
            assert_eq!(all, fields::digest_all(value), "{name}: access-all");
            assert_eq!(route, fields::digest_route(value), "{name}: access-partial");
            assert_eq!(decoded, all, "{name}");
            assert_ne!(all, route, "{name}: the routing subset folds fewer fields");
            // SAFETY: `bytes` were written by an RkyvCodec for a `P`.
            let (mut unchecked_all, mut unchecked_route, mut unchecked_codec) = unsafe {
                (
                    Read::<All, Unchecked>::unchecked(),
                    Read::<Route, Unchecked>::unchecked(),
                    RkyvCodec::unchecked(),
                )
            };
            assert_eq!(
                Access::<P>::access(&mut unchecked_all, &bytes).unwrap(),
                all,
                "{name}"
            );
            assert_eq!(
                Access::<P>::access(&mut unchecked_route, &bytes).unwrap(),
                route,
                "{name}"
            );
            assert_eq!(
                &Codec::<P>::decode(&mut unchecked_codec, &bytes).unwrap(),
                value,
                "{name}"
            );
        }
    }

    #[test]
    fn every_payload_round_trips_and_access_reads_what_the_owned_fold_reads() {
        visit_all(&mut RoundTrips);
    }

    struct Updates;

    impl<P: Native + SetInPlace> Visit<P> for Updates {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            let value = (payload.value)();
            let original = encode(value);
            let mut bytes = original.clone();
            let other = value.value_for_round(1);
            Update::<P>::update(&mut SealedUpdate, &mut bytes, other).unwrap();
            let decoded: P = RkyvCodec::checked().decode(&bytes).unwrap();
            assert_eq!(decoded, value.with_field(other), "{name}: the updated bytes");
            // Only the scalar's own bytes changed: the differing bytes lie within 8 of each other.
            let changed: Vec<usize> = (0..bytes.len()).filter(|&at| bytes[at] != original[at]).collect();
            assert!(!changed.is_empty(), "{name}: nothing was written");
            assert!(
                changed[changed.len() - 1] - changed[0] < 8,
                "{name}: bytes {changed:?} changed"
            );
            Update::<P>::update(&mut SealedUpdate, &mut bytes, value.field()).unwrap();
            assert_eq!(
                bytes, original,
                "{name}: writing the old value back restores the bytes"
            );
        }
    }

    #[test]
    fn update_changes_exactly_the_field_in_the_buffer() {
        visit_all(&mut Updates);
    }

    #[test]
    fn misaligned_bytes_are_copied_before_reading_and_refused_by_update() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let bytes = encode(order);
        let (mut storage, start) = misaligned(&bytes);
        let input = &storage[start..start + bytes.len()];
        assert!(!is_aligned(input));
        // The validator itself refuses the address, so reading it as it is cannot work.
        let Err(error) = ::rkyv::access::<ArchivedOrder, Error>(input) else {
            panic!("rkyv read a misaligned archive");
        };
        assert!(error.to_string().contains("unaligned"), "{error}");
        let [all, route, decoded] = reads::<Order>(input).map(Result::unwrap);
        assert_eq!(all, fields::digest_all(order));
        assert_eq!(route, fields::digest_route(order));
        assert_eq!(decoded, all);
        let input = &mut storage[start..start + bytes.len()];
        let error = Update::<Order>::update(&mut SealedUpdate, input, order.value_for_round(1)).unwrap_err();
        assert!(error.to_string().contains("not 16-byte aligned"), "{error}");
        assert_eq!(input, &bytes[..], "a refused update writes nothing");
    }

    #[test]
    fn broken_buffers_are_errors_not_crashes() {
        let event: &TelemetryEvent = crate::payload::value_of("telemetry").unwrap();
        let bytes = encode(event);
        let mut rng = crate::payload::SplitMix64::new(7);
        let noise: Vec<u8> = (0..512).map(|_| rng.next_u64() as u8).collect();
        let mut out_of_range = bytes.clone();
        let root = out_of_range.len() - 4;
        out_of_range[root..].copy_from_slice(&i32::MAX.to_le_bytes());
        let broken: [(&str, &[u8]); 7] = [
            ("empty", &[]),
            ("three bytes", &[1, 2, 3]),
            ("truncated to half", &bytes[..bytes.len() / 2]),
            ("last 16 bytes cut", &bytes[..bytes.len() - 16]),
            ("all ones", &[0xff; 64]),
            ("noise", &noise),
            ("an offset out of range", &out_of_range),
        ];
        for (what, broken) in broken {
            // Through an aligned copy, as the harness's `Vec`s are, and misaligned.
            let (storage, start) = misaligned(broken);
            for input in [broken.to_vec().as_slice(), &storage[start..start + broken.len()]] {
                for read in reads::<TelemetryEvent>(input) {
                    assert!(read.is_err(), "{what}: read {read:?}");
                }
                let mut copy = input.to_vec();
                let updated = Update::<TelemetryEvent>::update(&mut SealedUpdate, &mut copy, 1);
                assert!(updated.is_err(), "{what}: updated");
            }
        }
        let error = format!("{:#}", reads::<Order>(&bytes[..64])[0].as_ref().unwrap_err());
        assert!(error.contains("not a valid rkyv archive"), "{error}");
    }

    /// Every prefix of every small payload's bytes: an error or another value, never a panic
    /// (a panic fails the test) and never the payload itself.
    struct Prefixes;

    impl<P: Native + SetInPlace> Visit<P> for Prefixes {
        fn payload(&mut self, payload: &Payload<P>) {
            let value = (payload.value)();
            let bytes = encode(value);
            if bytes.len() > 4096 {
                return;
            }
            for end in 0..bytes.len() {
                let prefix = bytes[..end].to_vec();
                let decoded = Codec::<P>::decode(&mut RkyvCodec::checked(), &prefix);
                assert!(
                    decoded.as_ref().ok() != Some(value),
                    "{}: prefix of {end}",
                    payload.spec.name
                );
                let _ = reads::<P>(&prefix);
                let _ = Update::<P>::update(&mut SealedUpdate, &mut prefix.clone(), value.value_for_round(1));
            }
        }
    }

    #[test]
    fn no_prefix_of_a_payload_reads_as_the_payload() {
        visit_all(&mut Prefixes);
    }

    /// The fidelity case reads the bytes the arm reads: `rkyv::to_bytes` writes what the
    /// codec's reused vector and arena write.
    #[test]
    fn the_fidelity_case_reads_the_codec_s_bytes() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let plain = ::rkyv::to_bytes::<Error>(order).unwrap();
        assert_eq!(plain.as_slice(), encode(order));
        (FORMAT.fidelity[0].case)()();
    }

    #[test]
    fn the_unchecked_variant_gets_no_decoder_and_no_encoder() {
        let mut registry = Registry::default();
        (FORMAT.register)(&mut registry);
        registry.take_reads_in_place();
        let corpora = crate::payload::corpus_specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>();
        let payloads = crate::payload::specs().len() - corpora.len();
        let unsupported: Vec<&str> = registry
            .unsupported
            .iter()
            .map(|unsupported| unsupported.payload)
            .collect();
        assert_eq!(unsupported, corpora, "only the corpora are unsupported");
        // Checked: encode, decode, round-trip, access-all, access-partial, update; unchecked:
        // decode, access-all, access-partial.
        // The format's own arms: the registry adds compression arms to every codec.
        registry
            .arms
            .retain(|arm| !Operation::COMPRESSION.contains(&arm.id.operation));
        assert_eq!(registry.arms.len(), payloads * (6 + 3));
        let unchecked = |variant: &str| variant == UNCHECKED.variant;
        let trusted: Vec<Operation> = registry
            .arms
            .iter()
            .filter(|arm| unchecked(&arm.id.codec.variant))
            .map(|arm| arm.id.operation)
            .collect();
        assert_eq!(trusted.len(), payloads * 3);
        assert!(trusted.iter().all(|operation| matches!(
            operation,
            Operation::Decode | Operation::AccessAll | Operation::AccessPartial
        )));
        assert_eq!(registry.decoders.len(), payloads * 4);
        assert!(
            registry
                .decoders
                .iter()
                .all(|decoder| !unchecked(&decoder.id.codec.variant))
        );
        assert_eq!(registry.encoders.len(), payloads);
        assert!(
            registry
                .encoders
                .iter()
                .all(|encoder| !unchecked(&encoder.id.variant))
        );
    }
}

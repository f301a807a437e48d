//! Cap'n Proto: the `capnp` 0.27 runtime over Rust code that the capnp compiler (0.9.2) and its
//! capnpc-rust plugin (0.27.0) generated from `schemas/capnp/*.capnp` (committed under
//! `generated/`, refreshed with `scripts/capnp-regen.sh`; a unit test proves the committed files
//! are what the two tools write, another that their minor version is the locked crate's).
//!
//! Backend `capnp` (every payload), the standard serialization (`serialize`: a segment table,
//! then the segments as they are in memory): encode, decode and round-trip through the owned
//! model values, and the zero-copy arms through the generated readers over the received bytes:
//! `access-all` reads every field, `access-partial` only the fields a router needs (the fields
//! of [`crate::payload::fields`], folded into a [`Digest`] in the same order as FlatBuffers and
//! rkyv fold them, so the three line up), and `update` writes the payload's
//! [`UpdateField`] scalar into the received bytes.
//!
//! Backend `capnp`, variant `packed` (every payload): the same messages through
//! `serialize_packed` (Cap'n Proto's own zero-byte compression of each word), with its own size
//! row. Only encode, decode and round-trip: packed bytes are not the in-memory layout, so every
//! in-place read or write must unpack the whole message first (a copy): that is a decode, not
//! an access, and it is not registered as one (`unsupported_operation`).
//!
//! Checking: Cap'n Proto has no up-front verifier. Every read through a generated reader checks
//! bounds, pointer kinds, NUL-terminated text and (here, by `to_str`) UTF-8 of what it touches,
//! so `access-partial` pays only for the pointers it follows, where FlatBuffers' verifier walks
//! the whole buffer. Every reader uses the default `ReaderOptions`, the crate's guard for
//! untrusted input: a traversal limit of 8 Mi words (64 MiB) per message, which also charges a
//! list of zero-sized elements one word per element (without it a 32-byte message could make a
//! decoder allocate a list of 2^29 records), and a nesting limit of 64 (no schema here nests
//! deeper than 4). A message must fill the buffer exactly (trailing bytes are refused) and be
//! 8-byte aligned (the crate's default, without its `unaligned` feature: an unaligned buffer is
//! refused with an error; the harness's heap buffers are aligned).
//!
//! Update: the crate's readers are read-only, and its builders neither open over received bytes
//! nor check bounds (they trust the memory they built), so no builder touches hostile bytes. The
//! update is a checked read down to the struct that holds the field, whose data section the
//! crate exposes in place (`capnp::raw::get_struct_data_section`); the scalar is then written
//! at the field's offset in that section, which the generated schema gives (introspection, read
//! once per updater), little-endian as Cap'n Proto stores it. A struct written by an older
//! schema without that field is refused. What is measured is that: read to the struct, write
//! 8 bytes; no re-encode.
//!
//! Schema choices (what Cap'n Proto forces): field names are camelCase (the compiler rejects
//! underscores), the generated Rust API snake_cases them back. Every pointer field (text, list,
//! struct) is optional on the wire and reads as its default (empty) when unset: Cap'n Proto has
//! no `required`, so a message lacking a field decodes, with that field empty. There is no map
//! type: a map is a list of `{key, value}` structs sorted by key (the model's `BTreeMap` order),
//! as the FlatBuffers schemas have it. Every scalar has its fixed slot in the struct's data
//! section, zero or not (no omission of defaults as in FlatBuffers or protobuf; packing is what
//! removes zero bytes), so -0.0 keeps its sign. A list of structs is always inline (one tag word,
//! then fixed-size elements), which is what FlatBuffers needs its `struct-samples` variant for.
//! An enum value unknown to this schema reads, but fails decode.
//!
//! Buffer policy: each codec owns a scratch first segment (a `Vec` of words) for
//! `message::ScratchSpaceHeapAllocator`, grown to the largest message it built, so a warm encode
//! builds into that memory without allocating; the allocator cannot outlive one encode (it
//! borrows the scratch), so each encode zeroes the scratch on construction, as the crate does
//! for a new `ScratchSpaceHeapAllocator`. A message that does not fit is built again, once, into
//! a scratch grown to its size, so every message is one segment and the bytes never depend on
//! what the codec encoded before. `serialize::write_message` (or `serialize_packed`) then copies
//! the segment into the harness's reused output buffer. Decode reads the borrowed bytes in place
//! (`read_message_from_flat_slice_no_alloc`) into owned model values; packed decode unpacks into
//! a fresh owned segment (`serialize_packed::read_message`).
//!
//! Typed data (`--typed`, [`typed`] states the rules): the generated crate's
//! `capnp/data_<n>.capnp`, one struct per generated Rust struct (a map a sorted list of entry
//! structs, an `Option` a null pointer or, for a scalar, a `none`/`value` union), compiled by
//! capnpc in its build script. The generated structs implement [`StructModel`], the root
//! [`Routed`] and, where the data has a scalar to change, [`Native`]: the same arms as the
//! built-in payloads, under the same buffer policy and limits.

#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    unused_imports,
    unused_parens,
    non_camel_case_types,
    non_snake_case
)]
#[rustfmt::skip]
pub mod generated {
    pub mod checkout_capnp;
    pub mod collections_capnp;
    pub mod common_capnp;
    pub mod order_capnp;
    pub mod readings_capnp;
    pub mod telemetry_capnp;
}

use std::collections::BTreeMap;
use std::hint::black_box;
use std::marker::PhantomData;

use ::capnp::introspect::TypeVariant;
use ::capnp::message::{self, ReaderOptions, ScratchSpaceHeapAllocator};
use ::capnp::schema::StructSchema;
use ::capnp::schema_capnp::field;
use ::capnp::serialize::{self, NoAllocSliceSegments};
use ::capnp::traits::{FromPointerBuilder, FromPointerReader, OwnedStruct};
use ::capnp::{Word, serialize_packed, struct_list, text, text_list};
use anyhow::{Context, Result, bail, ensure};

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedSupport,
};
use crate::arm::{Access, Backend, Codec, Operation, Update};
use crate::payload::fields::{self, Digest, Fields, UpdateField, model_fields};
use crate::payload::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Model, Order,
    OrderStatus, Payload, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment,
    TelemetryEvent, Visit, visit_all,
};
use generated::checkout_capnp as checkout;
use generated::collections_capnp as collections;
use generated::common_capnp as common;
use generated::order_capnp as order;
use generated::readings_capnp as readings;
use generated::telemetry_capnp as telemetry;

pub static FORMAT: Format = Format {
    name: "capnp",
    about: "Cap'n Proto: capnpc-generated readers and builders, zero-copy access and in-place update; unpacked and packed",
    colour: [0xAA, 0x22, 0x22],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "ordinals (`@n`): add fields with new ordinals, renames are free (names are not on the wire), never remove or renumber",
        languages: &["C++", "Rust", "Go", "Java", "JavaScript", "Python", "C#"],
        languages_source: "https://capnproto.org/otherlang.html",
    },
    backends: &[
        BackendDoc {
            backend: "capnp",
            variant: "",
            crates: &["capnp"],
            crate_note: "code generated by capnp 0.9.2 with capnpc-rust 0.27.0 and committed; default `ReaderOptions` (traversal limit 8 Mi words, nesting 64)",
            schema: "`schemas/capnp/*.capnp`",
            buffer_policy: "a scratch first segment in the codec (`ScratchSpaceHeapAllocator`), one segment per message, `write_message` into a reused `Vec`; decode, access and update read the borrowed bytes in place (`read_message_from_flat_slice_no_alloc`)",
        },
        BackendDoc {
            backend: "capnp",
            variant: "packed",
            crates: &["capnp"],
            crate_note: "",
            schema: "`schemas/capnp/*.capnp`",
            buffer_policy: "the same builder, `serialize_packed::write_message` into a reused `Vec`; decode unpacks into a fresh owned segment (`serialize_packed::read_message`); no in-place access or update",
        },
    ],
    fidelity: &[Fidelity {
        backend: "capnp",
        variant: "",
        payload: "order",
        operation: Operation::AccessPartial,
        case: capnp_order_access_partial,
    }],
    register: |registry| {
        visit_all(&mut Capnp(registry));
        registry.unsupported_borrowed(super::READS_IN_PLACE);
        registry.unsupported_corpora("no .capnp schema written for the corpus types");
    },
    typed: TypedSupport::Derive(&TypedDerive {
        crates: &["capnp"],
        refuses: typed::refuses,
        items: typed::items,
        in_place_update: true,
        borrowed: TypedBorrowed::Not(super::READS_IN_PLACE),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "needs generated code per schema version; not wired into `evolve` yet",
    ),
};

const BACKEND: Backend = Backend::new("capnp");
const PACKED: Backend = BACKEND.variant("packed");
/// Why the packed variant has no in-place arms (see the module doc).
const PACKED_NOT_IN_PLACE: &str = "packed bytes are not the in-memory layout: every in-place read or write must unpack the whole message first, which is a decode";

mod typed;

/// The typed arms of a generated payload type (`--typed`, [`typed`]): encode, decode and the two
/// accesses unpacked, encode and decode packed, as for the built-in payloads.
pub fn register_typed<P: Model + Routed>(registry: &mut Registry, payload: &Payload<P>) {
    registry.codec(payload, BACKEND, Unpacked::new);
    registry.access(payload, BACKEND, Operation::AccessAll, Unpacked::new, || ReadAll);
    registry.access(payload, BACKEND, Operation::AccessPartial, Unpacked::new, || {
        ReadRoute
    });
    registry.codec(payload, PACKED, Packed::new);
    for operation in [Operation::AccessAll, Operation::AccessPartial, Operation::Update] {
        registry.unsupported_operation(payload.spec, PACKED.name, operation, PACKED_NOT_IN_PLACE);
    }
}

/// The update arm of a generated payload type whose data has a scalar to change
/// ([`crate::payload::data::update_target`]).
pub fn register_typed_update<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    registry.update(payload, BACKEND, Unpacked::new, InPlace::<P>::new);
}

struct Capnp<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Capnp<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        register_typed(self.0, payload);
        register_typed_update(self.0, payload);
    }
}

/// The generated reader of a model type's struct, borrowing the message.
pub type Reader<'a, T> = <<T as StructModel>::Owned as OwnedStruct>::Reader<'a>;
/// The generated builder of a model type's struct, borrowing the message being built.
pub type Builder<'a, T> = <<T as StructModel>::Owned as OwnedStruct>::Builder<'a>;
/// The generated reader of the struct that holds a payload's update field.
pub type UpdateReader<'a, T> = <<T as Native>::UpdateStruct as OwnedStruct>::Reader<'a>;

/// A model type stored as a struct of the generated code: how to build it, read it back into an
/// owned value, and fold every field in place.
pub trait StructModel: Sized {
    /// The generated struct (`x::Owned`).
    type Owned: for<'a> OwnedStruct<Reader<'a>: FromPointerReader<'a> + Copy, Builder<'a>: FromPointerBuilder<'a>>;

    fn build(&self, builder: Builder<'_, Self>) -> Result<()>;
    fn read(reader: Reader<'_, Self>) -> Result<Self>;
    /// Reads every field in place, in schema order, as [`Fields::fold_all`] folds the owned
    /// value.
    fn fold(reader: Reader<'_, Self>, digest: &mut Digest) -> Result<()>;
}

/// What the access arms need of a payload type: its struct and its routing fields read in place.
/// A generated root type of `--typed` implements it ([`typed`]).
pub trait Routed: StructModel + Fields + 'static {
    /// Reads only the routing fields in place, as [`Fields::fold_route`] folds the owned value.
    fn route(reader: Reader<'_, Self>, digest: &mut Digest) -> Result<()>;
}

/// What the update arm needs of a payload type: where its [`UpdateField`] lives.
pub trait Native: Routed + UpdateField<Scalar: WireScalar> {
    /// The generated struct that holds the update field.
    type UpdateStruct: OwnedStruct;
    /// The update field's name in the schema.
    const UPDATE_FIELD: &'static str;

    /// Follows the (checked) pointers from the root to the struct that holds the update field.
    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>>;
}

/// An update scalar as Cap'n Proto stores it: 8 bytes, little-endian, in a data section.
pub trait WireScalar: Copy {
    fn to_wire(self) -> [u8; 8];
    /// Whether a schema field of this type holds it.
    fn is_type(field: TypeVariant) -> bool;
}

impl WireScalar for i64 {
    fn to_wire(self) -> [u8; 8] {
        self.to_le_bytes()
    }

    fn is_type(field: TypeVariant) -> bool {
        matches!(field, TypeVariant::Int64)
    }
}

impl WireScalar for f64 {
    fn to_wire(self) -> [u8; 8] {
        self.to_le_bytes()
    }

    fn is_type(field: TypeVariant) -> bool {
        matches!(field, TypeVariant::Float64)
    }
}

/// A list length as Cap'n Proto counts it (public for the generated code of `--typed`, as are
/// [`text`] and [`string`]).
pub fn length(len: usize) -> Result<u32> {
    u32::try_from(len).context("a list longer than Cap'n Proto can hold")
}

/// A text read in place, checked to be UTF-8.
pub fn text(reader: ::capnp::Result<text::Reader<'_>>) -> Result<&str> {
    Ok(reader?.to_str()?)
}

/// A text read into an owned `String`.
pub fn string(reader: ::capnp::Result<text::Reader<'_>>) -> Result<String> {
    Ok(text(reader)?.to_string())
}

fn build_strings(mut list: text_list::Builder<'_>, values: &[String]) {
    for (index, value) in (0..).zip(values) {
        list.set(index, value.as_str());
    }
}

fn read_strings(list: ::capnp::Result<text_list::Reader<'_>>) -> Result<Vec<String>> {
    list?.iter().map(string).collect()
}

/// [`StructModel::fold`] read in place, from [`model_fields!`]'s list: the owned fold's fields
/// through the generated `get_<field>` accessors (spelled by `paste`, as macro_rules cannot join
/// identifiers).
macro_rules! struct_fold {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold(reader: Reader<'_, Self>, digest: &mut Digest) -> Result<()> {
            $(paste::paste! { struct_fold!(@ reader digest $kind [<get_ $field>] $($type)?); })*
            Ok(())
        }
    };
    (@ $r:ident $d:ident int $get:ident) => { $d.int($r.$get()) };
    (@ $r:ident $d:ident float $get:ident) => { $d.float($r.$get()) };
    (@ $r:ident $d:ident flag $get:ident) => { $d.flag($r.$get()) };
    (@ $r:ident $d:ident text $get:ident) => { $d.text(text($r.$get())?) };
    (@ $r:ident $d:ident texts $get:ident) => { fold_strings($r.$get(), $d)? };
    (@ $r:ident $d:ident pairs $get:ident) => { fold_attributes($r.$get(), $d)? };
    (@ $r:ident $d:ident record $get:ident $type:ident) => { $type::fold($r.$get()?, $d)? };
    (@ $r:ident $d:ident records $get:ident $type:ident) => { fold_records::<$type>($r.$get(), $d)? };
    (@ $r:ident $d:ident status $get:ident) => {
        $d.int($r.$get().map_or(-1, |status| status_from_wire(status) as i64))
    };
    (@ $r:ident $d:ident keyed $get:ident $type:ident) => {{
        let entries = $r.$get()?;
        $d.count(entries.len() as usize);
        for entry in entries {
            $d.text(text(entry.get_key())?);
            $type::fold(entry.get_value()?, $d)?;
        }
    }};
}

/// Folds a list of strings in place as [`Digest::texts`] folds the owned list.
fn fold_strings(list: ::capnp::Result<text_list::Reader<'_>>, digest: &mut Digest) -> Result<()> {
    let list = list?;
    digest.count(list.len() as usize);
    for value in list {
        digest.text(text(value)?);
    }
    Ok(())
}

fn build_records<T: StructModel>(mut list: struct_list::Builder<'_, T::Owned>, records: &[T]) -> Result<()> {
    for (index, record) in (0..).zip(records) {
        record.build(list.reborrow().get(index))?;
    }
    Ok(())
}

fn read_records<T: StructModel>(list: ::capnp::Result<struct_list::Reader<'_, T::Owned>>) -> Result<Vec<T>> {
    list?.iter().map(T::read).collect()
}

/// Folds a list of structs in place as [`Fields::fold_all`] folds a list of records: the count,
/// then each record.
fn fold_records<T: StructModel>(
    list: ::capnp::Result<struct_list::Reader<'_, T::Owned>>,
    digest: &mut Digest,
) -> Result<()> {
    let list = list?;
    digest.count(list.len() as usize);
    list.iter().try_for_each(|record| T::fold(record, digest))
}

fn build_attributes(
    mut list: struct_list::Builder<'_, common::attribute::Owned>,
    attributes: &BTreeMap<String, String>,
) {
    for (index, (key, value)) in (0..).zip(attributes) {
        let mut entry = list.reborrow().get(index);
        entry.set_key(key.as_str());
        entry.set_value(value.as_str());
    }
}

type Attributes<'a> = ::capnp::Result<struct_list::Reader<'a, common::attribute::Owned>>;

fn read_attributes(list: Attributes<'_>) -> Result<BTreeMap<String, String>> {
    list?
        .iter()
        .map(|entry| Ok((string(entry.get_key())?, string(entry.get_value())?)))
        .collect()
}

/// Folds the attribute entries in place as [`Digest::pairs`] folds the owned map.
fn fold_attributes(list: Attributes<'_>, digest: &mut Digest) -> Result<()> {
    let list = list?;
    digest.count(list.len() as usize);
    for entry in list {
        digest.text(text(entry.get_key())?);
        digest.text(text(entry.get_value())?);
    }
    Ok(())
}

/// The message in `bytes`, read in place with the default limits; it must fill `bytes`.
fn flat_message(bytes: &[u8]) -> Result<message::Reader<NoAllocSliceSegments<'_>>> {
    let mut rest = bytes;
    let message = serialize::read_message_from_flat_slice_no_alloc(&mut rest, ReaderOptions::new())
        .context("not a Cap'n Proto message")?;
    ensure!(
        rest.is_empty(),
        "{} bytes after the Cap'n Proto message",
        rest.len()
    );
    Ok(message)
}

fn root<'a, P: StructModel, S: message::ReaderSegments>(
    message: &'a message::Reader<S>,
) -> Result<Reader<'a, P>> {
    message
        .get_root::<Reader<'a, P>>()
        .context("the Cap'n Proto root is not a struct of this schema")
}

/// A scratch first segment that every message of a codec is built into (see the module doc).
#[derive(Default)]
struct Scratch {
    words: Vec<Word>,
}

impl Scratch {
    /// Builds `value` as a one-segment message and hands it to `write`.
    fn encode<T: StructModel>(
        &mut self,
        value: &T,
        write: impl FnOnce(&message::Builder<ScratchSpaceHeapAllocator<'_>>) -> ::capnp::Result<()>,
    ) -> Result<()> {
        let needed = {
            let mut message = self.message();
            value.build(message.init_root())?;
            let segments = message.get_segments_for_output();
            let single = match &*segments {
                [segment] => Some(segment.len() / size_of::<Word>()),
                _ => None,
            };
            drop(segments);
            if let Some(words) = single {
                write(&message)?;
                drop(message);
                // The first message (or a bigger one) came from the heap: keep room for the next.
                self.grow(words);
                return Ok(());
            }
            message.size_in_words()
        };
        self.grow(needed);
        let capacity = self.words.len();
        let mut message = self.message();
        value.build(message.init_root())?;
        ensure!(
            message.get_segments_for_output().len() == 1,
            "a message of {needed} words did not fit a scratch segment of {capacity} words"
        );
        Ok(write(&message)?)
    }

    fn message(&mut self) -> message::Builder<ScratchSpaceHeapAllocator<'_>> {
        message::Builder::new(ScratchSpaceHeapAllocator::new(Word::words_to_bytes_mut(
            &mut self.words,
        )))
    }

    fn grow(&mut self, words: usize) {
        if words > self.words.len() {
            self.words = Word::allocate_zeroed_vec(words);
        }
    }
}

/// The standard serialization: encode and decode a payload through its struct.
pub struct Unpacked {
    scratch: Scratch,
}

impl Unpacked {
    fn new() -> Self {
        Unpacked {
            scratch: Scratch::default(),
        }
    }
}

impl<P: StructModel> Codec<P> for Unpacked {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.scratch
            .encode(value, |message| serialize::write_message(&mut *out, message))?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        P::read(root::<P, _>(&flat_message(bytes)?)?)
    }
}

/// The packed serialization.
pub struct Packed {
    scratch: Scratch,
}

impl Packed {
    fn new() -> Self {
        Packed {
            scratch: Scratch::default(),
        }
    }
}

impl<P: StructModel> Codec<P> for Packed {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.scratch.encode(value, |message| {
            serialize_packed::write_message(&mut *out, message)
        })?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let mut rest = bytes;
        let message = serialize_packed::read_message(&mut rest, ReaderOptions::new())
            .context("not a packed Cap'n Proto message")?;
        ensure!(
            rest.is_empty(),
            "{} bytes after the packed Cap'n Proto message",
            rest.len()
        );
        P::read(root::<P, _>(&message)?)
    }
}

/// `access-all`: read every field in place.
pub struct ReadAll;

impl<P: StructModel + Fields> Access<P> for ReadAll {
    fn expected(value: &P) -> u64 {
        fields::digest_all(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        P::fold(root::<P, _>(&flat_message(bytes)?)?, &mut digest)?;
        Ok(digest.finish())
    }
}

/// `access-partial`: read only the routing fields in place.
pub struct ReadRoute;

impl<P: Routed> Access<P> for ReadRoute {
    fn expected(value: &P) -> u64 {
        fields::digest_route(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        P::route(root::<P, _>(&flat_message(bytes)?)?, &mut digest)?;
        Ok(digest.finish())
    }
}

/// `update`: a checked read to the struct that holds the payload's [`UpdateField`], then its
/// 8 bytes written in place (see the module doc).
pub struct InPlace<P> {
    /// The field's byte offset in its struct's data section, from the generated schema.
    offset: usize,
    payload: PhantomData<fn() -> P>,
}

impl<P: Native> InPlace<P> {
    fn new() -> Self {
        let offset = data_offset::<P::UpdateStruct, P::Scalar>(P::UPDATE_FIELD)
            .unwrap_or_else(|error| panic!("the update field of the schema: {error:#}"));
        InPlace {
            offset,
            payload: PhantomData,
        }
    }
}

/// The byte offset of the scalar field `name` in the data section of struct `S`, from the
/// schema compiled into the generated code.
fn data_offset<S: OwnedStruct, V: WireScalar>(name: &str) -> Result<usize> {
    let TypeVariant::Struct(raw) = S::introspect().which() else {
        bail!("not a struct");
    };
    let field = StructSchema::new(raw)
        .find_field_by_name(name)?
        .with_context(|| format!("no field {name}"))?;
    ensure!(
        V::is_type(field.get_type().which()),
        "{name} is not of the update's type"
    );
    let field::Slot(slot) = field.get_proto().which()? else {
        bail!("{name} is a group, not a slot");
    };
    // A field with a default is stored XOR that default; these schemas declare none.
    ensure!(!slot.get_had_explicit_default(), "{name} has a default value");
    Ok(slot.get_offset() as usize * size_of::<[u8; 8]>())
}

impl<P: Native> Update<P> for InPlace<P> {
    fn update(&mut self, bytes: &mut [u8], value: P::Scalar) -> Result<()> {
        let start = {
            let message = flat_message(bytes)?;
            let data = ::capnp::raw::get_struct_data_section(P::update_struct(root::<P, _>(&message)?)?);
            ensure!(
                data.len() >= self.offset + 8,
                "the struct that holds {} has no such field (an older schema wrote it)",
                P::UPDATE_FIELD
            );
            offset_in(bytes, data)? + self.offset
        };
        bytes
            .get_mut(start..start + 8)
            .context("the data section is not in the received bytes")?
            .copy_from_slice(&value.to_wire());
        Ok(())
    }
}

/// Where `part` (a data section a reader returned) starts in `bytes`: the flat reader borrows
/// the bytes without copying, so what it reads lies inside them.
fn offset_in(bytes: &[u8], part: &[u8]) -> Result<usize> {
    (part.as_ptr() as usize)
        .checked_sub(bytes.as_ptr() as usize)
        .filter(|start| start + part.len() <= bytes.len())
        .context("the data section is not in the received bytes")
}

/// The first element of a list, or an error naming the list.
fn first<'a, T: StructModel>(
    list: ::capnp::Result<struct_list::Reader<'a, T::Owned>>,
    what: &str,
) -> Result<Reader<'a, T>> {
    list?.try_get(0).with_context(|| format!("no {what}"))
}

// --- readings -------------------------------------------------------------------------------

impl StructModel for Reading {
    type Owned = readings::reading::Owned;

    fn build(&self, mut builder: readings::reading::Builder<'_>) -> Result<()> {
        builder.set_valid(self.valid);
        builder.set_value(self.value);
        build_strings(builder.init_labels(length(self.labels.len())?), &self.labels);
        Ok(())
    }

    fn read(reader: readings::reading::Reader<'_>) -> Result<Self> {
        Ok(Reading {
            valid: reader.get_valid(),
            value: reader.get_value(),
            labels: read_strings(reader.get_labels())?,
        })
    }

    model_fields!(Reading, struct_fold);
}

impl StructModel for Readings {
    type Owned = readings::readings::Owned;

    fn build(&self, builder: readings::readings::Builder<'_>) -> Result<()> {
        build_records(
            builder.init_readings(length(self.readings.len())?),
            &self.readings,
        )
    }

    fn read(reader: readings::readings::Reader<'_>) -> Result<Self> {
        Ok(Readings {
            readings: read_records(reader.get_readings())?,
        })
    }

    model_fields!(Readings, struct_fold);
}

impl Routed for Readings {
    fn route(reader: readings::readings::Reader<'_>, digest: &mut Digest) -> Result<()> {
        let readings = reader.get_readings()?;
        digest.count(readings.len() as usize);
        if let Some(first) = readings.try_get(0) {
            digest.flag(first.get_valid());
        }
        Ok(())
    }
}

impl Native for Readings {
    type UpdateStruct = readings::reading::Owned;
    const UPDATE_FIELD: &'static str = "value";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        first::<Reading>(reader.get_readings(), "reading")
    }
}

// --- order ----------------------------------------------------------------------------------

impl StructModel for Order {
    type Owned = order::order::Owned;

    fn build(&self, mut builder: order::order::Builder<'_>) -> Result<()> {
        builder.set_order_id(self.order_id);
        builder.set_customer_id(self.customer_id);
        builder.set_created_at_ms(self.created_at_ms);
        builder.set_quantity(self.quantity);
        builder.set_unit_price(self.unit_price);
        builder.set_discount(self.discount);
        builder.set_tax_rate(self.tax_rate);
        builder.set_total(self.total);
        builder.set_currency(self.currency.as_str());
        builder.set_sku(self.sku.as_str());
        builder.set_customer_email(self.customer_email.as_str());
        builder.set_shipping_country(self.shipping_country.as_str());
        builder.set_status(self.status.as_str());
        builder.set_is_gift(self.is_gift);
        builder.set_is_priority(self.is_priority);
        Ok(())
    }

    fn read(reader: order::order::Reader<'_>) -> Result<Self> {
        Ok(Order {
            order_id: reader.get_order_id(),
            customer_id: reader.get_customer_id(),
            created_at_ms: reader.get_created_at_ms(),
            quantity: reader.get_quantity(),
            unit_price: reader.get_unit_price(),
            discount: reader.get_discount(),
            tax_rate: reader.get_tax_rate(),
            total: reader.get_total(),
            currency: string(reader.get_currency())?,
            sku: string(reader.get_sku())?,
            customer_email: string(reader.get_customer_email())?,
            shipping_country: string(reader.get_shipping_country())?,
            status: string(reader.get_status())?,
            is_gift: reader.get_is_gift(),
            is_priority: reader.get_is_priority(),
        })
    }

    model_fields!(Order, struct_fold);
}

impl Routed for Order {
    fn route(reader: order::order::Reader<'_>, digest: &mut Digest) -> Result<()> {
        digest.int(reader.get_order_id());
        digest.int(reader.get_customer_id());
        Ok(())
    }
}

impl Native for Order {
    type UpdateStruct = order::order::Owned;
    const UPDATE_FIELD: &'static str = "quantity";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        Ok(reader)
    }
}

// --- telemetry ------------------------------------------------------------------------------

impl StructModel for ServiceInfo {
    type Owned = telemetry::service_info::Owned;

    fn build(&self, mut builder: telemetry::service_info::Builder<'_>) -> Result<()> {
        builder.set_name(self.name.as_str());
        builder.set_version(self.version.as_str());
        builder.set_instance_id(self.instance_id.as_str());
        builder.set_region(self.region.as_str());
        Ok(())
    }

    fn read(reader: telemetry::service_info::Reader<'_>) -> Result<Self> {
        Ok(ServiceInfo {
            name: string(reader.get_name())?,
            version: string(reader.get_version())?,
            instance_id: string(reader.get_instance_id())?,
            region: string(reader.get_region())?,
        })
    }

    model_fields!(ServiceInfo, struct_fold);
}

impl StructModel for MetricSample {
    type Owned = telemetry::metric_sample::Owned;

    fn build(&self, mut builder: telemetry::metric_sample::Builder<'_>) -> Result<()> {
        builder.set_timestamp_ms(self.timestamp_ms);
        builder.set_value(self.value);
        builder.set_count(self.count);
        Ok(())
    }

    fn read(reader: telemetry::metric_sample::Reader<'_>) -> Result<Self> {
        Ok(MetricSample {
            timestamp_ms: reader.get_timestamp_ms(),
            value: reader.get_value(),
            count: reader.get_count(),
        })
    }

    fn fold(reader: telemetry::metric_sample::Reader<'_>, digest: &mut Digest) -> Result<()> {
        // A sample is three scalars: read into a (heap-free) model sample, folded as the owned one.
        Self::read(reader)?.fold_all(digest);
        Ok(())
    }
}

impl StructModel for TelemetryEvent {
    type Owned = telemetry::telemetry_event::Owned;

    fn build(&self, mut builder: telemetry::telemetry_event::Builder<'_>) -> Result<()> {
        builder.set_event_id(self.event_id.as_str());
        builder.set_timestamp_ms(self.timestamp_ms);
        self.service.build(builder.reborrow().init_service())?;
        builder.set_metric(self.metric.as_str());
        builder.set_unit(self.unit.as_str());
        build_strings(builder.reborrow().init_tags(length(self.tags.len())?), &self.tags);
        build_attributes(
            builder.reborrow().init_attributes(length(self.attributes.len())?),
            &self.attributes,
        );
        build_records(builder.init_samples(length(self.samples.len())?), &self.samples)
    }

    fn read(reader: telemetry::telemetry_event::Reader<'_>) -> Result<Self> {
        Ok(TelemetryEvent {
            event_id: string(reader.get_event_id())?,
            timestamp_ms: reader.get_timestamp_ms(),
            service: ServiceInfo::read(reader.get_service()?)?,
            metric: string(reader.get_metric())?,
            unit: string(reader.get_unit())?,
            tags: read_strings(reader.get_tags())?,
            attributes: read_attributes(reader.get_attributes())?,
            samples: read_records(reader.get_samples())?,
        })
    }

    model_fields!(TelemetryEvent, struct_fold);
}

impl Routed for TelemetryEvent {
    fn route(reader: telemetry::telemetry_event::Reader<'_>, digest: &mut Digest) -> Result<()> {
        let service = reader.get_service()?;
        digest.text(text(service.get_name())?);
        digest.text(text(service.get_instance_id())?);
        digest.text(text(service.get_region())?);
        digest.text(text(reader.get_metric())?);
        let samples = reader.get_samples()?;
        if let Some(latest) = samples
            .len()
            .checked_sub(1)
            .and_then(|last| samples.try_get(last))
        {
            MetricSample::fold(latest, digest)?;
        }
        Ok(())
    }
}

impl Native for TelemetryEvent {
    type UpdateStruct = telemetry::telemetry_event::Owned;
    const UPDATE_FIELD: &'static str = "timestampMs";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        Ok(reader)
    }
}

// --- checkout -------------------------------------------------------------------------------

fn status_to_wire(status: OrderStatus) -> checkout::OrderStatus {
    match status {
        OrderStatus::Pending => checkout::OrderStatus::Pending,
        OrderStatus::Confirmed => checkout::OrderStatus::Confirmed,
        OrderStatus::Shipped => checkout::OrderStatus::Shipped,
        OrderStatus::Cancelled => checkout::OrderStatus::Cancelled,
    }
}

fn status_from_wire(status: checkout::OrderStatus) -> OrderStatus {
    match status {
        checkout::OrderStatus::Pending => OrderStatus::Pending,
        checkout::OrderStatus::Confirmed => OrderStatus::Confirmed,
        checkout::OrderStatus::Shipped => OrderStatus::Shipped,
        checkout::OrderStatus::Cancelled => OrderStatus::Cancelled,
    }
}

impl StructModel for RequestMeta {
    type Owned = checkout::request_meta::Owned;

    fn build(&self, mut builder: checkout::request_meta::Builder<'_>) -> Result<()> {
        builder.set_request_id(self.request_id.as_str());
        builder.set_trace_id(self.trace_id.as_str());
        builder.set_client(self.client.as_str());
        builder.set_timestamp_ms(self.timestamp_ms);
        Ok(())
    }

    fn read(reader: checkout::request_meta::Reader<'_>) -> Result<Self> {
        Ok(RequestMeta {
            request_id: string(reader.get_request_id())?,
            trace_id: string(reader.get_trace_id())?,
            client: string(reader.get_client())?,
            timestamp_ms: reader.get_timestamp_ms(),
        })
    }

    model_fields!(RequestMeta, struct_fold);
}

impl StructModel for LineItem {
    type Owned = checkout::line_item::Owned;

    fn build(&self, mut builder: checkout::line_item::Builder<'_>) -> Result<()> {
        builder.set_product_id(self.product_id.as_str());
        builder.set_name(self.name.as_str());
        builder.set_quantity(self.quantity);
        builder.set_unit_price_cents(self.unit_price_cents);
        Ok(())
    }

    fn read(reader: checkout::line_item::Reader<'_>) -> Result<Self> {
        Ok(LineItem {
            product_id: string(reader.get_product_id())?,
            name: string(reader.get_name())?,
            quantity: reader.get_quantity(),
            unit_price_cents: reader.get_unit_price_cents(),
        })
    }

    model_fields!(LineItem, struct_fold);
}

impl StructModel for Address {
    type Owned = checkout::address::Owned;

    fn build(&self, mut builder: checkout::address::Builder<'_>) -> Result<()> {
        builder.set_street(self.street.as_str());
        builder.set_city(self.city.as_str());
        builder.set_region(self.region.as_str());
        builder.set_postal_code(self.postal_code.as_str());
        builder.set_country(self.country.as_str());
        Ok(())
    }

    fn read(reader: checkout::address::Reader<'_>) -> Result<Self> {
        Ok(Address {
            street: string(reader.get_street())?,
            city: string(reader.get_city())?,
            region: string(reader.get_region())?,
            postal_code: string(reader.get_postal_code())?,
            country: string(reader.get_country())?,
        })
    }

    model_fields!(Address, struct_fold);
}

impl StructModel for PaymentMethod {
    type Owned = checkout::payment_method::Owned;

    fn build(&self, mut builder: checkout::payment_method::Builder<'_>) -> Result<()> {
        builder.set_kind(self.kind.as_str());
        builder.set_token(self.token.as_str());
        builder.set_card_last4(self.card_last4.as_str());
        builder.set_expiry_month(self.expiry_month);
        builder.set_expiry_year(self.expiry_year);
        Ok(())
    }

    fn read(reader: checkout::payment_method::Reader<'_>) -> Result<Self> {
        Ok(PaymentMethod {
            kind: string(reader.get_kind())?,
            token: string(reader.get_token())?,
            card_last4: string(reader.get_card_last4())?,
            expiry_month: reader.get_expiry_month(),
            expiry_year: reader.get_expiry_year(),
        })
    }

    model_fields!(PaymentMethod, struct_fold);
}

impl StructModel for CheckoutRequest {
    type Owned = checkout::checkout_request::Owned;

    fn build(&self, mut builder: checkout::checkout_request::Builder<'_>) -> Result<()> {
        self.meta.build(builder.reborrow().init_meta())?;
        builder.set_customer_id(self.customer_id.as_str());
        builder.set_session_id(self.session_id.as_str());
        builder.set_currency(self.currency.as_str());
        build_records(
            builder.reborrow().init_items(length(self.items.len())?),
            &self.items,
        )?;
        self.shipping_address
            .build(builder.reborrow().init_shipping_address())?;
        self.payment.build(builder.reborrow().init_payment())?;
        build_strings(
            builder
                .reborrow()
                .init_coupon_codes(length(self.coupon_codes.len())?),
            &self.coupon_codes,
        );
        build_attributes(
            builder.init_attributes(length(self.attributes.len())?),
            &self.attributes,
        );
        Ok(())
    }

    fn read(reader: checkout::checkout_request::Reader<'_>) -> Result<Self> {
        Ok(CheckoutRequest {
            meta: RequestMeta::read(reader.get_meta()?)?,
            customer_id: string(reader.get_customer_id())?,
            session_id: string(reader.get_session_id())?,
            currency: string(reader.get_currency())?,
            items: read_records(reader.get_items())?,
            shipping_address: Address::read(reader.get_shipping_address()?)?,
            payment: PaymentMethod::read(reader.get_payment()?)?,
            coupon_codes: read_strings(reader.get_coupon_codes())?,
            attributes: read_attributes(reader.get_attributes())?,
        })
    }

    model_fields!(CheckoutRequest, struct_fold);
}

impl Routed for CheckoutRequest {
    fn route(reader: checkout::checkout_request::Reader<'_>, digest: &mut Digest) -> Result<()> {
        digest.text(text(reader.get_meta()?.get_request_id())?);
        digest.text(text(reader.get_customer_id())?);
        Ok(())
    }
}

impl Native for CheckoutRequest {
    type UpdateStruct = checkout::request_meta::Owned;
    const UPDATE_FIELD: &'static str = "timestampMs";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        Ok(reader.get_meta()?)
    }
}

impl StructModel for ResponseMeta {
    type Owned = checkout::response_meta::Owned;

    fn build(&self, mut builder: checkout::response_meta::Builder<'_>) -> Result<()> {
        builder.set_request_id(self.request_id.as_str());
        builder.set_trace_id(self.trace_id.as_str());
        builder.set_server(self.server.as_str());
        builder.set_timestamp_ms(self.timestamp_ms);
        Ok(())
    }

    fn read(reader: checkout::response_meta::Reader<'_>) -> Result<Self> {
        Ok(ResponseMeta {
            request_id: string(reader.get_request_id())?,
            trace_id: string(reader.get_trace_id())?,
            server: string(reader.get_server())?,
            timestamp_ms: reader.get_timestamp_ms(),
        })
    }

    model_fields!(ResponseMeta, struct_fold);
}

impl StructModel for Shipment {
    type Owned = checkout::shipment::Owned;

    fn build(&self, mut builder: checkout::shipment::Builder<'_>) -> Result<()> {
        builder.set_shipment_id(self.shipment_id.as_str());
        builder.set_carrier(self.carrier.as_str());
        builder.set_tracking_number(self.tracking_number.as_str());
        builder.set_estimated_delivery_ms(self.estimated_delivery_ms);
        build_strings(
            builder.init_product_ids(length(self.product_ids.len())?),
            &self.product_ids,
        );
        Ok(())
    }

    fn read(reader: checkout::shipment::Reader<'_>) -> Result<Self> {
        Ok(Shipment {
            shipment_id: string(reader.get_shipment_id())?,
            carrier: string(reader.get_carrier())?,
            tracking_number: string(reader.get_tracking_number())?,
            estimated_delivery_ms: reader.get_estimated_delivery_ms(),
            product_ids: read_strings(reader.get_product_ids())?,
        })
    }

    model_fields!(Shipment, struct_fold);
}

impl StructModel for CheckoutResponse {
    type Owned = checkout::checkout_response::Owned;

    fn build(&self, mut builder: checkout::checkout_response::Builder<'_>) -> Result<()> {
        self.meta.build(builder.reborrow().init_meta())?;
        builder.set_order_id(self.order_id.as_str());
        builder.set_status(status_to_wire(self.status));
        builder.set_subtotal_cents(self.subtotal_cents);
        builder.set_discount_cents(self.discount_cents);
        builder.set_tax_cents(self.tax_cents);
        builder.set_shipping_cents(self.shipping_cents);
        builder.set_total_cents(self.total_cents);
        build_records(
            builder.reborrow().init_shipments(length(self.shipments.len())?),
            &self.shipments,
        )?;
        build_attributes(
            builder.init_attributes(length(self.attributes.len())?),
            &self.attributes,
        );
        Ok(())
    }

    fn read(reader: checkout::checkout_response::Reader<'_>) -> Result<Self> {
        Ok(CheckoutResponse {
            meta: ResponseMeta::read(reader.get_meta()?)?,
            order_id: string(reader.get_order_id())?,
            status: status_from_wire(
                reader
                    .get_status()
                    .map_err(|unknown| anyhow::anyhow!("OrderStatus {} is not in this schema", unknown.0))?,
            ),
            subtotal_cents: reader.get_subtotal_cents(),
            discount_cents: reader.get_discount_cents(),
            tax_cents: reader.get_tax_cents(),
            shipping_cents: reader.get_shipping_cents(),
            total_cents: reader.get_total_cents(),
            shipments: read_records(reader.get_shipments())?,
            attributes: read_attributes(reader.get_attributes())?,
        })
    }

    model_fields!(CheckoutResponse, struct_fold);
}

impl Routed for CheckoutResponse {
    fn route(reader: checkout::checkout_response::Reader<'_>, digest: &mut Digest) -> Result<()> {
        digest.text(text(reader.get_meta()?.get_request_id())?);
        digest.text(text(reader.get_order_id())?);
        Ok(())
    }
}

impl Native for CheckoutResponse {
    type UpdateStruct = checkout::checkout_response::Owned;
    const UPDATE_FIELD: &'static str = "totalCents";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        Ok(reader)
    }
}

// --- map-* and vec-* ------------------------------------------------------------------------

impl StructModel for Item {
    type Owned = collections::item::Owned;

    fn build(&self, mut builder: collections::item::Builder<'_>) -> Result<()> {
        builder.set_id(self.id);
        builder.set_name(self.name.as_str());
        builder.set_category(self.category.as_str());
        builder.set_price(self.price);
        builder.set_stock(self.stock);
        builder.set_active(self.active);
        Ok(())
    }

    fn read(reader: collections::item::Reader<'_>) -> Result<Self> {
        Ok(Item {
            id: reader.get_id(),
            name: string(reader.get_name())?,
            category: string(reader.get_category())?,
            price: reader.get_price(),
            stock: reader.get_stock(),
            active: reader.get_active(),
        })
    }

    model_fields!(Item, struct_fold);
}

impl StructModel for Items {
    type Owned = collections::items::Owned;

    fn build(&self, builder: collections::items::Builder<'_>) -> Result<()> {
        build_records(builder.init_items(length(self.items.len())?), &self.items)
    }

    fn read(reader: collections::items::Reader<'_>) -> Result<Self> {
        Ok(Items {
            items: read_records(reader.get_items())?,
        })
    }

    model_fields!(Items, struct_fold);
}

impl Routed for Items {
    fn route(reader: collections::items::Reader<'_>, digest: &mut Digest) -> Result<()> {
        let items = reader.get_items()?;
        digest.count(items.len() as usize);
        if let Some(first) = items.try_get(0) {
            digest.int(first.get_id());
        }
        Ok(())
    }
}

impl Native for Items {
    type UpdateStruct = collections::item::Owned;
    const UPDATE_FIELD: &'static str = "stock";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        first::<Item>(reader.get_items(), "item")
    }
}

impl StructModel for Keyed {
    type Owned = collections::keyed::Owned;

    fn build(&self, builder: collections::keyed::Builder<'_>) -> Result<()> {
        // BTreeMap order is byte order of the keys: a reader can binary-search the entries.
        let mut entries = builder.init_entries(length(self.entries.len())?);
        for (index, (key, item)) in (0..).zip(&self.entries) {
            let mut entry = entries.reborrow().get(index);
            entry.set_key(key.as_str());
            item.build(entry.init_value())?;
        }
        Ok(())
    }

    fn read(reader: collections::keyed::Reader<'_>) -> Result<Self> {
        let entries = reader
            .get_entries()?
            .iter()
            .map(|entry| Ok((string(entry.get_key())?, Item::read(entry.get_value()?)?)))
            .collect::<Result<_>>()?;
        Ok(Keyed { entries })
    }

    model_fields!(Keyed, struct_fold);
}

impl Routed for Keyed {
    fn route(reader: collections::keyed::Reader<'_>, digest: &mut Digest) -> Result<()> {
        let entries = reader.get_entries()?;
        digest.count(entries.len() as usize);
        if let Some(first) = entries.try_get(0) {
            digest.text(text(first.get_key())?);
            digest.int(first.get_value()?.get_id());
        }
        Ok(())
    }
}

impl Native for Keyed {
    type UpdateStruct = collections::item::Owned;
    const UPDATE_FIELD: &'static str = "stock";

    fn update_struct(reader: Reader<'_, Self>) -> Result<UpdateReader<'_, Self>> {
        let entries = reader.get_entries()?;
        Ok(entries.try_get(0).context("no entry")?.get_value()?)
    }
}

/// Fidelity: an `order` message built straight with the generated builder (the crate's default
/// `message::Builder`), read in place with `read_message_from_flat_slice_no_alloc` and the
/// default `ReaderOptions`, then the two routing fields through the generated reader.
fn capnp_order_access_partial() -> Box<dyn FnMut()> {
    let value: &Order = crate::payload::value_of("order").expect("order is an Order");
    let mut message = message::Builder::new_default();
    let mut builder = message.init_root::<order::order::Builder>();
    builder.set_order_id(value.order_id);
    builder.set_customer_id(value.customer_id);
    builder.set_created_at_ms(value.created_at_ms);
    builder.set_quantity(value.quantity);
    builder.set_unit_price(value.unit_price);
    builder.set_discount(value.discount);
    builder.set_tax_rate(value.tax_rate);
    builder.set_total(value.total);
    builder.set_currency(value.currency.as_str());
    builder.set_sku(value.sku.as_str());
    builder.set_customer_email(value.customer_email.as_str());
    builder.set_shipping_country(value.shipping_country.as_str());
    builder.set_status(value.status.as_str());
    builder.set_is_gift(value.is_gift);
    builder.set_is_priority(value.is_priority);
    let bytes = serialize::write_message_to_words(&message);
    // Held as words, so the buffer is 8-byte aligned whatever the allocator does.
    let mut words = Word::allocate_zeroed_vec(bytes.len() / size_of::<Word>());
    Word::words_to_bytes_mut(&mut words).copy_from_slice(&bytes);
    Box::new(move || {
        let mut bytes = Word::words_to_bytes(black_box(&words));
        let message = serialize::read_message_from_flat_slice_no_alloc(&mut bytes, ReaderOptions::new())
            .expect("it reads");
        let order = message.get_root::<order::order::Reader>().expect("an Order");
        black_box((order.get_order_id(), order.get_customer_id()));
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use ::capnp::introspect::Introspect;

    use super::*;

    const CAPNP_VERSION: &str = "Cap'n Proto version 0.9.2";
    const GENERATED: &str = "src/format/capnp/generated";

    /// The files of a folder (the generated code is one flat folder), by name.
    fn files(folder: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                (
                    PathBuf::from(path.file_name().unwrap()),
                    std::fs::read(&path).unwrap(),
                )
            })
            .collect()
    }

    fn on_path(program: &str) -> bool {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|folder| folder.join(program).is_file()))
    }

    /// The committed generated code is exactly what scripts/capnp-regen.sh makes the capnp
    /// compiler and capnpc-rust write. Skipped without capnp 0.9.2 and capnpc-rust;
    /// SERBENCH_REQUIRE_CAPNP=1 (for CI) turns the skip into a failure, so the check cannot
    /// silently stop running there. The script itself refuses a plugin of another version.
    #[test]
    fn generated_code_matches_capnpc() {
        let version = Command::new("capnp").arg("--version").output();
        let version = version
            .ok()
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string());
        if version.as_deref() != Some(CAPNP_VERSION) || !on_path("capnpc-rust") {
            let message = format!(
                "skipped: needs capnp 0.9.2 (found {version:?}) and capnpc-rust 0.27.0 (on PATH: {}): apt-get install capnproto && cargo install capnpc --version 0.27.0 --locked",
                on_path("capnpc-rust")
            );
            assert!(std::env::var_os("SERBENCH_REQUIRE_CAPNP").is_none(), "{message}");
            println!("{message}");
            return;
        }
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scratch = tempfile::tempdir().unwrap();
        let regenerated = scratch.path().join("generated");
        let output = Command::new(manifest.join("scripts/capnp-regen.sh"))
            .arg(&regenerated)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/capnp-regen.sh failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let committed = files(&manifest.join(GENERATED));
        let regenerated = files(&regenerated);
        assert_eq!(
            committed.keys().collect::<Vec<_>>(),
            regenerated.keys().collect::<Vec<_>>(),
            "the generated file list differs; run scripts/capnp-regen.sh {GENERATED}"
        );
        for (path, bytes) in &committed {
            assert!(
                regenerated[path] == *bytes,
                "{} differs from capnpc-rust's output; run scripts/capnp-regen.sh {GENERATED}",
                path.display()
            );
        }
    }

    /// Code generated by capnpc-rust 0.x.y is for the capnp runtime 0.x: every generated file
    /// names its plugin version, which must share its minor version with the locked crate.
    #[test]
    fn generated_code_is_from_the_plugin_of_the_locked_capnp_minor() {
        let minor = |version: &str| version.rsplit_once('.').unwrap().0.to_string();
        let locked = crate::format::crate_version("capnp").expect("capnp is a dependency");
        let generated = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(GENERATED));
        assert_eq!(generated.len(), 6);
        for (path, bytes) in generated {
            let text = String::from_utf8(bytes).unwrap();
            let plugin = text
                .lines()
                .find_map(|line| line.strip_prefix("// capnpc crate version: "))
                .unwrap_or_else(|| panic!("{}: no plugin version", path.display()));
            assert_eq!(
                minor(plugin),
                minor(locked),
                "{}: capnpc {plugin}, capnp {locked}",
                path.display()
            );
        }
    }

    fn encode<P: StructModel, C: Codec<P>>(codec: &mut C, value: &P) -> Vec<u8> {
        let mut out = Vec::new();
        codec.encode(value, &mut out).unwrap().to_vec()
    }

    /// The number of segments a flat message's table declares.
    fn segments(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes[..4].try_into().unwrap()) + 1
    }

    struct Checks;

    impl<P: Model + Native> Visit<P> for Checks {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            let value = (payload.value)();
            let mut codec = Unpacked::new();
            let bytes = encode(&mut codec, value);
            assert_eq!(segments(&bytes), 1, "{name}: one segment");
            // A second encode with the warm scratch writes the same bytes.
            assert_eq!(encode(&mut codec, value), bytes, "{name}");
            let decoded: P = Unpacked::new().decode(&bytes).unwrap();
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

            let packed = encode(&mut Packed::new(), value);
            assert!(packed.len() < bytes.len(), "{name}: packing saves bytes");
            assert_eq!(
                &Codec::<P>::decode(&mut Packed::new(), &packed).unwrap(),
                value,
                "{name}: packed"
            );

            // The update writes the field's 8 bytes and nothing else, and writing the old value
            // back restores the message exactly.
            let mut updated = bytes.clone();
            let mut update = InPlace::<P>::new();
            let other = value.value_for_round(1);
            update.update(&mut updated, other).unwrap();
            let changed: Vec<usize> = (0..bytes.len()).filter(|&at| bytes[at] != updated[at]).collect();
            assert!(
                !changed.is_empty() && changed.last().unwrap() - changed[0] < 8,
                "{name}: changed bytes {changed:?}"
            );
            let decoded: P = Unpacked::new().decode(&updated).unwrap();
            assert_eq!(decoded, value.with_field(other), "{name}: update");
            update.update(&mut updated, value.field()).unwrap();
            assert_eq!(updated, bytes, "{name}: update back");
        }
    }

    #[test]
    fn every_payload_round_trips_reads_in_place_and_updates_only_its_field() {
        visit_all(&mut Checks);
    }

    fn value<P: Model>(name: &str) -> &'static P {
        crate::payload::value_of(name).unwrap()
    }

    /// The bytes never depend on what the codec encoded before: a message bigger than the
    /// scratch is built again into a grown one, so it is one segment as a fresh codec writes it.
    #[test]
    fn a_warm_codec_writes_what_a_fresh_one_writes() {
        let (order, items) = (value::<Order>("order"), value::<Items>("vec-big"));
        let fresh_items = encode(&mut Unpacked::new(), items);
        let fresh_order = encode(&mut Unpacked::new(), order);
        let mut codec = Unpacked::new();
        assert_eq!(encode(&mut codec, order), fresh_order);
        // vec-big (700 KiB) does not fit the scratch that order (26 words) left.
        assert_eq!(encode(&mut codec, items), fresh_items);
        assert_eq!(segments(&fresh_items), 1);
        assert_eq!(encode(&mut codec, order), fresh_order);
        assert_eq!(encode(&mut codec, items), fresh_items);
    }

    #[test]
    fn truncated_or_hostile_buffers_are_errors_not_panics() {
        let event = value::<TelemetryEvent>("telemetry");
        let bytes = encode(&mut Unpacked::new(), event);
        let packed = encode(&mut Packed::new(), event);
        let mut rng = crate::payload::SplitMix64::new(7);
        let noise: Vec<u8> = (0..512).map(|_| rng.next_u64() as u8).collect();
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(&[0; 8]);
        // One byte into an (aligned) buffer: the message itself, but not 8-byte aligned.
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(&bytes);
        // Each case is a buffer and where in it the input starts.
        let broken: [(&str, Vec<u8>, usize); 8] = [
            ("empty", vec![], 0),
            ("three bytes", vec![1, 2, 3], 0),
            ("truncated", bytes[..bytes.len() / 2].to_vec(), 0),
            ("one word short", bytes[..bytes.len() - 8].to_vec(), 0),
            ("all ones", vec![0xff; 64], 0),
            ("noise", noise, 0),
            ("trailing bytes", trailing, 0),
            ("unaligned", shifted, 1),
        ];
        for (what, mut buffer, start) in broken {
            let input = &buffer[start..];
            let decoded: Result<TelemetryEvent> = Unpacked::new().decode(input);
            assert!(decoded.is_err(), "{what}: decoded");
            assert!(
                Access::<TelemetryEvent>::access(&mut ReadAll, input).is_err(),
                "{what}"
            );
            assert!(
                Access::<TelemetryEvent>::access(&mut ReadRoute, input).is_err(),
                "{what}"
            );
            let updated = InPlace::<TelemetryEvent>::new().update(&mut buffer[start..], 1);
            assert!(updated.is_err(), "{what}: updated");
        }
        for truncated in [&packed[..packed.len() / 2], &packed[..packed.len() - 1]] {
            let decoded: Result<TelemetryEvent> = Packed::new().decode(truncated);
            assert!(decoded.is_err(), "truncated packed message decoded");
        }
        let error = format!(
            "{:#}",
            Codec::<Items>::decode(&mut Unpacked::new(), &bytes[..bytes.len() / 2]).unwrap_err()
        );
        assert!(error.contains("not a Cap'n Proto message"), "{error}");
    }

    /// A 32-byte `Items` message whose list claims 2^29 - 1 zero-sized items: without the
    /// default traversal limit a decoder would allocate 2^29 records; with it, it is refused.
    #[test]
    fn a_list_of_zero_sized_elements_hits_the_traversal_limit() {
        let count: u64 = (1 << 29) - 1;
        let words: [u64; 4] = [
            3 << 32,       // segment table: one segment of 3 words
            1 << 48,       // root: struct pointer to the next word, no data, 1 pointer
            1 | (7 << 32), // items: list pointer to the next word, composite, 0 words
            count << 2,    // the composite tag: `count` elements of no data, no pointers
        ];
        let mut message = Word::allocate_zeroed_vec(words.len());
        for (word, value) in Word::words_to_bytes_mut(&mut message).chunks_mut(8).zip(words) {
            word.copy_from_slice(&value.to_le_bytes());
        }
        let bytes = Word::words_to_bytes(&message);
        let error = format!(
            "{:#}",
            Codec::<Items>::decode(&mut Unpacked::new(), bytes).unwrap_err()
        );
        assert!(error.contains("limit"), "{error}");
        assert!(Access::<Items>::access(&mut ReadAll, bytes).is_err());
        assert!(Access::<Items>::access(&mut ReadRoute, bytes).is_err());
        // Without the limit the list reads as 2^29 - 1 elements: it was the limit that refused it.
        let mut rest = bytes;
        let unlimited = *ReaderOptions::new().traversal_limit_in_words(None);
        let message = serialize::read_message_from_flat_slice_no_alloc(&mut rest, unlimited).unwrap();
        let items = message.get_root::<collections::items::Reader>().unwrap();
        assert_eq!(u64::from(items.get_items().unwrap().len()), count);
    }

    /// An `Order` written by a schema that had only its first field: it decodes (the missing
    /// fields read as their defaults, Cap'n Proto's schema evolution), but the update refuses
    /// it, as the quantity has no place in its data section.
    #[test]
    fn a_struct_of_an_older_schema_decodes_but_cannot_be_updated() {
        let words: [u64; 3] = [2 << 32, 1 << 32, 42];
        let mut message = Word::allocate_zeroed_vec(words.len());
        for (word, value) in Word::words_to_bytes_mut(&mut message).chunks_mut(8).zip(words) {
            word.copy_from_slice(&value.to_le_bytes());
        }
        let decoded: Order = Unpacked::new().decode(Word::words_to_bytes(&message)).unwrap();
        assert_eq!(
            (decoded.order_id, decoded.quantity, decoded.currency.as_str()),
            (42, 0, "")
        );
        let error = InPlace::<Order>::new()
            .update(Word::words_to_bytes_mut(&mut message), 7)
            .unwrap_err();
        assert!(error.to_string().contains("older schema"), "{error}");
    }

    #[test]
    fn an_unknown_status_reads_but_fails_decode() {
        let response = value::<CheckoutResponse>("checkout-response");
        let mut bytes = encode(&mut Unpacked::new(), response);
        // The status's slot (in 16-bit units), as the schema placed it.
        let TypeVariant::Struct(raw) = checkout::checkout_response::Owned::introspect().which() else {
            unreachable!()
        };
        let status = StructSchema::new(raw).get_field_by_name("status").unwrap();
        let field::Slot(slot) = status.get_proto().which().unwrap() else {
            unreachable!()
        };
        let start = {
            let message = flat_message(&bytes).unwrap();
            let root = root::<CheckoutResponse, _>(&message).unwrap();
            let data = ::capnp::raw::get_struct_data_section(root);
            offset_in(&bytes, data).unwrap() + slot.get_offset() as usize * 2
        };
        bytes[start..start + 2].copy_from_slice(&9u16.to_le_bytes());
        assert!(Access::<CheckoutResponse>::access(&mut ReadAll, &bytes).is_ok());
        let error = Codec::<CheckoutResponse>::decode(&mut Unpacked::new(), &bytes).unwrap_err();
        assert!(error.to_string().contains("OrderStatus 9"), "{error}");
    }

    /// Every scalar has its slot, zero or not: -0.0 keeps its sign (FlatBuffers omits it).
    #[test]
    fn negative_zero_keeps_its_sign() {
        let mut order = value::<Order>("order").clone();
        order.discount = -0.0;
        let bytes = encode(&mut Unpacked::new(), &order);
        let decoded: Order = Unpacked::new().decode(&bytes).unwrap();
        assert!(decoded.discount.is_sign_negative());
    }

    #[test]
    fn map_entries_are_sorted_by_key() {
        let keyed = value::<Keyed>("map-small");
        let bytes = encode(&mut Unpacked::new(), keyed);
        let message = flat_message(&bytes).unwrap();
        let entries = root::<Keyed, _>(&message).unwrap().get_entries().unwrap();
        let keys: Vec<&str> = entries
            .iter()
            .map(|entry| text(entry.get_key()).unwrap())
            .collect();
        assert!(keys.is_sorted(), "{keys:?}");
        assert_eq!(keys.len(), keyed.entries.len());
    }

    #[test]
    fn registers_every_operation_unpacked_and_the_codec_packed() {
        let mut registry = Registry::default();
        (FORMAT.register)(&mut registry);
        registry.take_reads_in_place();
        let corpora = crate::payload::corpus_specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>();
        let payloads = crate::payload::specs().len() - corpora.len();
        // Unpacked: encode, decode, round-trip, access-all, access-partial, update; packed: the
        // first three. The corpora are unsupported (no schema).
        // The format's own arms: the registry adds compression arms to every codec.
        registry
            .arms
            .retain(|arm| !Operation::COMPRESSION.contains(&arm.id.operation));
        assert_eq!(registry.arms.len(), payloads * (6 + 3));
        assert_eq!(registry.encoders.len(), payloads * 2);
        assert_eq!(registry.unsupported.len(), payloads * 3 + corpora.len());
        let (corpus, other): (Vec<_>, Vec<_>) = registry
            .unsupported
            .iter()
            .partition(|unsupported| corpora.contains(&unsupported.payload));
        assert_eq!(corpus.len(), corpora.len());
        assert!(other.iter().all(|unsupported| {
            unsupported.backend == PACKED.name
                && unsupported.operation.is_some_and(|op| op != Operation::Decode)
        }));
        let packed = registry
            .arms
            .iter()
            .filter(|arm| arm.id.codec.variant == PACKED.variant)
            .count();
        assert_eq!(packed, payloads * 3);
    }

    #[test]
    fn the_fidelity_case_reads_its_message() {
        let mut case = capnp_order_access_partial();
        case();
        case();
    }
}

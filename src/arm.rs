//! What one measured arm is: its identity, how it is built from a codec, how it proves its
//! round trip, and the timed loop it runs.
//!
//! A format file registers *codecs* (one backend of the format for one payload) in the
//! registry (`format::Registry`); [`Arm::codec`] and its siblings turn each codec into
//! its arms (encode, decode, round-trip, access, dynamic decode, and for some payloads the
//! compression of its encoded bytes), each of which proves its round trip when it is prepared,
//! before anything is timed. The timed loops live here as small
//! generic runners, so the per-iteration path is monomorphic: one dynamic call per batch of
//! iterations, none per iteration.

use std::any::Any;
use std::fmt;
use std::hint::black_box;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::compress::{self, Compressor, Zlib, Zstd};
use crate::payload::data::{Difference, Equivalence, compare};
use crate::payload::fields::UpdateField;
use crate::payload::{Borrowed, Model, PayloadSpec};

/// One backend of one format, able to carry values of `W` (a model type, or the format's own
/// generated type).
///
/// `encode` returns the encoded bytes: usually `out` (a reused, cleared buffer), or the
/// library's own reused buffer where that is its fast path (bitcode's `Buffer`), so no format
/// pays for a copy it would not make in a real integration.
pub trait Codec<W>: Send + 'static {
    fn encode<'a>(&'a mut self, value: &W, out: &'a mut Vec<u8>) -> Result<&'a [u8]>;
    fn decode(&mut self, bytes: &[u8]) -> Result<W>;

    /// The bytes sizes.csv, `dump` and the compression arms take, which must be the same on
    /// every run: `encode`'s, unless the library writes map entries in an order that changes
    /// from run to run (rust-protobuf's `HashMap`s), where the codec writes them in a fixed
    /// order (the untimed encode's proof still runs on `encode`'s own bytes).
    fn stable_encode(&mut self, value: &W) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Ok(self.encode(value, &mut out)?.to_vec())
    }
}

/// What a codec's value must offer: the model types, or a format's own generated types
/// (prost messages) that a codec encodes directly.
pub trait Value: Clone + PartialEq + fmt::Debug + Send + Sync + 'static {}
impl<T: Clone + PartialEq + fmt::Debug + Send + Sync + 'static> Value for T {}

/// Decodes into the format's own value tree (its dynamic, schema-less representation).
pub trait Dynamic<P>: Send + 'static {
    type Tree;
    fn decode_tree(&mut self, bytes: &[u8]) -> Result<Self::Tree>;
    /// Converts a tree back into the model value: how the harness proves, before timing, that
    /// the dynamic decode holds the same data as the typed one.
    fn to_model(&mut self, tree: Self::Tree) -> Result<P>;
}

/// A format's own value tree built from data that has no Rust types (a `--data` payload `D`):
/// the tree is built once from the data, outside timing, and the codec encodes and decodes
/// that tree, so the arms time the format's dynamic representation, as a tool that reads data
/// it was not compiled for does.
pub trait DataTree<D>: Send + Sync + 'static {
    /// The format's value tree (`serde_json::Value`, `bson::Document`, a `DynamicMessage`, ...).
    type Tree: Value;
    type Codec: Codec<Self::Tree>;
    /// A fresh codec (and its reused buffers).
    fn codec(&self) -> Self::Codec;
    /// The tree of `data`.
    fn tree(&self, data: &D) -> Result<Self::Tree>;
    /// Whether a tree holds `data`, under the equivalence the format keeps: the first
    /// difference if not.
    fn holds(&self, tree: &Self::Tree, data: &D) -> Result<Option<Difference>>;
    /// Whether two trees are the same, as the round-trip proof asks: `==`, unless the tree's own
    /// equality is slower than linear (sonic-rs looks each key of an object up in the other).
    fn same(&self, one: &Self::Tree, other: &Self::Tree) -> bool {
        one == other
    }
    /// Why the tree's encoding of `data` changes from process to process, if it does: a tree
    /// that keeps objects in a hash map writes them in its order.
    fn unstable(&self, _data: &D) -> Option<String> {
        None
    }
    /// The bytes sizes.csv and `dump` show, which must be the same on every run: the tree's
    /// encoding, or, where it is [`unstable`](DataTree::unstable), the same encoding in a fixed
    /// order (a format that can write one overrides this) or a refusal with the reason.
    fn stable_bytes(&self, data: &D) -> Result<Vec<u8>> {
        if let Some(reason) = self.unstable(data) {
            bail!(reason);
        }
        let mut out = Vec::new();
        Ok(self.codec().encode(&self.tree(data)?, &mut out)?.to_vec())
    }
}

/// Decodes into the payload's borrowed type ([`Borrowed::Ref`]): strings point into the bytes
/// the value was decoded from instead of being copied.
pub trait BorrowedDecode<B: Borrowed>: Send + 'static {
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>>;
    /// The addresses of the bytes the last decoded value borrows from: the input itself,
    /// unless the library parses a copy of it in place (simd-json's reused scratch buffer).
    fn source(&self, input: &[u8]) -> std::ops::Range<usize> {
        address_range(input)
    }
}

/// The addresses `bytes` occupies.
pub fn address_range(bytes: &[u8]) -> std::ops::Range<usize> {
    let range = bytes.as_ptr_range();
    range.start as usize..range.end as usize
}

/// Reads an encoded message in place, without building owned values (zero-copy formats).
pub trait Access<P>: Send + 'static {
    /// The fields this access reads, folded into one number, computed from the owned value.
    fn expected(value: &P) -> u64;
    /// Verifies `bytes`, then reads the same fields in place, folded the same way.
    fn access(&mut self, bytes: &[u8]) -> Result<u64>;
}

/// Changes one scalar field in place in an encoded message, without re-encoding it (the
/// zero-copy formats): what a router or a cache does to a buffer it received. The field is the
/// payload's [`UpdateField`].
pub trait Update<P: UpdateField>: Send + 'static {
    /// Verifies `bytes` as the format's checked access does, then writes `value` into the field.
    fn update(&mut self, bytes: &mut [u8], value: P::Scalar) -> Result<()>;
}

/// The operation an arm times.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub enum Operation {
    #[default]
    Encode,
    Decode,
    RoundTrip,
    /// Zero-copy formats: verify the buffer, then read every field in place.
    AccessAll,
    /// Zero-copy formats: verify the buffer, then read only the fields a router needs.
    AccessPartial,
    /// Zero-copy formats: verify the buffer, then change one scalar in place.
    Update,
    /// The codec's encoded bytes compressed by zstd (level [`crate::compress::ZSTD_LEVEL`]).
    CompressZstd,
    /// The codec's encoded bytes, zstd-compressed once untimed, decompressed.
    DecompressZstd,
    /// The codec's encoded bytes compressed by zlib (level [`crate::compress::ZLIB_LEVEL`]).
    CompressZlib,
    /// The codec's encoded bytes, zlib-compressed once untimed, decompressed.
    DecompressZlib,
}

impl Operation {
    pub const ALL: [Operation; 10] = [
        Operation::Encode,
        Operation::Decode,
        Operation::RoundTrip,
        Operation::AccessAll,
        Operation::AccessPartial,
        Operation::Update,
        Operation::CompressZstd,
        Operation::DecompressZstd,
        Operation::CompressZlib,
        Operation::DecompressZlib,
    ];
    /// The operations every codec has.
    pub const CODEC: [Operation; 3] = [Operation::Encode, Operation::Decode, Operation::RoundTrip];
    /// The operations on a codec's encoded bytes that the codecs of the payloads in
    /// [`crate::compress::PAYLOADS`] also have.
    pub const COMPRESSION: [Operation; 4] = [
        Operation::CompressZstd,
        Operation::DecompressZstd,
        Operation::CompressZlib,
        Operation::DecompressZlib,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::Encode => "encode",
            Operation::Decode => "decode",
            Operation::RoundTrip => "roundtrip",
            Operation::AccessAll => "access-all",
            Operation::AccessPartial => "access-partial",
            Operation::Update => "update",
            Operation::CompressZstd => "compress-zstd",
            Operation::DecompressZstd => "decompress-zstd",
            Operation::CompressZlib => "compress-zlib",
            Operation::DecompressZlib => "decompress-zlib",
        }
    }
}

/// Typed decodes into the payload's own structs; dynamic into the format's value tree;
/// borrowed into the payload's borrowed structs, whose strings point into the input. `check`
/// is `serbench check`'s path (a decode, then the first difference from the payload): no arm
/// is timed in it, but `serbench robustness` feeds it hostile bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub enum Mode {
    #[default]
    Typed,
    Dynamic,
    Borrowed,
    Check,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Typed, Mode::Dynamic, Mode::Borrowed, Mode::Check];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Typed => "typed",
            Mode::Dynamic => "dynamic",
            Mode::Borrowed => "borrowed",
            Mode::Check => "check",
        }
    }
}

/// How a batch is laid out on the wire. Every format writes `Document` (the payload value as
/// one message); the JSON framings add `Array` (a top-level array of the records) and
/// `Ndjson` (one record per line, each line parsed on its own) for batch payloads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub enum Framing {
    #[default]
    Document,
    Array,
    Ndjson,
}

impl Framing {
    pub const ALL: [Framing; 3] = [Framing::Document, Framing::Array, Framing::Ndjson];

    pub fn name(self) -> &'static str {
        match self {
            Framing::Document => "document",
            Framing::Array => "array",
            Framing::Ndjson => "ndjson",
        }
    }
}

/// The axes of an arm that are closed sets of names: their `name` is their spelling in every
/// file and on the command line, and the one place it is defined.
pub trait Named: Copy + 'static {
    fn all() -> &'static [Self];
    fn name(self) -> &'static str;

    fn from_name(name: &str) -> Option<Self> {
        Self::all().iter().copied().find(|value| value.name() == name)
    }
}

impl Named for Operation {
    fn all() -> &'static [Self] {
        &Operation::ALL
    }

    fn name(self) -> &'static str {
        Operation::name(self)
    }
}

impl Named for Mode {
    fn all() -> &'static [Self] {
        &Mode::ALL
    }

    fn name(self) -> &'static str {
        Mode::name(self)
    }
}

impl Named for Framing {
    fn all() -> &'static [Self] {
        &Framing::ALL
    }

    fn name(self) -> &'static str {
        Framing::name(self)
    }
}

fn serialize_named<S: Serializer>(value: impl Named, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value.name())
}

fn deserialize_named<'de, T: Named, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    let name = String::deserialize(deserializer)?;
    T::from_name(&name).ok_or_else(|| {
        let valid: Vec<&str> = T::all().iter().map(|value| value.name()).collect();
        serde::de::Error::custom(format!("unknown {name:?} (valid: {})", valid.join(", ")))
    })
}

impl Serialize for Operation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_named(*self, serializer)
    }
}

impl<'de> Deserialize<'de> for Operation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_named(deserializer)
    }
}

impl Serialize for Mode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_named(*self, serializer)
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_named(deserializer)
    }
}

impl Serialize for Framing {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_named(*self, serializer)
    }
}

impl<'de> Deserialize<'de> for Framing {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_named(deserializer)
    }
}

/// A backend as a format file names it when registering a codec.
#[derive(Clone, Copy, Debug)]
pub struct Backend {
    pub name: &'static str,
    /// Empty for the backend's plain use; otherwise what differs (e.g. `native`, `serde`).
    pub variant: &'static str,
    pub framing: Framing,
}

impl Backend {
    pub const fn new(name: &'static str) -> Self {
        Backend {
            name,
            variant: "",
            framing: Framing::Document,
        }
    }

    pub const fn variant(self, variant: &'static str) -> Self {
        Backend { variant, ..self }
    }

    pub const fn framing(self, framing: Framing) -> Self {
        Backend { framing, ..self }
    }
}

/// Where a codec sits in the matrix: an arm's coordinates but its operation and mode. In every
/// serbench CSV file these are the columns `format, backend, variant, payload, framing`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CodecId {
    pub format: String,
    pub backend: String,
    /// Empty for the backend's plain use.
    pub variant: String,
    pub payload: String,
    pub framing: Framing,
}

/// `format/backend[variant]`, or `format/backend` for the backend's plain use: how every table
/// names a backend.
pub fn backend_label(format: &str, backend: &str, variant: &str) -> String {
    match variant {
        "" => format!("{format}/{backend}"),
        variant => format!("{format}/{backend}[{variant}]"),
    }
}

impl CodecId {
    /// `format/backend[variant]`.
    pub fn backend_label(&self) -> String {
        backend_label(&self.format, &self.backend, &self.variant)
    }

    /// `format/backend[variant]`, then the framing when it is not document: how the sizes
    /// tables and charts name a codec among those of one payload.
    pub fn label(&self) -> String {
        let mut label = self.backend_label();
        if self.framing != Framing::Document {
            label += &format!(" {}", self.framing.name());
        }
        label
    }
}

/// The coordinates of one arm: the one identity of an arm in the registry, in every file
/// (results.csv, sizes.csv by its codec, instructions.csv, robustness.csv), in comparisons and
/// between a run and its worker processes. In CSV files, the codec's columns, then `operation`
/// and `mode`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ArmId {
    pub codec: CodecId,
    pub operation: Operation,
    pub mode: Mode,
}

impl ArmId {
    /// The typed, document-framed arm `operation` of `format/backend[variant]` on `payload`:
    /// what most arms are (change `mode` or `codec.framing` for the others).
    pub fn typed(format: &str, backend: &str, variant: &str, payload: &str, operation: Operation) -> ArmId {
        ArmId {
            codec: CodecId {
                format: format.to_string(),
                backend: backend.to_string(),
                variant: variant.to_string(),
                payload: payload.to_string(),
                framing: Framing::Document,
            },
            operation,
            mode: Mode::Typed,
        }
    }

    /// This arm in `framing`.
    pub fn framed(mut self, framing: Framing) -> ArmId {
        self.codec.framing = framing;
        self
    }

    /// `format/backend[variant]`, then the mode and framing when they are not typed and
    /// document: how tables, charts and ratios name the arm among those of one payload and
    /// operation.
    pub fn label(&self) -> String {
        let mut label = self.codec.backend_label();
        if self.mode != Mode::Typed {
            label += &format!(" {}", self.mode.name());
        }
        if self.codec.framing != Framing::Document {
            label += &format!(" {}", self.codec.framing.name());
        }
        label
    }

    /// `format/backend[variant]`, then what the decoder reads into (`typed`, `dynamic`, or
    /// the in-place operation: `access-all`, `access-partial`, `update`), then the framing
    /// when it is not document: how the robustness report names a decoder across payloads.
    pub fn decoder_label(&self) -> String {
        let reads = match self.operation {
            Operation::Decode => self.mode.name(),
            operation => operation.name(),
        };
        let mut label = format!("{} {reads}", self.codec.backend_label());
        if self.codec.framing != Framing::Document {
            label += &format!(" {}", self.codec.framing.name());
        }
        label
    }

    /// `format/backend[variant]/payload/operation`, then `/mode` and `/framing` when they are
    /// not typed and document: the arm's id in criterion (`benches/`).
    pub fn path(&self) -> String {
        let mut path = format!(
            "{}/{}/{}",
            self.codec.backend_label(),
            self.codec.payload,
            self.operation.name()
        );
        if self.mode != Mode::Typed {
            path += &format!("/{}", self.mode.name());
        }
        if self.codec.framing != Framing::Document {
            path += &format!("/{}", self.codec.framing.name());
        }
        path
    }

    /// A baseline arm (it times a copy of the input, not a codec): charted apart, never the
    /// fastest.
    pub fn is_baseline(&self) -> bool {
        self.codec.variant == COPY_ONLY
    }

    /// Payload order as in the payload list, then operation order, then label: the order of
    /// every table. Payloads and operations this build does not know sort last; the payload's
    /// name comes right after its rank because every `--data` payload shares the last rank, and
    /// without it their arms would interleave (one `data:` payload's tables mixed with another's).
    pub fn sort_key(&self) -> (usize, String, usize, String) {
        let payload = crate::payload::rank(&self.codec.payload);
        let operation = Operation::ALL
            .iter()
            .position(|&operation| operation == self.operation)
            .unwrap_or(usize::MAX);
        (payload, self.codec.payload.clone(), operation, self.label())
    }
}

/// The variant of a baseline arm: it only copies the input, as a copying decoder starts with.
pub const COPY_ONLY: &str = "copy-only";

/// `format/backend[variant] payload operation`, then mode and framing as in [`ArmId::label`].
impl fmt::Display for ArmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.codec.backend_label(),
            self.codec.payload,
            self.operation.name()
        )?;
        if self.mode != Mode::Typed {
            write!(f, " {}", self.mode.name())?;
        }
        if self.codec.framing != Framing::Document {
            write!(f, " {}", self.codec.framing.name())?;
        }
        Ok(())
    }
}

/// A timed loop: runs the operation `iterations` times. One call is one sample.
pub trait Runner {
    fn run(&mut self, iterations: u64) -> Result<()>;
}

/// An arm whose round trip has been proven, ready to be timed.
pub struct Prepared {
    pub runner: Box<dyn Runner>,
    pub encoded_bytes: usize,
}

type Prepare = Box<dyn Fn() -> Result<Prepared> + Send + Sync>;
type EncodeOnce = Box<dyn Fn() -> Result<Vec<u8>> + Send + Sync>;

pub struct Arm {
    pub id: ArmId,
    /// The payload it carries: its record count is the unit of the per-record figures.
    pub spec: &'static PayloadSpec,
    prepare: Prepare,
}

impl Arm {
    /// Builds the arm's runner after proving `decode(encode(x)) == x` for its codec.
    pub fn prepare(&self) -> Result<Prepared> {
        (self.prepare)()
    }
}

/// A codec's encoder, for the sizes report and `serbench dump`: nothing here is timed.
pub struct Encoder {
    pub id: CodecId,
    pub spec: &'static PayloadSpec,
    /// Whether it encodes a data payload's generated types (`--typed`), not its value tree.
    pub typed: bool,
    encode: EncodeOnce,
    round_trip: RoundTripAny,
    check: CheckBytes,
}

type RoundTripAny = Box<dyn Fn(&dyn Any) -> Option<Result<()>> + Send + Sync>;
type CheckBytes = Box<dyn Fn(&[u8]) -> Result<Option<Difference>> + Send + Sync>;

impl Encoder {
    pub fn encode(&self) -> Result<Vec<u8>> {
        (self.encode)()
    }

    /// Decodes bytes made elsewhere with this codec and compares what they hold with the
    /// payload (`serbench check`): an error when they do not decode, the first difference when
    /// they hold other data.
    pub fn check(&self, bytes: &[u8]) -> Result<Option<Difference>> {
        (self.check)(bytes)
    }

    /// Round-trips any value of the codec's model type (property tests): `None` when `value`
    /// is of another type, otherwise whether `decode(encode(value)) == value`.
    pub fn round_trip(&self, value: &dyn Any) -> Option<Result<()>> {
        (self.round_trip)(value)
    }
}

/// A decoder as an attacker sees it: any bytes in, and whether what came out (if anything)
/// is the payload. Used by the robustness run; nothing here is timed.
pub struct Decoder {
    pub id: ArmId,
    decode: DecodeAny,
}

type DecodeAny = Box<dyn Fn(&[u8]) -> Result<bool> + Send + Sync>;

impl Decoder {
    /// `Ok(true)`: decoded to the payload; `Ok(false)`: decoded to something else; `Err`: the
    /// decoder refused the bytes. A panic propagates to the caller.
    pub fn decode(&self, bytes: &[u8]) -> Result<bool> {
        (self.decode)(bytes)
    }
}

/// The arms a codec gives (encode, decode, round-trip), its encoder and its typed decoder.
pub struct CodecArms {
    pub arms: Vec<Arm>,
    pub encoder: Encoder,
    pub decoder: Decoder,
}

impl Arm {
    /// The encode, decode and round-trip arms of a codec of the values `W` (the model type
    /// itself, or the format's own type, e.g. a prost message): `to_wire` builds the value once,
    /// outside any timing, and `to_model` proves that what was decoded is the payload (it fails
    /// where decoded bytes hold no model value, e.g. a protobuf message without a required
    /// nested message). `make` builds a fresh codec (and its reused buffers).
    pub fn codec<P: Model, W: Value, C: Codec<W>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        model: fn() -> &'static P,
        to_wire: fn(&P) -> W,
        to_model: fn(&W) -> Result<P>,
        make: fn() -> C,
    ) -> CodecArms {
        // The compression arms start from the same proven bytes as the codec's own arms.
        let compression: &[Operation] = if crate::compress::has_arms(spec.name) {
            &Operation::COMPRESSION
        } else {
            &[]
        };
        let arms = Operation::CODEC
            .iter()
            .chain(compression)
            .map(|&operation| {
                let id = ArmId {
                    codec: codec.clone(),
                    operation,
                    mode: Mode::Typed,
                };
                let prepare: Prepare = Box::new({
                    let id = id.clone();
                    move || {
                        let value = to_wire(model());
                        if Operation::COMPRESSION.contains(&operation) {
                            // What is timed is the compressor on the codec's bytes; the codec's
                            // own arms prove that those bytes decode to the payload.
                            let bytes = make()
                                .stable_encode(&value)
                                .map_err(|error| error.context(format!("{id}: encode failed")))?;
                            return compression_runner(operation, bytes)
                                .map_err(|error| error.context(id.to_string()));
                        }
                        let bytes = verify(&id, &value, make)?;
                        if &to_model(&value).with_context(|| id.to_string())? != model() {
                            bail!("{id}: the format's value does not convert back to the payload");
                        }
                        Ok(codec_runner(operation, value, bytes, make))
                    }
                });
                Arm { id, spec, prepare }
            })
            .collect();
        let encode: EncodeOnce = Box::new(move || make().stable_encode(&to_wire(model())));
        let round_trip: RoundTripAny = Box::new(move |value| {
            let value = value.downcast_ref::<P>()?;
            let check = || {
                let mut out = Vec::new();
                let bytes = make().encode(&to_wire(value), &mut out)?.to_vec();
                if &to_model(&make().decode(&bytes)?)? != value {
                    bail!("decode(encode(x)) != x");
                }
                Ok(())
            };
            Some(check())
        });
        // Compared as the format's own value: bytes the library accepts may hold a value the
        // model cannot (an unknown protobuf enum number), which is "decoded to something else".
        let decode: DecodeAny = Box::new(move |bytes| Ok(make().decode(bytes)? == to_wire(model())));
        let check: CheckBytes = Box::new(move |bytes| {
            let decoded = to_model(&make().decode(bytes)?)?;
            let as_json = |value: &P| serde_json::to_value(value).context("the model serializes to JSON");
            Ok(compare::first_difference(
                &as_json(model())?,
                &as_json(&decoded)?,
                Equivalence::Exact,
            ))
        });
        CodecArms {
            arms,
            encoder: Encoder {
                id: codec.clone(),
                spec,
                typed: false,
                encode,
                round_trip,
                check,
            },
            decoder: Decoder {
                id: ArmId {
                    codec,
                    operation: Operation::Decode,
                    mode: Mode::Typed,
                },
                decode,
            },
        }
    }

    /// An in-place access arm (`AccessAll` or `AccessPartial`) over the bytes that
    /// `make_codec` encodes, and its decoder: proven by the codec's round trip and by the access
    /// reading what [`Access::expected`] computes from the owned value.
    pub fn access<P: Model, C: Codec<P>, A: Access<P>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        operation: Operation,
        model: fn() -> &'static P,
        make_codec: fn() -> C,
        make_access: fn() -> A,
    ) -> (Arm, Decoder) {
        let id = ArmId {
            codec,
            operation,
            mode: Mode::Typed,
        };
        let prepare: Prepare = Box::new({
            let id = id.clone();
            move || {
                let bytes = verify(&id, model(), make_codec)?;
                let mut access = make_access();
                let read = access
                    .access(&bytes)
                    .map_err(|error| error.context(format!("{id}: access failed")))?;
                if read != A::expected(model()) {
                    bail!("{id}: the fields read in place differ from the payload");
                }
                Ok(on_bytes(bytes, move |bytes| access.access(bytes)))
            }
        });
        let decode: DecodeAny =
            Box::new(move |bytes| Ok(make_access().access(bytes)? == A::expected(model())));
        (
            Arm {
                id: id.clone(),
                spec,
                prepare,
            },
            Decoder { id, decode },
        )
    }

    /// An in-place update arm and its decoder: `make_update` changes the payload's
    /// [`UpdateField`] in the bytes `make_codec` encodes. Proven by the codec's round trip, and
    /// by the codec decoding the updated bytes to the payload with that field changed (and back,
    /// after the second update): nothing else moved. The timed loop alternates the two values,
    /// so every iteration writes.
    pub fn update<P: Model + UpdateField, C: Codec<P>, U: Update<P>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        model: fn() -> &'static P,
        make_codec: fn() -> C,
        make_update: fn() -> U,
    ) -> (Arm, Decoder) {
        let id = ArmId {
            codec,
            operation: Operation::Update,
            mode: Mode::Typed,
        };
        let prepare: Prepare = Box::new({
            let id = id.clone();
            move || {
                let mut bytes = verify(&id, model(), make_codec)?;
                let (mut update, mut decoder) = (make_update(), make_codec());
                let values = [model().value_for_round(0), model().value_for_round(1)];
                for value in [values[1], values[0]] {
                    update
                        .update(&mut bytes, value)
                        .map_err(|error| error.context(format!("{id}: update failed")))?;
                    let decoded = decoder
                        .decode(&bytes)
                        .map_err(|error| error.context(format!("{id}: the updated bytes do not decode")))?;
                    if decoded != model().with_field(value) {
                        bail!(
                            "{id}: the updated bytes decode to other data than the payload with the field set to {value:?}"
                        );
                    }
                }
                let encoded_bytes = bytes.len();
                let runner = UpdateRunner {
                    bytes,
                    update,
                    values,
                    model: PhantomData,
                };
                Ok(Prepared {
                    runner: Box::new(runner),
                    encoded_bytes,
                })
            }
        });
        let decode: DecodeAny = Box::new(move |bytes| {
            let mut bytes = bytes.to_vec();
            let value = model().value_for_round(1);
            make_update().update(&mut bytes, value)?;
            Ok(make_codec().decode(&bytes)? == model().with_field(value))
        });
        (
            Arm {
                id: id.clone(),
                spec,
                prepare,
            },
            Decoder { id, decode },
        )
    }

    /// A dynamic decode arm and its decoder: `make_dynamic` decodes the bytes `make_codec`
    /// encodes into the format's value tree; proven by the codec's round trip and by the tree
    /// converting back to the payload.
    pub fn dynamic<P: Model, C: Codec<P>, D: Dynamic<P>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        model: fn() -> &'static P,
        make_codec: fn() -> C,
        make_dynamic: fn() -> D,
    ) -> (Arm, Decoder) {
        let id = ArmId {
            codec,
            operation: Operation::Decode,
            mode: Mode::Dynamic,
        };
        let prepare: Prepare = Box::new({
            let id = id.clone();
            move || {
                let bytes = verify(&id, model(), make_codec)?;
                let mut dynamic = make_dynamic();
                let tree = dynamic
                    .decode_tree(&bytes)
                    .map_err(|error| error.context(format!("{id}: dynamic decode failed")))?;
                let back = dynamic
                    .to_model(tree)
                    .map_err(|error| error.context(format!("{id}: the value tree does not convert back")))?;
                if &back != model() {
                    bail!("{id}: the value tree holds other data than the typed decode");
                }
                Ok(on_bytes(bytes, move |bytes| dynamic.decode_tree(bytes)))
            }
        });
        // A tree that decodes but does not convert back holds other data: Ok(false).
        let decode: DecodeAny = Box::new(move |bytes| {
            let mut dynamic = make_dynamic();
            let tree = dynamic.decode_tree(bytes)?;
            Ok(dynamic.to_model(tree).is_ok_and(|back| &back == model()))
        });
        (
            Arm {
                id: id.clone(),
                spec,
                prepare,
            },
            Decoder { id, decode },
        )
    }

    /// A borrowed decode arm and its decoder: `make_borrowed` decodes the bytes `make_codec`
    /// encodes into the payload's borrowed type. Proven by the codec's round trip, by the
    /// borrowed value converting to the payload, and by every one of its strings pointing into
    /// the bytes it was decoded from ([`BorrowedDecode::source`]), so no copy passes as a borrow.
    pub fn borrowed<B: Borrowed, C: Codec<B>, D: BorrowedDecode<B>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        model: fn() -> &'static B,
        make_codec: fn() -> C,
        make_borrowed: fn() -> D,
    ) -> (Arm, Decoder) {
        let id = ArmId {
            codec,
            operation: Operation::Decode,
            mode: Mode::Borrowed,
        };
        let prepare: Prepare = Box::new({
            let id = id.clone();
            move || {
                let bytes = verify(&id, model(), make_codec)?;
                let mut decoder = make_borrowed();
                prove_borrowed(&id, model(), &mut decoder, &bytes)?;
                // The value borrows the bytes, so it is dropped inside the closure, in the loop.
                Ok(on_bytes(bytes, move |bytes| {
                    decoder.decode_borrowed(bytes).map(|value| drop(black_box(value)))
                }))
            }
        });
        let decode: DecodeAny = Box::new(move |bytes| {
            let mut decoder = make_borrowed();
            let value = decoder.decode_borrowed(bytes)?;
            Ok(&B::to_owned_model(&value) == model())
        });
        (
            Arm {
                id: id.clone(),
                spec,
                prepare,
            },
            Decoder { id, decode },
        )
    }

    /// A copy-only baseline: a decode arm that only copies the input the way a copying decoder
    /// does (whole, or line by line for NDJSON), so users see what remains of the decode.
    pub fn copy_baseline<P: Model, C: Codec<P>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        model: fn() -> &'static P,
        make_codec: fn() -> C,
    ) -> Arm {
        let per_line = codec.framing == Framing::Ndjson;
        let id = ArmId {
            codec,
            operation: Operation::Decode,
            mode: Mode::Typed,
        };
        let prepare: Prepare = Box::new({
            let id = id.clone();
            move || {
                let bytes = verify(&id, model(), make_codec)?;
                let encoded_bytes = bytes.len();
                let runner = CopyRunner {
                    scratch: Vec::with_capacity(encoded_bytes),
                    bytes,
                    per_line,
                };
                Ok(Prepared {
                    runner: Box::new(runner),
                    encoded_bytes,
                })
            }
        });
        Arm { id, spec, prepare }
    }
}

/// The arms of a data tree (see [`Arm::data`]): its encoder when it has an encode arm.
pub struct DataArms {
    pub arms: Vec<Arm>,
    pub encoder: Option<Encoder>,
    pub decoder: Decoder,
}

impl Arm {
    /// The `operations` arms (of encode, decode and round-trip; dynamic mode) of a format's own
    /// value tree of `data` ([`DataTree`]). Each proves, before it is timed, that the tree holds
    /// the data and that `decode(encode(tree)) == tree`; a failure names the first difference.
    pub fn data<D: Sync + 'static, T: DataTree<D>>(
        codec: CodecId,
        spec: &'static PayloadSpec,
        data: &'static D,
        tree: T,
        operations: &[Operation],
    ) -> DataArms {
        let tree = Arc::new(tree);
        let arms = operations
            .iter()
            .map(|&operation| {
                let id = ArmId {
                    codec: codec.clone(),
                    operation,
                    mode: Mode::Dynamic,
                };
                let prepare: Prepare = Box::new({
                    let id = id.clone();
                    let tree = Arc::clone(&tree);
                    move || {
                        let (value, bytes) = proven_tree(&id, &*tree, data)?;
                        let make = {
                            let tree = Arc::clone(&tree);
                            move || tree.codec()
                        };
                        Ok(codec_runner(operation, value, bytes, make))
                    }
                });
                Arm { id, spec, prepare }
            })
            .collect();
        let encoder = operations.contains(&Operation::Encode).then(|| {
            let encode: EncodeOnce = {
                let tree = Arc::clone(&tree);
                Box::new(move || tree.stable_bytes(data))
            };
            let check: CheckBytes = {
                let tree = Arc::clone(&tree);
                Box::new(move |bytes| tree.holds(&tree.codec().decode(bytes)?, data))
            };
            Encoder {
                id: codec.clone(),
                spec,
                typed: false,
                encode,
                // Property tests generate values of the model types, never data.
                round_trip: Box::new(|_| None),
                check,
            }
        });
        let expected: OnceLock<Option<T::Tree>> = OnceLock::new();
        let decode: DecodeAny = Box::new(move |bytes| {
            let decoded = tree.codec().decode(bytes)?;
            let expected = expected.get_or_init(|| tree.tree(data).ok());
            Ok(expected
                .as_ref()
                .is_some_and(|expected| tree.same(expected, &decoded)))
        });
        let decoder = Decoder {
            id: ArmId {
                codec,
                operation: Operation::Decode,
                mode: Mode::Dynamic,
            },
            decode,
        };
        DataArms {
            arms,
            encoder,
            decoder,
        }
    }
}

/// The tree of `data` and its encoding, proven: the tree holds the data, and one codec decodes
/// to the same tree what another encoded.
fn proven_tree<D, T: DataTree<D>>(id: &ArmId, tree: &T, data: &D) -> Result<(T::Tree, Vec<u8>)> {
    let value = tree
        .tree(data)
        .map_err(|error| error.context(format!("{id}: the data does not fit the format")))?;
    if let Some(difference) = tree.holds(&value, data)? {
        bail!("{id}: the format's tree of the data differs from it at {difference}");
    }
    let mut out = Vec::new();
    let bytes = tree
        .codec()
        .encode(&value, &mut out)
        .map_err(|error| error.context(format!("{id}: encode failed")))?
        .to_vec();
    let decoded = tree
        .codec()
        .decode(&bytes)
        .map_err(|error| error.context(format!("{id}: decode of its own encoding failed")))?;
    if !tree.same(&decoded, &value) {
        let difference = tree
            .holds(&decoded, data)?
            .map_or(String::new(), |difference| format!(": {difference}"));
        bail!(
            "{id}: decode(encode(x)) != x ({} encoded bytes){difference}",
            bytes.len()
        );
    }
    Ok((value, bytes))
}

/// That `decoder` decodes `bytes` to the payload, and that every non-empty string of the
/// decoded value lies in the bytes it borrows from (at least one string must).
fn prove_borrowed<B: Borrowed, D: BorrowedDecode<B>>(
    id: &ArmId,
    model: &B,
    decoder: &mut D,
    bytes: &[u8],
) -> Result<()> {
    let (owned, strings) = {
        let value = decoder
            .decode_borrowed(bytes)
            .map_err(|error| error.context(format!("{id}: borrowed decode failed")))?;
        let strings: Vec<std::ops::Range<usize>> = B::strings(&value)
            .into_iter()
            .filter(|string| !string.is_empty())
            .map(|string| address_range(string.as_bytes()))
            .collect();
        (B::to_owned_model(&value), strings)
    };
    if &owned != model {
        bail!("{id}: the borrowed value holds other data than the payload");
    }
    let source = decoder.source(bytes);
    if strings.is_empty() {
        bail!("{id}: the borrowed value has no string to borrow");
    }
    let copied = strings
        .iter()
        .filter(|string| string.start < source.start || string.end > source.end)
        .count();
    if copied > 0 {
        bail!(
            "{id}: {copied} of {} strings do not point into the decoded bytes (copied, not borrowed)",
            strings.len()
        );
    }
    Ok(())
}

/// Encodes with one codec instance and decodes with another, so no state carried inside a
/// codec can fake a round trip; then compares with the original.
fn verify<W: Value, C: Codec<W>>(id: &ArmId, value: &W, make: fn() -> C) -> Result<Vec<u8>> {
    let bytes = encoded(id, value, make)?;
    let decoded = make()
        .decode(&bytes)
        .map_err(|error| error.context(format!("{id}: decode of its own encoding failed")))?;
    if &decoded != value {
        bail!("{id}: decode(encode(x)) != x ({} encoded bytes)", bytes.len());
    }
    Ok(bytes)
}

/// `value` encoded by a fresh codec.
fn encoded<W: Value, C: Codec<W>>(id: &ArmId, value: &W, make: fn() -> C) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    Ok(make()
        .encode(value, &mut out)
        .map_err(|error| error.context(format!("{id}: encode failed")))?
        .to_vec())
}

fn codec_runner<W: Value, C: Codec<W>>(
    operation: Operation,
    value: W,
    bytes: Vec<u8>,
    make: impl Fn() -> C,
) -> Prepared {
    let encoded_bytes = bytes.len();
    let out = Vec::with_capacity(encoded_bytes);
    let runner: Box<dyn Runner> = match operation {
        Operation::Encode => Box::new(EncodeRunner {
            codec: make(),
            value,
            out,
        }),
        Operation::Decode => Box::new(DecodeRunner {
            codec: make(),
            bytes,
            value: PhantomData,
        }),
        Operation::RoundTrip => Box::new(RoundTripRunner {
            encoder: make(),
            decoder: make(),
            value,
            out,
        }),
        _ => unreachable!("a codec's own arms are encode, decode and round-trip"),
    };
    Prepared {
        runner,
        encoded_bytes,
    }
}

/// A compression arm over a codec's encoded `bytes`: what `mb_per_s` counts is those bytes
/// (the uncompressed size), for compression and decompression alike.
fn compression_runner(operation: Operation, bytes: Vec<u8>) -> Result<Prepared> {
    let encoded_bytes = bytes.len();
    let runner = match operation {
        Operation::CompressZstd => compress_runner::<Zstd>(bytes)?,
        Operation::DecompressZstd => decompress_runner::<Zstd>(bytes)?,
        Operation::CompressZlib => compress_runner::<Zlib>(bytes)?,
        Operation::DecompressZlib => decompress_runner::<Zlib>(bytes)?,
        _ => unreachable!("only the compression operations have a compression runner"),
    };
    Ok(Prepared {
        runner,
        encoded_bytes,
    })
}

/// Compresses a codec's encoded bytes, after proving that they come back whole and that the
/// timed compressor writes the bytes proven.
fn compress_runner<Z: Compressor>(bytes: Vec<u8>) -> Result<Box<dyn Runner>> {
    let proven = compress::verified::<Z>(&bytes)?;
    let mut compressor = Z::new()?;
    let mut out = Vec::new();
    compressor.compress(&bytes, &mut out)?;
    if out != proven {
        bail!("the timed compressor wrote other bytes than the proven ones");
    }
    Ok(Box::new(CompressRunner {
        compressor,
        bytes,
        out,
    }))
}

/// Decompresses a codec's encoded bytes, compressed once untimed, after proving that the timed
/// decompressor gives them back whole.
fn decompress_runner<Z: Compressor>(bytes: Vec<u8>) -> Result<Box<dyn Runner>> {
    let compressed = compress::verified::<Z>(&bytes)?;
    let mut decompressor = Z::new()?;
    let mut out = Vec::new();
    decompressor.decompress(&compressed, &mut out)?;
    if out != bytes {
        bail!("decompress(compress(bytes)) != bytes");
    }
    Ok(Box::new(DecompressRunner {
        decompressor,
        compressed,
        out,
    }))
}

/// Encode into a buffer that is cleared, not freed, between iterations.
struct EncodeRunner<W, C> {
    codec: C,
    value: W,
    out: Vec<u8>,
}

impl<W: Value, C: Codec<W>> Runner for EncodeRunner<W, C> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            self.out.clear();
            black_box(self.codec.encode(black_box(&self.value), &mut self.out)?);
        }
        Ok(())
    }
}

/// Decode into an owned value, which is dropped inside the loop as a real consumer drops it.
struct DecodeRunner<W, C> {
    codec: C,
    bytes: Vec<u8>,
    value: PhantomData<fn() -> W>,
}

impl<W: Value, C: Codec<W>> Runner for DecodeRunner<W, C> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            black_box(self.codec.decode(black_box(&self.bytes))?);
        }
        Ok(())
    }
}

/// A sender's encode then a receiver's decode: two codec instances, as on two ends of a wire.
struct RoundTripRunner<W, C> {
    encoder: C,
    decoder: C,
    value: W,
    out: Vec<u8>,
}

impl<W: Value, C: Codec<W>> Runner for RoundTripRunner<W, C> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            self.out.clear();
            let bytes = self.encoder.encode(black_box(&self.value), &mut self.out)?;
            black_box(self.decoder.decode(bytes)?);
        }
        Ok(())
    }
}

/// Compression of the same bytes into a buffer that is cleared, not freed, between iterations,
/// by one compressor whose context is reused (as [`crate::compress`] describes).
struct CompressRunner<Z> {
    compressor: Z,
    bytes: Vec<u8>,
    out: Vec<u8>,
}

impl<Z: Compressor> Runner for CompressRunner<Z> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            self.compressor.compress(black_box(&self.bytes), &mut self.out)?;
            black_box(&mut self.out);
        }
        Ok(())
    }
}

/// Decompression of the same bytes into a reused buffer (its capacity holds the whole output
/// from the proof on) by one decompressor whose context is reused.
struct DecompressRunner<Z> {
    decompressor: Z,
    compressed: Vec<u8>,
    out: Vec<u8>,
}

impl<Z: Compressor> Runner for DecompressRunner<Z> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            self.decompressor
                .decompress(black_box(&self.compressed), &mut self.out)?;
            black_box(&mut self.out);
        }
        Ok(())
    }
}

/// An operation on the encoded bytes alone (in-place access, dynamic decode): its result is
/// dropped inside the loop like a typed decode's value. The closure's type is concrete, so the
/// loop stays monomorphic.
struct OnBytes<F> {
    bytes: Vec<u8>,
    operation: F,
}

impl<T, F: FnMut(&[u8]) -> Result<T>> Runner for OnBytes<F> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            black_box((self.operation)(black_box(&self.bytes))?);
        }
        Ok(())
    }
}

fn on_bytes<T, F: FnMut(&[u8]) -> Result<T> + 'static>(bytes: Vec<u8>, operation: F) -> Prepared {
    let encoded_bytes = bytes.len();
    Prepared {
        runner: Box::new(OnBytes { bytes, operation }),
        encoded_bytes,
    }
}

/// Writes the two values of an update in turn into the same buffer.
struct UpdateRunner<P: UpdateField, U> {
    bytes: Vec<u8>,
    update: U,
    values: [P::Scalar; 2],
    model: PhantomData<fn() -> P>,
}

impl<P: UpdateField, U: Update<P>> Runner for UpdateRunner<P, U> {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for iteration in 0..iterations {
            let value = self.values[(iteration & 1) as usize];
            self.update.update(black_box(&mut self.bytes), black_box(value))?;
        }
        black_box(&self.bytes);
        Ok(())
    }
}

/// Only the copy into a reused scratch buffer that a copying decoder makes first: the whole
/// input, or each line on its own (NDJSON).
struct CopyRunner {
    bytes: Vec<u8>,
    scratch: Vec<u8>,
    per_line: bool,
}

impl Runner for CopyRunner {
    fn run(&mut self, iterations: u64) -> Result<()> {
        for _ in 0..iterations {
            let input = black_box(&self.bytes);
            if self.per_line {
                for line in input.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()) {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(line);
                    black_box(&mut self.scratch);
                }
            } else {
                self.scratch.clear();
                self.scratch.extend_from_slice(input);
                black_box(&mut self.scratch);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::{Order, OrderRef};

    #[test]
    fn one_arm_has_one_label_path_and_display() {
        let copy = ArmId::typed("json", "simd-json", COPY_ONLY, "readings", Operation::Decode)
            .framed(Framing::Ndjson);
        assert_eq!(copy.label(), "json/simd-json[copy-only] ndjson");
        assert_eq!(copy.path(), "json/simd-json[copy-only]/readings/decode/ndjson");
        assert_eq!(
            copy.to_string(),
            "json/simd-json[copy-only] readings decode ndjson"
        );
        assert!(copy.is_baseline());
        let dynamic = ArmId {
            mode: Mode::Dynamic,
            ..ArmId::typed("json", "serde_json", "", "order", Operation::Decode)
        };
        assert_eq!(dynamic.label(), "json/serde_json dynamic");
        assert_eq!(dynamic.decoder_label(), "json/serde_json dynamic");
        assert_eq!(
            ArmId::typed("flatbuffers", "flatbuffers", "", "order", Operation::AccessAll).decoder_label(),
            "flatbuffers/flatbuffers access-all"
        );
    }

    #[test]
    fn the_arms_of_each_data_payload_sort_together() {
        let arm = |payload: &str, operation| ArmId::typed("json", "serde_json", "", payload, operation);
        let mut ids = [
            arm("data:twitter", Operation::Decode),
            arm("data:canada", Operation::Encode),
            arm("order", Operation::Decode),
            arm("data:twitter", Operation::Encode),
            arm("data:canada", Operation::Decode),
        ];
        ids.sort_by_key(ArmId::sort_key);
        let order: Vec<String> = ids.iter().map(ToString::to_string).collect();
        assert_eq!(
            order,
            [
                "json/serde_json order decode",
                "json/serde_json data:canada encode",
                "json/serde_json data:canada decode",
                "json/serde_json data:twitter encode",
                "json/serde_json data:twitter decode",
            ]
        );
    }

    /// A compressor that loses the last byte on the way back.
    struct Lossy(Zlib);

    impl Compressor for Lossy {
        fn new() -> Result<Self> {
            Ok(Lossy(Zlib::new()?))
        }
        fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
            self.0.compress(input, out)
        }
        fn decompress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
            self.0.decompress(input, out)?;
            out.pop();
            Ok(())
        }
    }

    /// Decodes `order` from a copy of the input it keeps: borrowed from the copy, which is a
    /// copy in disguise unless it says so (`source`), as simd-json's scratch does.
    struct CopyingDecoder {
        copy: Vec<u8>,
        says_so: bool,
    }

    impl BorrowedDecode<Order> for CopyingDecoder {
        fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<OrderRef<'a>> {
            self.copy = bytes.to_vec();
            Ok(serde_json::from_slice(&self.copy)?)
        }

        fn source(&self, input: &[u8]) -> std::ops::Range<usize> {
            address_range(if self.says_so { &self.copy } else { input })
        }
    }

    struct InputDecoder;

    impl BorrowedDecode<Order> for InputDecoder {
        fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<OrderRef<'a>> {
            Ok(serde_json::from_slice(bytes)?)
        }
    }

    #[test]
    fn a_compression_arm_is_timed_only_after_its_bytes_come_back_whole() {
        let bytes = b"the same words, the same words, the same words".to_vec();
        for runner in [compress_runner::<Lossy>, decompress_runner::<Lossy>] {
            let error = runner(bytes.clone())
                .err()
                .expect("a lossy compressor is refused");
            assert!(
                format!("{error:#}").contains("decompress(compress(bytes)) != bytes"),
                "{error:#}"
            );
        }
        for runner in [
            compress_runner::<Zlib>,
            decompress_runner::<Zlib>,
            compress_runner::<Zstd>,
        ] {
            runner(bytes.clone()).unwrap().run(3).unwrap();
        }
    }

    #[test]
    fn a_borrowed_decode_proves_its_strings_point_into_the_bytes_it_decoded() {
        let order: &Order = crate::payload::value_of("order").unwrap();
        let bytes = serde_json::to_vec(order).unwrap();
        let id = ArmId {
            mode: Mode::Borrowed,
            ..ArmId::typed("json", "test", "", "order", Operation::Decode)
        };
        assert_eq!(id.label(), "json/test borrowed");
        prove_borrowed(&id, order, &mut InputDecoder, &bytes).unwrap();
        let mut copying = CopyingDecoder {
            copy: Vec::new(),
            says_so: false,
        };
        let error = prove_borrowed(&id, order, &mut copying, &bytes)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("5 of 5 strings do not point into the decoded bytes"),
            "{error}"
        );
        copying.says_so = true;
        prove_borrowed(&id, order, &mut copying, &bytes).unwrap();
        let mut other = order.clone();
        other.sku.push('X');
        let error = prove_borrowed(&id, &other, &mut InputDecoder, &bytes)
            .unwrap_err()
            .to_string();
        assert!(error.contains("other data than the payload"), "{error}");
    }

    #[test]
    fn names_are_the_one_spelling_in_files() {
        for operation in Operation::ALL {
            assert_eq!(Operation::from_name(operation.name()), Some(operation));
        }
        let id = ArmId::typed("a", "b", "", "order", Operation::RoundTrip);
        let json = serde_json::to_string(&id).unwrap();
        assert!(json.contains("\"roundtrip\""), "{json}");
        assert_eq!(serde_json::from_str::<ArmId>(&json).unwrap(), id);
        let unknown = json.replace("roundtrip", "teleport");
        let error = serde_json::from_str::<ArmId>(&unknown).unwrap_err().to_string();
        assert!(error.contains("unknown \"teleport\""), "{error}");
    }
}

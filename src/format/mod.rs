//! The registry: every arm, every encoder and decoder, and every combination that cannot
//! exist with its reason, from one file per format (its `mod` line below) and one Cargo
//! feature per format, named like the format. Cargo.toml's `default` list is the list of
//! formats: [`all`] is generated from it, in its order.
//!
//! A format file exposes `pub static FORMAT: Format`, whose `register` adds the format's codecs
//! for every payload to the [`Registry`] and lists what it cannot carry.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::arm::{
    Access, Arm, ArmId, Backend, BorrowedDecode, Codec, CodecArms, CodecId, DataArms, DataTree, Decoder,
    Dynamic, Encoder, Framing, Mode, Operation, Update, Value,
};
use crate::payload::data::{self, DataPayload, TypedRecord};
use crate::payload::fields::UpdateField;
use crate::payload::{Borrowed, Model, Payload, PayloadSpec};

#[cfg(feature = "avro")]
pub mod avro;
#[cfg(feature = "bilrost")]
pub mod bilrost;
#[cfg(feature = "bincode")]
pub mod bincode;
#[cfg(feature = "bitcode")]
pub mod bitcode;
#[cfg(feature = "borsh")]
pub mod borsh;
#[cfg(feature = "bson")]
pub mod bson;
#[cfg(feature = "capnp")]
pub mod capnp;
#[cfg(feature = "cbor")]
pub mod cbor;
#[cfg(feature = "csv")]
pub mod csv;
#[cfg(feature = "dbus")]
pub mod dbus;
#[cfg(feature = "flatbuffers")]
pub mod flatbuffers;
#[cfg(feature = "flexbuffers")]
pub mod flexbuffers;
#[cfg(feature = "fory")]
pub mod fory;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "msgpack")]
pub mod msgpack;
#[cfg(feature = "nanoserde")]
pub mod nanoserde;
#[cfg(feature = "postcard")]
pub mod postcard;
#[cfg(feature = "protobuf")]
pub mod protobuf;
#[cfg(feature = "rkyv")]
pub mod rkyv;
#[cfg(feature = "ron")]
pub mod ron;
#[cfg(feature = "savefile")]
pub mod savefile;
#[cfg(feature = "wincode")]
pub mod wincode;

/// A format: its name (also its Cargo feature), what it is, how reports draw it, what each of
/// its backends is, and its registration.
pub struct Format {
    pub name: &'static str,
    /// One line about the format and its backends (no versions: [`BackendDoc::crates`] has
    /// them).
    pub about: &'static str,
    /// Its colour (RGB) in every chart, so a format looks the same across reports.
    pub colour: [u8; 3],
    /// What it offers besides speed, as its specification and documentation state: the
    /// capability table (docs/capabilities.md, the report) shows it beside what serbench
    /// derives (zero-copy arms, crate facts, hostile-input outcomes).
    pub capabilities: Capabilities,
    /// One entry per backend and variant the format registers: the formats table in README
    /// (`serbench list --formats --markdown`) is made from these.
    pub backends: &'static [BackendDoc],
    /// Independent benchmarks of some of its arms (at least one): the library called directly,
    /// as its documentation shows, on the same data (`cargo bench --bench fidelity`).
    pub fidelity: &'static [Fidelity],
    pub register: fn(&mut Registry),
    /// What the format does with data that has no Rust types (`--data FILE`, `corpus:<name>`).
    pub data: DataSupport,
    /// What it needs of the Rust types generated for such data (`--typed`).
    pub typed: TypedSupport,
    /// How `serbench evolve` writes with one version of a type and reads with another.
    pub evolution: EvolutionSupport,
}

/// How `serbench evolve` exercises a format's own way of meeting a changed schema.
pub enum EvolutionSupport {
    /// Its backends `evolve` drives. `serde`: each type a [`crate::shape::Shape`] that reads and
    /// writes as serde's derive would for it, with derive's `default` and `alias` attributes.
    /// `schema`: driven by a schema made from each shape at run time, in the format's own schema
    /// language with its own evolution mechanism (field numbers, ids, resolved schemas).
    Measured {
        serde: &'static [SerdeEvolution],
        schema: &'static [SchemaEvolution],
    },
    /// Not measured yet: the one-line reason.
    Unmeasured(&'static str),
}

/// A serde backend's bytes of a shaped value, and a value read back by a shape.
pub struct SerdeEvolution {
    pub backend: &'static str,
    pub variant: &'static str,
    pub encode: fn(&crate::shape::Shaped) -> Result<Vec<u8>, String>,
    pub decode: fn(&[u8], crate::shape::Seed) -> Result<serde_json::Value, String>,
}

/// A schema-driven backend's bytes of a value written with one shape's schema, and a value read
/// back with another's: `decode` gets both, for formats whose reader is given the writer's schema
/// (Avro); the others ignore it.
pub struct SchemaEvolution {
    pub backend: &'static str,
    pub variant: &'static str,
    /// The mechanism, in a few words ("field numbers", "writer and reader schemas resolved").
    pub mechanism: &'static str,
    pub encode: fn(&crate::shape::Shape, &serde_json::Value) -> Result<Vec<u8>, String>,
    pub decode: fn(
        writer: &crate::shape::Shape,
        reader: &crate::shape::Shape,
        &[u8],
    ) -> Result<serde_json::Value, String>,
    /// A format whose bytes carry the writing program's version number (savefile): how the old
    /// program (version 0) and the new one (version 1) write and read; `encode` and `decode`
    /// above are then version 0's. `None` for the others, whose two programs differ only by their
    /// types.
    pub versioned: Option<Versioned>,
}

/// A schema-driven backend whose programs are numbered: the old program is version 0 and its type
/// the old shape; the new program is version 1 and declares its type with both versions' fields
/// (each with the versions it exists in), from the old and the new shape.
pub struct Versioned {
    /// Whether the new program can declare its type from the old one (`Err`: why not, and the
    /// change's cells are "cannot-express").
    pub expressible: fn(old: &crate::shape::Shape, new: &crate::shape::Shape) -> Result<(), String>,
    /// A value of `shape` as the program of `version` writes it.
    pub encode: fn(&crate::shape::Shape, version: u32, &serde_json::Value) -> Result<Vec<u8>, String>,
    /// Bytes written with `writer` read by the program of `version` whose type is `reader`: at
    /// version 1 `writer` is the old shape the new program declared its type from.
    pub decode: fn(
        writer: &crate::shape::Shape,
        reader: &crate::shape::Shape,
        version: u32,
        &[u8],
    ) -> Result<serde_json::Value, String>,
}

/// A format's documented properties, one per format file.
pub struct Capabilities {
    /// The bytes carry what they hold (types, and field names or tags), so a reader without the
    /// schema or the Rust types can decode them.
    pub self_describing: bool,
    /// How the format meets a changed schema, as its documentation says (one line).
    pub evolution: &'static str,
    /// Languages with maintained implementations.
    pub languages: &'static [&'static str],
    /// Where that list comes from.
    pub languages_source: &'static str,
}

/// Whether a format can carry a data payload (a JSON file read at run time, with an inferred
/// schema and no compiled Rust types), and how.
pub enum DataSupport {
    /// Registers the format's arms for one data payload: its own value tree built from the
    /// records ([`Registry::data_tree`], the schema at [`DataPayload::schema`]), or, where this
    /// data does not fit, [`Registry::unsupported`] with the reason (a conflict, a null).
    Arms(fn(&mut Registry, &'static DataPayload)),
    /// The format cannot carry any data without compiled Rust types: the one-line reason, listed
    /// as unsupported for every data payload.
    Unsupported(&'static str),
}

/// What a format needs of the generated types to carry the data typed.
pub enum TypedSupport {
    /// The generated structs carry the format: its derives, and its `register_typed` registers
    /// the arms (a generic function `register_typed<P>(&mut Registry, &Payload<P>)` in the
    /// format's file, with the format's bounds).
    Derive(&'static TypedDerive),
    /// The format cannot carry typed data yet: the one-line reason.
    Unsupported(&'static str),
}

/// The derive lines a format adds to every generated struct.
pub struct TypedDerive {
    /// Derive macros, by path (`bitcode::Encode`); serde's are on every struct.
    pub derives: &'static [&'static str],
    /// The crates those paths name: the generated crate depends on them exactly as serbench does
    /// (the same line of serbench's Cargo.toml), so it builds nothing serbench has not built.
    pub crates: &'static [&'static str],
    /// An attribute on every field, `{index}` standing for its position (minicbor's `n({index})`
    /// keys), or empty.
    pub field_attribute: &'static str,
    /// What of the data (its typed schema, whether it is a list) the format cannot carry with
    /// these types, and why.
    pub refuses: fn(&DataPayload) -> Option<String>,
    /// What the format adds to the generated crate for one data payload's module: called only
    /// where [`TypedDerive::refuses`] found nothing.
    pub items: fn(&TypedModule) -> TypedItems,
    /// The format changes a scalar in place (`update`): its `register_typed_update` registers
    /// that arm where the data has a scalar to change ([`crate::payload::data::update_target`]),
    /// and the registry lists the reason where it has none.
    pub in_place_update: bool,
    /// Whether the format decodes the data's borrowed twin types (the borrowed mode).
    pub borrowed: TypedBorrowed,
}

/// What a format's borrowed mode needs of the generated types.
pub enum TypedBorrowed {
    /// Its `register_typed_borrowed` registers the borrowed decodes of the twin types (`RecordRef<'a>`),
    /// which get these derives (by path, beside serde's `Deserialize`) and, on each field that
    /// borrows, this attribute (`{index}` standing for its position) in place of
    /// [`TypedDerive::field_attribute`].
    Arms {
        derives: &'static [&'static str],
        field_attribute: &'static str,
    },
    /// No backend of the format decodes borrowing: the one-line reason.
    Not(&'static str),
}

/// The generated module of one data payload, as a format's [`TypedDerive::items`] sees it.
pub struct TypedModule<'a> {
    pub data: &'a DataPayload,
    /// Its number in the crate: the module `data_<index>`.
    pub index: usize,
    /// The payload type: `Records` (a list's batch) or `Document`.
    pub root: &'a str,
    /// Every struct of the module and its fields, in order, the root last.
    pub structs: &'a [TypedRecord],
    /// The scalar the zero-copy formats' `update` arms change, or why there is none.
    pub update: &'a Result<crate::payload::data::UpdateTarget, String>,
    /// The struct of each record, by its schema path (`$`, `$.user`, `$.items[]`, `$.m.*`, the
    /// schema writers' spelling).
    pub records: &'a BTreeMap<String, TypedRecord>,
}

/// Files and Rust items a format adds to the generated crate beyond its derives.
#[derive(Debug, Default)]
pub struct TypedItems {
    /// Files of the crate (a path relative to it, the text): a schema file, say. Never
    /// `build.rs`, which is made of every format's [`BuildStep`].
    pub files: Vec<(String, String)>,
    /// Rust items in the data payload's module, beside its types.
    pub rust: String,
    /// Crates the crate's build script needs (`[build-dependencies]`, as serbench's).
    pub build_crates: Vec<&'static str>,
    /// The format's step of the crate's build script (code generation from its schema files),
    /// if it needs one: the same for every payload, so written once.
    pub build_step: Option<BuildStep>,
}

/// A format's step of the generated crate's one build script: the module `build/{name}.rs`, whose
/// `pub fn run()` the script's `main` calls once, however many payloads need it, so several
/// formats can each generate code at build time.
#[derive(Clone, Copy, Debug)]
pub struct BuildStep {
    /// The module's name: the format's.
    pub name: &'static str,
    /// The module's source.
    pub source: &'static str,
}

impl TypedDerive {
    /// A serde format: serde's derives (on every struct) are all it needs, for every schema.
    pub const SERDE: TypedDerive = TypedDerive {
        derives: &[],
        crates: &[],
        field_attribute: "",
        refuses: TypedDerive::any_schema,
        items: TypedDerive::no_items,
        in_place_update: false,
        borrowed: TypedBorrowed::Arms {
            derives: &[],
            field_attribute: "",
        },
    };

    /// The formats whose derives accept every schema.
    pub fn any_schema(_: &DataPayload) -> Option<String> {
        None
    }

    /// The formats whose derives are all they need.
    pub fn no_items(_: &TypedModule) -> TypedItems {
        TypedItems::default()
    }
}

/// Why the zero-copy formats have no borrowed decode.
pub const READS_IN_PLACE: &str = "zero-copy format: its access arms already read every string in place from the buffer; a borrowed struct would only copy out what access reads";

/// The reason of the formats that encode only types compiled into the program.
pub const NEEDS_RUST_TYPES: &str =
    "no value tree: it decodes only into compiled Rust types (--typed generates them from the data)";

/// One arm of a format measured without serbench's harness: `case` prepares everything the
/// call needs (untimed) and returns the call, one operation per invocation, written straight
/// against the library. `serbench fidelity` pairs criterion's mean of it with serbench's mean
/// of the same arm (typed, document framing).
pub struct Fidelity {
    pub backend: &'static str,
    pub variant: &'static str,
    pub payload: &'static str,
    pub operation: Operation,
    pub case: fn() -> Box<dyn FnMut()>,
}

impl Fidelity {
    /// The arm of `format` this case measures (typed, document framing); its path is the
    /// case's criterion id.
    pub fn arm(&self, format: &str) -> ArmId {
        ArmId {
            codec: CodecId {
                format: format.to_string(),
                backend: self.backend.to_string(),
                variant: self.variant.to_string(),
                payload: self.payload.to_string(),
                framing: Framing::Document,
            },
            operation: self.operation,
            mode: Mode::Typed,
        }
    }
}

/// What a backend (and variant) of a format is built on and how it treats buffers.
pub struct BackendDoc {
    pub backend: &'static str,
    /// Empty for the backend's plain use, as in [`Backend::variant`].
    pub variant: &'static str,
    /// The crates it calls, by package name; their locked versions are shown
    /// ([`crate_version`]). Empty for a baseline that calls no library.
    pub crates: &'static [&'static str],
    /// What else to know about those crates (features, maintenance state), or empty.
    pub crate_note: &'static str,
    /// The schema it uses, or `-`.
    pub schema: &'static str,
    /// What it reuses between calls and what it allocates: how it was set up for speed.
    pub buffer_policy: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/crate_versions.rs"));

/// The version Cargo.lock resolves a direct dependency to.
pub fn crate_version(name: &str) -> Option<&'static str> {
    CRATE_VERSIONS
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
        .map(|(_, version)| *version)
}

/// The enabled format called `name`.
pub fn by_name(name: &str) -> Option<&'static Format> {
    all().into_iter().find(|format| format.name == name)
}

// `all()`: every enabled format in the order of Cargo.toml's `default` list, written by
// build.rs from that list, so the list of formats exists once; and `BACKEND_FEATURES`.
include!(concat!(env!("OUT_DIR"), "/formats.rs"));

/// The package of a backend feature's crate: the feature's own name, unless Cargo.toml renames
/// the package to it (`rust-protobuf = { package = "protobuf", .. }`, [`BACKEND_PACKAGES`]).
pub fn backend_package(feature: &str) -> &str {
    BACKEND_PACKAGES
        .iter()
        .find(|(renamed, _)| *renamed == feature)
        .map_or(feature, |(_, package)| package)
}

/// The Cargo features a build of `format` enables: its own, and each other feature of the
/// `default` list (a backend's, [`BACKEND_FEATURES`], or another format's, as nanoserde's crate
/// is both a format and json's backend) whose package ([`backend_package`]) is a crate of one of
/// its backends.
pub fn features_of(format: &Format) -> Vec<&'static str> {
    let others = all()
        .into_iter()
        .map(|other| other.name)
        .chain(BACKEND_FEATURES.iter().copied())
        .filter(|feature| *feature != format.name)
        .filter(|feature| {
            format
                .backends
                .iter()
                .any(|doc| doc.crates.contains(&backend_package(feature)))
        });
    std::iter::once(format.name).chain(others).collect()
}

/// Whether `format` carries `data` typed, or why not.
pub fn plan(format: &Format, data: &DataPayload) -> Result<(), String> {
    typable(&data.typed_schema)?;
    match &format.typed {
        TypedSupport::Unsupported(reason) => Err(reason.to_string()),
        TypedSupport::Derive(derive) => (derive.refuses)(data).map_or(Ok(()), Err),
    }
}

/// Whether the data can have Rust types at all: not where one path holds two kinds.
pub fn typable(schema: &crate::payload::data::Schema) -> Result<(), String> {
    match schema.conflicts().first() {
        Some(conflict) => Err(format!(
            "{}: a conflict ({}): a generated field has one type",
            conflict.path,
            conflict.kinds.join(", ")
        )),
        None => Ok(()),
    }
}

/// A (format, backend, payload) combination that cannot exist, and why.
#[derive(Clone, Debug)]
pub struct Unsupported {
    pub format: &'static str,
    /// `*` when no backend of the format can carry the payload.
    pub backend: &'static str,
    pub payload: &'static str,
    /// `None`: the backend has no arm at all for the payload; otherwise only this operation
    /// is missing.
    pub operation: Option<Operation>,
    /// `None`: every mode (or the entry names a payload or an operation); otherwise only this
    /// mode of the decode is missing (the borrowed decode of a format that cannot borrow).
    pub mode: Option<Mode>,
    pub reason: String,
}

/// Every arm, every encoder and every unsupported combination of the enabled formats.
#[derive(Default)]
pub struct Registry {
    pub arms: Vec<Arm>,
    /// One per codec (sizes.csv's rows): where a data payload's value tree and its generated
    /// types (`--typed`) share a codec, the value tree's.
    pub encoders: Vec<Encoder>,
    /// The typed encoders of the codecs `encoders` holds a value tree's encoder for: `dump
    /// --typed` and `check --typed` use them ([`Encoder::typed`] marks the others).
    pub shadowed_typed: Vec<Encoder>,
    pub decoders: Vec<Decoder>,
    pub unsupported: Vec<Unsupported>,
    /// The data payloads (`--data`) after the built-in ones, and the request that read them,
    /// which a worker process needs to build the same registry.
    pub data: Vec<&'static DataPayload>,
    pub data_request: data::Request,
    /// The format whose `register` is running.
    format: &'static str,
    /// Registering a typed data payload ([`Registry::typed_scope`]): its dynamic arms come from the data's value
    /// trees ([`DataSupport`]), so the format's own dynamic decodes of the typed value are skipped.
    typed_data: bool,
}

impl Registry {
    /// The registry of every enabled format, in registry order.
    pub fn build() -> Registry {
        Registry::of_formats(|_| true)
    }

    /// [`Registry::build`], then every enabled format's arms (or reason) for each data payload
    /// `request` reads (after the built-in payloads, so their arms keep their indices).
    pub fn build_with_data(request: &data::Request) -> Result<Registry> {
        let mut registry = Registry::build();
        if request.sources.is_empty() {
            return Ok(registry);
        }
        registry.data = data::load(request)?;
        registry.data_request = request.clone();
        for format in all() {
            for &payload in &registry.data.clone() {
                registry.register_data(format, payload);
            }
        }
        Ok(registry)
    }

    /// `format`'s arms, or its reason, for the data payload `payload`.
    pub fn register_data(&mut self, format: &Format, payload: &'static DataPayload) {
        self.format = format.name;
        match format.data {
            DataSupport::Arms(register) => register(self, payload),
            DataSupport::Unsupported(reason) => self.unsupported(payload.spec, "*", reason),
        }
    }

    /// The registry of one format on one data payload, for the formats' tests: every arm's proof
    /// (its error, if any, by arm), and every reason.
    #[cfg(test)]
    pub(crate) fn data_proofs(
        format: &Format,
        payload: &'static DataPayload,
    ) -> (Vec<(String, Result<()>)>, Vec<String>) {
        let mut registry = Registry::default();
        registry.register_data(format, payload);
        let proofs = registry
            .arms
            .iter()
            .map(|arm| (arm.id.to_string(), arm.prepare().map(|_| ())))
            .collect();
        let reasons = registry
            .unsupported
            .iter()
            .map(|unsupported| unsupported.reason.clone())
            .collect();
        (proofs, reasons)
    }

    /// Removes the zero-copy formats' borrowed-mode entries, checking that there is one, with
    /// [`READS_IN_PLACE`], per payload with a borrowed type: their tests then count the rest.
    #[cfg(test)]
    pub(crate) fn take_reads_in_place(&mut self) {
        let (borrowed, rest) = std::mem::take(&mut self.unsupported)
            .into_iter()
            .partition::<Vec<_>, _>(|unsupported| unsupported.mode == Some(Mode::Borrowed));
        self.unsupported = rest;
        let payloads: Vec<&str> = borrowed.iter().map(|unsupported| unsupported.payload).collect();
        let expected: Vec<&str> = crate::payload::borrowed_specs()
            .iter()
            .map(|spec| spec.name)
            .collect();
        assert_eq!(payloads, expected);
        assert!(
            borrowed
                .iter()
                .all(|unsupported| unsupported.reason == READS_IN_PLACE)
        );
    }

    /// Every payload's spec: the built-in ones, then the data payloads.
    pub fn payloads(&self) -> Vec<&'static PayloadSpec> {
        let mut specs = crate::payload::specs();
        specs.extend(self.data.iter().map(|payload| payload.spec));
        specs
    }

    /// The compact serde_json size of every payload, data payloads included: the reference of
    /// `ratio_to_json`.
    pub fn json_reference_bytes(&self) -> BTreeMap<&'static str, usize> {
        let mut sizes = crate::payload::json_reference_bytes();
        sizes.extend(
            self.data
                .iter()
                .map(|payload| (payload.spec.name, payload.json_bytes)),
        );
        sizes
    }

    /// The registry of the enabled formats `keep` accepts (a worker process that needs one
    /// format builds only that one, so nothing else touches its heap).
    pub fn of_formats(keep: impl Fn(&str) -> bool) -> Registry {
        let mut registry = Registry::default();
        for format in all().into_iter().filter(|format| keep(format.name)) {
            registry.format = format.name;
            (format.register)(&mut registry);
        }
        registry
    }

    /// The arm `id`, if this registry has it.
    pub fn arm(&self, id: &ArmId) -> Option<&Arm> {
        self.arms.iter().find(|arm| arm.id == *id)
    }

    fn codec_id<P>(&self, payload: &Payload<P>, backend: Backend) -> CodecId {
        self.spec_codec_id(payload.spec, backend)
    }

    fn spec_codec_id(&self, payload: &'static PayloadSpec, backend: Backend) -> CodecId {
        CodecId {
            format: self.format.to_string(),
            backend: backend.name.to_string(),
            variant: backend.variant.to_string(),
            framing: backend.framing,
            payload: payload.name.to_string(),
        }
    }

    /// Registers `backend` of the current format for a data payload: the `operations` arms of
    /// the format's own value tree of the data (dynamic mode), its decoder, and its encoder when
    /// it has an encode arm. See [`Arm::data`].
    pub fn data_tree<T: DataTree<DataPayload>>(
        &mut self,
        payload: &'static DataPayload,
        backend: Backend,
        tree: T,
        operations: &[Operation],
    ) {
        let codec = self.spec_codec_id(payload.spec, backend);
        let DataArms {
            arms,
            encoder,
            decoder,
        } = Arm::data(codec, payload.spec, payload, tree, operations);
        self.arms.extend(arms);
        self.encoders.extend(encoder);
        self.decoders.push(decoder);
    }

    /// Registers `backend` of the current format for `payload`: its encode, decode and
    /// round-trip arms, its encoder and its decoder. `make` builds a fresh codec (and its
    /// reused buffers).
    pub fn codec<P: Model, C: Codec<P>>(&mut self, payload: &Payload<P>, backend: Backend, make: fn() -> C) {
        self.wire_codec(payload, backend, P::clone, |value| Ok(value.clone()), make);
    }

    /// Like [`codec`](Self::codec) for a codec of the format's own types `W` (e.g. prost
    /// messages), see [`Arm::codec`].
    pub fn wire_codec<P: Model, W: Value, C: Codec<W>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        to_wire: fn(&P) -> W,
        to_model: fn(&W) -> Result<P>,
        make: fn() -> C,
    ) {
        let codec = self.codec_id(payload, backend);
        let CodecArms {
            arms,
            encoder,
            decoder,
        } = Arm::codec(codec, payload.spec, payload.value, to_wire, to_model, make);
        self.arms.extend(arms);
        // sizes.csv has one row per codec: where the data's value tree already wrote this codec's
        // bytes, the typed arms' own encoded size is in their results rows.
        let mut encoder = encoder;
        encoder.typed = self.typed_data;
        if self.typed_data && self.encoders.iter().any(|known| known.id == encoder.id) {
            self.shadowed_typed.push(encoder);
        } else {
            self.encoders.push(encoder);
        }
        self.decoders.push(decoder);
    }

    /// Registers an in-place access arm (`AccessAll` or `AccessPartial`), see [`Arm::access`].
    pub fn access<P: Model, C: Codec<P>, A: Access<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        operation: Operation,
        make_codec: fn() -> C,
        make_access: fn() -> A,
    ) {
        let codec = self.codec_id(payload, backend);
        let (arm, decoder) = Arm::access(
            codec,
            payload.spec,
            operation,
            payload.value,
            make_codec,
            make_access,
        );
        self.arms.push(arm);
        self.decoders.push(decoder);
    }

    /// Registers an in-place update arm, see [`Arm::update`].
    pub fn update<P: Model + UpdateField, C: Codec<P>, U: Update<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        make_codec: fn() -> C,
        make_update: fn() -> U,
    ) {
        let codec = self.codec_id(payload, backend);
        let (arm, decoder) = Arm::update(codec, payload.spec, payload.value, make_codec, make_update);
        self.arms.push(arm);
        self.decoders.push(decoder);
    }

    /// Registers only the decode arm of a codec that must never see bytes it did not write
    /// itself (an `unsafe`, unvalidated read): proven like [`codec`](Self::codec)'s, on its own
    /// encoding, but with no decoder, so robustness, the fuzz target and the property tests never
    /// feed it, and no encoder (its bytes are those of the format's checked backend).
    pub fn trusted_decode<P: Model, C: Codec<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        make: fn() -> C,
    ) {
        let codec = self.codec_id(payload, backend);
        let CodecArms { arms, .. } = Arm::codec(
            codec,
            payload.spec,
            payload.value,
            P::clone,
            |value| Ok(value.clone()),
            make,
        );
        self.arms.extend(
            arms.into_iter()
                .filter(|arm| arm.id.operation == Operation::Decode),
        );
    }

    /// Registers an in-place access arm like [`access`](Self::access), without its decoder: for
    /// an access that must never see bytes it did not write itself (see
    /// [`trusted_decode`](Self::trusted_decode)).
    pub fn trusted_access<P: Model, C: Codec<P>, A: Access<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        operation: Operation,
        make_codec: fn() -> C,
        make_access: fn() -> A,
    ) {
        let codec = self.codec_id(payload, backend);
        let (arm, _never_fed_hostile_bytes) = Arm::access(
            codec,
            payload.spec,
            operation,
            payload.value,
            make_codec,
            make_access,
        );
        self.arms.push(arm);
    }

    /// Registers a dynamic decode arm into the format's value tree, see [`Arm::dynamic`].
    pub fn dynamic<P: Model, C: Codec<P>, D: Dynamic<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        make_codec: fn() -> C,
        make_dynamic: fn() -> D,
    ) {
        if self.typed_data {
            return;
        }
        let codec = self.codec_id(payload, backend);
        let (arm, decoder) = Arm::dynamic(codec, payload.spec, payload.value, make_codec, make_dynamic);
        self.arms.push(arm);
        self.decoders.push(decoder);
    }

    /// Registers a borrowed decode arm, see [`Arm::borrowed`].
    pub fn borrowed<B: Borrowed, C: Codec<B>, D: BorrowedDecode<B>>(
        &mut self,
        payload: &Payload<B>,
        backend: Backend,
        make_codec: fn() -> C,
        make_borrowed: fn() -> D,
    ) {
        let codec = self.codec_id(payload, backend);
        let (arm, decoder) = Arm::borrowed(codec, payload.spec, payload.value, make_codec, make_borrowed);
        self.arms.push(arm);
        self.decoders.push(decoder);
    }

    /// Registers a copy-only baseline, see [`Arm::copy_baseline`].
    pub fn copy_baseline<P: Model, C: Codec<P>>(
        &mut self,
        payload: &Payload<P>,
        backend: Backend,
        make_codec: fn() -> C,
    ) {
        let codec = self.codec_id(payload, backend);
        self.arms
            .push(Arm::copy_baseline(codec, payload.spec, payload.value, make_codec));
    }

    /// Records that the current format cannot carry the typed corpora
    /// ([`crate::payload::visit_corpora`]), for `reason`.
    pub fn unsupported_corpora(&mut self, reason: &str) {
        for spec in crate::payload::corpus_specs() {
            self.unsupported(spec, "*", reason);
        }
    }

    /// Records that `backend` (or `*`, every backend) of the current format cannot carry
    /// `payload`.
    pub fn unsupported(&mut self, payload: &PayloadSpec, backend: &'static str, reason: &str) {
        self.unsupported.push(Unsupported {
            format: self.format,
            backend,
            payload: payload.name,
            operation: None,
            mode: self.typed_data.then_some(Mode::Typed),
            reason: reason.to_string(),
        });
    }

    /// Runs `register` as `format`'s registration of a typed data payload (`--typed`,
    /// [`crate::typed::hook`]): what it registers or lists unsupported is `format`'s, mode
    /// `typed`, and the format's own dynamic decodes of the typed value are skipped.
    pub fn typed_scope<T>(
        &mut self,
        format: &'static Format,
        register: impl FnOnce(&mut Registry) -> T,
    ) -> T {
        self.format = format.name;
        self.typed_data = true;
        let result = register(self);
        self.typed_data = false;
        result
    }

    /// Records that the current format has no typed arm for the data payload `payload` (`--typed`),
    /// for `reason`; its dynamic arms are listed apart.
    pub fn unsupported_typed(&mut self, payload: &PayloadSpec, reason: &str) {
        self.unsupported.push(Unsupported {
            format: self.format,
            backend: "*",
            payload: payload.name,
            operation: None,
            mode: Some(Mode::Typed),
            reason: reason.to_string(),
        });
    }

    /// Records that `backend` of the current format has no `operation` arm for `payload`
    /// (it has its other arms).
    pub fn unsupported_operation(
        &mut self,
        payload: &PayloadSpec,
        backend: &'static str,
        operation: Operation,
        reason: &str,
    ) {
        self.unsupported.push(Unsupported {
            format: self.format,
            backend,
            payload: payload.name,
            operation: Some(operation),
            mode: self.typed_data.then_some(Mode::Typed),
            reason: reason.to_string(),
        });
    }

    /// Records that `backend` (or `*`, every backend) of the current format has no decode in
    /// `mode` for `payload` (it has its other arms).
    pub fn unsupported_mode(
        &mut self,
        payload: &PayloadSpec,
        backend: &'static str,
        mode: Mode,
        reason: &str,
    ) {
        self.unsupported.push(Unsupported {
            format: self.format,
            backend,
            payload: payload.name,
            operation: Some(Operation::Decode),
            mode: Some(mode),
            reason: reason.to_string(),
        });
    }

    /// Records that no backend of the current format decodes borrowing, for `reason`, for every
    /// payload that has a borrowed type.
    pub fn unsupported_borrowed(&mut self, reason: &str) {
        for spec in crate::payload::borrowed_specs() {
            self.unsupported_mode(spec, "*", Mode::Borrowed, reason);
        }
    }
}

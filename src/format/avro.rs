//! Apache Avro binary datums: the raw encoding of one value, with no object-container-file
//! header and no single-object framing, as a message bus or RPC layer carries Avro when both
//! ends already know the schema. The schemas are hand-written `.avsc` files under
//! `schemas/avro/`, one per payload type, that any Avro implementation can read; the
//! [`Native`] impls below tie each model type to its file. Two backends share them, both
//! through the model's serde derive, both typed:
//!
//! - `serde_avro_fast` 2.1: a serde-first reimplementation of Avro for speed.
//! - `apache-avro` 0.22 (the Apache project's Rust SDK) through its schema-aware serde
//!   serializer and deserializer, `GenericDatumWriter::write_ser` and
//!   `GenericDatumReader::read_deser`. 0.22 deprecates `to_avro_datum`/`from_avro_datum` in
//!   favour of these datum writers and readers, and `write_ser`/`read_deser` are their paths that
//!   skip the crate's `Value` tree, so they are its fastest datum path.
//!
//! Type mapping: `i64` is `long`, `f64` `double`, `String` `string`, `bool` `boolean`, `Vec`
//! an `array`, `BTreeMap<String, T>` a `map`, and the unit enum `OrderStatus` an Avro `enum`
//! whose symbols are the Rust variant names: both backends write a serde unit variant as the
//! symbol of the same name (not by serde's variant index) and read it back by name. Both
//! backends accept every schema and every payload, and write identical bytes (the tests check
//! that, and that each decodes the other's).
//!
//! Buffer policy:
//! - `serde_avro_fast` keeps its `SerializerConfig` (the parsed schema plus its field-reordering
//!   buffers) in the codec and reuses it for every encode, as its documentation recommends, and
//!   writes into the harness's reused output buffer; it decodes from the borrowed slice
//!   (`from_datum_slice`, which itself allocates nothing; the owned model's `String`s still do).
//! - `apache-avro` builds its datum writer and reader (the schema with its named types resolved)
//!   once per codec; `write_ser` writes straight into the reused output buffer, arrays and maps
//!   in a single block (no `target_block_size`, so no intermediate block buffer); `read_deser`
//!   reads the borrowed slice through `io::Read`. Neither builds a `Value` tree or allocates a
//!   `Vec` per datum.
//! - The dynamic decode (apache-avro only: serde_avro_fast has no value tree of its own) is
//!   `GenericDatumReader::read_value`, which builds apache-avro's `Value` tree against the
//!   schema: one allocation per string, per array and per map (a std `HashMap`), and every
//!   record's field names copied into it as `String`s.
//!
//! Not measured: apache-avro's `Value` encode (`to_value` + `to_avro_datum`, deprecated in
//! 0.22), which builds a whole `Value` tree per datum and `to_avro_datum` a fresh `Vec` per
//! datum. Its `Value::Map` is a std `HashMap`, so it writes map entries in a random order: valid
//! Avro, but bytes (and their zstd size) that change from run to run. Also not measured:
//! object container files (a header with the schema, sync markers: files, not messages) and
//! schema resolution between different writer and reader schemas.
//!
//! The serializer config and the datum writer and reader borrow the parsed schema, and a codec
//! must be `'static`, so each schema file is parsed once per process and backend, when its first
//! codec is built at registration (never inside timing), and lives as long as the process.
//!
//! Data payloads (`--data`), on the schema inferred from the file (`payload::data::avsc`: a
//! union for a conflict, `["null", T]` for what may be null or absent):
//! - `apache-avro` times its `Value` tree: built from the records against the schema (outside
//!   timing), written by `GenericDatumWriter::write_value_ref` (the crate's default, which
//!   validates the value against the schema first) and read by `read_value`. Its `Value::Map` is
//!   a std `HashMap`, so on data with maps the entry order, and the bytes, change from process to
//!   process: it then writes no sizes.csv row of its own (serde_avro_fast's bytes are the same
//!   datum with the entries sorted).
//! - `serde_avro_fast` has no tree of its own; it writes and reads the records as
//!   `serde_json::Value`s through its serde support, integers at float paths turned into
//!   floats first (its serializer does not widen them).
//!
//! Both compare what they decode with the records as a schema keeps them: a null field equals
//! an absent one, an integer the same float.
//!
//! Typed data (`--typed`): the generated crate holds the typed schema's `.avsc`
//! (`schemas/data_<n>.avsc`, [`data::avsc::typed`]) and ties the generated root type to it with
//! a [`Native`] impl, so both backends measure the generated types as they do the model's. serde
//! gives a field one name, the key, which every Avro field must spell: a key that is not an Avro
//! name (`3ds`, `content-type`) is a reason, not a mapped name.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::marker::PhantomData;
use std::sync::{Mutex, PoisonError};

use anyhow::{Context, Result, anyhow};
use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::writer::datum::GenericDatumWriter;
use serde_avro_fast::ser::SerializerConfig;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedItems, TypedModule, TypedSupport,
};
use crate::arm::{Backend, BorrowedDecode, Codec, DataTree, Dynamic, Mode, Operation};
use crate::payload::data::{self, DataPayload, Difference, Equivalence, Kind, Type};
use crate::payload::{
    Borrowed, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, Model, Order, Payload, Reading,
    Readings, TelemetryEvent, Visit, VisitBorrowed, visit_all, visit_borrowed,
};

pub static FORMAT: Format = Format {
    name: "avro",
    about: "Apache Avro datums, shared .avsc schemas: serde_avro_fast and apache-avro",
    colour: [0x55, 0x44, 0xAA],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "writer and reader schemas resolved: an added field needs a default, a removed one is skipped, a rename needs an alias; the reader needs the writer's schema",
        languages: &[
            "Java",
            "C",
            "C++",
            "C#",
            "Python",
            "Ruby",
            "PHP",
            "Perl",
            "JavaScript",
            "Rust",
        ],
        languages_source: "https://avro.apache.org/docs/ (the Apache Avro project's SDKs)",
    },
    backends: &[
        BackendDoc {
            backend: "serde_avro_fast",
            variant: "",
            crates: &["serde_avro_fast"],
            crate_note: "",
            schema: "`schemas/avro/*.avsc` (raw datums)",
            buffer_policy: "schema parsed once; `SerializerConfig` reused; writes into a reused `Vec`; `from_datum_slice` decodes from the borrowed bytes",
        },
        BackendDoc {
            backend: "apache-avro",
            variant: "",
            crates: &["apache-avro"],
            crate_note: "",
            schema: "`schemas/avro/*.avsc`, the same bytes",
            buffer_policy: "datum writer and reader built once per codec; `write_ser` into a reused `Vec`, `read_deser` from the bytes (no `Value` tree)",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "serde_avro_fast",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: serde_avro_fast_order_decode,
        },
        Fidelity {
            backend: "apache-avro",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: apache_avro_order_decode,
        },
    ],
    register: |registry| {
        visit_all(&mut Avro(registry));
        visit_borrowed(&mut Avro(registry));
        registry.unsupported_corpora(
            "no hand-written .avsc for the corpus types; data:<name> measures them on the inferred schema",
        );
    },
    typed: TypedSupport::Derive(&TypedDerive {
        refuses: typed_refuses,
        items: typed_items,
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(register_data),
    evolution: super::EvolutionSupport::Measured {
        schema: &[evolve::SERDE_EVOLUTION, evolve::EVOLUTION],
        serde: &[],
    },
};

mod evolve;

/// One `.avsc` file under `schemas/avro/`, compiled in.
#[derive(Debug)]
pub struct SchemaFile {
    /// The file name, which also keys the parsed-schema caches.
    pub name: &'static str,
    pub json: &'static str,
}

/// The Avro schema of a model type.
pub trait Native {
    /// The schema of a payload type; `None` for a record type that is never a payload on its
    /// own and is defined inline, as a named record, in the schemas of the payloads holding it.
    const SCHEMA: Option<SchemaFile>;
}

impl Native for Readings {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "readings.avsc",
        json: include_str!("../../schemas/avro/readings.avsc"),
    });
}

impl Native for Order {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "order.avsc",
        json: include_str!("../../schemas/avro/order.avsc"),
    });
}

impl Native for TelemetryEvent {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "telemetry.avsc",
        json: include_str!("../../schemas/avro/telemetry.avsc"),
    });
}

impl Native for CheckoutRequest {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "checkout-request.avsc",
        json: include_str!("../../schemas/avro/checkout-request.avsc"),
    });
}

impl Native for CheckoutResponse {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "checkout-response.avsc",
        json: include_str!("../../schemas/avro/checkout-response.avsc"),
    });
}

impl Native for Keyed {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "keyed.avsc",
        json: include_str!("../../schemas/avro/keyed.avsc"),
    });
}

impl Native for Items {
    const SCHEMA: Option<SchemaFile> = Some(SchemaFile {
        name: "items.avsc",
        json: include_str!("../../schemas/avro/items.avsc"),
    });
}

/// Defined inline in `readings.avsc` as `serbench.Reading`.
impl Native for Reading {
    const SCHEMA: Option<SchemaFile> = None;
}

/// Defined inline in `keyed.avsc` and `items.avsc` as `serbench.Item`.
impl Native for Item {
    const SCHEMA: Option<SchemaFile> = None;
}

/// The typed arms of a generated payload type (`--typed`): both backends, on its `.avsc`.
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Avro(registry).payload(payload);
}

/// The borrowed decode of a generated payload's twin type (`--typed`): serde_avro_fast's;
/// apache-avro's reason.
pub fn register_typed_borrowed<B: Borrowed + Native>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    Avro(registry).borrowed(payload);
}

fn typed_refuses(data: &DataPayload) -> Option<String> {
    data::avsc::typed(&data.typed_schema, true, &BTreeMap::new())
        .err()
        .map(|error| format!("{error:#} (Avro names are [A-Za-z_][A-Za-z0-9_]*, and serde keeps the key)"))
}

/// The typed schema's `.avsc` file and the generated root type's [`Native`] impl naming it.
fn typed_items(module: &TypedModule) -> TypedItems {
    let TypedModule {
        data,
        index,
        root,
        records,
        ..
    } = module;
    let schema = data::avsc::typed_text(&data.typed_schema, data.is_list(), records)
        .expect("typed_refuses found every field named");
    let file = format!("schemas/data_{index}.avsc");
    TypedItems {
        rust: format!(
            "/// The Avro schema of {root}, inferred from {origin}.
impl serbench::format::avro::Native for {root} {{
    const SCHEMA: Option<serbench::format::avro::SchemaFile> = Some(serbench::format::avro::SchemaFile {{
        name: \"data_{index}.avsc\",
        json: include_str!(\"../{file}\"),
    }});
}}
",
            origin = crate::escape::rust_comment(&data.origin),
        ),
        files: vec![(file, schema)],
        ..TypedItems::default()
    }
}

struct Avro<'a>(&'a mut Registry);

const SERDE_AVRO_FAST: Backend = Backend::new("serde_avro_fast");
const APACHE_AVRO: Backend = Backend::new("apache-avro");

impl<P: Model + Native> Visit<P> for Avro<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        register::<P, FastCodec<P>>(self.0, payload, SERDE_AVRO_FAST);
        if register::<P, ApacheSerde<P>>(self.0, payload, APACHE_AVRO) {
            self.0.dynamic(
                payload,
                APACHE_AVRO,
                built::<ApacheSerde<P>>,
                built::<ApacheTree<P>>,
            );
        }
    }
}

/// serde_avro_fast decodes borrowing; apache-avro cannot.
impl<B: Borrowed + Native> VisitBorrowed<B> for Avro<'_>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        // A payload whose schema does not build has no arms at all: `payload` listed it.
        if FastCodec::<B>::build().is_ok() {
            self.0.borrowed(
                payload,
                SERDE_AVRO_FAST,
                built::<FastCodec<B>>,
                built::<FastCodec<B>>,
            );
        }
        self.0.unsupported_mode(
            payload.spec,
            APACHE_AVRO.name,
            Mode::Borrowed,
            "apache-avro decodes the bytes into its owned `types::Value` tree first; serde then borrows from that tree, not from the input",
        );
    }
}

/// A codec whose construction can fail (its schema does not parse or does not fit).
trait Build: Sized {
    fn build() -> Result<Self>;
}

/// The harness's infallible constructor, for what [`register`] has already built once.
fn built<C: Build>() -> C {
    C::build().expect("it built when it was registered")
}

/// Registers `backend` for `payload` if its codec builds, and lists it unsupported with the
/// error otherwise; returns whether it registered.
fn register<P: Model + Native, C: Codec<P> + Build>(
    registry: &mut Registry,
    payload: &Payload<P>,
    backend: Backend,
) -> bool {
    match C::build() {
        Ok(_) => {
            registry.codec(payload, backend, built::<C>);
            true
        }
        Err(error) => {
            registry.unsupported(payload.spec, backend.name, &format!("{error:#}"));
            false
        }
    }
}

fn schema_file<P: Native>() -> Result<&'static SchemaFile> {
    const { P::SCHEMA.as_ref() }.ok_or_else(|| {
        anyhow!(
            "{} has no Avro schema file of its own",
            std::any::type_name::<P>()
        )
    })
}

/// Parsed schemas by file name, leaked once per file so codecs can borrow them for `'static`.
type SchemaCache<S> = Mutex<BTreeMap<&'static str, &'static S>>;

static FAST_SCHEMAS: SchemaCache<serde_avro_fast::Schema> = Mutex::new(BTreeMap::new());
static APACHE_SCHEMAS: SchemaCache<apache_avro::Schema> = Mutex::new(BTreeMap::new());

fn parsed_once<S: Sync>(
    cache: &SchemaCache<S>,
    file: &'static SchemaFile,
    parse: impl FnOnce(&str) -> Result<S>,
) -> Result<&'static S> {
    // A panic elsewhere while the lock was held cannot leave the map half-updated.
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(schema) = cache.get(file.name) {
        return Ok(schema);
    }
    let schema = parse(file.json).with_context(|| format!("the Avro schema {} does not parse", file.name))?;
    let schema: &'static S = Box::leak(Box::new(schema));
    cache.insert(file.name, schema);
    Ok(schema)
}

fn fast_schema<P: Native>() -> Result<&'static serde_avro_fast::Schema> {
    parsed_once(&FAST_SCHEMAS, schema_file::<P>()?, |json| Ok(json.parse()?))
}

fn apache_schema<P: Native>() -> Result<&'static apache_avro::Schema> {
    parsed_once(&APACHE_SCHEMAS, schema_file::<P>()?, |json| {
        Ok(apache_avro::Schema::parse_str(json)?)
    })
}

/// serde_avro_fast: the serializer config (schema and reusable buffers) lives in the codec.
pub struct FastCodec<P> {
    config: SerializerConfig<'static>,
    model: PhantomData<fn() -> P>,
}

impl<P: Model + Native> Build for FastCodec<P> {
    fn build() -> Result<Self> {
        Ok(FastCodec {
            config: SerializerConfig::new(fast_schema::<P>()?),
            model: PhantomData,
        })
    }
}

impl<P: Model + Native> Codec<P> for FastCodec<P> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        serde_avro_fast::to_datum(value, &mut *out, &mut self.config)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        Ok(serde_avro_fast::from_datum_slice(bytes, self.config.schema())?)
    }
}

impl<B: Borrowed + Native> BorrowedDecode<B> for FastCodec<B>
where
    for<'a> B::Ref<'a>: serde::Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        Ok(serde_avro_fast::from_datum_slice(bytes, self.config.schema())?)
    }
}

// apache-avro recommends the compact (not human-readable) serde representation; none of the
// model types has a serde impl that looks at it, so it changes no bytes here.

/// apache-avro's datum writer for `P`'s schema, its named types resolved once.
fn apache_writer<P: Native>() -> Result<GenericDatumWriter<'static>> {
    Ok(GenericDatumWriter::builder(apache_schema::<P>()?)
        .human_readable(false)
        .build()?)
}

/// apache-avro's datum reader for `P`'s schema, its named types resolved once.
fn apache_reader<P: Native>() -> Result<GenericDatumReader<'static>> {
    Ok(GenericDatumReader::builder(apache_schema::<P>()?)
        .human_readable(false)
        .build()?)
}

/// apache-avro through its schema-aware serde serializer and deserializer (no `Value`).
pub struct ApacheSerde<P> {
    writer: GenericDatumWriter<'static>,
    reader: GenericDatumReader<'static>,
    model: PhantomData<fn() -> P>,
}

impl<P: Model + Native> Build for ApacheSerde<P> {
    fn build() -> Result<Self> {
        Ok(ApacheSerde {
            writer: apache_writer::<P>()?,
            reader: apache_reader::<P>()?,
            model: PhantomData,
        })
    }
}

impl<P: Model + Native> Codec<P> for ApacheSerde<P> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.writer.write_ser(out, value)?;
        Ok(out)
    }

    fn decode(&mut self, mut bytes: &[u8]) -> Result<P> {
        Ok(self.reader.read_deser(&mut bytes)?)
    }
}

/// apache-avro's dynamic tree: `apache_avro::types::Value`, read against the schema.
pub struct ApacheTree<P> {
    reader: GenericDatumReader<'static>,
    model: PhantomData<fn() -> P>,
}

impl<P: Model + Native> Build for ApacheTree<P> {
    fn build() -> Result<Self> {
        Ok(ApacheTree {
            reader: apache_reader::<P>()?,
            model: PhantomData,
        })
    }
}

impl<P: Model + Native> Dynamic<P> for ApacheTree<P> {
    type Tree = apache_avro::types::Value;

    fn decode_tree(&mut self, mut bytes: &[u8]) -> Result<apache_avro::types::Value> {
        Ok(self.reader.read_value(&mut bytes)?)
    }

    fn to_model(&mut self, tree: apache_avro::types::Value) -> Result<P> {
        Ok(apache_avro::from_value(&tree)?)
    }
}

/// Both backends on a data payload's inferred schema, each where it parses it.
fn register_data(registry: &mut Registry, payload: &'static DataPayload) {
    if let Some(path) = map_and_record(&payload.schema) {
        let reason = format!(
            "{path}: objects there are a map in some records and a record in others, which an Avro union cannot tell apart"
        );
        return registry.unsupported(payload.spec, "*", &reason);
    }
    let schema = match data::avsc::schema(payload) {
        Ok(schema) => schema,
        Err(error) => return registry.unsupported(payload.spec, "*", &format!("{error:#}")),
    };
    match schema.to_string().parse::<serde_avro_fast::Schema>() {
        Ok(parsed) => {
            let schema: &'static serde_avro_fast::Schema = Box::leak(Box::new(parsed));
            registry.data_tree(payload, SERDE_AVRO_FAST, FastData { schema }, &Operation::CODEC);
        }
        Err(error) => registry.unsupported(
            payload.spec,
            SERDE_AVRO_FAST.name,
            &format!("the inferred schema does not parse: {error}"),
        ),
    }
    match apache_avro::Schema::parse(&schema) {
        Ok(parsed) => {
            let schema: &'static apache_avro::Schema = Box::leak(Box::new(parsed));
            registry.data_tree(payload, APACHE_AVRO, ApacheData { schema }, &Operation::CODEC);
        }
        Err(error) => registry.unsupported(
            payload.spec,
            APACHE_AVRO.name,
            &format!("the inferred schema does not parse: {error}"),
        ),
    }
}

/// The first conflict with both a map and a record among its kinds: a JSON object fits both
/// branches, so neither the writer nor a reader could tell which one it is.
fn map_and_record(schema: &data::Schema) -> Option<String> {
    let mut found = None;
    data::schema::walk(&schema.record, &mut String::from("$"), &mut |path, ty, _| {
        if let Kind::Union(branches) = &ty.kind {
            let kinds = |wanted: fn(&Kind) -> bool| branches.iter().any(|branch| wanted(&branch.kind));
            if found.is_none()
                && kinds(|kind| matches!(kind, Kind::Map(_)))
                && kinds(|kind| matches!(kind, Kind::Record(_)))
            {
                found = Some(path.to_string());
            }
        }
    });
    found
}

/// The records' schema type: one record, or the list of them.
fn data_type(payload: &DataPayload) -> Type {
    let record = payload.schema.record.clone();
    match payload.is_list() {
        true => Type {
            seen: 1,
            nulls: 0,
            kind: Kind::Array(Box::new(record)),
        },
        false => record,
    }
}

/// serde_avro_fast on `serde_json::Value`s.
pub struct FastData {
    schema: &'static serde_avro_fast::Schema,
}

pub struct FastDataCodec {
    config: SerializerConfig<'static>,
}

impl Codec<serde_json::Value> for FastDataCodec {
    fn encode<'a>(&'a mut self, value: &serde_json::Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        serde_avro_fast::to_datum(value, &mut *out, &mut self.config)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        Ok(serde_avro_fast::from_datum_slice(bytes, self.config.schema())?)
    }
}

impl DataTree<DataPayload> for FastData {
    type Tree = serde_json::Value;
    type Codec = FastDataCodec;

    fn codec(&self) -> FastDataCodec {
        FastDataCodec {
            config: SerializerConfig::new(self.schema),
        }
    }

    fn tree(&self, data: &DataPayload) -> Result<serde_json::Value> {
        Ok(as_datum(&data.as_value(), &data_type(data)))
    }

    fn holds(&self, tree: &serde_json::Value, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(tree, Equivalence::Schema))
    }
}

/// `value` as a datum of the inferred schema decodes: every integer at a float path (or in a
/// union without an integer branch) a float, every record field present (null where the
/// record lacked it).
fn as_datum(value: &serde_json::Value, ty: &Type) -> serde_json::Value {
    use serde_json::Value as Json;
    match (value, &ty.kind) {
        (Json::Number(number), Kind::Float) => Json::from(number.as_f64().expect("a JSON number")),
        (Json::Array(items), Kind::Array(item)) => {
            Json::Array(items.iter().map(|value| as_datum(value, item)).collect())
        }
        (Json::Object(object), Kind::Map(value_type)) => Json::Object(
            object
                .iter()
                .map(|(key, value)| (key.clone(), as_datum(value, value_type)))
                .collect(),
        ),
        (Json::Object(object), Kind::Record(fields)) => Json::Object(
            fields
                .iter()
                .map(|field| {
                    let value = object
                        .get(&field.name)
                        .map_or(Json::Null, |value| as_datum(value, &field.ty));
                    (field.name.clone(), value)
                })
                .collect(),
        ),
        (value, Kind::Union(branches)) => match data::schema::branch_of(value, branches) {
            Some(branch) => as_datum(value, &branches[branch]),
            None => value.clone(),
        },
        (value, _) => value.clone(),
    }
}

/// apache-avro's `Value` tree against the parsed inferred schema.
pub struct ApacheData {
    schema: &'static apache_avro::Schema,
}

pub struct ApacheDataCodec {
    writer: GenericDatumWriter<'static>,
    reader: GenericDatumReader<'static>,
}

impl Codec<apache_avro::types::Value> for ApacheDataCodec {
    fn encode<'a>(&'a mut self, value: &apache_avro::types::Value, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.writer.write_value_ref(out, value)?;
        Ok(out)
    }

    fn decode(&mut self, mut bytes: &[u8]) -> Result<apache_avro::types::Value> {
        let value = self.reader.read_value(&mut bytes)?;
        anyhow::ensure!(bytes.is_empty(), "{} bytes after the datum", bytes.len());
        Ok(value)
    }
}

impl DataTree<DataPayload> for ApacheData {
    type Tree = apache_avro::types::Value;
    type Codec = ApacheDataCodec;

    fn codec(&self) -> ApacheDataCodec {
        let build = || -> Result<ApacheDataCodec> {
            Ok(ApacheDataCodec {
                writer: GenericDatumWriter::builder(self.schema)
                    .human_readable(false)
                    .build()?,
                reader: GenericDatumReader::builder(self.schema)
                    .human_readable(false)
                    .build()?,
            })
        };
        build().expect("the schema parsed at registration resolves")
    }

    fn tree(&self, data: &DataPayload) -> Result<apache_avro::types::Value> {
        let ty = data_type(data);
        Ok(to_avro(&data.as_value(), &ty, ty.nullable()))
    }

    fn holds(&self, tree: &apache_avro::types::Value, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(&from_avro(tree)?, Equivalence::Schema))
    }

    fn unstable(&self, data: &DataPayload) -> Option<String> {
        let (path, _) = data.schema.maps.first()?;
        Some(format!(
            "apache-avro keeps a map ({path}) in a std HashMap, whose order changes from process to \
             process, and so do its bytes; serde_avro_fast writes the same datum, sorted"
        ))
    }
}

/// The `Value` of `value` at a place of type `ty`, as `payload::data::avsc` lays it out: a
/// nullable place is a union with null first, a conflict a union of its kinds in their order.
fn to_avro(value: &serde_json::Value, ty: &Type, nullable: bool) -> apache_avro::types::Value {
    use apache_avro::types::Value as Avro;
    use serde_json::Value as Json;
    if ty.kind == Kind::Null {
        return Avro::Null;
    }
    let offset = u32::from(nullable);
    if value.is_null() {
        return Avro::Union(0, Box::new(Avro::Null));
    }
    let (branch, ty) = match &ty.kind {
        Kind::Union(branches) => {
            let branch =
                data::schema::branch_of(value, branches).expect("the schema has a branch for every value");
            (Some(branch as u32 + offset), &branches[branch])
        }
        _ => (nullable.then_some(offset), ty),
    };
    let avro = match (value, &ty.kind) {
        (Json::Bool(flag), _) => Avro::Boolean(*flag),
        (Json::Number(number), Kind::Float) => Avro::Double(number.as_f64().expect("a JSON number")),
        (Json::Number(number), _) => Avro::Long(number.as_i64().expect("an integer at an int path")),
        (Json::String(text), _) => Avro::String(text.clone()),
        (Json::Array(items), Kind::Array(item)) => Avro::Array(
            items
                .iter()
                .map(|value| to_avro(value, item, item.nullable()))
                .collect(),
        ),
        (Json::Object(object), Kind::Map(value_type)) => Avro::Map(
            object
                .iter()
                .map(|(key, value)| (key.clone(), to_avro(value, value_type, value_type.nullable())))
                .collect(),
        ),
        (Json::Object(object), Kind::Record(fields)) => Avro::Record(
            fields
                .iter()
                .map(|field| {
                    let nullable = field.ty.nullable() || field.optional();
                    let value = object.get(&field.name).unwrap_or(&Json::Null);
                    (field.name.clone(), to_avro(value, &field.ty, nullable))
                })
                .collect(),
        ),
        (value, _) => unreachable!(
            "the schema was inferred from this data: {value} at {}",
            ty.kind.name()
        ),
    };
    match branch {
        Some(branch) => Avro::Union(branch, Box::new(avro)),
        None => avro,
    }
}

/// The JSON an Avro value stands for (every record field present, null where the datum has
/// null); what the inferred schemas never hold (bytes, fixed, enums, logical types) is an error.
fn from_avro(value: &apache_avro::types::Value) -> Result<serde_json::Value> {
    use apache_avro::types::Value as Avro;
    use serde_json::Value as Json;
    Ok(match value {
        Avro::Null => Json::Null,
        Avro::Boolean(flag) => Json::from(*flag),
        Avro::Int(integer) => Json::from(*integer),
        Avro::Long(integer) => Json::from(*integer),
        Avro::Float(float) => Json::from(f64::from(*float)),
        Avro::Double(float) => serde_json::Number::from_f64(*float)
            .map(Json::Number)
            .with_context(|| format!("the double {float} is not a JSON number"))?,
        Avro::String(text) => Json::from(text.as_str()),
        Avro::Union(_, value) => from_avro(value)?,
        Avro::Array(items) => Json::Array(items.iter().map(from_avro).collect::<Result<_>>()?),
        Avro::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(key, value)| Ok((key.clone(), from_avro(value)?)))
                .collect::<Result<_>>()?,
        ),
        Avro::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(key, value)| Ok((key.clone(), from_avro(value)?)))
                .collect::<Result<_>>()?,
        ),
        other => anyhow::bail!("an Avro {other:?} is not JSON data"),
    })
}

/// Fidelity: `serde_avro_fast::from_datum_slice` of `order` with its parsed schema.
fn serde_avro_fast_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let schema: serde_avro_fast::Schema = include_str!("../../schemas/avro/order.avsc")
        .parse()
        .expect("order.avsc parses");
    let bytes =
        serde_avro_fast::to_datum_vec(order, &mut serde_avro_fast::ser::SerializerConfig::new(&schema))
            .expect("order encodes");
    Box::new(move || {
        black_box(
            serde_avro_fast::from_datum_slice::<Order>(black_box(&bytes), &schema).expect("it decodes"),
        );
    })
}

#[cfg(test)]
mod data_tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    #[test]
    fn both_backends_prove_on_tricky_records_a_conflict_being_a_union() {
        let payload = test_payload("tricky", TRICKY);
        let schema = data::avsc::schema(payload).unwrap();
        let field = |name: &str| {
            schema["items"]["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|field| field["name"] == name)
                .unwrap()
                .clone()
        };
        assert_eq!(field("v")["type"], serde_json::json!(["long", "string"]));
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, payload);
        assert_eq!(proofs.len(), 6);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
    }

    #[test]
    fn objects_that_are_maps_here_and_records_there_are_a_reason_not_a_panic() {
        // `3ds` makes the document a map, whose values `$.*` are a bool, a map ("content-type"
        // is not a field name) and a record (`lat`): registering the arms panicked before.
        let payload = data::DataPayload::from_bytes(
            "mixed.ndjson".into(),
            "mixed",
            br#"{"3ds": true, "h": {"content-type": "a"}, "g": {"lat": 1.5}}"#.to_vec(),
            &data::Request::default(),
        )
        .unwrap();
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, payload);
        assert!(proofs.is_empty(), "{proofs:?}");
        assert_eq!(reasons.len(), 1);
        assert!(
            reasons[0].starts_with("$.*: objects there are a map in some records"),
            "{reasons:?}"
        );
    }

    #[test]
    fn the_inferred_schemas_of_the_corpora_parse_with_both_crates() {
        for corpus in ["twitter", "citm_catalog", "canada"] {
            let payload = data::load(&data::Request {
                sources: vec![format!("corpus:{corpus}")],
                ..data::Request::default()
            })
            .unwrap()[0];
            let text = data::avsc::text(payload).unwrap();
            apache_avro::Schema::parse_str(&text).unwrap_or_else(|error| panic!("{corpus}: {error}"));
            text.parse::<serde_avro_fast::Schema>()
                .unwrap_or_else(|error| panic!("{corpus}: {error}"));
        }
    }

    #[test]
    fn apache_avro_writes_no_stable_bytes_of_maps_and_serde_avro_fast_does() {
        let payload = test_payload("maps", r#"{"m": {"a-1": 1, "b-2": 2, "c-3": 3}}"#);
        let apache = ApacheData {
            schema: Box::leak(Box::new(
                apache_avro::Schema::parse(&data::avsc::schema(payload).unwrap()).unwrap(),
            )),
        };
        let error = apache.stable_bytes(payload).unwrap_err().to_string();
        assert!(
            error.contains("apache-avro keeps a map ($.m) in a std HashMap"),
            "{error}"
        );
        let fast = FastData {
            schema: Box::leak(Box::new(data::avsc::text(payload).unwrap().parse().unwrap())),
        };
        let bytes = fast.stable_bytes(payload).unwrap();
        // Read by the other crate into the same data.
        let tree = apache.codec().decode(&bytes).unwrap();
        assert_eq!(apache.holds(&tree, payload).unwrap(), None);
    }
}

/// Fidelity: apache-avro's `GenericDatumReader::read_deser` of `order` (the reader built once,
/// not human-readable, as the writer). Its reader borrows the schema: the case leaks one parsed
/// schema for the life of the process.
fn apache_avro_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let schema: &'static apache_avro::Schema = Box::leak(Box::new(
        apache_avro::Schema::parse_str(include_str!("../../schemas/avro/order.avsc"))
            .expect("order.avsc parses"),
    ));
    let mut bytes = Vec::new();
    GenericDatumWriter::builder(schema)
        .human_readable(false)
        .build()
        .expect("a writer of order.avsc")
        .write_ser(&mut bytes, order)
        .expect("order encodes");
    let reader = GenericDatumReader::builder(schema)
        .human_readable(false)
        .build()
        .expect("a reader of order.avsc");
    Box::new(move || {
        black_box(
            reader
                .read_deser::<Order>(&mut black_box(bytes.as_slice()))
                .expect("it decodes"),
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL_PAYLOADS: [&str; 7] = [
        "readings",
        "order",
        "telemetry",
        "checkout-request",
        "checkout-response",
        "map-small",
        "vec-small",
    ];

    /// Parses every payload's schema file with both backends and records the file names.
    struct ParseAll(Vec<&'static str>);

    impl<P: Model + Native> Visit<P> for ParseAll {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            let file = schema_file::<P>().unwrap_or_else(|error| panic!("{name}: {error:#}"));
            fast_schema::<P>().unwrap_or_else(|error| panic!("{name}, serde_avro_fast: {error:#}"));
            ApacheSerde::<P>::build().unwrap_or_else(|error| panic!("{name}, apache-avro: {error:#}"));
            self.0.push(file.name);
        }
    }

    #[test]
    fn every_schema_file_parses_with_both_backends() {
        let mut parsed = ParseAll(Vec::new());
        visit_all(&mut parsed);
        let mut used = parsed.0;
        used.sort_unstable();
        used.dedup();
        let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/avro");
        let mut on_disk: Vec<String> = std::fs::read_dir(directory)
            .expect("schemas/avro exists")
            .map(|entry| {
                entry
                    .expect("readable entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        on_disk.sort_unstable();
        assert_eq!(
            used, on_disk,
            "every schema file is used by a payload, and only those"
        );
    }

    fn encode<P: Model + Native>(mut codec: impl Codec<P>, value: &P) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Ok(codec.encode(value, &mut out)?.to_vec())
    }

    /// The bytes each backend writes decode through the other to the same value; they are in
    /// fact the same bytes. apache-avro's `Value` path (`read_value` then `from_value`, what the
    /// deprecated `from_avro_datum` does) reads them too.
    fn cross_backend<P: Model + Native>(payload: &Payload<P>) -> Result<()> {
        let value = (payload.value)();
        let fast = encode(FastCodec::<P>::build()?, value)?;
        let apache = encode(ApacheSerde::<P>::build()?, value)?;
        assert_eq!(
            fast, apache,
            "serde_avro_fast and apache-avro write the same datum"
        );
        assert_eq!(&ApacheSerde::<P>::build()?.decode(&fast)?, value);
        assert_eq!(&FastCodec::<P>::build()?.decode(&apache)?, value);
        let mut tree = ApacheTree::<P>::build()?;
        let decoded = tree.decode_tree(&fast)?;
        assert_eq!(&tree.to_model(decoded)?, value);
        Ok(())
    }

    struct CrossBackend(Vec<&'static str>);

    impl<P: Model + Native> Visit<P> for CrossBackend {
        fn payload(&mut self, payload: &Payload<P>) {
            let name = payload.spec.name;
            if SMALL_PAYLOADS.contains(&name) {
                cross_backend(payload).unwrap_or_else(|error| panic!("{name}: {error:#}"));
                self.0.push(name);
            }
        }
    }

    #[test]
    fn each_backend_decodes_the_others_bytes() {
        let mut checked = CrossBackend(Vec::new());
        visit_all(&mut checked);
        assert_eq!(checked.0, SMALL_PAYLOADS);
    }

    /// `OrderStatus` travels as an Avro enum symbol, not as a string.
    struct StatusIsEnum(bool);

    impl<P: Model + Native> Visit<P> for StatusIsEnum {
        fn payload(&mut self, payload: &Payload<P>) {
            if payload.spec.name != "checkout-response" {
                return;
            }
            let bytes = encode(FastCodec::<P>::build().unwrap(), (payload.value)()).unwrap();
            let tree = Dynamic::<P>::decode_tree(&mut ApacheTree::<P>::build().unwrap(), &bytes).unwrap();
            let apache_avro::types::Value::Record(fields) = tree else {
                panic!("checkout-response is a record");
            };
            let status = fields
                .iter()
                .find(|(name, _)| name == "status")
                .map(|(_, value)| value);
            assert_eq!(
                status,
                Some(&apache_avro::types::Value::Enum(1, "Confirmed".to_string()))
            );
            self.0 = true;
        }
    }

    #[test]
    fn order_status_is_an_avro_enum() {
        let mut checked = StatusIsEnum(false);
        visit_all(&mut checked);
        assert!(checked.0);
    }
}

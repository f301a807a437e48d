//! Protocol Buffers (proto3) through prost, on the schema `schemas/protobuf/serbench.proto`.
//! build.rs compiles the schema with protox (no system `protoc`) and prost-build generates the
//! message types into [`proto`], with `BTreeMap` for every map field so entries are written in
//! sorted key order and the bytes are deterministic.
//!
//! prost has no derive for an existing type: it encodes only its own generated messages. So
//! there are two variants of the one backend `prost`, on the same bytes:
//! - `prost` (plain): the codec works on the generated message itself, as an application that
//!   uses the prost types as its data model does. The message is built once, outside timing;
//!   encode is encode only, decode is decode into the message only.
//! - `prost[convert]`: the codec works on the model types, as an application with its own
//!   types does. Encode is *populate + encode* (build the message from the borrowed model,
//!   which copies every string, then encode it); decode is *decode + convert* (decode the
//!   message, then move its fields into the model, checking what proto3 cannot declare: every
//!   nested message present and every enum value known).
//!
//! The difference between the two variants is the price of keeping a separate model.
//!
//! Dynamic mode: prost-reflect's `DynamicMessage`, decoded with the descriptor of the same
//! schema at run time (no generated code), checked against the typed decode by transcoding it
//! into the generated message. prost-reflect is worth its dependency here: protox already
//! builds it, and it is the way Rust tools read messages they were not compiled for.
//!
//! Buffer policy: `Message::encode` writes into the harness's reused output buffer, which keeps
//! its capacity between iterations, so no `reserve` (that would compute `encoded_len` a second
//! time). Decode builds a fresh owned message from the borrowed bytes. The convert variant
//! builds a fresh message per encode, as a real conversion does.
//!
//! Data payloads (`--data`): the `.proto` inferred from the file (`payload::data::proto`, which
//! `serbench schema` writes) is compiled at run time by protox, and the records become
//! prost-reflect `DynamicMessage`s (built outside timing), encoded and decoded as the typed
//! payloads' dynamic arm decodes. What they decode is compared with the records as a schema
//! keeps them (a null field equals an absent one, an integer the same float). A data file with
//! a conflict has no proto3 schema and is unsupported, naming the path. prost-reflect keeps a
//! map field in a std `HashMap`, so the timed encode writes map entries in an order that
//! changes from process to process; sizes.csv and `dump` write the same entries sorted by key
//! (protobuf's deterministic serialization, the same bytes a map is on the wire), through the
//! same schema with each map declared as its repeated entries.
//!
//! Typed data (`--typed`): prost-build on the typed schema's `.proto` in the generated crate, and
//! the generated conversion between the data's structs and prost's messages ([`typed`]).
//!
//! Backend `buffa` (feature `buffa`, [`buffa_backend`]): buffa's owned messages of the same
//! schema, and its borrowed views as the access arms; `--data`, `--typed` and the dynamic decode
//! stay prost's.
//! With the `rust-protobuf` feature, rust-protobuf 3 is a second backend on the same schema and
//! the same bytes (but for the order of map entries), on its own generated messages
//! ([`rust_protobuf`]); the dynamic decode, `--data` and `--typed` stay prost's.

use std::hint::black_box;
use std::marker::PhantomData;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use prost::{Message, Name};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedBorrowed, TypedDerive, TypedSupport};
use crate::arm::{Backend, Codec, DataTree, Dynamic, Operation, Value};
use crate::payload::data::proto::{Label, Plan, ProtoField, ProtoType, Role};
use crate::payload::data::{DataPayload, Difference, Equivalence, Kind};
use crate::payload::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Model, Order,
    OrderStatus, Payload, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment,
    TelemetryEvent, Visit, visit_all,
};

/// The prost types generated from `schemas/protobuf/serbench.proto` (package `serbench`).
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/serbench.rs"));
}

/// Why prost has no borrowed decode.
const NO_BORROWED: &str = "prost's generated messages own their fields (`String`; `Bytes` only for bytes fields) and `Message::decode` reads a `Buf`: no message borrows the input";
/// Why rust-protobuf has no borrowed decode.
#[cfg(feature = "rust-protobuf")]
const NO_BORROWED_RUST_PROTOBUF: &str = "rust-protobuf's generated messages own their `String`s (its `bytes` feature's `Chars` share a `bytes::Bytes` input, not the borrowed slice)";

/// buffa: the second backend, its owned messages and borrowed views (`#[cfg(feature)]`).
#[cfg(feature = "buffa")]
#[path = "buffa.rs"]
pub mod buffa_backend;

pub static FORMAT: Format = Format {
    name: "protobuf",
    about: "Protocol Buffers: prost, schema compiled by protox; plain and model-converting",
    colour: [0xBB, 0x55, 0x77],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "field numbers: add and remove fields, renames are free (names are not on the wire), never reuse a number",
        languages: &[
            "C++",
            "C#",
            "Dart",
            "Go",
            "Java",
            "Kotlin",
            "Objective-C",
            "PHP",
            "Python",
            "Ruby",
            "Rust",
        ],
        languages_source: "https://protobuf.dev (Google's supported languages)",
    },
    backends: &[
        BackendDoc {
            backend: "prost",
            variant: "",
            crates: &["prost", "prost-build", "protox", "prost-reflect"],
            crate_note: "schema compiled by protox + prost-build at build time (no protoc); prost-reflect for the dynamic decode",
            schema: "`schemas/protobuf/serbench.proto`",
            buffer_policy: "encodes the generated message (built once, untimed) into a reused `Vec`; decode builds a fresh owned message",
        },
        BackendDoc {
            backend: "prost",
            variant: "convert",
            crates: &["prost"],
            crate_note: "",
            schema: "`schemas/protobuf/serbench.proto`",
            buffer_policy: "_populate + encode_ (a fresh message from the model each call, strings copied) and _decode + convert_ (moving fields into the model, an error for a missing submessage or unknown enum value): the price of keeping your own model types",
        },
        #[cfg(feature = "buffa")]
        BackendDoc {
            backend: "buffa",
            variant: "",
            crates: &["buffa", "buffa-build"],
            crate_note: "protox's descriptors fed to buffa-build (no protoc); `BTreeMap` maps; views for access; no --data, --typed or dynamic decode (prost's)",
            schema: "`schemas/protobuf/serbench.proto`",
            buffer_policy: "`encode_with_cache` of its generated message (built once, untimed) into a reused `Vec` and `SizeCache`; decode builds a fresh owned message; access decodes a view borrowing the input",
        },
        #[cfg(feature = "rust-protobuf")]
        BackendDoc {
            backend: "rust-protobuf",
            variant: "",
            crates: &["protobuf", "protobuf-codegen"],
            crate_note: "the 3.x line; codegen by protobuf-codegen's pure parser (no protoc); no dynamic decode, `--data` or `--typed`",
            schema: "`schemas/protobuf/serbench.proto`",
            buffer_policy: "`write_to_vec` of its generated message (built once, untimed) into a reused `Vec` (map entries in `HashMap` order; sizes and `dump` sorted); `parse_from_bytes` builds a fresh owned message",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "prost",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: prost_order_decode,
        },
        #[cfg(feature = "buffa")]
        Fidelity {
            backend: "buffa",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: buffa_backend::order_decode,
        },
        #[cfg(feature = "rust-protobuf")]
        Fidelity {
            backend: "rust-protobuf",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: rust_protobuf::order_decode,
        },
    ],
    register: |registry| {
        visit_all(&mut Protobuf(registry));
        for spec in crate::payload::borrowed_specs() {
            registry.unsupported_mode(spec, BACKEND, crate::arm::Mode::Borrowed, NO_BORROWED);
        }
        #[cfg(feature = "buffa")]
        {
            visit_all(&mut buffa_backend::Buffas(registry));
            for spec in crate::payload::borrowed_specs() {
                registry.unsupported_mode(
                    spec,
                    buffa_backend::BUFFA.name,
                    crate::arm::Mode::Borrowed,
                    buffa_backend::NO_BORROWED,
                );
            }
        }
        #[cfg(feature = "rust-protobuf")]
        {
            visit_all(&mut rust_protobuf::RustProtobufs(registry));
            for spec in crate::payload::borrowed_specs() {
                registry.unsupported_mode(
                    spec,
                    rust_protobuf::RUST_PROTOBUF.name,
                    crate::arm::Mode::Borrowed,
                    NO_BORROWED_RUST_PROTOBUF,
                );
            }
        }
        registry.unsupported_corpora(
            "no hand-written .proto for the corpus types; data:<name> measures them on the inferred schema",
        );
    },
    typed: TypedSupport::Derive(&TypedDerive {
        crates: &["prost"],
        refuses: typed::refuses,
        items: typed::items,
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(register_data),
    evolution: super::EvolutionSupport::Measured {
        schema: &[evolve::EVOLUTION],
        serde: &[],
    },
};

mod evolve;
#[cfg(feature = "rust-protobuf")]
pub mod rust_protobuf;
mod typed;

const BACKEND: &str = "prost";

/// The typed arms of a generated payload type (`--typed`, [`typed`]): `prost` on its generated
/// message and `prost[convert]`, as for the model.
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Protobuf(registry).payload(payload);
}

/// A model type and its generated prost message: the conversion an application with its own
/// types writes. `from_message` takes the decoded message by value, so strings and lists are
/// moved into the model, not copied, and fails where the message does not describe a model
/// value (a missing nested message, an unknown or unset enum value).
pub trait Native: Sized {
    type Message: Message + Name + Default + Value;
    fn to_message(&self) -> Self::Message;
    fn from_message(message: Self::Message) -> Result<Self>;
}

struct Protobuf<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Protobuf<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        // Fully qualified: other formats' `Native` traits are supertraits of `Model` as well.
        self.0.wire_codec(
            payload,
            Backend::new(BACKEND),
            <P as Native>::to_message,
            message_to_model::<P>,
            || MessageCodec,
        );
        self.0
            .codec(payload, Backend::new(BACKEND).variant("convert"), || ConvertCodec);
        self.0.dynamic(
            payload,
            Backend::new(BACKEND),
            || ConvertCodec,
            Reflect::<P>::default,
        );
    }
}

/// The schema as prost-reflect reads it: the descriptor set build.rs compiled with protox.
fn descriptor_pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(&include_bytes!(concat!(env!("OUT_DIR"), "/serbench.fds"))[..])
            .expect("build.rs wrote a valid descriptor set")
    })
}

/// The dynamic decode: prost-reflect's `DynamicMessage`, driven by the schema's descriptor at
/// run time (no generated code), as a gateway or a generic tool reads messages it was not
/// compiled for.
pub struct Reflect<P> {
    descriptor: MessageDescriptor,
    model: PhantomData<fn() -> P>,
}

impl<P: Model + Native> Default for Reflect<P> {
    fn default() -> Self {
        let name = <<P as Native>::Message as Name>::full_name();
        let descriptor = descriptor_pool()
            .get_message_by_name(&name)
            .unwrap_or_else(|| panic!("{name} is in serbench.proto"));
        Reflect {
            descriptor,
            model: PhantomData,
        }
    }
}

impl<P: Model + Native> Dynamic<P> for Reflect<P> {
    type Tree = DynamicMessage;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<DynamicMessage> {
        Ok(DynamicMessage::decode(self.descriptor.clone(), bytes)?)
    }

    fn to_model(&mut self, tree: DynamicMessage) -> Result<P> {
        <P as Native>::from_message(tree.transcode_to()?)
    }
}

/// The plain variant's proof that the message it times is the payload, and `check`'s reading of
/// a decoded message, which may describe no model value (an empty file decodes to a message
/// without its nested messages).
fn message_to_model<P: Model + Native>(message: &<P as Native>::Message) -> Result<P> {
    <P as Native>::from_message(message.clone())
}

/// Encodes and decodes a generated message: prost's own cost.
pub struct MessageCodec;

impl<M: Message + Default + Value> Codec<M> for MessageCodec {
    fn encode<'a>(&'a mut self, message: &M, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        message.encode(out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<M> {
        Ok(M::decode(bytes)?)
    }
}

/// Populate + encode, decode + convert: prost's cost plus the conversion from and to the model.
pub struct ConvertCodec;

impl<P: Model + Native> Codec<P> for ConvertCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        <P as Native>::to_message(value).encode(out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        <P as Native>::from_message(<P as Native>::Message::decode(bytes)?)
    }
}

/// Where the data nests deeper than prost decodes (100 messages): each record, list and map is
/// counted as a message (at most one each, wrappers included), one kept for a list's batch.
fn too_deep(schema: &crate::payload::data::Schema) -> Option<String> {
    let containers = |kind: &Kind| matches!(kind, Kind::Record(_) | Kind::Array(_) | Kind::Map(_));
    crate::payload::data::schema::first_deeper_than(schema, 99, containers)
        .map(|path| format!("{path}: nested deeper than prost's decode limit of 100 messages"))
}

/// A data payload as `DynamicMessage`s of its inferred schema, compiled here by protox.
fn register_data(registry: &mut Registry, payload: &'static DataPayload) {
    if let Some(reason) = too_deep(&payload.schema) {
        return registry.unsupported(payload.spec, "*", &reason);
    }
    let built = Plan::of(payload).and_then(|plan| {
        let root = compile(&plan, &payload.origin)?;
        let twin = plan.with_maps_as_entries();
        let twin_root = compile(&twin, &payload.origin)?;
        Ok(ReflectData {
            plan,
            root,
            twin,
            twin_root,
        })
    });
    match built {
        Ok(tree) => registry.data_tree(payload, Backend::new(BACKEND), tree, &Operation::CODEC),
        Err(error) => registry.unsupported(payload.spec, "*", &format!("{error:#}")),
    }
}

/// The plan's `.proto` compiled by protox; its top-level message.
fn compile(plan: &Plan, origin: &str) -> Result<MessageDescriptor> {
    struct OneFile(String);
    impl protox::file::FileResolver for OneFile {
        fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
            match name {
                "data.proto" => protox::file::File::from_source(name, &self.0),
                _ => Err(protox::Error::file_not_found(name)),
            }
        }
    }
    let mut compiler = protox::Compiler::with_file_resolver(OneFile(plan.text(origin)));
    compiler
        .open_file("data.proto")
        .map_err(|error| anyhow::anyhow!("protox cannot compile the inferred schema: {error}"))?;
    let name = format!("{}.{}", crate::payload::data::proto::PACKAGE, plan.root().name);
    compiler
        .descriptor_pool()
        .get_message_by_name(&name)
        .with_context(|| format!("the compiled schema has no message {name}"))
}

/// prost-reflect's `DynamicMessage` of a data payload.
pub struct ReflectData {
    plan: Plan,
    root: MessageDescriptor,
    /// The same schema with maps as repeated entries, for the bytes in a fixed order.
    twin: Plan,
    twin_root: MessageDescriptor,
}

/// Encodes and decodes `DynamicMessage`s of one message type.
pub struct ReflectCodec {
    descriptor: MessageDescriptor,
}

impl Codec<DynamicMessage> for ReflectCodec {
    fn encode<'a>(&'a mut self, message: &DynamicMessage, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        message.encode(out)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<DynamicMessage> {
        Ok(DynamicMessage::decode(self.descriptor.clone(), bytes)?)
    }
}

impl DataTree<DataPayload> for ReflectData {
    type Tree = DynamicMessage;
    type Codec = ReflectCodec;

    fn codec(&self) -> ReflectCodec {
        ReflectCodec {
            descriptor: self.root.clone(),
        }
    }

    fn tree(&self, data: &DataPayload) -> Result<DynamicMessage> {
        to_message(&self.plan, &self.root, &data.as_value())
    }

    fn holds(&self, tree: &DynamicMessage, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(&from_message(&self.plan, tree)?, Equivalence::Schema))
    }

    fn stable_bytes(&self, data: &DataPayload) -> Result<Vec<u8>> {
        Ok(to_message(&self.twin, &self.twin_root, &data.as_value())?.encode_to_vec())
    }
}

/// The message of `value` by `plan` (the value of one record, list, map or boxed value).
fn to_message(
    plan: &Plan,
    descriptor: &MessageDescriptor,
    value: &serde_json::Value,
) -> Result<DynamicMessage> {
    let planned = plan
        .message(descriptor.name())
        .with_context(|| format!("the plan has no message {}", descriptor.name()))?;
    let mut message = DynamicMessage::new(descriptor.clone());
    for field in &planned.fields {
        let json = match planned.role {
            Role::Record => value.get(&field.name),
            Role::Records | Role::List | Role::Map | Role::Boxed | Role::Entry => Some(value),
        };
        let Some(json) = json.filter(|json| !json.is_null()) else {
            continue;
        };
        let descriptor = descriptor
            .get_field_by_name(&field.name)
            .with_context(|| format!("no field {}", field.name))?;
        let value = field_value(plan, &descriptor, field, json)?;
        // What the wire cannot tell from unset (a zero, an empty list) is left unset, as a
        // decoded message has it.
        if descriptor.supports_presence() || !value.is_default_for_field(&descriptor) {
            message.try_set_field(&descriptor, value)?;
        }
    }
    Ok(message)
}

fn field_value(
    plan: &Plan,
    descriptor: &prost_reflect::FieldDescriptor,
    field: &ProtoField,
    json: &serde_json::Value,
) -> Result<prost_reflect::Value> {
    use prost_reflect::{MapKey, Value as Reflect};
    let kind = descriptor.kind();
    let entry = |ty: &ProtoType| match ty {
        ProtoType::Message(name) => plan
            .message(name)
            .is_some_and(|message| message.role == Role::Entry),
        _ => false,
    };
    Ok(match field.label {
        Label::Plain | Label::Optional => single(plan, &kind, &field.ty, json)?,
        Label::Repeated if entry(&field.ty) => {
            let entry = kind.as_message().context("an entry is a message")?;
            let key = entry.get_field(1).context("an entry has a key")?;
            let value_field = entry.get_field(2).context("an entry has a value")?;
            let value_type = &plan.message(entry.name()).expect("an entry message").fields[1].ty;
            let object = json.as_object().context("a map is an object")?;
            let mut entries = Vec::with_capacity(object.len());
            for (name, value) in object {
                let mut message = DynamicMessage::new(entry.clone());
                let key_value = Reflect::String(name.clone());
                if !key_value.is_default_for_field(&key) {
                    message.try_set_field(&key, key_value)?;
                }
                if !value.is_null() {
                    let value = single(plan, &value_field.kind(), value_type, value)?;
                    if value_field.supports_presence() || !value.is_default_for_field(&value_field) {
                        message.try_set_field(&value_field, value)?;
                    }
                }
                entries.push(Reflect::Message(message));
            }
            Reflect::List(entries)
        }
        Label::Repeated => Reflect::List(
            json.as_array()
                .context("a repeated field holds an array")?
                .iter()
                .map(|item| single(plan, &kind, &field.ty, item))
                .collect::<Result<_>>()?,
        ),
        Label::Map => {
            let entry = kind.as_message().context("a map field's entries are messages")?;
            let value_kind = entry.map_entry_value_field().kind();
            Reflect::Map(
                json.as_object()
                    .context("a map field holds an object")?
                    .iter()
                    .map(|(key, value)| {
                        Ok((
                            MapKey::String(key.clone()),
                            single(plan, &value_kind, &field.ty, value)?,
                        ))
                    })
                    .collect::<Result<_>>()?,
            )
        }
    })
}

/// One scalar or message value of type `ty`.
fn single(
    plan: &Plan,
    kind: &prost_reflect::Kind,
    ty: &ProtoType,
    json: &serde_json::Value,
) -> Result<prost_reflect::Value> {
    use prost_reflect::Value as Reflect;
    let wrong = || anyhow::anyhow!("{json} is not a {ty:?}");
    Ok(match ty {
        ProtoType::Int64 => Reflect::I64(json.as_i64().ok_or_else(wrong)?),
        ProtoType::Double => Reflect::F64(json.as_f64().ok_or_else(wrong)?),
        ProtoType::String => Reflect::String(json.as_str().ok_or_else(wrong)?.to_string()),
        ProtoType::Bool => Reflect::Bool(json.as_bool().ok_or_else(wrong)?),
        ProtoType::Message(_) => {
            let descriptor = kind.as_message().context("a message field")?;
            Reflect::Message(to_message(plan, descriptor, json)?)
        }
    })
}

/// The JSON a message of `plan` stands for: a record has the fields the message holds (a
/// scalar that is always present reads its default when not on the wire).
fn from_message(plan: &Plan, message: &DynamicMessage) -> Result<serde_json::Value> {
    let descriptor = prost_reflect::ReflectMessage::descriptor(message);
    let planned = plan
        .message(descriptor.name())
        .with_context(|| format!("the plan has no message {}", descriptor.name()))?;
    let mut object = serde_json::Map::new();
    for field in &planned.fields {
        let field_descriptor = descriptor
            .get_field_by_name(&field.name)
            .with_context(|| format!("no field {}", field.name))?;
        let present = match (field.label, &field.ty) {
            (Label::Plain, ProtoType::Message(_)) | (Label::Optional, _) => {
                message.has_field(&field_descriptor)
            }
            _ => true,
        };
        if !present {
            continue;
        }
        let value = message.get_field(&field_descriptor);
        let json = match (field.label, value.as_ref()) {
            (Label::Repeated, prost_reflect::Value::List(items)) => serde_json::Value::Array(
                items
                    .iter()
                    .map(|item| json_of(plan, item))
                    .collect::<Result<_>>()?,
            ),
            (Label::Map, prost_reflect::Value::Map(entries)) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| {
                        let key = key.as_str().context("a map key that is not a string")?;
                        Ok((key.to_string(), json_of(plan, value)?))
                    })
                    .collect::<Result<_>>()?,
            ),
            (_, value) => json_of(plan, value)?,
        };
        object.insert(field.name.clone(), json);
    }
    Ok(match planned.role {
        Role::Record => serde_json::Value::Object(object),
        // A wrapper stands for its one field: null when it is absent (a boxed null).
        Role::Records | Role::List | Role::Map | Role::Boxed | Role::Entry => object
            .into_iter()
            .next()
            .map_or(serde_json::Value::Null, |(_, value)| value),
    })
}

fn json_of(plan: &Plan, value: &prost_reflect::Value) -> Result<serde_json::Value> {
    use prost_reflect::Value as Reflect;
    Ok(match value {
        Reflect::Bool(flag) => serde_json::Value::from(*flag),
        Reflect::I64(integer) => serde_json::Value::from(*integer),
        Reflect::F64(float) => serde_json::Number::from_f64(*float)
            .map(serde_json::Value::Number)
            .with_context(|| format!("the double {float} is not a JSON number"))?,
        Reflect::String(text) => serde_json::Value::from(text.as_str()),
        Reflect::Message(message) => from_message(plan, message)?,
        other => bail!("a protobuf {other:?} is not in the inferred schema"),
    })
}

/// proto3 has no required fields: every message field is optional on the wire, and prost
/// makes it an `Option`. The model's nested structs are required, so absence is an error.
fn required<T: Native>(message: Option<T::Message>, field: &str) -> Result<T> {
    let message = message.with_context(|| format!("{field} is missing"))?;
    T::from_message(message).with_context(|| format!("in {field}"))
}

fn to_messages<T: Native>(values: &[T]) -> Vec<T::Message> {
    values.iter().map(T::to_message).collect()
}

fn from_messages<T: Native>(messages: Vec<T::Message>, field: &str) -> Result<Vec<T>> {
    messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| T::from_message(message).with_context(|| format!("in {field}[{index}]")))
        .collect()
}

impl From<OrderStatus> for proto::OrderStatus {
    fn from(status: OrderStatus) -> Self {
        match status {
            OrderStatus::Pending => proto::OrderStatus::Pending,
            OrderStatus::Confirmed => proto::OrderStatus::Confirmed,
            OrderStatus::Shipped => proto::OrderStatus::Shipped,
            OrderStatus::Cancelled => proto::OrderStatus::Cancelled,
        }
    }
}

/// prost keeps enum fields as the raw `i32` (proto3 enums are open: any value can arrive), so
/// the value is checked here rather than read through prost's getter, which would silently
/// turn an unknown value into the zero value.
fn order_status(value: i32) -> Result<OrderStatus> {
    match proto::OrderStatus::try_from(value) {
        Ok(proto::OrderStatus::Pending) => Ok(OrderStatus::Pending),
        Ok(proto::OrderStatus::Confirmed) => Ok(OrderStatus::Confirmed),
        Ok(proto::OrderStatus::Shipped) => Ok(OrderStatus::Shipped),
        Ok(proto::OrderStatus::Cancelled) => Ok(OrderStatus::Cancelled),
        Ok(proto::OrderStatus::Unspecified) => bail!("OrderStatus is ORDER_STATUS_UNSPECIFIED (not set)"),
        Err(_) => bail!("unknown OrderStatus value {value}"),
    }
}

impl Native for Readings {
    type Message = proto::Readings;

    fn to_message(&self) -> proto::Readings {
        proto::Readings {
            readings: to_messages(&self.readings),
        }
    }

    fn from_message(message: proto::Readings) -> Result<Self> {
        Ok(Readings {
            readings: from_messages(message.readings, "Readings.readings")?,
        })
    }
}

impl Native for Reading {
    type Message = proto::Reading;

    fn to_message(&self) -> proto::Reading {
        proto::Reading {
            valid: self.valid,
            value: self.value,
            labels: self.labels.clone(),
        }
    }

    fn from_message(message: proto::Reading) -> Result<Self> {
        Ok(Reading {
            valid: message.valid,
            value: message.value,
            labels: message.labels,
        })
    }
}

impl Native for Order {
    type Message = proto::Order;

    fn to_message(&self) -> proto::Order {
        proto::Order {
            order_id: self.order_id,
            customer_id: self.customer_id,
            created_at_ms: self.created_at_ms,
            quantity: self.quantity,
            unit_price: self.unit_price,
            discount: self.discount,
            tax_rate: self.tax_rate,
            total: self.total,
            currency: self.currency.clone(),
            sku: self.sku.clone(),
            customer_email: self.customer_email.clone(),
            shipping_country: self.shipping_country.clone(),
            status: self.status.clone(),
            is_gift: self.is_gift,
            is_priority: self.is_priority,
        }
    }

    fn from_message(message: proto::Order) -> Result<Self> {
        Ok(Order {
            order_id: message.order_id,
            customer_id: message.customer_id,
            created_at_ms: message.created_at_ms,
            quantity: message.quantity,
            unit_price: message.unit_price,
            discount: message.discount,
            tax_rate: message.tax_rate,
            total: message.total,
            currency: message.currency,
            sku: message.sku,
            customer_email: message.customer_email,
            shipping_country: message.shipping_country,
            status: message.status,
            is_gift: message.is_gift,
            is_priority: message.is_priority,
        })
    }
}

impl Native for TelemetryEvent {
    type Message = proto::TelemetryEvent;

    fn to_message(&self) -> proto::TelemetryEvent {
        proto::TelemetryEvent {
            event_id: self.event_id.clone(),
            timestamp_ms: self.timestamp_ms,
            service: Some(self.service.to_message()),
            metric: self.metric.clone(),
            unit: self.unit.clone(),
            tags: self.tags.clone(),
            attributes: self.attributes.clone(),
            samples: to_messages(&self.samples),
        }
    }

    fn from_message(message: proto::TelemetryEvent) -> Result<Self> {
        Ok(TelemetryEvent {
            event_id: message.event_id,
            timestamp_ms: message.timestamp_ms,
            service: required(message.service, "TelemetryEvent.service")?,
            metric: message.metric,
            unit: message.unit,
            tags: message.tags,
            attributes: message.attributes,
            samples: from_messages(message.samples, "TelemetryEvent.samples")?,
        })
    }
}

impl Native for ServiceInfo {
    type Message = proto::ServiceInfo;

    fn to_message(&self) -> proto::ServiceInfo {
        proto::ServiceInfo {
            name: self.name.clone(),
            version: self.version.clone(),
            instance_id: self.instance_id.clone(),
            region: self.region.clone(),
        }
    }

    fn from_message(message: proto::ServiceInfo) -> Result<Self> {
        Ok(ServiceInfo {
            name: message.name,
            version: message.version,
            instance_id: message.instance_id,
            region: message.region,
        })
    }
}

impl Native for MetricSample {
    type Message = proto::MetricSample;

    fn to_message(&self) -> proto::MetricSample {
        proto::MetricSample {
            timestamp_ms: self.timestamp_ms,
            value: self.value,
            count: self.count,
        }
    }

    fn from_message(message: proto::MetricSample) -> Result<Self> {
        Ok(MetricSample {
            timestamp_ms: message.timestamp_ms,
            value: message.value,
            count: message.count,
        })
    }
}

impl Native for CheckoutRequest {
    type Message = proto::CheckoutRequest;

    fn to_message(&self) -> proto::CheckoutRequest {
        proto::CheckoutRequest {
            meta: Some(self.meta.to_message()),
            customer_id: self.customer_id.clone(),
            session_id: self.session_id.clone(),
            currency: self.currency.clone(),
            items: to_messages(&self.items),
            shipping_address: Some(self.shipping_address.to_message()),
            payment: Some(self.payment.to_message()),
            coupon_codes: self.coupon_codes.clone(),
            attributes: self.attributes.clone(),
        }
    }

    fn from_message(message: proto::CheckoutRequest) -> Result<Self> {
        Ok(CheckoutRequest {
            meta: required(message.meta, "CheckoutRequest.meta")?,
            customer_id: message.customer_id,
            session_id: message.session_id,
            currency: message.currency,
            items: from_messages(message.items, "CheckoutRequest.items")?,
            shipping_address: required(message.shipping_address, "CheckoutRequest.shipping_address")?,
            payment: required(message.payment, "CheckoutRequest.payment")?,
            coupon_codes: message.coupon_codes,
            attributes: message.attributes,
        })
    }
}

impl Native for RequestMeta {
    type Message = proto::RequestMeta;

    fn to_message(&self) -> proto::RequestMeta {
        proto::RequestMeta {
            request_id: self.request_id.clone(),
            trace_id: self.trace_id.clone(),
            client: self.client.clone(),
            timestamp_ms: self.timestamp_ms,
        }
    }

    fn from_message(message: proto::RequestMeta) -> Result<Self> {
        Ok(RequestMeta {
            request_id: message.request_id,
            trace_id: message.trace_id,
            client: message.client,
            timestamp_ms: message.timestamp_ms,
        })
    }
}

impl Native for LineItem {
    type Message = proto::LineItem;

    fn to_message(&self) -> proto::LineItem {
        proto::LineItem {
            product_id: self.product_id.clone(),
            name: self.name.clone(),
            quantity: self.quantity,
            unit_price_cents: self.unit_price_cents,
        }
    }

    fn from_message(message: proto::LineItem) -> Result<Self> {
        Ok(LineItem {
            product_id: message.product_id,
            name: message.name,
            quantity: message.quantity,
            unit_price_cents: message.unit_price_cents,
        })
    }
}

impl Native for Address {
    type Message = proto::Address;

    fn to_message(&self) -> proto::Address {
        proto::Address {
            street: self.street.clone(),
            city: self.city.clone(),
            region: self.region.clone(),
            postal_code: self.postal_code.clone(),
            country: self.country.clone(),
        }
    }

    fn from_message(message: proto::Address) -> Result<Self> {
        Ok(Address {
            street: message.street,
            city: message.city,
            region: message.region,
            postal_code: message.postal_code,
            country: message.country,
        })
    }
}

impl Native for PaymentMethod {
    type Message = proto::PaymentMethod;

    fn to_message(&self) -> proto::PaymentMethod {
        proto::PaymentMethod {
            kind: self.kind.clone(),
            token: self.token.clone(),
            card_last4: self.card_last4.clone(),
            expiry_month: self.expiry_month,
            expiry_year: self.expiry_year,
        }
    }

    fn from_message(message: proto::PaymentMethod) -> Result<Self> {
        Ok(PaymentMethod {
            kind: message.kind,
            token: message.token,
            card_last4: message.card_last4,
            expiry_month: message.expiry_month,
            expiry_year: message.expiry_year,
        })
    }
}

impl Native for CheckoutResponse {
    type Message = proto::CheckoutResponse;

    fn to_message(&self) -> proto::CheckoutResponse {
        proto::CheckoutResponse {
            meta: Some(self.meta.to_message()),
            order_id: self.order_id.clone(),
            status: proto::OrderStatus::from(self.status).into(),
            subtotal_cents: self.subtotal_cents,
            discount_cents: self.discount_cents,
            tax_cents: self.tax_cents,
            shipping_cents: self.shipping_cents,
            total_cents: self.total_cents,
            shipments: to_messages(&self.shipments),
            attributes: self.attributes.clone(),
        }
    }

    fn from_message(message: proto::CheckoutResponse) -> Result<Self> {
        Ok(CheckoutResponse {
            meta: required(message.meta, "CheckoutResponse.meta")?,
            order_id: message.order_id,
            status: order_status(message.status).context("in CheckoutResponse.status")?,
            subtotal_cents: message.subtotal_cents,
            discount_cents: message.discount_cents,
            tax_cents: message.tax_cents,
            shipping_cents: message.shipping_cents,
            total_cents: message.total_cents,
            shipments: from_messages(message.shipments, "CheckoutResponse.shipments")?,
            attributes: message.attributes,
        })
    }
}

impl Native for ResponseMeta {
    type Message = proto::ResponseMeta;

    fn to_message(&self) -> proto::ResponseMeta {
        proto::ResponseMeta {
            request_id: self.request_id.clone(),
            trace_id: self.trace_id.clone(),
            server: self.server.clone(),
            timestamp_ms: self.timestamp_ms,
        }
    }

    fn from_message(message: proto::ResponseMeta) -> Result<Self> {
        Ok(ResponseMeta {
            request_id: message.request_id,
            trace_id: message.trace_id,
            server: message.server,
            timestamp_ms: message.timestamp_ms,
        })
    }
}

impl Native for Shipment {
    type Message = proto::Shipment;

    fn to_message(&self) -> proto::Shipment {
        proto::Shipment {
            shipment_id: self.shipment_id.clone(),
            carrier: self.carrier.clone(),
            tracking_number: self.tracking_number.clone(),
            estimated_delivery_ms: self.estimated_delivery_ms,
            product_ids: self.product_ids.clone(),
        }
    }

    fn from_message(message: proto::Shipment) -> Result<Self> {
        Ok(Shipment {
            shipment_id: message.shipment_id,
            carrier: message.carrier,
            tracking_number: message.tracking_number,
            estimated_delivery_ms: message.estimated_delivery_ms,
            product_ids: message.product_ids,
        })
    }
}

impl Native for Item {
    type Message = proto::Item;

    fn to_message(&self) -> proto::Item {
        proto::Item {
            id: self.id,
            name: self.name.clone(),
            category: self.category.clone(),
            price: self.price,
            stock: self.stock,
            active: self.active,
        }
    }

    fn from_message(message: proto::Item) -> Result<Self> {
        Ok(Item {
            id: message.id,
            name: message.name,
            category: message.category,
            price: message.price,
            stock: message.stock,
            active: message.active,
        })
    }
}

impl Native for Items {
    type Message = proto::Items;

    fn to_message(&self) -> proto::Items {
        proto::Items {
            items: to_messages(&self.items),
        }
    }

    fn from_message(message: proto::Items) -> Result<Self> {
        Ok(Items {
            items: from_messages(message.items, "Items.items")?,
        })
    }
}

impl Native for Keyed {
    type Message = proto::Keyed;

    fn to_message(&self) -> proto::Keyed {
        proto::Keyed {
            entries: self
                .entries
                .iter()
                .map(|(key, item)| (key.clone(), item.to_message()))
                .collect(),
        }
    }

    fn from_message(message: proto::Keyed) -> Result<Self> {
        let entries = message
            .entries
            .into_iter()
            .map(|(key, item)| {
                let item = Item::from_message(item).with_context(|| format!("in Keyed.entries[{key:?}]"))?;
                Ok((key, item))
            })
            .collect::<Result<_>>()?;
        Ok(Keyed { entries })
    }
}

/// Fidelity: `prost::Message::decode` of the generated `Order` message.
fn prost_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = Native::to_message(order).encode_to_vec();
    Box::new(move || {
        black_box(proto::Order::decode(black_box(&bytes[..])).expect("it decodes"));
    })
}

#[cfg(test)]
mod data_tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    /// TRICKY without its conflict, which proto3 has no field for.
    fn tricky() -> &'static DataPayload {
        test_payload("tricky", &TRICKY.replace(r#""v": "two""#, r#""v": 2"#))
    }

    #[test]
    fn every_protobuf_data_arm_proves_and_a_conflict_is_unsupported_naming_it() {
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, tricky());
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, test_payload("tricky", TRICKY));
        assert!(proofs.is_empty());
        assert_eq!(
            reasons,
            ["$.v: values of several kinds (int, string); a proto3 field has one type"]
        );
    }

    #[test]
    fn the_stable_bytes_are_the_map_entries_sorted_as_the_wire_has_them() {
        let entries: Vec<String> = (0..20).map(|index| format!("\"key-{index}\": {index}")).collect();
        let text = format!(
            r#"{{"counts": {{{}}}, "nested": {{"a-1": {{"b-2": [1, 2]}}}}}}"#,
            entries.join(", ")
        );
        let payload = test_payload("maps", &text);
        let plan = Plan::of(payload).unwrap();
        let tree = ReflectData {
            root: compile(&plan, "maps.json").unwrap(),
            twin: plan.with_maps_as_entries(),
            twin_root: compile(&plan.with_maps_as_entries(), "maps.json").unwrap(),
            plan,
        };
        let stable = tree.stable_bytes(payload).unwrap();
        assert_eq!(stable, tree.stable_bytes(payload).unwrap());
        // The map schema reads them as the same tree the timed encode writes, of the same length.
        let timed = tree.tree(payload).unwrap();
        assert_eq!(tree.codec().decode(&stable).unwrap(), timed);
        assert_eq!(stable.len(), timed.encode_to_vec().len());
        // Sorted: key-0, key-1, key-10, ... in byte order.
        let positions: Vec<usize> = ["key-0", "key-1", "key-10", "key-19", "key-2", "key-9"]
            .iter()
            .map(|key| {
                stable
                    .windows(key.len() + 1)
                    .position(|window| window == [key.as_bytes(), &[0x10]].concat())
                    .unwrap_or_else(|| {
                        stable
                            .windows(key.len())
                            .position(|window| window == key.as_bytes())
                            .expect("every key is in the bytes")
                    })
            })
            .collect();
        assert!(
            positions.windows(2).all(|pair| pair[0] < pair[1]),
            "{positions:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::any::Any;
    use std::fmt::Debug;

    use super::*;

    /// model -> message -> bytes -> message -> model, through prost alone.
    fn round_trip<T: Native + PartialEq + Debug>(value: &T) {
        let message = value.to_message();
        let bytes = message.encode_to_vec();
        let decoded = T::Message::decode(bytes.as_slice()).expect("prost decodes its own encoding");
        assert_eq!(decoded, message);
        assert_eq!(
            &T::from_message(decoded).expect("the message converts back"),
            value
        );
    }

    /// The value of one payload, by name, with its concrete type.
    fn payload_value<T: Clone + 'static>(name: &str) -> T {
        struct Find<'a, T> {
            name: &'a str,
            value: Option<T>,
        }
        impl<T: Clone + 'static, P: Model + Native> Visit<P> for Find<'_, T> {
            fn payload(&mut self, payload: &Payload<P>) {
                if payload.spec.name == self.name {
                    let value: &dyn Any = (payload.value)();
                    self.value = value.downcast_ref::<T>().cloned();
                }
            }
        }
        let mut find = Find { name, value: None };
        visit_all(&mut find);
        find.value
            .unwrap_or_else(|| panic!("payload {name} of type {}", std::any::type_name::<T>()))
    }

    #[test]
    fn every_payload_round_trips_through_both_codecs() {
        struct Check;
        impl<P: Model + Native> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                // The big payloads repeat the small ones' types (the harness proves them at run
                // time); generating them would make this test slow.
                if payload.spec.records > 1_000 {
                    return;
                }
                let value = (payload.value)();
                let message = value.to_message();
                let mut out = Vec::new();
                let plain = MessageCodec.encode(&message, &mut out).unwrap().to_vec();
                let mut out = Vec::new();
                let converted = ConvertCodec.encode(value, &mut out).unwrap().to_vec();
                assert_eq!(
                    plain, converted,
                    "{}: both variants write the same bytes",
                    payload.spec.name
                );
                let decoded: <P as Native>::Message = MessageCodec.decode(&plain).unwrap();
                assert_eq!(decoded, message, "{}", payload.spec.name);
                let decoded: P = ConvertCodec.decode(&plain).unwrap();
                assert_eq!(&decoded, value, "{}", payload.spec.name);
                assert_eq!(
                    &message_to_model::<P>(&message).unwrap(),
                    value,
                    "{}",
                    payload.spec.name
                );
            }
        }
        visit_all(&mut Check);
    }

    #[test]
    fn every_model_type_round_trips() {
        let readings: Readings = payload_value("readings");
        round_trip(&readings);
        round_trip(&readings.readings[0]);
        round_trip(&payload_value::<Order>("order"));
        let telemetry: TelemetryEvent = payload_value("telemetry");
        round_trip(&telemetry);
        round_trip(&telemetry.service);
        round_trip(&telemetry.samples[0]);
        let request: CheckoutRequest = payload_value("checkout-request");
        round_trip(&request);
        round_trip(&request.meta);
        round_trip(&request.items[0]);
        round_trip(&request.shipping_address);
        round_trip(&request.payment);
        let mut response: CheckoutResponse = payload_value("checkout-response");
        round_trip(&response);
        round_trip(&response.meta);
        round_trip(&response.shipments[0]);
        for status in [
            OrderStatus::Pending,
            OrderStatus::Confirmed,
            OrderStatus::Shipped,
            OrderStatus::Cancelled,
        ] {
            response.status = status;
            round_trip(&response);
        }
        let items: Items = payload_value("vec-small");
        round_trip(&items);
        round_trip(&items.items[0]);
        round_trip(&payload_value::<Keyed>("map-small"));
    }

    fn decode_response(message: &proto::CheckoutResponse) -> Result<CheckoutResponse> {
        ConvertCodec.decode(&message.encode_to_vec())
    }

    #[test]
    fn unknown_enum_value_is_an_error_in_decode_and_convert() {
        let mut message = payload_value::<CheckoutResponse>("checkout-response").to_message();
        message.status = 99;
        // prost itself accepts it (proto3 enums are open); the conversion must not.
        assert!(
            MessageCodec
                .decode(&message.encode_to_vec())
                .is_ok_and(|m: proto::CheckoutResponse| m.status == 99)
        );
        let error = decode_response(&message).unwrap_err();
        assert!(
            format!("{error:#}").contains("unknown OrderStatus value 99"),
            "{error:#}"
        );
    }

    #[test]
    fn unset_enum_value_is_an_error_in_decode_and_convert() {
        let mut message = payload_value::<CheckoutResponse>("checkout-response").to_message();
        message.status = proto::OrderStatus::Unspecified.into();
        let error = decode_response(&message).unwrap_err();
        assert!(
            format!("{error:#}").contains("ORDER_STATUS_UNSPECIFIED"),
            "{error:#}"
        );
    }

    #[test]
    fn missing_nested_message_is_an_error_in_decode_and_convert() {
        let mut message = payload_value::<CheckoutResponse>("checkout-response").to_message();
        message.meta = None;
        let error = decode_response(&message).unwrap_err();
        assert!(
            format!("{error:#}").contains("CheckoutResponse.meta is missing"),
            "{error:#}"
        );

        let mut message = payload_value::<CheckoutRequest>("checkout-request").to_message();
        message.payment = None;
        let error = ConvertCodec
            .decode(&message.encode_to_vec())
            .map(|_: CheckoutRequest| ())
            .unwrap_err();
        assert!(
            format!("{error:#}").contains("CheckoutRequest.payment is missing"),
            "{error:#}"
        );
    }

    #[test]
    fn map_entries_are_written_in_sorted_key_order() {
        let keyed: Keyed = payload_value("map-small");
        let bytes = keyed.to_message().encode_to_vec();
        // Each entry's key is a string at a known position; collect them in wire order.
        let mut keys = Vec::new();
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let entry = proto::Keyed::decode(first_field(&mut rest)).unwrap();
            keys.extend(entry.entries.into_keys());
        }
        assert_eq!(keys.len(), keyed.entries.len());
        assert!(keys.is_sorted(), "{keys:?}");
    }

    /// Splits the first length-delimited field (tag, length, payload) off `rest` and returns
    /// its bytes, tag and length included, so it decodes as a one-entry message.
    fn first_field<'a>(rest: &mut &'a [u8]) -> &'a [u8] {
        let all = *rest;
        let mut cursor = all;
        prost::encoding::decode_varint(&mut cursor).unwrap();
        let length = prost::encoding::decode_varint(&mut cursor).unwrap() as usize;
        let end = all.len() - cursor.len() + length;
        *rest = &all[end..];
        &all[..end]
    }
}

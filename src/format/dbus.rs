//! D-Bus wire format, through `zbus::wire` of zbus 6 built with `default-features = false`:
//! the marshalling code without connections, proxies or an async runtime. zvariant 5 (the same
//! encoder as a separate crate) is deprecated since it was merged into zbus 6, so zbus 6 is
//! the maintained home of this code. Little endian, as on the hosts we run on.
//!
//! Buffer policy: encodes into the harness's reused output buffer through a `Cursor` (the
//! encoder needs `Seek` for alignment padding); decodes from the borrowed bytes. The dynamic
//! decode reads the message by its signature into an `OwnedStructure` (D-Bus's own value
//! tree: variants, arrays, dicts with owned strings).
//!
//! Data payloads (`--data`): a signature inferred from the schema (`b`, `x`, `d`, `s`, `a`, `a{s…}`
//! for a map, a struct for a record, `v` for a conflict) and the records as that tree, the
//! document itself when it is a record, otherwise a one-field struct (a list of records is
//! `(a(…))`; an object that was always empty is an empty `a{sv}`, as a struct needs a field).
//! D-Bus has neither null nor optional struct fields, so data with either is unsupported,
//! naming the path, as is a signature longer than the 255 characters D-Bus allows.

use std::hint::black_box;
use std::io::Cursor;

use anyhow::{Context as _, Result};
use zbus::OwnedStructure;
use zbus::wire::serialized::{Context, Data};
use zbus::wire::{Array, Dict, LE, Signature, StructureBuilder, Variant};

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedBorrowed, TypedDerive, TypedSupport};
use crate::arm::{Backend, Codec, DataTree, Dynamic, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence, Kind, Type};
use crate::payload::{Model, Order, Payload, Visit, visit_all};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str = "zvariant lends strings only for the life of its `Data` wrapper (`Data::deserialize(&'d self)`), which a decode call builds around the input, so no borrowed value can be returned from the call";

pub static FORMAT: Format = Format {
    name: "dbus",
    about: "D-Bus wire format: zbus (zbus::wire)",
    colour: [0xEE, 0xBB, 0x44],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "none: the signature travels beside the body and must match the reader's type",
        languages: &["C", "C++", "Python", "Rust", "Go", "Java", "JavaScript", "C#"],
        languages_source: "https://www.freedesktop.org/wiki/Software/DBusBindings/",
    },
    backends: &[BackendDoc {
        backend: "zbus",
        variant: "",
        crates: &["zbus"],
        crate_note: "`default-features = false`, `zbus::wire`",
        schema: "signatures from the `zbus::Type` derive",
        buffer_policy: "`to_writer` through a `Cursor` over a reused `Vec`; decode from the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "zbus",
        variant: "",
        payload: "order",
        operation: Operation::Decode,
        case: zbus_order_decode,
    }],
    register: |registry| {
        visit_all(&mut Dbus(registry));
        registry.unsupported_borrowed(NO_BORROWED);
        registry.unsupported_corpora(
            "D-Bus has no null, and these documents have null fields (their data: payloads say where)",
        );
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["zbus::Type"],
        crates: &["zbus"],
        refuses: typed_refuses,
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(|registry, payload| match data_signature(payload) {
        Ok(signature) => registry.data_tree(
            payload,
            Backend::new("zbus"),
            DbusData { signature },
            &Operation::CODEC,
        ),
        Err(reason) => registry.unsupported(payload.spec, "*", &reason),
    }),
    evolution: super::EvolutionSupport::Unmeasured(
        "zvariant needs a signature type at compile time; not wired into `evolve` yet",
    ),
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]).
pub fn register_typed<P: Model + Native>(registry: &mut Registry, payload: &Payload<P>) {
    Dbus(registry).payload(payload);
}

/// D-Bus has no null and no empty struct: a generated `Option` field or a record without fields
/// has no signature.
fn typed_refuses(data: &DataPayload) -> Option<String> {
    let schema = &data.typed_schema;
    if !matches!(schema.record.kind, Kind::Record(_)) {
        // serde writes the generated `#[serde(transparent)]` wrapper as its value; zbus's derive
        // still signs it as a struct, so the two disagree.
        return Some(
            "$: the records are not objects, and zbus's derived signature of their transparent wrapper is a struct"
                .to_string(),
        );
    }
    too_deep(schema).or_else(|| typed_nulls(schema))
}

/// Where the data nests deeper than D-Bus allows (32 structs, 32 arrays, 64 containers in all;
/// one of each is kept for a list's batch).
fn too_deep(schema: &crate::payload::data::Schema) -> Option<String> {
    use crate::payload::data::schema::first_deeper_than;
    type Counts = fn(&Kind) -> bool;
    let limits: [(usize, Counts, &str); 3] = [
        (31, |kind| matches!(kind, Kind::Record(_)), "structs (records)"),
        (
            31,
            |kind| matches!(kind, Kind::Array(_) | Kind::Map(_)),
            "arrays (lists and maps)",
        ),
        (
            62,
            |kind| matches!(kind, Kind::Record(_) | Kind::Array(_) | Kind::Map(_)),
            "containers",
        ),
    ];
    limits.into_iter().find_map(|(limit, counts, what)| {
        first_deeper_than(schema, limit, counts)
            .map(|path| format!("{path}: nested deeper than D-Bus's limit of {} {what}", limit + 1))
    })
}

fn typed_nulls(schema: &crate::payload::data::Schema) -> Option<String> {
    crate::payload::data::schema::first_option(schema)
        .map(|path| format!("{path}: D-Bus has no null, and the generated field there is an Option"))
        .or_else(|| {
            crate::payload::data::schema::first_empty_record(schema)
                .map(|path| format!("{path}: D-Bus has no empty struct, and the record there has no field"))
        })
}

/// D-Bus needs every type's signature, which the `zbus::Type` derive provides.
pub trait Native: zbus::Type {}
impl<T: zbus::Type> Native for T {}

struct Dbus<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for Dbus<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0.codec(payload, Backend::new("zbus"), || DbusCodec);
        self.0
            .dynamic(payload, Backend::new("zbus"), || DbusCodec, || StructureTree);
    }
}

pub struct DbusCodec;

fn context() -> Context {
    Context::new(LE, 0)
}

impl<P: Model + Native> Codec<P> for DbusCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        // SAFETY: `to_writer` is unsafe only because the returned `Written` may own file
        // descriptors that must outlive the bytes; the model types hold no file descriptors.
        let written = unsafe { zbus::wire::to_writer(&mut Cursor::new(&mut *out), context(), value)? };
        drop(written);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        let (value, _read) = Data::new(bytes, context()).deserialize()?;
        Ok(value)
    }
}

/// D-Bus's dynamic tree: the message read by its signature alone into an `OwnedStructure`.
pub struct StructureTree;

impl<P: Model + Native> Dynamic<P> for StructureTree {
    type Tree = OwnedStructure;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<OwnedStructure> {
        let data = Data::new(bytes, context());
        let (tree, _read) = data.deserialize_for_dynamic_signature(P::SIGNATURE.clone())?;
        Ok(tree)
    }

    /// The tree holds the same data when it re-encodes, under the same signature, to bytes
    /// that decode to the payload.
    fn to_model(&mut self, tree: OwnedStructure) -> Result<P> {
        let bytes = zbus::wire::to_bytes_for_signature(context(), P::SIGNATURE.clone(), &tree)?;
        DbusCodec.decode(&bytes)
    }
}

/// The D-Bus signature of a data payload, or why it has none. The D-Bus specification caps a
/// signature at 255 characters.
fn data_signature(payload: &DataPayload) -> Result<Signature, String> {
    if let Some(reason) = too_deep(&payload.schema) {
        return Err(reason);
    }
    let record = &payload.schema.record;
    let path = &mut String::from("$");
    let signature = match Root::of(payload) {
        Root::List => Signature::structure([Signature::array(signature_of(record, path)?)]),
        Root::Struct => signature_of(record, path)?,
        Root::Wrapped => Signature::structure([signature_of(record, path)?]),
    };
    let length = signature.string_len();
    if length > 255 {
        return Err(format!(
            "the data's D-Bus signature is {length} characters; D-Bus allows 255"
        ));
    }
    Ok(signature)
}

/// How a data payload becomes the one struct a D-Bus message body is.
enum Root {
    /// A list of records: a struct of one array.
    List,
    /// One record with fields: that struct.
    Struct,
    /// One value of another type, or an object that was always empty (a dict: D-Bus has no
    /// struct without fields): a struct of one field.
    Wrapped,
}

impl Root {
    fn of(payload: &DataPayload) -> Root {
        match (&payload.schema.record.kind, payload.is_list()) {
            (_, true) => Root::List,
            (Kind::Record(fields), false) if !fields.is_empty() => Root::Struct,
            (_, false) => Root::Wrapped,
        }
    }
}

/// The signature of the values at `path`.
fn signature_of(ty: &Type, path: &mut String) -> Result<Signature, String> {
    if ty.nullable() {
        return Err(format!(
            "{path}: D-Bus has no null (null in {} of {})",
            ty.nulls, ty.seen
        ));
    }
    let parent = path.len();
    let signature = match &ty.kind {
        // Never seen: the lists there were always empty, so any element type reads them.
        Kind::Null | Kind::String => Signature::Str,
        Kind::Bool => Signature::Bool,
        Kind::Int => Signature::I64,
        Kind::Float => Signature::F64,
        Kind::Union(_) => Signature::Variant,
        Kind::Array(item) => {
            path.push_str("[]");
            Signature::array(signature_of(item, path)?)
        }
        Kind::Map(value) => {
            path.push_str(".*");
            Signature::dict(Signature::Str, signature_of(value, path)?)
        }
        // An object that was always empty: a struct needs a field, a dict does not.
        Kind::Record(fields) if fields.is_empty() => Signature::dict(Signature::Str, Signature::Variant),
        Kind::Record(fields) => {
            let mut signatures = Vec::with_capacity(fields.len());
            for field in fields {
                crate::payload::data::read::push_key(path, &field.name);
                if field.optional() {
                    return Err(format!(
                        "{path}: absent from some objects (a D-Bus struct has every field)"
                    ));
                }
                signatures.push(signature_of(&field.ty, path)?);
                path.truncate(parent);
            }
            Signature::structure(signatures)
        }
    };
    path.truncate(parent);
    Ok(signature)
}

/// A data payload as one D-Bus struct of its signature.
pub struct DbusData {
    signature: Signature,
}

/// D-Bus's tree of a data payload: one struct.
#[derive(Debug, PartialEq)]
pub struct StructTree(OwnedStructure);

impl Clone for StructTree {
    fn clone(&self) -> StructTree {
        StructTree(OwnedStructure(
            self.0.0.try_clone().expect("data holds no file descriptors"),
        ))
    }
}

pub struct DbusDataCodec {
    signature: Signature,
}

impl Codec<StructTree> for DbusDataCodec {
    fn encode<'a>(&'a mut self, StructTree(tree): &StructTree, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        // SAFETY: as in `DbusCodec::encode`: the data holds no file descriptors.
        let written = unsafe {
            zbus::wire::to_writer_for_signature(
                &mut Cursor::new(&mut *out),
                context(),
                &self.signature,
                tree,
            )?
        };
        drop(written);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<StructTree> {
        let (tree, read) = Data::new(bytes, context()).deserialize_for_dynamic_signature(&self.signature)?;
        anyhow::ensure!(
            read == bytes.len(),
            "{} bytes after the value",
            bytes.len() - read
        );
        Ok(StructTree(tree))
    }
}

impl DataTree<DataPayload> for DbusData {
    type Tree = StructTree;
    type Codec = DbusDataCodec;

    fn codec(&self) -> DbusDataCodec {
        DbusDataCodec {
            signature: self.signature.clone(),
        }
    }

    fn tree(&self, data: &DataPayload) -> Result<StructTree> {
        let record = &data.schema.record;
        let variant = match Root::of(data) {
            Root::List => {
                let list = Type {
                    kind: Kind::Array(Box::new(record.clone())),
                    seen: 1,
                    nulls: 0,
                };
                one_field(variant_of(&data.as_value(), &list)?)?
            }
            Root::Struct => variant_of(&data.records[0], record)?,
            Root::Wrapped => one_field(variant_of(&data.records[0], record)?)?,
        };
        match variant {
            Variant::Structure(structure) => Ok(StructTree(OwnedStructure(structure))),
            other => anyhow::bail!("the root is a {}, not a struct", other.value_signature()),
        }
    }

    fn holds(&self, StructTree(tree): &StructTree, data: &DataPayload) -> Result<Option<Difference>> {
        let record = &data.schema.record;
        let root = Variant::Structure(tree.0.try_clone()?);
        let json = match Root::of(data) {
            Root::List => {
                let list = Type {
                    kind: Kind::Array(Box::new(record.clone())),
                    seen: 1,
                    nulls: 0,
                };
                json_of(only_field(&root)?, &list)?
            }
            Root::Struct => json_of(&root, record)?,
            Root::Wrapped => json_of(only_field(&root)?, record)?,
        };
        Ok(data.compare(&json, Equivalence::Schema))
    }
}

fn one_field(variant: Variant<'static>) -> Result<Variant<'static>> {
    Ok(Variant::Structure(
        StructureBuilder::new().append_field(variant).build()?,
    ))
}

fn only_field<'v>(variant: &'v Variant<'static>) -> Result<&'v Variant<'static>> {
    match variant {
        Variant::Structure(structure) if structure.fields().len() == 1 => Ok(&structure.fields()[0]),
        other => anyhow::bail!("expected a one-field struct, found {}", other.value_signature()),
    }
}

/// The D-Bus value of `json` at a place of type `ty` (which has no null: see [`signature_of`]).
fn variant_of(json: &serde_json::Value, ty: &Type) -> Result<Variant<'static>> {
    use serde_json::Value as Json;
    let no_path = &mut String::new();
    Ok(match (json, &ty.kind) {
        (value, Kind::Union(branches)) => {
            let branch = crate::payload::data::schema::branch_of(value, branches)
                .context("a union branch for the value")?;
            Variant::Variant(Box::new(variant_of(value, &branches[branch])?))
        }
        (Json::Bool(flag), _) => Variant::Bool(*flag),
        (Json::Number(number), Kind::Float) => Variant::F64(number.as_f64().context("a number")?),
        (Json::Number(number), _) if !number.is_f64() => Variant::I64(number.as_i64().context("an integer")?),
        (Json::String(text), _) => Variant::Str(text.clone().into()),
        (Json::Array(items), Kind::Array(item)) => {
            let mut array = Array::new(&signature_of(item, no_path).map_err(anyhow::Error::msg)?);
            for value in items {
                array.append(variant_of(value, item)?)?;
            }
            Variant::Array(array)
        }
        (Json::Object(object), Kind::Map(value_type)) => {
            let mut dict = Dict::new(
                &Signature::Str,
                &signature_of(value_type, no_path).map_err(anyhow::Error::msg)?,
            );
            for (key, value) in object {
                dict.append(Variant::Str(key.clone().into()), variant_of(value, value_type)?)?;
            }
            Variant::Dict(dict)
        }
        (Json::Object(object), Kind::Record(fields)) if fields.is_empty() && object.is_empty() => {
            Variant::Dict(Dict::new(&Signature::Str, &Signature::Variant))
        }
        (Json::Object(object), Kind::Record(fields)) => {
            let mut builder = StructureBuilder::new();
            for field in fields {
                let value = object.get(&field.name).context("a struct has every field")?;
                builder.push_value(variant_of(value, &field.ty)?);
            }
            Variant::Structure(builder.build()?)
        }
        (value, kind) => anyhow::bail!("{value} does not fit D-Bus {}", kind.name()),
    })
}

/// The JSON a D-Bus value of type `ty` stands for; a struct's fields take the record's names.
fn json_of(variant: &Variant<'_>, ty: &Type) -> Result<serde_json::Value> {
    use serde_json::Value as Json;
    Ok(match (variant, &ty.kind) {
        (Variant::Bool(flag), _) => Json::from(*flag),
        (Variant::I64(integer), _) => Json::from(*integer),
        (Variant::F64(float), _) => serde_json::Number::from_f64(*float)
            .map(Json::Number)
            .with_context(|| format!("the double {float} is not a JSON number"))?,
        (Variant::Str(text), _) => Json::from(&**text),
        (Variant::Variant(inner), Kind::Union(branches)) => {
            let branch = branches
                .iter()
                .find(|branch| variant_fits(inner, &branch.kind))
                .with_context(|| format!("no branch of the union holds a {}", inner.value_signature()))?;
            json_of(inner, branch)?
        }
        (Variant::Array(array), Kind::Array(item)) => Json::Array(
            array
                .inner()
                .iter()
                .map(|value| json_of(value, item))
                .collect::<Result<_>>()?,
        ),
        (Variant::Dict(dict), Kind::Map(value_type)) => Json::Object(
            dict.iter()
                .map(|(key, value)| match key {
                    Variant::Str(key) => Ok((key.to_string(), json_of(value, value_type)?)),
                    other => anyhow::bail!("a dict key {}", other.value_signature()),
                })
                .collect::<Result<_>>()?,
        ),
        (Variant::Dict(dict), Kind::Record(fields)) if fields.is_empty() && dict.iter().next().is_none() => {
            Json::Object(serde_json::Map::new())
        }
        (Variant::Structure(structure), Kind::Record(fields)) if structure.fields().len() == fields.len() => {
            Json::Object(
                fields
                    .iter()
                    .zip(structure.fields())
                    .map(|(field, value)| Ok((field.name.clone(), json_of(value, &field.ty)?)))
                    .collect::<Result<_>>()?,
            )
        }
        (other, kind) => anyhow::bail!(
            "a D-Bus {} where the data has {}",
            other.value_signature(),
            kind.name()
        ),
    })
}

fn variant_fits(variant: &Variant<'_>, kind: &Kind) -> bool {
    matches!(
        (variant, kind),
        (Variant::Bool(_), Kind::Bool)
            | (Variant::I64(_), Kind::Int)
            | (Variant::F64(_), Kind::Float)
            | (Variant::Str(_), Kind::String)
            | (Variant::Array(_), Kind::Array(_))
            | (Variant::Dict(_), Kind::Map(_))
            | (Variant::Structure(_), Kind::Record(_))
    )
}

/// Fidelity: `zbus::wire` deserialization of `order`, little endian.
fn zbus_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let context = Context::new(LE, 0);
    let bytes = zbus::wire::to_bytes(context, order)
        .expect("order encodes")
        .to_vec();
    Box::new(move || {
        let data = Data::new(black_box(&bytes[..]), context);
        black_box(data.deserialize::<Order>().expect("it decodes").0);
    })
}

#[cfg(test)]
mod data_tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    fn reasons(text: &str) -> Vec<String> {
        Registry::data_proofs(&FORMAT, test_payload("t", text)).1
    }

    #[test]
    fn data_without_nulls_gets_a_signature_and_proves() {
        let text = r#"{"type": "FeatureCollection", "features": [{"geometry": {"coordinates": [[[-65.6, 43], [1, 2.5]]]}, "empty": {}, "v": 1}, {"geometry": {"coordinates": []}, "empty": {}, "v": "x"}]}"#;
        let payload = test_payload("shapes", text);
        assert_eq!(data_signature(payload).unwrap().to_string(), "(a(a{sv}(aaad)v)s)");
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, payload);
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
    }

    #[test]
    fn nulls_absent_fields_and_long_signatures_are_unsupported_with_the_path() {
        assert_eq!(
            reasons(TRICKY),
            ["$.labels: absent from some objects (a D-Bus struct has every field)"]
        );
        assert_eq!(
            reasons(r#"[{"a": null}, {"a": 1}]"#),
            ["$.a: D-Bus has no null (null in 1 of 2)"]
        );
        let wide: Vec<String> = (0..300).map(|index| format!("\"f{index}\": 1")).collect();
        let wide = format!("{{{}}}", wide.join(", "));
        // 300 keys make a map (more than 256), so force a record.
        let payload = crate::payload::data::DataPayload::from_bytes(
            "wide.json".into(),
            "wide",
            wide.into_bytes(),
            &crate::payload::data::Request {
                overrides: crate::payload::data::Overrides {
                    maps: vec![],
                    records: vec!["$".into()],
                },
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            Registry::data_proofs(&FORMAT, payload).1,
            ["the data's D-Bus signature is 302 characters; D-Bus allows 255"]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::Request;

    fn typed_reason(text: String) -> Option<String> {
        let data =
            DataPayload::from_bytes("d.json".into(), "d", text.into_bytes(), &Request::default()).unwrap();
        typed_refuses(data)
    }

    #[test]
    fn deep_records_and_transparent_wrappers_are_reasons() {
        let nested = |depth: usize| {
            (0..depth).fold("1".to_string(), |inner, level| {
                format!("{{\"a{level}\": {inner}}}")
            })
        };
        assert_eq!(typed_reason(nested(31)), None);
        let reason = typed_reason(nested(32)).unwrap();
        assert!(
            reason.ends_with("nested deeper than D-Bus's limit of 32 structs (records)"),
            "{reason}"
        );
        let reason = typed_reason("[1]\n[2]\n".to_string()).unwrap();
        assert!(reason.starts_with("$: the records are not objects"), "{reason}");
    }
}

//! `serbench evolve` on savefile: each program's type declared as savefile's derive would have it
//! declared, from the shapes, and saved and loaded through savefile's own `save`/`load` (or
//! `save_noschema`/`load_noschema`): its header with the program's version number, its check of
//! that number against the reader's, and, with the schema, its comparison of the file's schema
//! with the reader's (`diff_schema`, inside `load`). The values themselves go through savefile's
//! own `Serialize`, `Deserialize` and `WithSchema` of `bool`, `i32`, `i64`, `f64`, `String` and
//! `usize` (a list's or map's count); an `Option` a `bool` before its value, a map's entries in key
//! order (a `BTreeMap`'s) with the schema of savefile's `BTreeMap`.
//!
//! The old program is version 0, its type the old shape. The new program is version 1 and
//! declares its type as savefile's documentation says (lib.rs, "Versions and derive"): an added
//! field `#[savefile_versions = "1.."]` (its `Default` for older files); a removed field kept in
//! its place as `Removed<T>` with `#[savefile_versions = "..0"]`; a field of a new type
//! `#[savefile_versions_as = "0..0:OldType"]` and `"1.."`, which savefile converts by `From`
//! (`i32` to `i64`, `T` to `Option<T>`); a renamed or moved field is just renamed or moved (the
//! names in savefile's schema are for messages only). The unit test holds the twin to the derive.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::ops::RangeInclusive;

use savefile::prelude::{
    Deserialize, Deserializer, Field, SavefileError, Schema, SchemaStruct, Serialize, Serializer, WithSchema,
    WithSchemaContext,
};
use serde_json::Value;

use crate::format::{SchemaEvolution, Versioned};
use crate::shape::{Record, Shape};

pub const EVOLUTION: SchemaEvolution = evolution::<true>("");
pub const NOSCHEMA_EVOLUTION: SchemaEvolution = evolution::<false>("noschema");

const fn evolution<const SCHEMA: bool>(variant: &'static str) -> SchemaEvolution {
    SchemaEvolution {
        backend: "savefile",
        variant,
        mechanism: if SCHEMA {
            "version numbers: `#[savefile_versions]` per field, a newer file refused; the schema checked on load (types, not names)"
        } else {
            "version numbers: `#[savefile_versions]` per field, a newer file refused; no schema"
        },
        encode: |shape, value| encode::<SCHEMA>(shape, 0, value),
        decode: |writer, reader, bytes| decode::<SCHEMA>(writer, reader, 0, bytes),
        versioned: Some(Versioned {
            expressible: |old, new| declare(old, new).map(drop),
            encode: encode::<SCHEMA>,
            decode: decode::<SCHEMA>,
        }),
    }
}

/// A field of a program's type with its savefile attributes.
#[derive(Clone, Debug)]
struct Member {
    name: &'static str,
    shape: Shape,
    /// `#[savefile_versions = "..."]`: the versions it is saved in (all, without the attribute).
    versions: RangeInclusive<u32>,
    /// `#[savefile_versions_as = "0..0:OldType"]`: older versions saved it as another type.
    was: Option<(RangeInclusive<u32>, Shape)>,
    /// `Removed<T>`: read from the versions it was saved in, and dropped.
    removed: bool,
}

/// A program's top-level type: a record's fields with their attributes, or a plain shape.
#[derive(Clone, Debug)]
enum Declared {
    Record {
        name: &'static str,
        members: Vec<Member>,
    },
    Plain(Shape),
}

const ALL: RangeInclusive<u32> = 0..=u32::MAX;

/// The type of the program whose shape is `shape`, with no version attribute (version 0's).
fn plain(shape: &Shape) -> Declared {
    match shape {
        Shape::Record(record) => Declared::Record {
            name: record.name,
            members: record
                .fields
                .iter()
                .map(|field| Member {
                    name: field.name,
                    shape: field.shape.clone(),
                    versions: ALL,
                    was: None,
                    removed: false,
                })
                .collect(),
        },
        shape => Declared::Plain(shape.clone()),
    }
}

/// The new program's type (version 1) declared from the old one's (version 0), or why savefile's
/// attributes cannot declare it.
fn declare(old: &Shape, new: &Shape) -> Result<Declared, String> {
    let (Shape::Record(old), Shape::Record(new)) = (old, new) else {
        return match old == new {
            true => Ok(plain(new)),
            false => Err(format!("{old} to {new}: not a field's change")),
        };
    };
    let source = |field: &crate::shape::Field| {
        old.fields
            .iter()
            .find(|source| field.answers_to(source.name) || source.answers_to(field.name))
    };
    let mut members = Vec::new();
    for field in &new.fields {
        let (versions, was) = match source(field) {
            // Added: `#[savefile_versions = "1.."]`, its `Default` (serbench's defaults are
            // `Default::default()`, an `Option` `None`) for older files.
            None => (1..=u32::MAX, None),
            Some(source) if source.shape == field.shape => (ALL, None),
            Some(source) => {
                converts(&source.shape, &field.shape)?;
                (1..=u32::MAX, Some((0..=0, source.shape.clone())))
            }
        };
        members.push(Member {
            name: field.name,
            shape: field.shape.clone(),
            versions,
            was,
            removed: false,
        });
    }
    // A removed field stays where it was, as `Removed<T>` with `#[savefile_versions = "..0"]`:
    // after the field that came before it.
    for (index, field) in old.fields.iter().enumerate() {
        if new
            .fields
            .iter()
            .any(|kept| kept.answers_to(field.name) || field.answers_to(kept.name))
        {
            continue;
        }
        let at = match index {
            0 => 0,
            _ => {
                let before = &old.fields[index - 1];
                members
                    .iter()
                    .position(|member| {
                        member.name == before.name
                            || new
                                .fields
                                .iter()
                                .any(|kept| kept.name == member.name && kept.answers_to(before.name))
                    })
                    .map_or(0, |position| position + 1)
            }
        };
        members.insert(
            at,
            Member {
                name: field.name,
                shape: field.shape.clone(),
                versions: 0..=0,
                was: None,
                removed: true,
            },
        );
    }
    Ok(Declared::Record {
        name: new.name,
        members,
    })
}

/// Whether `savefile_versions_as` reads `from` as `to`: by `From`, as it does without a function
/// (`i32` to `i64`, `T` to `Option<T>`, and within an `Option`).
fn converts(from: &Shape, to: &Shape) -> Result<(), String> {
    match (from, to) {
        (from, to) if from == to => Ok(()),
        (Shape::I32, Shape::I64) => Ok(()),
        (from, Shape::Option(to)) if **to == *from => Ok(()),
        _ => Err(format!(
            "{from} to {to}: `#[savefile_versions_as]` needs a conversion function, and serbench's shapes have none"
        )),
    }
}

thread_local! {
    /// The reading or writing program's type while savefile calls `WithSchema::schema` and
    /// `Deserialize::deserialize`, which take no value to find it in.
    static DECLARED: RefCell<Option<Declared>> = const { RefCell::new(None) };
}

/// `run` with `declared` the program's type.
fn with_declared<T>(declared: Declared, run: impl FnOnce() -> T) -> T {
    let previous = DECLARED.with(|cell| cell.replace(Some(declared)));
    let result = run();
    DECLARED.with(|cell| cell.replace(previous));
    result
}

fn declared<T>(run: impl FnOnce(&Declared) -> T) -> T {
    DECLARED.with(|cell| run(cell.borrow().as_ref().expect("a program's type is declared")))
}

/// The value the program saves, of the declared type.
struct Saved<'a>(&'a Value);

/// The value the program loads.
struct Loaded(Value);

impl WithSchema for Saved<'_> {
    fn schema(version: u32, context: &mut WithSchemaContext) -> Schema {
        declared(|declared| declared.schema(version, context))
    }
}

impl WithSchema for Loaded {
    fn schema(version: u32, context: &mut WithSchemaContext) -> Schema {
        declared(|declared| declared.schema(version, context))
    }
}

impl Serialize for Saved<'_> {
    fn serialize(&self, serializer: &mut Serializer<impl Write>) -> Result<(), SavefileError> {
        declared(|declared| declared.serialize(self.0, serializer))
    }
}

impl Deserialize for Loaded {
    fn deserialize(deserializer: &mut Deserializer<impl Read>) -> Result<Self, SavefileError> {
        declared(|declared| declared.deserialize(deserializer)).map(Loaded)
    }
}

fn encode<const SCHEMA: bool>(shape: &Shape, version: u32, value: &Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    with_declared(plain(shape), || {
        if SCHEMA {
            savefile::save(&mut out, version, &Saved(value))
        } else {
            savefile::save_noschema(&mut out, version, &Saved(value))
        }
    })
    .map_err(|error| error.to_string())?;
    Ok(out)
}

fn decode<const SCHEMA: bool>(
    writer: &Shape,
    reader: &Shape,
    version: u32,
    mut bytes: &[u8],
) -> Result<Value, String> {
    let declared = match version {
        0 => plain(reader),
        _ => declare(writer, reader)?,
    };
    with_declared(declared, || {
        if SCHEMA {
            savefile::load::<Loaded>(&mut bytes, version)
        } else {
            savefile::load_noschema::<Loaded>(&mut bytes, version)
        }
    })
    .map(|loaded| loaded.0)
    .map_err(|error| error.to_string())
}

impl Member {
    /// Whether it is saved in `version`, and as what.
    fn saved_as(&self, version: u32) -> Option<&Shape> {
        match &self.was {
            Some((versions, was)) if versions.contains(&version) => Some(was),
            _ => self.versions.contains(&version).then_some(&self.shape),
        }
    }
}

impl Declared {
    /// As the derive's `WithSchema`: the fields saved in `version`, by the type they are saved as.
    fn schema(&self, version: u32, context: &mut WithSchemaContext) -> Schema {
        match self {
            Declared::Plain(shape) => schema(shape, version, context),
            Declared::Record { name, members } => Schema::Struct(SchemaStruct::new(
                name.to_string(),
                members
                    .iter()
                    .filter_map(|member| {
                        let shape = member.saved_as(version)?;
                        Some(Field::new(
                            member.name.to_string(),
                            Box::new(schema(shape, version, context)),
                        ))
                    })
                    .collect(),
            )),
        }
    }

    /// As the derive's `Serialize`: the fields of the serializer's version (a program saves only
    /// its own).
    fn serialize(&self, value: &Value, serializer: &mut Serializer<impl Write>) -> Result<(), SavefileError> {
        match self {
            Declared::Plain(shape) => serialize(shape, value, serializer),
            Declared::Record { members, .. } => {
                let version = serializer.file_version;
                for member in members {
                    if let Some(shape) = member.saved_as(version) {
                        serialize(shape, value.get(member.name).unwrap_or(&Value::Null), serializer)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// As the derive's `Deserialize`: by the file's version, each field as it was saved then (a
    /// `Removed<T>` read and dropped, an older type converted), else its default.
    fn deserialize(&self, deserializer: &mut Deserializer<impl Read>) -> Result<Value, SavefileError> {
        match self {
            Declared::Plain(shape) => deserialize(shape, deserializer),
            Declared::Record { members, .. } => {
                let version = deserializer.file_version;
                let mut fields = serde_json::Map::new();
                for member in members {
                    let value = match member.saved_as(version) {
                        // `From` of `i32` to `i64` and of `T` to `Option<T>`: the same JSON.
                        Some(shape) => deserialize(shape, deserializer)?,
                        None => member.shape.default_value(),
                    };
                    if !member.removed {
                        fields.insert(member.name.to_string(), value);
                    }
                }
                Ok(Value::Object(fields))
            }
        }
    }
}

/// As savefile's `WithSchema` of the type `shape` stands for (a record as the derive's, without
/// the memory layout it records for savefile-abi, which `load` does not compare).
fn schema(shape: &Shape, version: u32, context: &mut WithSchemaContext) -> Schema {
    match shape {
        Shape::Bool => bool::schema(version, context),
        Shape::I32 => i32::schema(version, context),
        Shape::I64 => i64::schema(version, context),
        Shape::F64 => f64::schema(version, context),
        Shape::String => String::schema(version, context),
        Shape::Option(inner) => Schema::SchemaOption(Box::new(schema(inner, version, context))),
        Shape::List(item) => Schema::Vector(
            Box::new(schema(item, version, context)),
            savefile::calculate_vec_memory_layout::<u64>(),
        ),
        // `BTreeMap<String, V>`'s: a vector of key-value structs.
        Shape::Map(inner) => {
            let Schema::Vector(_, layout) =
                <std::collections::BTreeMap<String, u8>>::schema(version, context)
            else {
                unreachable!("savefile's schema of a BTreeMap is a vector");
            };
            Schema::Vector(
                Box::new(Schema::Struct(SchemaStruct::new(
                    "KeyValuePair".to_string(),
                    vec![
                        Field::new("key".to_string(), Box::new(String::schema(version, context))),
                        Field::new("value".to_string(), Box::new(schema(inner, version, context))),
                    ],
                ))),
                layout,
            )
        }
        Shape::Record(Record { name, fields }) => Schema::Struct(SchemaStruct::new(
            name.to_string(),
            fields
                .iter()
                .map(|field| {
                    Field::new(
                        field.name.to_string(),
                        Box::new(schema(&field.shape, version, context)),
                    )
                })
                .collect(),
        )),
    }
}

fn wrong(shape: &Shape, value: &Value) -> SavefileError {
    SavefileError::GeneralError {
        msg: format!("{value} is no {shape}"),
    }
}

/// As savefile's `Serialize` of the type `shape` stands for.
fn serialize(
    shape: &Shape,
    value: &Value,
    serializer: &mut Serializer<impl Write>,
) -> Result<(), SavefileError> {
    match (shape, value) {
        (Shape::Option(_), Value::Null) => false.serialize(serializer),
        (Shape::Option(inner), value) => {
            true.serialize(serializer)?;
            serialize(inner, value, serializer)
        }
        (Shape::Bool, Value::Bool(value)) => value.serialize(serializer),
        (Shape::I32, Value::Number(number)) => number
            .as_i64()
            .and_then(|value| i32::try_from(value).ok())
            .ok_or_else(|| wrong(shape, value))?
            .serialize(serializer),
        (Shape::I64, Value::Number(number)) => number
            .as_i64()
            .ok_or_else(|| wrong(shape, value))?
            .serialize(serializer),
        (Shape::F64, Value::Number(number)) => number
            .as_f64()
            .ok_or_else(|| wrong(shape, value))?
            .serialize(serializer),
        (Shape::String, Value::String(text)) => text.serialize(serializer),
        (Shape::List(item), Value::Array(items)) => {
            items.len().serialize(serializer)?;
            items
                .iter()
                .try_for_each(|value| serialize(item, value, serializer))
        }
        (Shape::Map(inner), Value::Object(entries)) => {
            entries.len().serialize(serializer)?;
            let mut sorted: Vec<(&String, &Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (key, value) in sorted {
                key.serialize(serializer)?;
                serialize(inner, value, serializer)?;
            }
            Ok(())
        }
        (Shape::Record(record), Value::Object(fields)) => record.fields.iter().try_for_each(|field| {
            serialize(
                &field.shape,
                fields.get(field.name).unwrap_or(&Value::Null),
                serializer,
            )
        }),
        _ => Err(wrong(shape, value)),
    }
}

/// As savefile's `Deserialize` of the type `shape` stands for.
fn deserialize(shape: &Shape, deserializer: &mut Deserializer<impl Read>) -> Result<Value, SavefileError> {
    Ok(match shape {
        Shape::Option(inner) => match bool::deserialize(deserializer)? {
            false => Value::Null,
            true => deserialize(inner, deserializer)?,
        },
        Shape::Bool => Value::from(bool::deserialize(deserializer)?),
        Shape::I32 => Value::from(i32::deserialize(deserializer)?),
        Shape::I64 => Value::from(i64::deserialize(deserializer)?),
        Shape::F64 => Value::from(f64::deserialize(deserializer)?),
        Shape::String => Value::from(String::deserialize(deserializer)?),
        Shape::List(item) => {
            let count = usize::deserialize(deserializer)?;
            Value::Array(
                (0..count)
                    .map(|_| deserialize(item, deserializer))
                    .collect::<Result<_, _>>()?,
            )
        }
        Shape::Map(inner) => {
            let count = usize::deserialize(deserializer)?;
            let mut entries = serde_json::Map::new();
            for _ in 0..count {
                let key = String::deserialize(deserializer)?;
                entries.insert(key, deserialize(inner, deserializer)?);
            }
            Value::Object(entries)
        }
        Shape::Record(record) => Value::Object(
            record
                .fields
                .iter()
                .map(|field| Ok((field.name.to_string(), deserialize(&field.shape, deserializer)?)))
                .collect::<Result<_, SavefileError>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use savefile::prelude::Savefile;
    use serde_json::json;

    use super::*;
    use crate::shape::Field as ShapeField;

    #[derive(Debug, PartialEq, Savefile)]
    pub struct Inner {
        flag: bool,
        small: i32,
    }

    /// The old program's type: version 0.
    mod v0 {
        use std::collections::BTreeMap;

        use savefile::prelude::Savefile;

        #[derive(Debug, PartialEq, Savefile)]
        pub struct Record {
            pub id: i64,
            pub note: Option<String>,
            pub scores: Vec<f64>,
            pub counts: BTreeMap<String, i32>,
            pub inner: super::Inner,
            pub gone: String,
            pub level: i32,
            pub maybe: i64,
        }
    }

    /// The new program's type, version 1, declared as savefile's documentation says: `note`
    /// renamed, `gone` removed, `level` widened, `maybe` made nullable, `added` and `count` added.
    mod v1 {
        use std::collections::BTreeMap;

        use savefile::prelude::{Removed, Savefile};

        #[derive(Debug, PartialEq, Savefile)]
        pub struct Record {
            pub id: i64,
            pub note_v2: Option<String>,
            pub scores: Vec<f64>,
            pub counts: BTreeMap<String, i32>,
            pub inner: super::Inner,
            #[savefile_versions = "..0"]
            pub gone: Removed<String>,
            #[savefile_versions_as = "0..0:i32"]
            #[savefile_versions = "1.."]
            pub level: i64,
            #[savefile_versions_as = "0..0:i64"]
            #[savefile_versions = "1.."]
            pub maybe: Option<i64>,
            #[savefile_versions = "1.."]
            pub added: Option<String>,
            #[savefile_versions = "1.."]
            pub count: i64,
        }
    }

    /// Two fields of different types swapped, the version bumped and nothing else declared.
    mod moved {
        use savefile::prelude::Savefile;

        #[derive(Debug, PartialEq, Savefile)]
        pub struct Pair {
            pub a: i64,
            pub b: String,
        }

        pub mod v1 {
            use savefile::prelude::Savefile;

            #[derive(Debug, PartialEq, Savefile)]
            pub struct Pair {
                pub b: String,
                pub a: i64,
            }
        }
    }

    fn inner() -> Shape {
        Shape::Record(Record {
            name: "Inner",
            fields: vec![
                ShapeField::new("flag", Shape::Bool),
                ShapeField::new("small", Shape::I32),
            ],
        })
    }

    fn old() -> Shape {
        Shape::Record(Record {
            name: "Record",
            fields: vec![
                ShapeField::new("id", Shape::I64),
                ShapeField::new("note", Shape::Option(Box::new(Shape::String))),
                ShapeField::new("scores", Shape::List(Box::new(Shape::F64))),
                ShapeField::new("counts", Shape::Map(Box::new(Shape::I32))),
                ShapeField::new("inner", inner()),
                ShapeField::new("gone", Shape::String),
                ShapeField::new("level", Shape::I32),
                ShapeField::new("maybe", Shape::I64),
            ],
        })
    }

    fn new() -> Shape {
        let mut note = ShapeField::new("note_v2", Shape::Option(Box::new(Shape::String)));
        note.aliases.push("note");
        let mut count = ShapeField::new("count", Shape::I64);
        count.default = true;
        Shape::Record(Record {
            name: "Record",
            fields: vec![
                ShapeField::new("id", Shape::I64),
                note,
                ShapeField::new("scores", Shape::List(Box::new(Shape::F64))),
                ShapeField::new("counts", Shape::Map(Box::new(Shape::I32))),
                ShapeField::new("inner", inner()),
                ShapeField::new("level", Shape::I64),
                ShapeField::new("maybe", Shape::Option(Box::new(Shape::I64))),
                ShapeField::new("added", Shape::Option(Box::new(Shape::String))),
                count,
            ],
        })
    }

    fn counts() -> BTreeMap<String, i32> {
        BTreeMap::from([("b".to_string(), 2), ("a".to_string(), 1)])
    }

    fn old_value(note: Option<&str>) -> (v0::Record, Value) {
        let record = v0::Record {
            id: -3,
            note: note.map(String::from),
            scores: vec![0.5, -1.25],
            counts: counts(),
            inner: Inner { flag: true, small: 7 },
            gone: "bye".into(),
            level: -9,
            maybe: 11,
        };
        let json = json!({
            "id": -3, "note": note, "scores": [0.5, -1.25], "counts": {"a": 1, "b": 2},
            "inner": {"flag": true, "small": 7}, "gone": "bye", "level": -9, "maybe": 11,
        });
        (record, json)
    }

    fn new_json(record: &v1::Record) -> Value {
        json!({
            "id": record.id, "note_v2": record.note_v2, "scores": record.scores,
            "counts": record.counts,
            "inner": {"flag": record.inner.flag, "small": record.inner.small},
            "level": record.level, "maybe": record.maybe, "added": record.added,
            "count": record.count,
        })
    }

    /// A schema without the memory layout the derive records for savefile-abi (field offsets, a
    /// struct's size and alignment), which a run-time type cannot know and `load` does not
    /// compare.
    fn without_layout(schema: &Schema) -> Schema {
        match schema {
            Schema::Struct(record) => Schema::Struct(SchemaStruct::new(
                record.dbg_name.clone(),
                record
                    .fields
                    .iter()
                    .map(|field| Field::new(field.name.clone(), Box::new(without_layout(&field.value))))
                    .collect(),
            )),
            Schema::Vector(item, layout) => Schema::Vector(Box::new(without_layout(item)), *layout),
            Schema::SchemaOption(inner) => Schema::SchemaOption(Box::new(without_layout(inner))),
            other => other.clone(),
        }
    }

    /// `save`'s bytes with the schema's memory layout left out: header, schema, data.
    fn layout_free(bytes: &[u8]) -> Vec<u8> {
        const HEADER: usize = 9 + 2 + 4 + 1;
        let lib_version = u16::from_le_bytes([bytes[9], bytes[10]]);
        let mut rest = &bytes[HEADER..];
        let schema =
            Schema::deserialize(&mut savefile::new_schema_deserializer(&mut rest, lib_version)).unwrap();
        let mut out = bytes[..HEADER].to_vec();
        without_layout(&schema)
            .serialize(&mut Serializer::<Vec<u8>>::new_raw(
                &mut out,
                u32::from(lib_version),
            ))
            .unwrap();
        out.extend_from_slice(rest);
        out
    }

    /// The derive's `save` (stripped of layout) or `save_noschema` bytes.
    fn derived<T: WithSchema + Serialize>(schema: bool, version: u32, value: &T) -> Vec<u8> {
        let mut out = Vec::new();
        if schema {
            savefile::save(&mut out, version, value).unwrap();
            layout_free(&out)
        } else {
            savefile::save_noschema(&mut out, version, value).unwrap();
            out
        }
    }

    fn load<T: WithSchema + Deserialize>(
        schema: bool,
        version: u32,
        mut bytes: &[u8],
    ) -> Result<T, SavefileError> {
        match schema {
            true => savefile::load(&mut bytes, version),
            false => savefile::load_noschema(&mut bytes, version),
        }
    }

    fn codecs() -> [(bool, &'static SchemaEvolution); 2] {
        [(true, &EVOLUTION), (false, &NOSCHEMA_EVOLUTION)]
    }

    #[test]
    fn the_twin_writes_and_reads_each_version_as_savefiles_derive() {
        for (schema, codec) in codecs() {
            let versioned = codec.versioned.as_ref().unwrap();
            assert!((versioned.expressible)(&old(), &new()).is_ok());
            for note in [Some("n"), None] {
                let (record, json) = old_value(note);
                // Version 0: the twin's bytes are the derive's.
                let old_bytes = derived(schema, 0, &record);
                assert_eq!(
                    (versioned.encode)(&old(), 0, &json).unwrap(),
                    old_bytes,
                    "schema {schema}"
                );
                assert_eq!((versioned.decode)(&old(), &old(), 0, &old_bytes).unwrap(), json);
                // The new program reads them as the derive with its version attributes does.
                let read: v1::Record = load(schema, 1, &old_bytes).unwrap();
                assert_eq!(read.count, 0);
                assert_eq!(read.added, None);
                assert_eq!(read.level, -9);
                assert_eq!(read.maybe, Some(11));
                assert_eq!(
                    (versioned.decode)(&old(), &new(), 1, &old_bytes).unwrap(),
                    new_json(&read),
                    "schema {schema}"
                );
                // Version 1: the twin's bytes are the derive's.
                let written = v1::Record {
                    count: 7,
                    added: Some("added".into()),
                    ..read
                };
                let new_bytes = derived(schema, 1, &written);
                assert_eq!(
                    (versioned.encode)(&new(), 1, &new_json(&written)).unwrap(),
                    new_bytes,
                    "schema {schema}"
                );
                assert_eq!(
                    (versioned.decode)(&old(), &new(), 1, &new_bytes).unwrap(),
                    new_json(&written)
                );
                // The old program refuses the newer file, as the derive does.
                assert!(load::<v0::Record>(schema, 0, &new_bytes).is_err());
                let refused = (versioned.decode)(&new(), &old(), 0, &new_bytes).unwrap_err();
                assert!(refused.contains("later version"), "{refused}");
            }
        }
    }

    #[test]
    fn a_move_of_two_types_is_refused_by_the_schema_as_by_the_derive() {
        let pair = |fields: [(&str, Shape); 2]| {
            Shape::Record(Record {
                name: "Pair",
                fields: fields
                    .into_iter()
                    .map(|(name, shape)| ShapeField::new(name, shape))
                    .collect(),
            })
        };
        let old = pair([("a", Shape::I64), ("b", Shape::String)]);
        let new = pair([("b", Shape::String), ("a", Shape::I64)]);
        let json = json!({"a": 5, "b": "x"});
        for (schema, codec) in codecs() {
            let versioned = codec.versioned.as_ref().unwrap();
            let bytes = derived(schema, 0, &moved::Pair { a: 5, b: "x".into() });
            assert_eq!((versioned.encode)(&old, 0, &json).unwrap(), bytes);
            let derived = load::<moved::v1::Pair>(schema, 1, &bytes);
            let twin = (versioned.decode)(&old, &new, 1, &bytes);
            assert_eq!(derived.is_ok(), twin.is_ok(), "{derived:?} against {twin:?}");
            if schema {
                assert!(twin.unwrap_err().contains("schema"));
            }
        }
    }

    #[test]
    fn a_type_change_without_from_cannot_be_declared() {
        let one = |shape| {
            Shape::Record(Record {
                name: "One",
                fields: vec![ShapeField::new("a", shape)],
            })
        };
        assert!(declare(&one(Shape::I64), &one(Shape::Option(Box::new(Shape::I64)))).is_ok());
        let why = declare(&one(Shape::I64), &one(Shape::String)).unwrap_err();
        assert!(why.contains("savefile_versions_as"), "{why}");
    }
}

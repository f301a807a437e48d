//! The inferred schema as an Avro schema (`.avsc`), the one the Avro arms use and `serbench
//! schema` writes.
//!
//! Integers are `long`, floats `double`, records named records (every one defined where it is
//! used, named after its field), maps `map`, arrays `array`. A nullable or optional value is a
//! union with `null` first and, for a record field, `"default": null`, so a record that lacks
//! the field is written as null. A conflict is a union of its kinds, which Avro allows: one
//! each of boolean, number, string, array and map, and any number of named records. A path
//! that only held null is `null`. A list of records (an array or NDJSON file) is an Avro
//! `array` of the record.
//!
//! The typed arms (`--typed`) get [`typed`]: the same types from the typed schema, and a list's
//! records as the record `Records { records: array }` that the generated batch type is. A record
//! with one field is written as that field, so the bytes equal the dynamic arms' array.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::DataPayload;
use super::schema::{Kind, Names, Schema, Type, TypedRecord, is_field_name, shape_key};

/// The Avro schema of `payload`, as JSON; an error names a field Avro cannot name.
pub fn schema(payload: &DataPayload) -> Result<Value> {
    let root = root_type(&payload.schema, payload.is_list(), &mut Writer::default())?;
    Ok(if payload.is_list() {
        json!({"type": "array", "items": root})
    } else {
        root
    })
}

/// The Avro schema of the generated types of a typed schema: a list (`list`) is the record
/// `Records` holding the array, and each record is named as its generated struct in `structs`
/// (by schema path; apache-avro reads a record only into a struct of its name).
pub fn typed(schema: &Schema, list: bool, structs: &BTreeMap<String, TypedRecord>) -> Result<Value> {
    let mut writer = Writer {
        typed: true,
        structs: (structs.iter())
            .map(|(path, record)| (path.clone(), record.name.clone()))
            .collect(),
        ..Writer::default()
    };
    if list {
        writer.names.unique("Records");
    }
    let root = root_type(schema, list, &mut writer)?;
    Ok(if list {
        json!({"type": "record", "name": "Records", "fields": [
            {"name": "records", "type": {"type": "array", "items": root}}
        ]})
    } else {
        root
    })
}

/// The Avro type of one record (of a list) or of the document.
fn root_type(schema: &Schema, list: bool, writer: &mut Writer) -> Result<Value> {
    let record = &schema.record;
    let hint = if list { "Record" } else { "Document" };
    avro_type(record, record.nullable(), hint, writer, &mut String::from("$"))
}

/// [`schema`] as the text of an `.avsc` file.
pub fn text(payload: &DataPayload) -> Result<String> {
    file_text(&schema(payload)?)
}

/// [`typed`] as the text of an `.avsc` file: the generated crate's `schemas/data_<n>.avsc`, and
/// `serbench schema`'s `<stem>.typed.avsc`.
pub fn typed_text(schema: &Schema, list: bool, structs: &BTreeMap<String, TypedRecord>) -> Result<String> {
    file_text(&typed(schema, list, structs)?)
}

fn file_text(schema: &Value) -> Result<String> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

/// The record names taken, and whether the schema is the typed arms' one: there an always-null
/// path is the generated `Option<String>`, a `["null", "string"]` union (one byte more per value
/// than the dynamic arms' `null`, which the serde writers cannot write an `Option` as).
#[derive(Default)]
struct Writer {
    names: Names,
    typed: bool,
    /// Record names by schema path, where they are given.
    structs: BTreeMap<String, String>,
    /// The records written, by shape ([`shape_key`]): a record of a shape already written is
    /// a reference to its name, as Avro names a type once.
    written: BTreeMap<String, String>,
}

fn avro_type(ty: &Type, nullable: bool, hint: &str, writer: &mut Writer, path: &mut String) -> Result<Value> {
    let mut branches = match &ty.kind {
        Kind::Null if writer.typed => return Ok(json!(["null", "string"])),
        Kind::Null => return Ok(json!("null")),
        Kind::Union(branches) => {
            let mut types = Vec::new();
            for branch in branches {
                types.push(kind_type(branch, hint, writer, path)?);
            }
            types
        }
        _ => vec![kind_type(ty, hint, writer, path)?],
    };
    if nullable {
        branches.insert(0, json!("null"));
    }
    Ok(match branches.len() {
        1 => branches.pop().expect("one branch"),
        _ => Value::Array(branches),
    })
}

/// The Avro type of a type's kind, nulls aside.
fn kind_type(ty: &Type, hint: &str, writer: &mut Writer, path: &mut String) -> Result<Value> {
    let parent = path.len();
    let avro = match &ty.kind {
        Kind::Null => json!("null"),
        Kind::Bool => json!("boolean"),
        Kind::Int => json!("long"),
        Kind::Float => json!("double"),
        Kind::String => json!("string"),
        Kind::Array(item) => {
            path.push_str("[]");
            let items = avro_type(item, item.nullable(), &format!("{hint}Item"), writer, path)?;
            json!({"type": "array", "items": items})
        }
        Kind::Map(value) => {
            path.push_str(".*");
            let values = avro_type(value, value.nullable(), &format!("{hint}Value"), writer, path)?;
            json!({"type": "map", "values": values})
        }
        Kind::Record(fields) => {
            let shape = shape_key(ty);
            if let Some(name) = writer.written.get(&shape) {
                path.truncate(parent);
                return Ok(json!(name));
            }
            let name = match writer.structs.get(path.as_str()) {
                Some(name) => name.clone(),
                None => writer.names.unique(hint),
            };
            writer.written.insert(shape, name.clone());
            let mut avro_fields = Vec::new();
            for field in fields {
                super::read::push_key(path, &field.name);
                if !is_field_name(&field.name) {
                    bail!("{path}: {:?} is not an Avro field name", field.name);
                }
                let nullable = field.ty.nullable() || field.optional();
                let field_type = avro_type(&field.ty, nullable, &field.name, writer, path)?;
                let mut avro_field = json!({"name": field.name, "type": field_type});
                if nullable || field.ty.kind == Kind::Null {
                    avro_field["default"] = Value::Null;
                }
                avro_fields.push(avro_field);
                path.truncate(parent);
            }
            json!({"type": "record", "name": name, "fields": avro_fields})
        }
        Kind::Union(_) => unreachable!("a union's branches are not unions"),
    };
    path.truncate(parent);
    Ok(avro)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{Request, load};

    fn payload(text: &str) -> &'static DataPayload {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, text).unwrap();
        load(&Request {
            sources: vec![path.display().to_string()],
            ..Request::default()
        })
        .unwrap()[0]
    }

    #[test]
    fn records_fields_nulls_and_conflicts_map_to_avro() {
        let payload = payload(
            r#"{"id": 1, "name": "a", "tags": ["x"], "score": 1.5, "ok": true, "none": null, "v": 1, "m": {"1": 2}, "sub": {"a": 1}}
               {"id": 2, "name": null, "tags": [], "score": 2, "ok": false, "none": null, "v": "s", "m": {}, "sub": {"a": 2}, "extra": [1]}"#,
        );
        let schema = schema(payload).unwrap();
        assert_eq!(schema["type"], "array");
        let record = &schema["items"];
        assert_eq!(record["type"], "record");
        assert_eq!(record["name"], "Record");
        let field = |name: &str| {
            record["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|field| field["name"] == name)
                .unwrap_or_else(|| panic!("{name}"))
                .clone()
        };
        assert_eq!(field("id"), json!({"name": "id", "type": "long"}));
        assert_eq!(
            field("name"),
            json!({"name": "name", "type": ["null", "string"], "default": null})
        );
        assert_eq!(field("tags")["type"], json!({"type": "array", "items": "string"}));
        assert_eq!(field("score")["type"], "double");
        assert_eq!(field("ok")["type"], "boolean");
        assert_eq!(
            field("none"),
            json!({"name": "none", "type": "null", "default": null})
        );
        assert_eq!(field("v")["type"], json!(["long", "string"]));
        assert_eq!(field("m")["type"], json!({"type": "map", "values": "long"}));
        assert_eq!(field("sub")["type"]["name"], "Sub");
        assert_eq!(
            field("extra"),
            json!({"name": "extra", "type": ["null", {"type": "array", "items": "long"}], "default": null})
        );
        // The Avro crates parse it: see the avro format's tests.
        assert!(text(payload).unwrap().ends_with("}\n"));
    }

    #[test]
    fn a_document_is_its_record() {
        for corpus in ["twitter", "citm_catalog", "canada"] {
            let payload = load(&Request {
                sources: vec![format!("corpus:{corpus}")],
                ..Request::default()
            })
            .unwrap()[0];
            let schema = schema(payload).unwrap();
            assert_eq!(
                (corpus, &schema["type"], &schema["name"]),
                (corpus, &json!("record"), &json!("Document"))
            );
        }
    }

    #[test]
    fn the_typed_schema_wraps_a_list_in_the_records_record() {
        let payload = payload("{\"records\": {\"a\": 1}}\n{\"records\": {\"a\": 2}}\n");
        let inner = TypedRecord {
            name: "Inner".into(),
            fields: vec!["a".into()],
        };
        let structs = BTreeMap::from([("$.records".to_string(), inner)]);
        let schema = typed(&payload.typed_schema, true, &BTreeMap::new()).unwrap();
        assert_eq!(schema["name"], "Records");
        let items = &schema["fields"][0]["type"]["items"];
        assert_eq!(items["name"], "Record");
        // A field named like the wrapper does not take its name.
        assert_eq!(items["fields"][0]["type"]["name"], "Records2");
        let named = typed(&payload.typed_schema, false, &structs).unwrap();
        assert_eq!(named["name"], "Document");
        assert_eq!(named["fields"][0]["type"]["name"], "Inner");
        let odd = self::payload("{\"3ds\": 1}\n");
        assert_eq!(
            typed(&odd.typed_schema, true, &BTreeMap::new())
                .unwrap_err()
                .to_string(),
            "$[\"3ds\"]: \"3ds\" is not an Avro field name"
        );
    }

    #[test]
    fn a_forced_record_with_a_key_avro_cannot_name_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, r#"{"a b": 1}"#).unwrap();
        let payload = load(&Request {
            sources: vec![path.display().to_string()],
            overrides: crate::payload::data::Overrides {
                maps: vec![],
                records: vec!["$".into()],
            },
            ..Request::default()
        })
        .unwrap()[0];
        assert_eq!(
            schema(payload).unwrap_err().to_string(),
            "$[\"a b\"]: \"a b\" is not an Avro field name"
        );
    }
}

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

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::DataPayload;
use super::schema::{Kind, Names, Type, is_field_name};

/// The Avro schema of `payload`, as JSON; an error names a field Avro cannot name.
pub fn schema(payload: &DataPayload) -> Result<Value> {
    let mut names = Names::default();
    let record = &payload.schema.record;
    let hint = if payload.is_list() { "Record" } else { "Document" };
    let root = avro_type(
        record,
        record.nullable(),
        hint,
        &mut names,
        &mut String::from("$"),
    )?;
    Ok(if payload.is_list() {
        json!({"type": "array", "items": root})
    } else {
        root
    })
}

/// [`schema`] as the text of an `.avsc` file.
pub fn text(payload: &DataPayload) -> Result<String> {
    Ok(serde_json::to_string_pretty(&schema(payload)?)? + "\n")
}

fn avro_type(ty: &Type, nullable: bool, hint: &str, names: &mut Names, path: &mut String) -> Result<Value> {
    let mut branches = match &ty.kind {
        Kind::Null => return Ok(json!("null")),
        Kind::Union(branches) => {
            let mut types = Vec::new();
            for branch in branches {
                types.push(kind_type(branch, hint, names, path)?);
            }
            types
        }
        _ => vec![kind_type(ty, hint, names, path)?],
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
fn kind_type(ty: &Type, hint: &str, names: &mut Names, path: &mut String) -> Result<Value> {
    let parent = path.len();
    let avro = match &ty.kind {
        Kind::Null => json!("null"),
        Kind::Bool => json!("boolean"),
        Kind::Int => json!("long"),
        Kind::Float => json!("double"),
        Kind::String => json!("string"),
        Kind::Array(item) => {
            path.push_str("[]");
            let items = avro_type(item, item.nullable(), &format!("{hint}Item"), names, path)?;
            json!({"type": "array", "items": items})
        }
        Kind::Map(value) => {
            path.push_str(".*");
            let values = avro_type(value, value.nullable(), &format!("{hint}Value"), names, path)?;
            json!({"type": "map", "values": values})
        }
        Kind::Record(fields) => {
            let name = names.unique(hint);
            let mut avro_fields = Vec::new();
            for field in fields {
                super::read::push_key(path, &field.name);
                if !is_field_name(&field.name) {
                    bail!("{path}: {:?} is not an Avro field name", field.name);
                }
                let nullable = field.ty.nullable() || field.optional_in(ty);
                let field_type = avro_type(&field.ty, nullable, &field.name, names, path)?;
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

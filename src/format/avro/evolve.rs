//! `serbench evolve` on Avro: each version of a record becomes an Avro schema at run time (a
//! nullable field a `["null", T]` union with `"default": null`, a field with a default its
//! `"default"`, a renamed field its old name in `"aliases"`), and apache-avro resolves the
//! writer's schema against the reader's, as a reader given the writer's schema by an object
//! container file or a schema registry does. serde_avro_fast, which does not resolve, reads with
//! the writer's schema into the reader's serde type.

use std::collections::{BTreeSet, HashMap};

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value as Avro;
use apache_avro::writer::datum::GenericDatumWriter;
use serde_json::{Value, json};

use crate::format::SchemaEvolution;
use crate::shape::{Shape, identifier};

pub const EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "apache-avro",
    variant: "",
    mechanism: "the writer's schema resolved against the reader's (defaults, aliases, promotions)",
    encode: |shape, value| {
        let schema = schema(shape)?;
        let writer = GenericDatumWriter::builder(&schema)
            .build()
            .map_err(|error| error.to_string())?;
        writer
            .write_value_to_vec(avro(shape, value)?)
            .map_err(|error| error.to_string())
    },
    decode: |writer, reader, mut bytes| {
        let (written, read) = (schema(writer)?, schema(reader)?);
        let value = GenericDatumReader::builder(&written)
            .reader_schema(&read)
            .build()
            .and_then(|datum| datum.read_value(&mut bytes))
            .map_err(|error| error.to_string())?;
        json_value(reader, &value)
    },
    versioned: None,
};

/// serde_avro_fast has no schema resolution: it reads with the writer's schema into the reader's
/// serde type, so fields meet by name through serde (`default`, `alias`), as JSON's do.
pub const SERDE_EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "serde_avro_fast",
    variant: "",
    mechanism: "the writer's schema read into the reader's serde type (fields by name: serde `default`, `alias`)",
    encode: |shape, value| {
        let schema = fast_schema(shape)?;
        let mut config = serde_avro_fast::ser::SerializerConfig::new(&schema);
        serde_avro_fast::to_datum_vec(&crate::shape::Shaped(shape, value), &mut config)
            .map_err(|error| error.to_string())
    },
    decode: |writer, reader, bytes| {
        let schema = fast_schema(writer)?;
        crate::shape::read_as(reader, || {
            serde_avro_fast::from_datum_slice::<crate::shape::Seeded>(bytes, &schema)
        })
    },
    versioned: None,
};

/// The Avro schema of a shape, parsed by apache-avro.
fn schema(shape: &Shape) -> Result<apache_avro::Schema, String> {
    let text = schema_json(shape, &mut BTreeSet::new())?;
    apache_avro::Schema::parse(&text).map_err(|error| format!("the schema does not parse: {error}"))
}

/// The same schema, parsed by serde_avro_fast.
fn fast_schema(shape: &Shape) -> Result<serde_avro_fast::Schema, String> {
    let text = schema_json(shape, &mut BTreeSet::new())?;
    text.to_string()
        .parse()
        .map_err(|error| format!("the schema does not parse: {error}"))
}

/// A shape as Avro schema JSON; a record defined at its first place, named at the others.
fn schema_json(shape: &Shape, defined: &mut BTreeSet<String>) -> Result<Value, String> {
    Ok(match shape {
        Shape::Bool => json!("boolean"),
        Shape::I32 => json!("int"),
        Shape::I64 => json!("long"),
        Shape::F64 => json!("double"),
        Shape::String => json!("string"),
        Shape::Option(inner) => json!(["null", schema_json(inner, defined)?]),
        Shape::List(item) => json!({"type": "array", "items": schema_json(item, defined)?}),
        Shape::Map(value) => json!({"type": "map", "values": schema_json(value, defined)?}),
        Shape::Record(record) => {
            let name = identifier(record.name);
            if !defined.insert(name.clone()) {
                return Ok(json!(name));
            }
            let mut names = BTreeSet::new();
            let mut fields = Vec::new();
            for field in &record.fields {
                let field_name = identifier(field.name);
                if !names.insert(field_name.clone()) {
                    return Err(format!(
                        "two fields of {} are the Avro field `{field_name}`",
                        record.name
                    ));
                }
                let mut entry = json!({"name": field_name, "type": schema_json(&field.shape, defined)?});
                if field.default || matches!(field.shape, Shape::Option(_)) {
                    entry["default"] = field.shape.default_value();
                }
                if !field.aliases.is_empty() {
                    entry["aliases"] = field.aliases.iter().map(|alias| identifier(alias)).collect();
                }
                fields.push(entry);
            }
            json!({"type": "record", "name": name, "fields": fields})
        }
    })
}

/// A value of a shape as apache-avro's value of its schema.
fn avro(shape: &Shape, value: &Value) -> Result<Avro, String> {
    let wrong = || format!("{value} is no {shape}");
    Ok(match (shape, value) {
        (Shape::Option(_), Value::Null) => Avro::Union(0, Box::new(Avro::Null)),
        (Shape::Option(inner), value) => Avro::Union(1, Box::new(avro(inner, value)?)),
        (Shape::Bool, Value::Bool(value)) => Avro::Boolean(*value),
        (Shape::I32, Value::Number(number)) => Avro::Int(
            number
                .as_i64()
                .and_then(|value| i32::try_from(value).ok())
                .ok_or_else(wrong)?,
        ),
        (Shape::I64, Value::Number(number)) => Avro::Long(number.as_i64().ok_or_else(wrong)?),
        (Shape::F64, Value::Number(number)) => Avro::Double(number.as_f64().ok_or_else(wrong)?),
        (Shape::String, Value::String(text)) => Avro::String(text.clone()),
        (Shape::List(item), Value::Array(items)) => Avro::Array(
            items
                .iter()
                .map(|value| avro(item, value))
                .collect::<Result<_, _>>()?,
        ),
        (Shape::Map(inner), Value::Object(entries)) => Avro::Map(
            entries
                .iter()
                .map(|(key, value)| Ok((key.clone(), avro(inner, value)?)))
                .collect::<Result<HashMap<_, _>, String>>()?,
        ),
        (Shape::Record(record), Value::Object(fields)) => Avro::Record(
            record
                .fields
                .iter()
                .map(|field| {
                    let value = fields.get(field.name).unwrap_or(&Value::Null);
                    Ok((identifier(field.name), avro(&field.shape, value)?))
                })
                .collect::<Result<_, String>>()?,
        ),
        _ => return Err(wrong()),
    })
}

/// A resolved value read back as a value of the reader's shape.
fn json_value(shape: &Shape, value: &Avro) -> Result<Value, String> {
    Ok(match (shape, value) {
        (Shape::Option(_), Avro::Null) => Value::Null,
        (shape, Avro::Union(_, inner)) => json_value(shape, inner)?,
        (Shape::Option(inner), value) => json_value(inner, value)?,
        (Shape::Bool, Avro::Boolean(value)) => Value::from(*value),
        (Shape::I32, Avro::Int(value)) => Value::from(*value),
        (Shape::I64, Avro::Long(value)) => Value::from(*value),
        (Shape::F64, Avro::Double(value)) => Value::from(*value),
        (Shape::String, Avro::String(text)) => Value::from(text.as_str()),
        (Shape::List(item), Avro::Array(items)) => Value::Array(
            items
                .iter()
                .map(|value| json_value(item, value))
                .collect::<Result<_, _>>()?,
        ),
        (Shape::Map(inner), Avro::Map(entries)) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| Ok((key.clone(), json_value(inner, value)?)))
                .collect::<Result<_, String>>()?,
        ),
        (Shape::Record(record), Avro::Record(fields)) => Value::Object(
            record
                .fields
                .iter()
                .map(|field| {
                    let name = identifier(field.name);
                    let (_, value) = fields
                        .iter()
                        .find(|(read, _)| *read == name)
                        .ok_or(format!("the resolved record has no field `{name}`"))?;
                    Ok((field.name.to_string(), json_value(&field.shape, value)?))
                })
                .collect::<Result<_, String>>()?,
        ),
        (shape, value) => return Err(format!("read {value:?} where the reader declares {shape}")),
    })
}

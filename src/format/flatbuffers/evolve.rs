//! `serbench evolve` on FlatBuffers: each version of a record is a table set whose field ids are
//! the shape's tags (as `(id: n)` attributes keep them through a rename, a move or a removal),
//! written with the flatbuffers crate's builder as flatc's generated builders write (a scalar
//! equal to its default left out; a nullable scalar `= null`, written when present) and read
//! back by the reader's own shape after the crate's verifier has checked every field the
//! reader reads, as generated code's `root` does. As `--typed`'s .fbs declares them, a string,
//! vector or table that is not an `Option` is `(required)` (the verifier refuses it absent) and
//! a map is a vector of `{key, value}` tables sorted by key, FlatBuffers having no map.

use flatbuffers::{
    FlatBufferBuilder, ForwardsUOffset, InvalidFlatbuffer, Table, UnionWIPOffset, VOffsetT, Vector,
    Verifiable, Verifier, VerifierOptions, WIPOffset,
};
use serde_json::Value;

use crate::format::SchemaEvolution;
use crate::shape::{Record, Shape};

pub const EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "flatbuffers",
    variant: "",
    mechanism: "field ids (`id:` kept through a rename or a move; a removed field's id left unused)",
    encode: |shape, value| {
        let Shape::Record(record) = shape else {
            return Err("the top-level type is not a record".into());
        };
        let mut builder = FlatBufferBuilder::new();
        let root = table(&mut builder, record, value)?;
        builder.finish_minimal(root);
        Ok(builder.finished_data().to_vec())
    },
    decode: |_writer, reader, bytes| {
        let Shape::Record(record) = reader else {
            return Err("the top-level type is not a record".into());
        };
        let options = VerifierOptions::default();
        let mut verifier = Verifier::new(&options, bytes);
        let root = verifier.get_uoffset(0).map_err(|error| error.to_string())? as usize;
        verify_table(&mut verifier, record, root)
            .map_err(|error| format!("the verifier refused it: {error}"))?;
        // SAFETY: the verifier has checked every field this shape reads at these positions.
        let table = unsafe { Table::new(bytes, root) };
        read_table(record, table)
    },
    versioned: None,
};

/// The vtable slot of the field with tag `tag` (ids from 0).
fn slot(tag: u32) -> VOffsetT {
    (4 + 2 * (tag - 1)) as VOffsetT
}

/// `value` as a table of `record`: its offset fields (strings, vectors, tables) built first, as
/// FlatBuffers requires, then the table.
fn table<'b>(
    builder: &mut FlatBufferBuilder<'b>,
    record: &Record,
    value: &Value,
) -> Result<WIPOffset<UnionWIPOffset>, String> {
    let mut offsets = Vec::new();
    for (index, field) in record.fields.iter().enumerate() {
        let field_value = value.get(field.name).unwrap_or(&Value::Null);
        let (shape, nullable) = match &field.shape {
            Shape::Option(inner) => (&**inner, true),
            shape => (shape, false),
        };
        if field_value.is_null() {
            if !nullable {
                return Err(format!("`{}` is missing", field.name));
            }
            continue;
        }
        if let Some(offset) =
            offset(builder, shape, field_value).map_err(|error| format!("`{}`: {error}", field.name))?
        {
            offsets.push((slot(field.tag(index)), offset));
        }
    }
    let start = builder.start_table();
    for (index, field) in record.fields.iter().enumerate() {
        let field_value = value.get(field.name).unwrap_or(&Value::Null);
        let slot = slot(field.tag(index));
        let wrong = || format!("{field_value} is no {}", field.shape);
        match &field.shape {
            Shape::Bool => builder.push_slot(slot, field_value.as_bool().ok_or_else(wrong)?, false),
            Shape::I32 => builder.push_slot(slot, as_i32(field_value).ok_or_else(wrong)?, 0),
            Shape::I64 => builder.push_slot(slot, field_value.as_i64().ok_or_else(wrong)?, 0),
            Shape::F64 => builder.push_slot(slot, field_value.as_f64().ok_or_else(wrong)?, 0.0),
            Shape::Option(inner) if !field_value.is_null() => match &**inner {
                Shape::Bool => builder.push_slot_always(slot, field_value.as_bool().ok_or_else(wrong)?),
                Shape::I32 => builder.push_slot_always(slot, as_i32(field_value).ok_or_else(wrong)?),
                Shape::I64 => builder.push_slot_always(slot, field_value.as_i64().ok_or_else(wrong)?),
                Shape::F64 => builder.push_slot_always(slot, field_value.as_f64().ok_or_else(wrong)?),
                _ => {}
            },
            _ => {}
        }
    }
    for (slot, offset) in offsets {
        builder.push_slot_always(slot, offset);
    }
    Ok(builder.end_table(start).as_union_value())
}

fn as_i32(value: &Value) -> Option<i32> {
    value.as_i64().and_then(|value| i32::try_from(value).ok())
}

/// The offset of a string, vector or table value; `None` for a scalar (written in the table).
fn offset<'b>(
    builder: &mut FlatBufferBuilder<'b>,
    shape: &Shape,
    value: &Value,
) -> Result<Option<WIPOffset<UnionWIPOffset>>, String> {
    let wrong = || format!("{value} is no {shape}");
    Ok(Some(match (shape, value) {
        (Shape::Bool | Shape::I32 | Shape::I64 | Shape::F64, _) => return Ok(None),
        (Shape::String, Value::String(text)) => builder.create_string(text).as_union_value(),
        (Shape::Record(record), value) => table(builder, record, value)?,
        (Shape::List(item), Value::Array(items)) => match &**item {
            Shape::Bool => {
                let items: Option<Vec<u8>> = items.iter().map(|item| item.as_bool().map(u8::from)).collect();
                builder.create_vector(&items.ok_or_else(wrong)?).as_union_value()
            }
            Shape::I32 => {
                let items: Option<Vec<i32>> = items.iter().map(as_i32).collect();
                builder.create_vector(&items.ok_or_else(wrong)?).as_union_value()
            }
            Shape::I64 => {
                let items: Option<Vec<i64>> = items.iter().map(Value::as_i64).collect();
                builder.create_vector(&items.ok_or_else(wrong)?).as_union_value()
            }
            Shape::F64 => {
                let items: Option<Vec<f64>> = items.iter().map(Value::as_f64).collect();
                builder.create_vector(&items.ok_or_else(wrong)?).as_union_value()
            }
            Shape::String | Shape::Record(_) => {
                let offsets = items
                    .iter()
                    .map(|element| offset(builder, item, element)?.ok_or_else(wrong))
                    .collect::<Result<Vec<_>, String>>()?;
                builder.create_vector(&offsets).as_union_value()
            }
            _ => return Err(cannot(shape)),
        },
        (Shape::Map(inner), Value::Object(entries)) => {
            let entry = entry_record(inner).ok_or_else(|| cannot(shape))?;
            let mut sorted: Vec<(&String, &Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let offsets = sorted
                .into_iter()
                .map(|(key, value)| table(builder, &entry, &serde_json::json!({"key": key, "value": value})))
                .collect::<Result<Vec<_>, String>>()?;
            builder.create_vector(&offsets).as_union_value()
        }
        _ => return Err(wrong()),
    }))
}

fn cannot(shape: &Shape) -> String {
    format!("a {shape} has no FlatBuffers field without a wrapper table")
}

/// A map's entry table: `key: string (key)` and `value`.
fn entry_record(value: &Shape) -> Option<Record> {
    matches!(
        value,
        Shape::Bool | Shape::I32 | Shape::I64 | Shape::F64 | Shape::String | Shape::Record(_)
    )
    .then(|| Record {
        name: "Entry",
        fields: vec![
            crate::shape::Field::new("key", Shape::String),
            crate::shape::Field::new("value", value.clone()),
        ],
    })
}

/// Checks every field `record` reads from the table at `position`, as generated code's
/// verifier does for its own schema.
fn verify_table(verifier: &mut Verifier, record: &Record, position: usize) -> Result<(), InvalidFlatbuffer> {
    let mut table = verifier.visit_table(position)?;
    for (index, field) in record.fields.iter().enumerate() {
        let slot = slot(field.tag(index));
        let (shape, required) = match &field.shape {
            Shape::Option(inner) => (&**inner, false),
            shape => (shape, true),
        };
        let scalar = matches!(shape, Shape::Bool | Shape::I32 | Shape::I64 | Shape::F64);
        if required && !scalar && table.deref(slot)?.is_none() {
            return InvalidFlatbuffer::new_missing_required(field.name);
        }
        table = match shape {
            Shape::Bool => table.visit_field::<u8>(field.name, slot, false)?,
            Shape::I32 => table.visit_field::<i32>(field.name, slot, false)?,
            Shape::I64 => table.visit_field::<i64>(field.name, slot, false)?,
            Shape::F64 => table.visit_field::<f64>(field.name, slot, false)?,
            Shape::String => table.visit_field::<ForwardsUOffset<&str>>(field.name, slot, false)?,
            Shape::List(item) => match &**item {
                Shape::Bool => table.visit_field::<ForwardsUOffset<Vector<u8>>>(field.name, slot, false)?,
                Shape::I32 => table.visit_field::<ForwardsUOffset<Vector<i32>>>(field.name, slot, false)?,
                Shape::I64 => table.visit_field::<ForwardsUOffset<Vector<i64>>>(field.name, slot, false)?,
                Shape::F64 => table.visit_field::<ForwardsUOffset<Vector<f64>>>(field.name, slot, false)?,
                Shape::String => table
                    .visit_field::<ForwardsUOffset<Vector<ForwardsUOffset<&str>>>>(field.name, slot, false)?,
                Shape::Record(inner) => {
                    if let Some(position) = table.deref(slot)? {
                        verify_tables(table.verifier(), inner, position)?;
                    }
                    table
                }
                _ => table,
            },
            Shape::Map(value) => {
                if let (Some(position), Some(entry)) = (table.deref(slot)?, entry_record(value)) {
                    verify_tables(table.verifier(), &entry, position)?;
                }
                table
            }
            Shape::Record(inner) => {
                if let Some(position) = table.deref(slot)? {
                    let child = position + verifier_uoffset(table.verifier(), position)?;
                    verify_table(table.verifier(), inner, child)?;
                }
                table
            }
            Shape::Option(_) => table,
        };
    }
    table.finish();
    Ok(())
}

fn verifier_uoffset(verifier: &mut Verifier, position: usize) -> Result<usize, InvalidFlatbuffer> {
    Ok(verifier.get_uoffset(position)? as usize)
}

/// Checks a vector of tables at the offset stored at `position`, and each table in it.
fn verify_tables(verifier: &mut Verifier, record: &Record, position: usize) -> Result<(), InvalidFlatbuffer> {
    let vector = position + verifier_uoffset(verifier, position)?;
    // The length and the offsets, as a vector of u32.
    <Vector<u32>>::run_verifier(verifier, vector)?;
    let length = verifier_uoffset(verifier, vector)?;
    for index in 0..length {
        let element = vector + 4 + 4 * index;
        let child = element + verifier_uoffset(verifier, element)?;
        verify_table(verifier, record, child)?;
    }
    Ok(())
}

/// A verified table read as a record of `record`.
fn read_table(record: &Record, table: Table) -> Result<Value, String> {
    let mut fields = serde_json::Map::new();
    for (index, field) in record.fields.iter().enumerate() {
        let slot = slot(field.tag(index));
        let (shape, nullable) = match &field.shape {
            Shape::Option(inner) => (&**inner, true),
            shape => (shape, false),
        };
        // SAFETY (every `get`): `verify_table` checked this slot for this shape's type.
        let value = unsafe {
            match shape {
                Shape::Bool => table.get::<u8>(slot, None).map(|value| Value::from(value != 0)),
                Shape::I32 => table.get::<i32>(slot, None).map(Value::from),
                Shape::I64 => table.get::<i64>(slot, None).map(Value::from),
                Shape::F64 => table.get::<f64>(slot, None).map(Value::from),
                Shape::String => table.get::<ForwardsUOffset<&str>>(slot, None).map(Value::from),
                Shape::List(item) => match &**item {
                    Shape::Bool => table
                        .get::<ForwardsUOffset<Vector<u8>>>(slot, None)
                        .map(|items| items.iter().map(|item| Value::from(item != 0)).collect()),
                    Shape::I32 => table
                        .get::<ForwardsUOffset<Vector<i32>>>(slot, None)
                        .map(|items| items.iter().map(Value::from).collect()),
                    Shape::I64 => table
                        .get::<ForwardsUOffset<Vector<i64>>>(slot, None)
                        .map(|items| items.iter().map(Value::from).collect()),
                    Shape::F64 => table
                        .get::<ForwardsUOffset<Vector<f64>>>(slot, None)
                        .map(|items| items.iter().map(Value::from).collect()),
                    Shape::String => table
                        .get::<ForwardsUOffset<Vector<ForwardsUOffset<&str>>>>(slot, None)
                        .map(|items| items.iter().map(Value::from).collect()),
                    Shape::Record(inner) => {
                        match table.get::<ForwardsUOffset<Vector<ForwardsUOffset<Table>>>>(slot, None) {
                            Some(items) => Some(Value::Array(
                                items
                                    .iter()
                                    .map(|item| read_table(inner, item))
                                    .collect::<Result<_, _>>()?,
                            )),
                            None => None,
                        }
                    }
                    _ => return Err(cannot(shape)),
                },
                Shape::Map(inner) => {
                    let entry = entry_record(inner).ok_or_else(|| cannot(shape))?;
                    match table.get::<ForwardsUOffset<Vector<ForwardsUOffset<Table>>>>(slot, None) {
                        Some(items) => {
                            let mut map = serde_json::Map::new();
                            for item in items.iter() {
                                let Value::Object(mut pair) = read_table(&entry, item)? else {
                                    unreachable!("a table reads as an object")
                                };
                                let key = pair.remove("key").and_then(|key| key.as_str().map(String::from));
                                map.insert(
                                    key.unwrap_or_default(),
                                    pair.remove("value").unwrap_or(Value::Null),
                                );
                            }
                            Some(Value::Object(map))
                        }
                        None => None,
                    }
                }
                Shape::Record(inner) => match table.get::<ForwardsUOffset<Table>>(slot, None) {
                    Some(child) => Some(read_table(inner, child)?),
                    None => None,
                },
                Shape::Option(_) => return Err(cannot(&field.shape)),
            }
        };
        // Absent: null where nullable, else a scalar's default (a required field is verified).
        let value = match value {
            Some(value) => value,
            None if nullable => Value::Null,
            None => shape.default_value(),
        };
        fields.insert(field.name.to_string(), value);
    }
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::flatbuffers::generated::serbench::{RequestMeta, RequestMetaArgs};
    use crate::shape::Field;

    /// checkout.fbs' `RequestMeta`: three required strings and a long, ids in declaration order.
    fn request_meta() -> Shape {
        Shape::Record(Record {
            name: "RequestMeta",
            fields: ["request_id", "trace_id", "client"]
                .map(|name| Field::new(name, Shape::String))
                .into_iter()
                .chain([Field::new("timestamp_ms", Shape::I64)])
                .collect(),
        })
    }

    #[test]
    fn flatcs_generated_code_and_the_run_time_table_read_each_others_bytes() {
        let value = serde_json::json!({"request_id": "r", "trace_id": "t", "client": "c", "timestamp_ms": 7});
        let bytes = (EVOLUTION.encode)(&request_meta(), &value).unwrap();
        let generated = flatbuffers::root::<RequestMeta>(&bytes).unwrap();
        assert_eq!(
            (
                generated.request_id(),
                generated.trace_id(),
                generated.client(),
                generated.timestamp_ms()
            ),
            ("r", "t", "c", 7)
        );
        let mut builder = FlatBufferBuilder::new();
        let args = RequestMetaArgs {
            request_id: Some(builder.create_string("r")),
            trace_id: Some(builder.create_string("t")),
            client: Some(builder.create_string("c")),
            timestamp_ms: 7,
        };
        let root = RequestMeta::create(&mut builder, &args);
        builder.finish_minimal(root);
        let read = (EVOLUTION.decode)(&request_meta(), &request_meta(), builder.finished_data()).unwrap();
        assert_eq!(read, value);
    }

    #[test]
    fn truncations_and_a_missing_required_string_are_refused_as_flatc_refuses_them() {
        let value = serde_json::json!({"request_id": "r", "trace_id": "t", "client": "c", "timestamp_ms": 7});
        let bytes = (EVOLUTION.encode)(&request_meta(), &value).unwrap();
        // Every truncation: refused exactly where flatc's generated verifier refuses it.
        for cut in 0..bytes.len() {
            let ours = (EVOLUTION.decode)(&request_meta(), &request_meta(), &bytes[..cut]);
            let generated = flatbuffers::root::<RequestMeta>(&bytes[..cut]);
            assert_eq!(ours.is_err(), generated.is_err(), "cut at {cut}: {ours:?}");
        }
        assert!((EVOLUTION.decode)(&request_meta(), &request_meta(), &bytes[..bytes.len() / 2]).is_err());
        // A reader with one more required string than was written.
        let Shape::Record(mut more) = request_meta() else {
            unreachable!()
        };
        more.fields.push(Field::new("region", Shape::String));
        let error = (EVOLUTION.decode)(&request_meta(), &Shape::Record(more), &bytes).unwrap_err();
        assert!(error.contains("region"), "{error}");
    }
}

//! `serbench evolve` on minicbor: each version of a record is read and written with minicbor's
//! `Encoder` and `Decoder` exactly as its derive's generated code does for a struct whose fields
//! carry `#[n(i)]` indices (the shape's tags, kept through a rename or a move), `#[cbor(array)]`
//! (the derive's default) and `#[cbor(default)]` where the field has a default: an array as long
//! as the highest index holding a value, gaps and `None` as null; on decode an unknown index
//! skipped, an absent field its default, `None`, or the error `missing value`. The unit tests hold
//! the twin to a real derive, bytes and decodes alike.

use std::convert::Infallible;

use minicbor::data::Type;
use minicbor::{Decoder, Encoder};
use serde_json::Value;

use crate::format::SchemaEvolution;
use crate::shape::{Field, Record, Shape};

pub const EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "minicbor",
    variant: "",
    mechanism: "indices (`#[n(i)]` kept through a rename or a move; `#[cbor(default)]`; an absent `Option` is `None`)",
    encode: |shape, value| {
        let mut encoder = Encoder::new(Vec::new());
        encode(&mut encoder, shape, value)?;
        Ok(encoder.into_writer())
    },
    decode: |_writer, reader, bytes| decode(&mut Decoder::new(bytes), reader),
    versioned: None,
};

type Written = Result<(), String>;

fn failed(error: minicbor::encode::Error<Infallible>) -> String {
    error.to_string()
}

fn encode(encoder: &mut Encoder<Vec<u8>>, shape: &Shape, value: &Value) -> Written {
    let wrong = || format!("{value} is no {shape}");
    match (shape, value) {
        (Shape::Option(_), Value::Null) => encoder.null().map(drop).map_err(failed),
        (Shape::Option(inner), value) => encode(encoder, inner, value),
        (Shape::Bool, Value::Bool(value)) => encoder.bool(*value).map(drop).map_err(failed),
        (Shape::I32, Value::Number(number)) => {
            let value = number
                .as_i64()
                .and_then(|value| i32::try_from(value).ok())
                .ok_or_else(wrong)?;
            encoder.i32(value).map(drop).map_err(failed)
        }
        (Shape::I64, Value::Number(number)) => encoder
            .i64(number.as_i64().ok_or_else(wrong)?)
            .map(drop)
            .map_err(failed),
        (Shape::F64, Value::Number(number)) => encoder
            .f64(number.as_f64().ok_or_else(wrong)?)
            .map(drop)
            .map_err(failed),
        (Shape::String, Value::String(text)) => encoder.str(text).map(drop).map_err(failed),
        (Shape::List(item), Value::Array(items)) => {
            encoder.array(items.len() as u64).map_err(failed)?;
            items.iter().try_for_each(|value| encode(encoder, item, value))
        }
        // A `BTreeMap<String, T>`: keys in order.
        (Shape::Map(inner), Value::Object(entries)) => {
            encoder.map(entries.len() as u64).map_err(failed)?;
            let mut sorted: Vec<(&String, &Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (key, value) in sorted {
                encoder.str(key).map_err(failed)?;
                encode(encoder, inner, value)?;
            }
            Ok(())
        }
        (Shape::Record(record), Value::Object(fields)) => {
            let indexed = indexed(record);
            let value_of = |field: &Field| fields.get(field.name).unwrap_or(&Value::Null);
            // The array is as long as the highest index that holds a value (not `None`).
            let length = indexed
                .iter()
                .filter(|(_, field)| !value_of(field).is_null())
                .map(|(index, _)| index + 1)
                .max()
                .unwrap_or(0);
            encoder.array(length).map_err(failed)?;
            for position in 0..length {
                match indexed.iter().find(|(index, _)| *index == position) {
                    Some((_, field)) => encode(encoder, &field.shape, value_of(field))?,
                    None => drop(encoder.null().map_err(failed)?),
                }
            }
            Ok(())
        }
        _ => Err(wrong()),
    }
}

/// A record's fields with their derive index (`#[n(tag - 1)]`).
fn indexed(record: &Record) -> Vec<(u64, &Field)> {
    record
        .fields
        .iter()
        .enumerate()
        .map(|(index, field)| (u64::from(field.tag(index)) - 1, field))
        .collect()
}

fn decode(decoder: &mut Decoder, shape: &Shape) -> Result<Value, String> {
    let error = |error: minicbor::decode::Error| error.to_string();
    Ok(match shape {
        Shape::Option(inner) => match decoder.datatype().map_err(error)? {
            Type::Null | Type::Undefined => {
                decoder.skip().map_err(error)?;
                Value::Null
            }
            _ => decode(decoder, inner)?,
        },
        Shape::Bool => Value::from(decoder.bool().map_err(error)?),
        Shape::I32 => Value::from(decoder.i32().map_err(error)?),
        Shape::I64 => Value::from(decoder.i64().map_err(error)?),
        Shape::F64 => Value::from(decoder.f64().map_err(error)?),
        Shape::String => Value::from(decoder.str().map_err(error)?),
        Shape::List(item) => {
            let length = decoder.array().map_err(error)?;
            let mut items = Vec::new();
            each(decoder, length, |_, decoder| {
                items.push(decode(decoder, item)?);
                Ok(())
            })?;
            Value::Array(items)
        }
        Shape::Map(inner) => {
            let length = decoder.map().map_err(error)?;
            let mut entries = serde_json::Map::new();
            each(decoder, length, |_, decoder| {
                let key = decoder.str().map_err(error)?.to_string();
                entries.insert(key, decode(decoder, inner)?);
                Ok(())
            })?;
            Value::Object(entries)
        }
        Shape::Record(record) => {
            let indexed = indexed(record);
            let mut read: Vec<Option<Value>> = vec![None; indexed.len()];
            let length = decoder.array().map_err(error)?;
            // An index the reader does not know is skipped.
            each(decoder, length, |position, decoder| {
                match indexed.iter().position(|(index, _)| *index == position) {
                    Some(slot) => read[slot] = Some(decode(decoder, &indexed[slot].1.shape)?),
                    None => decoder.skip().map_err(error)?,
                }
                Ok(())
            })?;
            let mut fields = serde_json::Map::new();
            for ((index, field), value) in indexed.iter().zip(read) {
                let value = match value {
                    Some(value) => value,
                    None if field.default => field.shape.default_value(),
                    None if matches!(field.shape, Shape::Option(_)) => Value::Null,
                    None => return Err(format!("missing value at index {index} ({})", field.name)),
                };
                fields.insert(field.name.to_string(), value);
            }
            Value::Object(fields)
        }
    })
}

/// Reads the items of an array or map whose head gave `length` (`None`: indefinite, up to its
/// break, which is consumed), `read` taking each with its position.
fn each(
    decoder: &mut Decoder,
    length: Option<u64>,
    mut read: impl FnMut(u64, &mut Decoder) -> Result<(), String>,
) -> Result<(), String> {
    let error = |error: minicbor::decode::Error| error.to_string();
    match length {
        Some(length) => (0..length).try_for_each(|position| read(position, decoder)),
        None => {
            let mut position = 0;
            while decoder.datatype().map_err(error)? != Type::Break {
                read(position, decoder)?;
                position += 1;
            }
            decoder.skip().map_err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, PartialEq, minicbor::Encode, minicbor::Decode)]
    struct Inner {
        #[n(0)]
        flag: bool,
    }

    /// Version 1, as a program declares it with the derive.
    #[derive(Debug, PartialEq, minicbor::Encode, minicbor::Decode)]
    struct Old {
        #[n(0)]
        id: i64,
        #[n(1)]
        note: Option<String>,
        #[n(2)]
        scores: Vec<f64>,
        #[n(3)]
        counts: BTreeMap<String, i32>,
        #[n(4)]
        inner: Inner,
        #[n(5)]
        tail: Option<i64>,
    }

    /// Version 2: `id` renamed, a required field with a default added, `tail` removed.
    #[derive(Debug, PartialEq, minicbor::Encode, minicbor::Decode)]
    struct New {
        #[n(0)]
        key: i64,
        #[n(1)]
        note: Option<String>,
        #[n(2)]
        scores: Vec<f64>,
        #[n(3)]
        counts: BTreeMap<String, i32>,
        #[n(4)]
        inner: Inner,
        #[n(6)]
        #[cbor(default)]
        count: i64,
    }

    fn field(name: &str, shape: Shape, id: u32) -> Field {
        let mut field = Field::new(name, shape);
        field.id = id;
        field
    }

    fn shapes() -> (Shape, Shape) {
        let inner = Shape::Record(Record {
            name: "Inner",
            fields: vec![Field::new("flag", Shape::Bool)],
        });
        let common = |first: &str| {
            vec![
                field(first, Shape::I64, 1),
                field("note", Shape::Option(Box::new(Shape::String)), 2),
                field("scores", Shape::List(Box::new(Shape::F64)), 3),
                field("counts", Shape::Map(Box::new(Shape::I32)), 4),
                field("inner", inner.clone(), 5),
            ]
        };
        let mut old = common("id");
        old.push(field("tail", Shape::Option(Box::new(Shape::I64)), 6));
        let mut new = common("key");
        let mut count = field("count", Shape::I64, 7);
        count.default = true;
        new.push(count);
        (
            Shape::Record(Record {
                name: "Old",
                fields: old,
            }),
            Shape::Record(Record {
                name: "New",
                fields: new,
            }),
        )
    }

    fn old(note: Option<&str>, tail: Option<i64>) -> Old {
        Old {
            id: 9,
            note: note.map(String::from),
            scores: vec![1.5, -2.0],
            counts: BTreeMap::from([("b".to_string(), 2), ("a".to_string(), 1)]),
            inner: Inner { flag: true },
            tail,
        }
    }

    #[test]
    fn the_twin_writes_the_derives_bytes_and_reads_across_versions_as_the_derive_does() {
        let (old_shape, new_shape) = shapes();
        for (note, tail) in [
            (Some("n"), Some(4)),
            (None, None),
            (Some("n"), None),
            (None, Some(4)),
        ] {
            let derived = old(note, tail);
            let json = serde_json::json!({
                "id": 9, "note": note, "scores": [1.5, -2.0], "counts": {"a": 1, "b": 2},
                "inner": {"flag": true}, "tail": tail,
            });
            let bytes = minicbor::to_vec(&derived).unwrap();
            assert_eq!(
                (EVOLUTION.encode)(&old_shape, &json).unwrap(),
                bytes,
                "{derived:?}"
            );
            assert_eq!((EVOLUTION.decode)(&old_shape, &old_shape, &bytes).unwrap(), json);
            // The new version reads the old bytes: `tail` skipped, `count` its default.
            let new: New = minicbor::decode(&bytes).unwrap();
            let read = (EVOLUTION.decode)(&old_shape, &new_shape, &bytes).unwrap();
            assert_eq!(read["key"], new.key);
            assert_eq!(read["count"], new.count);
            assert_eq!(read["note"].as_str(), new.note.as_deref());
            // The old version reads the new bytes: `tail` absent, so `None`.
            let new_bytes = minicbor::to_vec(&new).unwrap();
            let back: Old = minicbor::decode(&new_bytes).unwrap();
            let read = (EVOLUTION.decode)(&new_shape, &old_shape, &new_bytes).unwrap();
            assert_eq!(
                (read["id"].as_i64(), read["tail"].as_i64()),
                (Some(back.id), back.tail)
            );
        }
    }

    #[test]
    fn a_missing_required_field_is_refused_as_the_derive_refuses_it() {
        let (old_shape, _) = shapes();
        let mut encoder = Encoder::new(Vec::new());
        encoder.array(1).unwrap().i64(9).unwrap();
        let bytes = encoder.into_writer();
        assert!(minicbor::decode::<Old>(&bytes).is_err());
        let error = (EVOLUTION.decode)(&old_shape, &old_shape, &bytes).unwrap_err();
        assert!(error.contains("missing value at index 2"), "{error}");
    }
}

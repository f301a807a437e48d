//! `serbench evolve` on Borsh: each version of a record is written and read as borsh's derive
//! does for the struct it stands for (fields in declaration order, nothing between them), the
//! values themselves through borsh's own `BorshSerialize` and `BorshDeserialize` of `bool`,
//! `i32`, `i64`, `f64`, `String`, `u8` and `u32`; an `Option` a `u8` tag, a list or map a `u32`
//! count (a map's entries in key order, as a `BTreeMap`'s); `from_slice`'s refusal of bytes
//! left over. Borsh has no evolution mechanism: this is the positional baseline. The unit test
//! holds the twin to a real derive.

use borsh::{BorshDeserialize, BorshSerialize};
use serde_json::Value;

use crate::format::SchemaEvolution;
use crate::shape::Shape;

pub const EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "borsh",
    variant: "",
    mechanism: "none: fields in declaration order, untagged (the derive's encoding)",
    encode: |shape, value| {
        let mut out = Vec::new();
        encode(&mut out, shape, value)?;
        Ok(out)
    },
    decode: |_writer, reader, mut bytes| {
        let value = decode(&mut bytes, reader)?;
        match bytes {
            [] => Ok(value),
            left => Err(format!("Not all bytes read: {} left over", left.len())),
        }
    },
    versioned: None,
};

fn put(out: &mut Vec<u8>, value: &impl BorshSerialize) -> Result<(), String> {
    value.serialize(out).map_err(|error| error.to_string())
}

fn encode(out: &mut Vec<u8>, shape: &Shape, value: &Value) -> Result<(), String> {
    let wrong = || format!("{value} is no {shape}");
    match (shape, value) {
        (Shape::Option(_), Value::Null) => put(out, &0u8),
        (Shape::Option(inner), value) => {
            put(out, &1u8)?;
            encode(out, inner, value)
        }
        (Shape::Bool, Value::Bool(value)) => put(out, value),
        (Shape::I32, Value::Number(number)) => put(
            out,
            &number
                .as_i64()
                .and_then(|value| i32::try_from(value).ok())
                .ok_or_else(wrong)?,
        ),
        (Shape::I64, Value::Number(number)) => put(out, &number.as_i64().ok_or_else(wrong)?),
        (Shape::F64, Value::Number(number)) => put(out, &number.as_f64().ok_or_else(wrong)?),
        (Shape::String, Value::String(text)) => put(out, text),
        (Shape::List(item), Value::Array(items)) => {
            put(out, &u32::try_from(items.len()).map_err(|_| wrong())?)?;
            items.iter().try_for_each(|value| encode(out, item, value))
        }
        (Shape::Map(inner), Value::Object(entries)) => {
            put(out, &u32::try_from(entries.len()).map_err(|_| wrong())?)?;
            let mut sorted: Vec<(&String, &Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (key, value) in sorted {
                put(out, key)?;
                encode(out, inner, value)?;
            }
            Ok(())
        }
        (Shape::Record(record), Value::Object(fields)) => record
            .fields
            .iter()
            .try_for_each(|field| encode(out, &field.shape, fields.get(field.name).unwrap_or(&Value::Null))),
        _ => Err(wrong()),
    }
}

fn take<T: BorshDeserialize>(bytes: &mut &[u8]) -> Result<T, String> {
    T::deserialize(bytes).map_err(|error| error.to_string())
}

fn decode(bytes: &mut &[u8], shape: &Shape) -> Result<Value, String> {
    Ok(match shape {
        Shape::Option(inner) => match take::<u8>(bytes)? {
            0 => Value::Null,
            1 => decode(bytes, inner)?,
            tag => {
                return Err(format!(
                    "Invalid Option representation: {tag}. The first byte must be 0 or 1"
                ));
            }
        },
        Shape::Bool => Value::from(take::<bool>(bytes)?),
        Shape::I32 => Value::from(take::<i32>(bytes)?),
        Shape::I64 => Value::from(take::<i64>(bytes)?),
        Shape::F64 => Value::from(take::<f64>(bytes)?),
        Shape::String => Value::from(take::<String>(bytes)?),
        Shape::List(item) => {
            let count = take::<u32>(bytes)?;
            Value::Array(
                (0..count)
                    .map(|_| decode(bytes, item))
                    .collect::<Result<_, _>>()?,
            )
        }
        Shape::Map(inner) => {
            let count = take::<u32>(bytes)?;
            let mut entries = serde_json::Map::new();
            for _ in 0..count {
                let key = take::<String>(bytes)?;
                entries.insert(key, decode(bytes, inner)?);
            }
            Value::Object(entries)
        }
        Shape::Record(record) => Value::Object(
            record
                .fields
                .iter()
                .map(|field| Ok((field.name.to_string(), decode(bytes, &field.shape)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::shape::{Field, Record};

    #[derive(Debug, PartialEq, BorshSerialize, BorshDeserialize)]
    struct Inner {
        flag: bool,
        small: i32,
    }

    #[derive(Debug, PartialEq, BorshSerialize, BorshDeserialize)]
    struct Twin {
        id: i64,
        note: Option<String>,
        scores: Vec<f64>,
        counts: BTreeMap<String, i32>,
        inner: Inner,
    }

    /// `Twin` with `note` moved last: what a reordering program compiles.
    #[derive(Debug, PartialEq, BorshSerialize, BorshDeserialize)]
    struct Moved {
        id: i64,
        scores: Vec<f64>,
        counts: BTreeMap<String, i32>,
        inner: Inner,
        note: Option<String>,
    }

    fn shape(moved: bool) -> Shape {
        let inner = Shape::Record(Record {
            name: "Inner",
            fields: vec![Field::new("flag", Shape::Bool), Field::new("small", Shape::I32)],
        });
        let mut fields = vec![
            Field::new("id", Shape::I64),
            Field::new("note", Shape::Option(Box::new(Shape::String))),
            Field::new("scores", Shape::List(Box::new(Shape::F64))),
            Field::new("counts", Shape::Map(Box::new(Shape::I32))),
            Field::new("inner", inner),
        ];
        if moved {
            let note = fields.remove(1);
            fields.push(note);
        }
        Shape::Record(Record { name: "Twin", fields })
    }

    #[test]
    fn the_twin_writes_and_reads_as_borshs_derive_across_a_move() {
        for note in [Some("n"), None] {
            let twin = Twin {
                id: -3,
                note: note.map(String::from),
                scores: vec![0.5],
                counts: BTreeMap::from([("b".to_string(), 2), ("a".to_string(), 1)]),
                inner: Inner { flag: true, small: 7 },
            };
            let json = serde_json::json!({
                "id": -3, "note": note, "scores": [0.5], "counts": {"a": 1, "b": 2},
                "inner": {"flag": true, "small": 7},
            });
            let bytes = borsh::to_vec(&twin).unwrap();
            assert_eq!((EVOLUTION.encode)(&shape(false), &json).unwrap(), bytes);
            assert_eq!(
                (EVOLUTION.decode)(&shape(false), &shape(false), &bytes).unwrap(),
                json
            );
            // The moved version reads the old bytes: the derive and the twin fail alike or not.
            let derived = borsh::from_slice::<Moved>(&bytes);
            let twin = (EVOLUTION.decode)(&shape(false), &shape(true), &bytes);
            assert_eq!(derived.is_ok(), twin.is_ok(), "{derived:?} against {twin:?}");
        }
        let left_over = [borsh::to_vec(&1i64).unwrap(), vec![0]].concat();
        let one = Shape::Record(Record {
            name: "One",
            fields: vec![Field::new("id", Shape::I64)],
        });
        assert!((EVOLUTION.decode)(&one, &one, &left_over).is_err());
    }
}

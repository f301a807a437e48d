//! `serbench evolve` on Protobuf: each version of a record becomes a proto3 message set at run
//! time, its field numbers the shape's tags (kept by a rename or a move, new for an added
//! field), written and read as prost-reflect `DynamicMessage`s: the wire format prost's generated
//! types write, read by the reader's own descriptor as a program compiled from its `.proto` is.

use std::collections::BTreeSet;

use heck::ToUpperCamelCase;
use prost::Message;
use prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use prost_reflect::prost_types::{
    DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet, MessageOptions,
    OneofDescriptorProto,
};
use prost_reflect::{
    DescriptorPool, DynamicMessage, Kind, MapKey, MessageDescriptor, ReflectMessage, Value as Proto,
};
use serde_json::Value;

use crate::format::SchemaEvolution;
use crate::shape::{Record, Shape, identifier};

const PACKAGE: &str = "evolve";

pub const EVOLUTION: SchemaEvolution = SchemaEvolution {
    backend: "prost",
    variant: "",
    mechanism: "field numbers (a rename keeps its number, an added field takes a new one)",
    encode: |shape, value| {
        let (descriptor, record) = descriptor(shape)?;
        Ok(message(&descriptor, record, value)?.encode_to_vec())
    },
    decode: |_writer, reader, bytes| {
        let (descriptor, record) = descriptor(reader)?;
        let message = DynamicMessage::decode(descriptor, bytes).map_err(|error| error.to_string())?;
        json(record, &message)
    },
    versioned: None,
};

/// The message of a record shape, compiled into a pool of its own.
fn descriptor(shape: &Shape) -> Result<(MessageDescriptor, &Record), String> {
    let Shape::Record(record) = shape else {
        return Err("the top-level type is not a record".into());
    };
    let mut file = FileDescriptorProto {
        name: Some("evolve.proto".into()),
        package: Some(PACKAGE.into()),
        syntax: Some("proto3".into()),
        ..Default::default()
    };
    declare(record, &mut file.message_type, &mut BTreeSet::new())?;
    let pool = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: vec![file] })
        .map_err(|error| format!("the message set does not compile: {error}"))?;
    let name = format!("{PACKAGE}.{}", identifier(record.name));
    let descriptor = pool
        .get_message_by_name(&name)
        .ok_or(format!("no message {name}"))?;
    Ok((descriptor, record))
}

/// Declares `record`'s message (once per name) and those of the records inside it.
fn declare(
    record: &Record,
    out: &mut Vec<DescriptorProto>,
    declared: &mut BTreeSet<String>,
) -> Result<(), String> {
    let name = identifier(record.name);
    if !declared.insert(name.clone()) {
        return Ok(());
    }
    let mut message = DescriptorProto {
        name: Some(name.clone()),
        ..Default::default()
    };
    let mut names = BTreeSet::new();
    for (index, field) in record.fields.iter().enumerate() {
        let field_name = identifier(field.name);
        if !names.insert(field_name.clone()) {
            return Err(format!(
                "two fields of {} are the Protobuf field `{field_name}`",
                record.name
            ));
        }
        let mut proto = FieldDescriptorProto {
            name: Some(field_name.clone()),
            number: Some(field.tag(index) as i32),
            label: Some(Label::Optional as i32),
            ..Default::default()
        };
        let (shape, optional) = match &field.shape {
            Shape::Option(inner) => (&**inner, true),
            shape => (shape, false),
        };
        match shape {
            Shape::List(_) | Shape::Map(_) if optional => {
                return Err(format!(
                    "`{}`: a nullable list or map has no Protobuf field (it needs a wrapper message)",
                    field.name
                ));
            }
            Shape::List(item) => {
                proto.label = Some(Label::Repeated as i32);
                element(item, &mut proto, out, declared)?;
            }
            Shape::Map(value) => {
                let entry_name = format!("{}Entry", field_name.to_upper_camel_case());
                let key = FieldDescriptorProto {
                    name: Some("key".into()),
                    number: Some(1),
                    label: Some(Label::Optional as i32),
                    r#type: Some(Type::String as i32),
                    ..Default::default()
                };
                let mut entry_value = FieldDescriptorProto {
                    name: Some("value".into()),
                    number: Some(2),
                    label: Some(Label::Optional as i32),
                    ..Default::default()
                };
                element(value, &mut entry_value, out, declared)?;
                message.nested_type.push(DescriptorProto {
                    name: Some(entry_name.clone()),
                    field: vec![key, entry_value],
                    options: Some(MessageOptions {
                        map_entry: Some(true),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                proto.label = Some(Label::Repeated as i32);
                proto.r#type = Some(Type::Message as i32);
                proto.type_name = Some(format!(".{PACKAGE}.{name}.{entry_name}"));
            }
            shape => {
                element(shape, &mut proto, out, declared)?;
                // proto3 `optional`: presence, through the synthetic oneof protoc declares.
                if optional && !matches!(shape, Shape::Record(_)) {
                    proto.proto3_optional = Some(true);
                    proto.oneof_index = Some(message.oneof_decl.len() as i32);
                    message.oneof_decl.push(OneofDescriptorProto {
                        name: Some(format!("_{field_name}")),
                        ..Default::default()
                    });
                }
            }
        }
        message.field.push(proto);
    }
    out.push(message);
    Ok(())
}

/// The type of a singular field, a list's item or a map's value.
fn element(
    shape: &Shape,
    proto: &mut FieldDescriptorProto,
    out: &mut Vec<DescriptorProto>,
    declared: &mut BTreeSet<String>,
) -> Result<(), String> {
    let scalar = match shape {
        Shape::Bool => Type::Bool,
        Shape::I32 => Type::Int32,
        Shape::I64 => Type::Int64,
        Shape::F64 => Type::Double,
        Shape::String => Type::String,
        Shape::Record(record) => {
            declare(record, out, declared)?;
            proto.type_name = Some(format!(".{PACKAGE}.{}", identifier(record.name)));
            Type::Message
        }
        Shape::Option(_) | Shape::List(_) | Shape::Map(_) => {
            return Err(format!(
                "`{}`: a list or map of nullable values, lists or maps has no Protobuf field (it needs a wrapper message)",
                proto.name()
            ));
        }
    };
    proto.r#type = Some(scalar as i32);
    Ok(())
}

/// `value` (a record of `record`'s shape) as a message of `descriptor`.
fn message(descriptor: &MessageDescriptor, record: &Record, value: &Value) -> Result<DynamicMessage, String> {
    let mut message = DynamicMessage::new(descriptor.clone());
    for (index, field) in record.fields.iter().enumerate() {
        let proto = descriptor
            .get_field(field.tag(index))
            .ok_or(format!("no field {}", field.name))?;
        match (value.get(field.name), &field.shape) {
            (None | Some(Value::Null), Shape::Option(_)) => {}
            (None, _) => return Err(format!("`{}` is missing", field.name)),
            (Some(value), shape) => {
                let value = proto_value(&proto.kind(), shape, value)?;
                message
                    .try_set_field(&proto, value)
                    .map_err(|error| error.to_string())?;
            }
        }
    }
    Ok(message)
}

fn proto_value(kind: &Kind, shape: &Shape, value: &Value) -> Result<Proto, String> {
    let wrong = || format!("{value} is no {shape}");
    Ok(match (shape, value) {
        (Shape::Option(inner), value) => proto_value(kind, inner, value)?,
        (Shape::Bool, Value::Bool(value)) => Proto::Bool(*value),
        (Shape::I32, Value::Number(number)) => Proto::I32(
            number
                .as_i64()
                .and_then(|value| i32::try_from(value).ok())
                .ok_or_else(wrong)?,
        ),
        (Shape::I64, Value::Number(number)) => Proto::I64(number.as_i64().ok_or_else(wrong)?),
        (Shape::F64, Value::Number(number)) => Proto::F64(number.as_f64().ok_or_else(wrong)?),
        (Shape::String, Value::String(text)) => Proto::String(text.clone()),
        (Shape::Record(record), value) => {
            let Kind::Message(descriptor) = kind else {
                return Err(wrong());
            };
            Proto::Message(message(descriptor, record, value)?)
        }
        (Shape::List(item), Value::Array(items)) => Proto::List(
            items
                .iter()
                .map(|value| proto_value(kind, item, value))
                .collect::<Result<_, _>>()?,
        ),
        (Shape::Map(inner), Value::Object(entries)) => {
            let Kind::Message(entry) = kind else {
                return Err(wrong());
            };
            let value_kind = entry.map_entry_value_field().kind();
            Proto::Map(
                entries
                    .iter()
                    .map(|(key, value)| {
                        Ok((
                            MapKey::String(key.clone()),
                            proto_value(&value_kind, inner, value)?,
                        ))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        _ => return Err(wrong()),
    })
}

/// A message read back as a record of `record`'s shape: a proto3 `optional` field not present
/// is null; any other field not present, its default (as prost's generated types read it).
fn json(record: &Record, message: &DynamicMessage) -> Result<Value, String> {
    let descriptor = message.descriptor();
    let mut fields = serde_json::Map::new();
    for (index, field) in record.fields.iter().enumerate() {
        let proto = descriptor
            .get_field(field.tag(index))
            .ok_or(format!("no field {}", field.name))?;
        let value = match &field.shape {
            Shape::Option(_) if !message.has_field(&proto) => Value::Null,
            shape => json_value(shape, &message.get_field(&proto))?,
        };
        fields.insert(field.name.to_string(), value);
    }
    Ok(Value::Object(fields))
}

fn json_value(shape: &Shape, value: &Proto) -> Result<Value, String> {
    Ok(match (shape, value) {
        (Shape::Option(inner), value) => json_value(inner, value)?,
        (Shape::Bool, Proto::Bool(value)) => Value::from(*value),
        (Shape::I32, Proto::I32(value)) => Value::from(*value),
        (Shape::I64, Proto::I64(value)) => Value::from(*value),
        (Shape::F64, Proto::F64(value)) => Value::from(*value),
        (Shape::String, Proto::String(text)) => Value::from(text.as_str()),
        (Shape::Record(record), Proto::Message(message)) => json(record, message)?,
        (Shape::List(item), Proto::List(items)) => Value::Array(
            items
                .iter()
                .map(|value| json_value(item, value))
                .collect::<Result<_, _>>()?,
        ),
        (Shape::Map(inner), Proto::Map(entries)) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| match key {
                    MapKey::String(key) => Ok((key.clone(), json_value(inner, value)?)),
                    key => Err(format!("a map key {key:?} where a string was declared")),
                })
                .collect::<Result<_, String>>()?,
        ),
        (shape, value) => return Err(format!("read {value:?} where the reader declares {shape}")),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::shape::Field;

    /// The type prost derives for the shape below, as prost-build would generate it.
    #[derive(Clone, PartialEq, prost::Message)]
    struct Twin {
        #[prost(int64, tag = "1")]
        id: i64,
        #[prost(string, optional, tag = "2")]
        note: Option<String>,
        #[prost(double, repeated, tag = "3")]
        scores: Vec<f64>,
        #[prost(map = "string, int32", tag = "4")]
        counts: HashMap<String, i32>,
        #[prost(message, optional, tag = "5")]
        inner: Option<Inner>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    struct Inner {
        #[prost(bool, tag = "1")]
        flag: bool,
    }

    fn shape() -> Shape {
        let inner = Shape::Record(Record {
            name: "Inner",
            fields: vec![Field::new("flag", Shape::Bool)],
        });
        Shape::Record(Record {
            name: "Twin",
            fields: vec![
                Field::new("id", Shape::I64),
                Field::new("note", Shape::Option(Box::new(Shape::String))),
                Field::new("scores", Shape::List(Box::new(Shape::F64))),
                Field::new("counts", Shape::Map(Box::new(Shape::I32))),
                Field::new("inner", Shape::Option(Box::new(inner))),
            ],
        })
    }

    #[test]
    fn the_run_time_message_writes_the_bytes_of_prosts_derived_type_and_reads_them_back() {
        let value = serde_json::json!({
            "id": -5, "note": "n", "scores": [1.5, 2.0], "counts": {"a": 3}, "inner": {"flag": true},
        });
        let twin = Twin {
            id: -5,
            note: Some("n".into()),
            scores: vec![1.5, 2.0],
            counts: HashMap::from([("a".to_string(), 3)]),
            inner: Some(Inner { flag: true }),
        };
        let bytes = (EVOLUTION.encode)(&shape(), &value).unwrap();
        assert_eq!(bytes, twin.encode_to_vec());
        assert_eq!((EVOLUTION.decode)(&shape(), &shape(), &bytes).unwrap(), value);
        // Absent optional fields read as null, absent plain ones as their default.
        let empty = Twin::default().encode_to_vec();
        assert_eq!(
            (EVOLUTION.decode)(&shape(), &shape(), &empty).unwrap(),
            serde_json::json!({"id": 0, "note": null, "scores": [], "counts": {}, "inner": null})
        );
    }

    #[test]
    fn a_list_of_lists_is_refused_with_the_field_named() {
        let shape = Shape::Record(Record {
            name: "R",
            fields: vec![Field::new(
                "grid",
                Shape::List(Box::new(Shape::List(Box::new(Shape::I64)))),
            )],
        });
        let error = (EVOLUTION.encode)(&shape, &serde_json::json!({"grid": [[1]]})).unwrap_err();
        assert!(
            error.contains("`grid`") && error.contains("wrapper message"),
            "{error}"
        );
    }
}

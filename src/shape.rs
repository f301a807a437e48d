//! A record type known only at run time (from a data schema) that serializes and deserializes
//! as serde's derive generates for the struct it stands for: fields in order through
//! `serialize_struct`, read back through `deserialize_struct` by position (`visit_seq`) or by
//! name (`visit_map`), with derive's `default` and `alias` attributes, an `Option` field absent
//! from a map read as `None`, unknown keys skipped. `serbench evolve` writes data with one
//! shape and reads it with another through each serde format, as two versions of a program
//! with derived types would.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, SerializeStruct};
use serde_json::{Map, Number, Value};

/// The type of a value.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Bool,
    I32,
    I64,
    F64,
    String,
    Option(Box<Shape>),
    List(Box<Shape>),
    /// String keys.
    Map(Box<Shape>),
    Record(Record),
}

/// A struct: its name and fields in declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub name: &'static str,
    pub fields: Vec<Field>,
}

/// A field with derive's attributes: `#[serde(default)]` and `#[serde(alias = "...")]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: &'static str,
    pub shape: Shape,
    pub default: bool,
    pub aliases: Vec<&'static str>,
    /// Its tag where a schema numbers fields (Protobuf's field number): kept by a rename or a
    /// move, new for an added field; 0 for none.
    pub id: u32,
}

impl Field {
    pub fn new(name: &str, shape: Shape) -> Field {
        Field {
            name: leak(name),
            shape,
            default: false,
            aliases: Vec::new(),
            id: 0,
        }
    }

    /// Its tag: `id`, else its place (1-based) in `record`.
    pub fn tag(&self, index: usize) -> u32 {
        match self.id {
            0 => index as u32 + 1,
            id => id,
        }
    }

    /// Whether `key` names this field (its name or an alias).
    pub fn answers_to(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }
}

/// `name` as an identifier of schema languages that allow `[A-Za-z_][A-Za-z0-9_]*` (Protobuf,
/// Avro): every other character an underscore, a leading digit after one.
pub fn identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

thread_local! {
    /// Each record's field names as the `&'static [&str]` `deserialize_struct` takes: leaked once
    /// per distinct list, not once per decode.
    static FIELD_NAMES: std::cell::RefCell<std::collections::HashMap<Vec<&'static str>, &'static [&'static str]>> =
        std::cell::RefCell::default();
}

fn field_names(record: &Record) -> &'static [&'static str] {
    let names: Vec<&'static str> = record.fields.iter().map(|field| field.name).collect();
    FIELD_NAMES.with(|cache| {
        *cache
            .borrow_mut()
            .entry(names)
            .or_insert_with_key(|names| Box::leak(names.clone().into_boxed_slice()))
    })
}

/// A name serde needs as `&'static str` (struct and field names): leaked, once per shape.
pub fn leak(name: &str) -> &'static str {
    Box::leak(name.to_string().into_boxed_str())
}

impl Shape {
    /// The value `#[serde(default)]` gives: `Default::default()` of the type.
    pub fn default_value(&self) -> Value {
        match self {
            Shape::Bool => Value::Bool(false),
            Shape::I32 | Shape::I64 => Value::from(0),
            Shape::F64 => Value::from(0.0),
            Shape::String => Value::from(""),
            Shape::Option(_) => Value::Null,
            Shape::List(_) => Value::Array(Vec::new()),
            Shape::Map(_) => Value::Object(Map::new()),
            Shape::Record(record) => Value::Object(
                record
                    .fields
                    .iter()
                    .map(|field| (field.name.to_string(), field.shape.default_value()))
                    .collect(),
            ),
        }
    }
}

/// The Rust type the shape stands for (`Option<Vec<i64>>`; a record by its name and size).
impl fmt::Display for Shape {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Shape::Bool => formatter.write_str("bool"),
            Shape::I32 => formatter.write_str("i32"),
            Shape::I64 => formatter.write_str("i64"),
            Shape::F64 => formatter.write_str("f64"),
            Shape::String => formatter.write_str("String"),
            Shape::Option(inner) => write!(formatter, "Option<{inner}>"),
            Shape::List(item) => write!(formatter, "Vec<{item}>"),
            Shape::Map(value) => write!(formatter, "BTreeMap<String, {value}>"),
            Shape::Record(record) => write!(
                formatter,
                "struct {} ({} fields)",
                record.name,
                record.fields.len()
            ),
        }
    }
}

/// A value of a shape, serialized as the derived type would serialize it.
pub struct Shaped<'a>(pub &'a Shape, pub &'a Value);

impl Serialize for Shaped<'_> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wrong = || ser::Error::custom(format!("{} is no {}", self.1, self.0));
        match (self.0, self.1) {
            (Shape::Bool, Value::Bool(value)) => serializer.serialize_bool(*value),
            (Shape::I32, Value::Number(number)) => {
                let value = number
                    .as_i64()
                    .and_then(|value| i32::try_from(value).ok())
                    .ok_or_else(wrong)?;
                serializer.serialize_i32(value)
            }
            (Shape::I64, Value::Number(number)) => {
                serializer.serialize_i64(number.as_i64().ok_or_else(wrong)?)
            }
            (Shape::F64, Value::Number(number)) => {
                serializer.serialize_f64(number.as_f64().ok_or_else(wrong)?)
            }
            (Shape::String, Value::String(text)) => serializer.serialize_str(text),
            (Shape::Option(_), Value::Null) => serializer.serialize_none(),
            (Shape::Option(inner), value) => serializer.serialize_some(&Shaped(inner, value)),
            (Shape::List(inner), Value::Array(items)) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Shaped(inner, item))?;
                }
                seq.end()
            }
            (Shape::Map(inner), Value::Object(entries)) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, &Shaped(inner, value))?;
                }
                map.end()
            }
            (Shape::Record(record), Value::Object(fields)) => {
                let mut out = serializer.serialize_struct(record.name, record.fields.len())?;
                for field in &record.fields {
                    let value = fields.get(field.name).unwrap_or(&Value::Null);
                    out.serialize_field(field.name, &Shaped(&field.shape, value))?;
                }
                out.end()
            }
            _ => Err(wrong()),
        }
    }
}

thread_local! {
    /// The shape [`Seeded`] reads, set by [`read_as`] for one call.
    static READER: std::cell::RefCell<Option<Shape>> = const { std::cell::RefCell::new(None) };
}

/// A value read as the shape [`read_as`] names: for libraries whose decode takes a
/// `Deserialize` type and no seed (ciborium, bson, bitcode's serde API). It deserializes
/// exactly as [`Seed`] does.
pub struct Seeded(pub Value);

impl<'de> de::Deserialize<'de> for Seeded {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Seeded, D::Error> {
        let shape = READER
            .with(|reader| reader.borrow().clone())
            .ok_or_else(|| de::Error::custom("Seeded read outside read_as"))?;
        Seed(&shape).deserialize(deserializer).map(Seeded)
    }
}

/// `read()` with [`Seeded`] reading `shape` (on this thread, for this call): the value read, or
/// the library's error as text.
pub fn read_as<E: fmt::Display>(
    shape: &Shape,
    read: impl FnOnce() -> Result<Seeded, E>,
) -> Result<Value, String> {
    let previous = READER.with(|reader| reader.replace(Some(shape.clone())));
    let out = read();
    READER.with(|reader| *reader.borrow_mut() = previous);
    out.map(|read| read.0).map_err(|error| error.to_string())
}

/// Reads a value of a shape as the derived type would (a [`DeserializeSeed`]).
#[derive(Clone, Copy)]
pub struct Seed<'a>(pub &'a Shape);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Shape::Bool => deserializer.deserialize_bool(self),
            Shape::I32 => deserializer.deserialize_i32(self),
            Shape::I64 => deserializer.deserialize_i64(self),
            Shape::F64 => deserializer.deserialize_f64(self),
            Shape::String => deserializer.deserialize_string(self),
            Shape::Option(_) => deserializer.deserialize_option(self),
            Shape::List(_) => deserializer.deserialize_seq(self),
            Shape::Map(_) => deserializer.deserialize_map(self),
            Shape::Record(record) => deserializer.deserialize_struct(record.name, field_names(record), self),
        }
    }
}

impl Seed<'_> {
    fn integer<E: de::Error>(self, value: i128) -> Result<Value, E> {
        let fits = match self.0 {
            Shape::I32 => i32::try_from(value).is_ok(),
            Shape::I64 => i64::try_from(value).is_ok(),
            Shape::F64 => return Ok(Value::from(value as f64)),
            _ => false,
        };
        match (fits, i64::try_from(value)) {
            (true, Ok(value)) => Ok(Value::from(value)),
            _ => Err(E::invalid_value(de::Unexpected::Other(&value.to_string()), &self)),
        }
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "a {}", self.0)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        match self.0 {
            Shape::Bool => Ok(Value::Bool(value)),
            _ => Err(E::invalid_type(de::Unexpected::Bool(value), &self)),
        }
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.integer(value.into())
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.integer(value.into())
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        match self.0 {
            Shape::F64 => Number::from_f64(value)
                .map(Value::Number)
                .ok_or_else(|| E::custom("a non-finite float")),
            _ => Err(E::invalid_type(de::Unexpected::Float(value), &self)),
        }
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        match self.0 {
            Shape::String => Ok(Value::from(value)),
            _ => Err(E::invalid_type(de::Unexpected::Str(value), &self)),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        match self.0 {
            Shape::Option(_) => Ok(Value::Null),
            _ => Err(E::invalid_type(de::Unexpected::Option, &self)),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.visit_none()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Shape::Option(inner) => Seed(inner).deserialize(deserializer),
            _ => Err(de::Error::invalid_type(de::Unexpected::Option, &self)),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        match self.0 {
            Shape::List(inner) => {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element_seed(Seed(inner))? {
                    items.push(item);
                }
                Ok(Value::Array(items))
            }
            // By position, as derive's `visit_seq`: a missing trailing field takes its default
            // where it has one, else the length is wrong; trailing elements are not read.
            Shape::Record(record) => {
                let mut fields = Map::new();
                for (index, field) in record.fields.iter().enumerate() {
                    let value = match seq.next_element_seed(Seed(&field.shape))? {
                        Some(value) => value,
                        None if field.default => field.shape.default_value(),
                        None => return Err(de::Error::invalid_length(index, &self)),
                    };
                    fields.insert(field.name.to_string(), value);
                }
                Ok(Value::Object(fields))
            }
            _ => Err(de::Error::invalid_type(de::Unexpected::Seq, &self)),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        match self.0 {
            Shape::Map(inner) => {
                let mut entries = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.insert(key, map.next_value_seed(Seed(inner))?);
                }
                Ok(Value::Object(entries))
            }
            // By name or alias, as derive's `visit_map`: unknown keys skipped, a duplicate
            // refused, a missing field its default, `None` for an `Option`, else refused.
            Shape::Record(record) => {
                let mut fields = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    match record.fields.iter().find(|field| field.answers_to(&key)) {
                        Some(field) if fields.contains_key(field.name) => {
                            return Err(de::Error::duplicate_field(field.name));
                        }
                        Some(field) => {
                            fields.insert(field.name.to_string(), map.next_value_seed(Seed(&field.shape))?);
                        }
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                for field in &record.fields {
                    if fields.contains_key(field.name) {
                        continue;
                    }
                    let value = match &field.shape {
                        _ if field.default => field.shape.default_value(),
                        Shape::Option(_) => Value::Null,
                        _ => return Err(de::Error::missing_field(field.name)),
                    };
                    fields.insert(field.name.to_string(), value);
                }
                Ok(Value::Object(fields))
            }
            _ => Err(de::Error::invalid_type(de::Unexpected::Map, &self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bincode's serde API writes what its derive writes for a struct of these types: what
    /// `evolve` measures of bincode through it holds for the derive the arms use.
    #[cfg(feature = "bincode")]
    #[test]
    fn seeded_reads_as_the_seed_does_and_only_inside_read_as() {
        let shape = Shape::Record(Record {
            name: "R",
            fields: vec![
                Field::new("id", Shape::I64),
                Field::new("note", Shape::Option(Box::new(Shape::String))),
            ],
        });
        let json = br#"{"id": 3, "unknown": [1], "note": "n"}"#;
        let seeded = read_as(&shape, || serde_json::from_slice::<Seeded>(json)).unwrap();
        let seed =
            DeserializeSeed::deserialize(Seed(&shape), &mut serde_json::Deserializer::from_slice(json))
                .unwrap();
        assert_eq!(seeded, seed);
        assert_eq!(seed, serde_json::json!({"id": 3, "note": "n"}));
        let outside = serde_json::from_slice::<Seeded>(json).err().unwrap();
        assert!(outside.to_string().contains("outside read_as"), "{outside}");
    }

    #[test]
    fn bincodes_serde_bytes_of_a_shape_are_its_derives() {
        #[derive(bincode::Encode, serde::Serialize)]
        struct Twin {
            id: i64,
            small: i32,
            note: Option<String>,
            items: Vec<String>,
            ratio: f64,
            flag: bool,
        }
        let twin = Twin {
            id: -70_000,
            small: 12,
            note: Some("n".into()),
            items: vec!["a".into(), "b".into()],
            ratio: 0.5,
            flag: true,
        };
        let shape = Shape::Record(Record {
            name: "Twin",
            fields: vec![
                Field::new("id", Shape::I64),
                Field::new("small", Shape::I32),
                Field::new("note", Shape::Option(Box::new(Shape::String))),
                Field::new("items", Shape::List(Box::new(Shape::String))),
                Field::new("ratio", Shape::F64),
                Field::new("flag", Shape::Bool),
            ],
        });
        let config = bincode::config::standard();
        let value = serde_json::to_value(&twin).unwrap();
        assert_eq!(
            bincode::serde::encode_to_vec(Shaped(&shape, &value), config).unwrap(),
            bincode::encode_to_vec(&twin, config).unwrap()
        );
    }

    /// The derived twin of a shape: the same bytes through serde_json and postcard.
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Order {
        id: i64,
        note: Option<String>,
        items: Vec<String>,
    }

    fn order() -> Shape {
        Shape::Record(Record {
            name: "Order",
            fields: vec![
                Field::new("id", Shape::I64),
                Field::new("note", Shape::Option(Box::new(Shape::String))),
                Field::new("items", Shape::List(Box::new(Shape::String))),
            ],
        })
    }

    #[cfg(feature = "postcard")]
    #[test]
    fn a_shape_writes_and_reads_the_bytes_its_derived_twin_does() {
        let derived = Order {
            id: 7,
            note: None,
            items: vec!["a".into()],
        };
        let value = serde_json::to_value(&derived).unwrap();
        let shape = order();
        let json = serde_json::to_vec(&Shaped(&shape, &value)).unwrap();
        assert_eq!(json, serde_json::to_vec(&derived).unwrap());
        let binary = postcard::to_allocvec(&Shaped(&shape, &value)).unwrap();
        assert_eq!(binary, postcard::to_allocvec(&derived).unwrap());
        let read = Seed(&shape)
            .deserialize(&mut serde_json::Deserializer::from_slice(&json))
            .unwrap();
        assert_eq!(read, value);
        let read = Seed(&shape)
            .deserialize(&mut postcard::Deserializer::from_bytes(&binary))
            .unwrap();
        assert_eq!(read, value);
        // An absent Option field is None by name; by position, a missing field is refused.
        let read = Seed(&shape)
            .deserialize(&mut serde_json::Deserializer::from_str(r#"{"id":1,"items":[]}"#))
            .unwrap();
        assert_eq!(read, serde_json::json!({"id": 1, "note": null, "items": []}));
        let short = postcard::to_allocvec(&(1i64,)).unwrap();
        assert!(
            Seed(&shape)
                .deserialize(&mut postcard::Deserializer::from_bytes(&short))
                .is_err()
        );
    }
}

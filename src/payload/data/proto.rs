//! The inferred schema as Protocol Buffers (proto3): a [`Plan`] of messages that the protobuf
//! arms compile at run time (protox) and fill (prost-reflect), and that `serbench schema`
//! writes as a `.proto` file.
//!
//! A record is a message with one field per key, numbered in key order; integers are `int64`,
//! floats `double`. A nullable or optional scalar is an `optional` field (absent for null); a
//! record field is a message field (which has presence anyway). Where protobuf has no field for
//! a value, the plan adds a small wrapper message, as `google.protobuf.ListValue` does:
//!
//! - a list or map that may be null or absent (a `repeated` or `map` field cannot be absent, it
//!   would read back as empty): a message `{ repeated ... items = 1; }` or
//!   `{ map<string, ...> entries = 1; }`;
//! - a list of lists, a list of maps, a map of lists or maps: the inner one is such a message;
//! - a null inside a list or a map: each element is a message `{ optional ... value = 1; }`;
//! - the document, when it is not a record: a message `{ ... value = 1; }`; a list of records
//!   is the message `Records { repeated Record records = 1; }`.
//!
//! A conflict (a field of several kinds) has no proto3 field: the plan is an error naming the
//! path, and the protobuf arms list the data unsupported with it.

use std::fmt::Write;

use anyhow::{Result, bail};

use std::collections::BTreeMap;

use super::DataPayload;
use super::schema::{Kind, Names, Schema, Type, TypedRecord, is_field_name};

/// The package of every inferred message.
pub const PACKAGE: &str = "serbench.data";

/// The messages of a data payload, the top-level one first.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub messages: Vec<Message>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub name: String,
    pub role: Role,
    pub fields: Vec<ProtoField>,
}

/// What a message stands for in the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A record: one field per key, named like it.
    Record,
    /// The records of an array or NDJSON file, in the field `records`.
    Records,
    /// A list where protobuf has no repeated field for it, in the field `items`.
    List,
    /// A map where protobuf has no map field for it, in the field `entries`.
    Map,
    /// One value that may be null (absent `value`), or a document that is not a record.
    Boxed,
    /// One entry of a map written as a list of entries (`key`, `value`), which is how protobuf
    /// puts a map on the wire: see [`Plan::with_maps_as_entries`].
    Entry,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProtoField {
    pub name: String,
    pub number: u32,
    pub label: Label,
    pub ty: ProtoType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// Always present in the data (a scalar equal to its default is not written).
    Plain,
    /// `optional`: absent for null or missing.
    Optional,
    Repeated,
    /// `map<string, ty>`.
    Map,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtoType {
    Int64,
    Double,
    String,
    Bool,
    Message(String),
}

impl ProtoType {
    fn proto_name(&self) -> &str {
        match self {
            ProtoType::Int64 => "int64",
            ProtoType::Double => "double",
            ProtoType::String => "string",
            ProtoType::Bool => "bool",
            ProtoType::Message(name) => name,
        }
    }
}

impl Plan {
    /// The plan of `payload`; an error names a path protobuf cannot carry.
    pub fn of(payload: &DataPayload) -> Result<Plan> {
        Planner::default().plan(&payload.schema, payload.is_list())
    }

    /// The plan of the generated types of a typed schema (`--typed`): each record's message and
    /// fields are named as its generated struct and fields in `structs` (by schema path), which
    /// are names protobuf can spell; the wire has numbers, not names, so the bytes do not change.
    /// With `structs` empty it only checks that protobuf can carry the schema.
    pub fn typed(schema: &Schema, list: bool, structs: &BTreeMap<String, TypedRecord>) -> Result<Plan> {
        let mut planner = Planner {
            structs: Some(structs),
            ..Planner::default()
        };
        // The wrappers' names must not take a struct's (none is `Records`, which Rust reserves).
        for record in structs.values() {
            planner.names.unique(&record.name);
        }
        planner.plan(schema, list)
    }

    /// The same messages with every map field declared as a repeated field of entry messages
    /// (`key = 1`, `value = 2`), which protobuf defines as its map's wire format: the same bytes
    /// for the same entries, in the order the list gives (a map's order is its library's).
    pub fn with_maps_as_entries(&self) -> Plan {
        let mut names = Names::default();
        for message in &self.messages {
            names.unique(&message.name);
        }
        let mut messages = self.messages.clone();
        let mut entries = Vec::new();
        for message in &mut messages {
            for field in &mut message.fields {
                if field.label != Label::Map {
                    continue;
                }
                let name = names.unique(&format!("{}_{}_entry", message.name, field.name));
                entries.push(Message {
                    name: name.clone(),
                    role: Role::Entry,
                    fields: vec![
                        ProtoField {
                            name: "key".into(),
                            number: 1,
                            label: Label::Plain,
                            ty: ProtoType::String,
                        },
                        ProtoField {
                            name: "value".into(),
                            number: 2,
                            label: Label::Plain,
                            ty: field.ty.clone(),
                        },
                    ],
                });
                field.label = Label::Repeated;
                field.ty = ProtoType::Message(name);
            }
        }
        messages.extend(entries);
        Plan { messages }
    }

    /// The top-level message.
    pub fn root(&self) -> &Message {
        &self.messages[0]
    }

    pub fn message(&self, name: &str) -> Option<&Message> {
        self.messages.iter().find(|message| message.name == name)
    }

    /// The `.proto` file, with a header saying where it comes from.
    pub fn text(&self, origin: &str) -> String {
        // A file name may hold a line break, which would end the comment.
        let origin = crate::escape::rust_comment(origin);
        let mut text = format!(
            "// The schema serbench inferred from {origin} (`serbench schema`). Wrapper messages\n\
             // carry the lists, maps and nulls protobuf has no field for (serbench's docs/your-data.md).\n\
             syntax = \"proto3\";\n\npackage {PACKAGE};\n"
        );
        for message in &self.messages {
            let _ = write!(text, "\nmessage {} {{\n", message.name);
            for field in &message.fields {
                let ty = field.ty.proto_name();
                let declaration = match field.label {
                    Label::Plain => format!("{ty} {}", field.name),
                    Label::Optional => format!("optional {ty} {}", field.name),
                    Label::Repeated => format!("repeated {ty} {}", field.name),
                    Label::Map => format!("map<string, {ty}> {}", field.name),
                };
                let _ = writeln!(text, "  {declaration} = {};", field.number);
            }
            text.push_str("}\n");
        }
        text
    }
}

/// Field numbers from 1 in key order, skipping the range protobuf reserves (19000-19999).
fn number(index: usize) -> u32 {
    let number = index as u32 + 1;
    if number >= 19_000 { number + 1_000 } else { number }
}

#[derive(Default)]
struct Planner<'a> {
    names: Names,
    messages: Vec<Message>,
    /// The generated structs, for a typed plan ([`Plan::typed`]).
    structs: Option<&'a BTreeMap<String, TypedRecord>>,
}

impl Planner<'_> {
    fn plan(mut self, schema: &Schema, list: bool) -> Result<Plan> {
        let record = &schema.record;
        let path = &mut String::from("$");
        if list {
            let index = self.reserve("Records", Role::Records);
            let element = self.element(record, "Record", path)?;
            self.messages[index].fields = vec![ProtoField {
                name: "records".into(),
                number: 1,
                label: Label::Repeated,
                ty: element,
            }];
        } else if let Kind::Record(_) = record.kind {
            self.record(record, "Document", path)?;
        } else {
            let index = self.reserve("Document", Role::Boxed);
            let value = self.field("value", 1, record, record.nullable(), "Value", path)?;
            self.messages[index].fields = vec![value];
        }
        Ok(Plan {
            messages: self.messages,
        })
    }

    /// Adds an empty message (filled in once its fields are planned, so parents come first).
    fn reserve(&mut self, hint: &str, role: Role) -> usize {
        let name = self.names.unique(hint);
        self.push(name, role)
    }

    /// Adds an empty message of a name already taken.
    fn push(&mut self, name: String, role: Role) -> usize {
        self.messages.push(Message {
            name,
            role,
            fields: Vec::new(),
        });
        self.messages.len() - 1
    }

    fn name(&self, index: usize) -> ProtoType {
        ProtoType::Message(self.messages[index].name.clone())
    }

    fn record(&mut self, ty: &Type, hint: &str, path: &mut String) -> Result<ProtoType> {
        let Kind::Record(fields) = &ty.kind else {
            unreachable!("called for records")
        };
        let named = self.structs.and_then(|structs| structs.get(path.as_str()));
        // A struct shared by several paths is one message.
        if let Some(named) = named
            && self.messages.iter().any(|message| message.name == named.name)
        {
            return Ok(ProtoType::Message(named.name.clone()));
        }
        let index = match named {
            Some(named) => self.push(named.name.clone(), Role::Record),
            None => self.reserve(hint, Role::Record),
        };
        let parent = path.len();
        let mut planned = Vec::new();
        for (position, field) in fields.iter().enumerate() {
            let name = named.map_or(&field.name, |named| &named.fields[position]);
            super::read::push_key(path, &field.name);
            // A typed plan without its structs only checks what protobuf can carry.
            if self.structs.is_none() && !is_field_name(&field.name) {
                bail!("{path}: {:?} is not a protobuf field name", field.name);
            }
            let optional = field.ty.nullable() || field.optional();
            planned.push(self.field(name, number(position), &field.ty, optional, &field.name, path)?);
            path.truncate(parent);
        }
        self.messages[index].fields = planned;
        Ok(self.name(index))
    }

    /// A field holding `ty`, which may be absent or null when `optional`.
    fn field(
        &mut self,
        name: &str,
        number: u32,
        ty: &Type,
        optional: bool,
        hint: &str,
        path: &mut String,
    ) -> Result<ProtoField> {
        let scalar_label = if optional { Label::Optional } else { Label::Plain };
        let (label, ty) = match &ty.kind {
            Kind::Union(_) => return Err(conflict(ty, path)),
            Kind::Null => (Label::Optional, ProtoType::Bool),
            Kind::Bool => (scalar_label, ProtoType::Bool),
            Kind::Int => (scalar_label, ProtoType::Int64),
            Kind::Float => (scalar_label, ProtoType::Double),
            Kind::String => (scalar_label, ProtoType::String),
            Kind::Record(_) => (Label::Plain, self.record(ty, hint, path)?),
            Kind::Array(item) if optional => (
                Label::Plain,
                self.wrapper(Role::List, item, &format!("{hint}List"), path)?,
            ),
            Kind::Map(value) if optional => (
                Label::Plain,
                self.wrapper(Role::Map, value, &format!("{hint}Map"), path)?,
            ),
            Kind::Array(item) => (
                Label::Repeated,
                self.element_below(item, "[]", &format!("{hint}Item"), path)?,
            ),
            Kind::Map(value) => (
                Label::Map,
                self.element_below(value, ".*", &format!("{hint}Value"), path)?,
            ),
        };
        Ok(ProtoField {
            name: name.to_string(),
            number,
            label,
            ty,
        })
    }

    fn element_below(&mut self, item: &Type, step: &str, hint: &str, path: &mut String) -> Result<ProtoType> {
        let parent = path.len();
        path.push_str(step);
        let element = self.element(item, hint, path);
        path.truncate(parent);
        element
    }

    /// The type of a repeated field's elements or a map's values.
    fn element(&mut self, item: &Type, hint: &str, path: &mut String) -> Result<ProtoType> {
        if item.nullable() {
            let index = self.reserve(hint, Role::Boxed);
            let value = self.field("value", 1, item, true, &format!("{hint}Value"), path)?;
            self.messages[index].fields = vec![value];
            return Ok(self.name(index));
        }
        Ok(match &item.kind {
            Kind::Union(_) => return Err(conflict(item, path)),
            // Elements never seen (the lists were always empty): any type reads them back.
            Kind::Null | Kind::Bool => ProtoType::Bool,
            Kind::Int => ProtoType::Int64,
            Kind::Float => ProtoType::Double,
            Kind::String => ProtoType::String,
            Kind::Record(_) => self.record(item, hint, path)?,
            Kind::Array(inner) => self.wrapper(Role::List, inner, &format!("{hint}List"), path)?,
            Kind::Map(inner) => self.wrapper(Role::Map, inner, &format!("{hint}Map"), path)?,
        })
    }

    /// A message holding one list (`items`) or map (`entries`) of `inner`.
    fn wrapper(&mut self, role: Role, inner: &Type, hint: &str, path: &mut String) -> Result<ProtoType> {
        let index = self.reserve(hint, role);
        let (name, label, step) = match role {
            Role::List => ("items", Label::Repeated, "[]"),
            Role::Map => ("entries", Label::Map, ".*"),
            _ => unreachable!("lists and maps only"),
        };
        let ty = self.element_below(inner, step, &format!("{hint}Item"), path)?;
        self.messages[index].fields = vec![ProtoField {
            name: name.into(),
            number: 1,
            label,
            ty,
        }];
        Ok(self.name(index))
    }
}

fn conflict(ty: &Type, path: &str) -> anyhow::Error {
    let kinds: Vec<&str> = match &ty.kind {
        Kind::Union(branches) => branches.iter().map(|branch| branch.kind.name()).collect(),
        other => vec![other.name()],
    };
    anyhow::anyhow!(
        "{path}: values of several kinds ({}); a proto3 field has one type",
        kinds.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{Request, load};

    fn plan(text: &str) -> Result<Plan> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, text).unwrap();
        let payload = load(&Request {
            sources: vec![path.display().to_string()],
            ..Request::default()
        })
        .unwrap()[0];
        Plan::of(payload)
    }

    #[test]
    fn records_lists_maps_and_nulls_become_messages_and_fields() {
        let plan = plan(
            r#"{"id": 1, "name": "a", "tags": ["x"], "grid": [[1.5]], "m": {"1": [null, 2]}, "sub": {"a": 1}, "opt": [1]}
               {"id": 2, "name": null, "tags": [], "grid": [], "m": {}, "sub": {"a": 2}}"#,
        )
        .unwrap();
        let text = plan.text("t.json");
        let expected = "\
message Records {
  repeated Record records = 1;
}

message Record {
  repeated GridItemList grid = 1;
  int64 id = 2;
  map<string, MValueList> m = 3;
  optional string name = 4;
  OptList opt = 5;
  Sub sub = 6;
  repeated string tags = 7;
}

message GridItemList {
  repeated double items = 1;
}

message MValueList {
  repeated MValueListItem items = 1;
}

message MValueListItem {
  optional int64 value = 1;
}

message OptList {
  repeated int64 items = 1;
}

message Sub {
  int64 a = 1;
}
";
        assert!(text.ends_with(expected), "{text}");
        assert!(text.contains("syntax = \"proto3\";\n\npackage serbench.data;\n"));
        assert_eq!(plan.root().role, Role::Records);
        assert_eq!(plan.message("OptList").unwrap().role, Role::List);
        assert_eq!(plan.message("MValueListItem").unwrap().role, Role::Boxed);
    }

    #[test]
    fn a_conflict_is_an_error_naming_its_path() {
        let error = plan(r#"[{"a": {"v": 1}}, {"a": {"v": "x"}}]"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "$.a.v: values of several kinds (int, string); a proto3 field has one type"
        );
    }

    #[test]
    fn a_document_that_is_not_a_record_is_boxed() {
        let plan = plan(r#"{"1": 2}"#).unwrap();
        assert_eq!(plan.root().role, Role::Boxed);
        assert!(
            plan.text("t")
                .contains("message Document {\n  map<string, int64> value = 1;\n}")
        );
    }
}

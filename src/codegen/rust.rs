//! The Rust types of one data payload, from its inferred schema: a struct per record path with
//! serde's derives and those of every format carried, and the payload's root type (a list's
//! `Records` batch, or the `Document`).
//!
//! Types, by the schema's kinds: `bool`, `i64`, `f64`, `String`, `Vec<T>`, `BTreeMap<String, T>`
//! (serbench's maps are sorted, so every format writes the same keys in the same order) and a
//! struct per record. A field some records lack, or that is null in some, is an `Option`; so is
//! a path that only ever held null (`Option<String>`, always `None`). Fields keep the schema's
//! order, the keys sorted, as serde_json's dynamic tree writes them.
//!
//! Every struct also gets the folds the zero-copy formats' access arms are proven against
//! ([`crate::payload::fields::FieldValue`] states the rule), and the root type the scalar its
//! `update` arms change ([`crate::payload::data::update_target`]), where the data has one. A
//! struct that holds a string gets a borrowed twin (`RecordRef<'a>`: `&'a str` for `String`,
//! `&'a str` map keys) with the derives of the formats that decode borrowing, and the root its
//! `Borrowed` impl: the borrowed mode on the user's data.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::names::{self, Scope};
use crate::escape::{rust_comment, rust_str};
use crate::payload::data::read::push_key;
use crate::payload::data::{DataPayload, Kind, Type, TypedRecord, UpdateTarget, shape_key, update_target};
use serde_json::Value;

/// The names no record type may take (the root record takes `Record` or `Document` first): those
/// the generated module itself uses, and every name of Rust 2024's prelude, which derive macros
/// (bitcode's, rkyv's, Fory's) write unqualified, so a struct `Clone` or `Sized` would break
/// them. Nor may a type take a name that flatc's code (where each struct's FlatBuffers table is
/// named as the struct) uses unqualified: its allocator parameter `A`.
pub const RESERVED: &[&str] = &[
    "Records",
    "BTreeMap",
    "OnceLock",
    "A",
    // std::prelude::rust_2024
    "Copy",
    "Send",
    "Sized",
    "Sync",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "ToOwned",
    "Clone",
    "PartialEq",
    "PartialOrd",
    "Eq",
    "Ord",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "Default",
    "Iterator",
    "Extend",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "ToString",
    "Vec",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "Future",
    "IntoFuture",
];

/// The derive lines and per-field attribute every struct gets (none: the default, for the
/// types' names and shapes alone).
#[derive(Default)]
pub struct Derives {
    /// `#[derive(...)]` lines, serde's first.
    pub lines: Vec<String>,
    /// Attributes on every field, `{index}` standing for its position.
    pub field_attributes: Vec<String>,
    /// The borrowed twins' derives, when a format carried decodes borrowing.
    pub borrowed: Option<BorrowedDerives>,
}

/// What the borrowed twin of a struct that holds strings gets (`RecordRef<'a>`, every `String`
/// a `&'a str` into the decoded bytes).
pub struct BorrowedDerives {
    /// `#[derive(...)]` lines beside `Debug` and serde's `Deserialize`.
    pub lines: Vec<String>,
    /// Attributes on a field that borrows, in place of [`Derives::field_attributes`] (minicbor's
    /// `b({index})`).
    pub field_attributes: Vec<String>,
}

/// The module of one data payload: its types, its root type's name.
pub struct Module {
    pub source: String,
    /// `Records` for a list of records, `Document` for one document.
    pub root: &'static str,
    /// Every struct and its fields, in the order they are written (the root last).
    pub structs: Vec<TypedRecord>,
    /// The struct of each record, by schema path.
    pub records: BTreeMap<String, TypedRecord>,
    /// The scalar the zero-copy formats' `update` arms change, or why there is none.
    pub update: Result<UpdateTarget, String>,
    /// The root has a borrowed twin (the data holds a string, and a format borrows).
    pub borrowed: bool,
}

/// The types of `data`. The schema has no conflict ([`super::plan`] refuses those first).
pub fn module(data: &DataPayload, derives: &Derives) -> Module {
    let mut generator = Generator {
        derives,
        types: Scope::types(RESERVED),
        structs: Vec::new(),
        names: Vec::new(),
        path: String::from("$"),
        records: BTreeMap::new(),
        shapes: BTreeMap::new(),
        borrowing: BTreeSet::new(),
    };
    let root = if data.is_list() { "Records" } else { "Document" };
    let mut source = String::new();
    let record = &data.typed_schema.record;
    let record_name = if data.is_list() { "Record" } else { "Document" };
    let root_type = match &record.kind {
        Kind::Record(_) => generator.record(record, record_name.to_string()),
        _ => {
            // A list of scalars or arrays, or a document that is not an object: one field.
            let name = generator.types.claim(record_name.to_string());
            let inner = generator.rust_type(record, "Value");
            generator.struct_of(
                name.clone(),
                vec![Member::new("value", inner)],
                Shape::Transparent,
            );
            name
        }
    };
    if data.is_list() {
        let records = RustType::List(Box::new(RustType::Struct(root_type.clone())));
        generator.struct_of(
            "Records".to_string(),
            vec![Member::new("records", records)],
            Shape::Batch,
        );
        writeln!(
            source,
            "impl serbench::payload::Batch for Records {{\n    type Record = {root_type};\n\n    fn records(&self) -> &[{root_type}] {{\n        &self.records\n    }}\n\n    fn from_records(records: Vec<{root_type}>) -> Self {{\n        Records {{ records }}\n    }}\n}}\n"
        )
        .expect("a String takes writes");
    } else {
        writeln!(
            source,
            "/// One document: a batch of itself, so the batch framings see it (they are registered only\n/// for lists).\nimpl serbench::payload::Batch for Document {{\n    type Record = Document;\n\n    fn records(&self) -> &[Document] {{\n        std::slice::from_ref(self)\n    }}\n\n    fn from_records(records: Vec<Document>) -> Self {{\n        records.into_iter().next().unwrap_or_default()\n    }}\n}}\n"
        )
        .expect("a String takes writes");
    }
    let update = update_target(record, &generator.records);
    if let Ok(target) = &update {
        source.push_str(&update_impl(root, data.is_list(), target));
    }
    // The proof of a borrowed decode needs a string to point into the bytes: a twin's type may
    // hold one (an always-null field's `Option<String>`, say) while the data has none.
    let borrowed = generator.borrowing.contains(root)
        && (data.records.iter()).any(|value| holds_borrowable(&data.typed_schema.record, value));
    if borrowed {
        writeln!(
            source,
            "/// The borrowed mode's twin: every string a `&str` into the decoded bytes.\nimpl serbench::payload::Borrowed for {root} {{\n    type Ref<'a> = {root}Ref<'a>;\n\n    fn to_owned_model(value: &{root}Ref<'_>) -> {root} {{\n        serbench::payload::BorrowedValue::to_owned_value(value)\n    }}\n\n    fn strings<'s>(value: &'s {root}Ref<'_>) -> Vec<&'s str> {{\n        let mut strings = Vec::new();\n        serbench::payload::BorrowedValue::strings(value, &mut strings);\n        strings\n    }}\n}}\n"
        )
        .expect("a String takes writes");
    }
    let mut text = generator.structs.join("\n");
    text.push('\n');
    text.push_str(&source);
    Module {
        source: text,
        root,
        structs: generator.names,
        records: generator.records,
        update,
        borrowed,
    }
}

/// The root type's `UpdateField`: the target in the document, or in a list's first record.
fn update_impl(root: &str, list: bool, target: &UpdateTarget) -> String {
    let place = format!(
        "{}.{}",
        if list { "self.records[0]" } else { "self" },
        target.fields.join(".")
    );
    let updated = place.replacen("self", "updated", 1);
    let scalar = target.scalar;
    format!(
        "/// `update` changes `{path}`{of}.\nimpl serbench::payload::fields::UpdateField for {root} {{\n    type Scalar = {scalar};\n\n    fn field(&self) -> {scalar} {{\n        {place}\n    }}\n\n    fn value_for_round(&self, round: u64) -> {scalar} {{\n        serbench::payload::fields::alternate(self.field(), round)\n    }}\n\n    fn with_field(&self, value: {scalar}) -> Self {{\n        let mut updated = self.clone();\n        {updated} = value;\n        updated\n    }}\n}}\n",
        path = rust_comment(&target.path),
        of = if list { " of the first record" } else { "" },
    )
}

/// Whether `value`, of type `ty`, holds what a borrowed twin points into the bytes for: a
/// non-empty string, or a non-empty key of a map.
fn holds_borrowable(ty: &Type, value: &Value) -> bool {
    match (&ty.kind, value) {
        (Kind::String, Value::String(text)) => !text.is_empty(),
        (Kind::Array(item), Value::Array(values)) => values.iter().any(|value| holds_borrowable(item, value)),
        (Kind::Map(item), Value::Object(entries)) => {
            (entries.iter()).any(|(key, value)| !key.is_empty() || holds_borrowable(item, value))
        }
        (Kind::Record(fields), Value::Object(entries)) => fields
            .iter()
            .any(|field| (entries.get(&field.name)).is_some_and(|value| holds_borrowable(&field.ty, value))),
        _ => false,
    }
}

struct Generator<'a> {
    derives: &'a Derives,
    types: Scope,
    structs: Vec<String>,
    /// The name and fields of each of `structs`.
    names: Vec<TypedRecord>,
    /// The schema path of the value being generated (`$`, `$.user`, `$.items[]`), as the schema
    /// writers spell it.
    path: String,
    records: BTreeMap<String, TypedRecord>,
    /// The struct of each record shape ([`shape_key`]): records of one shape at several paths
    /// ([`crate::payload::data::schema::unify_records`]) are one struct.
    shapes: BTreeMap<String, String>,
    /// The structs that hold a string, so have a borrowed twin.
    borrowing: BTreeSet<String>,
}

/// A generated field's Rust type, written owned or borrowed.
#[derive(Clone, Debug)]
enum RustType {
    Bool,
    Int,
    Float,
    Text,
    List(Box<RustType>),
    Map(Box<RustType>),
    Optional(Box<RustType>),
    Struct(String),
}

impl RustType {
    fn owned(&self) -> String {
        match self {
            RustType::Bool => "bool".to_string(),
            RustType::Int => "i64".to_string(),
            RustType::Float => "f64".to_string(),
            RustType::Text => "String".to_string(),
            RustType::List(item) => format!("Vec<{}>", item.owned()),
            RustType::Map(value) => format!("BTreeMap<String, {}>", value.owned()),
            RustType::Optional(value) => format!("Option<{}>", value.owned()),
            RustType::Struct(name) => name.clone(),
        }
    }

    /// The type in a borrowed twin: `&'a str` for `String`, the twin of a struct that borrows.
    fn borrowed(&self, borrowing: &BTreeSet<String>) -> String {
        match self {
            RustType::Text => "&'a str".to_string(),
            RustType::List(item) => format!("Vec<{}>", item.borrowed(borrowing)),
            RustType::Map(value) => format!("BTreeMap<&'a str, {}>", value.borrowed(borrowing)),
            RustType::Optional(value) => format!("Option<{}>", value.borrowed(borrowing)),
            RustType::Struct(name) if borrowing.contains(name) => format!("{name}Ref<'a>"),
            other => other.owned(),
        }
    }

    fn borrows(&self, borrowing: &BTreeSet<String>) -> bool {
        match self {
            RustType::Text | RustType::Map(_) => true,
            RustType::List(inner) | RustType::Optional(inner) => inner.borrows(borrowing),
            RustType::Struct(name) => borrowing.contains(name),
            RustType::Bool | RustType::Int | RustType::Float => false,
        }
    }
}

/// One field of a generated struct.
struct Member {
    ident: String,
    ty: RustType,
    /// The key, where it differs from the field's name.
    rename: Option<String>,
}

impl Member {
    fn new(ident: &str, ty: RustType) -> Member {
        Member {
            ident: ident.to_string(),
            ty,
            rename: None,
        }
    }
}

/// What a generated struct is: a record, the wrapper of a value that is not one (serde sees the
/// value itself, as the file holds it), or a list's batch (its route is its first record's).
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Record,
    Transparent,
    Batch,
}

impl Generator<'_> {
    /// The struct of a record type named (before uniqueness) `name`, or the struct already
    /// written for its shape; returns its name. Either way the paths below this one are named.
    fn record(&mut self, ty: &Type, name: String) -> String {
        let Kind::Record(fields) = &ty.kind else {
            unreachable!("record() is called on records")
        };
        let shape = shape_key(ty);
        let written = self.shapes.get(&shape).cloned();
        let name = match &written {
            Some(name) => name.clone(),
            None => {
                let name = self.types.claim(name);
                self.shapes.insert(shape, name.clone());
                name
            }
        };
        let mut scope = Scope::fields();
        let parent = self.path.len();
        let members: Vec<Member> = fields
            .iter()
            .map(|field| {
                let ident = scope.claim(names::field(&field.name));
                push_key(&mut self.path, &field.name);
                let mut rust = self.rust_type(&field.ty, &field.name);
                self.path.truncate(parent);
                if field.optional() && !matches!(rust, RustType::Optional(_)) {
                    rust = RustType::Optional(Box::new(rust));
                }
                let rename = (ident != field.name).then(|| field.name.clone());
                Member {
                    ident,
                    ty: rust,
                    rename,
                }
            })
            .collect();
        let record = TypedRecord {
            name: name.clone(),
            fields: members.iter().map(|member| member.ident.clone()).collect(),
        };
        self.records.insert(self.path.clone(), record);
        if written.is_none() {
            self.struct_of(name.clone(), members, Shape::Record);
        }
        name
    }

    /// [`Self::rust_type`] of the values one `step` (`[]`, `.*`) below the current path.
    fn below(&mut self, step: &str, ty: &Type, key: &str) -> RustType {
        let parent = self.path.len();
        self.path.push_str(step);
        let rust = self.rust_type(ty, key);
        self.path.truncate(parent);
        rust
    }

    /// The Rust type of the values of `ty`, a record among them named after `key`.
    fn rust_type(&mut self, ty: &Type, key: &str) -> RustType {
        let inner = match &ty.kind {
            Kind::Null => return RustType::Optional(Box::new(RustType::Text)),
            Kind::Bool => RustType::Bool,
            Kind::Int => RustType::Int,
            Kind::Float => RustType::Float,
            Kind::String => RustType::Text,
            Kind::Array(item) => RustType::List(Box::new(self.below("[]", item, key))),
            Kind::Map(value) => RustType::Map(Box::new(self.below(".*", value, key))),
            Kind::Record(_) => RustType::Struct(self.record(ty, names::type_name(key))),
            Kind::Union(_) => unreachable!("plan() refuses conflicts before anything is generated"),
        };
        if ty.nullable() {
            RustType::Optional(Box::new(inner))
        } else {
            inner
        }
    }

    /// Writes one struct, its folds, and its borrowed twin (or, holding no string, its own).
    fn struct_of(&mut self, name: String, members: Vec<Member>, shape: Shape) {
        let mut text = String::new();
        for line in &self.derives.lines {
            text.push_str(line);
            text.push('\n');
        }
        let fields: Vec<(String, String)> = members
            .iter()
            .map(|member| (member.ident.clone(), member.ty.owned()))
            .collect();
        text.push_str(&self.struct_text(&name, &members, shape, &fields, |_| {
            self.derives.field_attributes.clone()
        }));
        let idents: Vec<&str> = members.iter().map(|member| member.ident.as_str()).collect();
        text.push_str(&folds(&name, &idents, shape));
        if let Some(borrowed) = &self.derives.borrowed {
            text.push('\n');
            text.push_str(&self.twin(&name, &members, shape, borrowed));
        }
        self.structs.push(text);
        self.names.push(TypedRecord {
            name,
            fields: members.into_iter().map(|member| member.ident).collect(),
        });
    }

    /// `pub struct name { fields }` with each field's key and attributes; `attributes` gives a
    /// field's attributes by its position.
    fn struct_text(
        &self,
        name: &str,
        members: &[Member],
        shape: Shape,
        fields: &[(String, String)],
        attributes: impl Fn(usize) -> Vec<String>,
    ) -> String {
        let mut text = String::new();
        if shape == Shape::Transparent {
            text.push_str("#[serde(transparent)]\n");
        }
        writeln!(text, "pub struct {name} {{").expect("a String takes writes");
        for (index, (member, (ident, rust))) in members.iter().zip(fields).enumerate() {
            if let Some(key) = &member.rename {
                writeln!(text, "    /// The key {}.", rust_str(key)).expect("a String takes writes");
                writeln!(text, "    #[serde(rename = {})]", rust_str(key)).expect("a String takes writes");
            }
            for attribute in attributes(index) {
                let attribute = attribute.replace("{index}", &index.to_string());
                writeln!(text, "    #[{attribute}]").expect("a String takes writes");
            }
            writeln!(text, "    pub {ident}: {rust},").expect("a String takes writes");
        }
        text.push_str("}\n");
        text
    }

    /// The borrowed twin `{name}Ref<'a>` of a struct that holds a string, with the
    /// [`crate::payload::BorrowedValue`] impl that makes it owned; a struct without strings is its
    /// own twin.
    fn twin(&mut self, name: &str, members: &[Member], shape: Shape, derives: &BorrowedDerives) -> String {
        let value = "serbench::payload::BorrowedValue";
        if !members.iter().any(|member| member.ty.borrows(&self.borrowing)) {
            return format!(
                "impl {value} for {name} {{\n    type Owned = {name};\n\n    fn to_owned_value(&self) -> {name} {{\n        self.clone()\n    }}\n\n    fn strings<'s>(&'s self, _: &mut Vec<&'s str>) {{}}\n}}\n"
            );
        }
        let mut text = String::from("#[derive(Debug, serde::Deserialize)]\n");
        for line in &derives.lines {
            text.push_str(line);
            text.push('\n');
        }
        let fields: Vec<(String, String)> = members
            .iter()
            .map(|member| (member.ident.clone(), member.ty.borrowed(&self.borrowing)))
            .collect();
        let borrows: Vec<bool> = members
            .iter()
            .map(|member| member.ty.borrows(&self.borrowing))
            .collect();
        let twin = format!("{name}Ref<'a>");
        text.push_str(&self.struct_text(&twin, members, shape, &fields, |index| {
            if !borrows[index] {
                return self.derives.field_attributes.clone();
            }
            // serde borrows a bare `&str` by itself; anything around one needs `borrow`.
            let mut attributes = derives.field_attributes.clone();
            if !matches!(members[index].ty, RustType::Text) {
                attributes.insert(0, "serde(borrow)".to_string());
            }
            attributes
        }));
        let each = |body: &dyn Fn(&str) -> String| -> String {
            members.iter().map(|member| body(&member.ident)).collect()
        };
        write!(
            text,
            "\nimpl {value} for {name}Ref<'_> {{\n    type Owned = {name};\n\n    fn to_owned_value(&self) -> {name} {{\n        {name} {{\n{owned}        }}\n    }}\n\n    fn strings<'s>(&'s self, strings: &mut Vec<&'s str>) {{\n{strings}    }}\n}}\n",
            owned = each(&|field| format!("            {field}: {value}::to_owned_value(&self.{field}),\n")),
            strings = each(&|field| format!("        {value}::strings(&self.{field}, strings);\n")),
        )
        .expect("a String takes writes");
        self.borrowing.insert(name.to_string());
        text
    }
}

/// The struct's folds ([`serbench::payload::fields::FieldValue`]'s rule): whole, every field in
/// order; as a payload's route, every field's envelope (a list's batch: its count and its first
/// record's route); as a field of another record, no envelope.
fn folds(name: &str, fields: &[&str], shape: Shape) -> String {
    let each = |method: &str| -> String {
        fields
            .iter()
            .map(|field| {
                format!("        serbench::payload::fields::FieldValue::{method}(&self.{field}, digest);\n")
            })
            .collect()
    };
    let route = if shape == Shape::Batch {
        "        digest.count(self.records.len());\n        if let Some(first) = self.records.first() {\n            serbench::payload::fields::Fields::fold_route(first, digest);\n        }\n".to_string()
    } else {
        each("fold_envelope")
    };
    format!(
        "impl serbench::payload::fields::FieldValue for {name} {{\n    fn fold(&self, digest: &mut serbench::payload::fields::Digest) {{\n{all}    }}\n\n    fn fold_envelope(&self, _: &mut serbench::payload::fields::Digest) {{}}\n}}\n\nimpl serbench::payload::fields::Fields for {name} {{\n    fn fold_all(&self, digest: &mut serbench::payload::fields::Digest) {{\n        serbench::payload::fields::FieldValue::fold(self, digest);\n    }}\n\n    fn fold_route(&self, digest: &mut serbench::payload::fields::Digest) {{\n{route}    }}\n}}\n",
        all = each("fold"),
    )
}

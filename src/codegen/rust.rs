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
//! `update` arms change ([`crate::payload::data::update_target`]), where the data has one.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::names::{self, Scope};
use crate::payload::data::read::push_key;
use crate::payload::data::{DataPayload, Kind, Type, TypedRecord, UpdateTarget, update_target};

/// The names the generated module itself uses: no record type may take them (the root record
/// takes `Record` or `Document` first). Nor may it take a name that flatc's code (where each
/// struct's FlatBuffers table is named as the struct) uses unqualified: its allocator parameter
/// `A`, `Result`, `Default`.
pub const RESERVED: [&str; 9] = [
    "Records", "BTreeMap", "String", "Vec", "Option", "OnceLock", "A", "Result", "Default",
];

/// The derive lines and per-field attribute every struct gets.
pub struct Derives {
    /// `#[derive(...)]` lines, serde's first.
    pub lines: Vec<String>,
    /// Attributes on every field, `{index}` standing for its position.
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
}

/// The types of `data`. The schema has no conflict ([`super::plan`] refuses those first).
pub fn module(data: &DataPayload, derives: &Derives) -> Module {
    let mut generator = Generator {
        derives,
        types: Scope::types(&RESERVED),
        structs: Vec::new(),
        names: Vec::new(),
        path: String::from("$"),
        records: BTreeMap::new(),
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
            generator.struct_of(name.clone(), vec![("value".to_string(), inner, None)]);
            // serde sees the value itself, as the file holds it.
            let text = generator.structs.last_mut().expect("just written");
            *text = text.replacen("pub struct", "#[serde(transparent)]\npub struct", 1);
            name
        }
    };
    if data.is_list() {
        let records = format!("Vec<{root_type}>");
        generator.struct_of(
            "Records".to_string(),
            vec![("records".to_string(), records, None)],
        );
        // Replaces struct_of's record fold: a list's route is its count and first record's.
        let folds = generator.structs.last_mut().expect("just written");
        let cut = folds
            .find("impl serbench::payload::fields::FieldValue")
            .expect("struct_of writes folds");
        folds.truncate(cut);
        folds.push_str(
            "impl serbench::payload::fields::Fields for Records {\n    fn fold_all(&self, digest: &mut serbench::payload::fields::Digest) {\n        serbench::payload::fields::FieldValue::fold(&self.records, digest);\n    }\n\n    fn fold_route(&self, digest: &mut serbench::payload::fields::Digest) {\n        digest.count(self.records.len());\n        if let Some(first) = self.records.first() {\n            serbench::payload::fields::Fields::fold_route(first, digest);\n        }\n    }\n}\n",
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
    let mut text = generator.structs.join("\n");
    text.push('\n');
    text.push_str(&source);
    Module {
        source: text,
        root,
        structs: generator.names,
        records: generator.records,
        update,
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
        path = target.path,
        of = if list { " of the first record" } else { "" },
    )
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
}

impl Generator<'_> {
    /// The struct of a record type named (before uniqueness) `name`; returns its name.
    fn record(&mut self, ty: &Type, name: String) -> String {
        let Kind::Record(fields) = &ty.kind else {
            unreachable!("record() is called on records")
        };
        let name = self.types.claim(name);
        let mut scope = Scope::fields();
        let parent = self.path.len();
        let members: Vec<(String, String, Option<String>)> = fields
            .iter()
            .map(|field| {
                let ident = scope.claim(names::field(&field.name));
                push_key(&mut self.path, &field.name);
                let mut rust = self.rust_type(&field.ty, &field.name);
                self.path.truncate(parent);
                if field.optional_in(ty) && !rust.starts_with("Option<") {
                    rust = format!("Option<{rust}>");
                }
                let rename = (ident != field.name).then(|| field.name.clone());
                (ident, rust, rename)
            })
            .collect();
        let record = TypedRecord {
            name: name.clone(),
            fields: members.iter().map(|(ident, ..)| ident.clone()).collect(),
        };
        self.records.insert(self.path.clone(), record);
        self.struct_of(name.clone(), members);
        name
    }

    /// [`Self::rust_type`] of the values one `step` (`[]`, `.*`) below the current path.
    fn below(&mut self, step: &str, ty: &Type, key: &str) -> String {
        let parent = self.path.len();
        self.path.push_str(step);
        let rust = self.rust_type(ty, key);
        self.path.truncate(parent);
        rust
    }

    /// The Rust type of the values of `ty`, a record among them named after `key`.
    fn rust_type(&mut self, ty: &Type, key: &str) -> String {
        let inner = match &ty.kind {
            Kind::Null => return "Option<String>".to_string(),
            Kind::Bool => "bool".to_string(),
            Kind::Int => "i64".to_string(),
            Kind::Float => "f64".to_string(),
            Kind::String => "String".to_string(),
            Kind::Array(item) => format!("Vec<{}>", self.below("[]", item, key)),
            Kind::Map(value) => format!("BTreeMap<String, {}>", self.below(".*", value, key)),
            Kind::Record(_) => self.record(ty, names::type_name(key)),
            Kind::Union(_) => unreachable!("plan() refuses conflicts before anything is generated"),
        };
        if ty.nullable() {
            format!("Option<{inner}>")
        } else {
            inner
        }
    }

    /// Writes one struct: `(field, type, the key when it differs from the field)`.
    fn struct_of(&mut self, name: String, members: Vec<(String, String, Option<String>)>) {
        let mut text = String::new();
        for line in &self.derives.lines {
            text.push_str(line);
            text.push('\n');
        }
        writeln!(text, "pub struct {name} {{").expect("a String takes writes");
        for (index, (ident, rust, rename)) in members.iter().enumerate() {
            if let Some(key) = rename {
                writeln!(text, "    /// The key {key:?}.").expect("a String takes writes");
                writeln!(text, "    #[serde(rename = {key:?})]").expect("a String takes writes");
            }
            for attribute in &self.derives.field_attributes {
                let attribute = attribute.replace("{index}", &index.to_string());
                writeln!(text, "    #[{attribute}]").expect("a String takes writes");
            }
            writeln!(text, "    pub {ident}: {rust},").expect("a String takes writes");
        }
        text.push_str("}\n");
        text.push_str(&folds(&name, members.iter().map(|(ident, ..)| ident.as_str())));
        self.structs.push(text);
        self.names.push(TypedRecord {
            name,
            fields: members.into_iter().map(|(ident, ..)| ident).collect(),
        });
    }
}

/// The struct's folds ([`serbench::payload::fields::FieldValue`]'s rule): whole, every field in
/// order; as a payload's route, every field's envelope; as a field of another record, no envelope.
fn folds<'a>(name: &str, fields: impl Iterator<Item = &'a str> + Clone) -> String {
    let each = |method: &str| -> String {
        fields
            .clone()
            .map(|field| {
                format!("        serbench::payload::fields::FieldValue::{method}(&self.{field}, digest);\n")
            })
            .collect()
    };
    format!(
        "impl serbench::payload::fields::FieldValue for {name} {{\n    fn fold(&self, digest: &mut serbench::payload::fields::Digest) {{\n{all}    }}\n\n    fn fold_envelope(&self, _: &mut serbench::payload::fields::Digest) {{}}\n}}\n\nimpl serbench::payload::fields::Fields for {name} {{\n    fn fold_all(&self, digest: &mut serbench::payload::fields::Digest) {{\n        serbench::payload::fields::FieldValue::fold(self, digest);\n    }}\n\n    fn fold_route(&self, digest: &mut serbench::payload::fields::Digest) {{\n{route}    }}\n}}\n",
        all = each("fold"),
        route = each("fold_envelope"),
    )
}

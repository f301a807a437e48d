//! FlatBuffers for typed data (`--typed`): the generated crate's `fbs/data_<index>.fbs` per data
//! payload ([`Plan`]), a build step running `flatc --rust` on it, and each generated struct's
//! [`super::TableModel`] (build, `From` its table, the in-place fold of
//! [`crate::payload::fields::FieldValue`]'s rule) and [`super::Native`] (the route).
//!
//! The schema: one table per generated struct, named as the struct and its fields; integers
//! `long`, floats `double`; an optional or nullable scalar `= null` (flatc's `Option`), an
//! optional string, table or vector an absent field, every other non-scalar `(required)`, so the
//! verifier enforces it. A vector holds no vector and no null: a list of lists, of maps or of
//! nullable values is a vector of one-field wrapper tables. A map is a vector of
//! `{key: string (key); value}` entry tables sorted by key, as the built-in schemas have it. A
//! table whose float is -0.0 is written with its defaults ([`super::has_negative_zero`]).
//!
//! Names: flatc keeps a field's name as its Rust name but appends `_` to the words of its keyword
//! list (Rust's keywords, which the generated names never are, and `std`, `u8`, `follow`, ...):
//! [`field_ident`] does the same. `create` and `init_from_table` would meet the table's own
//! functions, and `into` and `try_into` every value's methods, so their `.fbs` field is `create_`
//! ([`fbs_field`]). Neither rule makes two fields
//! meet: a generated name ends in `_` only after one of Rust's keywords. Tables keep the struct's
//! name: codegen gives no struct a name flatc's code makes or uses ([`crate::codegen::names`]).
//!
//! Refused ([`refuses`]): a record that is null in the file; more than 64 nested tables (the
//! verifier's default depth: 64 verify, 65 do not; one is counted for a list's batch, which a
//! single document does not have); a table too wide for 16-bit offsets; a flatc missing from PATH
//! or not of the flatbuffers crate's version. And, for the data rather than its schema, a buffer
//! of more than 1,000,000 tables, the verifier's default limit ([`too_many_tables`], checked when
//! the arms are registered: exactly 1,000,000 verify).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::codegen::names::{self, Scope};
use crate::escape::rust_comment;
use crate::format::{BuildStep, TypedItems, TypedModule};
use crate::payload::data::read::push_key;
use serde_json::Value;

use crate::payload::data::{DataPayload, Kind, Schema, Type, TypedRecord};

/// The FlatBuffers verifier's default nesting limit (`VerifierOptions::max_depth`): tables
/// inside tables, the root's included (vectors do not count).
const MAX_DEPTH: usize = 64;

/// A table's inline data and its vtable are addressed by 16-bit offsets.
const MAX_TABLE_BYTES: usize = 0xFFFF;

/// Field names flatc's Rust generator escapes with a trailing `_` (`RustKeywords()` in
/// idl_gen_rust.cpp of flatc 25.12.19, checked against its output): Rust 2015's keywords and
/// reserved words (not `async`, `dyn`, `try`, ..., which the generated names escape themselves)
/// and its primitive types; [`FLATC_TERMS`] are the rest of the list.
const FLATC_KEYWORDS: [&str; 67] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "Self", "self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
    "alignof", "become", "box", "do", "final", "macro", "offsetof", "override", "priv", "proc", "pure",
    "sizeof", "typeof", "unsized", "virtual", "yield", "std", "usize", "isize", "u8", "i8", "u16", "i16",
    "u32", "i32", "u64", "i64", "u128", "i128", "f32", "f64",
];

/// The rest of flatc's list: the names its own code uses (the upper-case ones, which no generated
/// field spells, left out).
const FLATC_TERMS: [&str; 4] = ["follow", "push", "to_little_endian", "from_little_endian"];

/// Field names flatc keeps but that are the names of a table's own associated functions, or of
/// methods every value has by value (`Into::into`, `TryInto::try_into`), which the generated
/// code's `table.into()` would call before it reached flatc's accessor taking `&self`.
const TABLE_FUNCTIONS: [&str; 4] = ["create", "init_from_table", "into", "try_into"];

/// The type names flatc's code uses unqualified in the module of the tables.
const FLATC_TYPES: [&str; 4] = ["A", "Result", "Default", "Option"];

/// What FlatBuffers cannot carry of a typed schema, or why flatc cannot generate its code.
pub fn refuses(data: &DataPayload) -> Option<String> {
    schema_reason(&data.typed_schema).or_else(flatc_reason)
}

/// The schema's own reasons: a null record, nesting past the verifier's limit, a table too
/// wide for 16-bit offsets.
fn schema_reason(schema: &Schema) -> Option<String> {
    if matches!(schema.record.kind, Kind::Record(_)) && schema.record.nullable() {
        return Some("$: a record that is null in the file has no generated struct to hold it".to_string());
    }
    // Not knowing whether the data is a list, one table is kept for a list's batch.
    let plan = Plan::new(schema, true, &BTreeMap::new());
    plan.too_deep().or_else(|| plan.too_wide())
}

/// Why flatc cannot generate the crate's code: not on PATH, or not the version of the
/// flatbuffers crate its code is compiled against (asked once per process).
fn flatc_reason() -> Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON
        .get_or_init(|| {
            let version = std::process::Command::new("flatc")
                .arg("--version")
                .output()
                .map_err(|error| error.to_string())
                .and_then(|output| {
                    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
                    if output.status.success() {
                        Ok(text)
                    } else {
                        Err(format!("flatc --version failed ({})", output.status))
                    }
                });
            flatc_mismatch(
                version,
                crate::format::crate_version("flatbuffers").unwrap_or("?"),
            )
        })
        .clone()
}

/// The reason, if any, given what `flatc --version` printed and the flatbuffers crate's version.
fn flatc_mismatch(version: Result<String, String>, wanted: &str) -> Option<String> {
    match version {
        Err(error) => Some(format!(
            "flatc is not runnable ({error}): the generated crate's build runs flatc {wanted} (the flatbuffers crate's version) on its .fbs"
        )),
        Ok(found) if found == format!("flatc version {wanted}") => None,
        Ok(found) => Some(format!(
            "flatc on PATH says {found:?}: its Rust code must be of the flatbuffers crate's version, {wanted}"
        )),
    }
}

/// flatc's Rust name of the `.fbs` field `name`.
fn field_ident(name: &str) -> String {
    if FLATC_KEYWORDS.contains(&name) || FLATC_TERMS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The `.fbs` field of the struct field `rust`: its name, but for the table's own functions'.
fn fbs_field(rust: &str) -> String {
    if TABLE_FUNCTIONS.contains(&rust) {
        format!("{rust}_")
    } else {
        rust.to_string()
    }
}

/// How a value is held: the Rust type and its FlatBuffers form.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    /// `bool`.
    Bool,
    /// `i64`: `long`.
    Int,
    /// `f64`: `double`.
    Float,
    /// `String`: `string`.
    Text,
    /// A generated struct: its table, of the same name.
    Table(String),
    /// `Vec<T>`: a vector; around each element the wrapper table named here, where a vector
    /// cannot hold it (a list, a map, a nullable value).
    List(Box<Shape>, Option<String>),
    /// `BTreeMap<String, T>`: a vector of the entry table named here, sorted by key.
    Map(Box<Shape>, String),
    /// `Option<T>`: a `= null` scalar, or an absent field.
    Optional(Box<Shape>),
}

impl Shape {
    fn is_scalar(&self) -> bool {
        matches!(self, Shape::Bool | Shape::Int | Shape::Float)
    }

    /// The table a value of this shape points to, if any.
    fn child(&self) -> Option<&str> {
        match self {
            Shape::Table(name) | Shape::List(_, Some(name)) | Shape::Map(_, name) => Some(name),
            Shape::List(item, None) => item.child(),
            Shape::Optional(inner) => inner.child(),
            Shape::Bool | Shape::Int | Shape::Float | Shape::Text => None,
        }
    }

    /// Its bytes inside its table (a scalar, or an offset), the worst case of alignment aside.
    fn inline_bytes(&self) -> usize {
        match self {
            Shape::Bool => 1,
            Shape::Int | Shape::Float => 8,
            Shape::Optional(inner) => inner.inline_bytes(),
            _ => 4,
        }
    }
}

/// What a table stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The generated `Records`: the records of a list, in order.
    Batch,
    /// Any other generated struct: a record, or the one around a value that is not a record.
    Struct,
    /// The one field around an element a vector cannot hold.
    Wrapper,
    /// One entry of a map: `key`, `value`.
    Entry,
}

#[derive(Clone, Debug, PartialEq)]
struct Table {
    name: String,
    role: Role,
    /// The schema path of the value it holds (`$.items[]`; a map's own for an entry).
    path: String,
    columns: Vec<Column>,
}

#[derive(Clone, Debug, PartialEq)]
struct Column {
    /// The `.fbs` field.
    name: String,
    /// The struct's field (empty for a wrapper's or an entry's).
    rust: String,
    /// The key it holds, where the name differs from it.
    key: Option<String>,
    shape: Shape,
}

impl Column {
    fn of(name: &str, shape: Shape) -> Column {
        Column {
            name: name.to_string(),
            rust: String::new(),
            key: None,
            shape,
        }
    }

    /// flatc's Rust name of the field: its accessor and its `Args` field.
    fn ident(&self) -> String {
        field_ident(&self.name)
    }

    /// The call of its accessor on `table`.
    fn accessor(&self, table: &str) -> String {
        format!("{table}.{}()", self.ident())
    }
}

/// The tables of one data payload, its root first.
#[derive(Debug)]
struct Plan {
    tables: Vec<Table>,
}

impl Plan {
    /// The tables of `schema`, the structs named as in `records` (by schema path), or, with no
    /// structs, named from the keys, to check what FlatBuffers can carry.
    fn new(schema: &Schema, list: bool, records: &BTreeMap<String, TypedRecord>) -> Plan {
        let mut names = Scope::types(&FLATC_TYPES);
        // Each keeps its name (codegen told the structs apart counting flatc's names), and no
        // wrapper or entry takes one of them.
        for record in records.values() {
            names.claim(record.name.clone());
        }
        let mut planner = Planner {
            records,
            names,
            tables: Vec::new(),
        };
        let record = &schema.record;
        let path = &mut String::from("$");
        if list {
            let root = planner.reserve("Records", Role::Batch, path);
            let item = planner.record_or_value(record, "Record", path);
            planner.tables[root].columns = vec![Column {
                rust: "records".to_string(),
                ..Column::of("records", Shape::List(Box::new(item), None))
            }];
        } else {
            planner.record_or_value(record, "Document", path);
        }
        Plan {
            tables: planner.tables,
        }
    }

    fn table(&self, name: &str) -> &Table {
        self.tables
            .iter()
            .find(|table| table.name == name)
            .expect("every table a shape names is planned")
    }

    /// The path of the first table nested deeper than the verifier's default limit.
    fn too_deep(&self) -> Option<String> {
        let path = self.deeper_than_limit(&self.tables[0], 1)?;
        Some(format!(
            "{path}: nested more than {MAX_DEPTH} tables deep, the FlatBuffers verifier's default depth limit (records, the batch, wrappers and map entries count)"
        ))
    }

    fn deeper_than_limit(&self, table: &Table, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return Some(table.path.clone());
        }
        table.columns.iter().find_map(|column| {
            let child = column.shape.child()?;
            self.deeper_than_limit(self.table(child), depth + 1)
        })
    }

    /// The first table whose fields do not fit 16-bit offsets.
    fn too_wide(&self) -> Option<String> {
        self.tables.iter().find_map(|table| {
            // The offset to the vtable, and the padding before an 8-byte field.
            let inline = 8 + table
                .columns
                .iter()
                .map(|column| column.shape.inline_bytes())
                .sum::<usize>();
            let vtable = 4 + 2 * table.columns.len();
            (inline > MAX_TABLE_BYTES || vtable > MAX_TABLE_BYTES).then(|| {
                format!(
                    "{}: {} fields, more than a FlatBuffers table addresses with 16-bit offsets",
                    table.path,
                    table.columns.len()
                )
            })
        })
    }

    /// The `.fbs` file.
    fn text(&self, origin: &str) -> String {
        // flatc copies `///` comments into its Rust: each is one line of printable ASCII.
        let origin = rust_comment(origin);
        let mut text = format!(
            "// For --typed: the FlatBuffers schema of the data in {origin}, each table and field named\n// as the generated struct and field in src/main.rs, which `flatc --rust` (build.rs) compiles.\n// A vector holds no vector and no null: wrapper tables hold those; a map is a vector of\n// entries sorted by key.\n"
        );
        for table in &self.tables {
            let about = match table.role {
                Role::Batch => "The records, in order.".to_string(),
                Role::Struct => table.path.clone(),
                Role::Wrapper => format!("One element of {}.", table.path),
                Role::Entry => format!(
                    "One entry of the map {}; the entries are sorted by key.",
                    table.path
                ),
            };
            write!(text, "\n/// {}\ntable {} {{\n", rust_comment(&about), table.name)
                .expect("a String takes writes");
            for (index, column) in table.columns.iter().enumerate() {
                if let Some(key) = &column.key {
                    writeln!(text, "  /// The key \"{}\".", rust_comment(key))
                        .expect("a String takes writes");
                }
                let ty = if table.role == Role::Entry && index == 0 {
                    "string (key)".to_string()
                } else {
                    fbs_type(&column.shape)
                };
                writeln!(text, "  {}: {ty};", column.name).expect("a String takes writes");
            }
            text.push_str("}\n");
        }
        writeln!(text, "\nroot_type {};", self.tables[0].name).expect("a String takes writes");
        text
    }
}

/// The declared type of a field holding `shape`.
fn fbs_type(shape: &Shape) -> String {
    match shape {
        Shape::Optional(inner) if inner.is_scalar() => format!("{} = null", fbs_type(inner)),
        Shape::Optional(inner) => fbs_type(inner).replace(" (required)", ""),
        Shape::Bool => "bool".to_string(),
        Shape::Int => "long".to_string(),
        Shape::Float => "double".to_string(),
        Shape::Text => "string (required)".to_string(),
        Shape::Table(name) => format!("{name} (required)"),
        Shape::Map(_, table) | Shape::List(_, Some(table)) => format!("[{table}] (required)"),
        Shape::List(item, None) => format!("[{}] (required)", fbs_type(item).replace(" (required)", "")),
    }
}

struct Planner<'a> {
    records: &'a BTreeMap<String, TypedRecord>,
    names: Scope,
    tables: Vec<Table>,
}

impl Planner<'_> {
    /// Adds a table (its columns filled in once planned, so parents come first).
    fn push(&mut self, name: String, role: Role, path: &str) -> usize {
        self.tables.push(Table {
            name,
            role,
            path: path.to_string(),
            columns: Vec::new(),
        });
        self.tables.len() - 1
    }

    /// A new table named after `hint`, unique.
    fn reserve(&mut self, hint: &str, role: Role, path: &str) -> usize {
        let name = self.names.claim(hint.to_string());
        self.push(name, role, path)
    }

    /// The table of the struct at `path` (the record, the batch's element or the document):
    /// the record's own, or the generated transparent struct around a value (`value`).
    fn record_or_value(&mut self, ty: &Type, name: &str, path: &mut String) -> Shape {
        if matches!(ty.kind, Kind::Record(_)) {
            return self.record(ty, name, path);
        }
        let index = self.reserve(name, Role::Struct, path);
        let value = self.shape(ty, ty.nullable(), &format!("{name}Value"), path);
        self.tables[index].columns = vec![Column {
            rust: "value".to_string(),
            ..Column::of("value", value)
        }];
        Shape::Table(self.tables[index].name.clone())
    }

    fn record(&mut self, ty: &Type, hint: &str, path: &mut String) -> Shape {
        let Kind::Record(fields) = &ty.kind else {
            unreachable!("called for records")
        };
        let named = self.records.get(path.as_str());
        // A struct shared by several paths is one table.
        if let Some(named) = named
            && self.tables.iter().any(|table| table.name == named.name)
        {
            return Shape::Table(named.name.clone());
        }
        let index = match named {
            Some(named) => self.push(named.name.clone(), Role::Struct, path),
            None => self.reserve(hint, Role::Struct, path),
        };
        let name = self.tables[index].name.clone();
        let parent = path.len();
        let mut columns = Vec::new();
        for (position, field) in fields.iter().enumerate() {
            let rust = named.map_or_else(
                || names::field(&field.name),
                |named| named.fields[position].clone(),
            );
            push_key(path, &field.name);
            let optional = field.ty.nullable() || field.optional();
            let hint = format!("{name}{}", names::type_name(&rust));
            let shape = self.shape(&field.ty, optional, &hint, path);
            path.truncate(parent);
            columns.push(Column {
                name: fbs_field(&rust),
                key: (rust != field.name).then(|| field.name.clone()),
                rust,
                shape,
            });
        }
        self.tables[index].columns = columns;
        Shape::Table(name)
    }

    /// The shape of a value of `ty` (`Option` when `optional`, or null somewhere); records and
    /// wrappers inside it are named after `hint`.
    fn shape(&mut self, ty: &Type, optional: bool, hint: &str, path: &mut String) -> Shape {
        let shape = match &ty.kind {
            // Only ever null: the generated `Option<String>`, always `None`.
            Kind::Null => return Shape::Optional(Box::new(Shape::Text)),
            Kind::Bool => Shape::Bool,
            Kind::Int => Shape::Int,
            Kind::Float => Shape::Float,
            Kind::String => Shape::Text,
            Kind::Record(_) => self.record(ty, hint, path),
            Kind::Array(item) => self.list(item, hint, path),
            Kind::Map(value) => self.map(value, hint, path),
            Kind::Union(_) => unreachable!("typable() refuses conflicts first"),
        };
        if optional || ty.nullable() {
            Shape::Optional(Box::new(shape))
        } else {
            shape
        }
    }

    fn list(&mut self, item: &Type, hint: &str, path: &mut String) -> Shape {
        let parent = path.len();
        path.push_str("[]");
        let hint = format!("{hint}Item");
        let wrapper = wrapped(item).then(|| self.reserve(&hint, Role::Wrapper, path));
        let element = self.shape(item, false, &hint, path);
        path.truncate(parent);
        let wrapper = wrapper.map(|index| {
            let field = match element {
                Shape::Optional(_) => "value",
                Shape::List(..) => "items",
                _ => "entries",
            };
            self.tables[index].columns = vec![Column::of(field, element.clone())];
            self.tables[index].name.clone()
        });
        Shape::List(Box::new(element), wrapper)
    }

    fn map(&mut self, value: &Type, hint: &str, path: &mut String) -> Shape {
        let entry = self.reserve(&format!("{hint}Entry"), Role::Entry, path);
        let parent = path.len();
        path.push_str(".*");
        let value = self.shape(value, false, &format!("{hint}Value"), path);
        path.truncate(parent);
        self.tables[entry].columns = vec![Column::of("key", Shape::Text), Column::of("value", value.clone())];
        Shape::Map(Box::new(value), self.tables[entry].name.clone())
    }
}

/// Whether a vector holds each element of `item` in a wrapper table: a vector holds no null,
/// no vector and no map.
fn wrapped(item: &Type) -> bool {
    item.nullable() || matches!(item.kind, Kind::Null | Kind::Array(_) | Kind::Map(_))
}

/// The FlatBuffers verifier's default limit of tables in one buffer (`VerifierOptions::max_tables`).
const MAX_TABLES: usize = 1_000_000;

/// Why the data's buffer would fail the default verifier for its size, where the schema cannot
/// say: more tables than [`MAX_TABLES`].
pub(super) fn too_many_tables(data: &DataPayload) -> Option<String> {
    let count = table_count(data);
    (count > MAX_TABLES).then(|| {
        format!(
            "{count} tables (records, wrappers and map entries): more than the FlatBuffers verifier's default limit of {MAX_TABLES} per buffer"
        )
    })
}

/// The tables of the data's buffer, counted on its records as the plan lays them out: the
/// batch, each struct (a record, or the one around a record that is not an object), wrapper
/// and map entry.
fn table_count(data: &DataPayload) -> usize {
    let record = &data.typed_schema.record;
    let around = usize::from(!matches!(record.kind, Kind::Record(_)));
    let structs: usize = (data.records.iter())
        .map(|value| around + tables(record, value))
        .sum();
    usize::from(data.is_list()) + structs
}

/// The tables of `value`, of type `ty`, and of everything in it.
fn tables(ty: &Type, value: &Value) -> usize {
    match (&ty.kind, value) {
        (Kind::Record(fields), Value::Object(object)) => {
            1 + (fields.iter())
                .filter_map(|field| Some(tables(&field.ty, object.get(&field.name)?)))
                .sum::<usize>()
        }
        (Kind::Array(item), Value::Array(elements)) => {
            let wrappers = if wrapped(item) { elements.len() } else { 0 };
            wrappers
                + elements
                    .iter()
                    .map(|element| tables(item, element))
                    .sum::<usize>()
        }
        (Kind::Map(item), Value::Object(entries)) => {
            entries.len() + entries.values().map(|entry| tables(item, entry)).sum::<usize>()
        }
        _ => 0,
    }
}

/// The `.fbs`, the build step and the code of one data payload's module.
pub fn items(module: &TypedModule) -> TypedItems {
    let data = module.data;
    let plan = Plan::new(&data.typed_schema, data.is_list(), module.records);
    let writer = Writer { plan: &plan };
    let index = module.index;
    let mut rust = format!(
        "/// The tables of `fbs/data_{index}.fbs`, generated by flatc (build.rs).\n#[allow(\n    clippy::all,\n    clippy::pedantic,\n    dead_code,\n    deprecated,\n    non_camel_case_types,\n    non_snake_case,\n    non_upper_case_globals,\n    unsafe_op_in_unsafe_fn,\n    unused_imports\n)]\npub mod fb {{\n    include!(concat!(env!(\"OUT_DIR\"), \"/fbs/data_{index}_generated.rs\"));\n}}\n\n"
    );
    for table in plan
        .tables
        .iter()
        .filter(|table| table.role != Role::Wrapper && table.role != Role::Entry)
    {
        debug_assert!(
            module.structs.iter().any(|record| record.name == table.name),
            "{}: a table named as no struct",
            table.name
        );
        rust.push_str(&writer.impls(table));
    }
    TypedItems {
        files: vec![(format!("fbs/data_{index}.fbs"), plan.text(&data.origin))],
        rust,
        build_crates: Vec::new(),
        build_step: Some(BUILD_STEP),
    }
}

/// The generated crate's build step: flatc on every `fbs/*.fbs`.
const BUILD_STEP: BuildStep = BuildStep {
    name: "flatbuffers",
    source: r#"//! Generated by `serbench gen`: runs `flatc --rust` on every fbs/*.fbs, writing
//! OUT_DIR/fbs/<file stem>_generated.rs: the flatc on PATH, which serbench checked is of the
//! flatbuffers crate's version before it wrote this crate.

pub fn run() {
    println!("cargo:rerun-if-changed=fbs");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("fbs");
    std::fs::create_dir_all(&out).expect("OUT_DIR is writable");
    let mut schemas: Vec<std::path::PathBuf> = std::fs::read_dir("fbs")
        .expect("fbs/ is readable")
        .map(|entry| entry.expect("fbs/ lists").path())
        .collect();
    schemas.sort();
    for schema in schemas {
        let status = std::process::Command::new("flatc")
            .arg("--rust")
            .arg("-o")
            .arg(&out)
            .arg(&schema)
            .status()
            .unwrap_or_else(|error| panic!("cannot run flatc on {}: {error}", schema.display()));
        assert!(status.success(), "flatc failed on {} ({status})", schema.display());
    }
}
"#,
};

/// serbench's trait of a type stored as a table.
const MODEL: &str = "serbench::format::flatbuffers::TableModel";

/// Writes the code of each struct's table.
struct Writer<'a> {
    plan: &'a Plan,
}

impl Writer<'_> {
    /// The struct's [`super::TableModel`], [`super::Native`] and `From` its table.
    fn impls(&self, table: &Table) -> String {
        let name = &table.name;
        let fold: String = (table.columns.iter())
            .map(|column| {
                format!(
                    "        {}\n",
                    self.fold(&column.shape, &column.accessor("table"))
                )
            })
            .collect();
        let route = if table.role == Role::Batch {
            let Shape::List(item, None) = &table.columns[0].shape else {
                unreachable!("a batch is a vector of records")
            };
            let record = item.child().expect("a batch's records are tables");
            format!(
                "        let records = table.{}();\n        digest.count(records.len());\n        if let Some(first) = records.iter().next() {{\n            <{record} as serbench::format::flatbuffers::Native>::route_table(first, digest);\n        }}\n",
                table.columns[0].ident()
            )
        } else {
            (table.columns.iter())
                .map(|column| self.envelope(&column.shape, &column.accessor("table")))
                .filter(|statement| !statement.is_empty())
                .map(|statement| format!("        {statement}\n"))
                .collect()
        };
        let fields: String = (table.columns.iter())
            .map(|column| {
                format!(
                    "            {}: {},\n",
                    column.rust,
                    self.read(&column.shape, &column.accessor("table"))
                )
            })
            .collect();
        format!(
            "impl {MODEL} for {name} {{\n    type Table<'buf> = fb::{name}<'buf>;\n\n    fn build(&self, builder: &mut serbench::format::flatbuffers::Builder) -> ::flatbuffers::WIPOffset<fb::{name}<'static>> {{\n{build}    }}\n\n    fn read(table: fb::{name}<'_>) -> anyhow::Result<Self> {{\n        Ok(<Self as std::convert::From<fb::{name}<'_>>>::from(table))\n    }}\n\n    fn fold_table({fold_params}) {{\n{fold}    }}\n}}\n\nimpl serbench::format::flatbuffers::Native for {name} {{\n    fn route_table({route_params}) {{\n{route}    }}\n}}\n\nimpl std::convert::From<fb::{name}<'_>> for {name} {{\n    fn from({table_param}: fb::{name}<'_>) -> Self {{\n        {name} {{\n{fields}        }}\n    }}\n}}\n\n",
            build = self.build(table),
            fold_params = params(name, fold.is_empty()),
            route_params = params(name, route.is_empty()),
            table_param = if fields.is_empty() { "_" } else { "table" },
        )
    }

    /// `TableModel::build`'s body: the offsets of the fields that have one, then the table.
    fn build(&self, table: &Table) -> String {
        let mut offsets = String::new();
        let mut args = String::new();
        let mut floats = Vec::new();
        for (index, column) in table.columns.iter().enumerate() {
            let (offset, arg) = self.build_value(
                &column.shape,
                &format!("&self.{}", column.rust),
                &format!("f{index}"),
            );
            if !offset.is_empty() {
                writeln!(offsets, "        {offset}").expect("a String takes writes");
            }
            writeln!(args, "            {}: {arg},", column.ident()).expect("a String takes writes");
            if column.shape == Shape::Float {
                floats.push(format!("self.{}", column.rust));
            }
        }
        format!(
            "{offsets}        let args = fb::{name}Args {{\n{args}        }};\n        {create}\n",
            name = table.name,
            create = create(&table.name, &floats),
        )
    }

    /// The statement writing what a field of `shape` points to (a string, a table, a vector),
    /// as `var`, and the `Args` field's value; `source` is a reference to the struct's value.
    fn build_value(&self, shape: &Shape, source: &str, var: &str) -> (String, String) {
        match shape {
            Shape::Optional(inner) if inner.is_scalar() => (String::new(), deref(source)),
            Shape::Bool | Shape::Int | Shape::Float => (String::new(), deref(source)),
            Shape::Optional(inner) => (
                format!(
                    "let {var} = {}.as_ref().map(|value| {});",
                    place(source),
                    self.offset(inner, "value")
                ),
                var.to_string(),
            ),
            _ => (
                format!("let {var} = {};", self.offset(shape, source)),
                format!("Some({var})"),
            ),
        }
    }

    /// The expression writing a string, table or vector from `source`, a reference to it.
    fn offset(&self, shape: &Shape, source: &str) -> String {
        match shape {
            Shape::Text => format!("builder.string({source})"),
            Shape::Table(_) => format!("{MODEL}::build({source}, builder)"),
            Shape::List(item, None) => match **item {
                Shape::Text => format!("builder.strings({source})"),
                Shape::Table(_) => format!("builder.tables({source})"),
                _ => format!("builder.scalars({source})"),
            },
            Shape::List(item, Some(wrapper)) => {
                let column = &self.plan.table(wrapper).columns[0];
                let (offset, arg) = self.build_value(item, "item", "inner");
                format!(
                    "builder.vector({source}, |builder, item| {{ {}fb::{wrapper}::create(builder.fbb(), &fb::{wrapper}Args {{ {}: {arg} }}) }})",
                    spaced(&offset),
                    column.ident()
                )
            }
            Shape::Map(value, entry) => {
                let (offset, arg) = self.build_value(value, "value", "inner");
                let floats = if **value == Shape::Float {
                    vec!["*value".to_string()]
                } else {
                    Vec::new()
                };
                format!(
                    "builder.vector({source}, |builder, (key, value)| {{ let key = builder.string(key); {}let args = fb::{entry}Args {{ key: Some(key), value: {arg} }}; {} }})",
                    spaced(&offset),
                    create(entry, &floats)
                )
            }
            Shape::Bool | Shape::Int | Shape::Float | Shape::Optional(_) => {
                unreachable!("scalars and options are written in place")
            }
        }
    }

    /// The owned value of `expression`, an accessor's value of `shape`.
    fn read(&self, shape: &Shape, expression: &str) -> String {
        match shape {
            Shape::Bool | Shape::Int | Shape::Float => expression.to_string(),
            Shape::Text => format!("{expression}.to_string()"),
            Shape::Table(name) => format!("{}({expression})", from(name)),
            Shape::List(item, None) => match &**item {
                Shape::Text => format!("{expression}.iter().map(str::to_string).collect()"),
                Shape::Table(name) => format!("{expression}.iter().map({}).collect()", from(name)),
                _ => format!("{expression}.iter().collect()"),
            },
            Shape::List(item, Some(wrapper)) => format!(
                "{expression}.iter().map(|item| {}).collect()",
                self.read(item, &self.plan.table(wrapper).columns[0].accessor("item"))
            ),
            Shape::Map(value, _) => format!(
                "{expression}.iter().map(|entry| (entry.key().to_string(), {})).collect()",
                self.read(value, "entry.value()")
            ),
            Shape::Optional(inner) => match &**inner {
                Shape::Bool | Shape::Int | Shape::Float => expression.to_string(),
                Shape::Text => format!("{expression}.map(str::to_string)"),
                Shape::Table(name) => format!("{expression}.map({})", from(name)),
                _ => format!("{expression}.map(|value| {})", self.read(inner, "value")),
            },
        }
    }

    /// The statement folding `expression` whole, as [`crate::payload::fields::FieldValue::fold`]
    /// folds the owned value.
    fn fold(&self, shape: &Shape, expression: &str) -> String {
        match shape {
            Shape::Bool => format!("digest.flag({expression});"),
            Shape::Int => format!("digest.int({expression});"),
            Shape::Float => format!("digest.float({expression});"),
            Shape::Text => format!("digest.text({expression});"),
            Shape::Table(name) => format!("<{name} as {MODEL}>::fold_table({expression}, digest);"),
            Shape::Optional(inner) => format!(
                "if let Some(value) = {expression} {{ digest.flag(true); {} }} else {{ digest.flag(false); }}",
                self.fold(inner, "value")
            ),
            Shape::List(item, None) if **item == Shape::Text => format!("digest.texts({expression}.iter());"),
            Shape::List(item, wrapper) => {
                let element = match wrapper {
                    Some(wrapper) => self.plan.table(wrapper).columns[0].accessor("item"),
                    None => "item".to_string(),
                };
                format!(
                    "{{ let list = {expression}; digest.count(list.len()); for item in list.iter() {{ {} }} }}",
                    self.fold(item, &element)
                )
            }
            Shape::Map(value, _) => format!(
                "{{ let map = {expression}; digest.count(map.len()); for entry in map.iter() {{ digest.text(entry.key()); {} }} }}",
                self.fold(value, "entry.value()")
            ),
        }
    }

    /// The statement folding what `expression` adds to its record's envelope, as
    /// [`crate::payload::fields::FieldValue::fold_envelope`] does (nothing for a record).
    fn envelope(&self, shape: &Shape, expression: &str) -> String {
        match shape {
            Shape::Table(_) => String::new(),
            Shape::List(..) | Shape::Map(..) => format!("digest.count({expression}.len());"),
            Shape::Optional(inner) => match self.envelope(inner, "value") {
                inner if inner.is_empty() => format!("digest.flag({expression}.is_some());"),
                inner => format!(
                    "if let Some(value) = {expression} {{ digest.flag(true); {inner} }} else {{ digest.flag(false); }}"
                ),
            },
            Shape::Bool | Shape::Int | Shape::Float | Shape::Text => self.fold(shape, expression),
        }
    }
}

/// The parameters of a fold of the table `name`, unnamed when the fold reads nothing.
fn params(name: &str, unused: bool) -> String {
    if unused {
        format!("_: fb::{name}<'_>, _: &mut serbench::payload::fields::Digest")
    } else {
        format!("table: fb::{name}<'_>, digest: &mut serbench::payload::fields::Digest")
    }
}

/// The conversion of the table `name` into its struct.
fn from(name: &str) -> String {
    format!("<{name} as std::convert::From<fb::{name}<'_>>>::from")
}

/// `*source`, or the place `source` borrows.
fn deref(source: &str) -> String {
    source
        .strip_prefix('&')
        .map_or_else(|| format!("*{source}"), str::to_string)
}

/// What to call a method on: the place `source` borrows, or the reference itself.
fn place(source: &str) -> &str {
    source.strip_prefix('&').unwrap_or(source)
}

/// A statement followed by a space, or nothing.
fn spaced(statement: &str) -> String {
    if statement.is_empty() {
        String::new()
    } else {
        format!("{statement} ")
    }
}

/// The expression creating the table `name` from `args`. Where it has floats, every default is
/// written when one of them is -0.0: the builder leaves out a value equal to its default 0.0,
/// and -0.0 is, so it would read back as 0.0, another value to the access arms' fold.
fn create(name: &str, floats: &[String]) -> String {
    if floats.is_empty() {
        format!("fb::{name}::create(builder.fbb(), &args)")
    } else {
        format!(
            "builder.table(serbench::format::flatbuffers::has_negative_zero(&[{}]), |fbb| fb::{name}::create(fbb, &args))",
            floats.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::codegen::rust::{Derives, module};
    use crate::payload::data::{DataPayload, Overrides, Request};

    fn data(text: &str, maps: &[&str]) -> &'static DataPayload {
        let request = Request {
            overrides: Overrides {
                maps: maps.iter().map(|path| path.to_string()).collect(),
                records: Vec::new(),
            },
            ..Request::default()
        };
        DataPayload::from_bytes("t.ndjson".into(), "t", text.as_bytes().to_vec(), &request).unwrap()
    }

    /// The crate's items for `data`, as codegen asks for them.
    fn items_of(data: &'static DataPayload) -> TypedItems {
        let plain = Derives::default();
        let module = module(data, &plain);
        items(&TypedModule {
            data,
            index: 0,
            root: module.root,
            structs: &module.structs,
            update: &module.update,
            records: &module.records,
        })
    }

    /// Records nested `depth` deep: `{"a<depth - 1>": {... {"a0": 1}}}`.
    fn nested(depth: usize) -> &'static DataPayload {
        let text = (0..depth).fold("1".to_string(), |inner, level| {
            format!("{{\"a{level}\": {inner}}}")
        });
        data(&text, &[])
    }

    #[test]
    fn the_schema_has_a_table_per_struct_and_wrappers_where_vectors_cannot_hold_a_value() {
        let data = data(
            concat!(
                r#"{"id": 1, "type": "a", "std": 1.5, "tags": ["x", null], "m": {"k": [1]}, "u": {"n": null}}"#,
                "\n",
                r#"{"id": 2, "type": "b", "std": 2.5, "tags": [], "m": {}, "u": {"n": 3}, "opt": true}"#,
                "\n"
            ),
            &["$.m"],
        );
        let items = items_of(data);
        let [(path, text)] = &items.files[..] else {
            panic!("one file, not {:?}", items.files)
        };
        assert_eq!(path, "fbs/data_0.fbs");
        let tables = text.split_once("\n\n").unwrap().1;
        assert_eq!(
            tables,
            "/// The records, in order.
table Records {
  records: [Record] (required);
}

/// $
table Record {
  id: long;
  m: [RecordMEntry] (required);
  opt: bool = null;
  std: double;
  tags: [RecordTagsItem] (required);
  /// The key \"type\".
  type_: string (required);
  u: U (required);
}

/// One entry of the map $.m; the entries are sorted by key.
table RecordMEntry {
  key: string (key);
  value: [long] (required);
}

/// One element of $.tags[].
table RecordTagsItem {
  value: string;
}

/// $.u
table U {
  n: long = null;
}

root_type Records;
"
        );
        assert_eq!(items.build_step.map(|step| step.name), Some("flatbuffers"));
        for expected in [
            // flatc's names of `std` (escaped) and `type_` (kept).
            "            std_: self.std,\n",
            "            type_: Some(f5),\n",
            "builder.table(serbench::format::flatbuffers::has_negative_zero(&[self.std]), |fbb| fb::Record::create(fbb, &args))",
            "opt: table.opt(),",
            "tags: table.tags().iter().map(|item| item.value().map(str::to_string)).collect(),",
            "if let Some(value) = table.opt() { digest.flag(true); digest.flag(value); } else { digest.flag(false); }",
            "{ let map = table.m(); digest.count(map.len()); for entry in map.iter() { digest.text(entry.key()); { let list = entry.value(); digest.count(list.len()); for item in list.iter() { digest.int(item); } } } }",
            "<Record as serbench::format::flatbuffers::Native>::route_table(first, digest);",
        ] {
            assert!(
                items.rust.contains(expected),
                "{expected:?} not in:\n{}",
                items.rust
            );
        }
    }

    #[test]
    fn field_names_are_flatcs_and_never_meet() {
        for (rust, fbs, ident) in [
            ("id", "id", "id"),
            ("type_", "type_", "type_"),
            ("_3ds", "_3ds", "_3ds"),
            ("u00fc_ber", "u00fc_ber", "u00fc_ber"),
            ("user_id_2", "user_id_2", "user_id_2"),
            ("std", "std", "std_"),
            ("u8", "u8", "u8_"),
            ("follow", "follow", "follow_"),
            ("create", "create_", "create_"),
            ("init_from_table", "init_from_table_", "init_from_table_"),
            ("into", "into_", "into_"),
            ("async_", "async_", "async_"),
            ("table", "table", "table"),
        ] {
            assert_eq!(fbs_field(rust), fbs, "{rust}");
            assert_eq!(field_ident(&fbs_field(rust)), ident, "{rust}");
        }
        // Every key flatc or the table would rename, beside the key it would be renamed to.
        let mut keys: Vec<String> = FLATC_KEYWORDS
            .iter()
            .chain(&TABLE_FUNCTIONS)
            .map(|key| key.to_string())
            .collect();
        keys.extend(keys.clone().iter().map(|key| format!("{key}_")));
        let record: String = keys.iter().map(|key| format!("\"{key}\": 1, ")).collect();
        let items = items_of(data(&format!("{{{record}\"x\": 1}}\n"), &[]));
        let idents: Vec<&str> = items
            .rust
            .lines()
            .filter_map(|line| {
                line.strip_prefix("            ")?
                    .split_once(": self.")
                    .map(|(ident, _)| ident)
            })
            .collect();
        let unique: std::collections::BTreeSet<&str> = idents.iter().copied().collect();
        assert_eq!(idents.len(), keys.len() + 1, "{idents:?}");
        assert_eq!(unique.len(), idents.len(), "{idents:?}");
    }

    /// flatc itself names the fields as [`field_ident`] says. Skipped without flatc 25.12.19;
    /// SERBENCH_REQUIRE_FLATC=1 turns the skip into a failure.
    #[test]
    fn flatc_names_the_fields_as_predicted() {
        if let Some(reason) = flatc_reason() {
            assert!(std::env::var_os("SERBENCH_REQUIRE_FLATC").is_none(), "{reason}");
            println!("skipped: {reason}");
            return;
        }
        let names: Vec<String> = (FLATC_KEYWORDS
            .iter()
            .filter(|name| name.starts_with(|c: char| c.is_lowercase())))
        .chain(&[
            "id",
            "type_",
            "_3ds",
            "u00fc_ber",
            "table",
            "namespace",
            "async_",
            "create_",
            "init_from_table_",
        ])
        .map(|name| name.to_string())
        .collect();
        let fields: String = names.iter().map(|name| format!("  {name}: long;\n")).collect();
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("names.fbs");
        std::fs::write(&schema, format!("table Names {{\n{fields}}}\n")).unwrap();
        let status = Command::new("flatc")
            .args(["--rust", "-o"])
            .arg(dir.path())
            .arg(&schema)
            .status()
            .unwrap();
        assert!(status.success());
        let rust = std::fs::read_to_string(dir.path().join("names_generated.rs")).unwrap();
        for name in &names {
            let accessor = format!("  pub fn {}(&self) -> i64 {{", field_ident(name));
            assert!(rust.contains(&accessor), "{accessor:?} not in flatc's output");
        }
    }

    #[test]
    fn nesting_past_the_verifiers_depth_is_a_reason() {
        // 63 records and the batch: 64 tables, as deep as the verifier goes.
        assert_eq!(schema_reason(&nested(63).typed_schema), None);
        let reason = schema_reason(&nested(64).typed_schema).unwrap();
        assert!(reason.starts_with("$.a63.a62."), "{reason}");
        assert!(
            reason.contains(".a2.a1: nested more than 64 tables deep"),
            "{reason}"
        );
        // A list of lists is a table per inner list: the batch, the record and 62 wrappers of
        // 63 nested lists are 64 tables.
        let lists = |depth: usize| {
            let lists = (0..depth).fold("1".to_string(), |inner, _| format!("[{inner}]"));
            schema_reason(&data(&format!("{{\"l\": {lists}}}\n"), &[]).typed_schema)
        };
        assert_eq!(lists(63), None);
        assert!(lists(64).is_some_and(|reason| reason.starts_with("$.l[][][]")));
        assert_eq!(
            schema_reason(
                &data(
                    "{\"l\": [[[1]]], \"m\": {\"k\": {\"j\": 1}}}\n",
                    &["$.m", "$.m.*"]
                )
                .typed_schema
            ),
            None
        );
    }

    #[test]
    fn the_tables_of_the_data_are_counted_as_the_verifier_counts_them() {
        // The batch, 2 records, 1 `u`, 3 wrappers of `l`'s elements (one a list), 2 entries.
        let records = concat!(
            r#"{"u": {"n": 1}, "l": [[1], null], "m": {"a": 1, "b": 2}}"#,
            "\n",
            r#"{"u": null, "l": [[]], "m": {}}"#,
            "\n"
        );
        assert_eq!(table_count(data(records, &["$.m"])), 9);
        // A list of values that are not objects: a struct around each.
        assert_eq!(table_count(data("[1]\n[2, 3]\n", &[])), 3);
        let document = DataPayload::from_bytes(
            "d.json".into(),
            "d",
            br#"{"a": [{"b": 1}, {"b": 2}]}"#.to_vec(),
            &Request::default(),
        )
        .unwrap();
        assert_eq!(table_count(document), 3);
        assert_eq!(too_many_tables(document), None);
    }

    #[test]
    fn null_records_and_tables_past_16_bit_offsets_are_reasons() {
        let null_record = data("{\"a\": 1}\nnull\n", &[]);
        assert_eq!(
            schema_reason(&null_record.typed_schema).as_deref(),
            Some("$: a record that is null in the file has no generated struct to hold it")
        );
        // Values that are not records may be null: the generated `Record { value }` holds them.
        assert_eq!(schema_reason(&data("[1]\nnull\n", &[]).typed_schema), None);
        let wide = |fields: usize| {
            let keys: Vec<String> = (0..fields).map(|index| format!("\"k{index}\": 1.5")).collect();
            let request = Request {
                overrides: Overrides {
                    maps: Vec::new(),
                    records: vec!["$".to_string()],
                },
                ..Request::default()
            };
            let text = format!("{{{}}}\n", keys.join(", "));
            let data = DataPayload::from_bytes("w.ndjson".into(), "w", text.into_bytes(), &request).unwrap();
            schema_reason(&data.typed_schema)
        };
        assert_eq!(wide(8190), None);
        assert_eq!(
            wide(8192).as_deref(),
            Some("$: 8192 fields, more than a FlatBuffers table addresses with 16-bit offsets")
        );
    }

    #[test]
    fn flatc_must_be_runnable_and_of_the_crates_version() {
        assert_eq!(
            flatc_mismatch(Ok("flatc version 25.12.19".into()), "25.12.19"),
            None
        );
        let other = flatc_mismatch(Ok("flatc version 24.3.25".into()), "25.12.19").unwrap();
        assert_eq!(
            other,
            "flatc on PATH says \"flatc version 24.3.25\": its Rust code must be of the flatbuffers crate's version, 25.12.19"
        );
        let missing = flatc_mismatch(Err("No such file or directory".into()), "25.12.19").unwrap();
        assert!(
            missing.starts_with("flatc is not runnable (No such file"),
            "{missing}"
        );
        assert!(missing.contains("runs flatc 25.12.19"), "{missing}");
    }
}

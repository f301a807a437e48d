//! Cap'n Proto for typed data (`--typed`): the generated crate's `capnp/data_<n>.capnp` per data
//! payload (one struct per generated Rust struct, named after it), a build step that compiles
//! each with the `capnp` tool and capnpc-rust's generator (capnpc's `CompilerCommand`, into
//! OUT_DIR, for the module `data_<n>`), and, per generated struct, its [`super::StructModel`]
//! (build, read into the owned struct, fold in place by [`crate::payload::fields::FieldValue`]'s
//! rule), the root's [`super::Routed`] and, where the data has a scalar to change, its
//! [`super::Native`].
//!
//! Types: `bool`, `i64`, `f64`, `String` are `Bool`, `Int64`, `Float64`, `Text`; `Vec<T>` is a
//! `List`, lists of lists included; a map is a `List` of `{ key :Text; value }` entry structs in
//! key order; a record is its struct. Cap'n Proto has no optional value: an `Option` of a text,
//! list or struct is its pointer, null for `None` (`has_<field>()`; a path only ever null is such
//! a `Text`), and an `Option` of a scalar is a group `:union { none :Void; value :T }`. A list
//! of optional elements is a list of one-field structs holding the element that way.
//!
//! Names. Cap'n Proto wants lowerCamel field names without `_`, UpperCamel type names, and
//! capnpc-rust snake_cases them back (an `_` before each capital, all lower case), so:
//!
//! - a field is its Rust name's `_`-separated parts, empty ones dropped, joined in lowerCamel
//!   (`user_id` -> `userId`, `u00fc_ber` -> `u00fcBer`, `type_` -> `type`, `user_id_2` ->
//!   `userId2`), `n` before a leading digit (`_3ds` -> `n3ds`); its accessors are
//!   `get_`/`set_`/`init_`/`has_` and the snake_case of that (`get_user_id2`, `get_n3ds`);
//! - a type is its Rust name without `_` (`Self_` -> `Self`, module `self_`), a map's entries
//!   `<struct><Field>Entry` and an optional element's holder `<struct><Field>Item`;
//! - a name already taken in its scope (the struct's fields, the file's types) gets `2`, `3`, ...
//!   and so does one whose snake_case is a Rust keyword capnpc-rust does not escape (`async`,
//!   `await`, `dyn`, `gen`, `try`: a union group is a module of its name), or a type named as
//!   a Cap'n Proto built-in type (`Text`, `List`, ...), which it would shadow.
//!
//! Refused ([`refuses`]): every schema when no `capnp` tool is on the PATH; data nested past
//! the default `ReaderOptions` nesting limit of 64, which every struct and list read counts down
//! and a list's struct elements once more (measured: a list's records fail to read from 63
//! records deep, a document from 65; a schema does not say which it is, so both are refused
//! from 63); more than 58 lists directly in one another, one schema type capnpc-rust itself
//! fails to read with those limits.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::escape::{rust_comment, rust_str};
use crate::format::{BuildStep, TypedItems, TypedModule};
use crate::payload::data::read::push_key;
use crate::payload::data::schema::walk;
use crate::payload::data::{DataPayload, Kind, Schema, Type};

/// The default `ReaderOptions::nesting_limit`.
const NESTING_LIMIT: usize = 64;

/// The most lists nested in one another that capnpc-rust generates code for ([`long_list_run`]).
const LIST_RUN: usize = 58;

/// Cap'n Proto's built-in types, which a struct of the same name would shadow in its file.
const BUILT_IN: [&str; 19] = [
    "Void",
    "Bool",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "Float32",
    "Float64",
    "Text",
    "Data",
    "List",
    "AnyPointer",
    "AnyStruct",
    "AnyList",
    "Capability",
];

/// Rust keywords (2024) that capnpc-rust's module names do not escape.
const UNESCAPED: [&str; 5] = ["async", "await", "dyn", "gen", "try"];

/// capnpc-rust's `RUST_KEYWORDS` (codegen.rs): a module named so gets a trailing `_`.
const ESCAPED: [&str; 53] = [
    "abstract", "alignof", "as", "be", "become", "box", "break", "const", "continue", "crate", "do", "else",
    "enum", "extern", "false", "final", "fn", "for", "if", "impl", "in", "let", "loop", "macro", "match",
    "mod", "move", "mut", "offsetof", "once", "override", "priv", "proc", "pub", "pure", "ref", "return",
    "self", "sizeof", "static", "struct", "super", "trait", "true", "type", "typeof", "unsafe", "unsized",
    "use", "virtual", "where", "while", "yield",
];

/// What Cap'n Proto cannot carry of a typed schema: anything, without its compiler; data nested
/// past what capnpc-rust or the readers read.
pub fn refuses(data: &DataPayload) -> Option<String> {
    let schema = &data.typed_schema;
    static COMPILER: OnceLock<bool> = OnceLock::new();
    if !*COMPILER.get_or_init(|| runs("capnp")) {
        return Some(
            "the Cap'n Proto compiler `capnp` is not on the PATH (the generated crate's build script runs it; apt-get install capnproto)"
                .to_string(),
        );
    }
    if let Some(path) = long_list_run(schema) {
        return Some(format!(
            "{path}: more than {LIST_RUN} lists nested in one another: capnpc-rust cannot read a schema type that deep"
        ));
    }
    too_deep(schema).map(|path| {
        format!(
            "{path}: nested deeper than Cap'n Proto's default nesting limit of {NESTING_LIMIT} (each struct and list read counts, and a list's struct elements)"
        )
    })
}

/// The first list that holds more than [`LIST_RUN`] lists nested directly in one another (an
/// optional element's holder struct ends a run). `List(List(...))` is one type of the schema,
/// each list a struct inside the last in the request capnpc-rust reads with the default
/// `ReaderOptions`: past 58 it fails to generate (measured with capnpc-rust 0.27.0).
fn long_list_run(schema: &Schema) -> Option<String> {
    fn run(ty: &Type) -> usize {
        match &ty.kind {
            Kind::Array(item) if !optional_value(item) => 1 + run(item),
            Kind::Array(_) => 1,
            _ => 0,
        }
    }
    let mut found = None;
    walk(&schema.record, &mut String::from("$"), &mut |path, ty, _| {
        if found.is_none() && run(ty) > LIST_RUN {
            found = Some(path.to_string());
        }
    });
    found
}

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The first path a default reader cannot reach: each struct or list read needs a budget of at
/// least 1 and leaves its pointers one less, a list's struct elements one less again; the root
/// starts with the limit. A schema does not say whether it is a list's records or one document,
/// so every one is counted as a list's, inside the batch's struct and list (a document could go
/// two levels deeper).
fn too_deep(schema: &Schema) -> Option<String> {
    element_struct(&schema.record, NESTING_LIMIT as i64 - 3, &mut String::from("$"))
}

/// The first path under `ty`, held by a pointer with `budget` left, that a reader cannot reach.
fn reach(ty: &Type, budget: i64, path: &mut String) -> Option<String> {
    let parent = path.len();
    let found = match &ty.kind {
        Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String | Kind::Union(_) => None,
        _ if budget < 1 => Some(path.clone()),
        Kind::Record(fields) => fields.iter().find_map(|field| {
            push_key(path, &field.name);
            let found = reach(&field.ty, budget - 1, path);
            path.truncate(parent);
            found
        }),
        Kind::Array(item) => {
            path.push_str("[]");
            if optional_value(item) {
                // A holder struct per element, whose `value` points to the item.
                reach(item, budget - 2, path)
            } else if matches!(item.kind, Kind::Record(_)) {
                element_struct(item, budget - 2, path)
            } else {
                reach(item, budget - 1, path)
            }
        }
        // A list of entry structs; the value is a pointer of each.
        Kind::Map(value) => {
            path.push_str(".*");
            reach(value, budget - 2, path)
        }
    };
    path.truncate(parent);
    found
}

/// [`reach`] for the struct element of a list whose pointers have `budget` left: a record's
/// fields, or the one value of the `Record { value }` that holds records that are not objects.
fn element_struct(ty: &Type, budget: i64, path: &mut String) -> Option<String> {
    match &ty.kind {
        Kind::Record(fields) => {
            let parent = path.len();
            fields.iter().find_map(|field| {
                push_key(path, &field.name);
                let found = reach(&field.ty, budget, path);
                path.truncate(parent);
                found
            })
        }
        _ => reach(ty, budget, path),
    }
}

/// One struct of the generated schema.
struct Struct {
    /// Its Cap'n Proto name.
    name: String,
    /// The generated Rust struct it stores; none for a map's entry or an optional element's holder.
    rust: Option<String>,
    fields: Vec<Field>,
}

/// One field of a [`Struct`].
struct Field {
    /// The Rust field it stores (`key` and `value` in an entry or holder).
    rust: String,
    /// Its Cap'n Proto name.
    name: String,
    wire: Wire,
    /// `Option` in Rust: a null pointer, or a `none`/`value` union for a scalar.
    optional: bool,
}

/// What a field or list element holds on the wire.
#[derive(Clone)]
enum Wire {
    Bool,
    Int,
    Float,
    Text,
    /// A generated Rust struct's struct (an index into [`Plan::structs`]).
    Struct(usize),
    List(Box<Wire>),
    /// A list of this entry struct, sorted by key.
    Map(usize),
    /// An optional element: this holder struct, whose one field `value` is optional.
    Holder(usize),
}

impl Wire {
    fn is_scalar(&self) -> bool {
        matches!(self, Wire::Bool | Wire::Int | Wire::Float)
    }

    /// The [`crate::payload::fields::Digest`] method that folds a scalar or text.
    fn digest(&self) -> &'static str {
        match self {
            Wire::Bool => "flag",
            Wire::Int => "int",
            Wire::Float => "float",
            _ => "text",
        }
    }
}

/// The schema of one data payload: its structs, every generated Rust struct's first and in the
/// order the module writes them.
struct Plan {
    structs: Vec<Struct>,
    /// Cap'n Proto type names taken.
    types: BTreeSet<String>,
    /// The struct of each generated Rust struct.
    by_rust: BTreeMap<String, usize>,
}

/// `name`, or `name2`, `name3`, ... : the first that `taken` does not hold, which it then does.
fn claim(taken: &mut BTreeSet<String>, name: String) -> String {
    let mut unique = name.clone();
    let mut suffix = 2;
    while taken.contains(&unique) {
        unique = format!("{name}{suffix}");
        suffix += 1;
    }
    taken.insert(unique.clone());
    unique
}

/// The field names a struct's fields cannot take.
fn field_scope() -> BTreeSet<String> {
    UNESCAPED.iter().map(|name| name.to_string()).collect()
}

/// The Cap'n Proto name of a generated Rust field, before telling equal names apart.
fn field_name(rust: &str) -> String {
    let mut name = String::new();
    for part in rust.split('_').filter(|part| !part.is_empty()) {
        if name.is_empty() {
            name.push_str(part);
        } else {
            name.push_str(&upper_first(part));
        }
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert(0, 'n');
    }
    name
}

/// The Cap'n Proto name of a generated Rust struct, before telling equal names apart.
fn type_name(rust: &str) -> String {
    let name = rust.replace('_', "");
    if name.starts_with(|c: char| c.is_ascii_uppercase()) {
        name
    } else {
        format!("T{name}")
    }
}

fn upper_first(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// capnpc-rust's snake_case of a name (`camel_to_snake_case`): the accessors' suffix.
fn snake(name: &str) -> String {
    let mut snake = String::new();
    for (index, c) in name.chars().enumerate() {
        if c.is_uppercase() && index > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    snake
}

/// capnpc-rust's module of a struct or group (`module_name`).
fn module(name: &str) -> String {
    let snake = snake(name);
    if ESCAPED.contains(&snake.as_str()) {
        snake + "_"
    } else {
        snake
    }
}

impl Plan {
    fn new(module: &TypedModule) -> Plan {
        let mut plan = Plan {
            structs: Vec::new(),
            types: BUILT_IN
                .iter()
                .map(|name| name.to_string())
                .chain(UNESCAPED.iter().map(|name| upper_first(name)))
                .collect(),
            by_rust: BTreeMap::new(),
        };
        for record in module.structs {
            let name = claim(&mut plan.types, type_name(&record.name));
            plan.by_rust.insert(record.name.clone(), plan.structs.len());
            plan.structs.push(Struct {
                name,
                rust: Some(record.name.clone()),
                fields: Vec::new(),
            });
        }
        let data = module.data;
        let record = &data.typed_schema.record;
        let path = &mut String::from("$");
        let record_struct = match &record.kind {
            Kind::Record(_) => plan.record(module, record, path),
            // The `Record { value }` (or `Document`) the generated module wraps other values in.
            _ => {
                let wrapper = if data.is_list() { "Record" } else { module.root };
                let index = plan.by_rust[wrapper];
                let optional = optional_value(record);
                let hint = plan.structs[index].name.clone();
                let wire = plan.wire(module, record, &hint, path);
                plan.structs[index].fields = vec![plan.field(&mut field_scope(), "value", wire, optional)];
                index
            }
        };
        if data.is_list() {
            let index = plan.by_rust[module.root];
            let wire = Wire::List(Box::new(Wire::Struct(record_struct)));
            plan.structs[index].fields = vec![plan.field(&mut field_scope(), "records", wire, false)];
        }
        plan
    }

    fn field(&self, taken: &mut BTreeSet<String>, rust: &str, wire: Wire, optional: bool) -> Field {
        Field {
            rust: rust.to_string(),
            name: claim(taken, field_name(rust)),
            wire,
            optional,
        }
    }

    /// The fields of the record `ty` at `path`, into its struct.
    fn record(&mut self, module: &TypedModule, ty: &Type, path: &mut String) -> usize {
        let Kind::Record(fields) = &ty.kind else {
            unreachable!("called for records")
        };
        let named = &module.records[path.as_str()];
        let index = self.by_rust[&named.name];
        // A struct shared by several paths is planned once.
        if !self.structs[index].fields.is_empty() {
            return index;
        }
        let parent = path.len();
        let mut taken = field_scope();
        let mut planned = Vec::new();
        for (field, rust) in fields.iter().zip(&named.fields) {
            push_key(path, &field.name);
            let hint = format!("{}{}", self.structs[index].name, upper_first(&field_name(rust)));
            let wire = self.wire(module, &field.ty, &hint, path);
            path.truncate(parent);
            let optional = optional_value(&field.ty) || field.optional();
            planned.push(self.field(&mut taken, rust, wire, optional));
        }
        self.structs[index].fields = planned;
        index
    }

    /// What holds a value of `ty` at `path` (its `Option` aside); a helper struct is named
    /// after `hint`.
    fn wire(&mut self, module: &TypedModule, ty: &Type, hint: &str, path: &mut String) -> Wire {
        let parent = path.len();
        let wire = match &ty.kind {
            Kind::Null | Kind::String => Wire::Text,
            Kind::Bool => Wire::Bool,
            Kind::Int => Wire::Int,
            Kind::Float => Wire::Float,
            Kind::Record(_) => Wire::Struct(self.record(module, ty, path)),
            Kind::Array(item) => {
                path.push_str("[]");
                let element = if optional_value(item) {
                    Wire::Holder(self.helper(module, item, &format!("{hint}Item"), path, false))
                } else {
                    self.wire(module, item, hint, path)
                };
                Wire::List(Box::new(element))
            }
            Kind::Map(value) => {
                path.push_str(".*");
                Wire::Map(self.helper(module, value, &format!("{hint}Entry"), path, true))
            }
            Kind::Union(_) => unreachable!("plan() refuses conflicts"),
        };
        path.truncate(parent);
        wire
    }

    /// A map's entry struct (`key`, `value`) or an optional element's holder (`value`).
    fn helper(
        &mut self,
        module: &TypedModule,
        value: &Type,
        hint: &str,
        path: &mut String,
        entry: bool,
    ) -> usize {
        let name = claim(&mut self.types, hint.to_string());
        let index = self.structs.len();
        self.structs.push(Struct {
            name: name.clone(),
            rust: None,
            fields: Vec::new(),
        });
        let wire = self.wire(module, value, &name, path);
        let mut taken = field_scope();
        let mut fields = Vec::new();
        if entry {
            fields.push(self.field(&mut taken, "key", Wire::Text, false));
        }
        fields.push(self.field(&mut taken, "value", wire, optional_value(value)));
        self.structs[index].fields = fields;
        index
    }
}

/// Whether a value of `ty` is an `Option` in Rust (a null seen, or only nulls).
fn optional_value(ty: &Type) -> bool {
    ty.nullable() || ty.kind == Kind::Null
}

impl Plan {
    /// The `.capnp` file: its id derived from the structs, so the same schema has the same file.
    fn text(&self, origin: &str) -> String {
        let mut body = String::new();
        for declared in &self.structs {
            if declared.rust.is_none() {
                let what = if declared.fields.len() == 2 {
                    "An entry of a map; the entries are sorted by key."
                } else {
                    "An element of a list that may be null: `value` unset (or `none`) for a null."
                };
                writeln!(body, "\n# {what}").expect("a String takes writes");
            } else {
                body.push('\n');
            }
            writeln!(body, "struct {} {{", declared.name).expect("a String takes writes");
            let mut ordinal = 0;
            for field in &declared.fields {
                let ty = self.type_text(&field.wire);
                if field.optional && field.wire.is_scalar() {
                    writeln!(
                        body,
                        "  {} :union {{\n    none @{ordinal} :Void;\n    value @{} :{ty};\n  }}",
                        field.name,
                        ordinal + 1
                    )
                    .expect("a String takes writes");
                    ordinal += 2;
                } else {
                    writeln!(body, "  {} @{ordinal} :{ty};", field.name).expect("a String takes writes");
                    ordinal += 1;
                }
            }
            body.push_str("}\n");
        }
        // A file id has its top bit set.
        let id = u64::from_str_radix(&crate::codegen::key_of(&[&body]), 16).expect("key_of is hex") | 1 << 63;
        format!(
            "# Generated by `serbench gen` for --typed: the types of {} (src/main.rs), each struct\n# named after its Rust struct, each field after its Rust field (src/format/capnp/typed.rs).\n@0x{id:016x};\n{body}",
            rust_comment(origin)
        )
    }

    fn type_text(&self, wire: &Wire) -> String {
        match wire {
            Wire::Bool => "Bool".to_string(),
            Wire::Int => "Int64".to_string(),
            Wire::Float => "Float64".to_string(),
            Wire::Text => "Text".to_string(),
            Wire::Struct(index) | Wire::Holder(index) => self.structs[*index].name.clone(),
            Wire::List(element) => format!("List({})", self.type_text(element)),
            Wire::Map(entry) => format!("List({})", self.structs[*entry].name),
        }
    }
}

/// The `.capnp`, the build step and the generated code of one data payload's module.
pub fn items(module: &TypedModule) -> TypedItems {
    let plan = Plan::new(module);
    let index = module.index;
    let writer = Writer {
        plan: &plan,
        file: format!("data_{index}_capnp"),
    };
    let mut rust = format!(
        "/// The Cap'n Proto types of `capnp/data_{index}.capnp`, generated by capnpc-rust (build/capnp.rs).\n#[allow(clippy::all, dead_code, unused_imports, unused_parens, non_camel_case_types, non_snake_case)]\npub mod data_{index}_capnp {{\n    include!(concat!(env!(\"OUT_DIR\"), \"/data_{index}_capnp.rs\"));\n}}\n\n"
    );
    for (number, declared) in plan.structs.iter().enumerate() {
        if declared.rust.is_some() {
            rust.push_str(&writer.struct_model(number));
        }
    }
    rust.push_str(&writer.routed(module));
    if let Ok(target) = module.update {
        rust.push_str(&writer.native(module, target));
    }
    TypedItems {
        files: vec![(
            format!("capnp/data_{index}.capnp"),
            plan.text(&module.data.origin),
        )],
        rust,
        build_crates: vec!["capnpc"],
        build_step: Some(BuildStep {
            name: "capnp",
            source: BUILD_STEP,
        }),
    }
}

/// The generated crate's build step: each `capnp/<stem>.capnp` into `OUT_DIR/<stem>_capnp.rs`.
const BUILD_STEP: &str = r#"//! Generated by `serbench gen`: compiles every capnp/*.capnp with the Cap'n Proto compiler
//! (`capnp`, on the PATH) and capnpc-rust's generator (capnpc's CompilerCommand) into
//! OUT_DIR/<stem>_capnp.rs, for the module `<stem>` of src/main.rs, which includes it.

pub fn run() {
    println!("cargo:rerun-if-changed=capnp");
    let mut schemas: Vec<std::path::PathBuf> = std::fs::read_dir("capnp")
        .expect("capnp/ is readable")
        .map(|entry| entry.expect("capnp/ lists").path())
        .collect();
    schemas.sort();
    for schema in schemas {
        let stem = schema.file_stem().and_then(|stem| stem.to_str()).expect("a file name");
        capnpc::CompilerCommand::new()
            .src_prefix("capnp")
            .file(&schema)
            .default_parent_module(vec![stem.to_string()])
            .run()
            .unwrap_or_else(|error| panic!("capnp cannot compile {}: {error}", schema.display()));
    }
}
"#;

/// A place as a whole expression: `*item` for `(*item)`.
fn bare(place: &str) -> &str {
    place
        .strip_prefix('(')
        .and_then(|inner| inner.strip_suffix(')'))
        .unwrap_or(place)
}

/// `block` indented by `levels` of four spaces.
fn indent(block: &str, levels: usize) -> String {
    let pad = "    ".repeat(levels);
    block
        .lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_string()
            } else {
                format!("{pad}{line}\n")
            }
        })
        .collect()
}

/// Writes the Rust of one payload's [`Plan`]. A value's place is an expression of its Rust type
/// (`self.id`, `(*item)`); readers are `reader`, builders `builder`, lists `list`.
struct Writer<'a> {
    plan: &'a Plan,
    /// The module capnpc-rust's code is included in.
    file: String,
}

impl Writer<'_> {
    /// The module of struct `index` in the generated code.
    fn path(&self, index: usize) -> String {
        format!("{}::{}", self.file, module(&self.plan.structs[index].name))
    }

    fn rust(&self, index: usize) -> &str {
        self.plan.structs[index]
            .rust
            .as_deref()
            .expect("a struct of a generated Rust struct")
    }

    /// The `Which` of an optional scalar's union group.
    fn which(&self, holder: usize, field: &Field) -> String {
        format!("{}::{}::Which", self.path(holder), module(&field.name))
    }

    /// The generated Rust struct's [`super::StructModel`].
    fn struct_model(&self, index: usize) -> String {
        let declared = &self.plan.structs[index];
        let rust = self.rust(index);
        let path = self.path(index);
        let used = |name: &'static str| if declared.fields.is_empty() { "_" } else { name };
        let mut build = String::new();
        let mut read = String::new();
        let mut fold = String::new();
        for field in &declared.fields {
            build.push_str(&self.build_field(field, &format!("self.{}", field.rust)));
            writeln!(read, "{}: {},", field.rust, self.read_field(index, field))
                .expect("a String takes writes");
            fold.push_str(&self.fold_field(index, field));
        }
        format!(
            "impl serbench::format::capnp::StructModel for {rust} {{\n    type Owned = {path}::Owned;\n\n    fn build(&self, {builder}: {path}::Builder<'_>) -> anyhow::Result<()> {{\n{build}        Ok(())\n    }}\n\n    fn read({reader}: {path}::Reader<'_>) -> anyhow::Result<Self> {{\n        Ok({rust} {{\n{read}        }})\n    }}\n\n    fn fold({reader}: {path}::Reader<'_>, {digest}: &mut serbench::payload::fields::Digest) -> anyhow::Result<()> {{\n{fold}        Ok(())\n    }}\n}}\n\n",
            builder = used("mut builder"),
            reader = used("reader"),
            digest = used("digest"),
            build = indent(&build, 2),
            read = indent(&read, 3),
            fold = indent(&fold, 2),
        )
    }

    /// The root's [`super::Routed`]: for a list the count and the first record's envelope, for
    /// a document its envelope ([`crate::payload::fields::FieldValue`]'s rule).
    fn routed(&self, module: &TypedModule) -> String {
        let root = self.plan.by_rust[module.root];
        let path = self.path(root);
        let envelope = |index: usize| -> String {
            self.plan.structs[index]
                .fields
                .iter()
                .map(|field| self.envelope_field(index, field))
                .collect()
        };
        let body = if module.data.is_list() {
            let records = &self.plan.structs[root].fields[0];
            let Wire::List(element) = &records.wire else {
                unreachable!("a list's root holds the list of records")
            };
            let Wire::Struct(record) = **element else {
                unreachable!("records are structs")
            };
            let first = envelope(record);
            let first = if first.is_empty() {
                String::new()
            } else {
                format!(
                    "if let Some(reader) = records.try_get(0) {{\n{}}}\n",
                    indent(&first, 1)
                )
            };
            format!(
                "let records = reader.get_{}()?;\ndigest.count(records.len() as usize);\n{first}",
                snake(&records.name)
            )
        } else {
            envelope(root)
        };
        let (reader, digest) = if body.is_empty() {
            ("_", "_")
        } else {
            ("reader", "digest")
        };
        format!(
            "/// `access-partial` reads what a router reads.\nimpl serbench::format::capnp::Routed for {root_type} {{\n    fn route({reader}: {path}::Reader<'_>, {digest}: &mut serbench::payload::fields::Digest) -> anyhow::Result<()> {{\n{body}        Ok(())\n    }}\n}}\n\n",
            root_type = module.root,
            body = indent(&body, 2),
        )
    }

    /// The root's [`super::Native`]: the struct that holds the target, reached through checked
    /// reads. Its signature takes the trait's aliases: their lifetime is bound as the trait's.
    fn native(&self, module: &TypedModule, target: &crate::payload::data::UpdateTarget) -> String {
        let root = self.plan.by_rust[module.root];
        let mut reach = String::new();
        if module.data.is_list() {
            writeln!(
                reach,
                "let reader = reader.get_{}()?.try_get(0).ok_or_else(|| anyhow::anyhow!(\"no record to update\"))?;",
                snake(&self.plan.structs[root].fields[0].name)
            )
            .expect("a String takes writes");
        }
        let mut field = None;
        for (rust_field, holder) in target.fields.iter().zip(&target.types) {
            if let Some(field) = field {
                writeln!(reach, "let reader = reader.get_{}()?;", snake(field))
                    .expect("a String takes writes");
            }
            let index = self.plan.by_rust[holder];
            let found = self.plan.structs[index]
                .fields
                .iter()
                .find(|planned| planned.rust == *rust_field)
                .expect("the target's fields are the structs'");
            field = Some(&found.name);
        }
        let holder = self.plan.by_rust[target.types.last().expect("a target has a field")];
        format!(
            "/// `update` writes `{target_path}` in place.\nimpl serbench::format::capnp::Native for {root_type} {{\n    type UpdateStruct = {holder}::Owned;\n    const UPDATE_FIELD: &'static str = {name};\n\n    fn update_struct(\n        reader: serbench::format::capnp::Reader<'_, Self>,\n    ) -> anyhow::Result<serbench::format::capnp::UpdateReader<'_, Self>> {{\n{reach}        Ok(reader)\n    }}\n}}\n",
            target_path = rust_comment(&target.path),
            root_type = module.root,
            holder = self.path(holder),
            name = rust_str(field.expect("a target has a field")),
            reach = indent(&reach, 2),
        )
    }
}

/// Encoding: statements that set a field of `builder` from a place.
impl Writer<'_> {
    fn build_field(&self, field: &Field, place: &str) -> String {
        let name = snake(&field.name);
        if field.optional && field.wire.is_scalar() {
            format!(
                "match {} {{\n    Some(value) => builder.reborrow().init_{name}().set_value(value),\n    None => builder.reborrow().init_{name}().set_none(()),\n}}\n",
                bare(place)
            )
        } else if field.optional {
            // `None` leaves the pointer null.
            format!(
                "if let Some(value) = &{place} {{\n{}}}\n",
                indent(&self.build_value(&field.wire, &name, "(*value)"), 1)
            )
        } else {
            self.build_value(&field.wire, &name, place)
        }
    }

    fn build_value(&self, wire: &Wire, name: &str, place: &str) -> String {
        let list = |fill: String| {
            format!(
                "{{\n    let mut list = builder.reborrow().init_{name}(serbench::format::capnp::length({place}.len())?);\n{}}}\n",
                indent(&fill, 1)
            )
        };
        match wire {
            Wire::Bool | Wire::Int | Wire::Float => format!("builder.set_{name}({});\n", bare(place)),
            Wire::Text => format!("builder.set_{name}({place}.as_str());\n"),
            Wire::Struct(_) => format!(
                "serbench::format::capnp::StructModel::build(&{place}, builder.reborrow().init_{name}())?;\n"
            ),
            Wire::List(element) => list(self.fill_list(element, place)),
            Wire::Map(entry) => list(self.fill_entries(*entry, place)),
            Wire::Holder(_) => unreachable!("a holder is a list's element"),
        }
    }

    /// Sets each element of `list` from the `Vec` at `values`.
    fn fill_list(&self, element: &Wire, values: &str) -> String {
        let set = match element {
            Wire::Bool | Wire::Int | Wire::Float => "list.set(index, *item);\n".to_string(),
            Wire::Text => "list.set(index, item.as_str());\n".to_string(),
            Wire::Struct(_) => {
                "serbench::format::capnp::StructModel::build(item, list.reborrow().get(index))?;\n"
                    .to_string()
            }
            Wire::List(inner) => format!(
                "let mut list = list.reborrow().init(index, serbench::format::capnp::length(item.len())?);\n{}",
                self.fill_list(inner, "(*item)")
            ),
            Wire::Map(entry) => format!(
                "let mut list = list.reborrow().init(index, serbench::format::capnp::length(item.len())?);\n{}",
                self.fill_entries(*entry, "(*item)")
            ),
            Wire::Holder(holder) => format!(
                "let mut builder = list.reborrow().get(index);\n{}",
                self.build_field(&self.plan.structs[*holder].fields[0], "(*item)")
            ),
        };
        format!(
            "for (index, item) in (0..).zip(&{values}) {{\n{}}}\n",
            indent(&set, 1)
        )
    }

    /// Sets each entry of `list` from the `BTreeMap` at `map`, in its (key) order.
    fn fill_entries(&self, entry: usize, map: &str) -> String {
        let value = &self.plan.structs[entry].fields[1];
        format!(
            "for (index, (key, value)) in (0..).zip(&{map}) {{\n    let mut builder = list.reborrow().get(index);\n    builder.set_key(key.as_str());\n{}}}\n",
            indent(&self.build_field(value, "(*value)"), 1)
        )
    }
}

/// Decoding: the expression of a field's owned value, read from `reader`.
impl Writer<'_> {
    fn read_field(&self, holder: usize, field: &Field) -> String {
        let name = snake(&field.name);
        if field.optional && field.wire.is_scalar() {
            let which = self.which(holder, field);
            format!(
                "match reader.get_{name}().which()? {{\n    {which}::None(()) => None,\n    {which}::Value(value) => Some(value),\n}}"
            )
        } else if field.optional {
            format!(
                "if reader.has_{name}() {{\n    Some({})\n}} else {{\n    None\n}}",
                self.read_value(&field.wire, &name)
            )
        } else {
            self.read_value(&field.wire, &name)
        }
    }

    fn read_value(&self, wire: &Wire, name: &str) -> String {
        match wire {
            Wire::Bool | Wire::Int | Wire::Float => format!("reader.get_{name}()"),
            Wire::Text => format!("serbench::format::capnp::string(reader.get_{name}())?"),
            Wire::Struct(index) => format!(
                "<{} as serbench::format::capnp::StructModel>::read(reader.get_{name}()?)?",
                self.rust(*index)
            ),
            Wire::List(element) => self.read_list(element, &format!("reader.get_{name}()?")),
            Wire::Map(entry) => self.read_entries(*entry, &format!("reader.get_{name}()?")),
            Wire::Holder(_) => unreachable!("a holder is a list's element"),
        }
    }

    /// The `Vec` of the list reader `list`.
    fn read_list(&self, element: &Wire, list: &str) -> String {
        let item = match element {
            Wire::Bool | Wire::Int | Wire::Float => return format!("{list}.iter().collect::<Vec<_>>()"),
            Wire::Text => "serbench::format::capnp::string(item)?".to_string(),
            Wire::Struct(index) => format!(
                "<{} as serbench::format::capnp::StructModel>::read(item)?",
                self.rust(*index)
            ),
            Wire::List(inner) => self.read_list(inner, "item?"),
            Wire::Map(entry) => self.read_entries(*entry, "item?"),
            Wire::Holder(holder) => format!(
                "{{\n    let reader = item;\n{}\n}}",
                indent(
                    &self.read_field(*holder, &self.plan.structs[*holder].fields[0]),
                    1
                )
                .trim_end()
            ),
        };
        format!("{list}.iter().map(|item| anyhow::Ok({item})).collect::<anyhow::Result<Vec<_>>>()?")
    }

    /// The `BTreeMap` of the entries' list reader `list`.
    fn read_entries(&self, entry: usize, list: &str) -> String {
        let value = self.read_field(entry, &self.plan.structs[entry].fields[1]);
        format!(
            "{list}.iter().map(|reader| anyhow::Ok((serbench::format::capnp::string(reader.get_key())?, {value}))).collect::<anyhow::Result<BTreeMap<_, _>>>()?"
        )
    }
}

/// Access: statements folding a field read in place from `reader` into `digest`, whole
/// (`access-all`) or as its record's envelope (`access-partial`).
impl Writer<'_> {
    fn fold_field(&self, holder: usize, field: &Field) -> String {
        self.fold_with(holder, field, false)
    }

    fn envelope_field(&self, holder: usize, field: &Field) -> String {
        self.fold_with(holder, field, true)
    }

    fn fold_with(&self, holder: usize, field: &Field, envelope: bool) -> String {
        let name = snake(&field.name);
        if field.optional && field.wire.is_scalar() {
            let which = self.which(holder, field);
            return format!(
                "match reader.get_{name}().which()? {{\n    {which}::None(()) => digest.flag(false),\n    {which}::Value(value) => {{\n        digest.flag(true);\n        digest.{}(value);\n    }}\n}}\n",
                field.wire.digest()
            );
        }
        let value = if envelope {
            self.envelope_value(&field.wire, &name)
        } else {
            self.fold_value(&field.wire, &name)
        };
        if !field.optional {
            return value;
        }
        let present = format!("digest.flag(reader.has_{name}());\n");
        if value.is_empty() {
            present
        } else {
            format!("{present}if reader.has_{name}() {{\n{}}}\n", indent(&value, 1))
        }
    }

    fn fold_value(&self, wire: &Wire, name: &str) -> String {
        match wire {
            Wire::Bool | Wire::Int | Wire::Float => {
                format!("digest.{}(reader.get_{name}());\n", wire.digest())
            }
            Wire::Text => format!("digest.text(serbench::format::capnp::text(reader.get_{name}())?);\n"),
            Wire::Struct(index) => format!(
                "<{} as serbench::format::capnp::StructModel>::fold(reader.get_{name}()?, digest)?;\n",
                self.rust(*index)
            ),
            Wire::List(element) => format!(
                "{{\n    let list = reader.get_{name}()?;\n{}}}\n",
                indent(&self.fold_list(element), 1)
            ),
            Wire::Map(entry) => format!(
                "{{\n    let list = reader.get_{name}()?;\n{}}}\n",
                indent(&self.fold_entries(*entry), 1)
            ),
            Wire::Holder(_) => unreachable!("a holder is a list's element"),
        }
    }

    /// A value's part of its record's envelope: a scalar or text itself, a list's or map's count,
    /// nothing of a nested record.
    fn envelope_value(&self, wire: &Wire, name: &str) -> String {
        match wire {
            Wire::List(_) | Wire::Map(_) => format!("digest.count(reader.get_{name}()?.len() as usize);\n"),
            Wire::Struct(_) => String::new(),
            _ => self.fold_value(wire, name),
        }
    }

    /// Folds the list reader `list`: its count, then each element.
    fn fold_list(&self, element: &Wire) -> String {
        let each = match element {
            Wire::Bool | Wire::Int | Wire::Float => format!("digest.{}(item);\n", element.digest()),
            Wire::Text => "digest.text(serbench::format::capnp::text(item)?);\n".to_string(),
            Wire::Struct(index) => format!(
                "<{} as serbench::format::capnp::StructModel>::fold(item, digest)?;\n",
                self.rust(*index)
            ),
            Wire::List(inner) => format!("let list = item?;\n{}", self.fold_list(inner)),
            Wire::Map(entry) => format!("let list = item?;\n{}", self.fold_entries(*entry)),
            Wire::Holder(holder) => format!(
                "let reader = item;\n{}",
                self.fold_field(*holder, &self.plan.structs[*holder].fields[0])
            ),
        };
        format!(
            "digest.count(list.len() as usize);\nfor item in list.iter() {{\n{}}}\n",
            indent(&each, 1)
        )
    }

    /// Folds the entries' list reader `list`: its count, then each key and value.
    fn fold_entries(&self, entry: usize) -> String {
        let value = self.fold_field(entry, &self.plan.structs[entry].fields[1]);
        format!(
            "digest.count(list.len() as usize);\nfor reader in list.iter() {{\n    digest.text(serbench::format::capnp::text(reader.get_key())?);\n{}}}\n",
            indent(&value, 1)
        )
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::codegen::rust::{Derives, module as rust_module};
    use crate::payload::data::{DataPayload, Request};

    fn data(name: &str, text: &str, maps: &[&str]) -> &'static DataPayload {
        let mut request = Request::default();
        request.overrides.maps = maps.iter().map(|path| path.to_string()).collect();
        DataPayload::from_bytes(name.into(), "d", text.as_bytes().to_vec(), &request).unwrap()
    }

    /// The schema file and the Rust items of `data`, as the generated crate gets them.
    fn items_of(data: &'static DataPayload) -> TypedItems {
        let plain = Derives::default();
        let generated = rust_module(data, &plain);
        items(&TypedModule {
            data,
            index: 3,
            root: generated.root,
            structs: &generated.structs,
            update: &generated.update,
            records: &generated.records,
        })
    }

    /// Keys Rust and Cap'n Proto cannot spell, two keys of one name, an optional scalar, a
    /// nullable text, a map with null values, a list of lists with null elements.
    const EVENTS: &str = concat!(
        r#"{"3ds": true, "type": "a", "userId": "u", "user_id": 1, "über": 1.5, "dyn": 2, "counts": {"k": 1, "j": null}, "grid": [[1, null]], "price": 2.5, "ref": null}"#,
        "\n",
        r#"{"3ds": false, "type": "b", "userId": "v", "user_id": 2, "über": 2.5, "dyn": 3, "counts": {}, "grid": [], "ref": "r"}"#,
        "\n",
    );

    #[test]
    fn the_schema_holds_a_struct_per_generated_struct_and_the_rust_its_accessors() {
        let items = items_of(data("events.ndjson", EVENTS, &["$.counts"]));
        let (path, text) = &items.files[0];
        assert_eq!(path, "capnp/data_3.capnp");
        for expected in [
            "struct Record {\n  n3ds @0 :Bool;\n  counts @1 :List(RecordCountsEntry);\n  dyn2 @2 :Int64;\n  grid @3 :List(List(RecordGridItem));\n  price :union {\n    none @4 :Void;\n    value @5 :Float64;\n  }\n  ref @6 :Text;\n  type @7 :Text;\n  userId @8 :Text;\n  userId2 @9 :Int64;\n  u00fcBer @10 :Float64;\n}\n",
            "struct Records {\n  records @0 :List(Record);\n}\n",
            "struct RecordCountsEntry {\n  key @0 :Text;\n  value :union {\n    none @1 :Void;\n    value @2 :Int64;\n  }\n}\n",
            "struct RecordGridItem {\n  value :union {\n    none @0 :Void;\n    value @1 :Int64;\n  }\n}\n",
        ] {
            assert!(text.contains(expected), "{expected:?} not in:\n{text}");
        }
        let id = text.lines().find(|line| line.starts_with("@0x")).unwrap();
        let number = u64::from_str_radix(id.trim_start_matches("@0x").trim_end_matches(';'), 16).unwrap();
        assert!(number >> 63 == 1, "a file id has its top bit set: {id}");
        assert_eq!(
            items_of(data("again.ndjson", EVENTS, &["$.counts"])).files[0]
                .1
                .lines()
                .nth(2),
            Some(id)
        );
        for expected in [
            "builder.set_n3ds(self._3ds);",
            "user_id_2: reader.get_user_id2(),",
            "match reader.get_price().which()? {",
            "data_3_capnp::record::price::Which::Value(value) => Some(value),",
            "ref_: if reader.has_ref() {",
            "const UPDATE_FIELD: &'static str = \"dyn2\";",
            "include!(concat!(env!(\"OUT_DIR\"), \"/data_3_capnp.rs\"));",
        ] {
            assert!(
                items.rust.contains(expected),
                "{expected:?} not in:\n{}",
                items.rust
            );
        }
        assert_eq!(items.build_crates, ["capnpc"]);
        assert_eq!(items.build_step.map(|step| step.name), Some("capnp"));
    }

    #[test]
    fn names_map_to_capnp_spellings_that_never_collide() {
        let mut taken = field_scope();
        let fields: Vec<String> = [
            "user_id",
            "user_id_2",
            "user_id2",
            "_3ds",
            "type_",
            "u00fc_ber",
            "dyn_",
            "empty_key",
            "a_1b",
        ]
        .map(|rust| claim(&mut taken, field_name(rust)))
        .into();
        assert_eq!(
            fields,
            [
                "userId", "userId2", "userId22", "n3ds", "type", "u00fcBer", "dyn2", "emptyKey", "a1b"
            ]
        );
        let accessors: Vec<String> = fields.iter().map(|name| snake(name)).collect();
        assert_eq!(
            accessors,
            [
                "user_id",
                "user_id2",
                "user_id22",
                "n3ds",
                "type",
                "u00fc_ber",
                "dyn2",
                "empty_key",
                "a1b"
            ]
        );
        let mut types: BTreeSet<String> = BUILT_IN.iter().map(|name| name.to_string()).collect();
        types.extend(UNESCAPED.iter().map(|name| upper_first(name)));
        let named: Vec<String> = ["Self_", "Self2", "Self_2", "Text", "Dyn", "ContentType", "T3ds"]
            .map(|rust| claim(&mut types, type_name(rust)))
            .into();
        assert_eq!(
            named,
            ["Self", "Self2", "Self22", "Text2", "Dyn2", "ContentType", "T3ds"]
        );
        let modules: Vec<String> = named.iter().map(|name| module(name)).collect();
        assert_eq!(
            modules,
            [
                "self_",
                "self2",
                "self22",
                "text2",
                "dyn2",
                "content_type",
                "t3ds"
            ]
        );
        assert_eq!(module("type"), "type_");
    }

    /// The names this file predicts are those capnpc-rust writes: the generated schema of awkward
    /// keys through the capnp tool and the plugin. Skipped without them (SERBENCH_REQUIRE_CAPNP=1
    /// makes that a failure, as for the committed code).
    #[test]
    fn capnpc_rust_writes_the_predicted_names() {
        let plugin = Command::new("capnpc-rust")
            .stdin(std::process::Stdio::null())
            .output();
        if !runs("capnp") || plugin.is_err() {
            assert!(
                std::env::var_os("SERBENCH_REQUIRE_CAPNP").is_none(),
                "capnp or capnpc-rust missing"
            );
            println!("skipped: needs capnp and capnpc-rust on the PATH");
            return;
        }
        let payload = data(
            "names.ndjson",
            r#"{"3ds": 1, "type": "t", "userId": 1, "user_id": 2, "user_id2": 3, "über": 1.5, "dyn": {"self": {"text": {"a": 1}}}, "opt": null, "gen": [null, 1]}
{"3ds": 2, "type": "u", "userId": 1, "user_id": 2, "user_id2": 3, "über": 2.5, "dyn": {"self": {"text": {"a": 2}}}, "opt": 1, "gen": []}
"#,
            &[],
        );
        let plain = Derives::default();
        let generated = rust_module(payload, &plain);
        let typed = TypedModule {
            data: payload,
            index: 0,
            root: generated.root,
            structs: &generated.structs,
            update: &generated.update,
            records: &generated.records,
        };
        let plan = Plan::new(&typed);
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("data_0.capnp"), plan.text("names.ndjson")).unwrap();
        let output = Command::new("capnp")
            .current_dir(folder.path())
            .args(["compile", "-orust:.", "data_0.capnp"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let rust = std::fs::read_to_string(folder.path().join("data_0_capnp.rs")).unwrap();
        for declared in &plan.structs {
            let name = module(&declared.name);
            assert!(rust.contains(&format!("pub mod {name} {{")), "no module {name}");
            for field in &declared.fields {
                let accessor = snake(&field.name);
                assert!(
                    rust.contains(&format!("pub fn get_{accessor}(self)")),
                    "no get_{accessor}"
                );
                if field.optional && field.wire.is_scalar() {
                    let group = module(&field.name);
                    assert!(rust.contains(&format!("pub mod {group} {{")), "no group {group}");
                } else if field.optional {
                    assert!(
                        rust.contains(&format!("pub fn has_{accessor}(&self)")),
                        "no has_{accessor}"
                    );
                }
            }
        }
        let names: Vec<&str> = plan
            .structs
            .iter()
            .map(|declared| declared.name.as_str())
            .collect();
        for expected in ["Self", "Text2", "Dyn2", "RecordGenItem"] {
            assert!(names.contains(&expected), "{expected} not in {names:?}");
        }
        assert!(
            !rust.contains("pub mod dyn ") && !rust.contains("pub mod gen "),
            "unescaped keyword modules"
        );
    }

    /// Records nested `depth` deep (`{"n": {"n": ... {"leaf": 1}}}`), as a list of two or one document.
    fn nested(depth: usize, list: bool) -> &'static DataPayload {
        let record = (1..depth).fold(r#"{"leaf": 1}"#.to_string(), |inner, _| {
            format!(r#"{{"n": {inner}}}"#)
        });
        let (name, text) = if list {
            ("n.ndjson", format!("{record}\n{record}\n"))
        } else {
            ("n.json", record)
        };
        data(name, &text, &[])
    }

    /// The limits measured through real builds: a list's records fail to read from 63 records
    /// deep, a document from 65; a schema does not say which it is, so 63 is refused for both.
    #[test]
    fn nesting_past_the_readers_limit_is_a_reason() {
        for list in [true, false] {
            assert_eq!(too_deep(&nested(62, list).typed_schema), None);
            let path = too_deep(&nested(63, list).typed_schema).unwrap();
            assert_eq!(path, format!("${}", ".n".repeat(62)));
        }
        let reason = refuses(nested(63, true));
        assert!(
            reason
                .as_deref()
                .is_some_and(|reason| reason.contains("nesting limit of 64"))
                || !runs("capnp"),
            "{reason:?}"
        );
        // Lists count too, and a list's struct elements once more: a list of records each in a
        // list of records, ..., fails to read from 32 lists deep.
        let alternating = |depth: usize| {
            let inner = (0..depth).fold("1".to_string(), |inner, _| format!("[{{\"l\": {inner}}}]"));
            format!("{{\"l\": {inner}}}\n")
        };
        assert_eq!(
            too_deep(&data("a.ndjson", &alternating(31), &[]).typed_schema),
            None
        );
        let path = too_deep(&data("a.ndjson", &alternating(32), &[]).typed_schema).unwrap();
        assert_eq!(path, format!("${}.l", ".l[]".repeat(31)));
        // A null among the records makes a holder struct per element, which reads the record.
        let nullable = |depth: usize| {
            let inner = (0..depth).fold("1".to_string(), |inner, _| format!("[{{\"l\": {inner}}}, null]"));
            format!("{{\"l\": {inner}}}\n")
        };
        assert_eq!(too_deep(&data("h.ndjson", &nullable(20), &[]).typed_schema), None);
        let path = too_deep(&data("h.ndjson", &nullable(21), &[]).typed_schema).unwrap();
        assert_eq!(path, format!("${}", ".l[]".repeat(21)));
        // capnpc-rust reads the schema with the same limit: 58 lists in one type, not 59.
        let lists = |depth: usize| format!("{{\"l\": {}1{}}}\n", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(
            long_list_run(&data("l.ndjson", &lists(58), &[]).typed_schema),
            None
        );
        assert_eq!(too_deep(&data("l.ndjson", &lists(58), &[]).typed_schema), None);
        assert_eq!(
            long_list_run(&data("l.ndjson", &lists(59), &[]).typed_schema).as_deref(),
            Some("$.l")
        );
        // An optional element's holder struct ends a run.
        let broken = format!("{{\"l\": {}[null, 1]{}}}\n", "[".repeat(40), "]".repeat(40));
        assert_eq!(long_list_run(&data("b.ndjson", &broken, &[]).typed_schema), None);
        assert!(!runs("capnp-is-not-a-program-here"));
    }
}

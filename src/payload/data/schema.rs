//! Schema inference over every record of a data file: one [`Type`] that every record fits.
//!
//! Scalars are booleans, integers (`i64`; [`super::read`] refuses larger ones), floats and
//! strings; an integer and a float at the same path make a float. Arrays have one element
//! type. An object is a **record** (named fields, each optional when some object lacks it)
//! unless its keys look like data, which makes it a **map** (string keys to one value type):
//!
//! - a key is not a field name as Avro and Protobuf spell them (`[A-Za-z_][A-Za-z0-9_]*`:
//!   `"138586341"`, `"content-type"`, `"über"`), or
//! - the objects at that path have more than [`MAX_FIELDS`] distinct keys between them, or
//! - their shape across the file is a dictionary's ([`dictionary`]): at least
//!   [`MIN_DICTIONARY_KEYS`] distinct keys whose values are of one shape, and either each object
//!   holds at most a quarter of them (currencies by code, each country having one or two) or the
//!   keys all look like codes (`eng`, `fra`, … `zho`: one length of at most three letters of one
//!   case, or one length of hex digits and dashes, ids),
//!
//! and `--map PATH` / `--record PATH` force either at a path (`$.events`, `$.items[].tags`,
//! `$.index.*` for a map's values). Once one object at a path is a map, the path is a map.
//! Records with the same keys at several paths are then one type ([`unify_records`]).
//!
//! Nulls are counted, not typed: a field that is null in some records is *nullable*, one that
//! some records lack is *optional*, and a path that only ever held null (or an empty array's
//! elements, never seen) has kind [`Kind::Null`]. Two kinds at one path (a string here, a
//! number there) are a **conflict**: the path's kind is a [`Kind::Union`] of them, and each
//! format says what it does with it (Avro writes a union; formats without one are unsupported
//! for the data, naming the path).

use std::collections::BTreeMap;

use serde_json::Value;

use super::read::push_key;

/// A record with more distinct keys than this is read as a map.
pub const MAX_FIELDS: usize = 256;

/// The fewest distinct keys a dictionary's shape ([`dictionary`]) makes a map of: a record with
/// fewer (`x`, `y`, `z`; `min`, `max`, `avg`, `sum`) stays one, as a person would write it.
pub const MIN_DICTIONARY_KEYS: usize = 8;

/// The type of the values at one path, with how many values were seen there.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: Kind,
    /// Values seen at the path, nulls included.
    pub seen: u64,
    pub nulls: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Only nulls seen, or nothing at all (the elements of arrays that were always empty).
    Null,
    Bool,
    Int,
    Float,
    String,
    Array(Box<Type>),
    /// String keys to values of one type.
    Map(Box<Type>),
    /// Named fields, sorted by name (serde_json's order).
    Record(Vec<Field>),
    /// A conflict: values of these kinds (never null, never two of one kind) at one path.
    Union(Vec<Type>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Type,
    /// The objects of its record that lack it: counted, not derived from its record's count,
    /// since a record type shared by several paths ([`unify_records`]) sums both over them.
    pub absent: u64,
}

impl Type {
    /// No value seen yet: what merging starts from.
    pub const NOTHING: Type = Type {
        kind: Kind::Null,
        seen: 0,
        nulls: 0,
    };

    /// The values that were not null.
    pub fn present(&self) -> u64 {
        self.seen - self.nulls
    }

    pub fn nullable(&self) -> bool {
        self.nulls > 0
    }

    fn of(kind: Kind) -> Type {
        Type {
            kind,
            seen: 1,
            nulls: 0,
        }
    }
}

impl Field {
    /// Whether some objects of its record lack the field.
    pub fn optional(&self) -> bool {
        self.absent > 0
    }
}

impl Kind {
    /// A word for messages and the summary.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::String => "string",
            Kind::Array(_) => "array",
            Kind::Map(_) => "map",
            Kind::Record(_) => "record",
            Kind::Union(_) => "union",
        }
    }

    /// Kinds that merge rather than conflict share a rank (integers and floats); unions list
    /// their kinds in rank order.
    fn rank(&self) -> u8 {
        match self {
            Kind::Null => 0,
            Kind::Bool => 1,
            Kind::Int | Kind::Float => 2,
            Kind::String => 3,
            Kind::Array(_) => 4,
            Kind::Map(_) => 5,
            Kind::Record(_) => 6,
            Kind::Union(_) => 7,
        }
    }
}

/// Paths where the map-or-record rule is overridden (`--map`, `--record`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub maps: Vec<String>,
    pub records: Vec<String>,
}

/// Why a path is a map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapReason {
    /// `--map PATH`.
    Forced,
    /// This key is not a field name.
    Key(String),
    /// The objects there have this many distinct keys.
    ManyKeys(usize),
    /// `keys` distinct keys with values of one shape, each of the `objects` holding few of them:
    /// `held` keys in all.
    Sparse { keys: usize, objects: u64, held: u64 },
    /// `keys` distinct keys with values of one shape, all looking like codes or ids (`example`).
    Codes { keys: usize, example: String },
}

/// A conflict: the path and the kinds seen there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub path: String,
    pub kinds: Vec<&'static str>,
}

/// The generated Rust struct of one record of a schema (`--typed`), which the schema writers
/// name their typed records and fields after.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedRecord {
    pub name: String,
    /// Its fields' names, in the schema's (key) order.
    pub fields: Vec<String>,
}

/// The scalar an `update` arm changes in place ([`update_target`]'s rule), within one record (the
/// document, or the first record of a list).
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateTarget {
    /// The fields from the record down to the scalar, as the generated structs name them.
    pub fields: Vec<String>,
    /// The struct holding each of `fields` (the record's first).
    pub types: Vec<String>,
    /// The scalar's schema path (`$.meta.count`: from the record, `$` being the record).
    pub path: String,
    /// `i64` or `f64`.
    pub scalar: &'static str,
}

/// The scalar an `update` changes: the first integer field met breadth-first through the
/// record's required fields and required nested records (never inside a list, a map or an
/// optional value), else the first such float.
pub fn update_target(record: &Type, records: &BTreeMap<String, TypedRecord>) -> Result<UpdateTarget, String> {
    for (wanted, scalar) in [(Kind::Int, "i64"), (Kind::Float, "f64")] {
        let mut level: Vec<(String, Vec<String>, Vec<String>, &Type)> =
            vec![("$".to_string(), Vec::new(), Vec::new(), record)];
        while !level.is_empty() {
            let mut next = Vec::new();
            for (path, fields, types, ty) in level {
                let (Kind::Record(members), Some(named)) = (&ty.kind, records.get(&path)) else {
                    continue;
                };
                for (field, rust) in members.iter().zip(&named.fields) {
                    if field.ty.nullable() || field.optional() {
                        continue;
                    }
                    let mut at = path.clone();
                    push_key(&mut at, &field.name);
                    let mut fields = fields.clone();
                    fields.push(rust.clone());
                    let mut types = types.clone();
                    types.push(named.name.clone());
                    if field.ty.kind == wanted {
                        return Ok(UpdateTarget {
                            fields,
                            types,
                            path: at,
                            scalar,
                        });
                    }
                    if matches!(field.ty.kind, Kind::Record(_)) {
                        next.push((at, fields, types, &field.ty));
                    }
                }
            }
            level = next;
        }
    }
    Err("no required integer or float outside lists, maps and optional values to update in place".to_string())
}

/// The inferred schema of a data file.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// The type of one record (the whole document, for a single document); its path is `$`.
    pub record: Type,
    /// The paths read as maps and why, in the order first decided.
    pub maps: Vec<(String, MapReason)>,
    /// The paths whose records are one type ([`unify_records`]), each group in path order.
    pub shared: Vec<Vec<String>>,
}

impl Schema {
    /// Infers the type every one of `records` fits.
    pub fn infer(records: &[Value], overrides: &Overrides) -> Schema {
        Schema::infer_with(records, overrides, false)
    }

    /// The schema of the generated Rust types (`--typed`): as [`Schema::infer`], but a key that is
    /// not a field name (`3ds`, `content-type`) leaves its object a record, since the generated
    /// code maps such keys to Rust names ([`crate::codegen::names`]), unless it is a number
    /// (`"138586341"`, an id: a struct per id would be a field per record); the other map rules
    /// hold.
    pub fn infer_typed(records: &[Value], overrides: &Overrides) -> Schema {
        Schema::infer_with(records, overrides, true)
    }

    fn infer_with(records: &[Value], overrides: &Overrides, any_key: bool) -> Schema {
        let mut inference = Inference {
            overrides,
            any_key,
            maps: Vec::new(),
            path: String::from("$"),
        };
        let mut record = inference.infer_all(records);
        inference.dictionaries(&mut record);
        let shared = unify_records(&mut record, overrides);
        Schema {
            record,
            maps: inference.maps,
            shared,
        }
    }

    /// Every conflict, in path order.
    pub fn conflicts(&self) -> Vec<Conflict> {
        let mut conflicts = Vec::new();
        walk(&self.record, &mut String::from("$"), &mut |path, ty, _| {
            if let Kind::Union(branches) = &ty.kind {
                conflicts.push(Conflict {
                    path: path.to_string(),
                    kinds: branches.iter().map(|branch| branch.kind.name()).collect(),
                });
            }
        });
        conflicts
    }

    /// How deeply arrays, maps and records nest (a scalar record is depth 0).
    pub fn depth(&self) -> usize {
        fn depth(ty: &Type) -> usize {
            match &ty.kind {
                Kind::Array(item) | Kind::Map(item) => 1 + depth(item),
                Kind::Record(fields) => 1 + fields.iter().map(|field| depth(&field.ty)).max().unwrap_or(0),
                Kind::Union(branches) => branches.iter().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        depth(&self.record)
    }
}

/// Calls `visit` on every type of the tree with its path (`$`, `.field`, `[]` for array
/// elements, `.*` for map values), parents first, and the record it is a field of, if it is one.
/// A union's branches are not paths of their own: their children are under the union's path.
pub fn walk(ty: &Type, path: &mut String, visit: &mut impl FnMut(&str, &Type, Option<&Type>)) {
    visit(path, ty, None);
    walk_children(ty, path, visit);
}

fn walk_children(ty: &Type, path: &mut String, visit: &mut impl FnMut(&str, &Type, Option<&Type>)) {
    let parent = path.len();
    match &ty.kind {
        Kind::Array(item) => {
            path.push_str("[]");
            walk(item, path, visit);
        }
        Kind::Map(value) => {
            path.push_str(".*");
            walk(value, path, visit);
        }
        Kind::Record(fields) => {
            for field in fields {
                super::read::push_key(path, &field.name);
                visit(path, &field.ty, Some(ty));
                walk_children(&field.ty, path, visit);
                path.truncate(parent);
            }
        }
        Kind::Union(branches) => {
            for branch in branches {
                walk_children(branch, path, visit);
            }
        }
        Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String => {}
    }
    path.truncate(parent);
}

/// The first path whose generated type is an `Option` (a field some records lack, a null).
pub fn first_option(schema: &Schema) -> Option<String> {
    let mut found = None;
    walk(&schema.record, &mut String::from("$"), &mut |path, ty, parent| {
        let optional = parent.is_some_and(|parent| {
            matches!(&parent.kind, Kind::Record(fields) if fields.iter().any(|field| std::ptr::eq(&field.ty, ty) && field.optional()))
        });
        if found.is_none() && (optional || ty.nullable() || (ty.kind == Kind::Null && ty.seen > 0)) {
            found = Some(path.to_string());
        }
    });
    found
}

/// The first path inside more than `limit` nested values of the kinds `counts` counts (the
/// root's own included): where a format's nesting limit is passed.
pub fn first_deeper_than(schema: &Schema, limit: usize, counts: fn(&Kind) -> bool) -> Option<String> {
    fn visit(
        ty: &Type,
        path: &mut String,
        depth: usize,
        limit: usize,
        counts: fn(&Kind) -> bool,
    ) -> Option<String> {
        let depth = depth + usize::from(counts(&ty.kind));
        if depth > limit {
            return Some(path.clone());
        }
        let parent = path.len();
        let below = |path: &mut String, step: &str, ty: &Type| {
            path.push_str(step);
            let found = visit(ty, path, depth, limit, counts);
            path.truncate(parent);
            found
        };
        match &ty.kind {
            Kind::Array(item) => below(path, "[]", item),
            Kind::Map(value) => below(path, ".*", value),
            Kind::Union(branches) => branches
                .iter()
                .find_map(|branch| visit(branch, path, depth, limit, counts)),
            Kind::Record(fields) => fields.iter().find_map(|field| {
                super::read::push_key(path, &field.name);
                let found = visit(&field.ty, path, depth, limit, counts);
                path.truncate(parent);
                found
            }),
            _ => None,
        }
    }
    visit(&schema.record, &mut String::from("$"), 0, limit, counts)
}

/// The first record with no field (`{}`).
pub fn first_empty_record(schema: &Schema) -> Option<String> {
    let mut found = None;
    walk(
        &schema.record,
        &mut String::from("$"),
        &mut |path, ty: &Type, _| {
            if found.is_none() && matches!(&ty.kind, Kind::Record(fields) if fields.is_empty()) {
                found = Some(path.to_string());
            }
        },
    );
    found
}

/// The branch of a union (its kinds, in their order) a value of it belongs to: an integer is
/// in the integer branch, or the float branch when there is none.
pub fn branch_of(value: &Value, branches: &[Type]) -> Option<usize> {
    let fits = |kind: &Kind| match (value, kind) {
        (Value::Number(number), Kind::Int) => !number.is_f64(),
        (Value::Number(_), Kind::Float)
        | (Value::Bool(_), Kind::Bool)
        | (Value::String(_), Kind::String)
        | (Value::Array(_), Kind::Array(_))
        | (Value::Object(_), Kind::Map(_) | Kind::Record(_)) => true,
        _ => false,
    };
    branches.iter().position(|branch| fits(&branch.kind))
}

/// Why the record of `fields`, held by `objects` objects, has a dictionary's shape by its keys
/// alone (the values' one shape is [`one_shape`]'s to say): at least [`MIN_DICTIONARY_KEYS`]
/// distinct keys, and each object holding at most a quarter of them ([`MapReason::Sparse`]) or
/// every key looking like a code ([`MapReason::Codes`]).
pub fn dictionary(objects: u64, fields: &[Field]) -> Option<MapReason> {
    let keys = fields.len();
    if keys < MIN_DICTIONARY_KEYS {
        return None;
    }
    let held: u64 = fields.iter().map(|field| field.ty.seen).sum();
    if objects >= 2 && 4 * held <= keys as u64 * objects {
        return Some(MapReason::Sparse { keys, objects, held });
    }
    let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
    looks_like_codes(&names).then(|| MapReason::Codes {
        keys,
        example: names[0].to_string(),
    })
}

/// Whether every key is a code or an id: all of one length and either at most three ASCII
/// letters of one case (`eng`, `AED`, `de`), or digits, or hex digits and dashes (a hash, a
/// UUID).
fn looks_like_codes(keys: &[&str]) -> bool {
    let Some(first) = keys.first() else {
        return false;
    };
    let same_length = keys.iter().all(|key| key.len() == first.len());
    let all = |test: fn(u8) -> bool| keys.iter().all(|key| key.bytes().all(test));
    same_length
        && !first.is_empty()
        && ((first.len() <= 3
            && (all(|byte| byte.is_ascii_lowercase()) || all(|byte| byte.is_ascii_uppercase())))
            || all(|byte| byte.is_ascii_digit())
            || (first.len() >= 8 && all(|byte| byte.is_ascii_hexdigit() || byte == b'-')))
}

/// Whether the values of a would-be map are of one shape: no conflict among or inside them, and,
/// when they are records, each holding at least half of their fields between them (one record
/// type, not several types side by side).
fn one_shape(value: &Type) -> bool {
    let mut conflict = false;
    walk(value, &mut String::new(), &mut |_, ty, _| {
        conflict |= matches!(ty.kind, Kind::Union(_));
    });
    let filled = match &value.kind {
        Kind::Record(fields) if !fields.is_empty() => {
            let held: u64 = fields.iter().map(|field| field.ty.seen).sum();
            2 * held >= fields.len() as u64 * value.present()
        }
        _ => true,
    };
    !conflict && filled
}

/// Makes the records of one set of keys at several paths one type, as a person writes one `User`
/// for every place a user appears: their kinds merged (a field absent or null at one place is
/// optional or nullable at all), each place keeping its own count and nulls. Records that would
/// merge into a conflict (`id` a number here, a string there) are separate types, a record
/// holding a conflict stays its own, and so does the root record. The counts inside a shared
/// type are over all its places. Repeated while a merge changes the shape of records inside
/// others; returns the groups' paths. The generated code and schemas name each shape once
/// ([`shape_key`]).
pub fn unify_records(record: &mut Type, overrides: &Overrides) -> Vec<Vec<String>> {
    let mut groups = Vec::new();
    for round in 0..8 {
        let mut nodes = Vec::new();
        collect_records(record, &mut String::from("$"), &mut nodes);
        let mut by_keys: BTreeMap<Vec<&str>, Vec<usize>> = BTreeMap::new();
        for (index, (_, path, ty)) in nodes.iter().enumerate() {
            let Kind::Record(fields) = &ty.kind else {
                unreachable!("records only")
            };
            if path == "$" {
                continue;
            }
            by_keys
                .entry(fields.iter().map(|field| field.name.as_str()).collect())
                .or_default()
                .push(index);
        }
        let mut merged_at: BTreeMap<usize, Kind> = BTreeMap::new();
        groups.clear();
        for members in by_keys.values().filter(|members| members.len() > 1) {
            let mut inference = Inference {
                overrides,
                any_key: false,
                maps: Vec::new(),
                path: nodes[members[0]].1.clone(),
            };
            // Each record joins the first cluster it merges with without a conflict.
            let mut clusters: Vec<(Type, Vec<usize>)> = Vec::new();
            for &index in members.iter().filter(|&&index| unions(nodes[index].2) == 0) {
                let ty = nodes[index].2;
                let joined = clusters.iter_mut().find_map(|(merged, cluster)| {
                    let candidate = inference.merge(merged.clone(), ty.clone());
                    (unions(&candidate) == 0).then(|| {
                        *merged = candidate;
                        cluster.push(index);
                    })
                });
                if joined.is_none() {
                    clusters.push((ty.clone(), vec![index]));
                }
            }
            for (merged, cluster) in clusters.into_iter().filter(|(_, cluster)| cluster.len() > 1) {
                groups.push(cluster.iter().map(|&index| nodes[index].1.clone()).collect());
                let shape = shape_key(&merged);
                // The first round counts each type over all its places; later ones merge again
                // only where a shape changed (counting twice what was merged before).
                if round == 0 || cluster.iter().any(|&index| shape_key(nodes[index].2) != shape) {
                    for &index in &cluster {
                        merged_at.insert(nodes[index].0, merged.kind.clone());
                    }
                }
            }
        }
        if merged_at.is_empty() {
            break;
        }
        replace_records(record, &mut 0, &mut merged_at);
    }
    groups
}

/// Every record of the tree with its preorder number (every type counted, as [`walk`] visits
/// them) and path, root first.
fn collect_records<'t>(ty: &'t Type, path: &mut String, out: &mut Vec<(usize, String, &'t Type)>) {
    fn visit<'t>(
        ty: &'t Type,
        path: &mut String,
        number: &mut usize,
        out: &mut Vec<(usize, String, &'t Type)>,
    ) {
        if matches!(ty.kind, Kind::Record(_)) {
            out.push((*number, path.clone(), ty));
        }
        *number += 1;
        children(ty, path, number, out);
    }
    fn children<'t>(
        ty: &'t Type,
        path: &mut String,
        number: &mut usize,
        out: &mut Vec<(usize, String, &'t Type)>,
    ) {
        let parent = path.len();
        match &ty.kind {
            Kind::Array(item) => {
                path.push_str("[]");
                visit(item, path, number, out);
            }
            Kind::Map(value) => {
                path.push_str(".*");
                visit(value, path, number, out);
            }
            Kind::Record(fields) => {
                for field in fields {
                    super::read::push_key(path, &field.name);
                    visit(&field.ty, path, number, out);
                    path.truncate(parent);
                }
            }
            Kind::Union(branches) => {
                for branch in branches {
                    children(branch, path, number, out);
                }
            }
            Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String => {}
        }
        path.truncate(parent);
    }
    visit(ty, path, &mut 0, out);
}

/// Puts the merged kinds in place, by preorder number as [`collect_records`] numbered them; a
/// record replaced whole takes its merged inner records along, so the numbers inside it are
/// skipped (the next round sees them).
fn replace_records(ty: &mut Type, number: &mut usize, merged: &mut BTreeMap<usize, Kind>) {
    let mine = *number;
    *number += 1;
    if let Some(kind) = merged.remove(&mine) {
        *number += count_types(ty) - 1;
        ty.kind = kind;
        return;
    }
    replace_children(ty, number, merged);
}

/// [`replace_records`] below `ty`, numbered as [`walk`] numbers its children (a union's branches
/// are not numbered, their children are).
fn replace_children(ty: &mut Type, number: &mut usize, merged: &mut BTreeMap<usize, Kind>) {
    match &mut ty.kind {
        Kind::Array(item) | Kind::Map(item) => replace_records(item, number, merged),
        Kind::Record(fields) => {
            for field in fields {
                replace_records(&mut field.ty, number, merged);
            }
        }
        Kind::Union(branches) => {
            for branch in branches {
                replace_children(branch, number, merged);
            }
        }
        Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String => {}
    }
}

/// The types [`walk`] visits in `ty`, itself included.
fn count_types(ty: &Type) -> usize {
    let mut count = 0;
    walk(ty, &mut String::new(), &mut |_, _, _| count += 1);
    count
}

/// The conflicts inside `ty`.
fn unions(ty: &Type) -> usize {
    let mut count = 0;
    walk(ty, &mut String::new(), &mut |_, ty, _| {
        count += usize::from(matches!(ty.kind, Kind::Union(_)));
    });
    count
}

/// What generated code and schemas see of a type, counts aside: kinds, field names, which fields
/// are optional and which values inside nullable (not whether this place is: that is the
/// field's). Equal keys are one generated type.
pub fn shape_key(ty: &Type) -> String {
    let mut key = String::new();
    shape_of_kind(&ty.kind, &mut key);
    key
}

fn shape(ty: &Type, key: &mut String) {
    shape_of_kind(&ty.kind, key);
    if ty.nullable() {
        key.push('~');
    }
}

fn shape_of_kind(kind: &Kind, key: &mut String) {
    match kind {
        Kind::Array(item) => {
            key.push('[');
            shape(item, key);
            key.push(']');
        }
        Kind::Map(value) => {
            key.push('{');
            shape(value, key);
            key.push('}');
        }
        Kind::Record(fields) => {
            key.push('(');
            for field in fields {
                key.push_str(&format!(
                    "{:?}{}:",
                    field.name,
                    if field.optional() { "?" } else { "" }
                ));
                shape(&field.ty, key);
                key.push(',');
            }
            key.push(')');
        }
        Kind::Union(branches) => {
            key.push('<');
            for branch in branches {
                shape(branch, key);
                key.push('|');
            }
            key.push('>');
        }
        kind => key.push_str(kind.name()),
    }
}

/// Whether Avro and Protobuf can use `key` as a field name.
pub fn is_field_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Unique type names in CamelCase, for the records and wrappers of the schema writers (Avro
/// record names, Protobuf message names).
#[derive(Debug, Default)]
pub struct Names(std::collections::BTreeSet<String>);

impl Names {
    /// `hint` in CamelCase (`retweeted_status` is `RetweetedStatus`), numbered from 2 when taken.
    pub fn unique(&mut self, hint: &str) -> String {
        let mut base: String = hint
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(|word| {
                let mut chars = word.chars();
                let first = chars.next().expect("not empty").to_ascii_uppercase();
                std::iter::once(first).chain(chars).collect::<String>()
            })
            .collect();
        if !base.starts_with(|c: char| c.is_ascii_alphabetic()) {
            base.insert(0, 'T');
        }
        let mut name = base.clone();
        let mut number = 2;
        while !self.0.insert(name.clone()) {
            name = format!("{base}{number}");
            number += 1;
        }
        name
    }
}

struct Inference<'o> {
    overrides: &'o Overrides,
    /// A key that is not a field name may name a field ([`Schema::infer_typed`]).
    any_key: bool,
    maps: Vec<(String, MapReason)>,
    /// The path of the value being inferred or merged.
    path: String,
}

impl Inference<'_> {
    /// Whether `key` makes its object a map: it is not a field name, or, for the generated types
    /// (which map any key to a Rust name), it is a number (`"138586341"`: an id, not a name).
    fn key_of_map(&self, key: &str) -> bool {
        if self.any_key {
            !key.is_empty() && key.bytes().all(|byte| byte.is_ascii_digit())
        } else {
            !is_field_name(key)
        }
    }

    fn infer(&mut self, value: &Value) -> Type {
        match value {
            Value::Null => Type {
                kind: Kind::Null,
                seen: 1,
                nulls: 1,
            },
            Value::Bool(_) => Type::of(Kind::Bool),
            Value::Number(number) if number.is_f64() => Type::of(Kind::Float),
            Value::Number(_) => Type::of(Kind::Int),
            Value::String(_) => Type::of(Kind::String),
            Value::Array(items) => {
                let parent = self.path.len();
                self.path.push_str("[]");
                let item = self.infer_all(items);
                self.path.truncate(parent);
                Type::of(Kind::Array(Box::new(item)))
            }
            Value::Object(object) => {
                let forced_record = self.overrides.records.contains(&self.path);
                let reason = if self.overrides.maps.contains(&self.path) {
                    Some(MapReason::Forced)
                } else if forced_record {
                    None
                } else if let Some(key) = object.keys().find(|key| self.key_of_map(key)) {
                    Some(MapReason::Key(key.clone()))
                } else if object.len() > MAX_FIELDS {
                    Some(MapReason::ManyKeys(object.len()))
                } else {
                    None
                };
                let parent = self.path.len();
                let kind = match reason {
                    Some(reason) => {
                        self.note_map(reason);
                        self.path.push_str(".*");
                        Kind::Map(Box::new(self.infer_all(object.values())))
                    }
                    None => Kind::Record(
                        object
                            .iter()
                            .map(|(name, value)| {
                                super::read::push_key(&mut self.path, name);
                                let ty = self.infer(value);
                                self.path.truncate(parent);
                                Field {
                                    name: name.clone(),
                                    ty,
                                    absent: 0,
                                }
                            })
                            .collect(),
                    ),
                };
                self.path.truncate(parent);
                Type::of(kind)
            }
        }
    }

    /// The type all of `values` (at the current path) fit.
    fn infer_all<'v>(&mut self, values: impl IntoIterator<Item = &'v Value>) -> Type {
        let mut merged = Type::NOTHING;
        for value in values {
            let one = self.infer(value);
            merged = self.merge(merged, one);
        }
        merged
    }

    /// Makes a map of every record whose shape is a dictionary's ([`dictionary`]), top down (a
    /// map's values are judged at their own path, `.*`), unless `--record` keeps it.
    fn dictionaries(&mut self, ty: &mut Type) {
        if let Kind::Record(fields) = &ty.kind
            && !self.overrides.records.contains(&self.path)
            && let Some(reason) = dictionary(ty.present(), fields)
        {
            let maps = self.maps.clone();
            let map = self.record_to_map(fields.clone());
            if matches!(&map, Kind::Map(value) if one_shape(value)) {
                self.note_map(reason);
                ty.kind = map;
            } else {
                self.maps = maps;
            }
        }
        let parent = self.path.len();
        match &mut ty.kind {
            Kind::Array(item) => {
                self.path.push_str("[]");
                self.dictionaries(item);
            }
            Kind::Map(value) => {
                self.path.push_str(".*");
                self.dictionaries(value);
            }
            Kind::Record(fields) => {
                for field in fields {
                    super::read::push_key(&mut self.path, &field.name);
                    self.dictionaries(&mut field.ty);
                    self.path.truncate(parent);
                }
            }
            Kind::Union(branches) => {
                for branch in branches {
                    self.dictionaries(branch);
                }
            }
            Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String => {}
        }
        self.path.truncate(parent);
    }

    fn note_map(&mut self, reason: MapReason) {
        if !self.maps.iter().any(|(path, _)| path == &self.path) {
            self.maps.push((self.path.clone(), reason));
        }
    }

    /// The type both `a`'s and `b`'s values fit, at the current path.
    fn merge(&mut self, a: Type, b: Type) -> Type {
        let (a_present, b_present) = (a.present(), b.present());
        let (seen, nulls) = (a.seen + b.seen, a.nulls + b.nulls);
        let kind = self.merge_kinds(a.kind, a_present, b.kind, b_present);
        Type { kind, seen, nulls }
    }

    fn merge_kinds(&mut self, a: Kind, a_present: u64, b: Kind, b_present: u64) -> Kind {
        match (a, b) {
            (Kind::Null, kind) | (kind, Kind::Null) => kind,
            (Kind::Bool, Kind::Bool) => Kind::Bool,
            (Kind::String, Kind::String) => Kind::String,
            (Kind::Int, Kind::Int) => Kind::Int,
            (Kind::Int | Kind::Float, Kind::Int | Kind::Float) => Kind::Float,
            (Kind::Array(a), Kind::Array(b)) => {
                let parent = self.path.len();
                self.path.push_str("[]");
                let item = self.merge(*a, *b);
                self.path.truncate(parent);
                Kind::Array(Box::new(item))
            }
            (Kind::Map(a), Kind::Map(b)) => Kind::Map(Box::new(self.merge_values(*a, *b))),
            (Kind::Record(a), Kind::Record(b)) => {
                let fields = self.merge_fields(a, a_present, b, b_present);
                let forced_record = self.overrides.records.contains(&self.path);
                if fields.len() > MAX_FIELDS && !forced_record {
                    self.note_map(MapReason::ManyKeys(fields.len()));
                    self.record_to_map(fields)
                } else {
                    Kind::Record(fields)
                }
            }
            (Kind::Record(fields), Kind::Map(value)) | (Kind::Map(value), Kind::Record(fields)) => {
                let Kind::Map(record) = self.record_to_map(fields) else {
                    unreachable!("record_to_map makes a map")
                };
                Kind::Map(Box::new(self.merge_values(*value, *record)))
            }
            (Kind::Union(branches), other) => self.union(branches, other, b_present),
            (other, Kind::Union(branches)) => self.union(branches, other, a_present),
            (a, b) => {
                let mut branches = vec![
                    Type {
                        kind: a,
                        seen: a_present,
                        nulls: 0,
                    },
                    Type {
                        kind: b,
                        seen: b_present,
                        nulls: 0,
                    },
                ];
                branches.sort_by_key(|branch| branch.kind.rank());
                Kind::Union(branches)
            }
        }
    }

    /// Adds `other` (`present` values of it), or every branch of it when it is a union, to a
    /// union's branches.
    fn union(&mut self, mut branches: Vec<Type>, other: Kind, present: u64) -> Kind {
        let added = match other {
            Kind::Union(others) => others,
            kind => vec![Type {
                kind,
                seen: present,
                nulls: 0,
            }],
        };
        for branch in added {
            match branches
                .iter()
                .position(|existing| existing.kind.rank() == branch.kind.rank())
            {
                Some(index) => {
                    let existing = branches.remove(index);
                    let merged = self.merge(existing, branch);
                    branches.push(merged);
                }
                None => branches.push(branch),
            }
        }
        branches.sort_by_key(|branch| branch.kind.rank());
        Kind::Union(branches)
    }

    /// Map values at the current path (`.*` below it).
    fn merge_values(&mut self, a: Type, b: Type) -> Type {
        let parent = self.path.len();
        self.path.push_str(".*");
        let merged = self.merge(a, b);
        self.path.truncate(parent);
        merged
    }

    fn record_to_map(&mut self, fields: Vec<Field>) -> Kind {
        let parent = self.path.len();
        self.path.push_str(".*");
        let mut value = Type::NOTHING;
        for field in fields {
            value = self.merge(value, field.ty);
        }
        self.path.truncate(parent);
        Kind::Map(Box::new(value))
    }

    /// Both field lists (sorted by name, of `a_present` and `b_present` objects) merged; a field
    /// in one only is absent from the other's objects too.
    fn merge_fields(&mut self, a: Vec<Field>, a_present: u64, b: Vec<Field>, b_present: u64) -> Vec<Field> {
        let mut merged = Vec::with_capacity(a.len().max(b.len()));
        let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
        let parent = self.path.len();
        loop {
            let field = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.name == y.name => {
                    let (x, y) = (a.next().expect("peeked"), b.next().expect("peeked"));
                    super::read::push_key(&mut self.path, &x.name);
                    let ty = self.merge(x.ty, y.ty);
                    self.path.truncate(parent);
                    Field {
                        name: x.name,
                        ty,
                        absent: x.absent + y.absent,
                    }
                }
                (Some(x), Some(y)) if x.name < y.name => only(a.next(), b_present),
                (Some(_), Some(_)) => only(b.next(), a_present),
                (Some(_), None) => only(a.next(), b_present),
                (None, Some(_)) => only(b.next(), a_present),
                (None, None) => break,
            };
            merged.push(field);
        }
        merged
    }
}

/// A field of one side of a merge only: the other side's `others` objects lack it too.
fn only(field: Option<Field>, others: u64) -> Field {
    let mut field = field.expect("peeked");
    field.absent += others;
    field
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn infer(records: Value) -> Schema {
        let Value::Array(records) = records else {
            panic!("records")
        };
        Schema::infer(&records, &Overrides::default())
    }

    fn field<'t>(ty: &'t Type, name: &str) -> &'t Field {
        let Kind::Record(fields) = &ty.kind else {
            panic!("{ty:?} is not a record")
        };
        fields
            .iter()
            .find(|field| field.name == name)
            .unwrap_or_else(|| panic!("no field {name}"))
    }

    /// The generated structs' names of every record of `schema`, as codegen names them: here,
    /// each field as its key and each record `R` + its path.
    fn structs(ty: &Type, path: &mut String, out: &mut BTreeMap<String, TypedRecord>) {
        match &ty.kind {
            Kind::Record(fields) => {
                out.insert(
                    path.clone(),
                    TypedRecord {
                        name: format!("R{path}"),
                        fields: fields.iter().map(|field| field.name.clone()).collect(),
                    },
                );
                for field in fields {
                    let parent = path.len();
                    push_key(path, &field.name);
                    structs(&field.ty, path, out);
                    path.truncate(parent);
                }
            }
            Kind::Array(item) | Kind::Map(item) => {
                let parent = path.len();
                path.push_str("[]");
                structs(item, path, out);
                path.truncate(parent);
            }
            _ => {}
        }
    }

    fn target(records: Value) -> Result<UpdateTarget, String> {
        let schema = infer(records);
        let mut named = BTreeMap::new();
        structs(&schema.record, &mut String::from("$"), &mut named);
        update_target(&schema.record, &named)
    }

    #[test]
    fn the_update_target_is_the_first_required_integer_breadth_first_then_a_float() {
        // `a` is optional, `b` a float, `c` nullable, `l` a list: the integer is `m.n`.
        let found = target(json!([
            {"a": 1, "b": 1.5, "c": 1, "l": [{"x": 1}], "m": {"k": "s", "n": 4}},
            {"b": 2.5, "c": null, "l": [], "m": {"k": "t", "n": 5}}
        ]))
        .unwrap();
        assert_eq!(found.path, "$.m.n");
        assert_eq!(found.fields, ["m", "n"]);
        assert_eq!(found.types, ["R$", "R$.m"]);
        assert_eq!(found.scalar, "i64");
        // A shallower integer wins over a deeper one, whatever the key order.
        assert_eq!(target(json!([{"a": {"b": 1}, "z": 2}])).unwrap().path, "$.z");
        // No integer anywhere: the first float.
        let float = target(json!([{"a": "s", "b": 1.5}])).unwrap();
        assert_eq!((float.path.as_str(), float.scalar), ("$.b", "f64"));
        // Only strings, lists and optional numbers: none, with the rule as the reason.
        let none = target(json!([{"a": "s", "l": [1], "o": 1}, {"a": "t", "l": []}])).unwrap_err();
        assert!(none.contains("no required integer or float"), "{none}");
    }

    #[test]
    fn scalars_integers_widen_to_floats_and_counts_are_kept() {
        let schema = infer(json!([{"a": 1, "b": true, "c": "x"}, {"a": 2.5, "b": false, "c": "y"}]));
        let record = &schema.record;
        assert_eq!((record.seen, record.nulls), (2, 0));
        assert_eq!(field(record, "a").ty.kind, Kind::Float);
        assert_eq!(field(record, "b").ty.kind, Kind::Bool);
        assert_eq!(field(record, "c").ty.kind, Kind::String);
        assert!(schema.conflicts().is_empty());
    }

    #[test]
    fn optional_and_nullable_fields_are_told_apart() {
        let schema = infer(json!([{"a": 1, "n": null}, {"n": 2}, {"a": 3, "n": null}]));
        let record = &schema.record;
        let a = field(record, "a");
        assert!(a.optional() && !a.ty.nullable());
        let n = field(record, "n");
        assert!(!n.optional() && n.ty.nullable());
        assert_eq!((n.ty.kind.clone(), n.ty.seen, n.ty.nulls), (Kind::Int, 3, 2));
    }

    #[test]
    fn an_all_null_field_and_an_empty_array_have_kind_null() {
        let schema = infer(json!([{"z": null, "e": []}, {"z": null, "e": []}]));
        let z = field(&schema.record, "z");
        assert_eq!((z.ty.kind.clone(), z.ty.seen, z.ty.nulls), (Kind::Null, 2, 2));
        let Kind::Array(item) = &field(&schema.record, "e").ty.kind else {
            panic!()
        };
        assert_eq!((item.kind.clone(), item.seen), (Kind::Null, 0));
        // No records at all: nothing seen.
        let empty = infer(json!([]));
        assert_eq!(empty.record.kind, Kind::Null);
        assert_eq!(empty.record.seen, 0);
    }

    #[test]
    fn mixed_types_are_a_conflict_reported_with_its_path() {
        let schema = infer(json!([
            {"id": "a1", "tags": [1, "x"]},
            {"id": 7, "tags": []},
            {"id": null, "tags": [true]}
        ]));
        assert_eq!(
            schema.conflicts(),
            vec![
                Conflict {
                    path: "$.id".into(),
                    kinds: vec!["int", "string"]
                },
                Conflict {
                    path: "$.tags[]".into(),
                    kinds: vec!["bool", "int", "string"]
                },
            ]
        );
        let id = field(&schema.record, "id");
        assert_eq!((id.ty.seen, id.ty.nulls), (3, 1));
        let Kind::Union(branches) = &id.ty.kind else {
            panic!()
        };
        assert_eq!(
            branches.iter().map(|branch| branch.seen).collect::<Vec<_>>(),
            [1, 1]
        );
        // A union absorbs a later value of a kind it already has; ints and floats still merge.
        let merged = infer(json!([{"v": 1}, {"v": "s"}, {"v": 2.5}, {"v": "t"}]));
        let Kind::Union(branches) = &field(&merged.record, "v").ty.kind else {
            panic!()
        };
        assert_eq!(
            branches
                .iter()
                .map(|branch| (branch.kind.name(), branch.seen))
                .collect::<Vec<_>>(),
            [("float", 2), ("string", 2)]
        );
    }

    #[test]
    fn objects_with_data_keys_are_maps_and_the_rule_can_be_forced() {
        let data = json!([{
            "events": {"138586341": {"name": "a"}, "138586345": {"name": "b", "logo": null}},
            "über": 1,
            "meta": {"x": 1}
        }]);
        let Value::Array(records) = data else { panic!() };
        let schema = Schema::infer(&records, &Overrides::default());
        // The root has a key that is not a field name, so it is a map itself.
        assert_eq!(schema.maps[0], ("$".to_string(), MapReason::Key("über".into())));
        let forced = Schema::infer(
            &records,
            &Overrides {
                maps: vec!["$.meta".into()],
                records: vec!["$".into()],
            },
        );
        let events = field(&forced.record, "events");
        let Kind::Map(event) = &events.ty.kind else {
            panic!("{events:?}")
        };
        let logo = field(event, "logo");
        assert!(logo.optional() && logo.ty.nullable());
        assert_eq!(
            forced.maps,
            vec![
                ("$.events".to_string(), MapReason::Key("138586341".into())),
                ("$.meta".to_string(), MapReason::Forced)
            ]
        );
        assert!(matches!(field(&forced.record, "meta").ty.kind, Kind::Map(_)));
        assert_eq!(field(&forced.record, "über").ty.kind, Kind::Int);
    }

    /// `count` country-like records: `currencies` keyed by code (one or two of many),
    /// `translations` keyed by a language code (all 9 in each), `demonyms` (two codes: a record).
    fn countries(count: usize) -> Vec<Value> {
        let languages = ["ara", "ces", "deu", "est", "fin", "fra", "hrv", "ita", "jpn"];
        (0..count)
            .map(|index| {
                let code =
                    |offset: usize| format!("C{}{}", (b'A' + (index + offset) as u8 % 26) as char, index % 7);
                let mut currencies = serde_json::Map::new();
                for offset in 0..1 + index % 2 {
                    currencies.insert(code(offset), json!({"name": "n", "symbol": "$"}));
                }
                let translations: serde_json::Map<String, Value> = languages
                    .iter()
                    .map(|language| (language.to_string(), json!({"common": "c", "official": "o"})))
                    .collect();
                json!({
                    "cca2": "XY",
                    "currencies": currencies,
                    "translations": translations,
                    "demonyms": {"eng": {"f": "a", "m": "b"}, "fra": {"f": "c", "m": "d"}}
                })
            })
            .collect()
    }

    #[test]
    fn dictionaries_are_maps_by_their_shape_across_records_not_by_key_spelling() {
        for typed in [false, true] {
            let records = countries(40);
            let schema = if typed {
                Schema::infer_typed(&records, &Overrides::default())
            } else {
                Schema::infer(&records, &Overrides::default())
            };
            let reasons: BTreeMap<&str, &MapReason> = schema
                .maps
                .iter()
                .map(|(path, reason)| (path.as_str(), reason))
                .collect();
            assert!(
                matches!(
                    reasons["$.currencies"],
                    MapReason::Sparse {
                        objects: 40,
                        held: 60,
                        ..
                    }
                ),
                "{reasons:?}"
            );
            assert!(
                matches!(reasons["$.translations"], MapReason::Codes { keys: 9, example } if example == "ara"),
                "{reasons:?}"
            );
            assert_eq!(reasons.len(), 2, "{reasons:?}");
            let Kind::Map(currency) = &field(&schema.record, "currencies").ty.kind else {
                panic!("currencies is not a map")
            };
            assert_eq!(field(currency, "symbol").ty.kind, Kind::String);
            assert!(matches!(
                field(&schema.record, "demonyms").ty.kind,
                Kind::Record(_)
            ));
        }
        // `--record` keeps a dictionary a record.
        let kept = Schema::infer(
            &countries(40),
            &Overrides {
                maps: Vec::new(),
                records: vec!["$.translations".into()],
            },
        );
        assert!(matches!(
            field(&kept.record, "translations").ty.kind,
            Kind::Record(_)
        ));
        assert!(kept.maps.iter().all(|(path, _)| path != "$.translations"));
    }

    #[test]
    fn sparse_records_of_mixed_values_or_record_types_stay_records() {
        // Ten optional fields, two per object, of different kinds: an event with variants.
        let mixed: Vec<Value> = (0..20)
            .map(|index| match index % 5 {
                0 => json!({"a": 1, "b": "s"}),
                1 => json!({"c": true, "d": 1.5}),
                2 => json!({"e": [1], "f": "t"}),
                3 => json!({"g": {"x": 1}, "h": 2}),
                _ => json!({"i": "u", "j": false}),
            })
            .collect();
        let schema = Schema::infer(&mixed, &Overrides::default());
        assert!(schema.maps.is_empty(), "{:?}", schema.maps);
        // Records of several types under code-like keys: not one value shape.
        let payloads: Vec<Value> = (0..4)
            .map(|index| {
                let keys = ["abc", "abd", "abe", "abf", "abg", "abh", "abi", "abj"];
                let object: serde_json::Map<String, Value> = keys
                    .iter()
                    .enumerate()
                    .map(|(position, key)| (key.to_string(), json!({ format!("f{position}"): index })))
                    .collect();
                Value::Object(object)
            })
            .collect();
        let schema = Schema::infer(&payloads, &Overrides::default());
        assert!(schema.maps.is_empty(), "{:?}", schema.maps);
        assert!(matches!(schema.record.kind, Kind::Record(_)));
    }

    #[test]
    fn records_of_one_set_of_keys_at_several_paths_are_one_type() {
        let user = |id: i64, email: Value| json!({"id": id, "login": "l", "email": email});
        let records = json!([
            {"sender": user(1, json!("a@b")), "issue": {"user": user(2, json!(null)), "assignee": null},
             "repository": {"owner": {"id": "o3", "login": "l", "email": "c@d"}, "id": "r1"}},
            {"sender": user(4, json!("e@f")), "issue": {"user": user(5, json!("g@h")), "assignee": user(6, json!("i@j"))},
             "repository": {"owner": {"id": "o7", "login": "l", "email": "k@l"}, "id": "r2"}}
        ]);
        let schema = infer(records);
        // `owner` has a string id here, so merging it would add a conflict: it stays apart.
        assert_eq!(
            schema.shared,
            vec![vec![
                "$.issue.assignee".to_string(),
                "$.issue.user".into(),
                "$.sender".into()
            ]]
        );
        let at = |path: &[&str]| {
            let mut ty = &schema.record;
            for name in path {
                ty = &field(ty, name).ty;
            }
            ty
        };
        let (sender, assignee) = (at(&["sender"]), at(&["issue", "assignee"]));
        // One shape everywhere: the email null under `issue.user` makes it nullable at `sender`
        // too, while each place keeps whether it is itself null (`assignee` is, `sender` not).
        assert_eq!(shape_key(sender), shape_key(assignee));
        assert_eq!(shape_key(sender), shape_key(at(&["issue", "user"])));
        assert!(field(sender, "email").ty.nullable());
        assert!(assignee.nullable() && !sender.nullable());
        assert_ne!(shape_key(sender), shape_key(at(&["repository", "owner"])));
        // The counts are the type's over its places: 5 users, 1 null email.
        assert_eq!(
            (field(sender, "email").ty.seen, field(sender, "email").ty.nulls),
            (5, 1)
        );
        // A field one place lacks is optional in the shared type, and counted absent.
        let records = json!([{"a": {"x": 1, "y": 2}, "b": {"x": 3, "z": 4}}, {"a": {"x": 5, "y": 6}, "b": {"x": 7, "z": 8}}]);
        let schema = infer(records);
        assert!(
            schema.shared.is_empty(),
            "different key sets stay apart: {:?}",
            schema.shared
        );
        let records = json!([{"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}}, {"a": {"x": 5}, "b": {"x": 6}}]);
        let schema = infer(records);
        assert_eq!(schema.shared, vec![vec!["$.a".to_string(), "$.b".into()]]);
        let y = field(&field(&schema.record, "b").ty, "y");
        assert!(y.optional());
        assert_eq!((y.absent, y.ty.seen), (2, 2));
    }

    #[test]
    fn the_first_path_past_a_nesting_limit_is_found() {
        let data = json!([{"a": {"b": [{"c": 1}]}, "z": 1}]);
        let Value::Array(records) = data else { panic!() };
        let schema = Schema::infer(&records, &Overrides::default());
        let records_only = |kind: &Kind| matches!(kind, Kind::Record(_));
        assert_eq!(first_deeper_than(&schema, 3, records_only), None);
        assert_eq!(
            first_deeper_than(&schema, 2, records_only).as_deref(),
            Some("$.a.b[]")
        );
        let containers = |kind: &Kind| matches!(kind, Kind::Record(_) | Kind::Array(_) | Kind::Map(_));
        assert_eq!(
            first_deeper_than(&schema, 3, containers).as_deref(),
            Some("$.a.b[]")
        );
        assert_eq!(first_deeper_than(&schema, 4, containers), None);
    }

    #[test]
    fn for_the_generated_types_only_number_keys_make_a_map() {
        let data = json!([{
            "events": {"138586341": {"name": "a"}, "138586345": {"name": "b"}},
            "3ds": true,
            "headers": {"content-type": "json"}
        }]);
        let Value::Array(records) = data else { panic!() };
        let schema = Schema::infer_typed(&records, &Overrides::default());
        assert_eq!(
            schema.maps,
            vec![("$.events".to_string(), MapReason::Key("138586341".into()))]
        );
        assert!(matches!(
            field(&schema.record, "headers").ty.kind,
            Kind::Record(_)
        ));
        assert_eq!(field(&schema.record, "3ds").ty.kind, Kind::Bool);
    }

    #[test]
    fn many_distinct_keys_make_a_map_even_when_each_is_a_name() {
        let records: Vec<Value> = (0..=MAX_FIELDS)
            .map(|index| json!({ "users": { format!("user{index}"): index } }))
            .collect();
        let schema = Schema::infer(&records, &Overrides::default());
        let users = field(&schema.record, "users");
        let Kind::Map(value) = &users.ty.kind else {
            panic!("{users:?}")
        };
        assert_eq!(
            (value.kind.clone(), value.seen),
            (Kind::Int, MAX_FIELDS as u64 + 1)
        );
        assert_eq!(
            schema.maps,
            vec![("$.users".to_string(), MapReason::ManyKeys(MAX_FIELDS + 1))]
        );
    }

    #[test]
    fn unicode_keys_and_values_are_kept() {
        let schema = infer(json!([{"名前": "値", "emoji": "😀"}]));
        assert_eq!(
            schema.maps,
            vec![("$".to_string(), MapReason::Key("名前".into()))]
        );
        let Kind::Map(value) = &schema.record.kind else {
            panic!()
        };
        assert_eq!(value.kind, Kind::String);
    }

    #[test]
    fn deep_nesting_within_the_reader_limit_is_inferred() {
        let mut value = json!(1);
        for _ in 0..120 {
            value = json!({ "a": [value] });
        }
        let schema = infer(json!([value]));
        assert_eq!(schema.depth(), 240);
        assert!(schema.conflicts().is_empty());
    }

    #[test]
    fn type_names_are_camel_case_and_unique() {
        let mut names = Names::default();
        assert_eq!(names.unique("retweeted_status"), "RetweetedStatus");
        assert_eq!(names.unique("retweeted_status"), "RetweetedStatus2");
        assert_eq!(names.unique("123 go"), "T123Go");
        assert_eq!(names.unique(""), "T");
    }
}

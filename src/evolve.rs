//! `serbench evolve`: what each format does when the schema changes. For a payload's record
//! type, each change of [`Change::ALL`] gives an old and a new type ([`crate::shape`]), with the
//! format's own mechanism where it has one (serde derive's `default` and `alias`, Protobuf's
//! field numbers, Avro's resolved writer and reader schemas, savefile's version numbers); records
//! written by one version are read by the other, both ways, and each cell says whether the
//! reader got the expected projection (ok), refused the bytes, or decoded something else without
//! a word (silently wrong), the cell that matters most.

use anyhow::{Context, Result};
use serde_json::Value;

use crate::format::{self, EvolutionSupport, SchemaEvolution, SerdeEvolution};
use crate::payload::data::schema::{Kind, Overrides, Schema, Type};
use crate::schema::evolution::{Change, EvolutionRow};
use crate::shape::{Field, Record, Seed, Shape, Shaped};

/// The records one cell reads at most: enough to meet every field's values, bounded in time.
const RECORDS: usize = 50;

/// What a cell's readers may hold at once when each cell runs in a child of its own: a request
/// past it fails there, as it would in a program on a smaller machine.
const READER_CAP_BYTES: usize = 256 << 20;

/// Where [`matrix`] runs each cell: in this process (the unit tests, on many threads), or in a
/// forked child of its own (the command, on one thread), so that a reader that panics or asks
/// for more memory than it can get on the other version's bytes ends that child, not `evolve`:
/// its cell is refused, saying how the child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    InProcess,
    Forked,
}

/// Who reads whose bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The new version reads what the old one wrote.
    NewReadsOld,
    /// The old version reads what the new one wrote.
    OldReadsNew,
}

/// What one reader did with the other version's bytes, worst over the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    Refused,
    SilentlyWrong,
}

/// Makes a new-version record from an old one.
type Upgrade = Box<dyn Fn(&Value) -> Value>;

/// One change: the two versions and how the new version's writer fills its records.
struct Versions {
    old: Shape,
    new: Shape,
    /// A new-version record from an old one.
    upgrade: Upgrade,
    /// What the change did, in words (`renamed name to name_v2, alias name`).
    what: String,
}

/// A backend's cells: per change, both directions, or why the change cannot be expressed.
pub struct Row {
    pub format: &'static str,
    pub backend: &'static str,
    pub variant: &'static str,
    /// How the backend meets a change, in a few words.
    pub mechanism: &'static str,
    pub cells: Vec<(Change, Result<[Cell; 2], String>)>,
}

impl Row {
    /// `format/backend[variant]`.
    pub fn label(&self) -> String {
        crate::arm::backend_label(self.format, self.backend, self.variant)
    }
}

#[derive(Clone, Debug)]
pub struct Cell {
    pub outcome: Outcome,
    /// The first record that was not ok: its error or the first field that differs.
    pub detail: String,
}

/// The matrix of one payload.
pub struct Matrix {
    pub payload: String,
    /// The records each cell reads.
    pub records: usize,
    /// The field of a one-field document whose items are the records (`readings`), if any.
    pub wrapper: Option<String>,
    /// Each change as made on this payload's record (or why it cannot be).
    pub changes: Vec<(Change, Result<String, String>)>,
    pub rows: Vec<Row>,
    /// Formats `evolve` does not measure, with the reason.
    pub unmeasured: Vec<(String, String)>,
    /// Fields of the record left out of its shape (mixed types), by name.
    pub left_out: Vec<String>,
}

/// The matrix of a payload's `records` (as JSON values) of every enabled serde-evolvable format.
pub fn matrix(payload: &str, records: &[Value], isolation: Isolation) -> Result<Matrix> {
    let isolated =
        |backend: Evolving, writer: &Shape, reader: &Shape, records: &[Value], versions: [u32; 2]| {
            match isolation {
                Isolation::InProcess => cell(backend, writer, reader, records, versions),
                Isolation::Forked => forked(|| cell(backend, writer, reader, records, versions)),
            }
        };
    let (records, wrapper) = unwrapped(records);
    let records = &records[..records.len().min(RECORDS)];
    let schema = Schema::infer_typed(records, &Overrides::default());
    let mut left_out = Vec::new();
    let Some(Shape::Record(base)) = shape_of(&schema.record, "Record", &mut left_out) else {
        anyhow::bail!("{payload}: its records are not objects, so it has no record type to evolve");
    };
    let changes: Vec<(Change, Result<Versions, String>)> = Change::ALL
        .iter()
        .map(|&change| (change, versions(&base, records, change)))
        .collect();
    let mut rows = Vec::new();
    let mut unmeasured = Vec::new();
    for ([format, backend_name, variant], backend) in backends(&mut unmeasured) {
        let label = crate::arm::backend_label(format, backend_name, variant);
        // Correctness first: the unchanged type reads its own bytes back.
        let same = Shape::Record(base.clone());
        let check = isolated(backend, &same, &same, records, [0, 0]);
        if check.outcome != Outcome::Ok {
            match backend {
                Evolving::Serde(_) => anyhow::bail!(
                    "{label} does not read back its own {payload} records: {}",
                    check.detail
                ),
                // A schema language may lack a shape the data has (a list of lists in Protobuf).
                Evolving::Schema(_) => {
                    unmeasured.push((label, format!("cannot carry this record type: {}", check.detail)));
                    continue;
                }
            }
        }
        let cells = changes
            .iter()
            .map(|(change, versions)| {
                let cells = versions.as_ref().map_err(Clone::clone).and_then(|versions| {
                    backend.expressible(&versions.old, &versions.new)?;
                    let new_records: Vec<Value> =
                        records.iter().map(|record| (versions.upgrade)(record)).collect();
                    Ok([
                        isolated(backend, &versions.old, &versions.new, records, [0, 1]),
                        isolated(backend, &versions.new, &versions.old, &new_records, [1, 0]),
                    ])
                });
                (*change, cells)
            })
            .collect();
        rows.push(Row {
            format,
            backend: backend_name,
            variant,
            mechanism: backend.mechanism(),
            cells,
        });
    }
    Ok(Matrix {
        payload: payload.to_string(),
        records: records.len(),
        wrapper,
        changes: changes
            .into_iter()
            .map(|(change, versions)| (change, versions.map(|versions| versions.what)))
            .collect(),
        rows,
        unmeasured,
        left_out,
    })
}

impl Outcome {
    const ALL: [Outcome; 3] = [Outcome::Ok, Outcome::Refused, Outcome::SilentlyWrong];

    /// Its name in evolution.csv ([`crate::schema::evolution::OUTCOMES`]).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::SilentlyWrong => "silently-wrong",
        }
    }
}

/// The line a forked cell's child ends its output with: `CELL\t<outcome>\t<detail>`.
const CELL_LINE: &str = "CELL\t";

/// `work` (one cell) in a forked child whose allocations are capped at [`READER_CAP_BYTES`]:
/// its cell; or, when the child ends without one (a panic, a failed allocation: std aborts), a
/// refused cell saying how it ended and what it wrote. Only for a process on one thread: the
/// child runs `work` with whatever locks other threads held at the fork.
fn forked(work: impl FnOnce() -> Cell) -> Cell {
    use std::io::Read;
    use std::os::fd::FromRawFd;

    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills the two-element array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return refused(format!(
            "no pipe to a child reader: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: fork(2) in a process running `evolve` on one thread (the caller's promise).
    match unsafe { libc::fork() } {
        -1 => {
            let error = std::io::Error::last_os_error();
            // SAFETY: closing the two descriptors pipe(2) opened, once each.
            unsafe { (libc::close(fds[0]), libc::close(fds[1])) };
            refused(format!("no child reader: {error}"))
        }
        0 => {
            // The child: its standard error (a panic's message, std's failed allocation) and
            // its answer go into the pipe; it ends with `_exit`, running no destructor and
            // flushing none of the parent's buffers.
            // SAFETY: descriptors of this process's own pipe.
            unsafe {
                libc::close(fds[0]);
                libc::dup2(fds[1], 2);
            }
            crate::alloc::cap_allocations(READER_CAP_BYTES);
            let cell = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                Ok(cell) => cell,
                Err(panic) => refused(format!(
                    "the reader panicked: {}",
                    crate::measure::panic_message(&*panic)
                )),
            };
            let line = format!("\n{CELL_LINE}{}\t{}\n", cell.outcome.name(), cell.detail);
            // SAFETY: writing a live buffer of its length to the pipe, then ending the child.
            unsafe {
                libc::write(fds[1], line.as_ptr().cast(), line.len());
                libc::_exit(0)
            }
        }
        child => {
            // SAFETY: the write end is the child's; the read end becomes a file owned here.
            unsafe { libc::close(fds[1]) };
            let mut output = Vec::new();
            let read = unsafe { std::fs::File::from_raw_fd(fds[0]) }.read_to_end(&mut output);
            let mut status = 0;
            // SAFETY: waiting for this process's own child.
            unsafe { libc::waitpid(child, &mut status, 0) };
            let output = String::from_utf8_lossy(&output);
            if let (Ok(_), Some((_, answer))) = (read, output.rsplit_once(CELL_LINE))
                && let Some((outcome, detail)) = answer.trim_end_matches('\n').split_once('\t')
                && let Some(outcome) = Outcome::ALL.into_iter().find(|known| known.name() == outcome)
            {
                return Cell {
                    outcome,
                    detail: detail.to_string(),
                };
            }
            let ended = if libc::WIFSIGNALED(status) {
                format!("signal {}", libc::WTERMSIG(status))
            } else {
                format!("exit status {}", libc::WEXITSTATUS(status))
            };
            // What it said, without the allocator's protocol line and std's backtrace.
            let said = output
                .split("stack backtrace:")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|line| !line.starts_with("ALLOC-CAP"))
                .flat_map(str::split_whitespace)
                .collect::<Vec<_>>()
                .join(" ");
            refused(format!(
                "the reader crashed ({ended}, its allocations capped at {} MiB): {said}",
                READER_CAP_BYTES >> 20
            ))
        }
    }
}

fn refused(detail: String) -> Cell {
    Cell {
        outcome: Outcome::Refused,
        detail,
    }
}

impl Matrix {
    /// The matrix as evolution.csv's rows: one per backend and change.
    pub fn csv_rows(&self) -> Vec<EvolutionRow> {
        let mut out = Vec::new();
        for row in &self.rows {
            for ((change, cells), (_, what)) in row.cells.iter().zip(&self.changes) {
                let [new, old] = match cells {
                    Ok([new, old]) => [new, old].map(|cell| (cell.outcome.name(), cell.detail.clone())),
                    Err(_) => [
                        ("cannot-express", String::new()),
                        ("cannot-express", String::new()),
                    ],
                };
                out.push(EvolutionRow {
                    payload: self.payload.clone(),
                    records: self.records,
                    format: row.format.to_string(),
                    backend: row.backend.to_string(),
                    variant: row.variant.to_string(),
                    mechanism: row.mechanism.to_string(),
                    change: change.name().to_string(),
                    what: what.clone().unwrap_or_else(|why| why),
                    new_reads_old: new.0.to_string(),
                    new_reads_old_detail: new.1,
                    old_reads_new: old.0.to_string(),
                    old_reads_new_detail: old.1,
                });
            }
        }
        out
    }
}

/// Every enabled backend `evolve` exercises, by label; the formats it does not, with the reason,
/// into `unmeasured`.
fn backends(unmeasured: &mut Vec<(String, String)>) -> Vec<([&'static str; 3], Evolving<'static>)> {
    let mut backends = Vec::new();
    for format in format::all() {
        match &format.evolution {
            EvolutionSupport::Unmeasured(reason) => {
                unmeasured.push((format.name.to_string(), reason.to_string()))
            }
            EvolutionSupport::Measured { serde, schema } => {
                backends.extend(serde.iter().map(|codec| {
                    (
                        [format.name, codec.backend, codec.variant],
                        Evolving::Serde(codec),
                    )
                }));
                backends.extend(schema.iter().map(|codec| {
                    (
                        [format.name, codec.backend, codec.variant],
                        Evolving::Schema(codec),
                    )
                }));
            }
        }
    }
    backends
}

/// A backend as `evolve` drives it: a serde backend reads with the reader's type alone; a
/// schema-driven one is also given the writer's schema (which Avro's reader needs).
#[derive(Clone, Copy)]
enum Evolving<'a> {
    Serde(&'a SerdeEvolution),
    Schema(&'a SchemaEvolution),
}

impl Evolving<'_> {
    /// A record as the program of `version` (0 the old, 1 the new) writes it.
    fn encode(self, shape: &Shape, version: u32, record: &Value) -> Result<Vec<u8>, String> {
        match self {
            Evolving::Serde(codec) => (codec.encode)(&Shaped(shape, record)),
            Evolving::Schema(SchemaEvolution {
                versioned: Some(versioned),
                ..
            }) => (versioned.encode)(shape, version, record),
            Evolving::Schema(codec) => (codec.encode)(shape, record),
        }
    }

    /// `writer`'s bytes as the program of `version` whose type is `reader` reads them.
    fn decode(self, writer: &Shape, reader: &Shape, version: u32, bytes: &[u8]) -> Result<Value, String> {
        match self {
            Evolving::Serde(codec) => (codec.decode)(bytes, Seed(reader)),
            Evolving::Schema(SchemaEvolution {
                versioned: Some(versioned),
                ..
            }) => (versioned.decode)(writer, reader, version, bytes),
            Evolving::Schema(codec) => (codec.decode)(writer, reader, bytes),
        }
    }

    /// Whether a numbered backend's new program can declare its type from the old one's.
    fn expressible(self, old: &Shape, new: &Shape) -> Result<(), String> {
        match self {
            Evolving::Schema(SchemaEvolution {
                versioned: Some(versioned),
                ..
            }) => (versioned.expressible)(old, new),
            _ => Ok(()),
        }
    }

    fn mechanism(self) -> &'static str {
        match self {
            Evolving::Serde(_) => {
                "serde derive's `default` and `alias` (by name where the format writes names)"
            }
            Evolving::Schema(codec) => codec.mechanism,
        }
    }
}

/// The records whose type is changed: the items of a lone document's only field where that is
/// a list or map of objects (a payload that wraps its records: `{"readings": [...]}`), else
/// `records` themselves; with that field's name.
fn unwrapped(records: &[Value]) -> (Vec<Value>, Option<String>) {
    if let [Value::Object(document)] = records
        && let [(name, inner)] = document.iter().collect::<Vec<_>>()[..]
    {
        let items: Vec<Value> = match inner {
            Value::Array(items) => items.clone(),
            Value::Object(entries) => entries.values().cloned().collect(),
            _ => Vec::new(),
        };
        if !items.is_empty() && items.iter().all(Value::is_object) {
            return (items, Some(name.clone()));
        }
    }
    (records.to_vec(), None)
}

/// `records` written as `writer`, read as `reader`, by the programs of `versions` (writer's,
/// reader's; 0 the old, 1 the new): the worst outcome over them.
fn cell(backend: Evolving, writer: &Shape, reader: &Shape, records: &[Value], versions: [u32; 2]) -> Cell {
    let mut worst = Cell {
        outcome: Outcome::Ok,
        detail: String::new(),
    };
    for (index, record) in records.iter().enumerate() {
        let (outcome, detail) = match backend.encode(writer, versions[0], record) {
            Err(error) => (
                Outcome::Refused,
                format!("record {index}: the writer refused it: {error}"),
            ),
            Ok(bytes) => match (
                backend.decode(writer, reader, versions[1], &bytes),
                project(record, writer, reader),
            ) {
                (Err(error), _) => (Outcome::Refused, format!("record {index}: {error}")),
                (Ok(read), Ok(expected)) if read == expected => (Outcome::Ok, String::new()),
                (Ok(read), Ok(expected)) => (
                    Outcome::SilentlyWrong,
                    format!("record {index}: {}", difference(&expected, &read)),
                ),
                (Ok(read), Err(needed)) => (
                    Outcome::SilentlyWrong,
                    format!(
                        "record {index}: `{needed}` read as {} where the writer had no such field (and the reader no default)",
                        short(read.get(needed).unwrap_or(&Value::Null))
                    ),
                ),
            },
        };
        if outcome > worst.outcome {
            // One line: a library's error may span several.
            let detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
            worst = Cell { outcome, detail };
        }
    }
    worst
}

/// What a reader of `to` should get from a record of `from`: each of its fields from the same
/// field of `from` (by name, or renamed: one answers to the other's name), else its default,
/// else `None` for an `Option`; `Err` naming the first field that has none of those (the only
/// right answer is then a refusal). Values are put through `to`'s shape as JSON, so a float
/// reads as a float.
pub fn project(record: &Value, from: &Shape, to: &Shape) -> Result<Value, &'static str> {
    let (Shape::Record(from), Shape::Record(to)) = (from, to) else {
        return Ok(record.clone());
    };
    let mut fields = serde_json::Map::new();
    for field in &to.fields {
        // The same field in both versions: one answers to the other's name (a rename's alias).
        let source = from
            .fields
            .iter()
            .find(|source| field.answers_to(source.name) || source.answers_to(field.name));
        let value = match source {
            Some(source) => record.get(source.name).cloned().unwrap_or(Value::Null),
            None if field.default => field.shape.default_value(),
            None if matches!(field.shape, Shape::Option(_)) => Value::Null,
            None => return Err(field.name),
        };
        fields.insert(field.name.to_string(), value);
    }
    let shape = Shape::Record(to.clone());
    let projected = Value::Object(fields);
    // Through the shape and back (a value the shape cannot hold is compared as it is).
    let shaped = serde_json::to_vec(&Shaped(&shape, &projected))
        .ok()
        .and_then(|json| {
            serde::de::DeserializeSeed::deserialize(
                Seed(&shape),
                &mut serde_json::Deserializer::from_slice(&json),
            )
            .ok()
        });
    Ok(shaped.unwrap_or(projected))
}

/// The first field where `read` differs from `expected`.
fn difference(expected: &Value, read: &Value) -> String {
    if let (Value::Object(expected), Value::Object(read)) = (expected, read) {
        for (name, value) in expected {
            if read.get(name) != Some(value) {
                return format!(
                    "{name} is {} where {} was written",
                    short(read.get(name).unwrap_or(&Value::Null)),
                    short(value)
                );
            }
        }
    }
    format!("read {} where {} was written", short(read), short(expected))
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// The shape of an inferred type: nullable or sometimes absent as `Option`; a field of mixed
/// types is left out (named in `left_out`).
fn shape_of(ty: &Type, name: &str, left_out: &mut Vec<String>) -> Option<Shape> {
    let shape = match &ty.kind {
        Kind::Null => Shape::Option(Box::new(Shape::String)),
        Kind::Bool => Shape::Bool,
        Kind::Int => Shape::I64,
        Kind::Float => Shape::F64,
        Kind::String => Shape::String,
        Kind::Array(item) => Shape::List(Box::new(shape_of(item, name, left_out)?)),
        Kind::Map(value) => Shape::Map(Box::new(shape_of(value, name, left_out)?)),
        Kind::Record(fields) => Shape::Record(Record {
            name: crate::shape::leak(name),
            fields: fields
                .iter()
                .enumerate()
                .filter_map(|(index, field)| {
                    let mut shape = shape_of(&field.ty, &format!("{name}_{}", field.name), left_out);
                    if shape.is_none() {
                        left_out.push(field.name.clone());
                    }
                    if field.absent > 0 && !matches!(shape, Some(Shape::Option(_))) {
                        shape = shape.map(|shape| Shape::Option(Box::new(shape)));
                    }
                    let mut field = Field::new(&field.name, shape?);
                    field.id = index as u32 + 1;
                    Some(field)
                })
                .collect(),
        }),
        Kind::Union(_) => return None,
    };
    Some(match shape {
        Shape::Option(_) => shape,
        shape if ty.nulls > 0 => Shape::Option(Box::new(shape)),
        shape => shape,
    })
}

/// The old and new types of `change` on `base`, or why the data cannot express it.
fn versions(base: &Record, records: &[Value], change: Change) -> Result<Versions, String> {
    let old = base.clone();
    let mut new = base.clone();
    let scalar = |shape: &Shape| matches!(shape, Shape::Bool | Shape::I64 | Shape::F64 | Shape::String);
    let index_of = |keep: &dyn Fn(&Field) -> bool| base.fields.iter().position(keep);
    let identity: Upgrade = Box::new(|record: &Value| record.clone());
    // An added field's tag: one no field of the base has had.
    let next_id = base.fields.iter().map(|field| field.id).max().unwrap_or(0) + 1;
    let (old, upgrade, what): (Record, Upgrade, String) = match change {
        Change::AddOptional => {
            let mut field = Field::new("evolve_note", Shape::Option(Box::new(Shape::String)));
            field.id = next_id;
            new.fields.push(field);
            let upgrade = Box::new(|record: &Value| with(record, "evolve_note", Value::from("added")));
            (
                old,
                upgrade,
                "added `evolve_note: Option<String>` at the end".into(),
            )
        }
        Change::AddDefault => {
            let mut field = Field::new("evolve_count", Shape::I64);
            field.default = true;
            field.id = next_id;
            new.fields.push(field);
            let upgrade = Box::new(|record: &Value| with(record, "evolve_count", Value::from(7)));
            (
                old,
                upgrade,
                "added `evolve_count: i64` at the end, default 0 (serde `default`, Avro `\"default\": 0`)"
                    .into(),
            )
        }
        Change::Remove => {
            if base.fields.len() < 2 {
                return Err("the record has one field".into());
            }
            let index = base.fields.len() / 2;
            let removed = new.fields.remove(index).name;
            let upgrade = Box::new(move |record: &Value| without(record, removed));
            (
                old,
                upgrade,
                format!(
                    "removed `{removed}` (field {} of {})",
                    index + 1,
                    base.fields.len()
                ),
            )
        }
        Change::Rename => {
            let index = index_of(&|field| field.shape == Shape::String)
                .or_else(|| index_of(&|field| scalar(&field.shape)))
                .ok_or("the record has no scalar field")?;
            let from = base.fields[index].name;
            let to = crate::shape::leak(&format!("{from}_v2"));
            new.fields[index].name = to;
            new.fields[index].aliases.push(from);
            let upgrade = Box::new(move |record: &Value| {
                let value = record.get(from).cloned().unwrap_or(Value::Null);
                with(&without(record, from), to, value)
            });
            (
                old,
                upgrade,
                format!("renamed `{from}` to `{to}`, the old name an alias (serde `alias`, Avro `aliases`)"),
            )
        }
        Change::Reorder => {
            // The first two fields of one type (a swap a positional reader cannot notice), else
            // the first two fields.
            let count = base.fields.len();
            let (first, second) = (0..count)
                .flat_map(|a| (a + 1..count).map(move |b| (a, b)))
                .find(|&(a, b)| base.fields[a].shape == base.fields[b].shape)
                .or((count >= 2).then_some((0, 1)))
                .ok_or("the record has one field")?;
            new.fields.swap(first, second);
            let (a, b) = (base.fields[first].name, base.fields[second].name);
            let same = base.fields[first].shape == base.fields[second].shape;
            (
                old,
                identity,
                format!(
                    "swapped `{a}` and `{b}`{}",
                    if same { " (same type)" } else { "" }
                ),
            )
        }
        Change::Widen => {
            let fits = |name: &str| {
                records.iter().all(|record| {
                    record
                        .get(name)
                        .is_none_or(|value| value.as_i64().is_some_and(|value| i32::try_from(value).is_ok()))
                })
            };
            let index = index_of(&|field| field.shape == Shape::I64 && fits(field.name))
                .ok_or("no integer field whose values all fit an i32")?;
            let mut old = old;
            old.fields[index].shape = Shape::I32;
            let name = base.fields[index].name;
            (old, identity, format!("`{name}`: i32 to i64"))
        }
        Change::Nullable => {
            let index = index_of(&|field| scalar(&field.shape))
                .ok_or("the record has no scalar field that is not nullable")?;
            let shape = new.fields[index].shape.clone();
            new.fields[index].shape = Shape::Option(Box::new(shape));
            let name = base.fields[index].name;
            (old, identity, format!("`{name}`: T to Option<T>"))
        }
        Change::EnumVariant => {
            return Err("a schema inferred from JSON has no enum (its tags are strings)".into());
        }
    };
    Ok(Versions {
        old: Shape::Record(old),
        new: Shape::Record(new),
        upgrade,
        what,
    })
}

fn with(record: &Value, name: &str, value: Value) -> Value {
    let mut record = record.clone();
    if let Value::Object(fields) = &mut record {
        fields.insert(name.to_string(), value);
    }
    record
}

fn without(record: &Value, name: &str) -> Value {
    let mut record = record.clone();
    if let Value::Object(fields) = &mut record {
        fields.remove(name);
    }
    record
}

/// The records of a built-in payload: its logical data as JSON, a list's items or the one value.
pub fn builtin_records(payload: &str) -> Result<Vec<Value>> {
    let json = crate::payload::logical_json(payload)
        .with_context(|| format!("{payload}: no such built-in payload"))?;
    Ok(match serde_json::from_str(&json)? {
        Value::Array(items) => items,
        value => vec![value],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<Value> {
        (0..5)
            .map(|index| {
                serde_json::json!({
                    "id": index,
                    "city": format!("city {index}"),
                    "street": format!("street {index}"),
                    "score": index as f64 + 0.5,
                    "note": if index % 2 == 0 { Value::Null } else { Value::from("n") },
                })
            })
            .collect()
    }

    /// Three fields, none nullable: `remove` takes the middle one, `b`.
    fn plain_records() -> Vec<Value> {
        (0..4)
            .map(|index| serde_json::json!({"a": index, "b": format!("b{index}"), "c": index * 2}))
            .collect()
    }

    fn outcome(matrix: &Matrix, backend: &str, change: Change) -> Result<(Outcome, Outcome), String> {
        let row = matrix
            .rows
            .iter()
            .find(|row| row.label() == backend)
            .expect(backend);
        let (_, cells) = row.cells.iter().find(|(of, _)| *of == change).unwrap();
        cells
            .as_ref()
            .map(|[new, old]| (new.outcome, old.outcome))
            .map_err(Clone::clone)
    }

    #[test]
    fn known_cells_come_out_as_the_formats_document_them() {
        let matrix = matrix("test", &records(), Isolation::InProcess).unwrap();
        // Swapped fields of one type: positional formats read each other's values, no error.
        let what = matrix
            .changes
            .iter()
            .find(|(change, _)| *change == Change::Reorder)
            .unwrap();
        assert_eq!(
            what.1.as_deref(),
            Ok("swapped `city` and `street` (same type)"),
            "{:?}",
            matrix.changes
        );
        #[cfg(feature = "postcard")]
        assert_eq!(
            outcome(&matrix, "postcard/postcard", Change::AddOptional),
            Ok((Outcome::Refused, Outcome::Ok)),
            "a new positional reader runs out of bytes; an old one leaves the trailing field unread"
        );
        #[cfg(feature = "json")]
        {
            // serde's alias: the new reader takes the old name; the old reader misses the new one.
            assert_eq!(
                outcome(&matrix, "json/serde_json", Change::Rename),
                Ok((Outcome::Ok, Outcome::Refused))
            );
            assert_eq!(
                outcome(&matrix, "json/serde_json", Change::Reorder),
                Ok((Outcome::Ok, Outcome::Ok))
            );
        }
        #[cfg(feature = "msgpack")]
        assert_eq!(
            outcome(&matrix, "msgpack/rmp-serde[named]", Change::AddOptional),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        // simd-json and sonic-rs read JSON by name as serde_json does, through `Seeded`.
        #[cfg(feature = "json")]
        for backend in ["json/simd-json", "json/sonic-rs"] {
            assert_eq!(
                outcome(&matrix, backend, Change::Rename),
                Ok((Outcome::Ok, Outcome::Refused)),
                "{backend}"
            );
        }
        // serde_avro_fast does not resolve: the writer's schema read into the reader's serde
        // type, so a renamed field meets its alias, and an old reader misses the new name.
        #[cfg(feature = "avro")]
        assert_eq!(
            outcome(&matrix, "avro/serde_avro_fast", Change::Rename),
            Ok((Outcome::Ok, Outcome::Refused))
        );
        // ciborium and bson write maps keyed by name, read through `Seeded`.
        #[cfg(feature = "cbor")]
        assert_eq!(
            outcome(&matrix, "cbor/ciborium", Change::Rename),
            Ok((Outcome::Ok, Outcome::Refused))
        );
        #[cfg(feature = "bson")]
        assert_eq!(
            outcome(&matrix, "bson/bson", Change::AddOptional),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        // bitcode's serde API is positional: two swapped fields of one type read each other.
        #[cfg(feature = "bitcode")]
        assert_eq!(
            outcome(&matrix, "bitcode/bitcode[serde]", Change::Reorder),
            Ok((Outcome::SilentlyWrong, Outcome::SilentlyWrong))
        );
        assert!(outcome(&matrix, &matrix.rows[0].label(), Change::EnumVariant).is_err());
    }

    #[cfg(feature = "protobuf")]
    #[test]
    fn protobuf_survives_a_rename_and_an_old_reader_gets_a_removed_field_as_its_default() {
        let matrix = matrix("test", &plain_records(), Isolation::InProcess).unwrap();
        // Names are not on the wire: a renamed field keeps its number.
        assert_eq!(
            outcome(&matrix, "protobuf/prost", Change::Rename),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        assert_eq!(
            outcome(&matrix, "protobuf/prost", Change::Reorder),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        // proto3 reads an absent field as its default: the old reader cannot tell it was removed.
        assert_eq!(
            outcome(&matrix, "protobuf/prost", Change::Remove),
            Ok((Outcome::Ok, Outcome::SilentlyWrong))
        );
        // int32 and int64 are both varints: widening is wire-compatible while values fit.
        assert_eq!(
            outcome(&matrix, "protobuf/prost", Change::Widen),
            Ok((Outcome::Ok, Outcome::Ok))
        );
    }

    #[cfg(feature = "flatbuffers")]
    #[test]
    fn flatbuffers_keeps_ids_through_a_rename_and_a_move_and_refuses_a_missing_required_string() {
        let matrix = matrix("test", &plain_records(), Isolation::InProcess).unwrap();
        for change in [Change::Rename, Change::Reorder, Change::AddOptional] {
            assert_eq!(
                outcome(&matrix, "flatbuffers/flatbuffers", change),
                Ok((Outcome::Ok, Outcome::Ok)),
                "{change:?}"
            );
        }
        // `b` is a `String`, so `(required)`: an old reader's verifier refuses the new bytes.
        assert_eq!(
            outcome(&matrix, "flatbuffers/flatbuffers", Change::Remove),
            Ok((Outcome::Ok, Outcome::Refused))
        );
    }

    #[cfg(feature = "cbor")]
    #[test]
    fn minicbor_keeps_indices_through_a_rename_and_refuses_a_missing_required_field() {
        let matrix = matrix("test", &plain_records(), Isolation::InProcess).unwrap();
        for change in [
            Change::Rename,
            Change::Reorder,
            Change::AddOptional,
            Change::AddDefault,
        ] {
            assert_eq!(
                outcome(&matrix, "cbor/minicbor", change),
                Ok((Outcome::Ok, Outcome::Ok)),
                "{change:?}"
            );
        }
        assert_eq!(
            outcome(&matrix, "cbor/minicbor", Change::Remove),
            Ok((Outcome::Ok, Outcome::Refused))
        );
    }

    #[cfg(feature = "avro")]
    #[test]
    fn avro_resolves_an_added_field_with_a_default_and_matches_fields_by_name() {
        let matrix = matrix("test", &plain_records(), Isolation::InProcess).unwrap();
        assert_eq!(
            outcome(&matrix, "avro/apache-avro", Change::AddDefault),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        assert_eq!(
            outcome(&matrix, "avro/apache-avro", Change::AddOptional),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        // A reader without the field and no default for it refuses the writer's bytes.
        assert_eq!(
            outcome(&matrix, "avro/apache-avro", Change::Remove),
            Ok((Outcome::Ok, Outcome::Refused))
        );
        // The spec promotes int to long; apache-avro also narrows a long that fits an int.
        assert_eq!(
            outcome(&matrix, "avro/apache-avro", Change::Widen),
            Ok((Outcome::Ok, Outcome::Ok))
        );
        // The spec lets an implementation use aliases (\"may optionally\"); apache-avro 0.22
        // matches a reader's fields by name alone, so a rename is refused both ways.
        assert_eq!(
            outcome(&matrix, "avro/apache-avro", Change::Rename),
            Ok((Outcome::Refused, Outcome::Refused))
        );
    }

    #[cfg(feature = "savefile")]
    #[test]
    fn savefile_reads_older_versions_refuses_newer_ones_and_its_schema_a_move_of_two_types() {
        let plain = matrix("test", &plain_records(), Isolation::InProcess).unwrap();
        for backend in ["savefile/savefile", "savefile/savefile[noschema]"] {
            // The new program declares each change with `#[savefile_versions]`; the old one
            // refuses a file of a later version.
            for change in [
                Change::AddOptional,
                Change::AddDefault,
                Change::Remove,
                Change::Rename,
                Change::Widen,
                Change::Nullable,
            ] {
                assert_eq!(
                    outcome(&plain, backend, change),
                    Ok((Outcome::Ok, Outcome::Refused)),
                    "{backend} {change:?}"
                );
            }
            // `a` and `c`, both integers, swapped: the schema compares types, not names.
            assert_eq!(
                outcome(&plain, backend, Change::Reorder),
                Ok((Outcome::SilentlyWrong, Outcome::Refused)),
                "{backend}"
            );
        }
        let records: Vec<Value> = (0..3)
            .map(|index| serde_json::json!({"n": index, "name": format!("n{index}")}))
            .collect();
        let mixed = matrix("test", &records, Isolation::InProcess).unwrap();
        assert_eq!(
            outcome(&mixed, "savefile/savefile", Change::Reorder),
            Ok((Outcome::Refused, Outcome::Refused))
        );
    }

    #[cfg(feature = "bincode")]
    #[test]
    fn bincode_reads_two_swapped_fields_of_one_type_silently_wrong() {
        let records: Vec<Value> = (0..3)
            .map(|index| serde_json::json!({"first": format!("a{index}"), "second": format!("b{index}"), "n": index}))
            .collect();
        let matrix = matrix("test", &records, Isolation::InProcess).unwrap();
        assert_eq!(
            outcome(&matrix, "bincode/bincode", Change::Reorder),
            Ok((Outcome::SilentlyWrong, Outcome::SilentlyWrong))
        );
        let row = matrix
            .rows
            .iter()
            .find(|row| row.label() == "bincode/bincode")
            .unwrap();
        let (_, Ok([cell, _])) = row
            .cells
            .iter()
            .find(|(change, _)| *change == Change::Reorder)
            .unwrap()
        else {
            panic!()
        };
        assert!(
            cell.detail.contains("first is \"b0\" where \"a0\" was written"),
            "{}",
            cell.detail
        );
    }

    #[test]
    fn the_expected_value_follows_a_renamed_field_and_has_none_for_a_removed_one() {
        let old = Shape::Record(Record {
            name: "R",
            fields: vec![Field::new("a", Shape::I64), Field::new("b", Shape::String)],
        });
        let mut renamed = Field::new("b_v2", Shape::String);
        renamed.aliases.push("b");
        let new = Shape::Record(Record {
            name: "R",
            fields: vec![Field::new("a", Shape::I64), renamed],
        });
        let record = serde_json::json!({"a": 1, "b": "x"});
        assert_eq!(
            project(&record, &old, &new),
            Ok(serde_json::json!({"a": 1, "b_v2": "x"}))
        );
        let written = serde_json::json!({"a": 1, "b_v2": "x"});
        assert_eq!(project(&written, &new, &old), Ok(record));
        let removed = Shape::Record(Record {
            name: "R",
            fields: vec![Field::new("a", Shape::I64)],
        });
        assert_eq!(project(&serde_json::json!({"a": 1}), &removed, &old), Err("b"));
    }
}

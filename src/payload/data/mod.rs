//! Data without Rust types: a user's JSON file (`--data FILE`), a folder of them, or one of the
//! public corpora serbench ships (`corpus:twitter`), read into records ([`read`]) with a schema
//! inferred over all of them ([`schema`]), as payloads named `data:<file stem>`.
//!
//! A data payload is measured by every format that can carry it without compiled types: each
//! format builds its own value tree from the records (`Format::data`). The schema is also
//! written out for the user ([`avsc`], [`proto`], [`summary`]: `serbench schema`), and what a
//! format decodes is compared with the records ([`compare`]).
//!
//! Memory: a file larger than the limit ([`DEFAULT_MAX_MIB`], `--max-data-mib`) is refused
//! before it is read; reading it and inferring its schema take at most [`READ_MEMORY_FACTOR`]
//! times its size (the bytes, and serde_json's tree of them; a test measures the worst cases),
//! and a file that much memory would not fit in ([`crate::alloc::room`]) is refused too.
//! Each arm prepared for timing then holds its own copy of its format's tree or of the encoded
//! bytes, of the same order of size as that tree.

pub mod avsc;
pub mod compare;
pub mod proto;
pub mod read;
pub mod schema;
pub mod summary;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;
use sha2::Digest;

use super::{PayloadSpec, Shape};
use crate::UsageError;
pub use compare::{Difference, Equivalence};
pub use read::DataFraming;
pub use schema::{Kind, Overrides, Schema, Type, TypedRecord, UpdateTarget, shape_key, update_target};

/// Files larger than this many MiB are refused unless `--max-data-mib` says otherwise.
pub const DEFAULT_MAX_MIB: u64 = 64;

/// Reading a file and inferring its schema hold at most this many times the file's size
/// (`tests/data_memory.rs`: a file of one-key objects costs the most, 85 times, as each object
/// is a B-tree node in serde_json's tree; the public corpora cost 3 to 6 times).
pub const READ_MEMORY_FACTOR: u64 = 100;

/// The file names a folder given to `--data` contributes; other files are named and skipped.
pub const EXTENSIONS: [&str; 3] = ["json", "ndjson", "jsonl"];

/// What to read, and how: the `--data` flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Files, folders, or `corpus:<name>`.
    pub sources: Vec<String>,
    /// `None`: detected per file.
    pub framing: Option<DataFraming>,
    pub overrides: Overrides,
    pub max_mib: u64,
    /// `--typed`: the data is also measured through generated Rust types ([`crate::gen`]).
    pub typed: bool,
}

impl Default for Request {
    fn default() -> Request {
        Request {
            sources: Vec::new(),
            framing: None,
            overrides: Overrides::default(),
            max_mib: DEFAULT_MAX_MIB,
            typed: false,
        }
    }
}

impl Request {
    /// The same request as command-line flags, for the worker processes of a run.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for source in &self.sources {
            args.extend(["--data".to_string(), source.clone()]);
        }
        if let Some(framing) = self.framing {
            args.extend(["--data-framing".to_string(), framing.name().to_string()]);
        }
        for path in &self.overrides.maps {
            args.extend(["--map".to_string(), path.clone()]);
        }
        for path in &self.overrides.records {
            args.extend(["--record".to_string(), path.clone()]);
        }
        if self.max_mib != DEFAULT_MAX_MIB {
            args.extend(["--max-data-mib".to_string(), self.max_mib.to_string()]);
        }
        if self.typed {
            args.push("--typed".to_string());
        }
        args
    }
}

/// One data file as a payload: its records and their schema.
#[derive(Debug)]
pub struct DataPayload {
    pub spec: &'static PayloadSpec,
    /// Where it came from: the path, or `corpus:<name>`.
    pub origin: String,
    pub framing: DataFraming,
    /// One per record; a document is one record.
    pub records: Vec<Value>,
    pub schema: Schema,
    /// The schema of its generated Rust types (`--typed`, [`Schema::infer_typed`]).
    pub typed_schema: Schema,
    /// The compact serde_json size of the records (as a top-level array, or the document): the
    /// reference of every ratio to JSON.
    pub json_bytes: usize,
    /// The file's size and SHA-256 (lowercase hex): what a result set records it was measured
    /// from, and what a worker process checks it read again.
    pub source_bytes: u64,
    pub sha256: String,
}

impl DataPayload {
    /// Whether the file held a list of records (an array or NDJSON) rather than one document.
    pub fn is_list(&self) -> bool {
        self.framing != DataFraming::Document
    }

    /// The records as one JSON value: the document itself, or an array of the records.
    pub fn as_value(&self) -> Value {
        match self.framing {
            DataFraming::Document => self.records[0].clone(),
            DataFraming::Array | DataFraming::Ndjson => Value::Array(self.records.clone()),
        }
    }

    /// The first difference between this data and `found`, what a format decoded as JSON: the
    /// document, or the list of records as an array.
    pub fn compare(&self, found: &Value, equivalence: Equivalence) -> Option<Difference> {
        match (self.framing, found) {
            (DataFraming::Document, found) => compare::first_difference(&self.records[0], found, equivalence),
            (_, Value::Array(found)) => self.compare_records(found, equivalence),
            (_, other) => Some(Difference {
                path: "$".to_string(),
                expected: format!("{} records", self.records.len()),
                found: read::kind_name(other).to_string(),
            }),
        }
    }

    /// The path of the first object (depth first) with more than `keys` keys, if any.
    pub fn first_object_wider_than(&self, keys: usize) -> Option<String> {
        fn find(value: &Value, keys: usize, path: &mut String) -> bool {
            let parent = path.len();
            let found = match value {
                Value::Object(object) if object.len() > keys => return true,
                Value::Object(object) => object.iter().any(|(key, value)| {
                    path.truncate(parent);
                    read::push_key(path, key);
                    find(value, keys, path)
                }),
                Value::Array(items) => items.iter().enumerate().any(|(index, value)| {
                    path.truncate(parent);
                    path.push_str(&format!("[{index}]"));
                    find(value, keys, path)
                }),
                _ => false,
            };
            if !found {
                path.truncate(parent);
            }
            found
        }
        let mut path = String::from("$");
        find(&self.as_value(), keys, &mut path).then_some(path)
    }

    /// [`DataPayload::compare`] of decoded records, one value per record.
    pub fn compare_records(&self, found: &[Value], equivalence: Equivalence) -> Option<Difference> {
        compare::first_record_difference(&self.records, found, equivalence)
    }

    /// Reads `bytes` (from `origin`) as `request` says into a payload named `data:<stem>`, leaked
    /// (once per run). An error is a usage error naming the file.
    pub fn from_bytes(
        origin: String,
        stem: &str,
        bytes: Vec<u8>,
        request: &Request,
    ) -> Result<&'static DataPayload> {
        let parsed = read::parse(&origin, &bytes, request.framing)
            .map_err(|error| UsageError::error(format!("{error:#}")))?;
        let source_bytes = bytes.len() as u64;
        let sha256: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        drop(bytes);
        let read::Parsed { framing, records } = parsed;
        let overrides = &request.overrides;
        if records.is_empty() {
            return Err(UsageError::error(format!(
                "{origin}: the file holds no records (an empty array or no lines)"
            )));
        }
        let schema = Schema::infer(&records, overrides);
        let typed_schema = Schema::infer_typed(&records, overrides);
        let json_bytes = match framing {
            DataFraming::Document => serde_json::to_vec(&records[0]),
            _ => serde_json::to_vec(&records),
        }
        .context("serde_json writes what it read")?
        .len();
        let flat = matches!(&schema.record.kind, Kind::Record(fields) if fields.iter().all(|field| is_scalar(&field.ty.kind)));
        let shape = match framing {
            DataFraming::Document => Shape::Document,
            _ => Shape::Batch { flat },
        };
        let count = records.len();
        let description = format!(
            "{origin}: {}, {count} record{}",
            framing.name(),
            if count == 1 { "" } else { "s" }
        );
        let spec: &'static PayloadSpec = Box::leak(Box::new(PayloadSpec {
            name: Box::leak(format!("data:{stem}").into_boxed_str()),
            description: Box::leak(description.into_boxed_str()),
            records: count,
            shape,
        }));
        Ok(Box::leak(Box::new(DataPayload {
            spec,
            origin,
            framing,
            records,
            schema,
            typed_schema,
            json_bytes,
            source_bytes,
            sha256,
        })))
    }
}

fn is_scalar(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String
    )
}

/// A public corpus serbench ships, compressed (`data/json-corpora/`).
pub struct Corpus {
    pub name: &'static str,
    zstd: &'static [u8],
}

pub const CORPORA: [Corpus; 3] = [
    Corpus {
        name: "twitter",
        zstd: include_bytes!("../../../data/json-corpora/twitter.json.zst"),
    },
    Corpus {
        name: "citm_catalog",
        zstd: include_bytes!("../../../data/json-corpora/citm_catalog.json.zst"),
    },
    Corpus {
        name: "canada",
        zstd: include_bytes!("../../../data/json-corpora/canada.json.zst"),
    },
];

/// The largest corpus, decompressed, with room to spare: the decompression bound.
const CORPUS_CAPACITY: usize = 4 << 20;

impl Corpus {
    pub fn by_name(name: &str) -> Option<&'static Corpus> {
        CORPORA.iter().find(|corpus| corpus.name == name)
    }

    /// The JSON file, decompressed.
    pub fn json(&self) -> Vec<u8> {
        zstd::bulk::decompress(self.zstd, CORPUS_CAPACITY).expect("the shipped corpora decompress")
    }
}

/// Reads every source of `request` into a payload (a folder gives one per file, in name order).
/// Any error is a usage error naming the file: nothing is measured from data that did not read.
pub fn load(request: &Request) -> Result<Vec<&'static DataPayload>> {
    let max_bytes = request.max_mib.saturating_mul(1 << 20);
    let mut payloads: Vec<&'static DataPayload> = Vec::new();
    for source in &request.sources {
        for (origin, stem, bytes) in sources(source, max_bytes)? {
            let payload = DataPayload::from_bytes(origin, &stem, bytes, request)?;
            if let Some(other) = payloads.iter().find(|other| other.spec.name == payload.spec.name) {
                return Err(UsageError::error(format!(
                    "{} and {} would both be the payload {}: rename one",
                    other.origin, payload.origin, payload.spec.name
                )));
            }
            payloads.push(payload);
        }
    }
    Ok(payloads)
}

/// The files one `--data` value names: `(origin, stem, bytes)`.
fn sources(source: &str, max_bytes: u64) -> Result<Vec<(String, String, Vec<u8>)>> {
    if let Some(name) = source.strip_prefix("corpus:") {
        let corpus = Corpus::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = CORPORA.iter().map(|corpus| corpus.name).collect();
            UsageError::error(format!(
                "unknown corpus '{name}' [possible values: {}]",
                names.join(", ")
            ))
        })?;
        return Ok(vec![(source.to_string(), name.to_string(), corpus.json())]);
    }
    let path = Path::new(source);
    let metadata =
        std::fs::metadata(path).map_err(|error| UsageError::error(format!("{source}: {error}")))?;
    if !metadata.is_dir() {
        return Ok(vec![(
            source.to_string(),
            stem(path)?,
            read_file(path, max_bytes)?,
        )]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .and_then(|entries| entries.map(|entry| entry.map(|entry| entry.path())).collect())
        .map_err(|error| UsageError::error(format!("{source}: {error}")))?;
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let wanted = file
            .extension()
            .and_then(|extension| extension.to_str())
            .is_some_and(|extension| EXTENSIONS.contains(&extension));
        if !wanted || file.is_dir() {
            eprintln!(
                "serbench: {}: skipped (a data folder contributes its .{} files)",
                file.display(),
                EXTENSIONS.join(", .")
            );
            continue;
        }
        let origin = file.display().to_string();
        found.push((origin, stem(&file)?, read_file(&file, max_bytes)?));
    }
    if found.is_empty() {
        return Err(UsageError::error(format!(
            "{source}: the folder holds no .{} file",
            EXTENSIONS.join(", .")
        )));
    }
    Ok(found)
}

fn stem(path: &Path) -> Result<String> {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .map(str::to_string)
        .ok_or_else(|| UsageError::error(format!("{}: a data file needs a UTF-8 name", path.display())))
}

/// The file's bytes, or a refusal if it is not a regular file or is larger than `max_bytes`
/// (checked before reading, and again while reading, should it grow).
pub fn read_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let refuse = |message: String| UsageError::error(format!("{}: {message}", path.display()));
    let metadata = std::fs::metadata(path).map_err(|error| refuse(error.to_string()))?;
    if !metadata.is_file() {
        return Err(refuse("not a regular file".to_string()));
    }
    let too_big = |size: u64| {
        refuse(format!(
            "{size} bytes is more than the data limit of {} MiB (--max-data-mib raises it; reading \
             takes up to {READ_MEMORY_FACTOR} times the file's size in memory)",
            max_bytes >> 20
        ))
    };
    if metadata.len() > max_bytes {
        return Err(too_big(metadata.len()));
    }
    let need = metadata.len().saturating_mul(READ_MEMORY_FACTOR);
    if let Some((room, limit)) = crate::alloc::room()
        && need > room
    {
        return Err(refuse(format!(
            "reading its {} bytes may take up to {} MiB ({READ_MEMORY_FACTOR} times its size, for the \
             costliest shape of data), more than the {} MiB this process may still use ({limit})",
            metadata.len(),
            need >> 20,
            room >> 20
        )));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)
        .and_then(|file| file.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|error| refuse(error.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Records with what data makes hard for a format: nulls, a field some records lack, a conflict,
/// maps keyed by data, nested and empty lists, a unicode key, an integer at a float path. For the
/// formats' tests.
#[cfg(test)]
pub(crate) const TRICKY: &str = r#"{"id": 1, "name": "ä", "score": 1, "tags": ["x"], "grid": [[1.5, 2]], "m": {"k-1": [null, 2]}, "v": 1, "sub": {"a": null}, "opt": [1], "none": null}
{"id": 2, "name": null, "score": 2.5, "tags": [], "grid": [], "m": {}, "v": "two", "sub": {"a": 3}, "none": null, "labels": {"名前": "値"}}
"#;

/// A payload of `text` read as a file named `<stem>.json` would be: for tests of the formats.
#[cfg(test)]
pub(crate) fn test_payload(stem: &str, text: &str) -> &'static DataPayload {
    DataPayload::from_bytes(
        format!("{stem}.json"),
        stem,
        text.as_bytes().to_vec(),
        &Request::default(),
    )
    .expect("test data reads")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpora_decompress_to_the_published_files() {
        use sha2::Digest;
        // From data/json-corpora/README.md.
        let published = [
            (
                "twitter",
                631_514,
                "a08b769f32b95f426cbc3abafcec65c1a19d3eb544d4ddf320eae142c99efc5d",
            ),
            (
                "citm_catalog",
                1_727_204,
                "a73e7a883f6ea8de113dff59702975e60119b4b58d451d518a929f31c92e2059",
            ),
            (
                "canada",
                2_251_051,
                "f83b3b354030d5dd58740c68ac4fecef64cb730a0d12a90362a7f23077f50d78",
            ),
        ];
        let readme = include_str!("../../../data/json-corpora/README.md");
        for (name, size, sha256) in published {
            let json = Corpus::by_name(name).unwrap().json();
            assert_eq!(json.len(), size, "{name}");
            let digest: String = sha2::Sha256::digest(&json)
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            assert_eq!(digest, sha256, "{name}");
            assert!(readme.contains(sha256), "README lists {name}'s hash");
        }
    }

    #[test]
    fn requests_round_trip_through_their_arguments() {
        let request = Request {
            sources: vec!["a.json".into(), "corpus:twitter".into()],
            framing: Some(DataFraming::Ndjson),
            overrides: Overrides {
                maps: vec!["$.m".into()],
                records: vec!["$.r".into()],
            },
            max_mib: 7,
            typed: true,
        };
        assert_eq!(
            request.to_args().join(" "),
            "--data a.json --data corpus:twitter --data-framing ndjson --map $.m --record $.r --max-data-mib 7 --typed"
        );
        assert!(Request::default().to_args().is_empty());
    }

    #[test]
    fn a_folder_gives_one_payload_per_data_file_and_names_must_differ() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.ndjson"), "{\"a\": 1}\n{\"a\": 2}\n").unwrap();
        std::fs::write(dir.path().join("a.json"), "[{\"x\": \"y\"}]").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not data").unwrap();
        let request = Request {
            sources: vec![dir.path().display().to_string()],
            ..Request::default()
        };
        let payloads = load(&request).unwrap();
        let names: Vec<(&str, usize)> = payloads
            .iter()
            .map(|payload| (payload.spec.name, payload.spec.records))
            .collect();
        assert_eq!(names, [("data:a", 1), ("data:b", 2)]);
        assert_eq!(payloads[1].framing, DataFraming::Ndjson);
        std::fs::write(dir.path().join("a.jsonl"), "{}\n").unwrap();
        let error = load(&request).unwrap_err().to_string();
        assert!(error.contains("would both be the payload data:a"), "{error}");
    }

    #[test]
    fn files_over_the_limit_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::write(&path, vec![b' '; (1 << 20) + 1]).unwrap();
        let request = Request {
            sources: vec![path.display().to_string()],
            max_mib: 1,
            ..Request::default()
        };
        let error = load(&request).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some());
        assert!(
            error
                .to_string()
                .contains("1048577 bytes is more than the data limit of 1 MiB"),
            "{error}"
        );
        let empty = Request {
            sources: vec![dir.path().join("none.json").display().to_string()],
            ..Request::default()
        };
        assert!(
            load(&empty)
                .unwrap_err()
                .to_string()
                .contains("none.json: No such file")
        );
        let unknown = Request {
            sources: vec!["corpus:nope".into()],
            ..Request::default()
        };
        assert_eq!(
            load(&unknown).unwrap_err().to_string(),
            "unknown corpus 'nope' [possible values: twitter, citm_catalog, canada]"
        );
    }

    #[test]
    fn a_payload_compares_what_a_format_decoded_with_its_records() {
        let request = Request {
            sources: vec!["corpus:twitter".into()],
            ..Request::default()
        };
        let payload = load(&request).unwrap()[0];
        assert_eq!((payload.spec.name, payload.spec.records), ("data:twitter", 1));
        assert_eq!(
            payload.json_bytes,
            serde_json::to_vec(&payload.records[0]).unwrap().len()
        );
        let mut changed = payload.as_value();
        changed["statuses"][3]["user"]["id"] = serde_json::json!(1);
        let difference = payload.compare(&changed, Equivalence::Exact).unwrap();
        assert_eq!(difference.path, "$.statuses[3].user.id");
        assert_eq!(payload.compare(&payload.as_value(), Equivalence::Exact), None);
    }
}

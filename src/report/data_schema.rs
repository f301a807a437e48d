//! `serbench schema`: the schema inferred from data files, written for the user to take home:
//! `<stem>.avsc`, `<stem>.typed.avsc` (the typed arms' Avro schema), `<stem>.proto` and
//! `<stem>.schema.txt` (the summary) per file, through the
//! output folder's lock and atomic writes. A schema one of the two formats cannot express (a
//! conflict in protobuf, a key Avro cannot name) has no file of that format; the summary says
//! why.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::UsageError;
use crate::codegen::rust;
use crate::files::OutDir;
use crate::payload::data::{self, DataPayload, Request};

/// Writes the schema files of every payload `request` reads into `out` (a folder already
/// holding one of them is refused unless `replace`, which moves them into `replaced/` first).
pub fn write(request: &Request, out: &Path, replace: bool) -> Result<Vec<PathBuf>> {
    if request.sources.is_empty() {
        return Err(UsageError::error("schema needs --data FILE"));
    }
    let payloads = data::load(request)?;
    let files: Vec<(String, String)> = payloads
        .iter()
        .flat_map(|payload| schema_files(payload))
        .collect();
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    let out = OutDir::lock(out)?;
    out.claim_files(&names, replace)?;
    files
        .iter()
        .map(|(name, text)| out.write_file(name, |file| Ok(file.write_all(text.as_bytes())?)))
        .collect()
}

/// The Avro schema of the generated types (`--typed`), named as the generated structs: the
/// generated crate's `schemas/data_<n>.avsc`.
fn typed_avsc(payload: &DataPayload) -> Result<String> {
    crate::format::typable(&payload.typed_schema).map_err(anyhow::Error::msg)?;
    let plain = rust::Derives::default();
    let module = rust::module(payload, &plain);
    data::avsc::typed_text(&payload.typed_schema, payload.is_list(), &module.records)
}

/// The files of one payload: `(name, text)`.
fn schema_files(payload: &DataPayload) -> Vec<(String, String)> {
    let stem = payload.spec.name.trim_start_matches("data:");
    let mut files = Vec::new();
    let mut summary = data::summary::text(payload);
    match data::avsc::text(payload) {
        Ok(text) => files.push((format!("{stem}.avsc"), text)),
        Err(error) => summary += &format!("\nno {stem}.avsc: {error:#}\n"),
    }
    match typed_avsc(payload) {
        Ok(text) => {
            files.push((format!("{stem}.typed.avsc"), text));
            summary += &format!(
                "\n{stem}.typed.avsc: the Avro schema of the typed arms (--typed, `dump --typed`), \
                 which write an always-null field as a nullable string and a list as the record \
                 Records; {stem}.avsc is the value trees'.\n"
            );
        }
        Err(error) => summary += &format!("\nno {stem}.typed.avsc: {error:#}\n"),
    }
    match data::proto::Plan::of(payload) {
        Ok(plan) => files.push((format!("{stem}.proto"), plan.text(&payload.origin))),
        Err(error) => summary += &format!("\nno {stem}.proto: {error:#}\n"),
    }
    files.push((format!("{stem}.schema.txt"), summary));
    files
}

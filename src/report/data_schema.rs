//! `serbench schema`: the schema inferred from data files, written for the user to take home:
//! `<stem>.avsc`, `<stem>.proto` and `<stem>.schema.txt` (the summary) per file, through the
//! output folder's lock and atomic writes. A schema one of the two formats cannot express (a
//! conflict in protobuf, a key Avro cannot name) has no file of that format; the summary says
//! why.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::UsageError;
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

/// The files of one payload: `(name, text)`.
fn schema_files(payload: &DataPayload) -> Vec<(String, String)> {
    let stem = payload.spec.name.trim_start_matches("data:");
    let mut files = Vec::new();
    let mut summary = data::summary::text(payload);
    match data::avsc::text(payload) {
        Ok(text) => files.push((format!("{stem}.avsc"), text)),
        Err(error) => summary += &format!("\nno {stem}.avsc: {error:#}\n"),
    }
    match data::proto::Plan::of(payload) {
        Ok(plan) => files.push((format!("{stem}.proto"), plan.text(&payload.origin))),
        Err(error) => summary += &format!("\nno {stem}.proto: {error:#}\n"),
    }
    files.push((format!("{stem}.schema.txt"), summary));
    files
}

//! Typed data payloads (`--typed`): a user's data measured through Rust types generated for its
//! inferred schema ([`crate::codegen`]), beside the dynamic arms of the formats' value trees.
//!
//! Generic code cannot be instantiated at run time, so the typed arms live in a generated binary:
//! it holds the data's types with every format's derives, installs a [`Hook`] and runs the same
//! command line ([`crate::cli::main`]). When the registry is built with `--typed`, the hook
//! registers each format's arms on the generated types through that format's `register_typed`,
//! and every format the crate does not carry is listed unsupported (mode `typed`) with its reason
//! ([`crate::format::plan`], the same function that decided what to generate).
//!
//! A typed payload keeps its data payload's name (`data:<stem>`) and spec; its arms are mode
//! `typed`, its value is the file's records deserialized by serde_json into the generated types,
//! proven to be the same data before any arm sees it: serialized back, it equals the records
//! under the null/absent rule the schema formats' dynamic arms use ([`Equivalence::Schema`]: a
//! null field equals an absent one, an integer a float of the same value).

use std::sync::OnceLock;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::UsageError;
use crate::format::{Format, Registry};
use crate::payload::data::{DataPayload, Equivalence, Request};
use crate::payload::{Batch, Payload};

/// The registration a generated binary installs.
pub struct Hook {
    /// The key of the types it was generated for ([`super::types_key`]): data of another
    /// schema is refused rather than measured through the wrong types.
    pub types_key: &'static str,
    /// The formats it was generated with (`--format`), in registry order.
    pub formats: &'static [&'static str],
    /// Registers `format`'s typed arms for data payload number `index` of the run.
    pub register: fn(&mut Registry, format: &str, index: usize, data: &'static DataPayload) -> Result<()>,
}

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Installs the generated binary's hook (once, before [`crate::cli::main`]).
pub fn install(hook: Hook) {
    if HOOK.set(hook).is_err() {
        panic!("a typed hook is installed once, before the command line runs");
    }
}

/// Whether this process is a generated typed binary.
pub fn installed() -> bool {
    HOOK.get().is_some()
}

/// The generated types' value of `data`: its records deserialized (the records themselves for a
/// list, wrapped as the batch type; the document for one document), then proven to be the same
/// data.
pub fn value_of<P: Batch>(data: &DataPayload) -> Result<P> {
    let origin = &data.origin;
    let value: P = if data.is_list() {
        let records: Vec<P::Record> = data
            .records
            .iter()
            .enumerate()
            .map(|(index, record)| {
                P::Record::deserialize(record)
                    .with_context(|| format!("{origin}: record {index} does not fit the generated types"))
            })
            .collect::<Result<_>>()?;
        P::from_records(records)
    } else {
        P::deserialize(&data.records[0])
            .with_context(|| format!("{origin}: the document does not fit the generated types"))?
    };
    let back = if data.is_list() {
        serde_json::to_value(value.records())
    } else {
        serde_json::to_value(&value)
    }
    .context("the generated types serialize to JSON")?;
    if let Some(difference) = data.compare(&back, Equivalence::Schema) {
        anyhow::bail!("{origin}: the generated types do not hold the file's data: {difference}");
    }
    Ok(value)
}

/// A typed payload of `data`: its spec, and the generated crate's value.
pub fn payload<P>(data: &'static DataPayload, value: fn() -> &'static P) -> Payload<P> {
    Payload {
        spec: data.spec,
        value,
    }
}

/// The registry of [`Registry::build_with_data`], with every format's typed arms (or its reason)
/// for every data payload when `request` asks for them (`--typed`).
pub fn registry(request: &Request) -> Result<Registry> {
    let mut registry = Registry::build_with_data(request)?;
    if request.typed {
        register(&mut registry, &crate::format::all())?;
    }
    Ok(registry)
}

fn register(registry: &mut Registry, formats: &[&'static Format]) -> Result<()> {
    let hook = HOOK.get().ok_or_else(|| {
        UsageError::error("--typed is run by the binary built for the data's types (serbench builds it)")
    })?;
    let payloads = registry.data.clone();
    let key = super::types_key(&payloads);
    if key != hook.types_key {
        return Err(UsageError::error(
            "this typed build was generated for data of another schema: run the plain serbench with --typed",
        ));
    }
    for (index, &data) in payloads.iter().enumerate() {
        for &format in formats {
            registry.typed_scope(format, |registry| {
                match crate::format::plan(format, data) {
                    Err(reason) => registry.unsupported_typed(data.spec, &reason),
                    Ok(()) if !hook.formats.contains(&format.name) => registry.unsupported_typed(
                        data.spec,
                        "not in this typed build: --typed builds only the selected --format",
                    ),
                    Ok(()) => (hook.register)(registry, format.name, index, data)
                        .with_context(|| format!("{}: typed arms of {}", format.name, data.spec.name))?,
                }
                anyhow::Ok(())
            })?;
        }
    }
    Ok(())
}

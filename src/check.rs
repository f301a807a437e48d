//! `serbench check` and `serbench dump`: one codec of the registry, named by format, payload and
//! optionally backend, variant and framing ([`encoder`]); `check` decodes bytes made elsewhere
//! (another program, another language's library) with it and compares what they hold with the
//! payload, the first difference named by its path.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, anyhow};

use crate::UsageError;
use crate::arm::{Encoder, Framing, Mode};
use crate::format::Registry;

/// Which codec: everything but the payload may be left to the registry's first match.
#[derive(Clone, Copy, Debug)]
pub struct CodecQuery<'a> {
    pub format: &'a str,
    pub payload: &'a str,
    pub backend: Option<&'a str>,
    pub variant: Option<&'a str>,
    pub framing: Option<Framing>,
    /// The data's generated types (`--typed`), not its value tree.
    pub typed: bool,
}

/// The first codec of the registry that `query` names (with `typed`, of the data's generated
/// types, never its value tree); a usage error listing the valid backends, variants or framings
/// otherwise, or the reason the format cannot carry the payload (typed: its typed reason).
pub fn encoder<'r>(registry: &'r Registry, query: &CodecQuery) -> Result<&'r Encoder> {
    let CodecQuery { format, payload, .. } = *query;
    let candidates: Vec<&Encoder> = registry
        .encoders
        .iter()
        .chain(&registry.shadowed_typed)
        .filter(|encoder| encoder.typed == query.typed)
        .filter(|encoder| encoder.id.format == format && encoder.id.payload == payload)
        .collect();
    if candidates.is_empty() {
        // Typed: the typed reason (a build without flatc, say) before the value tree's.
        let modes = if query.typed {
            vec![Some(Mode::Typed), None]
        } else {
            vec![None, Some(Mode::Dynamic)]
        };
        let reason = modes
            .iter()
            .find_map(|&mode| {
                registry.unsupported.iter().find(|unsupported| {
                    unsupported.mode == mode && unsupported.format == format && unsupported.payload == payload
                })
            })
            .map_or("no such codec (see `serbench list`)".to_string(), |unsupported| {
                unsupported.reason.clone()
            });
        return Err(UsageError::error(format!(
            "{format} cannot carry {payload}: {reason}"
        )));
    }
    let narrowed = narrow(candidates, "backend", query.backend, |encoder| {
        encoder.id.backend.clone()
    })?;
    let narrowed = narrow(narrowed, "variant", query.variant, |encoder| {
        encoder.id.variant.clone()
    })?;
    let narrowed = narrow(narrowed, "framing", query.framing.map(Framing::name), |encoder| {
        encoder.id.framing.name().to_string()
    })?;
    Ok(narrowed[0])
}

/// The candidates whose `axis` is `wanted` (all of them when it is not given); a usage error
/// listing the candidates' values when none is.
fn narrow<'r>(
    candidates: Vec<&'r Encoder>,
    axis: &str,
    wanted: Option<&str>,
    value: impl Fn(&Encoder) -> String,
) -> Result<Vec<&'r Encoder>> {
    let Some(wanted) = wanted else {
        return Ok(candidates);
    };
    let known = candidates.iter().map(|encoder| value(encoder));
    crate::check_names(axis, &[wanted.to_string()], known)?;
    Ok(candidates
        .into_iter()
        .filter(|encoder| value(encoder) == wanted)
        .collect())
}

/// Decodes `bytes_file` with the codec `query` names and compares it with the payload: the
/// line to print when they hold the same data; otherwise an error (exit status 1) with the
/// first differing path and both values, or why the bytes do not decode.
pub fn check(
    registry: &Registry,
    query: &CodecQuery,
    bytes_file: &Path,
    max_bytes: u64,
    limit: Duration,
) -> Result<String> {
    let encoder = encoder(registry, query)?;
    let bytes = crate::payload::data::read_file(bytes_file, max_bytes)?;
    let id = &encoder.id;
    let codec = format!(
        "{}{}",
        id.backend_label(),
        if id.framing == Framing::Document {
            String::new()
        } else {
            format!(" {}", id.framing.name())
        }
    );
    let file = bytes_file.display();
    // A decoder stuck on hostile bytes cannot be stopped from outside its thread: past the
    // limit the command says so in one line and ends the process, which has nothing else to do.
    let checked = std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::channel();
        let bytes = &bytes;
        scope.spawn(move || sender.send(encoder.check(bytes)));
        match receiver.recv_timeout(limit) {
            Ok(checked) => checked,
            Err(_) => {
                eprintln!(
                    "serbench: {file}: {codec} did not finish decoding it within {} s; stopped",
                    limit.as_secs_f64()
                );
                std::process::exit(1);
            }
        }
    });
    match checked {
        Ok(None) => Ok(format!(
            "{file}: the same data as {} ({} bytes, decoded by {codec})\n",
            id.payload,
            bytes.len()
        )),
        Ok(Some(difference)) => Err(anyhow!(
            "{file}: decoded by {codec}, differs from {} at {difference}",
            id.payload
        )),
        Err(error) => Err(anyhow!("{file}: {codec} cannot decode it: {error:#}")),
    }
}

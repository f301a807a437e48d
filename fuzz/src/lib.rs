//! What every fuzz target does: hand the input to every decoder of one format in serbench's
//! registry (every backend, payload type, framing and mode), so there is no second list of
//! decoders to keep in step with the benchmark.

use std::sync::OnceLock;

use serbench::arm::{Decoder};
use serbench::format::Registry;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

/// The decoders of `format`, less those named in `SERBENCH_FUZZ_SKIP` (comma-separated
/// `format/backend/variant`, e.g. `bincode/bincode/` for the unlimited bincode, whose known
/// length-prefix crash would stop every run at once); panics when none is left (a target for
/// a disabled format).
pub fn decoders(format: &str) -> Vec<&'static Decoder> {
    let skip = std::env::var("SERBENCH_FUZZ_SKIP").unwrap_or_default();
    let skipped = |decoder: &Decoder| {
        let codec = &decoder.id.codec;
        let name = format!("{}/{}/{}", codec.format, codec.backend, codec.variant);
        skip.split(',').any(|item| item.trim() == name)
    };
    let decoders: Vec<&Decoder> = registry()
        .decoders
        .iter()
        .filter(|decoder| decoder.id.codec.format == format && !skipped(decoder))
        .collect();
    assert!(
        !decoders.is_empty(),
        "no decoder of format {format}: is its feature enabled?"
    );
    decoders
}

/// Feeds `data` to every decoder of `format`. Errors and wrong values are fine; a panic, an
/// abort, a stack overflow, a hang or an allocation over libFuzzer's limit is a finding.
pub fn decode_all(format: &str, data: &[u8]) {
    static DECODERS: OnceLock<(String, Vec<&'static Decoder>)> = OnceLock::new();
    let (name, decoders) = DECODERS.get_or_init(|| (format.to_string(), decoders(format)));
    debug_assert_eq!(name, format, "one format per fuzz target");
    for decoder in decoders {
        let _ = std::hint::black_box(decoder.decode(data));
    }
}

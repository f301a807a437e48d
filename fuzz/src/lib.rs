//! What the fuzz target does: hand the input to every decoder in serbench's registry (every
//! format, backend, payload type, framing and mode), so there is no second list of decoders or
//! formats to keep in step with the benchmark.

use std::sync::OnceLock;

use serbench::arm::Decoder;
use serbench::format::Registry;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

/// The decoders to fuzz: those of the formats named in `SERBENCH_FUZZ_FORMAT` (comma-separated;
/// every format when unset), less those named in `SERBENCH_FUZZ_SKIP` (comma-separated
/// `format/backend/variant`, e.g. `bincode/bincode/` for the unlimited bincode, whose known
/// length-prefix crash would stop every run at once). Panics when none is left.
pub fn decoders() -> Vec<&'static Decoder> {
    let list = |name: &str| -> Vec<String> {
        std::env::var(name)
            .unwrap_or_default()
            .split(',')
            .map(|item| item.trim().to_string())
            .filter(|item| !item.is_empty())
            .collect()
    };
    let (formats, skip) = (list("SERBENCH_FUZZ_FORMAT"), list("SERBENCH_FUZZ_SKIP"));
    let chosen = |decoder: &Decoder| {
        let codec = &decoder.id.codec;
        let name = format!("{}/{}/{}", codec.format, codec.backend, codec.variant);
        (formats.is_empty() || formats.iter().any(|format| *format == codec.format)) && !skip.contains(&name)
    };
    let decoders: Vec<&Decoder> = registry()
        .decoders
        .iter()
        .filter(|decoder| chosen(decoder))
        .collect();
    assert!(
        !decoders.is_empty(),
        "no decoder left (SERBENCH_FUZZ_FORMAT={formats:?}, SERBENCH_FUZZ_SKIP={skip:?})"
    );
    decoders
}

/// Feeds `data` to every chosen decoder. Errors and wrong values are fine; a panic, an abort, a
/// stack overflow, a hang or an allocation over libFuzzer's limit is a finding.
pub fn decode_all(data: &[u8]) {
    static DECODERS: OnceLock<Vec<&'static Decoder>> = OnceLock::new();
    for decoder in DECODERS.get_or_init(decoders) {
        let _ = std::hint::black_box(decoder.decode(data));
    }
}

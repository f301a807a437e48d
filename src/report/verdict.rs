//! A ratio of two arms as one sentence a user can quote, as hyperfine words its result:
//! "`postcard/postcard` decodes `order` 1.24 ± 0.01 times slower than `protobuf/prost` (95%,
//! paired over 20 workers)". An interval that holds 1 is said to show no difference, never
//! "slower" or "faster".

use crate::arm::Operation;
use crate::stats::RatioInterval;

/// What an arm does to its payload, for one arm and for two.
fn verbs(operation: Operation) -> (&'static str, &'static str) {
    match operation {
        Operation::Encode => ("encodes", "encode"),
        Operation::Decode => ("decodes", "decode"),
        Operation::RoundTrip => ("round-trips", "round-trip"),
        Operation::AccessAll => ("reads every field of", "read every field of"),
        Operation::AccessPartial => ("reads a few fields of", "read a few fields of"),
        Operation::Update => ("updates a field of", "update a field of"),
        Operation::CompressZstd => ("compresses (zstd) the encoded", "compress (zstd) the encoded"),
        Operation::DecompressZstd => ("decompresses (zstd) the encoded", "decompress (zstd) the encoded"),
        Operation::CompressZlib => ("compresses (zlib) the encoded", "compress (zlib) the encoded"),
        Operation::DecompressZlib => ("decompresses (zlib) the encoded", "decompress (zlib) the encoded"),
    }
}

/// The sentence for `interval`, the time of arm `a` over that of arm `b` doing `operation` to
/// `payload`; `basis` says what the interval rests on ("95%, paired over 20 workers").
pub fn sentence(
    a: &str,
    b: &str,
    operation: Operation,
    payload: &str,
    interval: RatioInterval,
    basis: &str,
) -> String {
    let (one, two) = verbs(operation);
    let RatioInterval { ratio, low, high } = interval;
    if low > 1.0 {
        format!(
            "`{a}` {one} `{payload}` {} times slower than `{b}` ({basis})",
            plus_minus(ratio, low, high)
        )
    } else if high < 1.0 {
        format!(
            "`{a}` {one} `{payload}` {} times faster than `{b}` ({basis})",
            plus_minus(1.0 / ratio, 1.0 / high, 1.0 / low)
        )
    } else {
        format!(
            "`{a}` and `{b}` {two} `{payload}` equally fast: no difference at 95% (time ratio {ratio:.3}, [{low:.3}, {high:.3}]; {basis})"
        )
    }
}

/// `value ± spread`, the spread the larger side of `[low, high]`, with enough decimals that it
/// is not written as zero.
fn plus_minus(value: f64, low: f64, high: f64) -> String {
    let spread = (value - low).max(high - value);
    let decimals = if spread >= 0.005 { 2 } else { 3 };
    format!("{value:.decimals$} ± {spread:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(ratio: f64, low: f64, high: f64) -> RatioInterval {
        RatioInterval { ratio, low, high }
    }

    #[test]
    fn a_ratio_reads_as_slower_faster_or_no_difference() {
        let basis = "95%, paired over 20 workers";
        assert_eq!(
            sentence(
                "postcard/postcard",
                "protobuf/prost",
                Operation::Decode,
                "order",
                interval(1.24, 1.232, 1.249),
                basis
            ),
            "`postcard/postcard` decodes `order` 1.24 ± 0.01 times slower than `protobuf/prost` (95%, paired over 20 workers)"
        );
        // 0.8 [0.78, 0.82] is 1.25 [1.22, 1.28] the other way round.
        assert_eq!(
            sentence(
                "a/a",
                "b/b",
                Operation::Encode,
                "readings",
                interval(0.8, 0.78, 0.82),
                "95%"
            ),
            "`a/a` encodes `readings` 1.25 ± 0.03 times faster than `b/b` (95%)"
        );
        let same = sentence(
            "a/a",
            "b/b",
            Operation::RoundTrip,
            "order",
            interval(1.004, 0.997, 1.011),
            "95%",
        );
        assert!(
            same.starts_with("`a/a` and `b/b` round-trip `order` equally fast: no difference at 95%"),
            "{same}"
        );
        assert!(!same.contains("slower") && !same.contains("faster"), "{same}");
        assert!(same.contains("[0.997, 1.011]"), "{same}");
        // A spread under 0.005 keeps a third decimal rather than read ± 0.00.
        assert!(
            sentence(
                "a/a",
                "b/b",
                Operation::Decode,
                "order",
                interval(1.5, 1.498, 1.502),
                "95%"
            )
            .contains("1.500 ± 0.002 times slower")
        );
    }
}

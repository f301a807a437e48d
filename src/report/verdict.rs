//! A ratio of two arms as one sentence a user can quote, as hyperfine words its result:
//! "`postcard/postcard` decodes `order` 1.24 ± 0.01 times slower than `protobuf/prost` (95%,
//! paired over 20 workers)". A tie ([`RatioInterval::is_tie`] at [`LAYOUT_SPREAD`]) is never
//! "slower" or "faster": the two arms are indistinguishable, either because the interval holds 1
//! or because it lies inside the shift a code layout alone makes, and the sentence says which.

use crate::arm::Operation;
use crate::stats::{LAYOUT_SPREAD, RatioInterval};

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
/// `payload`; `basis` says what the interval rests on ("95%, paired over 20 workers"). A tie at
/// [`LAYOUT_SPREAD`] reads as indistinguishable.
pub fn sentence(
    a: &str,
    b: &str,
    operation: Operation,
    payload: &str,
    interval: RatioInterval,
    basis: &str,
) -> String {
    sentence_within(a, b, operation, payload, interval, basis, LAYOUT_SPREAD)
}

/// [`sentence`] with the tie band's relative `spread` given.
fn sentence_within(
    a: &str,
    b: &str,
    operation: Operation,
    payload: &str,
    interval: RatioInterval,
    basis: &str,
    spread: f64,
) -> String {
    let (one, two) = verbs(operation);
    let RatioInterval { ratio, low, high } = interval;
    let measured = format!("time ratio {ratio:.3} [{low:.3}, {high:.3}]");
    if interval.holds(1.0) {
        format!(
            "`{a}` and `{b}` {two} `{payload}` indistinguishably: {measured} holds 1, no measurable difference ({basis})"
        )
    } else if interval.is_tie(spread) {
        format!(
            "`{a}` and `{b}` {two} `{payload}` indistinguishably: {measured}, inside the ±{}% a code layout alone moves an arm ({basis})",
            percent(spread)
        )
    } else if low > 1.0 {
        format!(
            "`{a}` {one} `{payload}` {} times slower than `{b}` ({basis})",
            plus_minus(ratio, low, high)
        )
    } else {
        format!(
            "`{a}` {one} `{payload}` {} times faster than `{b}` ({basis})",
            plus_minus(1.0 / ratio, 1.0 / high, 1.0 / low)
        )
    }
}

/// A relative spread as a percentage, one decimal unless whole (0.035 is 3.5, 0.05 is 5).
pub fn percent(spread: f64) -> String {
    let percent = spread * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}")
    } else {
        format!("{percent:.1}")
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
        assert_eq!(
            same,
            "`a/a` and `b/b` round-trip `order` indistinguishably: time ratio 1.004 [0.997, 1.011] holds 1, no measurable difference (95%)"
        );
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

    #[test]
    fn a_ratio_inside_the_layout_spread_is_indistinguishable_and_says_why() {
        let basis = "95%, paired over 20 workers";
        // Excludes 1, but the whole interval is inside ±3.5%: neither slower nor faster.
        let tie = sentence_within(
            "a/a",
            "b/b",
            Operation::Decode,
            "order",
            interval(1.012, 1.004, 1.020),
            basis,
            0.035,
        );
        assert_eq!(
            tie,
            "`a/a` and `b/b` decode `order` indistinguishably: time ratio 1.012 [1.004, 1.020], inside the ±3.5% a code layout alone moves an arm (95%, paired over 20 workers)"
        );
        // Faster by less than the spread reads the same way; and the holds-1 wording differs.
        let faster = sentence_within(
            "a/a",
            "b/b",
            Operation::Encode,
            "order",
            interval(0.98, 0.97, 0.99),
            "95%",
            0.035,
        );
        assert!(
            faster.contains("indistinguishably") && faster.contains("inside the ±3.5%"),
            "{faster}"
        );
        assert!(
            !faster.contains("holds 1") && !faster.contains("faster than"),
            "{faster}"
        );
        // The same interval against a narrower band is a difference again.
        assert!(
            sentence_within(
                "a/a",
                "b/b",
                Operation::Decode,
                "order",
                interval(1.012, 1.004, 1.020),
                "95%",
                0.01
            )
            .contains("times slower than")
        );
        // One bound outside the band: a difference.
        assert!(
            sentence_within(
                "a/a",
                "b/b",
                Operation::Decode,
                "order",
                interval(1.03, 1.02, 1.04),
                "95%",
                0.035
            )
            .contains("1.03 ± 0.01 times slower than")
        );
        // The public sentence applies the layout spread itself, whatever its figure.
        let inside = 1.0 + LAYOUT_SPREAD / 2.0;
        let public = sentence(
            "a/a",
            "b/b",
            Operation::Decode,
            "order",
            interval(inside, 1.0 + LAYOUT_SPREAD / 4.0, 1.0 + LAYOUT_SPREAD * 0.75),
            basis,
        );
        assert!(
            public.contains(&format!("inside the ±{}% a code layout", percent(LAYOUT_SPREAD))),
            "{public}"
        );
    }

    #[test]
    fn spreads_print_as_percentages() {
        assert_eq!(percent(0.035), "3.5");
        assert_eq!(percent(0.05), "5");
        assert_eq!(percent(0.1), "10");
    }
}

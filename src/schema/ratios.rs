//! Ratios between two arms of one run (time per record): the headline ones users quote (Avro
//! vs JSON NDJSON decode, NDJSON vs array, dynamic vs typed, borrowed vs owned, simd-json vs serde_json,
//! apache-avro vs serde_avro_fast, the copy share of simd-json's decode, and each format against
//! each when a run holds only a few: a user's selection), written to
//! ratios.csv, and any pair of arms of one payload (`serbench ratio`). Each has two 95%
//! intervals side by side: the unpaired one from the two arms' own intervals, and, when the run
//! kept its workers (samples.csv, full profile), the paired one over the workers that measured
//! both arms, in which noise the two share inside a worker cancels; and each section's A/A
//! check ([`self_checks`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::SCHEMA_VERSION;
use super::results::{ResultRow, STATUS_OK};
use super::samples::SampleRow;
use crate::arm::{ArmId, COPY_ONLY, Framing, Mode, Operation};
use crate::files::{Record, in_range};
use crate::stats;

pub const FILE_NAME: &str = "ratios.csv";

/// `numerator / denominator` of two arms' mean time per record, with its interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub schema_version: u32,
    pub comparison: String,
    pub payload: String,
    pub operation: Operation,
    pub numerator: String,
    pub denominator: String,
    pub ratio: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Its 95% interval (the paired one where there is one) holds 1: the two arms cannot be
    /// told apart. Never the arms' own intervals overlapping, which can happen while the ratio's
    /// interval excludes 1.
    pub holds_one: bool,
    /// The ratio over the workers that measured both arms (the geometric mean of their
    /// per-worker ratios), with its interval; empty without samples.csv.
    pub paired_ratio: Option<f64>,
    pub paired_low: Option<f64>,
    pub paired_high: Option<f64>,
    /// How many workers measured both arms.
    pub paired_workers: Option<usize>,
}

impl Ratio {
    /// The interval a reader quotes: the paired one where the run kept its workers (and
    /// `true`), else the unpaired one from the two arms' own intervals (and `false`).
    pub fn quoted(&self) -> (stats::RatioInterval, bool) {
        match (self.paired_ratio, self.paired_low, self.paired_high) {
            (Some(ratio), Some(low), Some(high)) => (stats::RatioInterval { ratio, low, high }, true),
            _ => (
                stats::RatioInterval {
                    ratio: self.ratio,
                    low: self.ci95_low,
                    high: self.ci95_high,
                },
                false,
            ),
        }
    }
}

impl Record for Ratio {
    const ROW: &'static str = "ratio";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    /// Positive ratios inside their intervals, a paired interval whole or absent, and
    /// `holds_one` what the quoted interval says.
    fn check(&self) -> Result<(), String> {
        super::check_schema_version(self.schema_version)?;
        super::domains::payload(&self.payload)?;
        let intervals = match (
            self.paired_ratio,
            self.paired_low,
            self.paired_high,
            self.paired_workers,
        ) {
            (None, None, None, None) => vec![("", self.ci95_low, self.ratio, self.ci95_high)],
            (Some(ratio), Some(low), Some(high), Some(workers)) if workers >= 2 => vec![
                ("", self.ci95_low, self.ratio, self.ci95_high),
                ("paired_", low, ratio, high),
            ],
            _ => {
                return Err(
                    "paired_ratio, paired_low, paired_high and paired_workers (at least 2) are all set or all empty"
                        .to_string(),
                );
            }
        };
        for (prefix, low, ratio, high) in intervals {
            in_range(&format!("{prefix}ratio"), ratio, f64::MIN_POSITIVE, f64::MAX)?;
            if !(low <= ratio && ratio <= high && low.is_finite() && high.is_finite()) {
                return Err(format!(
                    "{prefix}ratio {ratio} is outside its interval {low}..={high}"
                ));
            }
        }
        if self.holds_one != self.quoted().0.holds(1.0) {
            return Err(format!(
                "holds_one {} disagrees with its interval",
                self.holds_one
            ));
        }
        Ok(())
    }

    fn key(&self) -> String {
        format!(
            "{} {} {} / {}",
            self.payload,
            self.operation.name(),
            self.numerator,
            self.denominator
        )
    }
}

/// Each worker's time per record of each arm, and which code layout each worker ran.
#[derive(Clone, Debug, Default)]
pub struct WorkerMeans<'a> {
    /// `(arm, pass) -> ns per record`.
    means: HashMap<(&'a ArmId, usize), f64>,
    /// `pass -> layout` (0 for a run without layouts).
    layouts: HashMap<usize, usize>,
}

impl WorkerMeans<'_> {
    /// `(pass, ns per record)` of each worker of `arm`, in no order.
    pub fn of_arm<'s>(&'s self, arm: &'s ArmId) -> impl Iterator<Item = (usize, f64)> + 's {
        self.means
            .iter()
            .filter(move |((of, _), _)| *of == arm)
            .map(|(&(_, pass), &mean)| (pass, mean))
    }
}

/// The ok samples of samples.csv by arm and pass.
pub fn worker_means<'a>(samples: impl IntoIterator<Item = &'a SampleRow>) -> WorkerMeans<'a> {
    let mut workers = WorkerMeans::default();
    for sample in samples.into_iter().filter(|sample| sample.status == STATUS_OK) {
        if let Some(mean) = sample.mean_ns {
            workers
                .means
                .insert((&sample.arm, sample.pass), mean / sample.records as f64);
            workers.layouts.insert(sample.pass, sample.layout);
        }
    }
    workers
}

/// One section's A/A check (full profile): its reference arm against a second copy of itself
/// that took its turns beside it in every worker ([`SampleRow::twin_mean_ns`]), paired over
/// those workers. The true ratio is 1, so a 95% interval holds 1 in about 95% of sections when
/// the intervals are right, and in fewer when they are too narrow.
#[derive(Clone, Debug, PartialEq)]
pub struct SelfCheck {
    pub arm: ArmId,
    pub interval: stats::RatioInterval,
    pub workers: usize,
}

/// The A/A check of every section whose reference has a twin in two or more workers.
pub fn self_checks(samples: &[SampleRow]) -> Vec<SelfCheck> {
    let mut pairs: std::collections::BTreeMap<&ArmId, Vec<(usize, f64, f64)>> = Default::default();
    for sample in samples.iter().filter(|sample| sample.status == STATUS_OK) {
        if let (Some(twin), Some(mean)) = (sample.twin_mean_ns, sample.mean_ns) {
            pairs
                .entry(&sample.arm)
                .or_default()
                .push((sample.pass, twin, mean));
        }
    }
    pairs
        .into_iter()
        .filter_map(|(arm, mut pairs)| {
            pairs.sort_by_key(|&(pass, _, _)| pass);
            let pairs: Vec<(f64, f64)> = pairs.into_iter().map(|(_, twin, mean)| (twin, mean)).collect();
            Some(SelfCheck {
                arm: arm.clone(),
                interval: stats::paired_ratio(&pairs)?,
                workers: pairs.len(),
            })
        })
        .collect()
}

/// One section's A/A check across code layouts (a run whose workers ran two or more layouts):
/// its reference arm's time in the workers of even-numbered layouts against its time in those of
/// odd-numbered ones, two independent groups ([`stats::welch_ratio`]). Layouts are drawn in a
/// random order, so the two groups interleave in time; the true ratio is 1, and an interval that
/// holds the layout level holds 1 in about 95% of sections.
pub fn layout_checks(samples: &[SampleRow]) -> Vec<SelfCheck> {
    let mut groups: std::collections::BTreeMap<&ArmId, (Vec<f64>, Vec<f64>)> = Default::default();
    for sample in samples.iter().filter(|sample| sample.status == STATUS_OK) {
        if let (Some(_), Some(mean)) = (sample.twin_mean_ns, sample.mean_ns) {
            let (even, odd) = groups.entry(&sample.arm).or_default();
            match sample.layout % 2 {
                0 => even.push(mean),
                _ => odd.push(mean),
            }
        }
    }
    groups
        .into_iter()
        .filter_map(|(arm, (even, odd))| {
            Some(SelfCheck {
                arm: arm.clone(),
                interval: stats::welch_ratio(&even, &odd)?,
                workers: even.len() + odd.len(),
            })
        })
        .collect()
}

/// What a run's A/A checks say together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfCheckSummary {
    pub sections: usize,
    /// Sections whose interval holds 1.
    pub held: usize,
    pub median_half_width: f64,
    /// The probability of `held` or fewer if every interval held 1 with 95% probability.
    pub tail: f64,
}

/// Below this tail probability the run's intervals are called too narrow.
pub const SELF_CHECK_FAILS_BELOW: f64 = 0.01;

impl SelfCheckSummary {
    pub fn of(checks: &[SelfCheck]) -> Option<SelfCheckSummary> {
        if checks.is_empty() {
            return None;
        }
        let halves: Vec<f64> = checks
            .iter()
            .map(|check| check.interval.relative_half_width())
            .collect();
        let held = checks.iter().filter(|check| check.interval.holds(1.0)).count();
        Some(SelfCheckSummary {
            sections: checks.len(),
            held,
            median_half_width: stats::percentile(&halves, 0.5),
            tail: stats::coverage_tail(held, checks.len(), 0.95),
        })
    }

    pub fn passed(&self) -> bool {
        self.tail >= SELF_CHECK_FAILS_BELOW
    }

    /// One line for the terminal and the report.
    pub fn sentence(&self) -> String {
        self.sentence_of("each section's reference arm against a copy of itself")
    }

    /// One line for the A/A check across code layouts ([`layout_checks`]).
    pub fn layouts_sentence(&self) -> String {
        self.sentence_of(
            "each section's reference arm in even-numbered code layouts against itself in odd-numbered ones",
        )
    }

    fn sentence_of(&self, what: &str) -> String {
        let verdict = match self.passed() {
            true => "the intervals are calibrated".to_string(),
            false => format!(
                "FAILED: so few would hold 1 with probability {:.4} if the intervals were right; \
                 they are too narrow on this run, so read its ratios as wider than printed",
                self.tail
            ),
        };
        format!(
            "A/A check: {what} held 1.00 in its 95% interval \
             in {} of {} sections ({:.0}%, expected 95%; median ±{:.2}%): {verdict}",
            self.held,
            self.sections,
            100.0 * self.held as f64 / self.sections as f64,
            100.0 * self.median_half_width
        )
    }
}

/// The two arms' time per record in each unit of the interval that measured both: each worker
/// (in pass order), or, where the workers ran fewer code layouts than there are workers and
/// more than one, each layout (the geometric means of its workers, in layout order): the top
/// level actually drawn (docs/measurement.md, "Levels").
pub fn paired(workers: &WorkerMeans, numerator: &ArmId, denominator: &ArmId) -> Vec<(f64, f64)> {
    let mut pairs: Vec<(usize, f64, f64)> = workers
        .means
        .iter()
        .filter(|((arm, _), _)| *arm == numerator)
        .filter_map(|(&(_, pass), &a)| Some((pass, a, *workers.means.get(&(denominator, pass))?)))
        .collect();
    pairs.sort_by_key(|&(pass, _, _)| pass);
    let layout = |pass: usize| workers.layouts.get(&pass).copied().unwrap_or(0);
    let units: Vec<(usize, f64, f64)> = pairs.iter().map(|&(pass, a, b)| (layout(pass), a, b)).collect();
    top_level(&units)
}

/// `(unit, a, b)` rows as the pairs of the top level: the rows themselves when every unit
/// (layout) is distinct or there is only one, else one pair per unit, the geometric means of its
/// rows.
pub fn top_level(rows: &[(usize, f64, f64)]) -> Vec<(f64, f64)> {
    let mut units: Vec<usize> = rows.iter().map(|&(unit, _, _)| unit).collect();
    units.sort_unstable();
    units.dedup();
    if units.len() <= 1 || units.len() == rows.len() {
        return rows.iter().map(|&(_, a, b)| (a, b)).collect();
    }
    units
        .into_iter()
        .map(|unit| {
            let of_unit: Vec<(f64, f64)> = rows
                .iter()
                .filter(|row| row.0 == unit)
                .map(|&(_, a, b)| (a.ln(), b.ln()))
                .collect();
            let count = of_unit.len() as f64;
            let (a, b) = of_unit
                .iter()
                .fold((0.0, 0.0), |(sa, sb), (a, b)| (sa + a, sb + b));
            ((a / count).exp(), (b / count).exp())
        })
        .collect()
}

/// The ratio `numerator / denominator` of two arms of `rows`, unpaired and (with `workers`)
/// paired; `None` when either arm has no figures.
pub fn pair(
    comparison: &str,
    rows: &HashMap<&ArmId, &ResultRow>,
    workers: Option<&WorkerMeans>,
    numerator: &ArmId,
    denominator: &ArmId,
) -> Option<Ratio> {
    let (a, b) = (rows.get(numerator)?, rows.get(denominator)?);
    let (ratio, ci95_low, ci95_high) = ratio_of(a, b)?;
    let pairs = workers.map_or_else(Vec::new, |workers| paired(workers, numerator, denominator));
    let paired = stats::paired_ratio(&pairs);
    let (low, high) = paired.map_or((ci95_low, ci95_high), |paired| (paired.low, paired.high));
    Some(Ratio {
        schema_version: SCHEMA_VERSION,
        comparison: comparison.to_string(),
        payload: numerator.codec.payload.clone(),
        operation: numerator.operation,
        numerator: numerator.label(),
        denominator: denominator.label(),
        ratio,
        ci95_low,
        ci95_high,
        holds_one: low <= 1.0 && 1.0 <= high,
        paired_ratio: paired.map(|paired| paired.ratio),
        paired_low: paired.map(|paired| paired.low),
        paired_high: paired.map(|paired| paired.high),
        paired_workers: paired.map(|_| pairs.len()),
    })
}

/// The ratio of two arms' mean time per record and its approximate 95% interval, treating
/// the arms as independent ([`stats::independent_ratio`]). `None` when either arm has no
/// figures.
pub fn ratio_of(numerator: &ResultRow, denominator: &ResultRow) -> Option<(f64, f64, f64)> {
    let interval = stats::independent_ratio(
        numerator.ns_per_record?,
        numerator.relative_half_width()?,
        denominator.ns_per_record?,
        denominator.relative_half_width()?,
    );
    Some((interval.ratio, interval.low, interval.high))
}

/// The ok rows by arm.
pub fn by_arm(rows: &[ResultRow]) -> HashMap<&ArmId, &ResultRow> {
    rows.iter()
        .filter(|row| row.status == STATUS_OK)
        .map(|row| (&row.arm, row))
        .collect()
}

/// Every headline ratio the rows allow, in a stable order; paired too when the run's
/// `samples` are given. A set of two to [`CHOSEN_FORMATS_AT_MOST`] formats (a user's selection)
/// also compares each format with each.
pub fn headline(rows: &[ResultRow], samples: Option<&[SampleRow]>) -> Vec<Ratio> {
    let by_arm = by_arm(rows);
    let workers = samples.map(worker_means);
    let mut ratios = Vec::new();
    let mut push = |comparison: &str, numerator: ArmId, denominator: ArmId| {
        ratios.extend(pair(
            comparison,
            &by_arm,
            workers.as_ref(),
            &numerator,
            &denominator,
        ));
    };
    let arm = |format, backend, variant, payload, operation, framing| {
        ArmId::typed(format, backend, variant, payload, operation).framed(framing)
    };
    let typed =
        |format, backend, payload, operation, framing| arm(format, backend, "", payload, operation, framing);
    // The built-in payloads in their order, then the data payloads (`data:<stem>`) as they come.
    let mut payloads: Vec<&str> = crate::payload::specs()
        .into_iter()
        .map(|spec| spec.name)
        .collect();
    for row in rows {
        if !payloads.contains(&row.arm.codec.payload.as_str()) {
            payloads.push(&row.arm.codec.payload);
        }
    }
    for payload in payloads
        .into_iter()
        .filter(|&name| rows.iter().any(|row| row.arm.codec.payload == name))
    {
        for operation in [Operation::Decode, Operation::Encode] {
            push(
                "Avro (serde_avro_fast) vs JSON NDJSON (serde_json)",
                typed("avro", "serde_avro_fast", payload, operation, Framing::Document),
                typed("json", "serde_json", payload, operation, Framing::Ndjson),
            );
            for backend in ["serde_json", "simd-json"] {
                push(
                    "NDJSON vs top-level array",
                    typed("json", backend, payload, operation, Framing::Ndjson),
                    typed("json", backend, payload, operation, Framing::Array),
                );
            }
            for framing in Framing::ALL {
                for backend in ["simd-json", "sonic-rs"] {
                    push(
                        &format!("{backend} vs serde_json (same bytes)"),
                        typed("json", backend, payload, operation, framing),
                        typed("json", "serde_json", payload, operation, framing),
                    );
                }
            }
            push(
                "apache-avro vs serde_avro_fast (same bytes)",
                typed("avro", "apache-avro", payload, operation, Framing::Document),
                typed("avro", "serde_avro_fast", payload, operation, Framing::Document),
            );
        }
        for framing in Framing::ALL {
            push(
                "copy-only share of simd-json decode",
                arm(
                    "json",
                    "simd-json",
                    COPY_ONLY,
                    payload,
                    Operation::Decode,
                    framing,
                ),
                typed("json", "simd-json", payload, Operation::Decode, framing),
            );
        }
        // The zero-copy formats against each other, and what rkyv's validation costs.
        for operation in [Operation::AccessAll, Operation::AccessPartial] {
            for (comparison, format) in [
                ("rkyv vs FlatBuffers (in-place access)", "rkyv"),
                ("Cap'n Proto vs FlatBuffers (in-place access)", "capnp"),
            ] {
                push(
                    comparison,
                    typed(format, format, payload, operation, Framing::Document),
                    typed(
                        "flatbuffers",
                        "flatbuffers",
                        payload,
                        operation,
                        Framing::Document,
                    ),
                );
            }
        }
        for operation in [Operation::Decode, Operation::AccessAll, Operation::AccessPartial] {
            push(
                "rkyv unvalidated vs validated",
                arm(
                    "rkyv",
                    "rkyv",
                    "unchecked-unsafe",
                    payload,
                    operation,
                    Framing::Document,
                ),
                typed("rkyv", "rkyv", payload, operation, Framing::Document),
            );
        }
        // A selection of a few formats: each against each, their first backends' typed arms.
        for (numerator, denominator) in chosen_pairs(rows) {
            for operation in Operation::ALL {
                push(
                    "the formats chosen, each against each",
                    typed(numerator.0, numerator.1, payload, operation, Framing::Document),
                    typed(
                        denominator.0,
                        denominator.1,
                        payload,
                        operation,
                        Framing::Document,
                    ),
                );
            }
        }
        // Every dynamic and every borrowed arm against the typed (owned) arm of the same backend,
        // variant and operation (a data payload's value tree also encodes).
        for row in rows.iter().filter(|row| row.arm.codec.payload == payload) {
            let comparison = match row.arm.mode {
                Mode::Typed | Mode::Check => continue,
                Mode::Dynamic => format!("dynamic vs typed {}", row.arm.operation.name()),
                Mode::Borrowed => "borrowed vs owned decode".to_string(),
            };
            let comparison = comparison.as_str();
            let typed = ArmId {
                mode: Mode::Typed,
                ..row.arm.clone()
            };
            push(comparison, row.arm.clone(), typed);
        }
    }
    ratios
}

/// The headline ratios README quotes under "Results on this machine" (`serbench ratio DIR
/// --headline`), by numerator, denominator, payload and operation: JSON's faster parsers, Avro
/// against NDJSON, the zero-copy formats against FlatBuffers, and what a dynamic decode costs.
/// Only the choice is fixed here: the figures are the run's own, read from its ratios.csv.
pub const README_RATIOS: [(&str, &str, &str, Operation); 7] = [
    ("json/sonic-rs", "json/serde_json", "order", Operation::Decode),
    ("json/simd-json", "json/serde_json", "vec-big", Operation::Decode),
    (
        "avro/serde_avro_fast",
        "json/serde_json ndjson",
        "readings",
        Operation::Decode,
    ),
    (
        "rkyv/rkyv",
        "flatbuffers/flatbuffers",
        "order",
        Operation::AccessPartial,
    ),
    (
        "capnp/capnp",
        "flatbuffers/flatbuffers",
        "order",
        Operation::AccessPartial,
    ),
    (
        "json/serde_json dynamic",
        "json/serde_json",
        "readings",
        Operation::Decode,
    ),
    (
        "protobuf/prost dynamic",
        "protobuf/prost",
        "readings",
        Operation::Decode,
    ),
];

/// The most formats a result set may hold for its formats to count as the user's choice, each
/// compared with each; a whole matrix has its fastest-arm ratios instead.
pub const CHOSEN_FORMATS_AT_MOST: usize = 5;

/// A format and one of its backends, by name.
type FormatBackend = (&'static str, &'static str);

/// Each pair of the formats the rows hold, in registry order, as (format, first backend), when
/// they hold two to [`CHOSEN_FORMATS_AT_MOST`].
fn chosen_pairs(rows: &[ResultRow]) -> Vec<(FormatBackend, FormatBackend)> {
    let chosen: Vec<FormatBackend> = crate::format::all()
        .into_iter()
        .filter(|format| rows.iter().any(|row| row.arm.codec.format == format.name))
        .filter_map(|format| Some((format.name, format.backends.first()?.backend)))
        .collect();
    if !(2..=CHOSEN_FORMATS_AT_MOST).contains(&chosen.len()) {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for (index, &numerator) in chosen.iter().enumerate() {
        for &denominator in &chosen[index + 1..] {
            pairs.push((numerator, denominator));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_csv_reads_back_and_a_stale_header_or_holds_one_is_refused() {
        let ratio = Ratio {
            schema_version: SCHEMA_VERSION,
            comparison: "c".into(),
            payload: "order".into(),
            operation: Operation::Decode,
            numerator: "a".into(),
            denominator: "b".into(),
            ratio: 0.9,
            ci95_low: 0.8,
            ci95_high: 1.01,
            holds_one: false,
            paired_ratio: Some(0.9),
            paired_low: Some(0.88),
            paired_high: Some(0.92),
            paired_workers: Some(7),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let write = |rows: &[Ratio]| std::fs::write(&path, crate::files::to_csv(rows).unwrap()).unwrap();
        write(std::slice::from_ref(&ratio));
        assert_eq!(
            crate::files::read_complete::<Ratio>(&path).unwrap(),
            std::slice::from_ref(&ratio)
        );
        // The paired interval excludes 1 although the unpaired one holds it: holds_one is the
        // quoted (paired) interval's.
        write(&[Ratio {
            holds_one: true,
            ..ratio.clone()
        }]);
        let error = format!("{:#}", crate::files::read_complete::<Ratio>(&path).unwrap_err());
        assert!(
            error.contains("ratios.csv:2: holds_one true disagrees"),
            "{error}"
        );
        write(&[Ratio {
            paired_workers: None,
            ..ratio.clone()
        }]);
        assert!(crate::files::read_complete::<Ratio>(&path).is_err());
        let stale = String::from_utf8(crate::files::to_csv(&[ratio]).unwrap())
            .unwrap()
            .replace("holds_one", "intervals_overlap");
        std::fs::write(&path, stale).unwrap();
        let error = format!("{:#}", crate::files::read_complete::<Ratio>(&path).unwrap_err());
        assert!(error.contains("intervals_overlap"), "{error}");
    }
    use crate::arm::Named;

    #[test]
    fn the_self_check_pairs_each_reference_with_its_twin_over_workers() {
        let reference = ArmId::typed("json", "serde_json", "", "order", Operation::Decode);
        let other = ArmId::typed("postcard", "postcard", "", "order", Operation::Decode);
        let sample = |arm: &ArmId, pass: usize, mean: f64, twin: Option<f64>| SampleRow {
            arm: arm.clone(),
            pass,
            mean_ns: Some(mean),
            twin_mean_ns: twin,
            status: STATUS_OK.to_string(),
            ..SampleRow::default()
        };
        // The twin is 1% slower in every worker, whatever the worker's speed: paired, the
        // interval is exactly 1.01 and excludes 1.
        let samples: Vec<SampleRow> = (0..4)
            .map(|pass| {
                let speed = 1.0 + 0.1 * pass as f64;
                sample(&reference, pass, 100.0 * speed, Some(101.0 * speed))
            })
            .chain([sample(&other, 0, 50.0, None)])
            .collect();
        let checks = self_checks(&samples);
        assert_eq!(checks.len(), 1);
        assert_eq!((&checks[0].arm, checks[0].workers), (&reference, 4));
        assert!((checks[0].interval.ratio - 1.01).abs() < 1e-9);
        assert!(!checks[0].interval.holds(1.0));
        let summary = SelfCheckSummary::of(&checks).unwrap();
        assert_eq!((summary.held, summary.sections), (0, 1));
        // One section of one that misses is within chance (probability 1 - 0.95 = 0.05).
        assert!(summary.passed(), "{}", summary.sentence());
        let many: Vec<SelfCheck> = (0..20).map(|_| checks[0].clone()).collect();
        let failed = SelfCheckSummary::of(&many).unwrap();
        assert!(!failed.passed());
        assert!(
            failed
                .sentence()
                .contains("in 0 of 20 sections (0%, expected 95%"),
            "{}",
            failed.sentence()
        );
        assert!(failed.sentence().contains("FAILED"), "{}", failed.sentence());
    }

    fn row(format: &str, backend: &str, framing: &str, mean: f64, half: f64, records: usize) -> ResultRow {
        ResultRow {
            arm: ArmId::typed(format, backend, "", "readings", Operation::Decode)
                .framed(Framing::from_name(framing).unwrap()),
            records,
            mean_ns: Some(mean),
            ci95_low_ns: Some(mean - half),
            ci95_high_ns: Some(mean + half),
            ns_per_record: Some(mean / records as f64),
            status: "ok".into(),
            ..ResultRow::default()
        }
    }

    #[test]
    fn ratio_and_interval_on_fixed_inputs() {
        // 200 ± 4 (2%) over 100 ± 1.5 (1.5%): ratio 2, log half-width sqrt(0.02² + 0.015²) = 0.025.
        let (ratio, low, high) = ratio_of(
            &row("a", "x", "document", 200.0, 4.0, 1),
            &row("b", "y", "document", 100.0, 1.5, 1),
        )
        .unwrap();
        assert_eq!(ratio, 2.0);
        assert!((low - 2.0 / 0.025f64.exp()).abs() < 1e-12 && (high - 2.0 * 0.025f64.exp()).abs() < 1e-12);
    }

    #[test]
    fn the_mark_follows_the_ratios_interval_not_the_arms_own() {
        // 106 ± 4 and 100 ± 3 overlap, yet 1.06x's interval [1.01, 1.11] excludes 1.
        let (a, b) = (
            row("a", "x", "document", 106.0, 4.0, 1),
            row("b", "y", "document", 100.0, 3.0, 1),
        );
        let rows = by_arm(std::slice::from_ref(&a))
            .into_iter()
            .chain(by_arm(std::slice::from_ref(&b)))
            .collect();
        let apart = pair("t", &rows, None, &a.arm, &b.arm).unwrap();
        assert!(apart.ci95_low > 1.0 && !apart.holds_one, "{apart:?}");
        let (c, d) = (
            row("a", "x", "document", 103.0, 4.0, 1),
            row("b", "y", "document", 100.0, 3.0, 1),
        );
        let rows = by_arm(std::slice::from_ref(&c))
            .into_iter()
            .chain(by_arm(std::slice::from_ref(&d)))
            .collect();
        assert!(pair("t", &rows, None, &c.arm, &d.arm).unwrap().holds_one);
    }

    #[test]
    fn headline_pairs_the_right_arms() {
        let rows = vec![
            row("json", "serde_json", "ndjson", 5000.0, 50.0, 50),
            row("json", "serde_json", "array", 4000.0, 40.0, 50),
            row("json", "simd-json", "array", 3000.0, 30.0, 50),
            row("avro", "serde_avro_fast", "document", 1000.0, 10.0, 50),
            row("json", "sonic-rs", "array", 2000.0, 20.0, 50),
        ];
        let ratios = headline(&rows, None);
        let find = |comparison: &str| {
            ratios
                .iter()
                .find(|ratio| ratio.comparison.starts_with(comparison))
                .unwrap()
        };
        assert_eq!(find("Avro").ratio, 0.2);
        assert_eq!(find("NDJSON vs").ratio, 1.25);
        assert_eq!(find("simd-json vs").ratio, 0.75);
        assert_eq!(find("simd-json vs").numerator, "json/simd-json array");
        assert_eq!(find("sonic-rs vs").ratio, 0.5);
        assert_eq!(find("sonic-rs vs").denominator, "json/serde_json array");
        assert_eq!(ratios.len(), 4, "{ratios:#?}");
    }

    #[test]
    fn a_few_formats_are_compared_each_with_each_and_a_whole_matrix_is_not() {
        let decode = |format: &str, backend: &str, mean: f64| row(format, backend, "document", mean, 1.0, 1);
        let rows = vec![
            decode("json", "serde_json", 400.0),
            decode("json", "simd-json", 300.0),
            decode("postcard", "postcard", 100.0),
            decode("protobuf", "prost", 200.0),
        ];
        let chosen: Vec<(String, String, f64)> = headline(&rows, None)
            .into_iter()
            .filter(|ratio| ratio.comparison == "the formats chosen, each against each")
            .map(|ratio| (ratio.numerator, ratio.denominator, ratio.ratio))
            .collect();
        // Registry order (json, postcard, protobuf), each format by its first backend.
        let expected = [
            ("json/serde_json", "postcard/postcard", 4.0),
            ("json/serde_json", "protobuf/prost", 2.0),
            ("postcard/postcard", "protobuf/prost", 0.5),
        ];
        assert_eq!(chosen.len(), expected.len(), "{chosen:#?}");
        for ((numerator, denominator, ratio), (want_n, want_d, want_r)) in chosen.iter().zip(expected) {
            assert!(
                numerator.starts_with(want_n) && denominator.starts_with(want_d),
                "{chosen:#?}"
            );
            assert!((ratio - want_r).abs() < 1e-12, "{chosen:#?}");
        }
        let whole: Vec<ResultRow> = crate::format::all()
            .into_iter()
            .map(|format| decode(format.name, format.backends[0].backend, 100.0))
            .collect();
        assert!(whole.len() > CHOSEN_FORMATS_AT_MOST);
        assert!(
            !headline(&whole, None)
                .iter()
                .any(|ratio| ratio.comparison.starts_with("the formats chosen")),
            "a whole matrix"
        );
    }

    #[test]
    fn every_borrowed_decode_is_paired_with_the_owned_decode_of_its_backend_and_variant() {
        let mode = |mut row: ResultRow, mode| {
            row.arm.mode = mode;
            row
        };
        let variant = |mut row: ResultRow, variant: &str| {
            row.arm.codec.variant = variant.to_string();
            row
        };
        let rows = vec![
            row("postcard", "postcard", "document", 1000.0, 10.0, 50),
            mode(
                row("postcard", "postcard", "document", 600.0, 6.0, 50),
                Mode::Borrowed,
            ),
            variant(
                row("bincode", "bincode", "document", 2000.0, 20.0, 50),
                "hardened",
            ),
            variant(
                mode(
                    row("bincode", "bincode", "document", 500.0, 5.0, 50),
                    Mode::Borrowed,
                ),
                "hardened",
            ),
            // A different variant's owned decode must not be the denominator.
            row("bincode", "bincode", "document", 100.0, 1.0, 50),
        ];
        let all = headline(&rows, None);
        let ratios: Vec<&Ratio> = all
            .iter()
            .filter(|ratio| ratio.comparison == "borrowed vs owned decode")
            .collect();
        assert_eq!(ratios.len(), 2, "{ratios:#?}");
        assert_eq!(ratios[0].numerator, "postcard/postcard borrowed");
        assert_eq!(ratios[0].denominator, "postcard/postcard");
        assert_eq!(ratios[0].ratio, 0.6);
        assert_eq!(ratios[1].numerator, "bincode/bincode[hardened] borrowed");
        assert_eq!(ratios[1].denominator, "bincode/bincode[hardened]");
        assert_eq!(ratios[1].ratio, 0.25);
    }

    #[test]
    fn a_data_payloads_dynamic_arms_are_paired_with_its_typed_arms_per_operation() {
        let on_data = |mut row: ResultRow, mode, operation| {
            row.arm.codec.payload = "data:events".to_string();
            row.arm.mode = mode;
            row.arm.operation = operation;
            row
        };
        let rows = vec![
            on_data(
                row("bson", "bson", "document", 300.0, 3.0, 10),
                Mode::Dynamic,
                Operation::Decode,
            ),
            on_data(
                row("bson", "bson", "document", 100.0, 1.0, 10),
                Mode::Typed,
                Operation::Decode,
            ),
            on_data(
                row("bson", "bson", "document", 150.0, 1.0, 10),
                Mode::Dynamic,
                Operation::Encode,
            ),
            on_data(
                row("bson", "bson", "document", 100.0, 1.0, 10),
                Mode::Typed,
                Operation::Encode,
            ),
        ];
        let ratios = headline(&rows, None);
        let found: Vec<(&str, &str, f64)> = ratios
            .iter()
            .map(|ratio| (ratio.comparison.as_str(), ratio.payload.as_str(), ratio.ratio))
            .collect();
        assert_eq!(
            found,
            [
                ("dynamic vs typed decode", "data:events", 3.0),
                ("dynamic vs typed encode", "data:events", 1.5)
            ]
        );
    }

    fn sample(arm: &ArmId, pass: usize, layout: usize, mean_ns: f64, twin: Option<f64>) -> SampleRow {
        SampleRow {
            status: STATUS_OK.to_string(),
            mean_ns: Some(mean_ns),
            twin_mean_ns: twin,
            ..SampleRow::new(&ResultRow::default(), arm, 1, pass, layout, 0.0)
        }
    }

    #[test]
    fn the_units_of_a_paired_ratio_are_workers_or_the_layouts_they_shared() {
        // Distinct layouts (or one): every worker is a unit.
        assert_eq!(
            top_level(&[(0, 2.0, 1.0), (1, 4.0, 1.0)]),
            vec![(2.0, 1.0), (4.0, 1.0)]
        );
        assert_eq!(
            top_level(&[(0, 2.0, 1.0), (0, 4.0, 1.0)]),
            vec![(2.0, 1.0), (4.0, 1.0)]
        );
        // Two layouts over three workers: one unit per layout, the geometric means of its own.
        let units = top_level(&[(1, 2.0, 1.0), (0, 3.0, 1.0), (1, 8.0, 4.0)]);
        assert_eq!(units.len(), 2);
        assert!((units[0].0 - 3.0).abs() < 1e-12 && (units[0].1 - 1.0).abs() < 1e-12);
        assert!((units[1].0 - 4.0).abs() < 1e-12 && (units[1].1 - 2.0).abs() < 1e-12);
        // Through samples: arm a twice b in each worker; workers 0 and 2 share layout 3.
        let (a, b) = (
            ArmId::typed("json", "serde_json", "", "order", Operation::Decode),
            ArmId::typed("json", "simd-json", "", "order", Operation::Decode),
        );
        let samples = vec![
            sample(&a, 0, 3, 20.0, None),
            sample(&b, 0, 3, 10.0, None),
            sample(&a, 1, 5, 22.0, None),
            sample(&b, 1, 5, 11.0, None),
            sample(&a, 2, 3, 18.0, None),
            sample(&b, 2, 3, 9.0, None),
        ];
        assert_eq!(paired(&worker_means(&samples), &a, &b).len(), 2);
    }

    #[test]
    fn the_layout_check_compares_even_and_odd_layouts_of_each_reference() {
        let arm = ArmId::typed("json", "serde_json", "", "order", Operation::Decode);
        let twin = Some(1.0);
        // The same arm 10% slower in odd layouts, beyond the spread inside each group.
        let samples: Vec<SampleRow> = (0..6)
            .map(|pass| {
                let slow = if pass % 2 == 1 { 1.1 } else { 1.0 };
                sample(&arm, pass, pass, 100.0 * slow * (1.0 + 0.001 * pass as f64), twin)
            })
            .collect();
        let checks = layout_checks(&samples);
        assert_eq!(checks.len(), 1);
        assert!(!checks[0].interval.holds(1.0), "{:?}", checks[0]);
        assert_eq!(checks[0].workers, 6);
        // Arms without a twin (not a section's reference) are not checked; one group too small.
        let other = ArmId::typed("json", "simd-json", "", "order", Operation::Decode);
        let few = vec![
            sample(&other, 0, 0, 1.0, None),
            sample(&arm, 0, 0, 1.0, twin),
            sample(&arm, 1, 1, 1.0, twin),
        ];
        assert!(layout_checks(&few).is_empty());
        let summary = SelfCheckSummary::of(&checks).unwrap();
        assert!(summary.layouts_sentence().contains("code layouts") && summary.held == 0);
    }
}

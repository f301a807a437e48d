//! `serbench compare A B`: two results folders (two hosts, or two runs or commits on one
//! host) side by side, arm by arm: A's and B's mean time per record, B/A with its approximate
//! 95% interval, whether the two arms' intervals overlap and whether B's mean lies inside A's
//! interval. Arms only one side has are listed, and so are arms that failed on either side.
//!
//! Over the arms both sides measured it sums up how honest the intervals are (docs/measurement.md,
//! "Measurement"): coverage (the fraction of arms whose B mean lies
//! inside A's interval), the fraction whose intervals overlap, the median and 95th-percentile
//! drift |B/A - 1|, and the median interval half-width of each side.
//!
//! It also compares the two runs' *ratios*: the headline ratios of ratios.csv (recomputed from
//! each side's results.csv and samples.csv, as the report does, so they are the file's exactly)
//! that both sides hold, matched by payload, operation, numerator and denominator. Each side's
//! quoted 95% interval (paired over workers where it kept them), and whether the two agree by
//! the difference test on the log scale ([`stats::RatioInterval::agrees_with`]); over all of
//! them the share that agrees, which calibrated intervals put at about 95%.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::rank::Interval;
use super::table;
use super::text::{code, ns};
use crate::arm::{ArmId, Operation};
use crate::escape;
use crate::schema::SCHEMA_VERSION;
use crate::schema::load::{self, ResultsDir};
use crate::schema::ratios::{self, Ratio, ratio_of};
use crate::schema::results::{ResultRow, STATUS_OK};
use crate::stats::{self, RatioInterval, percentile};

/// One arm both sides measured. Times are per record.
#[derive(Clone, Debug, PartialEq)]
pub struct ArmComparison {
    pub key: ArmId,
    pub a: Interval,
    pub b: Interval,
    /// B's mean over A's.
    pub ratio: f64,
    /// An approximate 95% interval of the ratio (see [`crate::schema::ratios::ratio_of`]).
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub intervals_overlap: bool,
    /// B's mean lies inside A's 95% interval.
    pub b_inside_a: bool,
}

/// How well A's intervals predict B, over the arms both measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    pub shared: usize,
    /// The difference test ([`stats::agrees`]): the fraction of arms whose |B − A| lies inside
    /// the 95% interval of the difference. About 95% for calibrated intervals.
    pub agreement: f64,
    /// The same with every B mean and half-width divided by `common_shift` first.
    pub agreement_without_shift: f64,
    /// Fraction of arms whose B mean lies inside A's 95% interval.
    pub coverage: f64,
    /// Fraction of arms whose two intervals overlap.
    pub overlap: f64,
    /// Median and 95th percentile of |B/A - 1|.
    pub median_drift: f64,
    pub p95_drift: f64,
    /// Median and 90th percentile interval half-width, as a fraction of the mean, of each side.
    pub median_half_width_a: f64,
    pub median_half_width_b: f64,
    pub p90_half_width_a: f64,
    pub p90_half_width_b: f64,
    /// The median B/A: how much faster or slower the whole machine ran B than A.
    pub common_shift: f64,
    /// Coverage and drift with every B mean divided by `common_shift` first: how well A's
    /// intervals predict where each arm stands relative to the others in B, which is what a
    /// comparison between formats in one run relies on.
    pub coverage_without_shift: f64,
    pub median_drift_without_shift: f64,
    pub p95_drift_without_shift: f64,
}

/// One ratio both sides hold (a headline ratio of ratios.csv: one arm's time per record over
/// another's), with each side's quoted 95% interval ([`Ratio::quoted`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RatioComparison {
    pub comparison: String,
    pub payload: String,
    pub operation: Operation,
    pub numerator: String,
    pub denominator: String,
    pub a: RatioInterval,
    pub b: RatioInterval,
    /// Whether each side's interval is paired over its workers (else from the two arms' own).
    pub a_paired: bool,
    pub b_paired: bool,
    /// The difference test on the log scale ([`RatioInterval::agrees_with`]).
    pub agrees: bool,
}

/// How well the two runs' ratios agree, over the ratios both hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioAgreement {
    pub shared: usize,
    pub agreeing: usize,
    /// The median relative half-width (the wider side) of each side's quoted intervals.
    pub median_half_width_a: f64,
    pub median_half_width_b: f64,
}

/// The most disagreeing ratios the default listing shows (`--verbose` shows every ratio).
pub const DISAGREEING_SHOWN: usize = 20;

/// The ratios both `a` and `b` hold, matched by payload, operation, numerator and denominator
/// (the first of a side's ratios where it has two of one key), in `a`'s order.
pub fn compare_ratios(a: &[Ratio], b: &[Ratio]) -> Vec<RatioComparison> {
    let key = |ratio: &Ratio| {
        (
            ratio.payload.clone(),
            ratio.operation,
            ratio.numerator.clone(),
            ratio.denominator.clone(),
        )
    };
    let mut b_by_key = BTreeMap::new();
    for ratio in b {
        b_by_key.entry(key(ratio)).or_insert(ratio);
    }
    let mut seen = std::collections::BTreeSet::new();
    a.iter()
        .filter(|ratio| seen.insert(key(ratio)))
        .filter_map(|ratio_a| {
            let ratio_b = b_by_key.get(&key(ratio_a))?;
            let ((a, a_paired), (b, b_paired)) = (ratio_a.quoted(), ratio_b.quoted());
            Some(RatioComparison {
                comparison: ratio_a.comparison.clone(),
                payload: ratio_a.payload.clone(),
                operation: ratio_a.operation,
                numerator: ratio_a.numerator.clone(),
                denominator: ratio_a.denominator.clone(),
                a,
                b,
                a_paired,
                b_paired,
                agrees: a.agrees_with(&b),
            })
        })
        .collect()
}

/// The share of `ratios` that agree and each side's median half-width; `None` for no ratio.
pub fn ratio_agreement(ratios: &[RatioComparison]) -> Option<RatioAgreement> {
    if ratios.is_empty() {
        return None;
    }
    let half_widths = |side: fn(&RatioComparison) -> &RatioInterval| -> Vec<f64> {
        ratios
            .iter()
            .map(|ratio| side(ratio).relative_half_width())
            .collect()
    };
    Some(RatioAgreement {
        shared: ratios.len(),
        agreeing: ratios.iter().filter(|ratio| ratio.agrees).count(),
        median_half_width_a: percentile(&half_widths(|ratio| &ratio.a), 0.5),
        median_half_width_b: percentile(&half_widths(|ratio| &ratio.b), 0.5),
    })
}

impl RatioAgreement {
    /// "ratios: 412 of 430 agree (95.8%, calibrated intervals give about 95%); median
    /// half-width A ±1.9%, B ±2.0%".
    pub fn line(&self) -> String {
        format!(
            "ratios: {} of {} agree ({}, calibrated intervals give about 95%); median half-width A ±{}, B ±{}",
            self.agreeing,
            self.shared,
            percent(self.agreeing as f64 / self.shared as f64),
            percent(self.median_half_width_a),
            percent(self.median_half_width_b)
        )
    }
}

impl RatioComparison {
    /// The table cells: payload, op, arms, A, its interval, B, its interval (`*` where
    /// unpaired), B over A, and whether the two agree. The arms as `numerator / denominator`
    /// (the Markdown rendering puts each in code font).
    fn cells(&self) -> Vec<String> {
        let interval = |interval: &RatioInterval, paired: bool| {
            format!(
                "[{}, {}]{}",
                super::text::ratio_text(interval.low),
                super::text::ratio_text(interval.high),
                if paired { "" } else { "*" }
            )
        };
        vec![
            self.payload.clone(),
            self.operation.name().to_string(),
            format!("{} / {}", self.numerator, self.denominator),
            super::text::ratio_text(self.a.ratio),
            interval(&self.a, self.a_paired),
            super::text::ratio_text(self.b.ratio),
            interval(&self.b, self.b_paired),
            format!("{:.3}", self.b.ratio / self.a.ratio),
            if self.agrees { "yes" } else { "no" }.to_string(),
        ]
    }
}

const RATIO_HEADERS: [&str; 9] = [
    "payload",
    "op",
    "arms",
    ">A",
    ">A 95% CI",
    ">B",
    ">B 95% CI",
    ">B÷A",
    "agree",
];

/// How to read the ratio table, said under its title.
const RATIO_LEGEND: &str = "A, B: each side's ratio and quoted 95% interval, paired over its workers (* where \
     unpaired: from the two arms' own intervals); agree: |ln B - ln A| within sqrt(h_A² + h_B²), \
     h the log half-width";

/// [`RATIO_LEGEND`] as Markdown (no text from a file in it).
const RATIO_LEGEND_MARKDOWN: &str = "A, B: each side's ratio and quoted 95% interval, paired over its \
     workers (\\* where unpaired: from the two arms' own intervals); agree: \\|ln B − ln A\\| within \
     sqrt(h_A² + h_B²), h the log half-width.";

/// Which run a side is: where it came from and what produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub path: PathBuf,
    pub label: String,
    pub host: String,
    pub commit: String,
    /// Portable or native: two builds on one host are compared like two hosts.
    pub build: String,
    pub profile: String,
    pub timestamp: String,
    /// The machine an emulator ran the side on ([`crate::host::Host::emulated_on`]), if one did.
    pub emulated_on: Option<String>,
}

impl Side {
    fn of(dir: &ResultsDir, label: String) -> Side {
        Side {
            path: dir.results_path.clone(),
            label,
            host: dir
                .distinct(|row| format!("{} ({}, {})", row.host.host, row.host.system, row.host.cpu))
                .join(", "),
            commit: dir.distinct(|row| row.host.commit.clone()).join(", "),
            build: dir.distinct(|row| row.host.build.clone()).join(", "),
            profile: dir.distinct(|row| row.profile.clone()).join(", "),
            timestamp: dir.distinct(|row| row.timestamp.clone()).join(", "),
            emulated_on: dir
                .rows
                .iter()
                .find_map(|row| row.host.emulated_on().map(str::to_string)),
        }
    }
}

/// The whole comparison; renders as text (`Display`, for the terminal) and as Markdown.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub arms: Vec<ArmComparison>,
    pub only_a: Vec<ArmId>,
    pub only_b: Vec<ArmId>,
    /// Arms both sides have but at least one could not measure, with the reason.
    pub failed: Vec<(ArmId, String)>,
    /// `None` when no arm was measured on both sides.
    pub agreement: Option<Agreement>,
    /// The same per payload, in payload order.
    pub per_payload: Vec<(String, Agreement)>,
    /// The ratios of ratios.csv both sides hold ([`compare_ratios`]); empty from
    /// [`compare_rows`], which has no samples to pair them.
    pub ratios: Vec<RatioComparison>,
}

/// Reads both folders (or results.csv files) in full and compares them.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    check_same_schema(a, b)?;
    let (a, b) = (load::load(a)?, load::load(b)?);
    let labels = load::labels(&[a.clone(), b.clone()]);
    let (label_a, label_b) = (format!("A: {}", labels[0]), format!("B: {}", labels[1]));
    let mut comparison = compare_rows(&a.rows, &b.rows);
    comparison.a = Side::of(&a, label_a);
    comparison.b = Side::of(&b, label_b);
    let headline = |dir: &ResultsDir| ratios::headline(&dir.rows, dir.samples.as_deref());
    comparison.ratios = compare_ratios(&headline(&a), &headline(&b));
    Ok(comparison)
}

/// Refuses two files of different schema versions with both versions named, before either is
/// parsed (a file of another schema may not parse at all).
fn check_same_schema(a: &Path, b: &Path) -> Result<()> {
    let results_path = |path: &Path| {
        if path.is_dir() {
            path.join(crate::schema::results::FILE_NAME)
        } else {
            path.to_path_buf()
        }
    };
    let (a, b) = (results_path(a), results_path(b));
    if !(a.is_file() && b.is_file()) {
        // load() says which is missing.
        return Ok(());
    }
    // A file whose version cannot be read is refused by load(), in the words `report` uses.
    let version = |path: &Path| match crate::files::schema_version(path) {
        Ok(Some((_, version))) => Some(version),
        Ok(None) => Some(SCHEMA_VERSION.to_string()),
        Err(_) => None,
    };
    let (Some(version_a), Some(version_b)) = (version(&a), version(&b)) else {
        return Ok(());
    };
    if version_a != version_b {
        return Err(crate::UsageError::error(format!(
            "schema version mismatch: {} has version {version_a}, {} has version {version_b}; \
             compare needs two results of one schema (this serbench reads version {SCHEMA_VERSION})",
            a.display(),
            b.display()
        )));
    }
    Ok(())
}

/// Compares two sets of rows (the side metadata is left empty).
pub fn compare_rows(a: &[ResultRow], b: &[ResultRow]) -> Comparison {
    let by_arm = |rows: &[ResultRow]| -> BTreeMap<ArmId, ResultRow> {
        rows.iter().map(|row| (row.arm.clone(), row.clone())).collect()
    };
    let (a_rows, b_rows) = (by_arm(a), by_arm(b));
    let mut arms = Vec::new();
    let mut failed = Vec::new();
    let mut only_a = Vec::new();
    for (key, a_row) in &a_rows {
        let Some(b_row) = b_rows.get(key) else {
            only_a.push(key.clone());
            continue;
        };
        match compare_arm(key, a_row, b_row) {
            Some(arm) => arms.push(arm),
            None => failed.push((key.clone(), failure(a_row, b_row))),
        }
    }
    let mut only_b: Vec<ArmId> = b_rows
        .keys()
        .filter(|key| !a_rows.contains_key(*key))
        .cloned()
        .collect();
    arms.sort_by_key(|arm| arm.key.sort_key());
    only_a.sort_by_key(ArmId::sort_key);
    only_b.sort_by_key(ArmId::sort_key);
    failed.sort_by_key(|(key, _)| key.sort_key());
    let agreement = agreement(&arms);
    let mut payloads: Vec<&str> = arms.iter().map(|arm| arm.key.codec.payload.as_str()).collect();
    payloads.dedup();
    let per_payload = payloads
        .into_iter()
        .filter_map(|payload| {
            let of_payload: Vec<ArmComparison> = arms
                .iter()
                .filter(|arm| arm.key.codec.payload == payload)
                .cloned()
                .collect();
            Some((payload.to_string(), self::agreement(&of_payload)?))
        })
        .collect();
    let empty = Side {
        path: PathBuf::new(),
        label: "A".to_string(),
        host: String::new(),
        commit: String::new(),
        build: String::new(),
        profile: String::new(),
        timestamp: String::new(),
        emulated_on: None,
    };
    Comparison {
        a: empty.clone(),
        b: Side {
            label: "B".to_string(),
            ..empty
        },
        arms,
        only_a,
        only_b,
        failed,
        agreement,
        per_payload,
        ratios: Vec::new(),
    }
}

fn compare_arm(key: &ArmId, a: &ResultRow, b: &ResultRow) -> Option<ArmComparison> {
    if a.status != STATUS_OK || b.status != STATUS_OK {
        return None;
    }
    let (a_interval, b_interval) = (Interval::of(a)?, Interval::of(b)?);
    let (ratio, ratio_low, ratio_high) = ratio_of(b, a)?;
    Some(ArmComparison {
        key: key.clone(),
        a: a_interval,
        b: b_interval,
        ratio,
        ratio_low,
        ratio_high,
        intervals_overlap: a_interval.overlaps(&b_interval),
        b_inside_a: a_interval.contains(b_interval.mean),
    })
}

fn failure(a: &ResultRow, b: &ResultRow) -> String {
    let side = |name: &str, row: &ResultRow| {
        if row.status == STATUS_OK {
            None
        } else if row.note.is_empty() {
            Some(format!("{name} {}", row.status))
        } else {
            Some(format!("{name} {}: {}", row.status, row.note))
        }
    };
    let reasons: Vec<String> = [side("A", a), side("B", b)].into_iter().flatten().collect();
    if reasons.is_empty() {
        "no figures".to_string()
    } else {
        reasons.join("; ")
    }
}

/// Coverage, overlap, drift and interval widths over the compared arms.
pub fn agreement(arms: &[ArmComparison]) -> Option<Agreement> {
    if arms.is_empty() {
        return None;
    }
    let shared = arms.len();
    let fraction = |count: usize| count as f64 / shared as f64;
    let drifts: Vec<f64> = arms.iter().map(|arm| (arm.ratio - 1.0).abs()).collect();
    let half_widths = |side: fn(&ArmComparison) -> &Interval| -> Vec<f64> {
        arms.iter().map(|arm| side(arm).relative_half_width()).collect()
    };
    let ratios: Vec<f64> = arms.iter().map(|arm| arm.ratio).collect();
    let common_shift = percentile(&ratios, 0.5);
    let drifts_without_shift: Vec<f64> = ratios
        .iter()
        .map(|ratio| (ratio / common_shift - 1.0).abs())
        .collect();
    let covered_without_shift = arms
        .iter()
        .filter(|arm| arm.a.contains(arm.b.mean / common_shift))
        .count();
    let agreeing = |shift: f64| {
        arms.iter()
            .filter(|arm| {
                let half = |interval: &Interval| (interval.high - interval.low) / 2.0;
                stats::agrees(arm.a.mean, half(&arm.a), arm.b.mean / shift, half(&arm.b) / shift)
            })
            .count()
    };
    Some(Agreement {
        shared,
        agreement: fraction(agreeing(1.0)),
        agreement_without_shift: fraction(agreeing(common_shift)),
        coverage: fraction(arms.iter().filter(|arm| arm.b_inside_a).count()),
        overlap: fraction(arms.iter().filter(|arm| arm.intervals_overlap).count()),
        median_drift: percentile(&drifts, 0.5),
        p95_drift: percentile(&drifts, 0.95),
        median_half_width_a: percentile(&half_widths(|arm| &arm.a), 0.5),
        median_half_width_b: percentile(&half_widths(|arm| &arm.b), 0.5),
        p90_half_width_a: percentile(&half_widths(|arm| &arm.a), 0.9),
        p90_half_width_b: percentile(&half_widths(|arm| &arm.b), 0.9),
        common_shift,
        coverage_without_shift: fraction(covered_without_shift),
        median_drift_without_shift: percentile(&drifts_without_shift, 0.5),
        p95_drift_without_shift: percentile(&drifts_without_shift, 0.95),
    })
}

fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

impl ArmComparison {
    /// The table cells: payload, op, arm, A, ±, B, ±, B/A, interval, verdict, B in A's CI, and
    /// B/A over the common shift (`shift`: the ratio of ratios, `*` where its interval excludes 1).
    fn cells(&self, shift: f64) -> Vec<String> {
        vec![
            self.key.codec.payload.clone(),
            self.key.operation.name().to_string(),
            self.key.label(),
            ns(self.a.mean),
            format!("±{}", percent(self.a.relative_half_width())),
            ns(self.b.mean),
            format!("±{}", percent(self.b.relative_half_width())),
            format!("{:.3}", self.ratio),
            format!("[{:.3}, {:.3}]", self.ratio_low, self.ratio_high),
            // From B/A's interval, so one that excludes 1 is never called an overlap (the two
            // runs' own intervals can overlap while it does).
            if self.ratio_low <= 1.0 && 1.0 <= self.ratio_high {
                "≈"
            } else if self.ratio < 1.0 {
                "B faster"
            } else {
                "B slower"
            }
            .to_string(),
            if self.b_inside_a { "yes" } else { "no" }.to_string(),
            format!(
                "{:.3}{}",
                self.ratio / shift,
                if self.moved(shift) { "*" } else { "" }
            ),
        ]
    }

    /// Whether the arm's standing moved: its B/A interval, over the common shift, excludes 1.
    fn moved(&self, shift: f64) -> bool {
        self.ratio_high / shift < 1.0 || self.ratio_low / shift > 1.0
    }
}

const HEADERS: [&str; 12] = [
    "payload",
    "op",
    "arm",
    ">A ns/record",
    ">A ±",
    ">B ns/record",
    ">B ±",
    ">B/A",
    ">B/A 95% CI",
    "verdict",
    "B in A's CI",
    ">÷ shift",
];

impl Agreement {
    fn lines(&self) -> Vec<String> {
        let count = |fraction: f64| (fraction * self.shared as f64).round() as usize;
        vec![
            format!(
                "agreement (|B - A| within the 95% interval of the difference; about 95% when the intervals are honest): {} of {} shared arms ({}); with the common shift divided out {}",
                count(self.agreement),
                self.shared,
                percent(self.agreement),
                percent(self.agreement_without_shift)
            ),
            format!(
                "coverage: B's mean inside A's 95% CI for {} of {} shared arms ({}; at most about 83% for two equally precise exact intervals)",
                count(self.coverage),
                self.shared,
                percent(self.coverage)
            ),
            format!(
                "CIs overlap for {} of {} ({})",
                count(self.overlap),
                self.shared,
                percent(self.overlap)
            ),
            format!(
                "drift |B/A - 1|: median {}, 95th percentile {}",
                percent(self.median_drift),
                percent(self.p95_drift)
            ),
            format!(
                "CI half-width (% of mean): median A {}, B {}; 90th percentile A {}, B {}",
                percent(self.median_half_width_a),
                percent(self.median_half_width_b),
                percent(self.p90_half_width_a),
                percent(self.p90_half_width_b)
            ),
            format!(
                "common shift (median B/A, the whole machine): {:+.1}%; with it divided out: coverage {} of {} ({}), drift median {}, 95th percentile {}",
                (self.common_shift - 1.0) * 100.0,
                count(self.coverage_without_shift),
                self.shared,
                percent(self.coverage_without_shift),
                percent(self.median_drift_without_shift),
                percent(self.p95_drift_without_shift)
            ),
        ]
    }
}

impl Side {
    fn line(&self) -> String {
        format!(
            "{}: {} — {}, commit {}, {} build, profile {}, {}",
            self.label,
            self.path.display(),
            self.host,
            self.commit,
            self.build,
            self.profile,
            self.timestamp
        )
    }
}

impl fmt::Display for Comparison {
    /// The terminal rendering, one-sided arms as counts ([`Comparison::text`] lists them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text(false))
    }
}

/// The per-payload agreement table's columns.
const PER_PAYLOAD_HEADERS: [&str; 7] = [
    "payload",
    ">arms",
    ">agreement",
    ">without shift",
    ">coverage",
    ">median ± A, B",
    ">shift",
];

impl Comparison {
    /// The ratio summary ([`RatioAgreement::line`]), or that no ratio is held by both sides.
    fn ratio_line(&self) -> String {
        match ratio_agreement(&self.ratios) {
            Some(agreement) => agreement.line(),
            None => "ratios: no ratio of ratios.csv is held by both sides".to_string(),
        }
    }

    /// The ratios to list, under their title: every one with `verbose`; else those that
    /// disagree, at most [`DISAGREEING_SHOWN`], and how many more disagree.
    fn listed_ratios(&self, verbose: bool) -> (String, Vec<&RatioComparison>, usize) {
        if verbose {
            let title = format!("the {} ratios both sides hold", self.ratios.len());
            return (title, self.ratios.iter().collect(), 0);
        }
        let disagreeing: Vec<&RatioComparison> = self.ratios.iter().filter(|ratio| !ratio.agrees).collect();
        let title = format!(
            "the ratios that disagree ({} of {}; --verbose lists every ratio)",
            disagreeing.len(),
            self.ratios.len()
        );
        let more = disagreeing.len().saturating_sub(DISAGREEING_SHOWN);
        let shown = disagreeing.into_iter().take(DISAGREEING_SHOWN).collect();
        (title, shown, more)
    }

    /// The common shift (the median B/A over the shared arms), 1 when none is shared.
    fn shift(&self) -> f64 {
        self.agreement
            .as_ref()
            .map_or(1.0, |agreement| agreement.common_shift)
    }

    /// What a comparison of two hosts (or two runs) says first: how much faster or slower B ran
    /// as a whole, and, that shift divided out, how many arms changed their standing (each arm's
    /// B/A over the shift is its ratio of ratios: its ratio to the typical arm on B over the
    /// same on A).
    pub fn shift_sentence(&self) -> Option<String> {
        let agreement = self.agreement.as_ref()?;
        let shift = agreement.common_shift;
        let moved = self.arms.iter().filter(|arm| arm.moved(shift)).count();
        let hosts = if self.a.host == self.b.host {
            "B"
        } else {
            "B's host"
        };
        let emulated: Vec<String> = [&self.a, &self.b]
            .into_iter()
            .filter_map(|side| {
                let machine = side.emulated_on.as_ref()?;
                Some(format!(
                    " {} ran under an emulator on {machine}: the shift and the standings there are \
                     the emulator's, not a CPU's.",
                    side.label
                ))
            })
            .collect();
        Some(format!(
            "{hosts} ran the {} shared arms {} {} A as a whole (the common shift, the median B/A). \
             With it divided out, each arm's ratio of ratios (B/A ÷ shift) says how its standing \
             among the arms moved: {moved} of {} moved beyond their intervals (marked *), median \
             |ratio of ratios - 1| {}.{}",
            agreement.shared,
            super::text::ratio(if shift >= 1.0 { shift } else { 1.0 / shift }),
            if shift >= 1.0 {
                "slower than"
            } else {
                "faster than"
            },
            agreement.shared,
            percent(agreement.median_drift_without_shift),
            emulated.concat(),
        ))
    }

    fn per_payload_cells(&self) -> Vec<Vec<String>> {
        self.per_payload
            .iter()
            .map(|(payload, agreement)| {
                vec![
                    payload.clone(),
                    agreement.shared.to_string(),
                    percent(agreement.agreement),
                    percent(agreement.agreement_without_shift),
                    percent(agreement.coverage),
                    format!(
                        "{}, {}",
                        percent(agreement.median_half_width_a),
                        percent(agreement.median_half_width_b)
                    ),
                    format!("{:+.1}%", (agreement.common_shift - 1.0) * 100.0),
                ]
            })
            .collect()
    }

    /// The terminal rendering: the sides; the summary first (the common shift, the agreement
    /// and drift, per payload); then the shared arms; then what only one side has or could not
    /// measure, as counts, or arm by arm with `verbose`.
    pub fn text(&self, verbose: bool) -> String {
        let mut text = format!("{}\n{}\n\n", self.a.line(), self.b.line());
        if let Some(sentence) = self.shift_sentence() {
            text += &format!("{sentence}\n\n");
        }
        match &self.agreement {
            Some(agreement) => {
                for line in agreement.lines() {
                    text += &format!("{line}\n");
                }
            }
            None => text += "no arm was measured on both sides\n",
        }
        text += &format!("{}\n", self.ratio_line());
        if self.per_payload.len() > 1 {
            text += "\nper payload:\n";
            text += &table::render(&PER_PAYLOAD_HEADERS, &self.per_payload_cells());
        }
        let (title, listed, more) = self.listed_ratios(verbose);
        if !listed.is_empty() {
            let rows: Vec<Vec<String>> = listed.iter().map(|ratio| ratio.cells()).collect();
            text += &format!("\n{title}:\n({RATIO_LEGEND})\n");
            text += &table::render(&RATIO_HEADERS, &rows);
            if more > 0 {
                text += &format!("and {more} more\n");
            }
        }
        if !self.arms.is_empty() {
            let shift = self.shift();
            let rows: Vec<Vec<String>> = self.arms.iter().map(|arm| arm.cells(shift)).collect();
            text += &format!("\nthe {} arms both sides measured:\n", self.arms.len());
            text += &table::render(&HEADERS, &rows);
        }
        let one_sided = [("only in A", &self.only_a), ("only in B", &self.only_b)];
        if verbose {
            for (title, keys) in one_sided {
                if !keys.is_empty() {
                    text += &format!("\n{title} ({}):\n", keys.len());
                    for key in keys {
                        text += &format!("  {key}\n");
                    }
                }
            }
            if !self.failed.is_empty() {
                text += &format!("\nnot measured on both sides ({}):\n", self.failed.len());
                for (key, reason) in &self.failed {
                    text += &format!("  {key}: {reason}\n");
                }
            }
        } else {
            let counts: Vec<String> = one_sided
                .iter()
                .map(|(title, keys)| (*title, keys.len()))
                .chain(std::iter::once(("not measured on both sides", self.failed.len())))
                .filter(|(_, count)| *count > 0)
                .map(|(title, count)| format!("{title}: {count} arms"))
                .collect();
            if !counts.is_empty() {
                text += &format!("\n{} (--verbose lists them)\n", counts.join("; "));
            }
        }
        text
    }

    /// `--markdown`, the ratios as the default text lists them ([`Comparison::markdown_with`]).
    pub fn markdown(&self) -> String {
        self.markdown_with(false)
    }

    /// `--markdown`: every string from the folders (paths, host columns, names, notes) through
    /// [`escape::markdown`], names in code font where they need no escape ([`code`]); every
    /// ratio both sides hold with `verbose`, else those that disagree.
    pub fn markdown_with(&self, verbose: bool) -> String {
        let mut text = String::from("# serbench compare\n\n");
        for side in [&self.a, &self.b] {
            text += &format!("- {}\n", escape::markdown(&side.line()));
        }
        text += "\nTime per record; B/A below 1 means B is faster. In brackets an approximate 95% \
                 interval of the ratio.\n\n";
        if let Some(sentence) = self.shift_sentence() {
            text += &format!("{}\n\n", escape::markdown(&sentence));
        }
        if let Some(agreement) = &self.agreement {
            text += "## Agreement\n\n";
            for line in agreement.lines() {
                text += &format!("- {line}\n");
            }
            text += "\n";
            if self.per_payload.len() > 1 {
                let header: Vec<String> = PER_PAYLOAD_HEADERS.iter().map(|name| name.to_string()).collect();
                let mut cells = self.per_payload_cells();
                for row in &mut cells {
                    row[0] = escape::markdown(&row[0]);
                }
                text += &super::text::table(&header, &cells);
            }
        }
        text += &format!("## Ratios\n\n{}\n\n", self.ratio_line());
        let (title, listed, more) = self.listed_ratios(verbose);
        if !listed.is_empty() {
            text += &format!("{}: {RATIO_LEGEND_MARKDOWN}\n\n", escape::markdown(&title));
            let header: Vec<String> = RATIO_HEADERS.iter().map(|name| name.to_string()).collect();
            let rows: Vec<Vec<String>> = listed
                .iter()
                .map(|ratio| {
                    let mut cells = ratio.cells();
                    cells[0] = escape::markdown(&cells[0]);
                    cells[2] = format!("{} / {}", code(&ratio.numerator), code(&ratio.denominator));
                    for interval in [4, 6] {
                        cells[interval] = cells[interval].replace('*', "\\*");
                    }
                    cells
                })
                .collect();
            text += &super::text::table(&header, &rows);
            if more > 0 {
                text += &format!("and {more} more\n\n");
            }
        }
        if !self.arms.is_empty() {
            text += "## Arms\n\n";
            let names: Vec<&str> = HEADERS.iter().map(|name| name.trim_start_matches('>')).collect();
            let rules: Vec<&str> = HEADERS
                .iter()
                .map(|name| if name.starts_with('>') { "---:" } else { "---" })
                .collect();
            text += &format!("| {} |\n| {} |\n", names.join(" | "), rules.join(" | "));
            for arm in &self.arms {
                let mut cells = arm.cells(self.shift());
                cells[0] = escape::markdown(&cells[0]);
                cells[2] = code(&cells[2]);
                text += &format!("| {} |\n", cells.join(" | "));
            }
            text += "\n";
        }
        for (title, keys) in [("Only in A", &self.only_a), ("Only in B", &self.only_b)] {
            if !keys.is_empty() {
                text += &format!("## {title}\n\n");
                for key in keys {
                    text += &format!(
                        "- {} {} {}\n",
                        escape::markdown(&key.codec.payload),
                        key.operation.name(),
                        code(&key.label())
                    );
                }
                text += "\n";
            }
        }
        if !self.failed.is_empty() {
            text += "## Not measured on both sides\n\n";
            for (key, reason) in &self.failed {
                text += &format!(
                    "- {} {} {}: {}\n",
                    escape::markdown(&key.codec.payload),
                    key.operation.name(),
                    code(&key.label()),
                    escape::markdown(reason)
                );
            }
            text += "\n";
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::Named;

    fn row(backend: &str, operation: &str, mean: f64, half: f64, records: usize) -> ResultRow {
        ResultRow {
            schema_version: SCHEMA_VERSION,
            arm: ArmId::typed(
                "json",
                backend,
                "",
                "readings",
                crate::arm::Operation::from_name(operation).unwrap(),
            ),
            records,
            mean_ns: Some(mean),
            ci95_low_ns: Some(mean - half),
            ci95_high_ns: Some(mean + half),
            ns_per_record: Some(mean / records as f64),
            status: STATUS_OK.into(),
            ..ResultRow::default()
        }
    }

    #[test]
    fn the_common_shift_comes_first_and_each_arm_gets_its_ratio_of_ratios() {
        // B runs everything twice as slow as A, and `moved` three times as slow.
        let a = [
            row("x", "decode", 1000.0, 10.0, 10),
            row("y", "decode", 1000.0, 10.0, 10),
            row("moved", "decode", 1000.0, 10.0, 10),
        ];
        let b = [
            row("x", "decode", 2000.0, 20.0, 10),
            row("y", "decode", 2000.0, 20.0, 10),
            row("moved", "decode", 3000.0, 30.0, 10),
        ];
        let comparison = compare_rows(&a, &b);
        assert_eq!(comparison.shift(), 2.0);
        let cells = |backend: &str| {
            let arm = comparison
                .arms
                .iter()
                .find(|arm| arm.key.codec.backend == backend)
                .unwrap();
            arm.cells(comparison.shift()).pop().unwrap()
        };
        assert_eq!(
            (cells("x"), cells("moved")),
            ("1.000".to_string(), "1.500*".to_string())
        );
        let text = comparison.to_string();
        let sentence = text
            .find("ran the 3 shared arms 2.00x slower than A as a whole")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(text.contains("1 of 3 moved beyond their intervals"), "{text}");
        assert!(
            sentence < text.find("payload").unwrap(),
            "the shift is said before the table: {text}"
        );
        assert!(comparison.markdown().contains("1 of 3 moved"));
    }

    #[test]
    fn ratio_overlap_and_inside_on_fixed_inputs() {
        // A: 1000 ± 20 over 10 records = 100 [98, 102] per record.
        let a = [
            row("inside", "decode", 1000.0, 20.0, 10),
            row("overlapping", "decode", 1000.0, 20.0, 10),
            row("apart", "decode", 1000.0, 20.0, 10),
        ];
        let b = [
            // 101 [100, 102]: inside A's interval.
            row("inside", "decode", 1010.0, 10.0, 10),
            // 103 [101, 105]: outside, but the intervals overlap.
            row("overlapping", "decode", 1030.0, 20.0, 10),
            // 90 [89, 91]: apart.
            row("apart", "decode", 900.0, 10.0, 10),
        ];
        let comparison = compare_rows(&a, &b);
        let arm = |backend: &str| {
            comparison
                .arms
                .iter()
                .find(|arm| arm.key.codec.backend == backend)
                .unwrap()
        };
        let inside = arm("inside");
        assert!((inside.ratio - 1.01).abs() < 1e-12);
        assert!(inside.b_inside_a && inside.intervals_overlap);
        assert!(inside.ratio_low < 1.01 && 1.01 < inside.ratio_high);
        let overlapping = arm("overlapping");
        assert!((overlapping.ratio - 1.03).abs() < 1e-12);
        assert!(!overlapping.b_inside_a && overlapping.intervals_overlap);
        // The runs' own intervals overlap, yet B/A's excludes 1: the verdict says so.
        assert!(overlapping.ratio_low > 1.0, "{overlapping:?}");
        assert_eq!(overlapping.cells(1.0)[9], "B slower");
        assert_eq!(inside.cells(1.0)[9], "≈");
        let apart = arm("apart");
        assert!((apart.ratio - 0.9).abs() < 1e-12);
        assert!(!apart.b_inside_a && !apart.intervals_overlap);
        assert_eq!(apart.cells(1.0)[9], "B faster");

        let agreement = comparison.agreement.unwrap();
        assert_eq!(agreement.shared, 3);
        // The difference test: inside (|1| <= sqrt(2² + 1²)) agrees; overlapping (|3| > sqrt(2² +
        // 2²)) and apart do not.
        assert!((agreement.agreement - 1.0 / 3.0).abs() < 1e-12);
        assert!((agreement.coverage - 1.0 / 3.0).abs() < 1e-12);
        assert!((agreement.overlap - 2.0 / 3.0).abs() < 1e-12);
        // Drifts 0.01, 0.03, 0.10: median 0.03; 95th percentile 0.03 + 0.9 * 0.07.
        assert!((agreement.median_drift - 0.03).abs() < 1e-12);
        assert!((agreement.p95_drift - (0.03 + 0.9 * 0.07)).abs() < 1e-12);
        // Half-widths: A 2% everywhere; B 1%, ~1.94%, ~1.11%.
        assert!((agreement.median_half_width_a - 0.02).abs() < 1e-12);
        assert!((agreement.median_half_width_b - 10.0 / 900.0).abs() < 1e-12);
        // Ratios 1.01, 1.03, 0.90: common shift 1.01. Divided by it, B's means are 100, ~101.98
        // and ~89.11: two inside [98, 102]; drifts 0, ~0.0198, ~0.109.
        assert!((agreement.common_shift - 1.01).abs() < 1e-12);
        assert!((agreement.coverage_without_shift - 2.0 / 3.0).abs() < 1e-12);
        assert!((agreement.median_drift_without_shift - (1.03 / 1.01 - 1.0)).abs() < 1e-12);
    }

    fn ratio(numerator: &str, value: f64, log_half: f64, paired: bool) -> Ratio {
        let (low, high) = (value / log_half.exp(), value * log_half.exp());
        Ratio {
            schema_version: SCHEMA_VERSION,
            comparison: "the formats chosen, each against each".into(),
            payload: "order".into(),
            operation: Operation::Decode,
            numerator: numerator.into(),
            denominator: "json/serde_json".into(),
            ratio: value,
            ci95_low: low,
            ci95_high: high,
            holds_one: low <= 1.0 && 1.0 <= high,
            paired_ratio: paired.then_some(value),
            paired_low: paired.then_some(low),
            paired_high: paired.then_some(high),
            paired_workers: paired.then_some(8),
        }
    }

    #[test]
    fn ratios_agree_by_the_difference_test_on_the_log_scale() {
        // Half-widths 0.03 and 0.04 on the log scale: the difference's is 0.05.
        let a = [
            ratio("near", 0.5, 0.03, true),
            ratio("apart", 0.5, 0.03, true),
            ratio("only-a", 0.5, 0.03, true),
        ];
        let b = [
            ratio("apart", 0.5 * 0.0501f64.exp(), 0.04, false),
            ratio("near", 0.5 * 0.0499f64.exp(), 0.04, true),
            ratio("only-b", 0.5, 0.03, true),
        ];
        let compared = compare_ratios(&a, &b);
        let found: Vec<(&str, bool, bool)> = compared
            .iter()
            .map(|ratio| (ratio.numerator.as_str(), ratio.agrees, ratio.b_paired))
            .collect();
        assert_eq!(found, [("near", true, true), ("apart", false, false)]);
        let agreement = ratio_agreement(&compared).unwrap();
        assert_eq!((agreement.agreeing, agreement.shared), (1, 2));
        assert!((agreement.median_half_width_a - (0.03f64.exp() - 1.0)).abs() < 1e-12);
        assert!((agreement.median_half_width_b - (0.04f64.exp() - 1.0)).abs() < 1e-12);
        assert_eq!(
            agreement.line(),
            "ratios: 1 of 2 agree (50.0%, calibrated intervals give about 95%); median half-width A ±3.0%, B ±4.1%"
        );
        assert_eq!(ratio_agreement(&[]), None);

        let mut comparison = compare_rows(
            &[row("x", "decode", 100.0, 1.0, 1)],
            &[row("x", "decode", 100.0, 1.0, 1)],
        );
        comparison.ratios = compared;
        // By default: the summary and the one that disagrees, B's interval marked unpaired.
        let text = comparison.text(false);
        assert!(text.contains("ratios: 1 of 2 agree (50.0%"), "{text}");
        assert!(
            text.contains("the ratios that disagree (1 of 2; --verbose lists every ratio"),
            "{text}"
        );
        let listed = |text: &str, numerator: &str| text.contains(&format!("{numerator} / json/serde_json"));
        assert!(listed(&text, "apart") && !listed(&text, "near"), "{text}");
        assert!(text.contains("]*"), "{text}");
        let verbose = comparison.text(true);
        assert!(listed(&verbose, "apart") && listed(&verbose, "near"), "{verbose}");
        assert!(verbose.contains("the 2 ratios both sides hold"), "{verbose}");
        let markdown = comparison.markdown();
        assert!(
            markdown.contains("## Ratios\n\nratios: 1 of 2 agree"),
            "{markdown}"
        );
        assert!(markdown.contains("`apart` / `json/serde_json`"), "{markdown}");
        assert!(markdown.contains("]\\*"), "{markdown}");
        assert!(!markdown.contains("`near`"), "{markdown}");
        assert!(comparison.markdown_with(true).contains("`near`"));
    }

    #[test]
    fn at_most_twenty_disagreeing_ratios_are_listed_by_default() {
        let names: Vec<String> = (0..DISAGREEING_SHOWN + 3)
            .map(|index| format!("r{index:02}"))
            .collect();
        let a: Vec<Ratio> = names.iter().map(|name| ratio(name, 1.0, 0.01, true)).collect();
        let b: Vec<Ratio> = names.iter().map(|name| ratio(name, 2.0, 0.01, true)).collect();
        let mut comparison = compare_rows(&[], &[]);
        comparison.ratios = compare_ratios(&a, &b);
        let text = comparison.text(false);
        assert!(text.contains("ratios: 0 of 23 agree (0.0%"), "{text}");
        assert!(text.contains("r19 / ") && !text.contains("r20 / "), "{text}");
        assert!(text.contains("\nand 3 more\n"), "{text}");
        assert!(comparison.text(true).contains("r22 / "));
    }

    #[test]
    fn each_side_says_which_build_it_measured() {
        let side = |build: &str| {
            let mut rows = vec![row("serde_json", "decode", 100.0, 1.0, 1)];
            rows[0].host.build = build.into();
            let dir = ResultsDir {
                dir: PathBuf::from(build),
                results_path: PathBuf::from(build).join("results.csv"),
                rows,
                sizes: None,
                robustness: None,
                samples: None,
                footprint: None,
                instructions: None,
                evolution: None,
            };
            Side::of(&dir, build.to_string()).line()
        };
        assert!(
            side("portable").contains(", portable build,"),
            "{}",
            side("portable")
        );
        assert!(side("native").contains(", native build,"), "{}", side("native"));
    }

    #[test]
    fn one_sided_and_failed_arms_are_listed_not_compared() {
        let mut failed = row("failing", "decode", 1.0, 0.1, 1);
        failed.status = "failed".into();
        failed.note = "round trip differs".into();
        let a = [
            row("both", "decode", 100.0, 1.0, 1),
            row("a-only", "decode", 100.0, 1.0, 1),
            row("failing", "decode", 100.0, 1.0, 1),
        ];
        let b = [
            row("both", "encode", 100.0, 1.0, 1),
            row("both", "decode", 100.0, 1.0, 1),
            failed,
        ];
        let comparison = compare_rows(&a, &b);
        assert_eq!(comparison.arms.len(), 1);
        assert_eq!(comparison.only_a.len(), 1);
        assert_eq!(comparison.only_a[0].codec.backend, "a-only");
        assert_eq!(comparison.only_b.len(), 1);
        assert_eq!(
            (
                comparison.only_b[0].codec.backend.as_str(),
                comparison.only_b[0].operation.name()
            ),
            ("both", "encode")
        );
        assert_eq!(comparison.failed.len(), 1);
        assert_eq!(comparison.failed[0].1, "B failed: round trip differs");
        assert_eq!(comparison.agreement.unwrap().coverage, 1.0);
        let counts = comparison.to_string();
        assert!(
            counts.contains("only in A: 1 arms; only in B: 1 arms; not measured on both sides: 1 arms (--verbose lists them)"),
            "{counts}"
        );
        assert!(!counts.contains("json/a-only readings decode"), "{counts}");
        let text = comparison.text(true);
        assert!(text.contains("only in A (1):") && text.contains("json/a-only readings decode"));
        assert!(
            text.find("coverage").unwrap() < text.find("the 1 arms both sides measured").unwrap(),
            "{text}"
        );
        assert!(comparison.markdown().contains("## Only in B"));
    }
}

//! The analysis of one or more results folders, computed once into one model ([`Analysis`]):
//! every arm with its rank and its ratio to its section's fastest, every size, and per payload
//! the answer (the cheapest formats to decode, to encode and on the wire, ties as one rank, and
//! the front of time against bytes). The terminal summary, report.md, report.html and
//! report.json (the model serialized, with [`VERSION`]) render it; none computes its own.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::Result;
use serde::Serialize;

use super::hosts::RankAgreement;
use super::rank::{self, Interval, Rank};
use crate::arm::{ArmId, CodecId, Mode, Operation};
use crate::host::Host;
use crate::schema::load::{self, ResultsDir};
use crate::schema::ratios::{self, Ratio, WorkerMeans};
use crate::schema::results::{ResultRow, STATUS_OK};
use crate::schema::sizes::SizeRow;
use crate::stats::LAYOUT_SPREAD;

/// The version of report.json's shape: raised when a field changes meaning or goes away.
pub const VERSION: u32 = 2;

/// One folder's rows by arm, with its label.
pub struct Source<'a> {
    pub label: String,
    pub dir: &'a ResultsDir,
    pub by_arm: BTreeMap<ArmId, &'a ResultRow>,
    /// Each worker's time per record of each arm (samples.csv), for paired ratios.
    pub workers: Option<WorkerMeans<'a>>,
    /// The folder's rows were measured under emulation: shown, but in no ranking.
    pub emulated: bool,
    /// Each ranked arm's rank in its section ([`rank::of_rows`]); none on an emulated host.
    pub ranks: BTreeMap<ArmId, Rank>,
    /// Each section's (payload, operation) arms over its fastest, computed once
    /// ([`Source::versus_fastest`]).
    versus: BTreeMap<(String, String), VersusFastest>,
}

/// The folders as sources, measured hosts first: the first is every section's reference host.
pub fn sources(dirs: &[ResultsDir]) -> Vec<Source<'_>> {
    let mut sources: Vec<Source> = load::labels(dirs)
        .into_iter()
        .zip(dirs)
        .map(|(label, dir)| {
            let emulated = dir.rows.iter().any(|row| row.host.emulated_on().is_some());
            let label = if emulated {
                format!("{label} (emulated)")
            } else {
                label
            };
            let workers = dir.samples.as_deref().map(ratios::worker_means);
            let ranks = match emulated {
                true => BTreeMap::new(),
                false => rank::of_rows(&dir.rows, workers.as_ref()),
            };
            let mut source = Source {
                label,
                dir,
                by_arm: dir.rows.iter().map(|row| (row.arm.clone(), row)).collect(),
                workers,
                emulated,
                ranks,
                versus: BTreeMap::new(),
            };
            let sections: BTreeSet<(String, String)> = source
                .by_arm
                .keys()
                .map(|key| (key.codec.payload.clone(), key.operation.name().to_string()))
                .collect();
            source.versus = sections
                .into_iter()
                .filter_map(|(payload, operation)| {
                    let versus = source.compute_versus_fastest(&payload, &operation)?;
                    Some(((payload, operation), versus))
                })
                .collect();
            source
        })
        .collect();
    sources.sort_by_key(|source| source.emulated);
    sources
}

impl Source<'_> {
    /// The section's ok arms other than baselines, with their time per record.
    pub fn section_intervals(&self, payload: &str, operation: &str) -> BTreeMap<ArmId, Interval> {
        self.by_arm
            .iter()
            .filter(|(key, row)| {
                key.codec.payload == payload
                    && key.operation.name() == operation
                    && !key.is_baseline()
                    && row.status == STATUS_OK
            })
            .filter_map(|(key, row)| Some((key.clone(), Interval::of(row)?)))
            .collect()
    }

    /// The section's (payload and operation) fastest ok arm of each mode that is not a baseline,
    /// and every other ok arm with an interval over the fastest of its own mode (a borrowed or
    /// dynamic decode is another job than a typed one), paired over workers where the folder
    /// kept them. `None` when the section has no such arm.
    pub fn versus_fastest(&self, payload: &str, operation: &str) -> Option<&VersusFastest> {
        self.versus.get(&(payload.to_string(), operation.to_string()))
    }

    fn compute_versus_fastest(&self, payload: &str, operation: &str) -> Option<VersusFastest> {
        if self.emulated {
            return None;
        }
        let section = self.section(payload, |key| key.operation.name() == operation);
        let mut fastest: BTreeMap<Mode, (&ArmId, f64)> = BTreeMap::new();
        for (key, row) in section.iter().filter(|(key, _)| !key.is_baseline()) {
            let Some(time) = row.ns_per_record else { continue };
            let entry = fastest.entry(key.mode).or_insert((*key, time));
            if (time, *key) < (entry.1, entry.0) {
                *entry = (key, time);
            }
        }
        if fastest.is_empty() {
            return None;
        }
        let ratios = section
            .keys()
            .filter_map(|key| {
                let (of_mode, _) = fastest.get(&key.mode)?;
                if key == of_mode {
                    return None;
                }
                let ratio = ratios::pair("vs fastest", &section, self.workers.as_ref(), key, of_mode)?;
                Some(((*key).clone(), ratio))
            })
            .collect();
        Some(VersusFastest {
            fastest: fastest.into_values().map(|(key, _)| key.clone()).collect(),
            ratios,
        })
    }

    /// The ok arms of `payload` with a time per record that `keep` keeps, by arm.
    fn section(&self, payload: &str, keep: impl Fn(&ArmId) -> bool) -> HashMap<&ArmId, &ResultRow> {
        self.by_arm
            .iter()
            .filter(|(key, row)| {
                key.codec.payload == payload
                    && keep(key)
                    && row.status == STATUS_OK
                    && row.ns_per_record.is_some()
            })
            .map(|(key, row)| (key, *row))
            .collect()
    }
}

/// One section's arms over the fastest arm of their mode ([`Source::versus_fastest`]).
pub struct VersusFastest {
    /// The fastest arm of each mode.
    pub fastest: Vec<ArmId>,
    /// Every other arm that has an interval; an arm without one has no entry.
    pub ratios: BTreeMap<ArmId, Ratio>,
}

/// The sizes of every folder that has a sizes.csv, one row per codec and payload, and the notes
/// of sizes that differ between commits. Sizes are deterministic: folders of one commit that
/// differ are an error, naming the first difference (a codec whose bytes depend on the host is a
/// bug a benchmark must not paper over); folders of different commits may differ (a changed
/// encoder), so the first folder's row is kept and the difference is reported.
pub fn merged_sizes(sources: &[Source]) -> Result<(BTreeMap<CodecId, SizeRow>, Vec<String>)> {
    let mut merged: BTreeMap<CodecId, (SizeRow, &Source)> = BTreeMap::new();
    // Every folder is checked against the first of its commit, not only the first folder.
    let mut of_commit: BTreeMap<(CodecId, Vec<String>), (&SizeRow, &Source)> = BTreeMap::new();
    let bytes = |row: &SizeRow| (row.encoded_bytes, row.zstd_bytes, row.zlib_bytes);
    let shown = |bytes: Option<usize>| bytes.map_or("-".to_string(), |bytes| format!("{bytes} bytes"));
    let mut conflicts = Vec::new();
    for source in sources {
        let commit = source.dir.distinct(|row| row.host.commit.clone());
        for row in source.dir.sizes.iter().flatten() {
            let key = row.codec.clone();
            let (first, first_source) = *of_commit
                .entry((key.clone(), commit.clone()))
                .or_insert((row, source));
            if bytes(first) != bytes(row) {
                anyhow::bail!(
                    "sizes differ between hosts at one commit ({}): {} {} is {:?} (encoded, zstd, \
                     zlib bytes) on {} and {:?} on {}; sizes must be byte-identical everywhere",
                    commit.join(", "),
                    key.payload,
                    key.backend_label(),
                    bytes(first),
                    first_source.label,
                    bytes(row),
                    source.label
                );
            }
            match merged.get(&key) {
                None => {
                    merged.insert(key, (row.clone(), source));
                }
                Some((first, first_source)) => {
                    let first_label = &first_source.label;
                    if bytes(first) != bytes(row) {
                        conflicts.push(format!(
                            "sizes of {} {} differ between commits: {} on {first_label}, {} on {} (the \
                             report shows {first_label}'s)",
                            key.payload,
                            key.backend_label(),
                            shown(first.encoded_bytes),
                            shown(row.encoded_bytes),
                            source.label
                        ));
                    }
                }
            }
        }
    }
    let sizes = merged.into_iter().map(|(key, (row, _))| (key, row)).collect();
    Ok((sizes, conflicts))
}

/// Everything the report shows, computed from the folders' rows: the model report.json holds
/// and report.html draws.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// [`VERSION`].
    pub version: u32,
    pub serbench: &'static str,
    pub hosts: Vec<HostModel>,
    /// Per payload, the answer on the reference host (the first measured one, `hosts[0]`).
    pub answers: Vec<Answer>,
    /// The capabilities of every backend the folders measured: zero-copy from the reference
    /// host's arms, hostile input from the first folder with a robustness.csv, evolution from the
    /// first with an evolution.csv.
    pub capabilities: Vec<super::capabilities::Capability>,
    /// The schema-evolution matrices of the first folder with an evolution.csv, per payload.
    pub evolution: Vec<super::evolution::EvolutionMatrix>,
    pub arms: Vec<ArmModel>,
    pub sizes: Vec<SizeModel>,
    /// Each format's chart colour, `#rrggbb`.
    pub colours: BTreeMap<String, String>,
    /// The relative shift a code layout alone makes ([`crate::stats::LAYOUT_SPREAD`]): the page's
    /// pair sentence calls a ratio whose interval lies inside it indistinguishable, as
    /// `serbench ratio` does.
    pub layout_spread: f64,
    /// Student's t 97.5% quantile for 1, 2, ... degrees of freedom ([`crate::stats::t_975`]):
    /// the page's paired intervals use serbench's own.
    pub t975: Vec<f64>,
    /// The reference host's ranks by arm (each [`ArmModel::rank`] of `hosts[0]`), for the
    /// terminal's per-arm table.
    #[serde(skip)]
    pub ranks: BTreeMap<ArmId, Rank>,
    /// Per section (payload, operation) where the reference host has two arms or more, its
    /// ranking against each other measured host's, in host order ([`hosts::rank_agreement`]).
    #[serde(skip)]
    pub agreements: BTreeMap<(String, String), Vec<RankAgreement>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostModel {
    pub label: String,
    pub emulated: bool,
    pub profile: String,
    pub started: String,
    /// The first row's host (a folder is one host and build).
    pub host: Host,
}

/// One arm on one host, its time per record with its 95% interval.
#[derive(Clone, Debug, Serialize)]
pub struct ArmModel {
    /// Index into [`Analysis::hosts`].
    pub host: usize,
    pub label: String,
    pub payload: String,
    pub operation: String,
    pub mode: String,
    pub framing: String,
    pub format: String,
    pub backend: String,
    pub baseline: bool,
    pub status: String,
    pub note: String,
    pub records: usize,
    pub ns_per_record: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub reps: Option<usize>,
    /// Encoded bytes over the time per operation, MB/s (results.csv's mb_per_s).
    pub mb_per_s: Option<f64>,
    pub encoded_bytes: Option<usize>,
    pub allocs_per_op: Option<f64>,
    /// Over the section's fastest arm on its host, the paired interval where the run kept its
    /// workers; `None` for the fastest itself, an emulated host or an arm without figures.
    pub vs_fastest: Option<RatioModel>,
    pub fastest: bool,
    /// Its rank in its payload, operation and mode on its host, ties sharing one
    /// ([`crate::report::rank`]); `None` for a baseline, an emulated host or an arm without
    /// figures. The page shows it as computed here.
    pub rank: Option<RankModel>,
    /// Each worker's time per record, `[pass, ns]` (samples.csv of a full run; empty
    /// without): two arms of one host are paired over the workers that measured both.
    pub workers: Vec<[f64; 2]>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RatioModel {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub paired: bool,
}

/// An arm's rank: its place, whether another arm shares it, and how every table writes it
/// ("=1" shared, "1" alone).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankModel {
    pub place: usize,
    pub shared: bool,
    pub text: String,
}

impl From<Rank> for RankModel {
    fn from(rank: Rank) -> RankModel {
        RankModel {
            place: rank.place,
            shared: rank.shared,
            text: rank.to_string(),
        }
    }
}

/// One codec's bytes for one payload (every record of it): encoded, and compressed by zstd and
/// zlib at the levels sizes.csv names.
#[derive(Clone, Debug, Serialize)]
pub struct SizeModel {
    pub payload: String,
    pub format: String,
    pub backend: String,
    pub label: String,
    pub framing: String,
    pub records: usize,
    pub encoded: Option<usize>,
    pub zstd: Option<usize>,
    pub zlib: Option<usize>,
}

/// Which formats to pick for one payload, on the reference host.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    pub payload: String,
    /// The mode of the arms the answer ranks: `typed` where the payload has typed arms, else
    /// `dynamic` (a `--data` file measured without `--typed`).
    pub mode: String,
    /// Every ranked decode arm of that mode, fastest first, with its rank (ties share one).
    pub decode: Vec<Placed>,
    /// Every ranked encode arm of that mode, fastest first.
    pub encode: Vec<Placed>,
    /// Every codec with its bytes per record, fewest first; equal bytes share a rank.
    pub bytes: Vec<Sized>,
    /// The same by zstd bytes per record.
    pub zstd: Vec<Sized>,
    /// Every codec with a round-trip time and bytes: the scatter of time against bytes,
    /// fastest first, those on the front marked.
    pub points: Vec<Point>,
}

/// A ranked arm: its codec's name in the answer ([`short_name`]), its format (for the colour) and its time per record.
#[derive(Clone, Debug, Serialize)]
pub struct Placed {
    pub label: String,
    /// `backend[variant]`: with `format`, its row of the capability table.
    pub backend: String,
    pub format: String,
    pub rank: RankModel,
    pub ns: f64,
    pub low: f64,
    pub high: f64,
    /// `ns` as every renderer writes it ([`super::text::duration`]).
    pub time: String,
}

/// A codec's bytes per record and its rank among the payload's codecs (equal bytes share one).
#[derive(Clone, Debug, Serialize)]
pub struct Sized {
    pub label: String,
    pub backend: String,
    pub format: String,
    pub rank: RankModel,
    pub bytes_per_record: f64,
    /// `bytes_per_record` as every renderer writes it ([`bytes_text`]).
    pub size: String,
}

/// A codec on the scatter: its round trip's time per record with its interval, and its bytes
/// per record. `front`: no other codec is both smaller or as small and faster or as fast, one of
/// the two by a margin a rerun keeps (fewer bytes, or a time ratio that is no tie at
/// [`LAYOUT_SPREAD`]).
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub label: String,
    pub backend: String,
    pub format: String,
    pub ns: f64,
    pub low: f64,
    pub high: f64,
    pub bytes_per_record: f64,
    pub front: bool,
    /// The points that beat this one (by [`Point::label`]): with the capability table's
    /// constraints, a point is on the front of the codecs that qualify when none of those does.
    pub beaten_by: Vec<String>,
    /// `ns` and `bytes_per_record` as every renderer writes them.
    pub time: String,
    pub size: String,
}

impl Answer {
    /// The arms of the first rank (all tied with the fastest).
    pub fn first(placed: &[Placed]) -> Vec<&Placed> {
        placed.iter().filter(|arm| arm.rank.place == 1).collect()
    }

    /// The codecs with the fewest bytes (equal bytes share the first rank).
    pub fn smallest(sized: &[Sized]) -> Vec<&Sized> {
        sized.iter().filter(|codec| codec.rank.place == 1).collect()
    }

    /// The points on the front, fastest first.
    pub fn front(&self) -> impl Iterator<Item = &Point> {
        self.points.iter().filter(|point| point.front)
    }
}

impl Analysis {
    /// The analysis of `sources` (from [`sources`]) with their merged sizes.
    pub fn of(sources: &[Source], sizes: &BTreeMap<CodecId, SizeRow>) -> Analysis {
        let hosts = sources
            .iter()
            .map(|source| {
                let first = source.dir.rows.first();
                HostModel {
                    label: source.label.clone(),
                    emulated: source.emulated,
                    profile: source.dir.distinct(|row| row.profile.clone()).join(", "),
                    started: source.dir.distinct(|row| row.timestamp.clone()).join(", "),
                    host: first.map(|row| row.host.clone()).unwrap_or_default(),
                }
            })
            .collect();
        let arms = sources
            .iter()
            .enumerate()
            .flat_map(|(index, source)| arm_models(index, source))
            .collect::<Vec<_>>();
        let size_models: Vec<SizeModel> = sizes
            .values()
            .map(|row| SizeModel {
                payload: row.codec.payload.clone(),
                format: row.codec.format.clone(),
                backend: row.codec.backend.clone(),
                label: row.codec.backend_label(),
                framing: row.codec.framing.name().to_string(),
                records: row.records,
                encoded: row.encoded_bytes,
                zstd: row.zstd_bytes,
                zlib: row.zlib_bytes,
            })
            .collect();
        let colours = arms
            .iter()
            .map(|arm| arm.format.clone())
            .chain(size_models.iter().map(|size| size.format.clone()))
            .map(|format| {
                let colour = super::charts::format_colour(&format);
                let hex = format!("#{:02x}{:02x}{:02x}", colour.0, colour.1, colour.2);
                (format, hex)
            })
            .collect();
        let answers = sources
            .first()
            .filter(|source| !source.emulated)
            .map_or_else(Vec::new, |source| answers(source, sizes));
        let reference = sources.first();
        let has = |format: &str, backend: &str, variant: &str, operation: Operation| {
            reference.is_some_and(|source| {
                source.dir.ok_rows().any(|row| {
                    let codec = &row.arm.codec;
                    codec.format == format
                        && codec.backend == backend
                        && codec.variant == variant
                        && row.arm.operation == operation
                })
            })
        };
        let robustness = sources.iter().find_map(|source| source.dir.robustness.as_deref());
        let evolution = sources.iter().find_map(|source| source.dir.evolution.as_deref());
        // The backends this report measured, on any host.
        let measured = |row: &super::capabilities::Capability| {
            sources.iter().any(|source| {
                source.by_arm.keys().any(|key| {
                    let codec = &key.codec;
                    codec.format == row.format
                        && super::capabilities::backend_name(&codec.backend, &codec.variant) == row.backend
                })
            })
        };
        let mut capabilities = super::capabilities::table(
            |format, backend, variant| {
                (
                    has(format, backend, variant, Operation::AccessAll),
                    has(format, backend, variant, Operation::Update),
                )
            },
            robustness,
            evolution,
        );
        capabilities.retain(measured);
        Analysis {
            version: VERSION,
            serbench: crate::host::version(),
            hosts,
            answers,
            capabilities,
            evolution: evolution.map(super::evolution::matrices).unwrap_or_default(),
            ranks: reference.map(|source| source.ranks.clone()).unwrap_or_default(),
            agreements: agreements(sources),
            arms,
            sizes: size_models,
            colours,
            layout_spread: LAYOUT_SPREAD,
            t975: (1..=200).map(crate::stats::t_975).collect(),
        }
    }
}

/// Each section's ranking on the first measured host against every other measured one's.
fn agreements(sources: &[Source]) -> BTreeMap<(String, String), Vec<RankAgreement>> {
    let measured: Vec<&Source> = sources.iter().filter(|source| !source.emulated).collect();
    let Some((reference, others)) = measured.split_first() else {
        return BTreeMap::new();
    };
    let mut agreements = BTreeMap::new();
    for (payload, operation) in reference.versus.keys() {
        let first = reference.section_intervals(payload, operation);
        if first.len() < 2 {
            continue;
        }
        let against = others
            .iter()
            .map(|other| super::hosts::rank_agreement(&first, &other.section_intervals(payload, operation)))
            .collect();
        agreements.insert((payload.clone(), operation.clone()), against);
    }
    agreements
}

/// Every arm of one folder with its figures, rank and ratio to its section's fastest.
fn arm_models(index: usize, source: &Source) -> Vec<ArmModel> {
    let mut arms = Vec::new();
    for (key, row) in &source.by_arm {
        let versus = source.versus_fastest(&key.codec.payload, key.operation.name());
        let ok = row.status == STATUS_OK;
        let per_record = |total: Option<f64>| Some(total? / row.records as f64).filter(|_| ok);
        let mut workers: Vec<[f64; 2]> = source
            .workers
            .iter()
            .flat_map(|means| means.of_arm(key))
            .map(|(pass, mean)| [pass as f64, mean])
            .collect();
        workers.sort_by(|a, b| a[0].total_cmp(&b[0]));
        arms.push(ArmModel {
            host: index,
            label: key.label(),
            payload: key.codec.payload.clone(),
            operation: key.operation.name().to_string(),
            mode: key.mode.name().to_string(),
            framing: key.codec.framing.name().to_string(),
            format: key.codec.format.clone(),
            backend: key.codec.backend.clone(),
            baseline: key.is_baseline(),
            status: row.status.clone(),
            note: row.note.clone(),
            records: row.records,
            ns_per_record: row.ns_per_record.filter(|_| ok),
            low: per_record(row.ci95_low_ns),
            high: per_record(row.ci95_high_ns),
            reps: row.reps,
            mb_per_s: row.mb_per_s.filter(|_| ok),
            encoded_bytes: row.encoded_bytes,
            allocs_per_op: row.allocs_per_op,
            fastest: versus.as_ref().is_some_and(|versus| versus.fastest.contains(key)),
            rank: source.ranks.get(key).copied().map(RankModel::from),
            workers,
            vs_fastest: versus
                .as_ref()
                .and_then(|versus| versus.ratios.get(key))
                .map(|ratio| {
                    let (interval, paired) = ratio.quoted();
                    RatioModel {
                        ratio: interval.ratio,
                        low: interval.low,
                        high: interval.high,
                        paired,
                    }
                }),
        });
    }
    arms
}

/// The answer for every payload of `source`, in payload order.
fn answers(source: &Source, sizes: &BTreeMap<CodecId, SizeRow>) -> Vec<Answer> {
    let mut payloads: Vec<&str> = source
        .by_arm
        .keys()
        .map(|key| key.codec.payload.as_str())
        .collect();
    payloads.sort_by_key(|name| (crate::payload::rank(name), *name));
    payloads.dedup();
    payloads
        .into_iter()
        .filter_map(|payload| answer(source, sizes, payload))
        .collect()
}

/// The answer for one payload; `None` when it has no ranked encode or decode arm.
fn answer(source: &Source, sizes: &BTreeMap<CodecId, SizeRow>, payload: &str) -> Option<Answer> {
    let has = |mode: Mode| {
        source.ranks.keys().any(|key| {
            key.codec.payload == payload
                && key.mode == mode
                && matches!(key.operation, Operation::Decode | Operation::Encode)
        })
    };
    let mode = [Mode::Typed, Mode::Dynamic].into_iter().find(|&mode| has(mode))?;
    let codecs: Vec<&CodecId> = source
        .by_arm
        .keys()
        .map(|key| &key.codec)
        .chain(sizes.keys())
        .filter(|codec| codec.payload == payload)
        .collect();
    let name = |codec: &CodecId| short_name(codec, &codecs);
    let placed = |operation: Operation| -> Vec<Placed> {
        let mut placed: Vec<Placed> = source
            .ranks
            .iter()
            .filter(|(key, _)| key.codec.payload == payload && key.operation == operation && key.mode == mode)
            .filter_map(|(key, &rank)| {
                let row = source.by_arm.get(key)?;
                let (interval, ns) = (Interval::of(row)?, row.ns_per_record?);
                Some(Placed {
                    label: name(&key.codec),
                    backend: super::capabilities::backend_name(&key.codec.backend, &key.codec.variant),
                    format: key.codec.format.clone(),
                    rank: rank.into(),
                    ns,
                    low: interval.low,
                    high: interval.high,
                    time: super::text::duration(ns),
                })
            })
            .collect();
        placed.sort_by(|a, b| {
            (a.rank.place, a.ns)
                .partial_cmp(&(b.rank.place, b.ns))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.label.cmp(&b.label))
        });
        placed
    };
    let of_payload: Vec<&SizeRow> = sizes
        .values()
        .filter(|row| row.codec.payload == payload && row.status == STATUS_OK)
        .collect();
    let sized = |bytes: fn(&SizeRow) -> Option<f64>| -> Vec<Sized> {
        let figures: Vec<(&SizeRow, f64)> = of_payload
            .iter()
            .filter_map(|row| Some((*row, bytes(row)?)))
            .collect();
        by_value(&figures.iter().map(|(_, value)| *value).collect::<Vec<_>>())
            .into_iter()
            .map(|(index, rank)| {
                let (row, value) = figures[index];
                Sized {
                    label: name(&row.codec),
                    backend: super::capabilities::backend_name(&row.codec.backend, &row.codec.variant),
                    format: row.codec.format.clone(),
                    rank: rank.into(),
                    bytes_per_record: value,
                    size: bytes_text(value),
                }
            })
            .collect()
    };
    Some(Answer {
        payload: payload.to_string(),
        mode: mode.name().to_string(),
        decode: placed(Operation::Decode),
        encode: placed(Operation::Encode),
        bytes: sized(|row| Some(row.encoded_bytes? as f64 / row.records as f64)),
        zstd: sized(|row| Some(row.zstd_bytes? as f64 / row.records as f64)),
        points: points(source, sizes, payload, mode, name),
    })
}

/// Bytes per record as every renderer writes them: `22.8 B`, `2,083 B`.
fn bytes_text(bytes: f64) -> String {
    format!("{} B", super::text::short_number(bytes))
}

/// How an answer names a codec among `codecs` (a payload's): its backend (with variant and a
/// framing other than document), which names its format too for every backend serbench has,
/// else its full label where another format has a backend of that name.
fn short_name(codec: &CodecId, codecs: &[&CodecId]) -> String {
    if codecs
        .iter()
        .any(|other| other.backend == codec.backend && other.format != codec.format)
    {
        return codec.label();
    }
    let mut name = codec.backend.clone();
    if !codec.variant.is_empty() {
        name += &format!("[{}]", codec.variant);
    }
    if codec.framing != crate::arm::Framing::Document {
        name += &format!(" {}", codec.framing.name());
    }
    name
}

/// The indices of `values` ranked smallest first, equal values sharing a rank (sizes are
/// deterministic, so equal is the only tie).
fn by_value(values: &[f64]) -> Vec<(usize, Rank)> {
    let items: Vec<(usize, f64)> = values.iter().copied().enumerate().collect();
    let equal = |a: &usize, b: &usize| {
        (values[*a] == values[*b]).then_some(crate::stats::RatioInterval {
            ratio: 1.0,
            low: 1.0,
            high: 1.0,
        })
    };
    rank::ranks(&items, equal, 0.0)
}

/// The payload's round-trip arms of `mode` with their bytes per record, and which are on the
/// front of time against bytes.
fn points(
    source: &Source,
    sizes: &BTreeMap<CodecId, SizeRow>,
    payload: &str,
    mode: Mode,
    name: impl Fn(&CodecId) -> String,
) -> Vec<Point> {
    let section = source.section(payload, |key| {
        key.operation == Operation::RoundTrip && key.mode == mode && !key.is_baseline()
    });
    let mut arms: Vec<(&ArmId, Interval, f64, f64)> = section
        .iter()
        .filter_map(|(&key, row)| {
            let size = sizes.get(&key.codec)?;
            let bytes = size.encoded_bytes? as f64 / size.records as f64;
            Some((key, Interval::of(row)?, row.ns_per_record?, bytes))
        })
        .collect();
    arms.sort_by(|a, b| a.2.total_cmp(&b.2).then_with(|| a.0.cmp(b.0)));
    let faster = |a: &ArmId, b: &ArmId| {
        // `a` is faster than `b` by more than a rerun could undo.
        ratios::pair("front", &section, source.workers.as_ref(), a, b).is_some_and(|ratio| {
            let (interval, _) = ratio.quoted();
            interval.ratio < 1.0 && !interval.is_tie(LAYOUT_SPREAD)
        })
    };
    arms.iter()
        .map(|&(key, interval, ns, bytes)| {
            let beaten_by: Vec<String> = arms
                .iter()
                .filter(|&&(other, _, other_ns, other_bytes)| {
                    other != key
                        && other_bytes <= bytes
                        && other_ns <= ns
                        && (other_bytes < bytes || faster(other, key))
                })
                .map(|(other, ..)| name(&other.codec))
                .collect();
            Point {
                label: name(&key.codec),
                backend: super::capabilities::backend_name(&key.codec.backend, &key.codec.variant),
                format: key.codec.format.clone(),
                ns,
                low: interval.low,
                high: interval.high,
                bytes_per_record: bytes,
                front: beaten_by.is_empty(),
                beaten_by,
                time: super::text::duration(ns),
                size: bytes_text(bytes),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of `format/backend` on `payload`: `mean` ns per record ± `half`.
    fn row(format: &str, backend: &str, operation: Operation, mean: f64, half: f64) -> ResultRow {
        ResultRow {
            arm: ArmId::typed(format, backend, "", "order", operation),
            records: 1,
            mean_ns: Some(mean),
            ci95_low_ns: Some(mean - half),
            ci95_high_ns: Some(mean + half),
            ns_per_record: Some(mean),
            status: STATUS_OK.into(),
            ..ResultRow::default()
        }
    }

    fn size(format: &str, backend: &str, bytes: usize) -> SizeRow {
        SizeRow {
            codec: ArmId::typed(format, backend, "", "order", Operation::Encode).codec,
            records: 1,
            encoded_bytes: Some(bytes),
            zstd_bytes: Some(bytes / 2),
            status: STATUS_OK.into(),
            ..SizeRow::default()
        }
    }

    fn folder(rows: Vec<ResultRow>, sizes: Vec<SizeRow>) -> ResultsDir {
        ResultsDir {
            dir: "results".into(),
            results_path: "results/results.csv".into(),
            rows,
            sizes: Some(sizes),
            robustness: None,
            samples: None,
            footprint: None,
            instructions: None,
            evolution: None,
        }
    }

    fn analysed(dir: &ResultsDir) -> Analysis {
        let sources = sources(std::slice::from_ref(dir));
        let (sizes, _) = merged_sizes(&sources).unwrap();
        Analysis::of(&sources, &sizes)
    }

    #[test]
    fn the_answer_groups_ties_as_one_rank_and_names_the_front() {
        use Operation::{Decode, Encode, RoundTrip};
        // Decode: a and b tie (their intervals overlap widely), c is clearly slower. Round trip
        // against bytes: a (100 ns, 50 B) and c (300 ns, 10 B) are on the front; b (110 ± 40 ns,
        // 60 B) is no faster than a by a margin a rerun keeps and larger, so a beats it; d
        // (100 ns, 50 B) ties a in time and size, so neither beats the other.
        let dir = folder(
            vec![
                row("fa", "a", Decode, 100.0, 20.0),
                row("fb", "b", Decode, 105.0, 20.0),
                row("fc", "c", Decode, 300.0, 1.0),
                row("fa", "a", Encode, 50.0, 1.0),
                row("fb", "b", Encode, 80.0, 1.0),
                row("fa", "a", RoundTrip, 100.0, 1.0),
                row("fb", "b", RoundTrip, 110.0, 40.0),
                row("fc", "c", RoundTrip, 300.0, 1.0),
                row("fd", "d", RoundTrip, 100.0, 1.0),
            ],
            vec![
                size("fa", "a", 50),
                size("fb", "b", 60),
                size("fc", "c", 10),
                size("fd", "d", 50),
            ],
        );
        let analysis = analysed(&dir);
        assert_eq!(analysis.version, VERSION);
        let [answer] = analysis.answers.as_slice() else {
            panic!("{:?}", analysis.answers)
        };
        assert_eq!(
            (answer.payload.as_str(), answer.mode.as_str()),
            ("order", "typed")
        );
        let first = |placed: &[Placed]| -> Vec<String> {
            Answer::first(placed)
                .iter()
                .map(|arm| arm.label.clone())
                .collect()
        };
        assert_eq!(first(&answer.decode), ["a", "b"]);
        assert_eq!(answer.decode[2].rank.text, "3");
        assert_eq!(first(&answer.encode), ["a"]);
        assert_eq!(answer.decode[0].time, "100 ns");
        let smallest: Vec<&str> = Answer::smallest(&answer.bytes)
            .iter()
            .map(|codec| codec.size.as_str())
            .collect();
        assert_eq!(smallest, ["10.0 B"]);
        // a and d share the second size rank (equal bytes).
        let shared: Vec<(&str, &str)> = answer
            .bytes
            .iter()
            .map(|codec| (codec.label.as_str(), codec.rank.text.as_str()))
            .collect();
        assert_eq!(shared, [("c", "1"), ("a", "=2"), ("d", "=2"), ("b", "4")]);
        let front: Vec<&str> = answer.front().map(|point| point.label.as_str()).collect();
        assert_eq!(front, ["a", "d", "c"]);
        assert_eq!(answer.points.len(), 4);
    }

    #[test]
    fn a_file_without_typed_arms_is_answered_by_its_dynamic_ones_and_emulation_by_none() {
        let mut dynamic = row("json", "serde_json", Operation::Decode, 10.0, 1.0);
        dynamic.arm.mode = Mode::Dynamic;
        let answers = analysed(&folder(vec![dynamic.clone()], Vec::new())).answers;
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0].mode, "dynamic");
        assert!(answers[0].points.is_empty());
        // An emulated host's times rank nothing.
        dynamic.host.environment = "direct emulated-on=x86_64".into();
        let emulated = folder(vec![dynamic], Vec::new());
        assert!(
            emulated.rows[0].host.emulated_on().is_some(),
            "the fixture is emulated"
        );
        assert!(analysed(&emulated).answers.is_empty());
    }

    #[test]
    fn a_backend_name_two_formats_share_is_shown_with_its_format() {
        let codec =
            |format: &str, backend: &str| ArmId::typed(format, backend, "", "order", Operation::Encode).codec;
        let (a, b, c) = (
            codec("cbor", "serde"),
            codec("msgpack", "serde"),
            codec("postcard", "postcard"),
        );
        let all = [&a, &b, &c];
        assert_eq!(short_name(&a, &all), "cbor/serde");
        assert_eq!(short_name(&c, &all), "postcard");
    }
}

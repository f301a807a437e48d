//! The fidelity check: serbench's mean for an arm next to an independent, minimal criterion
//! benchmark of the same library call on the same bytes (`cargo bench --bench fidelity`).
//! Criterion writes `<id>/new/benchmark.json` (the id) and `new/estimates.json` (the mean in
//! ns) under `target/criterion`; the ids are the arms' paths ([`crate::arm::ArmId::path`]). A mean
//! outside serbench's own range of times is refused, naming its file.
//!
//! What a user quotes is a ratio, so [`ratio_pairs`] also sets criterion's ratio of every two
//! cases of one payload and operation against serbench's ratio of the same arms and its
//! interval (paired over workers when the run kept samples.csv): whether criterion's ratio falls
//! inside it is the fidelity that matters when the two binaries place code differently.
//! Criterion's binary is one more code layout (and process, and moment): beside the interval of
//! serbench's mean ratio, [`RatioPair::next_layout`] is where one more of serbench's workers
//! would put it, the prediction interval over the same workers, and the fair test of the two.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::schema::ratios::{self, Ratio};
use crate::schema::results::{ResultRow, STATUS_OK};
use crate::schema::samples::SampleRow;
use crate::stats::{self, RatioInterval};

/// One arm measured both ways.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub id: String,
    pub criterion_ns: f64,
    pub serbench_ns: f64,
    pub serbench_half_width: f64,
    /// Instructions per operation under callgrind, when counted: the benchmark's direct call,
    /// then serbench's arm. They tell whether the two binaries run the same machine code.
    pub instructions: Option<(f64, f64)>,
}

impl Pair {
    /// serbench's mean over criterion's: 1.0 is perfect agreement.
    pub fn ratio(&self) -> f64 {
        self.serbench_ns / self.criterion_ns
    }
}

#[derive(Deserialize)]
struct Benchmark {
    full_id: String,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct Estimates {
    mean: Estimate,
}

/// Every `(id, mean ns)` criterion recorded under `dir`. The walk follows no symbolic link
/// (a link to a parent folder would never end), and each JSON file is read only when it is a
/// regular file of at most [`JSON_AT_MOST`] bytes (a FIFO would block the read forever).
pub fn criterion_means(dir: &Path) -> Result<Vec<(String, f64)>> {
    let mut found = Vec::new();
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries =
            std::fs::read_dir(&folder).with_context(|| format!("cannot read {}", folder.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", folder.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .with_context(|| format!("cannot read {}", path.display()))?;
            if kind.is_dir() {
                pending.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let benchmark: Benchmark = serde_json::from_slice(&read_json(&path)?)
                    .with_context(|| format!("{}: not a criterion benchmark.json", path.display()))?;
                let estimates_path = path.with_file_name("estimates.json");
                let estimates: Estimates = serde_json::from_slice(&read_json(&estimates_path)?)
                    .with_context(|| {
                        format!("{}: not a criterion estimates.json", estimates_path.display())
                    })?;
                let mean = estimates.mean.point_estimate;
                crate::files::in_range(
                    "mean.point_estimate",
                    mean,
                    crate::schema::results::MIN_NS,
                    crate::schema::results::MAX_NS,
                )
                .map_err(|why| crate::UsageError::error(format!("{}: {why}", estimates_path.display())))?;
                found.push((benchmark.full_id, mean));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The largest benchmark.json or estimates.json read: criterion's are a few kilobytes.
pub const JSON_AT_MOST: u64 = 1 << 20;

/// The bytes of one of criterion's JSON files, which must be a regular file (not a link, a FIFO
/// or a device) of at most [`JSON_AT_MOST`] bytes: opened without following a link and without
/// blocking, then judged by what was opened.
fn read_json(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |what: &str| {
        crate::UsageError::error(format!(
            "{}: {what}: criterion writes a regular file there",
            path.display()
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ELOOP) => refuse("a symbolic link"),
            _ => anyhow::Error::new(error).context(format!("cannot read {}", path.display())),
        })?;
    let metadata = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if !metadata.is_file() {
        return Err(refuse("not a regular file (a FIFO, device or folder)"));
    }
    let mut bytes = Vec::new();
    file.take(JSON_AT_MOST + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > JSON_AT_MOST {
        return Err(refuse(&format!("larger than {JSON_AT_MOST} bytes")));
    }
    Ok(bytes)
}

/// Pairs criterion's means with the serbench rows of the same arms.
pub fn pairs(criterion: &[(String, f64)], rows: &[ResultRow]) -> Vec<Pair> {
    criterion
        .iter()
        .filter_map(|(id, criterion_ns)| {
            let row = rows
                .iter()
                .find(|row| row.status == STATUS_OK && row.arm.path() == *id)?;
            Some(Pair {
                id: id.clone(),
                criterion_ns: *criterion_ns,
                serbench_ns: row.mean_ns?,
                serbench_half_width: row.relative_half_width()?,
                instructions: None,
            })
        })
        .collect()
}

/// Two cases of one payload and operation: criterion's ratio of their means beside serbench's.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioPair {
    pub criterion: f64,
    pub serbench: Ratio,
    /// Where one more worker's ratio (another layout) would fall, 95%, from the run's workers
    /// ([`stats::next_unit_ratio`]); `None` without samples.csv.
    pub next_layout: Option<RatioInterval>,
}

impl RatioPair {
    /// serbench's interval (the paired one where there is one) holds criterion's ratio.
    pub fn inside(&self) -> bool {
        self.serbench.quoted().0.holds(self.criterion)
    }

    /// The interval for one more layout holds criterion's ratio.
    pub fn inside_next_layout(&self) -> Option<bool> {
        self.next_layout.map(|interval| interval.holds(self.criterion))
    }
}

/// Every two measured pairs of one payload and operation, the slower one over the faster by
/// criterion's means.
pub fn ratio_pairs(pairs: &[Pair], rows: &[ResultRow], samples: Option<&[SampleRow]>) -> Vec<RatioPair> {
    let by_arm = ratios::by_arm(rows);
    let arm_of = |pair: &Pair| by_arm.keys().copied().find(|arm| arm.path() == pair.id);
    let workers = samples.map(ratios::worker_means);
    let mut found = Vec::new();
    for (index, a) in pairs.iter().enumerate() {
        for b in &pairs[index + 1..] {
            let (Some(arm_a), Some(arm_b)) = (arm_of(a), arm_of(b)) else {
                continue;
            };
            if arm_a.codec.payload != arm_b.codec.payload || arm_a.operation != arm_b.operation {
                continue;
            }
            let (slow, fast, criterion) = if a.criterion_ns >= b.criterion_ns {
                (arm_a, arm_b, a.criterion_ns / b.criterion_ns)
            } else {
                (arm_b, arm_a, b.criterion_ns / a.criterion_ns)
            };
            if let Some(serbench) = ratios::pair("fidelity", &by_arm, workers.as_ref(), slow, fast) {
                let next_layout = workers
                    .as_ref()
                    .and_then(|workers| stats::next_unit_ratio(&ratios::paired(workers, slow, fast)));
                found.push(RatioPair {
                    criterion,
                    serbench,
                    next_layout,
                });
            }
        }
    }
    found
}

/// The ratio table: each pair's criterion ratio, serbench's with its interval and the interval of
/// one more layout, and whether each holds criterion's; then a line counting each.
pub fn ratio_table(pairs: &[RatioPair]) -> String {
    let yes = |inside: bool| if inside { "yes" } else { "NO" }.to_string();
    let cells: Vec<Vec<String>> = pairs
        .iter()
        .map(|pair| {
            let ratio = &pair.serbench;
            let (interval, paired) = ratio.quoted();
            let kind = if paired { "paired" } else { "unpaired" };
            vec![
                format!("{} {}", ratio.payload, ratio.operation.name()),
                format!("{} / {}", ratio.numerator, ratio.denominator),
                format!("{:.3}", pair.criterion),
                format!(
                    "{:.3} [{:.3}, {:.3}] {kind}",
                    interval.ratio, interval.low, interval.high
                ),
                yes(pair.inside()),
                pair.next_layout
                    .map_or("-".into(), |next| format!("[{:.3}, {:.3}]", next.low, next.high)),
                pair.inside_next_layout().map_or("-".into(), yes),
            ]
        })
        .collect();
    let share = |inside: usize, of: usize| {
        format!(
            "{inside} of {of} pairs ({:.0}%)",
            100.0 * inside as f64 / of.max(1) as f64
        )
    };
    let inside = pairs.iter().filter(|pair| pair.inside()).count();
    let mut out = format!(
        "{}\ncriterion's ratio is inside serbench's 95% interval for {}.\n",
        super::table::render(
            &[
                "section",
                "arms",
                ">criterion ratio",
                ">serbench ratio",
                "inside",
                ">one more layout",
                "inside",
            ],
            &cells
        ),
        share(inside, pairs.len()),
    );
    let judged: Vec<bool> = pairs.iter().filter_map(RatioPair::inside_next_layout).collect();
    if !judged.is_empty() {
        let inside = judged.iter().filter(|&&inside| inside).count();
        out += &format!(
            "criterion's binary as one more layout: its ratio is inside the 95% interval of one more of serbench's workers for {}.\n",
            share(inside, judged.len())
        );
    }
    out
}

/// `serbench fidelity`: each pair's two means, their ratio, and instruction counts when taken.
pub fn table(pairs: &[Pair]) -> String {
    let cells: Vec<Vec<String>> = pairs
        .iter()
        .map(|pair| {
            let mut cells = vec![
                pair.id.clone(),
                format!("{:.1}", pair.criterion_ns),
                format!(
                    "{:.1} ±{:.1}%",
                    pair.serbench_ns,
                    pair.serbench_half_width * 100.0
                ),
                format!("{:.3}", pair.ratio()),
                if (pair.ratio() - 1.0).abs() <= 0.03 {
                    "yes".into()
                } else {
                    "NO".into()
                },
            ];
            cells.extend(match pair.instructions {
                Some((direct, harness)) => vec![
                    format!("{direct:.0}"),
                    format!("{harness:.0}"),
                    format!("{:.3}", harness / direct),
                ],
                None => vec!["-".into(); 3],
            });
            cells
        })
        .collect();
    super::table::render(
        &[
            "arm",
            ">criterion ns",
            ">serbench ns",
            ">ratio",
            "within ±3%",
            ">criterion instr/op",
            ">serbench instr/op",
            ">instr ratio",
        ],
        &cells,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_rows_with_criterion_ids() {
        let row = ResultRow {
            arm: crate::arm::ArmId::typed(
                "bitcode",
                "bitcode",
                "native",
                "vec-small",
                crate::arm::Operation::Decode,
            ),
            status: "ok".into(),
            records: 32,
            mean_ns: Some(1030.0),
            ci95_low_ns: Some(1020.0),
            ci95_high_ns: Some(1040.0),
            ..ResultRow::default()
        };
        let criterion = vec![
            ("bitcode/bitcode[native]/vec-small/decode".to_string(), 1000.0),
            ("x/y/z/decode".to_string(), 5.0),
        ];
        let found = pairs(&criterion, &[row]);
        assert_eq!(found.len(), 1);
        assert!((found[0].ratio() - 1.03).abs() < 1e-12);
    }

    #[test]
    fn criterion_ratios_are_set_against_serbench_paired_intervals_within_a_section() {
        use crate::arm::{ArmId, Operation};
        let arm = |format: &str, backend: &str, payload: &str| {
            ArmId::typed(format, backend, "", payload, Operation::Decode)
        };
        let (postcard, prost, json) = (
            arm("postcard", "postcard", "order"),
            arm("protobuf", "prost", "order"),
            arm("json", "serde_json", "order"),
        );
        let bincode = arm("bincode", "bincode", "telemetry");
        let row = |arm: &ArmId, ns: f64| ResultRow {
            arm: arm.clone(),
            status: STATUS_OK.into(),
            records: 1,
            mean_ns: Some(ns),
            ns_per_record: Some(ns),
            ci95_low_ns: Some(ns * 0.8),
            ci95_high_ns: Some(ns * 1.2),
            ..ResultRow::default()
        };
        let rows = [
            row(&postcard, 120.0),
            row(&prost, 100.0),
            row(&json, 150.0),
            row(&bincode, 9.0),
        ];
        // Four workers of different speeds; postcard/prost 1.19 or 1.21 in each, json/postcard 1.25.
        let samples: Vec<SampleRow> = (0..4)
            .flat_map(|pass| {
                let speed = 1.0 + 0.3 * pass as f64;
                let wobble = if pass % 2 == 0 { 1.19 } else { 1.21 };
                [
                    (&prost, 100.0),
                    (&postcard, 100.0 * wobble),
                    (&json, 125.0 * wobble),
                ]
                .map(|(arm, ns)| SampleRow {
                    arm: arm.clone(),
                    pass,
                    records: 1,
                    mean_ns: Some(ns * speed),
                    status: STATUS_OK.into(),
                    ..SampleRow::default()
                })
            })
            .collect();
        let criterion = [
            (postcard.path(), 120.0),
            (prost.path(), 100.0),
            (json.path(), 200.0),
            (bincode.path(), 10.0),
        ];
        let found = ratio_pairs(&pairs(&criterion, &rows), &rows, Some(&samples));
        let by_arms: Vec<(String, String, bool)> = found
            .iter()
            .map(|pair| {
                (
                    pair.serbench.numerator.clone(),
                    pair.serbench.denominator.clone(),
                    pair.inside(),
                )
            })
            .collect();
        // The telemetry case has no partner; json's criterion ratio 1.67 is outside serbench's
        // paired 1.25, though inside the wide unpaired interval.
        assert_eq!(
            by_arms,
            [
                ("postcard/postcard".into(), "protobuf/prost".into(), true),
                ("json/serde_json".into(), "postcard/postcard".into(), false),
                ("json/serde_json".into(), "protobuf/prost".into(), false),
            ]
        );
        assert_eq!(found[0].serbench.paired_workers, Some(4));
        // json/postcard is 1.25 in every worker, so one more worker's is 1.25 too: criterion's
        // 1.67 is outside; postcard/prost's 1.19 and 1.21 give one more worker [1.16, 1.24].
        assert_eq!(
            found
                .iter()
                .map(RatioPair::inside_next_layout)
                .collect::<Vec<_>>(),
            [Some(true), Some(false), Some(false)]
        );
        let table = ratio_table(&found);
        assert!(
            table.ends_with(
                "inside serbench's 95% interval for 1 of 3 pairs (33%).\ncriterion's binary as one more layout: \
                 its ratio is inside the 95% interval of one more of serbench's workers for 1 of 3 pairs (33%).\n"
            ),
            "{table}"
        );
        let without_workers = ratio_pairs(&pairs(&criterion, &rows), &rows, None);
        assert!(without_workers.iter().all(|pair| pair.next_layout.is_none()));
        assert!(ratio_table(&without_workers).ends_with("for 1 of 3 pairs (33%).\n"));
    }

    #[test]
    fn reads_criterion_output_layout() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("json_serde_json_order_decode/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            r#"{"group_id":"json","full_id":"json/serde_json/order/decode"}"#,
        )
        .unwrap();
        std::fs::write(new.join("estimates.json"), r#"{"mean":{"point_estimate":812.5}}"#).unwrap();
        assert_eq!(
            criterion_means(dir.path()).unwrap(),
            vec![("json/serde_json/order/decode".to_string(), 812.5)]
        );
        for bad in ["0", "-812.5", "1e300"] {
            let estimates = format!(r#"{{"mean":{{"point_estimate":{bad}}}}}"#);
            std::fs::write(new.join("estimates.json"), estimates).unwrap();
            let error = criterion_means(dir.path()).unwrap_err();
            assert!(
                error.to_string().contains("estimates.json: mean.point_estimate"),
                "{error:#}"
            );
        }
    }
}

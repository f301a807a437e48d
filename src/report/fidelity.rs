//! The fidelity check: serbench's mean for an arm next to an independent, minimal criterion
//! benchmark of the same library call on the same bytes (`cargo bench --bench fidelity`).
//! Criterion writes `<id>/new/benchmark.json` (the id) and `new/estimates.json` (the mean in
//! ns) under `target/criterion`; the ids are the arms' paths ([`crate::arm::ArmId::path`]). A mean
//! outside serbench's own range of times is refused, naming its file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use super::results::{ResultRow, STATUS_OK};

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

/// Every `(id, mean ns)` criterion recorded under `dir`.
pub fn criterion_means(dir: &Path) -> Result<Vec<(String, f64)>> {
    let mut found = Vec::new();
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries =
            std::fs::read_dir(&folder).with_context(|| format!("cannot read {}", folder.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let read = |path: &Path| {
                    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
                };
                let benchmark: Benchmark = serde_json::from_str(&read(&path)?)
                    .with_context(|| format!("{}: not a criterion benchmark.json", path.display()))?;
                let estimates_path = path.with_file_name("estimates.json");
                let estimates: Estimates =
                    serde_json::from_str(&read(&estimates_path)?).with_context(|| {
                        format!("{}: not a criterion estimates.json", estimates_path.display())
                    })?;
                let mean = estimates.mean.point_estimate;
                super::files::in_range(
                    "mean.point_estimate",
                    mean,
                    super::results::MIN_NS,
                    super::results::MAX_NS,
                )
                .map_err(|why| crate::UsageError::error(format!("{}: {why}", estimates_path.display())))?;
                found.push((benchmark.full_id, mean));
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
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

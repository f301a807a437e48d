//! Reading a results folder back for `report`, `compare` and `fidelity`: results.csv
//! (required), sizes.csv, robustness.csv, samples.csv (checked against results.csv),
//! footprint.csv, instructions.csv and evolution.csv (optional), each validated completely by
//! [`files::read_complete`] before anything is written, so a bad file stops the command with
//! one line naming the file and the line.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::footprint::{self, FootprintRow};
use super::results::{self, ResultRow, STATUS_OK};
use super::samples::{self, SampleRow};
use super::sizes::{self, SizeRow};
use crate::UsageError;
use crate::files;

/// One results folder, read and checked.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    /// The folder as given (or the folder of a results.csv given directly).
    pub dir: PathBuf,
    pub results_path: PathBuf,
    pub rows: Vec<ResultRow>,
    /// `None` when the folder has no sizes.csv.
    pub sizes: Option<Vec<SizeRow>>,
    /// `None` when the folder has no robustness.csv (from `serbench robustness`).
    pub robustness: Option<Vec<super::robustness::RobustnessRow>>,
    /// The full profile's workers (samples.csv): `None` without one.
    pub samples: Option<Vec<SampleRow>>,
    /// `None` when the folder has no footprint.csv (from `serbench footprint`).
    pub footprint: Option<Vec<FootprintRow>>,
    /// `None` when the folder has no instructions.csv (from `run --measure instructions`).
    pub instructions: Option<Vec<super::instructions::InstructionRow>>,
    /// `None` when the folder has no evolution.csv (from `serbench evolve --out`).
    pub evolution: Option<Vec<super::evolution::EvolutionRow>>,
}

impl ResultsDir {
    /// The rows that have figures.
    pub fn ok_rows(&self) -> impl Iterator<Item = &ResultRow> {
        self.rows.iter().filter(|row| row.status == STATUS_OK)
    }

    /// The distinct values of one metadata column, in first-seen order.
    pub fn distinct(&self, column: impl Fn(&ResultRow) -> String) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for value in self.rows.iter().map(column) {
            if !values.contains(&value) {
                values.push(value);
            }
        }
        values
    }

    /// The system name of the rows (`x86_64-linux`), or the folder name if rows disagree.
    pub fn system(&self) -> String {
        match self.distinct(|row| row.host.system.clone()).as_slice() {
            [system] if !system.is_empty() => system.clone(),
            _ => folder_name(&self.dir),
        }
    }
}

fn folder_name(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Short, distinct labels for several folders: the system name, with the folder name added
/// where two folders share a system (two runs on one host).
pub fn labels(dirs: &[ResultsDir]) -> Vec<String> {
    let systems: Vec<String> = dirs.iter().map(ResultsDir::system).collect();
    let mut labels: Vec<String> = dirs
        .iter()
        .zip(&systems)
        .map(|(dir, system)| {
            if systems.iter().filter(|other| *other == system).count() > 1 {
                format!("{system} ({})", folder_name(&dir.dir))
            } else {
                system.clone()
            }
        })
        .collect();
    // Same system and same folder name (a/x86_64-linux and b/x86_64-linux): number them.
    for index in 0..labels.len() {
        if labels[..index].contains(&labels[index]) {
            labels[index] = format!("{} #{}", labels[index], index + 1);
        }
    }
    labels
}

/// Reads a results folder (or a results.csv path), and its sizes.csv, robustness.csv,
/// footprint.csv, instructions.csv and evolution.csv if it has them, each completely validated.
pub fn load(path: &Path) -> Result<ResultsDir> {
    let (dir, results_path) = if path.is_dir() {
        (path.to_path_buf(), path.join(results::FILE_NAME))
    } else if path.exists() {
        (
            path.parent().map_or_else(PathBuf::new, Path::to_path_buf),
            path.to_path_buf(),
        )
    } else {
        return Err(UsageError::error(format!(
            "{}: no such results folder",
            path.display()
        )));
    };
    // What is there but is no regular file is read_complete's to name.
    if std::fs::symlink_metadata(&results_path).is_err() {
        return Err(UsageError::error(format!(
            "{}: not found (a results folder holds the results.csv that `serbench run` writes)",
            results_path.display()
        )));
    }
    let rows = files::read_complete::<ResultRow>(&results_path)?;
    if rows.is_empty() {
        return Err(UsageError::error(format!(
            "{}: no result rows",
            results_path.display()
        )));
    }
    let companions = Companions::read(&dir, &rows, &[])?;
    Ok(ResultsDir {
        dir,
        results_path,
        rows,
        sizes: companions.sizes,
        robustness: companions.robustness,
        samples: companions.samples,
        footprint: companions.footprint,
        instructions: companions.instructions,
        evolution: companions.evolution,
    })
}

/// Validates every file of `dir` that the folder's report reads, but `own`: the files a command
/// is about to replace or extend. Called before anything is moved aside or measured, so a
/// folder the command would refuse at the end is refused before it changes.
pub fn check_besides(dir: &Path, own: &[&str]) -> Result<()> {
    if !own.contains(&results::FILE_NAME) && dir.join(results::FILE_NAME).is_file() {
        let rows = files::read_complete::<ResultRow>(&dir.join(results::FILE_NAME))?;
        Companions::read(dir, &rows, own)?;
    } else {
        Companions::read(dir, &[], own)?;
    }
    Ok(())
}

/// The optional files of a results folder.
struct Companions {
    sizes: Option<Vec<SizeRow>>,
    robustness: Option<Vec<super::robustness::RobustnessRow>>,
    samples: Option<Vec<SampleRow>>,
    footprint: Option<Vec<FootprintRow>>,
    instructions: Option<Vec<super::instructions::InstructionRow>>,
    evolution: Option<Vec<super::evolution::EvolutionRow>>,
}

impl Companions {
    /// Those of `dir`'s optional files it holds, but `skip`, each validated (samples.csv against
    /// `rows`).
    fn read(dir: &Path, rows: &[ResultRow], skip: &[&str]) -> Result<Companions> {
        // Present but not a regular file (a FIFO, a folder): its reader refuses it.
        let optional =
            |name: &str| (!skip.contains(&name) && dir.join(name).exists()).then(|| dir.join(name));
        Ok(Companions {
            sizes: optional(sizes::FILE_NAME)
                .map(|path| {
                    let sizes = files::read_complete::<SizeRow>(&path)?;
                    check_sizes(rows, &sizes, &path, &dir.join(results::FILE_NAME))?;
                    anyhow::Ok(sizes)
                })
                .transpose()?,
            robustness: optional(super::robustness::FILE_NAME)
                .map(|path| super::robustness::read_csv(&path))
                .transpose()?,
            samples: optional(samples::FILE_NAME)
                .map(|path| {
                    let samples = files::read_complete::<SampleRow>(&path)?;
                    check_samples(rows, &samples, &path)?;
                    anyhow::Ok(samples)
                })
                .transpose()?,
            footprint: optional(footprint::FILE_NAME)
                .map(|path| files::read_complete::<FootprintRow>(&path))
                .transpose()?,
            instructions: optional(super::instructions::FILE_NAME)
                .map(|path| files::read_complete(&path))
                .transpose()?,
            evolution: optional(super::evolution::FILE_NAME)
                .map(|path| files::read_complete(&path))
                .transpose()?,
        })
    }
}

/// Refuses a samples.csv that is not the one results.csv was made from, whatever the profile:
/// its run (host, commit, profile, schedule) is the rows', each of its arms has a row, and every
/// ok row is its arm's ok samples, summed and averaged as the run did. A samples.csv of another
/// run would otherwise give its pairing to these rows' ratios. (The rows of an interval have
/// one line each: no text column holds a line break.)
fn check_samples(rows: &[ResultRow], samples: &[SampleRow], path: &Path) -> Result<()> {
    let refuse = |line: usize, why: String| {
        UsageError::error(format!(
            "{}:{line}: {why}: it is not the samples.csv of this result set (remove it, or put back \
             the one the run wrote)",
            path.display()
        ))
    };
    if let (Some(row), Some(sample)) = (rows.first(), samples.first()) {
        let results = [
            ("host", &row.host.host),
            ("commit", &row.host.commit),
            ("profile", &row.profile),
            ("schedule", &row.schedule),
        ];
        let theirs = [&sample.host, &sample.commit, &sample.profile, &sample.schedule];
        for ((column, ours), theirs) in results.into_iter().zip(theirs) {
            if ours != theirs {
                return Err(refuse(
                    2,
                    format!("{column} {theirs:?}, where results.csv's rows have {ours:?}"),
                ));
            }
        }
    }
    for (index, sample) in samples.iter().enumerate() {
        if !rows.iter().any(|row| row.arm == sample.arm) {
            return Err(refuse(
                index + 2,
                format!(
                    "a worker's sample of {}, an arm results.csv has no row of",
                    sample.arm
                ),
            ));
        }
    }
    for row in rows.iter().filter(|row| row.status == STATUS_OK) {
        let Some(workers) = row.workers.filter(|_| !samples.is_empty()) else {
            continue;
        };
        let ours: Vec<&SampleRow> = samples.iter().filter(|sample| sample.arm == row.arm).collect();
        let means: Vec<f64> = ours.iter().filter_map(|sample| sample.mean_ns).collect();
        let mean = crate::stats::Summary::of(&means).mean;
        let reps: usize = ours.iter().filter_map(|sample| sample.reps).sum();
        let all_ok = ours.iter().all(|sample| sample.status == STATUS_OK);
        let row_mean = row.mean_ns.unwrap_or(f64::NAN);
        if !all_ok
            || means.len() != workers
            || row.reps != Some(reps)
            || (mean - row_mean).abs() > 1e-9 * row_mean.abs()
        {
            return Err(UsageError::error(format!(
                "{}: its samples of {} ({} workers, mean {mean:.4} ns) do not make results.csv's row \
                 ({workers} workers, mean {row_mean:.4} ns): it is not the samples.csv of this result set \
                 (remove it, or put back the one the run wrote)",
                path.display(),
                row.arm,
                means.len(),
            )));
        }
    }
    Ok(())
}

/// Refuses a sizes.csv that contradicts results.csv: each codec's records and encoded bytes in
/// sizes.csv are those of some row of that codec in results.csv, which encodes with the same
/// encoder. Some, not every: a typed build measures a data payload's codec both typed and
/// dynamic, whose encodings differ (a typed record writes an absent optional field as null).
fn check_sizes(rows: &[ResultRow], sizes: &[SizeRow], path: &Path, results_path: &Path) -> Result<()> {
    for (at, size) in sizes.iter().enumerate() {
        let ours: Vec<(usize, &ResultRow)> = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| row.arm.codec == size.codec)
            .collect();
        let agrees = |row: &ResultRow| {
            row.records == size.records
                && (size.encoded_bytes.is_none()
                    || row.encoded_bytes.is_none()
                    || row.encoded_bytes == size.encoded_bytes)
        };
        let Some(&(index, row)) = ours.first() else {
            continue;
        };
        if ours.iter().any(|(_, row)| agrees(row)) {
            continue;
        }
        let show = |bytes: Option<usize>| bytes.map_or("none".to_string(), |bytes| bytes.to_string());
        let (column, theirs, mine) = if row.records == size.records {
            ("encoded_bytes", show(size.encoded_bytes), show(row.encoded_bytes))
        } else {
            ("records", size.records.to_string(), row.records.to_string())
        };
        return Err(UsageError::error(format!(
            "{}:{}: {column} {theirs} of {} {}, where {}:{} ({}) has {mine}: it is not the \
             sizes.csv of this result set (remove it, or run `serbench sizes` again)",
            path.display(),
            at + 2,
            size.codec.label(),
            size.codec.payload,
            results_path.display(),
            index + 2,
            row.arm
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A typed build measures a data payload's codec typed and dynamic, whose encodings differ:
    /// sizes.csv agrees with one of them (found by CI's typed runs); a size neither holds is
    /// another set's.
    #[test]
    fn sizes_agree_with_some_row_of_their_codec() {
        let id = crate::arm::ArmId::typed(
            "json",
            "serde_json",
            "",
            "data:events",
            crate::arm::Operation::Encode,
        );
        let row = |mode, bytes| ResultRow {
            arm: crate::arm::ArmId { mode, ..id.clone() },
            records: 29,
            encoded_bytes: Some(bytes),
            ..ResultRow::default()
        };
        let rows = [
            row(crate::arm::Mode::Typed, 10976),
            row(crate::arm::Mode::Dynamic, 10612),
        ];
        let size = |bytes| SizeRow {
            codec: id.codec.clone(),
            records: 29,
            encoded_bytes: Some(bytes),
            ..SizeRow::default()
        };
        let (sizes, results) = (Path::new("sizes.csv"), Path::new("results.csv"));
        assert!(check_sizes(&rows, &[size(10612)], sizes, results).is_ok());
        assert!(check_sizes(&rows, &[size(10976)], sizes, results).is_ok());
        let refused = format!(
            "{:#}",
            check_sizes(&rows, &[size(999)], sizes, results).unwrap_err()
        );
        assert!(
            refused.starts_with("sizes.csv:2: encoded_bytes 999 of "),
            "{refused}"
        );
    }

    #[test]
    fn two_runs_on_one_system_get_distinct_labels() {
        let dir = |path: &str, system: &str| ResultsDir {
            dir: PathBuf::from(path),
            results_path: PathBuf::from(path).join("results.csv"),
            rows: vec![ResultRow {
                host: crate::host::Host {
                    system: system.into(),
                    ..Default::default()
                },
                ..ResultRow::default()
            }],
            sizes: None,
            robustness: None,
            samples: None,
            footprint: None,
            instructions: None,
            evolution: None,
        };
        let dirs = [
            dir("runs/before", "x86_64-linux"),
            dir("runs/after", "x86_64-linux"),
            dir("mac", "aarch64-darwin"),
            dir("other/after", "x86_64-linux"),
        ];
        assert_eq!(
            labels(&dirs),
            [
                "x86_64-linux (before)",
                "x86_64-linux (after)",
                "aarch64-darwin",
                "x86_64-linux (after) #4"
            ]
        );
    }
}

//! Reading a results folder back for `report` and `compare`: results.csv (required), sizes.csv
//! (optional), each checked in full (schema version, every row, duplicate arms) before anything
//! is written, so a bad file stops the command with one line naming the file and the line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::SCHEMA_VERSION;
use super::results::{self, ResultRow, STATUS_OK};
use super::sizes::{self, SizeRow};

/// An arm by its coordinates, as every report and comparison keys it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArmKey {
    pub format: String,
    pub backend: String,
    pub variant: String,
    pub payload: String,
    pub operation: String,
    pub mode: String,
    pub framing: String,
}

impl ArmKey {
    pub fn of(row: &ResultRow) -> ArmKey {
        ArmKey {
            format: row.format.clone(),
            backend: row.backend.clone(),
            variant: row.variant.clone(),
            payload: row.payload.clone(),
            operation: row.operation.clone(),
            mode: row.mode.clone(),
            framing: row.framing.clone(),
        }
    }

    /// `format/backend[variant]`, then the mode and framing when they are not the usual
    /// typed/document: the same label the headline ratios use.
    pub fn label(&self) -> String {
        arm_label(
            &self.format,
            &self.backend,
            &self.variant,
            &self.mode,
            &self.framing,
        )
    }

    /// A baseline arm (it times a copy of the input, not a codec): charted apart, never the
    /// fastest. The results carry no flag for it, so the variant name decides.
    pub fn is_baseline(&self) -> bool {
        self.variant == "copy-only"
    }

    /// Payload order as in the payload list, then operation order, then label: the order of
    /// every table.
    pub fn sort_key(&self) -> (usize, usize, String) {
        (
            payload_rank(&self.payload),
            operation_rank(&self.operation),
            self.label(),
        )
    }
}

impl fmt::Display for ArmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.payload, self.operation, self.label())
    }
}

/// The label of an arm's coordinates (sizes rows pass `typed` as their mode).
pub fn arm_label(format: &str, backend: &str, variant: &str, mode: &str, framing: &str) -> String {
    let mut label = format!("{format}/{backend}");
    if !variant.is_empty() {
        label += &format!("[{variant}]");
    }
    if mode != "typed" {
        label += &format!(" {mode}");
    }
    if framing != "document" {
        label += &format!(" {framing}");
    }
    label
}

/// Position in the payload list; unknown payloads (from a newer serbench) sort last.
pub fn payload_rank(name: &str) -> usize {
    crate::payload::specs()
        .iter()
        .position(|spec| spec.name == name)
        .unwrap_or(usize::MAX)
}

/// Position in the operation list; unknown operations sort last.
pub fn operation_rank(name: &str) -> usize {
    crate::arm::Operation::ALL
        .iter()
        .position(|operation| operation.name() == name)
        .unwrap_or(usize::MAX)
}

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
    pub robustness: Option<Vec<crate::robustness::RobustnessRow>>,
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
        match self.distinct(|row| row.system.clone()).as_slice() {
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

/// Reads a results folder (or a results.csv path) and its sizes.csv if there is one.
pub fn load(path: &Path) -> Result<ResultsDir> {
    let (dir, results_path) = if path.is_dir() {
        (path.to_path_buf(), path.join(results::FILE_NAME))
    } else if path.exists() {
        (
            path.parent().map_or_else(PathBuf::new, Path::to_path_buf),
            path.to_path_buf(),
        )
    } else {
        bail!("{}: no such results folder", path.display());
    };
    if !results_path.is_file() {
        bail!(
            "{}: not found (a results folder holds the results.csv that `serbench run` writes)",
            results_path.display()
        );
    }
    let rows = read_checked::<ResultRow>(&results_path)?;
    if rows.is_empty() {
        bail!("{}: no result rows", results_path.display());
    }
    check_unique_arms(&results_path, &rows)?;
    let sizes_path = dir.join(sizes::FILE_NAME);
    let sizes = if sizes_path.is_file() {
        Some(read_checked::<SizeRow>(&sizes_path)?)
    } else {
        None
    };
    let robustness_path = dir.join(crate::robustness::FILE_NAME);
    let robustness = if robustness_path.is_file() {
        Some(crate::robustness::read_csv(&robustness_path)?)
    } else {
        None
    };
    Ok(ResultsDir {
        dir,
        results_path,
        rows,
        sizes,
        robustness,
    })
}

/// The schema version of a serbench CSV file: the first field of its first data row (`None`
/// for a file with a header only). Checked before the rows are parsed, because a file of
/// another schema may not parse at all and the version is the useful thing to say then.
pub fn schema_version(path: &Path) -> Result<Option<(usize, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, header)) if header.starts_with("schema_version,") => {}
        _ => bail!(
            "{}:1: not a serbench CSV file (the header does not start with schema_version)",
            path.display()
        ),
    }
    Ok(lines
        .find(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| (index + 1, line.split(',').next().unwrap_or_default().to_string())))
}

/// Reads every row of a serbench CSV file of this schema version.
fn read_checked<T: serde::de::DeserializeOwned + HasSchemaVersion>(path: &Path) -> Result<Vec<T>> {
    if let Some((line, version)) = schema_version(path)?
        && version != SCHEMA_VERSION.to_string()
    {
        bail!(
            "{}:{line}: schema version {version:?}, this serbench reads version {SCHEMA_VERSION}",
            path.display()
        );
    }
    let rows: Vec<T> = results::read_rows(path)?;
    // Rows are one line each (notes are written on one line), so the line is the index + 2.
    if let Some((index, row)) = rows
        .iter()
        .enumerate()
        .find(|(_, row)| row.schema_version() != SCHEMA_VERSION)
    {
        bail!(
            "{}:{}: schema version {}, this serbench reads version {SCHEMA_VERSION}",
            path.display(),
            index + 2,
            row.schema_version()
        );
    }
    Ok(rows)
}

trait HasSchemaVersion {
    fn schema_version(&self) -> u32;
}

impl HasSchemaVersion for ResultRow {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

impl HasSchemaVersion for SizeRow {
    fn schema_version(&self) -> u32 {
        self.schema_version
    }
}

/// One row per arm: a file with an arm twice is two runs mixed, which no figure can be
/// taken from.
fn check_unique_arms(path: &Path, rows: &[ResultRow]) -> Result<()> {
    let mut first_line: BTreeMap<ArmKey, usize> = BTreeMap::new();
    for (index, row) in rows.iter().enumerate() {
        let line = index + 2;
        if let Some(first) = first_line.insert(ArmKey::of(row), line) {
            bail!(
                "{}:{line}: arm {} appears a second time (first on line {first})",
                path.display(),
                ArmKey::of(row)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_match_the_headline_ratio_labels() {
        assert_eq!(
            arm_label("json", "simd-json", "copy-only", "typed", "ndjson"),
            "json/simd-json[copy-only] ndjson"
        );
        assert_eq!(
            arm_label("json", "serde_json", "", "dynamic", "document"),
            "json/serde_json dynamic"
        );
    }

    #[test]
    fn two_runs_on_one_system_get_distinct_labels() {
        let dir = |path: &str, system: &str| ResultsDir {
            dir: PathBuf::from(path),
            results_path: PathBuf::from(path).join("results.csv"),
            rows: vec![ResultRow {
                system: system.into(),
                ..ResultRow::default()
            }],
            sizes: None,
            robustness: None,
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

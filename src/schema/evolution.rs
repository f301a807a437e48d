//! evolution.csv: one backend, payload and change of schema per row, with what each direction's
//! reader did (measured by [`crate::evolve`], written by `serbench evolve --out`).

use serde::{Deserialize, Serialize};

use crate::files::Record;

/// The file `serbench evolve --out DIR` writes.
pub const FILE_NAME: &str = "evolution.csv";

/// A change of schema, made on the payload's record type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    AddOptional,
    AddDefault,
    Remove,
    Rename,
    Reorder,
    Widen,
    Nullable,
    EnumVariant,
}

impl Change {
    pub const ALL: [Change; 8] = [
        Change::AddOptional,
        Change::AddDefault,
        Change::Remove,
        Change::Rename,
        Change::Reorder,
        Change::Widen,
        Change::Nullable,
        Change::EnumVariant,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Change::AddOptional => "add optional",
            Change::AddDefault => "add with default",
            Change::Remove => "remove",
            Change::Rename => "rename",
            Change::Reorder => "reorder",
            Change::Widen => "widen i32→i64",
            Change::Nullable => "make nullable",
            Change::EnumVariant => "add enum variant",
        }
    }
}

/// What a reader did with the other version's bytes, worst over the records; or that the
/// change cannot be made on the payload's record type.
pub const OUTCOMES: [&str; 4] = ["ok", "refused", "silently-wrong", "cannot-express"];

/// One line of evolution.csv.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvolutionRow {
    pub payload: String,
    /// The records each cell read.
    pub records: usize,
    pub format: String,
    pub backend: String,
    pub variant: String,
    /// How the backend meets a change, in a few words.
    pub mechanism: String,
    /// [`Change::name`].
    pub change: String,
    /// What the change did on this payload's record, or why it cannot be made.
    pub what: String,
    /// The new version reading the old one's bytes: one of [`OUTCOMES`].
    pub new_reads_old: String,
    /// The first record that was not ok: its error or the first field that differs.
    pub new_reads_old_detail: String,
    /// The old version reading the new one's bytes.
    pub old_reads_new: String,
    pub old_reads_new_detail: String,
}

impl EvolutionRow {
    /// `format/backend[variant]` ([`crate::arm::backend_label`]).
    pub fn label(&self) -> String {
        crate::arm::backend_label(&self.format, &self.backend, &self.variant)
    }
}

impl Record for EvolutionRow {
    const ROW: &'static str = "backend, payload and change";

    /// A known change and known outcomes, both directions expressed or neither, a record read
    /// per cell.
    fn check(&self) -> Result<(), String> {
        for (column, outcome) in [
            ("new_reads_old", &self.new_reads_old),
            ("old_reads_new", &self.old_reads_new),
        ] {
            if !OUTCOMES.contains(&outcome.as_str()) {
                return Err(format!("{column} {outcome:?} is not one of {OUTCOMES:?}"));
            }
        }
        if (self.new_reads_old == "cannot-express") != (self.old_reads_new == "cannot-express") {
            return Err("a change is expressed in both directions or in neither".to_string());
        }
        if self.records == 0 {
            return Err("records 0: each cell reads at least one record".to_string());
        }
        if self.payload.is_empty() || self.format.is_empty() || self.backend.is_empty() {
            return Err("payload, format and backend are named".to_string());
        }
        if !Change::ALL.iter().any(|change| change.name() == self.change) {
            return Err(format!(
                "change {:?} is not one of serbench evolve's",
                self.change
            ));
        }
        Ok(())
    }

    fn key(&self) -> String {
        format!("{} {} {}", self.label(), self.payload, self.change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_with_an_unknown_change_or_outcome_or_one_expressed_direction_is_refused() {
        let row = EvolutionRow {
            payload: "order".into(),
            records: 1,
            format: "json".into(),
            backend: "serde_json".into(),
            change: "rename".into(),
            new_reads_old: "ok".into(),
            old_reads_new: "refused".into(),
            ..Default::default()
        };
        assert_eq!(row.check(), Ok(()));
        let unknown = EvolutionRow {
            old_reads_new: "fine".into(),
            ..row.clone()
        };
        assert!(unknown.check().unwrap_err().contains("old_reads_new \"fine\""));
        let half = EvolutionRow {
            new_reads_old: "cannot-express".into(),
            ..row.clone()
        };
        assert!(half.check().is_err());
        let change = EvolutionRow {
            change: "<script>".into(),
            ..row
        };
        assert!(change.check().unwrap_err().contains("\"<script>\" is not one"));
    }
}

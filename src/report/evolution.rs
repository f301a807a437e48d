//! The schema-evolution matrices of evolution.csv, per payload: the model the terminal
//! (`serbench evolve`), report.md and report.html render.

use serde::Serialize;

use crate::schema::evolution::EvolutionRow;

/// One payload's matrix.
#[derive(Clone, Debug, Serialize)]
pub struct EvolutionMatrix {
    pub payload: String,
    pub records: usize,
    /// Each change, with what it did on this payload's record (or why it cannot be made).
    pub changes: Vec<ChangeModel>,
    pub rows: Vec<BackendCells>,
    /// Each cell that is not ok: `label change: direction: outcome (detail)`.
    pub not_ok: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ChangeModel {
    pub change: String,
    pub what: String,
}

/// A backend's cells, in the order of [`EvolutionMatrix::changes`]: `new / old` outcomes, or
/// `cannot express`.
#[derive(Clone, Debug, Serialize)]
pub struct BackendCells {
    pub label: String,
    pub mechanism: String,
    pub cells: Vec<String>,
    pub silently_wrong: bool,
}

/// The matrices of `rows`, payloads and backends in first-seen order.
pub fn matrices(rows: &[EvolutionRow]) -> Vec<EvolutionMatrix> {
    let mut matrices: Vec<EvolutionMatrix> = Vec::new();
    for row in rows {
        let index = match matrices.iter().position(|matrix| matrix.payload == row.payload) {
            Some(index) => index,
            None => {
                matrices.push(EvolutionMatrix {
                    payload: row.payload.clone(),
                    records: row.records,
                    changes: Vec::new(),
                    rows: Vec::new(),
                    not_ok: Vec::new(),
                });
                matrices.len() - 1
            }
        };
        let matrix = &mut matrices[index];
        if !matrix.changes.iter().any(|change| change.change == row.change) {
            matrix.changes.push(ChangeModel {
                change: row.change.clone(),
                what: row.what.clone(),
            });
        }
        let label = row.label();
        let backend = match matrix.rows.iter().position(|backend| backend.label == label) {
            Some(index) => index,
            None => {
                matrix.rows.push(BackendCells {
                    label: label.clone(),
                    mechanism: row.mechanism.clone(),
                    cells: Vec::new(),
                    silently_wrong: false,
                });
                matrix.rows.len() - 1
            }
        };
        let cells = &mut matrix.rows[backend];
        if row.new_reads_old == "cannot-express" {
            cells.cells.push("cannot express".to_string());
            continue;
        }
        let shown = |outcome: &str| match outcome {
            "silently-wrong" => "SILENTLY WRONG".to_string(),
            outcome => outcome.to_string(),
        };
        cells.cells.push(format!(
            "{} / {}",
            shown(&row.new_reads_old),
            shown(&row.old_reads_new)
        ));
        for (direction, outcome, detail) in [
            ("new reads old", &row.new_reads_old, &row.new_reads_old_detail),
            ("old reads new", &row.old_reads_new, &row.old_reads_new_detail),
        ] {
            if outcome != "ok" {
                cells.silently_wrong |= outcome == "silently-wrong";
                matrix.not_ok.push(format!(
                    "{label} {}: {direction}: {} ({detail})",
                    row.change,
                    shown(outcome)
                ));
            }
        }
    }
    matrices
}

impl EvolutionMatrix {
    /// `1 record`, `50 records`.
    pub fn records_text(&self) -> String {
        match self.records {
            1 => "1 record".to_string(),
            count => format!("{count} records"),
        }
    }

    /// The table's header and rows: one row per backend, one column per change.
    pub fn table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let header = std::iter::once("backend".to_string())
            .chain(self.changes.iter().map(|change| change.change.clone()))
            .collect();
        let rows = self
            .rows
            .iter()
            .map(|row| {
                std::iter::once(row.label.clone())
                    .chain(row.cells.iter().cloned())
                    .collect()
            })
            .collect();
        (header, rows)
    }

    /// The matrix as Markdown: the table, what each change did, each mechanism, the cells that
    /// are not ok; all of it from a file, so all of it escaped.
    pub fn markdown(&self) -> String {
        let escape = |cells: Vec<String>| -> Vec<String> {
            cells.iter().map(|cell| crate::escape::markdown(cell)).collect()
        };
        let (header, rows) = self.table();
        let (header, rows) = (escape(header), rows.into_iter().map(escape).collect::<Vec<_>>());
        let mut text = format!(
            "### {}\n\nEach cell: new reads old / old reads new, worst over {}.\n\n",
            crate::escape::markdown(&self.payload),
            self.records_text()
        );
        text += &super::text::table(&header, &rows);
        text += "\n";
        for change in &self.changes {
            text += &format!(
                "- {}: {}\n",
                crate::escape::markdown(&change.change),
                crate::escape::markdown(&change.what)
            );
        }
        text += "\n";
        for row in &self.rows {
            text += &format!(
                "- {}: {}\n",
                crate::escape::markdown(&row.label),
                crate::escape::markdown(&row.mechanism)
            );
        }
        if !self.not_ok.is_empty() {
            text += "\n<details><summary>Cells not ok</summary>\n\n";
            for line in &self.not_ok {
                text += &format!("- {}\n", crate::escape::markdown(line));
            }
            text += "\n</details>\n";
        }
        text + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: &str, change: &str, new: &str, old: &str) -> EvolutionRow {
        EvolutionRow {
            payload: "order".into(),
            records: 1,
            format: "f".into(),
            backend: backend.into(),
            change: change.into(),
            new_reads_old: new.into(),
            old_reads_new: old.into(),
            old_reads_new_detail: "x is 1 where 2 was written".into(),
            ..Default::default()
        }
    }

    #[test]
    fn rows_become_one_matrix_per_payload_with_the_silently_wrong_cells_listed() {
        let matrices = matrices(&[
            row("a", "rename", "ok", "ok"),
            row("a", "reorder", "ok", "silently-wrong"),
            row("b", "rename", "cannot-express", "cannot-express"),
            row("b", "reorder", "refused", "ok"),
        ]);
        assert_eq!(matrices.len(), 1);
        let (header, rows) = matrices[0].table();
        assert_eq!(header, ["backend", "rename", "reorder"]);
        assert_eq!(rows[0], ["f/a", "ok / ok", "ok / SILENTLY WRONG"]);
        assert_eq!(rows[1], ["f/b", "cannot express", "refused / ok"]);
        assert!(matrices[0].rows[0].silently_wrong && !matrices[0].rows[1].silently_wrong);
        assert_eq!(
            matrices[0].not_ok[0],
            "f/a reorder: old reads new: SILENTLY WRONG (x is 1 where 2 was written)"
        );
    }
}

//! The formats table: every enabled format and backend with the crates it is built on (their
//! locked versions), its schema and its buffer policy, from the format files' own
//! [`BackendDoc`]s. `serbench list --formats [--markdown]` prints it; README holds the Markdown
//! one (a test checks it is current).

use crate::format::{self, BackendDoc, Format};

/// The columns; a leading `>` marks none here (every column is text).
pub const HEADER: [&str; 5] = ["format", "backend [variant]", "crate", "schema", "buffer policy"];

/// One row per backend of every enabled format, in registry order.
pub fn rows() -> Vec<Vec<String>> {
    format::all()
        .into_iter()
        .flat_map(|format| format.backends.iter().map(move |backend| row(format, backend)))
        .collect()
}

fn row(format: &Format, backend: &BackendDoc) -> Vec<String> {
    let name = if backend.variant.is_empty() {
        backend.backend.to_string()
    } else {
        format!("{} [{}]", backend.backend, backend.variant)
    };
    vec![
        format.name.to_string(),
        name,
        crates(backend),
        backend.schema.to_string(),
        backend.buffer_policy.to_string(),
    ]
}

/// `name version, ...`, then the note in brackets; `-` for a baseline without a crate.
fn crates(backend: &BackendDoc) -> String {
    let mut text = backend
        .crates
        .iter()
        .map(|name| match format::crate_version(name) {
            Some(version) => format!("{name} {version}"),
            None => name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    match (text.is_empty(), backend.crate_note.is_empty()) {
        (true, true) => text = "-".to_string(),
        (true, false) => text = backend.crate_note.to_string(),
        (false, false) => text += &format!(" ({})", backend.crate_note),
        (false, true) => {}
    }
    text
}

/// The table as Markdown (README's formats table).
pub fn markdown() -> String {
    let header: Vec<String> = HEADER.iter().map(|name| name.to_string()).collect();
    super::text::table(&header, &rows())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_cells_name_the_locked_versions() {
        let doc = |crates: &'static [&'static str], crate_note: &'static str| BackendDoc {
            backend: "b",
            variant: "",
            crates,
            crate_note,
            schema: "-",
            buffer_policy: "-",
        };
        let serde = format!("serde {}", format::crate_version("serde").unwrap());
        assert_eq!(crates(&doc(&["serde"], "")), serde);
        assert_eq!(crates(&doc(&["serde"], "a note")), format!("{serde} (a note)"));
        assert_eq!(crates(&doc(&[], "")), "-");
        assert_eq!(crates(&doc(&[], "a baseline")), "a baseline");
    }
}

//! The capability table: per backend, what it offers besides speed. Each format file states
//! what its specification says ([`crate::format::Capabilities`]); the rest is derived: the
//! schema from its [`crate::format::BackendDoc`], zero-copy access and in-place update from the
//! arms it has, `unsafe`, licence, release time and advisories from [`super::facts`],
//! and the hostile-input outcome from a folder's robustness.csv.

use serde::Serialize;

use super::facts;
use crate::format;
use crate::schema::evolution::{Change, EvolutionRow, OUTCOMES};
use crate::schema::robustness::{Outcome, RobustnessRow};

/// One backend's row.
#[derive(Clone, Debug, Serialize)]
pub struct Capability {
    pub format: String,
    /// `backend` or `backend[variant]`.
    pub backend: String,
    pub self_describing: bool,
    pub schema: String,
    pub evolution: String,
    /// It has access arms: it reads fields in place from the bytes.
    pub zero_copy: bool,
    /// It has update arms: it changes a scalar in place.
    pub in_place_update: bool,
    /// `unsafe` keywords in its crates' own sources ([`facts::CrateFacts::unsafe_keywords`]),
    /// summed; `None` for a backend that calls no crate.
    pub unsafe_keywords: Option<usize>,
    pub languages: Vec<String>,
    pub languages_source: String,
    /// Each crate as `name version (published day, licence)`.
    pub crates: Vec<String>,
    /// Each advisory as `crate: ID, what`.
    pub advisories: Vec<String>,
    /// From evolution.csv, where the folder has one.
    pub evolved: Option<Evolved>,
    /// From robustness.csv, where the folder has one: the worst outcome over its decoders'
    /// hostile inputs (`ok-different` and better are no failure) and the highest peak of live
    /// bytes, the allocation limit a service needs for those inputs.
    pub hostile: Option<Hostile>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Hostile {
    pub worst: String,
    pub failure: bool,
    pub peak_alloc_bytes: u64,
}

/// Every backend of every enabled format (no baseline), in registry order. `arms(format, backend, variant)`
/// says whether the backend has access arms and update arms; `robustness` is a folder's rows.
pub fn table(
    arms: impl Fn(&str, &str, &str) -> (bool, bool),
    robustness: Option<&[RobustnessRow]>,
    evolution: Option<&[EvolutionRow]>,
) -> Vec<Capability> {
    let mut rows = Vec::new();
    for format in format::all() {
        for backend in format
            .backends
            .iter()
            .filter(|backend| backend.variant != crate::arm::COPY_ONLY)
        {
            let crates: Vec<facts::CrateFacts> = backend
                .crates
                .iter()
                .filter_map(|name| facts::of_crate(name))
                .collect();
            let (zero_copy, in_place_update) = arms(format.name, backend.backend, backend.variant);
            let hostile =
                robustness.and_then(|rows| hostile(rows, format.name, backend.backend, backend.variant));
            rows.push(Capability {
                format: format.name.to_string(),
                backend: backend_name(backend.backend, backend.variant),
                self_describing: format.capabilities.self_describing,
                schema: backend.schema.to_string(),
                evolution: format.capabilities.evolution.to_string(),
                zero_copy,
                in_place_update,
                unsafe_keywords: (!crates.is_empty())
                    .then(|| crates.iter().map(|facts| facts.unsafe_keywords).sum()),
                languages: format
                    .capabilities
                    .languages
                    .iter()
                    .map(|name| name.to_string())
                    .collect(),
                languages_source: format.capabilities.languages_source.to_string(),
                crates: crates
                    .iter()
                    .map(|facts| {
                        let day = facts.published.split('T').next().unwrap_or_default();
                        format!("{} {} ({day}, {})", facts.name, facts.version, facts.licence)
                    })
                    .collect(),
                advisories: backend
                    .crates
                    .iter()
                    .flat_map(|name| facts::advisories(name))
                    .map(|advisory| format!("{}: {}, {}", advisory.krate, advisory.id, advisory.what))
                    .collect(),
                evolved: evolution
                    .and_then(|rows| evolved(rows, format.name, backend.backend, backend.variant)),
                hostile,
            });
        }
    }
    rows
}

/// `backend[variant]`, or `backend` for its plain use: how the table names a backend.
pub fn backend_name(backend: &str, variant: &str) -> String {
    match variant {
        "" => backend.to_string(),
        variant => format!("{backend}[{variant}]"),
    }
}

/// The worst outcome and highest peak of one backend's decoders in `rows`.
fn hostile(rows: &[RobustnessRow], format: &str, backend: &str, variant: &str) -> Option<Hostile> {
    let own: Vec<&RobustnessRow> = rows
        .iter()
        .filter(|row| {
            row.id.codec.format == format
                && row.id.codec.backend == backend
                && row.id.codec.variant == variant
        })
        .collect();
    let worst = own
        .iter()
        .flat_map(|row| Outcome::ALL.into_iter().filter(|&outcome| row.count(outcome) > 0))
        .max()?;
    Some(Hostile {
        worst: worst.name().to_string(),
        failure: worst.is_failure(),
        peak_alloc_bytes: own.iter().map(|row| row.peak_alloc_bytes).max().unwrap_or(0),
    })
}

/// The columns of [`cells`].
pub const HEADER: [&str; 10] = [
    "format",
    "backend",
    "self-describing",
    "schema",
    "evolution (documented)",
    "zero-copy",
    "unsafe",
    "languages",
    "crates",
    "advisories",
];

/// The columns of `rows`: [`HEADER`], then `evolution (measured)` and `hostile input` where a
/// row has figures for them.
pub fn header(rows: &[Capability]) -> Vec<&'static str> {
    let mut header = HEADER.to_vec();
    if rows.iter().any(|row| row.evolved.is_some()) {
        header.push(EVOLVED);
    }
    if rows.iter().any(|row| row.hostile.is_some()) {
        header.push(HOSTILE);
    }
    header
}

const EVOLVED: &str = "evolution (measured: new reads old / old reads new)";
const HOSTILE: &str = "hostile input";

/// A row's cells under `header` ([`header`]), as the terminal and Markdown tables show them.
pub fn cells(row: &Capability, header: &[&str]) -> Vec<String> {
    let yes = |value: bool| if value { "yes" } else { "no" }.to_string();
    let listed = |items: &[String], none: &str| match items {
        [] => none.to_string(),
        items => items.join("; "),
    };
    header
        .iter()
        .map(|&column| match column {
            "format" => row.format.clone(),
            "backend" => row.backend.clone(),
            "self-describing" => yes(row.self_describing),
            "schema" => row.schema.clone(),
            "evolution (documented)" => row.evolution.clone(),
            "zero-copy" => match (row.zero_copy, row.in_place_update) {
                (true, true) => "access, update",
                (true, false) => "access",
                _ => "no",
            }
            .to_string(),
            "unsafe" => row
                .unsafe_keywords
                .map_or("-".to_string(), |count| count.to_string()),
            "languages" => format!("{} ({})", row.languages.len(), row.languages.join(", ")),
            "crates" => listed(&row.crates, "-"),
            "advisories" => listed(&row.advisories, "none known"),
            EVOLVED => row
                .evolved
                .as_ref()
                .map_or("-".to_string(), |evolved| evolved.summary.clone()),
            HOSTILE => match &row.hostile {
                Some(hostile) => format!(
                    "worst {}; peak {} B",
                    hostile.worst,
                    super::text::grouped(hostile.peak_alloc_bytes as i64)
                ),
                None => "-".to_string(),
            },
            other => unreachable!("no capability column {other}"),
        })
        .collect()
}

/// What evolution.csv measured of one backend, over every payload in it.
#[derive(Clone, Debug, Serialize)]
pub struct Evolved {
    /// Per change, the worst outcome each way: `ok` for those ok both ways, then each other.
    pub summary: String,
    /// An added optional field and a renamed one each read right both ways on every payload
    /// (the page's evolution constraint). Removing an optional field is adding it read the other
    /// way, so both ways of the first cover it; removing a field every reader requires is
    /// refused or misread by every format, and is left out.
    pub survives: bool,
    /// The changes after which a reader decoded a different value without an error.
    pub silently_wrong: Vec<String>,
}

/// The changes a backend must survive both ways for [`Evolved::survives`].
const SURVIVE: [Change; 2] = [Change::AddOptional, Change::Rename];

/// `rows`' cells of one backend, summarised; `None` when it has none.
fn evolved(rows: &[EvolutionRow], format: &str, backend: &str, variant: &str) -> Option<Evolved> {
    let own: Vec<&EvolutionRow> = rows
        .iter()
        .filter(|row| row.format == format && row.backend == backend && row.variant == variant)
        .collect();
    if own.is_empty() {
        return None;
    }
    let rank = |outcome: &str| OUTCOMES.iter().position(|known| *known == outcome);
    let worst = |change: &str, read: fn(&EvolutionRow) -> &str| {
        own.iter()
            .filter(|row| row.change == change)
            .map(|row| read(row))
            .filter(|outcome| *outcome != "cannot-express")
            .max_by_key(|outcome| rank(outcome))
    };
    let mut ok = Vec::new();
    let mut others = Vec::new();
    let mut silently_wrong = Vec::new();
    for change in Change::ALL.map(Change::name) {
        let (Some(new), Some(old)) = (
            worst(change, |row| &row.new_reads_old),
            worst(change, |row| &row.old_reads_new),
        ) else {
            continue;
        };
        if new == "ok" && old == "ok" {
            ok.push(change);
        } else {
            others.push(format!("{change}: {new} / {old}"));
        }
        if new == "silently-wrong" || old == "silently-wrong" {
            silently_wrong.push(change.to_string());
        }
    }
    let mut summary = Vec::new();
    if !ok.is_empty() {
        summary.push(format!("ok: {}", ok.join(", ")));
    }
    summary.extend(others);
    Some(Evolved {
        summary: summary.join("; "),
        survives: SURVIVE.iter().all(|change| ok.contains(&change.name())),
        silently_wrong,
    })
}

/// The table as Markdown, with what each derived column means and where it comes from.
pub fn markdown(rows: &[Capability]) -> String {
    let columns = header(rows);
    let header: Vec<String> = columns.iter().map(|name| name.to_string()).collect();
    // The crates' facts come from their Cargo.toml files: escaped. The rest is serbench's own
    // text, whose code spans are meant.
    let crates = HEADER
        .iter()
        .position(|name| *name == "crates")
        .expect("a crates column");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut cells = cells(row, &columns);
            cells[crates] = crate::escape::markdown(&cells[crates]);
            cells
        })
        .collect();
    let mut text = super::text::table(&header, &cells);
    text += &format!(
        "Self-describing, evolution and languages: each format file states them from the format's \
         documentation (the sources: {}). Zero-copy: the backend has arms that read fields in \
         place (access) and change a scalar in place (update). Unsafe: the `unsafe` keywords in \
         the src/ of its crates and of the dependencies named after them, comments left out \
         (src/report/crates.csv, generated from the locked sources by tests/capabilities.rs). \
         Advisories: checked {}. Evolution (measured, from evolution.csv where there is one): \
         per change of schema, the worst outcome over the payloads when the new version reads \
         the old one's bytes and when the old reads the new (docs/capabilities.md#schema-evolution). \
         Hostile input (from robustness.csv, where there is one): the \
         worst outcome over the backend's decoders (ok-different and better are no failure) and \
         the highest peak of live bytes, the allocation limit those inputs need.\n",
        format::all()
            .iter()
            .map(|format| format!("{}: {}", format.name, format.capabilities.languages_source))
            .collect::<Vec<_>>()
            .join("; "),
        facts::ADVISORIES_CHECKED
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::{ArmId, Operation};
    use crate::schema::robustness::CaseKind;

    #[test]
    fn every_backend_has_a_row_and_hostile_input_is_its_worst_outcome() {
        let backends = format::all()
            .iter()
            .flat_map(|format| format.backends.iter())
            .filter(|backend| backend.variant != crate::arm::COPY_ONLY)
            .count();
        let robustness = |error: usize, panic: usize| RobustnessRow {
            id: ArmId::typed("postcard", "postcard", "", "order", Operation::Decode),
            case_kind: CaseKind::Truncate,
            cases: error + panic,
            ok_equal: 0,
            ok_different: 0,
            error,
            panic,
            over_cap: 0,
            crash: 0,
            timeout: 0,
            peak_alloc_bytes: 4096,
            input_bytes: 100,
            worst: None,
        };
        let rows = [robustness(3, 0), robustness(2, 1)];
        let table = table(|_, _, _| (false, false), Some(&rows), None);
        assert_eq!(table.len(), backends);
        let postcard = table.iter().find(|row| row.backend == "postcard").unwrap();
        let hostile = postcard.hostile.as_ref().unwrap();
        assert_eq!(
            (hostile.worst.as_str(), hostile.failure, hostile.peak_alloc_bytes),
            ("panic", true, 4096)
        );
        assert!(!postcard.self_describing);
        assert!(postcard.unsafe_keywords.is_some());
        // bincode's advisory is named where bincode is.
        if let Some(bincode) = table.iter().find(|row| row.format == "bincode") {
            assert!(
                bincode
                    .advisories
                    .iter()
                    .any(|text| text.contains("RUSTSEC-2025-0141")),
                "{bincode:?}"
            );
        }
    }
}

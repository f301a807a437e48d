//! What serbench states about the crates its backends call: crates.csv, generated from the
//! locked crate sources by tests/capabilities.rs (licence, release time, `unsafe` keywords), and
//! the known advisories, kept by hand in [`ADVISORIES`] with the day they were checked.

/// One crate's row of crates.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct CrateFacts {
    pub name: &'static str,
    pub version: &'static str,
    pub licence: &'static str,
    /// When crates.io published this version (RFC 3339).
    pub published: &'static str,
    /// `unsafe` keywords in the src/ of the crate and of its dependencies named after it,
    /// comments left out.
    pub unsafe_keywords: usize,
    /// The crates counted, `a + a-derive`.
    pub counted: &'static str,
}

const CRATES: &str = include_str!("crates.csv");

/// Every row of crates.csv.
pub fn crates() -> Vec<CrateFacts> {
    CRATES
        .lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let cells: Vec<&'static str> = line.split(',').collect();
            let [name, version, licence, published, keywords, _files, counted] = cells[..] else {
                panic!("crates.csv: a row of {} cells: {line}", cells.len())
            };
            CrateFacts {
                name,
                version,
                licence,
                published,
                unsafe_keywords: keywords.parse().expect("crates.csv: a count"),
                counted,
            }
        })
        .collect()
}

/// The facts of crate `name`, if crates.csv has it.
pub fn of_crate(name: &str) -> Option<CrateFacts> {
    crates().into_iter().find(|facts| facts.name == name)
}

/// A known advisory against a crate serbench calls.
pub struct Advisory {
    pub krate: &'static str,
    /// The versions it concerns, as the advisory says.
    pub versions: &'static str,
    pub id: &'static str,
    pub what: &'static str,
}

/// When [`ADVISORIES`] was last checked, and against what.
pub const ADVISORIES_CHECKED: &str = "2026-12-07, by hand against the RustSec IDs known to this \
    project (https://rustsec.org/advisories/; the machine that wrote it reaches no advisory \
    database, so `cargo audit` did not run)";

/// Advisories against the crates of crates.csv; one line each.
pub const ADVISORIES: &[Advisory] = &[Advisory {
    krate: "bincode",
    versions: "all (2.0.1 is the last release)",
    id: "RUSTSEC-2025-0141",
    what: "unmaintained; 3.0.0 is a tombstone whose README names wincode as the first alternative",
}];

/// The advisories against `name`.
pub fn advisories(name: &str) -> impl Iterator<Item = &'static Advisory> + '_ {
    ADVISORIES.iter().filter(move |advisory| advisory.krate == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crate_a_backend_calls_has_its_facts_at_its_locked_version() {
        let mut missing = Vec::new();
        for format in crate::format::all() {
            for name in format.backends.iter().flat_map(|backend| backend.crates.iter()) {
                match of_crate(name) {
                    Some(facts) if Some(facts.version) == crate::format::crate_version(name) => {}
                    _ => missing.push(*name),
                }
            }
        }
        assert!(
            missing.is_empty(),
            "crates.csv lacks or has another version of {missing:?}: run `SERBENCH_BLESS=1 cargo \
             test --test capabilities`"
        );
        for advisory in ADVISORIES {
            assert!(
                of_crate(advisory.krate).is_some(),
                "an advisory of a crate serbench does not call: {}",
                advisory.krate
            );
        }
    }
}

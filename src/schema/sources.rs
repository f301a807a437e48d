//! sources.csv: what a run's data payloads were measured from, one row per `data:` payload
//! (its origin, size and SHA-256). Written before anything is measured; a `--resume` whose
//! `--data` file is not the one the set was measured from is refused ([`check_and_merge`]), so
//! rows of two different files never share one result set.

use serde::{Deserialize, Serialize};

use super::SCHEMA_VERSION;
use super::results::ResultRow;
use crate::UsageError;
use crate::files::{Record, in_range};
use crate::payload::data::DataPayload;

pub const FILE_NAME: &str = "sources.csv";

/// One data payload's source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceRow {
    pub schema_version: u32,
    /// `data:<stem>`.
    pub payload: String,
    /// The path as given, or `corpus:<name>`.
    pub origin: String,
    pub bytes: u64,
    /// Of the file's bytes, in lowercase hex.
    pub sha256: String,
}

impl SourceRow {
    pub fn of(payload: &DataPayload) -> SourceRow {
        SourceRow {
            schema_version: SCHEMA_VERSION,
            payload: payload.spec.name.to_string(),
            origin: payload.origin.clone(),
            bytes: payload.source_bytes,
            sha256: payload.sha256.clone(),
        }
    }
}

impl Record for SourceRow {
    const ROW: &'static str = "data source";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    fn check(&self) -> Result<(), String> {
        super::check_schema_version(self.schema_version)?;
        if !self.payload.starts_with("data:") {
            return Err(format!(
                "payload {:?} is not a data payload (data:<stem>)",
                self.payload
            ));
        }
        in_range("bytes", self.bytes as f64, 0.0, u64::MAX as f64)?;
        if self.sha256.len() != 64
            || !self
                .sha256
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(format!("sha256 {:?} is not 64 lowercase hex digits", self.sha256));
        }
        Ok(())
    }

    fn key(&self) -> String {
        self.payload.clone()
    }
}

/// The sources.csv of a run: `held` (the folder's, when resuming) with this run's `ours`
/// added. Refused when the folder's `kept` rows measured a payload of both from other bytes,
/// or measured a `data:` payload of ours with no source to check against (a set from before
/// sources.csv, or one whose file was removed). A held source no kept row measured (a run
/// stopped before its first row) gives way to ours.
pub fn check_and_merge(
    held: Vec<SourceRow>,
    kept: &[ResultRow],
    ours: Vec<SourceRow>,
    folder: &str,
) -> anyhow::Result<Vec<SourceRow>> {
    let measured = |payload: &str| kept.iter().any(|row| row.arm.codec.payload == payload);
    let mut rows = held;
    for ours in ours {
        match rows.iter().position(|row| row.payload == ours.payload) {
            Some(at) if rows[at].sha256 == ours.sha256 && rows[at].bytes == ours.bytes => {}
            Some(at) if !measured(&ours.payload) => rows[at] = ours,
            Some(at) => {
                let theirs = &rows[at];
                return Err(UsageError::error(format!(
                    "{folder}: {} was measured from {} ({} bytes, sha256 {}), not from {} ({} bytes, \
                     sha256 {}): --resume extends only the same data; pass --replace to move the set \
                     aside and start anew, or choose another --out",
                    ours.payload,
                    theirs.origin,
                    theirs.bytes,
                    &theirs.sha256[..12],
                    ours.origin,
                    ours.bytes,
                    &ours.sha256[..12]
                )));
            }
            None if measured(&ours.payload) => {
                return Err(UsageError::error(format!(
                    "{folder}: its rows of {} do not say which file they were measured from (no \
                     {FILE_NAME} row), so {} cannot be checked against it; pass --replace to move \
                     the set aside and start anew, or choose another --out",
                    ours.payload, ours.origin
                )));
            }
            None => rows.push(ours),
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(payload: &str, origin: &str, byte: char) -> SourceRow {
        SourceRow {
            schema_version: SCHEMA_VERSION,
            payload: payload.to_string(),
            origin: origin.to_string(),
            bytes: 100,
            sha256: byte.to_string().repeat(64),
        }
    }

    fn measured(payload: &str) -> ResultRow {
        let mut row = ResultRow::default();
        row.arm.codec.payload = payload.to_string();
        row
    }

    #[test]
    fn the_same_file_resumes_and_another_is_refused_once_measured() {
        let held = vec![source("data:events", "events.ndjson", 'a')];
        let kept = [measured("data:events")];
        let same = check_and_merge(
            held.clone(),
            &kept,
            vec![source("data:events", "./events.ndjson", 'a')],
            "out",
        );
        assert_eq!(same.unwrap(), held);

        let other = check_and_merge(
            held.clone(),
            &kept,
            vec![source("data:events", "events.ndjson", 'b')],
            "out",
        )
        .unwrap_err();
        assert!(other.is::<UsageError>());
        assert!(
            other
                .to_string()
                .contains("data:events was measured from events.ndjson (100 bytes, sha256 aaaaaaaaaaaa)"),
            "{other}"
        );

        // Nothing measured yet from the held file: the new one takes its place.
        let unmeasured = check_and_merge(
            held,
            &[],
            vec![source("data:events", "events.ndjson", 'b')],
            "out",
        );
        assert_eq!(
            unmeasured.unwrap(),
            vec![source("data:events", "events.ndjson", 'b')]
        );
    }

    #[test]
    fn rows_with_no_source_are_refused_and_new_payloads_are_added() {
        let kept = [measured("data:events")];
        let unknown = check_and_merge(
            Vec::new(),
            &kept,
            vec![source("data:events", "events.ndjson", 'a')],
            "out",
        )
        .unwrap_err();
        assert!(unknown.to_string().contains("do not say which file"), "{unknown}");

        let held = vec![source("data:events", "events.ndjson", 'a')];
        let merged =
            check_and_merge(held, &kept, vec![source("data:users", "users.json", 'c')], "out").unwrap();
        let payloads: Vec<&str> = merged.iter().map(|row| row.payload.as_str()).collect();
        assert_eq!(payloads, ["data:events", "data:users"]);
    }

    #[test]
    fn a_row_that_is_not_a_data_source_is_refused() {
        assert!(source("data:events", "events.ndjson", 'a').check().is_ok());
        assert!(source("order", "events.ndjson", 'a').check().is_err());
        assert!(source("data:events", "events.ndjson", 'A').check().is_err());
        let mut short = source("data:events", "events.ndjson", 'a');
        short.sha256.truncate(63);
        assert!(short.check().is_err());
    }
}

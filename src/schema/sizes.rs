//! sizes.csv: encoded, zstd-compressed and zlib-compressed bytes per codec and payload (the
//! levels of [`crate::compress`]). No timing, no host data, no timestamp: the file is
//! byte-identical run to run and host to host.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::SCHEMA_VERSION;
use crate::arm::{CodecId, Encoder};
use crate::compress::{self, ZLIB_LEVEL, ZSTD_LEVEL, Zlib, Zstd};
use crate::files::{Record, in_range};

pub const FILE_NAME: &str = "sizes.csv";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    pub schema_version: u32,
    /// Its columns: format, backend, variant, payload, framing.
    pub codec: CodecId,
    pub records: usize,
    pub encoded_bytes: Option<usize>,
    pub zstd_level: i32,
    pub zstd_bytes: Option<usize>,
    pub zlib_level: u32,
    pub zlib_bytes: Option<usize>,
    pub bytes_per_record: Option<f64>,
    pub zstd_bytes_per_record: Option<f64>,
    pub zlib_bytes_per_record: Option<f64>,
    /// Encoded bytes over the compact serde_json encoding of the same payload.
    pub ratio_to_json: Option<f64>,
    pub status: String,
    pub note: String,
}

/// One row per encoder. `json_bytes` maps a payload name to its compact JSON size.
pub fn compute(encoders: &[&Encoder], json_bytes: &BTreeMap<&str, usize>) -> Vec<SizeRow> {
    encoders
        .iter()
        .map(|encoder| {
            let id = &encoder.id;
            let row = SizeRow {
                schema_version: SCHEMA_VERSION,
                codec: id.clone(),
                records: encoder.spec.records,
                zstd_level: ZSTD_LEVEL,
                zlib_level: ZLIB_LEVEL,
                ..SizeRow::default()
            };
            let measured = encoder.encode().and_then(|bytes| {
                Ok((
                    bytes.len(),
                    compress::compressed::<Zstd>(&bytes)?.len(),
                    compress::compressed::<Zlib>(&bytes)?.len(),
                ))
            });
            let per_record = |bytes: usize| Some(round4(bytes as f64 / row.records as f64));
            match measured {
                Ok((encoded, zstd, zlib)) => SizeRow {
                    encoded_bytes: Some(encoded),
                    zstd_bytes: Some(zstd),
                    zlib_bytes: Some(zlib),
                    bytes_per_record: per_record(encoded),
                    zstd_bytes_per_record: per_record(zstd),
                    zlib_bytes_per_record: per_record(zlib),
                    ratio_to_json: json_bytes
                        .get(id.payload.as_str())
                        .map(|&json| round4(encoded as f64 / json as f64)),
                    status: "ok".to_string(),
                    ..row
                },
                Err(error) => SizeRow {
                    status: "failed".to_string(),
                    note: format!("{error:#}").replace('\n', " "),
                    ..row
                },
            }
        })
        .collect()
}

/// Four decimals keep the file readable; the exact figures are the byte columns.
fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

impl Record for SizeRow {
    const ROW: &'static str = "codec";
    const SCHEMA_VERSION: Option<u32> = Some(super::SCHEMA_VERSION);

    /// An ok row has its sizes; every per-record figure and ratio is finite and not negative.
    fn check(&self) -> Result<(), String> {
        super::check_versioned(self.schema_version, self.records)?;
        super::domains::codec(&self.codec)?;
        for (column, level, ours) in [
            ("zstd_level", i64::from(self.zstd_level), i64::from(ZSTD_LEVEL)),
            ("zlib_level", i64::from(self.zlib_level), i64::from(ZLIB_LEVEL)),
        ] {
            if level != ours {
                return Err(format!("{column} {level}: serbench compresses at level {ours}"));
            }
        }
        let payload = Some(self.codec.payload.as_str());
        for (column, bytes, payload) in [
            ("encoded_bytes", self.encoded_bytes, payload),
            ("zstd_bytes", self.zstd_bytes, None),
            ("zlib_bytes", self.zlib_bytes, None),
        ] {
            super::domains::encoded_bytes(column, bytes, payload)?;
        }
        match self.status.as_str() {
            "ok" if self.encoded_bytes.is_none() || self.bytes_per_record.is_none() => {
                return Err("an ok row needs encoded_bytes and bytes_per_record".to_string());
            }
            "ok" | "failed" => {}
            other => return Err(format!("status {other:?}: ok or failed")),
        }
        for (column, value) in [
            ("bytes_per_record", self.bytes_per_record),
            ("zstd_bytes_per_record", self.zstd_bytes_per_record),
            ("zlib_bytes_per_record", self.zlib_bytes_per_record),
            ("ratio_to_json", self.ratio_to_json),
        ] {
            if let Some(value) = value {
                in_range(column, value, 0.0, f64::MAX)?;
            }
        }
        Ok(())
    }

    fn key(&self) -> String {
        format!("{} {}", self.codec.label(), self.codec.payload)
    }
}

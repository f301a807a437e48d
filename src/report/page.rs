//! report.html: one self-contained page (inline CSS, script and data; no network, so it works
//! from `file://` and from static pages) with the report's figures behind filters, sortable
//! columns, charts, a pair ratio and a cost calculator. The figures are one JSON model
//! ([`Model`]), also written as report.json for tools, the way criterion's estimates.json is
//! read; the page's script (page/page.js) only draws what the model holds.

use serde::Serialize;

use crate::host::Host;

/// Everything the page shows, computed in Rust from the folders' rows.
#[derive(Clone, Debug, Serialize)]
pub struct Model {
    pub serbench: &'static str,
    pub hosts: Vec<HostModel>,
    pub arms: Vec<ArmModel>,
    pub sizes: Vec<SizeModel>,
    /// Each format's chart colour, `#rrggbb`.
    pub colours: std::collections::BTreeMap<String, String>,
    /// The relative shift a code layout alone makes ([`crate::stats::LAYOUT_SPREAD`]): the page's
    /// pair sentence calls a ratio whose interval lies inside it indistinguishable, as
    /// `serbench ratio` does.
    pub layout_spread: f64,
    /// Student's t 97.5% quantile for 1, 2, ... degrees of freedom ([`crate::stats::t_975`]):
    /// the page's paired intervals use serbench's own.
    pub t975: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostModel {
    pub label: String,
    pub emulated: bool,
    pub profile: String,
    pub started: String,
    /// The first row's host (a folder is one host and build).
    pub host: Host,
}

/// One arm on one host, its time per record with its 95% interval.
#[derive(Clone, Debug, Serialize)]
pub struct ArmModel {
    /// Index into [`Model::hosts`].
    pub host: usize,
    pub label: String,
    pub payload: String,
    pub operation: String,
    pub mode: String,
    pub framing: String,
    pub format: String,
    pub backend: String,
    pub baseline: bool,
    pub status: String,
    pub note: String,
    pub records: usize,
    pub ns_per_record: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub reps: Option<usize>,
    /// Encoded bytes over the time per operation, MB/s (results.csv's mb_per_s).
    pub mb_per_s: Option<f64>,
    pub encoded_bytes: Option<usize>,
    pub allocs_per_op: Option<f64>,
    /// Over the section's fastest arm on its host, the paired interval where the run kept its
    /// workers; `None` for the fastest itself, an emulated host or an arm without figures.
    pub vs_fastest: Option<RatioModel>,
    pub fastest: bool,
    /// Its rank in its payload, operation and mode on its host, ties sharing one
    /// ([`crate::report::rank`]); `None` for a baseline, an emulated host or an arm without
    /// figures. The page shows it as computed here.
    pub rank: Option<RankModel>,
    /// Each worker's time per record, `[pass, ns]` (samples.csv of a full run; empty
    /// without): two arms of one host are paired over the workers that measured both.
    pub workers: Vec<[f64; 2]>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RatioModel {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub paired: bool,
}

/// An arm's rank: its place, whether another arm shares it, and how every table writes it
/// ("=1" shared, "1" alone).
#[derive(Clone, Debug, Serialize)]
pub struct RankModel {
    pub place: usize,
    pub shared: bool,
    pub text: String,
}

impl From<super::rank::Rank> for RankModel {
    fn from(rank: super::rank::Rank) -> RankModel {
        RankModel {
            place: rank.place,
            shared: rank.shared,
            text: rank.to_string(),
        }
    }
}

/// One codec's bytes for one payload (every record of it): encoded, and compressed by zstd and
/// zlib at the levels sizes.csv names.
#[derive(Clone, Debug, Serialize)]
pub struct SizeModel {
    pub payload: String,
    pub format: String,
    pub backend: String,
    pub label: String,
    pub framing: String,
    pub records: usize,
    pub encoded: Option<usize>,
    pub zstd: Option<usize>,
    pub zlib: Option<usize>,
}

const TEMPLATE: &str = include_str!("page/page.html");
const STYLE: &str = include_str!("page/page.css");
const SCRIPT: &str = include_str!("page/page.js");

/// The page: the template with its style, script and the model inlined. The model is
/// [`crate::escape::script_json`]: no `<` in it, so no string can close the script element or
/// open a comment that swallows the page's own script.
pub fn html(model: &Model) -> String {
    let data = crate::escape::script_json(&json(model));
    TEMPLATE
        .replace("/*STYLE*/", STYLE)
        .replace("/*SCRIPT*/", SCRIPT)
        .replace("/*DATA*/", &data)
}

/// report.json: the model, pretty-printed.
pub fn json(model: &Model) -> String {
    serde_json::to_string_pretty(model).expect("the model serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_the_script_and_the_page_needs_no_network() {
        let model = Model {
            serbench: "test",
            hosts: Vec::new(),
            arms: Vec::new(),
            sizes: vec![SizeModel {
                payload: "data:</script><script>alert(1)</script><!--<script>".into(),
                format: "f".into(),
                backend: "b".into(),
                label: "f/b".into(),
                framing: "document".into(),
                records: 1,
                encoded: Some(1),
                zstd: None,
                zlib: None,
            }],
            colours: Default::default(),
            layout_spread: crate::stats::LAYOUT_SPREAD,
            t975: Vec::new(),
        };
        let page = html(&model);
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "the script and the data end once each"
        );
        // `<!--<script>` in a script element would swallow the page's own script.
        assert!(!page.contains("<!--"), "a comment opens in the data");
        // What would fetch: the only URL the page holds is the SVG namespace, an identifier.
        for remote in [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "url(",
            "@import",
            "fetch(",
            "XMLHttpRequest",
        ] {
            assert!(!page.contains(remote), "the page reaches the network: {remote}");
        }
    }
}

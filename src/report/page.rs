//! report.html: one self-contained page (inline CSS, script and data; no network, so it works
//! from `file://` and from static pages) with the report's figures behind filters, sortable
//! columns, charts, a pair ratio and a cost calculator. The figures are one JSON model
//! ([`Analysis`]), also written as report.json for tools, the way criterion's estimates.json is
//! read; the page's script (page/page.js) only draws what the model holds.

use super::analysis::Analysis;

const TEMPLATE: &str = include_str!("page/page.html");
const STYLE: &str = include_str!("page/page.css");
const SCRIPT: &str = include_str!("page/page.js");

/// The page: the template with its style, script and the model inlined. The model is
/// [`crate::escape::script_json`]: no `<` in it, so no string can close the script element or
/// open a comment that swallows the page's own script.
pub fn html(model: &Analysis) -> String {
    let data = crate::escape::script_json(&json(model));
    TEMPLATE
        .replace("/*STYLE*/", STYLE)
        .replace("/*SCRIPT*/", SCRIPT)
        .replace("/*DATA*/", &data)
}

/// report.json: the model, pretty-printed.
pub fn json(model: &Analysis) -> String {
    serde_json::to_string_pretty(model).expect("the model serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analysis::SizeModel;

    #[test]
    fn data_cannot_close_the_script_and_the_page_needs_no_network() {
        let model = Analysis {
            version: crate::report::analysis::VERSION,
            serbench: "test",
            hosts: Vec::new(),
            answers: Vec::new(),
            capabilities: Vec::new(),
            evolution: Vec::new(),
            ranks: Default::default(),
            agreements: Default::default(),
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

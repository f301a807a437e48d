//! `twitter` and `citm_catalog`: two of the public JSON corpora (`data/json-corpora/`) read into
//! Rust types, so a typed decode of real-world data sits beside the dynamic one of the same file
//! (`--data corpus:twitter`). The types follow the files exactly: a field that is null or
//! absent in some records is an `Option` (written back as null), one that is always null is
//! `()`, an object keyed by ids is a `BTreeMap`.
//!
//! Each document is one record, as its `data:` payload is. The documents are read with the data
//! reader (`payload::data::read`), which reads every number exactly, then converted to the
//! types; a test checks each typed value holds its file's data.

mod citm_catalog;
mod twitter;

use std::sync::OnceLock;

pub use citm_catalog::{Area, CitmCatalog, Event, Performance, Price, SeatCategory};
pub use twitter::{
    Hashtag, Media, MediaSize, MediaSizes, Metadata, RetweetedStatus, SearchMetadata, Status, StatusEntities,
    Twitter, Url, User, UserEntities, UserMention, UserUrls,
};

use super::data::{Corpus, read};
use super::{Model, Payload, PayloadSpec, Shape};

pub static TWITTER: Payload<Twitter> = Payload {
    spec: &PayloadSpec {
        name: "twitter",
        description: "twitter.json in Rust types: 100 statuses of Twitter API search results",
        records: 1,
        shape: Shape::Document,
    },
    value: || {
        static VALUE: OnceLock<Twitter> = OnceLock::new();
        VALUE.get_or_init(|| typed("twitter"))
    },
};

pub static CITM_CATALOG: Payload<CitmCatalog> = Payload {
    spec: &PayloadSpec {
        name: "citm_catalog",
        description: "citm_catalog.json in Rust types: an event catalog, maps keyed by ids",
        records: 1,
        shape: Shape::Document,
    },
    value: || {
        static VALUE: OnceLock<CitmCatalog> = OnceLock::new();
        VALUE.get_or_init(|| typed("citm_catalog"))
    },
};

/// The corpus `name` in its Rust type.
fn typed<T: Model>(name: &str) -> T {
    let corpus = Corpus::by_name(name).expect("a shipped corpus");
    let parsed = read::parse(name, &corpus.json(), None).expect("the shipped corpora parse");
    let [document] = <[_; 1]>::try_from(parsed.records).expect("each corpus is one document");
    serde_json::from_value(document).expect("the corpus types describe their files")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{Equivalence, Request, compare};

    /// The typed value holds the file's data: what serde writes of it is the file, with the
    /// fields the file left out written as null.
    fn holds_its_file<T: Model>(payload: &Payload<T>) {
        let written = serde_json::to_value((payload.value)()).unwrap();
        let data = crate::payload::data::load(&Request {
            sources: vec![format!("corpus:{}", payload.spec.name)],
            ..Request::default()
        })
        .unwrap()[0];
        // Every struct denies unknown fields, so no field of the file is dropped unnoticed.
        assert_eq!(
            compare::first_difference(&data.records[0], &written, Equivalence::Schema),
            None,
            "{}",
            payload.spec.name
        );
    }

    #[test]
    fn the_typed_corpora_hold_their_files() {
        holds_its_file(&TWITTER);
        holds_its_file(&CITM_CATALOG);
    }
}

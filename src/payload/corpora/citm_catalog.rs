//! `citm_catalog.json`: an event catalog. Its names are maps from numeric-string ids, which the
//! Rust types keep as `BTreeMap`s (sorted keys, so every format writes the same bytes each run).

use std::collections::BTreeMap;

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct CitmCatalog {
        pub area_names: BTreeMap<String, String>,
        pub audience_sub_category_names: BTreeMap<String, String>,
        /// Empty in this file.
        pub block_names: BTreeMap<String, String>,
        pub events: BTreeMap<String, Event>,
        pub performances: Vec<Performance>,
        pub seat_category_names: BTreeMap<String, String>,
        pub sub_topic_names: BTreeMap<String, String>,
        /// Empty in this file.
        pub subject_names: BTreeMap<String, String>,
        pub topic_names: BTreeMap<String, String>,
        pub topic_sub_topics: BTreeMap<String, Vec<i64>>,
        pub venue_names: BTreeMap<String, String>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct Event {
        /// Always null in this file, as are `subject_code` and `subtitle`.
        pub description: Option<String>,
        pub id: i64,
        pub logo: Option<String>,
        pub name: String,
        pub sub_topic_ids: Vec<i64>,
        pub subject_code: Option<String>,
        pub subtitle: Option<String>,
        pub topic_ids: Vec<i64>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct Performance {
        pub event_id: i64,
        pub id: i64,
        pub logo: Option<String>,
        /// Always null in this file, as is `seat_map_image`.
        pub name: Option<String>,
        pub prices: Vec<Price>,
        pub seat_categories: Vec<SeatCategory>,
        pub seat_map_image: Option<String>,
        pub start: i64,
        pub venue_code: String,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct Price {
        pub amount: i64,
        pub audience_sub_category_id: i64,
        pub seat_category_id: i64,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SeatCategory {
        pub areas: Vec<Area>,
        pub seat_category_id: i64,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct Area {
        pub area_id: i64,
        /// Always empty in this file.
        pub block_ids: Vec<i64>,
    }
}

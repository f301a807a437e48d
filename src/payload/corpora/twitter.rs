//! `twitter.json`: Twitter API search results, 100 statuses with their users and entities. A
//! retweet holds the status it retweets, a [`RetweetedStatus`], which retweets nothing (a
//! retweet of a retweet holds the original): `Status` is generic over what it retweets rather
//! than recursive, which bitcode's derive cannot lay out.

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Twitter {
        pub statuses: Vec<Status<RetweetedStatus>>,
        pub search_metadata: SearchMetadata,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Status<Retweet> {
        pub metadata: Metadata,
        pub created_at: String,
        pub id: i64,
        pub id_str: String,
        pub text: String,
        pub source: String,
        pub truncated: bool,
        pub in_reply_to_status_id: Option<i64>,
        pub in_reply_to_status_id_str: Option<String>,
        pub in_reply_to_user_id: Option<i64>,
        pub in_reply_to_user_id_str: Option<String>,
        pub in_reply_to_screen_name: Option<String>,
        pub user: User,
        /// Always null in this file.
        pub geo: (),
        pub coordinates: (),
        pub place: (),
        pub contributors: (),
        pub retweeted_status: Option<Retweet>,
        pub retweet_count: i64,
        pub favorite_count: i64,
        pub entities: StatusEntities,
        pub favorited: bool,
        pub retweeted: bool,
        pub possibly_sensitive: Option<bool>,
        pub lang: String,
    }
}

/// The status a retweet holds: a status that retweets nothing (`retweeted_status` is `()`,
/// absent in the file and written back as null).
pub type RetweetedStatus = Status<()>;

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Metadata {
        pub result_type: String,
        pub iso_language_code: String,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct User {
        pub id: i64,
        pub id_str: String,
        pub name: String,
        pub screen_name: String,
        pub location: String,
        pub description: String,
        pub url: Option<String>,
        pub entities: UserEntities,
        pub protected: bool,
        pub followers_count: i64,
        pub friends_count: i64,
        pub listed_count: i64,
        pub created_at: String,
        pub favourites_count: i64,
        pub utc_offset: Option<i64>,
        pub time_zone: Option<String>,
        pub geo_enabled: bool,
        pub verified: bool,
        pub statuses_count: i64,
        pub lang: String,
        pub contributors_enabled: bool,
        pub is_translator: bool,
        pub is_translation_enabled: bool,
        pub profile_background_color: String,
        pub profile_background_image_url: String,
        pub profile_background_image_url_https: String,
        pub profile_background_tile: bool,
        pub profile_image_url: String,
        pub profile_image_url_https: String,
        pub profile_banner_url: Option<String>,
        pub profile_link_color: String,
        pub profile_sidebar_border_color: String,
        pub profile_sidebar_fill_color: String,
        pub profile_text_color: String,
        pub profile_use_background_image: bool,
        pub default_profile: bool,
        pub default_profile_image: bool,
        pub following: bool,
        pub follow_request_sent: bool,
        pub notifications: bool,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct UserEntities {
        pub url: Option<UserUrls>,
        pub description: UserUrls,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct UserUrls {
        pub urls: Vec<Url>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Url {
        pub url: String,
        pub expanded_url: String,
        pub display_url: String,
        pub indices: Vec<i64>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct StatusEntities {
        pub hashtags: Vec<Hashtag>,
        /// Always empty in this file; the API writes cashtags in the shape of hashtags.
        pub symbols: Vec<Hashtag>,
        pub urls: Vec<Url>,
        pub user_mentions: Vec<UserMention>,
        pub media: Option<Vec<Media>>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Hashtag {
        pub text: String,
        pub indices: Vec<i64>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct UserMention {
        pub screen_name: String,
        pub name: String,
        pub id: i64,
        pub id_str: String,
        pub indices: Vec<i64>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct Media {
        pub id: i64,
        pub id_str: String,
        pub indices: Vec<i64>,
        pub media_url: String,
        pub media_url_https: String,
        pub url: String,
        pub display_url: String,
        pub expanded_url: String,
        #[serde(rename = "type")]
        pub kind: String,
        pub sizes: MediaSizes,
        pub source_status_id: Option<i64>,
        pub source_status_id_str: Option<String>,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct MediaSizes {
        pub medium: MediaSize,
        pub small: MediaSize,
        pub thumb: MediaSize,
        pub large: MediaSize,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct MediaSize {
        pub w: i64,
        pub h: i64,
        pub resize: String,
    }
}

corpus_model! {
    #[serde(deny_unknown_fields)]
    pub struct SearchMetadata {
        pub completed_in: f64,
        pub max_id: i64,
        pub max_id_str: String,
        pub next_results: String,
        pub query: String,
        pub refresh_url: String,
        pub count: i64,
        pub since_id: i64,
        pub since_id_str: String,
    }
}

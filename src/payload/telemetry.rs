//! `telemetry`: one telemetry event, as an observability agent ships it: service metadata,
//! tags, 4 attributes and 128 metric samples of one metric. A sample is all scalars, so the
//! FlatBuffers struct-vector variant can carry exactly the same data.

use super::{Borrowed, Payload, PayloadSpec, Shape, SplitMix64, attributes};
use std::collections::BTreeMap;
use std::sync::OnceLock;

owned_model! {
    pub struct TelemetryEvent {
        #[cfg_attr(feature = "cbor", n(0))]
        pub event_id: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub timestamp_ms: i64,
        #[cfg_attr(feature = "cbor", n(2))]
        pub service: ServiceInfo,
        #[cfg_attr(feature = "cbor", n(3))]
        pub metric: String,
        #[cfg_attr(feature = "cbor", n(4))]
        pub unit: String,
        #[cfg_attr(feature = "cbor", n(5))]
        pub tags: Vec<String>,
        #[cfg_attr(feature = "cbor", n(6))]
        pub attributes: BTreeMap<String, String>,
        #[cfg_attr(feature = "cbor", n(7))]
        pub samples: Vec<MetricSample>,
    }
}

owned_model! {
    pub struct ServiceInfo {
        #[cfg_attr(feature = "cbor", n(0))]
        pub name: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub version: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub instance_id: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub region: String,
    }
}

owned_model! {
    pub struct MetricSample {
        #[cfg_attr(feature = "cbor", n(0))]
        pub timestamp_ms: i64,
        #[cfg_attr(feature = "cbor", n(1))]
        pub value: f64,
        #[cfg_attr(feature = "cbor", n(2))]
        pub count: i64,
    }
}

borrowed_model! {
    /// [`TelemetryEvent`] with its strings borrowed from the decoded input (the borrowed mode).
    pub struct TelemetryEventRef<'a> {
        #[cfg_attr(feature = "cbor", b(0))]
        pub event_id: &'a str,
        #[cfg_attr(feature = "cbor", n(1))]
        pub timestamp_ms: i64,
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(2))]
        pub service: ServiceInfoRef<'a>,
        #[cfg_attr(feature = "cbor", b(3))]
        pub metric: &'a str,
        #[cfg_attr(feature = "cbor", b(4))]
        pub unit: &'a str,
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(5))]
        pub tags: Vec<&'a str>,
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(6))]
        pub attributes: BTreeMap<&'a str, &'a str>,
        #[cfg_attr(feature = "cbor", n(7))]
        pub samples: Vec<MetricSample>,
    }
}

borrowed_model! {
    /// [`ServiceInfo`] borrowed from the decoded input.
    pub struct ServiceInfoRef<'a> {
        #[cfg_attr(feature = "cbor", b(0))]
        pub name: &'a str,
        #[cfg_attr(feature = "cbor", b(1))]
        pub version: &'a str,
        #[cfg_attr(feature = "cbor", b(2))]
        pub instance_id: &'a str,
        #[cfg_attr(feature = "cbor", b(3))]
        pub region: &'a str,
    }
}

impl Borrowed for TelemetryEvent {
    type Ref<'a> = TelemetryEventRef<'a>;

    fn to_owned_model(event: &TelemetryEventRef<'_>) -> TelemetryEvent {
        let service = &event.service;
        TelemetryEvent {
            event_id: event.event_id.to_string(),
            timestamp_ms: event.timestamp_ms,
            service: ServiceInfo {
                name: service.name.to_string(),
                version: service.version.to_string(),
                instance_id: service.instance_id.to_string(),
                region: service.region.to_string(),
            },
            metric: event.metric.to_string(),
            unit: event.unit.to_string(),
            tags: event.tags.iter().map(|tag| tag.to_string()).collect(),
            attributes: event
                .attributes
                .iter()
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect(),
            samples: event.samples.clone(),
        }
    }

    fn strings<'s>(event: &'s TelemetryEventRef<'_>) -> Vec<&'s str> {
        let service = &event.service;
        let mut strings = vec![
            event.event_id,
            service.name,
            service.version,
            service.instance_id,
            service.region,
            event.metric,
            event.unit,
        ];
        strings.extend(event.tags.iter().copied());
        strings.extend(event.attributes.iter().flat_map(|(key, value)| [*key, *value]));
        strings
    }
}

pub static TELEMETRY: Payload<TelemetryEvent> = Payload {
    spec: &PayloadSpec {
        name: "telemetry",
        description: "telemetry event: service metadata, tags, 4 attributes, 128 samples",
        records: 1,
        shape: Shape::Document,
    },
    value: || {
        static VALUE: OnceLock<TelemetryEvent> = OnceLock::new();
        VALUE.get_or_init(generate)
    },
};

fn generate() -> TelemetryEvent {
    let mut rng = SplitMix64::new(0x5EED_0003);
    let start = 1_767_225_600_000 + rng.range(0, 86_400_000);
    TelemetryEvent {
        event_id: rng.word_id("evt"),
        timestamp_ms: start,
        service: ServiceInfo {
            name: "checkout".to_string(),
            version: format!("1.{}.{}", rng.range(0, 20), rng.range(0, 10)),
            instance_id: rng.word_id("i"),
            region: rng.pick(&["eu-west-1", "us-east-2", "ap-south-1"]).to_string(),
        },
        metric: "http.server.request.duration".to_string(),
        unit: "ms".to_string(),
        tags: (0..5).map(|_| rng.word().to_string()).collect(),
        attributes: attributes(&mut rng),
        samples: (0..128)
            .map(|index| MetricSample {
                timestamp_ms: start + index * 1000,
                value: rng.decimal(0, 900),
                count: rng.range(0, 5000),
            })
            .collect(),
    }
}

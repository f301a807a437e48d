//! `telemetry`: one telemetry event, as an observability agent ships it: service metadata,
//! tags, 4 attributes and 128 metric samples of one metric. A sample is all scalars, so the
//! FlatBuffers struct-vector variant can carry exactly the same data.

use super::{Payload, PayloadSpec, Shape, SplitMix64, attributes};
use std::collections::BTreeMap;
use std::sync::OnceLock;

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
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

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct MetricSample {
    #[cfg_attr(feature = "cbor", n(0))]
    pub timestamp_ms: i64,
    #[cfg_attr(feature = "cbor", n(1))]
    pub value: f64,
    #[cfg_attr(feature = "cbor", n(2))]
    pub count: i64,
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

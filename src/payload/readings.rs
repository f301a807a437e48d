//! `readings`: a batch of 50 sensor readings, each a bool, a float and a short list of labels.
//! The JSON framings (document, array, NDJSON) are defined over its records.

use super::{Batch, Payload, PayloadSpec, Shape, SplitMix64};
use std::sync::OnceLock;

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Reading {
    #[cfg_attr(feature = "cbor", n(0))]
    pub valid: bool,
    #[cfg_attr(feature = "cbor", n(1))]
    pub value: f64,
    #[cfg_attr(feature = "cbor", n(2))]
    pub labels: Vec<String>,
}

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Readings {
    #[cfg_attr(feature = "cbor", n(0))]
    pub readings: Vec<Reading>,
}

impl Batch for Readings {
    type Record = Reading;

    fn records(&self) -> &[Reading] {
        &self.readings
    }

    fn from_records(readings: Vec<Reading>) -> Self {
        Readings { readings }
    }
}

pub static READINGS: Payload<Readings> = Payload {
    spec: &PayloadSpec {
        name: "readings",
        description: "50 readings: bool, float, 1-4 string labels each",
        records: 50,
        shape: Shape::Batch { flat: false },
    },
    value: || {
        static VALUE: OnceLock<Readings> = OnceLock::new();
        VALUE.get_or_init(|| generate(50))
    },
};

fn generate(count: usize) -> Readings {
    let mut rng = SplitMix64::new(0x5EED_0001);
    let readings = (0..count)
        .map(|_| Reading {
            valid: rng.chance(90),
            value: rng.decimal(-40, 120),
            labels: (0..rng.range(1, 5)).map(|_| rng.word().to_string()).collect(),
        })
        .collect();
    Readings { readings }
}

//! `readings`: a batch of 50 sensor readings, each a bool, a float and a short list of labels.
//! The JSON framings (document, array, NDJSON) are defined over its records.

use super::{Batch, Borrowed, Payload, PayloadSpec, Shape, SplitMix64};
use std::sync::OnceLock;

owned_model! {
    pub struct Reading {
        #[cfg_attr(feature = "cbor", n(0))]
        pub valid: bool,
        #[cfg_attr(feature = "cbor", n(1))]
        pub value: f64,
        #[cfg_attr(feature = "cbor", n(2))]
        pub labels: Vec<String>,
    }
}

owned_model! {
    pub struct Readings {
        #[cfg_attr(feature = "cbor", n(0))]
        pub readings: Vec<Reading>,
    }
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

borrowed_model! {
    /// [`Reading`] with its labels borrowed from the decoded input (the borrowed mode).
    pub struct ReadingRef<'a> {
        #[cfg_attr(feature = "cbor", n(0))]
        pub valid: bool,
        #[cfg_attr(feature = "cbor", n(1))]
        pub value: f64,
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(2))]
        pub labels: Vec<&'a str>,
    }
}

borrowed_model! {
    /// [`Readings`] borrowed from the decoded input.
    pub struct ReadingsRef<'a> {
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(0))]
        pub readings: Vec<ReadingRef<'a>>,
    }
}

impl Borrowed for Readings {
    type Ref<'a> = ReadingsRef<'a>;

    fn to_owned_model(readings: &ReadingsRef<'_>) -> Readings {
        let readings = readings
            .readings
            .iter()
            .map(|reading| Reading {
                valid: reading.valid,
                value: reading.value,
                labels: reading.labels.iter().map(|label| label.to_string()).collect(),
            })
            .collect();
        Readings { readings }
    }

    fn strings<'s>(readings: &'s ReadingsRef<'_>) -> Vec<&'s str> {
        readings
            .readings
            .iter()
            .flat_map(|reading| reading.labels.iter().copied())
            .collect()
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

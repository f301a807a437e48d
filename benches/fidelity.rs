//! `cargo bench --bench fidelity`: independent, minimal criterion benchmarks of one arm per
//! format, written straight against each library (the payload data is the only thing taken
//! from serbench, and it is built before timing). `serbench fidelity` pairs criterion's means
//! with serbench's for the same arms, to show the harness measures what a plain benchmark
//! would. Each benchmark id is `format/backend[variant]/payload/operation` as in results.csv.

use std::hint::black_box;

use criterion::Criterion;
use serbench::payload::{Items, Order, TelemetryEvent, logical_json};

fn payload<T: serde::de::DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&logical_json(name).expect("a built-in payload")).expect("its logical JSON")
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let order: Order = payload("order");
    let telemetry: TelemetryEvent = payload("telemetry");
    let items: Items = payload("vec-small");

    let json = serde_json::to_vec(&order).unwrap();
    criterion.bench_function("json/serde_json/order/decode", |b| {
        b.iter(|| serde_json::from_slice::<Order>(black_box(&json)).unwrap())
    });
    let mut scratch = Vec::new();
    let mut buffers = simd_json::Buffers::default();
    criterion.bench_function("json/simd-json/order/decode", |b| {
        b.iter(|| {
            scratch.clear();
            scratch.extend_from_slice(black_box(&json));
            simd_json::serde::from_slice_with_buffers::<Order>(&mut scratch, &mut buffers).unwrap()
        })
    });
    let mut out = Vec::new();
    criterion.bench_function("json/serde_json/telemetry/encode", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&telemetry)).unwrap();
        })
    });

    let config = bincode::config::standard();
    let bincode_bytes = bincode::encode_to_vec(&telemetry, config).unwrap();
    criterion.bench_function("bincode/bincode/telemetry/decode", |b| {
        b.iter(|| bincode::decode_from_slice::<TelemetryEvent, _>(black_box(&bincode_bytes), config).unwrap())
    });

    let mut bitcode_buffer = bitcode::Buffer::new();
    let bitcode_bytes = bitcode::encode(&items);
    criterion.bench_function("bitcode/bitcode[native]/vec-small/decode", |b| {
        b.iter(|| bitcode_buffer.decode::<Items>(black_box(&bitcode_bytes)).unwrap())
    });

    let postcard_bytes = postcard::to_allocvec(&order).unwrap();
    criterion.bench_function("postcard/postcard/order/decode", |b| {
        b.iter(|| postcard::from_bytes::<Order>(black_box(&postcard_bytes)).unwrap())
    });

    let bson_bytes = bson::serialize_to_vec(&order).unwrap();
    criterion.bench_function("bson/bson/order/decode", |b| {
        b.iter(|| bson::deserialize_from_slice::<Order>(black_box(&bson_bytes)).unwrap())
    });

    let context = zbus::wire::serialized::Context::new(zbus::wire::LE, 0);
    let dbus_bytes = zbus::wire::to_bytes(context, &order).unwrap().to_vec();
    criterion.bench_function("dbus/zbus/order/decode", |b| {
        b.iter(|| {
            let data = zbus::wire::serialized::Data::new(black_box(&dbus_bytes[..]), context);
            data.deserialize::<Order>().unwrap().0
        })
    });

    let mut csv_writer = csv::Writer::from_writer(Vec::new());
    for item in &items.items {
        csv_writer.serialize(item).unwrap();
    }
    let csv_bytes = csv_writer.into_inner().unwrap();
    criterion.bench_function("csv/csv/vec-small/decode", |b| {
        b.iter(|| {
            let records: Vec<serbench::payload::Item> = csv::Reader::from_reader(black_box(&csv_bytes[..]))
                .deserialize()
                .collect::<Result<_, _>>()
                .unwrap();
            Items { items: records }
        })
    });

    criterion.final_summary();
}

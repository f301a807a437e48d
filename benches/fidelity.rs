//! `cargo bench --bench fidelity`: independent, minimal criterion benchmarks of one arm per
//! format, written straight against each library (the payload data is the only thing taken
//! from serbench, and it is built before timing). `serbench fidelity` pairs criterion's means
//! with serbench's for the same arms, to show the harness measures what a plain benchmark
//! would. Each benchmark id is `format/backend[variant]/payload/operation` as in results.csv.
//!
//! Each case is one closure, called through `&mut dyn FnMut()` both by criterion and, when
//! `SERBENCH_FIDELITY_COUNT=<id>` is set, by [`fidelity_counted_region`] under callgrind
//! (`serbench fidelity --bench-binary`): the two run the same machine code, so the instruction
//! count belongs to the code criterion timed. The dynamic call costs criterion about a
//! nanosecond per iteration; serbench pays one dynamic call per batch.

use std::hint::black_box;

use criterion::Criterion;
use serbench::format::flatbuffers::generated::serbench as fb;
use serbench::instructions::ITERATIONS;
use serbench::payload::{Item, Items, Order, TelemetryEvent, logical_json};

fn payload<T: serde::de::DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&logical_json(name).expect("a built-in payload")).expect("its logical JSON")
}

type Case = (&'static str, Box<dyn FnMut()>);

/// The one function callgrind collects in when counting a case.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn fidelity_counted_region(case: &mut dyn FnMut(), iterations: u64) {
    for _ in 0..iterations {
        case();
    }
}

fn main() {
    let mut cases = cases();
    if let Ok(id) = std::env::var("SERBENCH_FIDELITY_COUNT") {
        let (_, case) = cases
            .iter_mut()
            .find(|(name, _)| *name == id)
            .unwrap_or_else(|| panic!("no fidelity case {id}"));
        fidelity_counted_region(case.as_mut(), 1);
        fidelity_counted_region(case.as_mut(), ITERATIONS);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    for (id, case) in &mut cases {
        criterion.bench_function(id, |b| b.iter(case.as_mut()));
    }
    criterion.final_summary();
}

fn cases() -> Vec<Case> {
    let order: Order = payload("order");
    let telemetry: TelemetryEvent = payload("telemetry");
    let items: Items = payload("vec-small");
    let mut cases: Vec<Case> = Vec::new();

    let json = serde_json::to_vec(&order).unwrap();
    let serde_json_bytes = json.clone();
    cases.push((
        "json/serde_json/order/decode",
        Box::new(move || {
            black_box(serde_json::from_slice::<Order>(black_box(&serde_json_bytes)).unwrap());
        }),
    ));
    let (mut scratch, mut buffers) = (Vec::new(), simd_json::Buffers::default());
    cases.push((
        "json/simd-json/order/decode",
        Box::new(move || {
            scratch.clear();
            scratch.extend_from_slice(black_box(&json));
            black_box(
                simd_json::serde::from_slice_with_buffers::<Order>(&mut scratch, &mut buffers).unwrap(),
            );
        }),
    ));
    let (mut out, event) = (Vec::new(), telemetry.clone());
    cases.push((
        "json/serde_json/telemetry/encode",
        Box::new(move || {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&event)).unwrap();
            black_box(&out);
        }),
    ));

    let config = bincode::config::standard();
    let bincode_bytes = bincode::encode_to_vec(&telemetry, config).unwrap();
    cases.push((
        "bincode/bincode/telemetry/decode",
        Box::new(move || {
            black_box(
                bincode::decode_from_slice::<TelemetryEvent, _>(black_box(&bincode_bytes), config).unwrap(),
            );
        }),
    ));

    let (mut bitcode_buffer, bitcode_bytes) = (bitcode::Buffer::new(), bitcode::encode(&items));
    cases.push((
        "bitcode/bitcode[native]/vec-small/decode",
        Box::new(move || {
            black_box(bitcode_buffer.decode::<Items>(black_box(&bitcode_bytes)).unwrap());
        }),
    ));

    let postcard_bytes = postcard::to_allocvec(&order).unwrap();
    cases.push((
        "postcard/postcard/order/decode",
        Box::new(move || {
            black_box(postcard::from_bytes::<Order>(black_box(&postcard_bytes)).unwrap());
        }),
    ));

    let bson_bytes = bson::serialize_to_vec(&order).unwrap();
    cases.push((
        "bson/bson/order/decode",
        Box::new(move || {
            black_box(bson::deserialize_from_slice::<Order>(black_box(&bson_bytes)).unwrap());
        }),
    ));

    let context = zbus::wire::serialized::Context::new(zbus::wire::LE, 0);
    let dbus_bytes = zbus::wire::to_bytes(context, &order).unwrap().to_vec();
    cases.push((
        "dbus/zbus/order/decode",
        Box::new(move || {
            let data = zbus::wire::serialized::Data::new(black_box(&dbus_bytes[..]), context);
            black_box(data.deserialize::<Order>().unwrap().0);
        }),
    ));

    let mut csv_writer = csv::Writer::from_writer(Vec::new());
    for item in &items.items {
        csv_writer.serialize(item).unwrap();
    }
    let csv_bytes = csv_writer.into_inner().unwrap();
    cases.push((
        "csv/csv/vec-small/decode",
        Box::new(move || {
            let records: Vec<Item> = csv::Reader::from_reader(black_box(&csv_bytes[..]))
                .deserialize()
                .collect::<Result<_, _>>()
                .unwrap();
            black_box(Items { items: records });
        }),
    ));

    // The schema formats: each library's own types and entry points, set up as its docs say.
    let message = serbench::format::protobuf::Native::to_message(&order);
    let protobuf_bytes = prost::Message::encode_to_vec(&message);
    cases.push((
        "protobuf/prost/order/decode",
        Box::new(move || {
            type Message = serbench::format::protobuf::proto::Order;
            black_box(<Message as prost::Message>::decode(black_box(&protobuf_bytes[..])).unwrap());
        }),
    ));

    let mut fory = fory::Fory::builder()
        .xlang(true)
        .compatible(false)
        .check_struct_version(true)
        .build();
    fory.register::<Order>(3).unwrap();
    let fory_bytes = fory.serialize(&order).unwrap();
    cases.push((
        "fory/fory[xlang]/order/decode",
        Box::new(move || {
            black_box(fory.deserialize::<Order>(black_box(&fory_bytes)).unwrap());
        }),
    ));

    let avro_schema: serde_avro_fast::Schema = include_str!("../schemas/avro/order.avsc").parse().unwrap();
    let avro_bytes = serde_avro_fast::to_datum_vec(
        &order,
        &mut serde_avro_fast::ser::SerializerConfig::new(&avro_schema),
    )
    .unwrap();
    cases.push((
        "avro/serde_avro_fast/order/decode",
        Box::new(move || {
            black_box(
                serde_avro_fast::from_datum_slice::<Order>(black_box(&avro_bytes), &avro_schema).unwrap(),
            );
        }),
    ));

    // FlatBuffers reads in place: verify the buffer (the default verifier), read two fields.
    let flatbuffers_bytes = flatbuffers_order(&order);
    cases.push((
        "flatbuffers/flatbuffers/order/access-partial",
        Box::new(move || {
            let order = flatbuffers::root::<fb::Order>(black_box(&flatbuffers_bytes)).unwrap();
            black_box((order.order_id(), order.customer_id()));
        }),
    ));
    cases
}

fn flatbuffers_order(order: &Order) -> Vec<u8> {
    let mut builder = flatbuffers::FlatBufferBuilder::new();
    let strings = [
        &order.currency,
        &order.sku,
        &order.customer_email,
        &order.shipping_country,
        &order.status,
    ]
    .map(|text| builder.create_string(text));
    let table = fb::Order::create(
        &mut builder,
        &fb::OrderArgs {
            order_id: order.order_id,
            customer_id: order.customer_id,
            created_at_ms: order.created_at_ms,
            quantity: order.quantity,
            unit_price: order.unit_price,
            discount: order.discount,
            tax_rate: order.tax_rate,
            total: order.total,
            currency: Some(strings[0]),
            sku: Some(strings[1]),
            customer_email: Some(strings[2]),
            shipping_country: Some(strings[3]),
            status: Some(strings[4]),
            is_gift: order.is_gift,
            is_priority: order.is_priority,
        },
    );
    builder.finish_minimal(table);
    builder.finished_data().to_vec()
}

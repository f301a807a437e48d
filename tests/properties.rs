//! Property tests: random values of every payload model type round-trip through every codec of
//! the registry (`Encoder::round_trip`), and random bytes never take the harness down.
//!
//! The values are meant to be hostile to text and schema formats alike: strings with unicode,
//! NUL, quotes, separators and newlines (and empty), i64 extremes, f64 edge cases (-0.0,
//! subnormals, the largest and smallest finite values, 17-significant-digit decimals), empty
//! and non-empty lists and maps. NaN is left out (NaN != NaN, so no round trip can be equal);
//! infinities too (JSON has no spelling for them).
//!
//! A codec that cannot carry some values fails here, and that is a finding, not a reason to
//! weaken the strategies: every such codec is in [`KNOWN`] with the reason and a predicate that
//! recognises exactly the values it cannot carry, so any other failure still fails the test,
//! and a test checks each entry still fails on its minimal example (so the list cannot rot).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use serbench::arm::CodecId;
use serbench::format::Registry;
use serbench::payload::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Order,
    OrderStatus, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment,
    TelemetryEvent,
};
use serbench::robustness::{self, Outcome, RobustnessOptions};

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

/// Few cases per type: every case runs through every codec (dozens), in a debug build.
fn config() -> Config {
    Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies

/// Characters a parser or a schema format is most likely to trip on, mixed with any char.
fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => any::<char>(),
        2 => prop::sample::select(vec![
            '\0', '"', '\'', '\\', ',', ';', '\n', '\r', '\t', ' ', '{', '}', '[', ']', ':', '#', '=',
            '\u{7f}', '\u{80}', '\u{a0}', '\u{fffd}', '\u{feff}', '\u{10ffff}', 'é', 'ß', '中', '😀',
        ]),
        3 => prop::char::range('a', 'z'),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..10).prop_map(String::from_iter)
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        2 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX]),
        2 => -1000i64..1000,
    ]
}

/// Finite f64 values only (see the module doc), edge cases weighted up.
fn float() -> impl Strategy<Value = f64> {
    use prop::num::f64 as f;
    prop_oneof![
        3 => f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
        1 => prop::sample::select(vec![
            0.0, -0.0, f64::MIN, f64::MAX, f64::MIN_POSITIVE, -f64::MIN_POSITIVE, 5e-324, -5e-324,
            0.1, 1.0 / 3.0, 1e300, -1e-300, 9007199254740993.0, 123456789.12345678,
        ]),
        2 => (-1_000_000i64..1_000_000).prop_map(|cents| cents as f64 / 100.0),
    ]
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(string(), 0..4)
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(string(), string(), 0..4)
}

fn order() -> impl Strategy<Value = Order> {
    (
        (int(), int(), int(), int()),
        (float(), float(), float(), float()),
        (string(), string(), string(), string(), string()),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(|(ints, floats, texts, flags)| Order {
            order_id: ints.0,
            customer_id: ints.1,
            created_at_ms: ints.2,
            quantity: ints.3,
            unit_price: floats.0,
            discount: floats.1,
            tax_rate: floats.2,
            total: floats.3,
            currency: texts.0,
            sku: texts.1,
            customer_email: texts.2,
            shipping_country: texts.3,
            status: texts.4,
            is_gift: flags.0,
            is_priority: flags.1,
        })
}

fn readings() -> impl Strategy<Value = Readings> {
    let reading = (any::<bool>(), float(), strings()).prop_map(|(valid, value, labels)| Reading {
        valid,
        value,
        labels,
    });
    prop::collection::vec(reading, 0..4).prop_map(|readings| Readings { readings })
}

fn telemetry() -> impl Strategy<Value = TelemetryEvent> {
    let service =
        (string(), string(), string(), string()).prop_map(|(name, version, instance_id, region)| {
            ServiceInfo {
                name,
                version,
                instance_id,
                region,
            }
        });
    let sample = (int(), float(), int()).prop_map(|(timestamp_ms, value, count)| MetricSample {
        timestamp_ms,
        value,
        count,
    });
    (
        (string(), int(), service, string(), string()),
        (strings(), string_map(), prop::collection::vec(sample, 0..4)),
    )
        .prop_map(
            |((event_id, timestamp_ms, service, metric, unit), (tags, attributes, samples))| TelemetryEvent {
                event_id,
                timestamp_ms,
                service,
                metric,
                unit,
                tags,
                attributes,
                samples,
            },
        )
}

fn checkout_request() -> impl Strategy<Value = CheckoutRequest> {
    let meta =
        (string(), string(), string(), int()).prop_map(|(request_id, trace_id, client, timestamp_ms)| {
            RequestMeta {
                request_id,
                trace_id,
                client,
                timestamp_ms,
            }
        });
    let item =
        (string(), string(), int(), int()).prop_map(|(product_id, name, quantity, unit_price_cents)| {
            LineItem {
                product_id,
                name,
                quantity,
                unit_price_cents,
            }
        });
    let address = (string(), string(), string(), string(), string()).prop_map(
        |(street, city, region, postal_code, country)| Address {
            street,
            city,
            region,
            postal_code,
            country,
        },
    );
    let payment = (string(), string(), string(), int(), int()).prop_map(
        |(kind, token, card_last4, expiry_month, expiry_year)| PaymentMethod {
            kind,
            token,
            card_last4,
            expiry_month,
            expiry_year,
        },
    );
    (
        (meta, string(), string(), string()),
        (
            prop::collection::vec(item, 0..4),
            address,
            payment,
            strings(),
            string_map(),
        ),
    )
        .prop_map(
            |(
                (meta, customer_id, session_id, currency),
                (items, shipping_address, payment, coupon_codes, attributes),
            )| CheckoutRequest {
                meta,
                customer_id,
                session_id,
                currency,
                items,
                shipping_address,
                payment,
                coupon_codes,
                attributes,
            },
        )
}

fn checkout_response() -> impl Strategy<Value = CheckoutResponse> {
    let meta =
        (string(), string(), string(), int()).prop_map(|(request_id, trace_id, server, timestamp_ms)| {
            ResponseMeta {
                request_id,
                trace_id,
                server,
                timestamp_ms,
            }
        });
    let status = prop::sample::select(vec![
        OrderStatus::Pending,
        OrderStatus::Confirmed,
        OrderStatus::Shipped,
        OrderStatus::Cancelled,
    ]);
    let shipment = (string(), string(), string(), int(), strings()).prop_map(
        |(shipment_id, carrier, tracking_number, estimated_delivery_ms, product_ids)| Shipment {
            shipment_id,
            carrier,
            tracking_number,
            estimated_delivery_ms,
            product_ids,
        },
    );
    (
        (meta, string(), status),
        (int(), int(), int(), int(), int()),
        (prop::collection::vec(shipment, 0..3), string_map()),
    )
        .prop_map(
            |((meta, order_id, status), amounts, (shipments, attributes))| CheckoutResponse {
                meta,
                order_id,
                status,
                subtotal_cents: amounts.0,
                discount_cents: amounts.1,
                tax_cents: amounts.2,
                shipping_cents: amounts.3,
                total_cents: amounts.4,
                shipments,
                attributes,
            },
        )
}

fn item() -> impl Strategy<Value = Item> {
    (int(), string(), string(), float(), int(), any::<bool>()).prop_map(
        |(id, name, category, price, stock, active)| Item {
            id,
            name,
            category,
            price,
            stock,
            active,
        },
    )
}

fn items() -> impl Strategy<Value = Items> {
    prop::collection::vec(item(), 0..5).prop_map(|items| Items { items })
}

fn keyed() -> impl Strategy<Value = Keyed> {
    prop::collection::btree_map(string(), item(), 0..5).prop_map(|entries| Keyed { entries })
}

// ---------------------------------------------------------------------------------------------
// Known limits: codecs that cannot carry some values, each with the predicate that says which.

/// A codec that cannot round-trip some values of the model, and why.
struct Known {
    format: &'static str,
    /// `None`: every backend of the format.
    backend: Option<&'static str>,
    reason: &'static str,
    /// Whether `value` (as its serde_json tree) holds something this codec cannot carry.
    applies: fn(&serde_json::Value) -> bool,
    /// The smallest value that shows it.
    example: fn() -> Example,
}

/// A value of some model type, with its serde_json tree for [`Known::applies`].
struct Example {
    value: Box<dyn Any>,
    tree: serde_json::Value,
}

fn example<T: Any + serde::Serialize>(value: T) -> Example {
    let tree = serde_json::to_value(&value).expect("model types serialize to JSON");
    Example {
        value: Box::new(value),
        tree,
    }
}

const KNOWN: &[Known] = &[
    Known {
        format: "dbus",
        backend: None,
        reason: "D-Bus strings may not contain NUL (the spec forbids it; zbus refuses to encode one)",
        applies: |value| any_string(value, &|text| text.contains('\0')),
        example: || {
            example(Order {
                sku: "\0".into(),
                ..base_order()
            })
        },
    },
    Known {
        format: "bson",
        backend: None,
        reason: "BSON keys are C strings: a map key with NUL cannot be written",
        applies: |value| any_key(value, &|key| key.contains('\0')),
        example: || {
            example(Keyed {
                entries: BTreeMap::from([("\0".to_string(), base_item())]),
            })
        },
    },
    Known {
        format: "flexbuffers",
        backend: None,
        reason: "FlexBuffers keys are C strings: a map key with NUL is cut short (and a panic in a debug build)",
        applies: |value| any_key(value, &|key| key.contains('\0')),
        example: || {
            example(Keyed {
                entries: BTreeMap::from([("a\0b".to_string(), base_item())]),
            })
        },
    },
];

fn base_order() -> Order {
    Order {
        order_id: 1,
        customer_id: 2,
        created_at_ms: 3,
        quantity: 4,
        unit_price: 1.5,
        discount: 0.0,
        tax_rate: 0.25,
        total: 6.0,
        currency: "EUR".into(),
        sku: "sku".into(),
        customer_email: "a@b".into(),
        shipping_country: "PT".into(),
        status: "ok".into(),
        is_gift: false,
        is_priority: true,
    }
}

fn base_item() -> Item {
    Item {
        id: 1,
        name: "n".into(),
        category: "c".into(),
        price: 1.5,
        stock: 2,
        active: true,
    }
}

fn any_string(value: &serde_json::Value, test: &dyn Fn(&str) -> bool) -> bool {
    match value {
        serde_json::Value::String(text) => test(text),
        serde_json::Value::Array(values) => values.iter().any(|value| any_string(value, test)),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(key, value)| test(key) || any_string(value, test)),
        _ => false,
    }
}

fn any_key(value: &serde_json::Value, test: &dyn Fn(&str) -> bool) -> bool {
    match value {
        serde_json::Value::Array(values) => values.iter().any(|value| any_key(value, test)),
        serde_json::Value::Object(map) => map.iter().any(|(key, value)| test(key) || any_key(value, test)),
        _ => false,
    }
}

fn known(id: &CodecId, tree: &serde_json::Value) -> Option<&'static Known> {
    KNOWN.iter().find(|known| {
        known.format == id.format
            && known.backend.is_none_or(|backend| backend == id.backend)
            && (known.applies)(tree)
    })
}

fn codec_name(id: &CodecId) -> String {
    format!("{} {}", id.label(), id.payload)
}

/// Round-trips `value` through every codec of its type; fails on any failure not in [`KNOWN`].
fn round_trips_everywhere<T: Any + Debug + serde::Serialize>(value: &T) -> Result<(), TestCaseError> {
    let tree = serde_json::to_value(value).expect("model types serialize to JSON");
    let mut codecs = 0;
    let mut unexpected = Vec::new();
    for encoder in &registry().encoders {
        let Some(result) = encoder.round_trip(value as &dyn Any) else {
            continue;
        };
        codecs += 1;
        if let Err(error) = result
            && known(&encoder.id, &tree).is_none()
        {
            unexpected.push(format!("{}: {error:#}", codec_name(&encoder.id)));
        }
    }
    // Every format can be disabled; with some enabled, something must carry every model type.
    let any_format = !registry().encoders.is_empty();
    prop_assert!(
        codecs > 0 || !any_format,
        "no codec carries {}",
        std::any::type_name::<T>()
    );
    prop_assert!(unexpected.is_empty(), "{value:?}\n{}", unexpected.join("\n"));
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn orders_round_trip(value in order()) { round_trips_everywhere(&value)?; }

    #[test]
    fn readings_round_trip(value in readings()) { round_trips_everywhere(&value)?; }

    #[test]
    fn telemetry_round_trips(value in telemetry()) { round_trips_everywhere(&value)?; }

    #[test]
    fn checkout_requests_round_trip(value in checkout_request()) { round_trips_everywhere(&value)?; }

    #[test]
    fn checkout_responses_round_trip(value in checkout_response()) { round_trips_everywhere(&value)?; }

    #[test]
    fn items_round_trip(value in items()) { round_trips_everywhere(&value)?; }

    #[test]
    fn keyed_items_round_trip(value in keyed()) { round_trips_everywhere(&value)?; }
}

#[test]
fn every_known_limit_still_fails_on_its_example() {
    for known in KNOWN {
        let Example { value, tree } = (known.example)();
        assert!(
            (known.applies)(&tree),
            "{}: the predicate misses its own example",
            known.reason
        );
        let failures: Vec<String> = registry()
            .encoders
            .iter()
            .filter(|encoder| {
                encoder.id.format == known.format
                    && known.backend.is_none_or(|backend| backend == encoder.id.backend)
            })
            .filter_map(|encoder| match encoder.round_trip(value.as_ref())? {
                Ok(()) => None,
                Err(_) => Some(codec_name(&encoder.id)),
            })
            .collect();
        // The format may be disabled in this build: then there is nothing to check.
        let enabled = serbench::format::all()
            .iter()
            .any(|format| format.name == known.format);
        assert!(
            !enabled || !failures.is_empty(),
            "{} no longer fails: drop it from KNOWN",
            known.reason
        );
    }
}

/// When the random-bytes property starts this binary as its robustness worker, this test is
/// the worker.
#[test]
fn robustness_worker_entry() {
    robustness::test_worker_entry();
}

proptest! {
    // Each case is a whole robustness run (one worker process per decoder, more after each
    // crash), so very few.
    #![proptest_config(Config { cases: 2, ..config() })]

    /// Random, truncated, bit-flipped and bombed bytes never take the harness down: whatever
    /// the seed, every decoder of every format (and check's path, and the --data reader) gets
    /// every case classified.
    #[test]
    fn random_bytes_never_take_the_harness_down(seed in any::<u64>()) {
        if registry().decoders.is_empty() {
            return Ok(());
        }
        let options = RobustnessOptions {
            payloads: vec!["order".to_string()],
            cases: 2,
            seed,
            worker: Some(robustness::test_binary_launcher("robustness_worker_entry").unwrap()),
            ..RobustnessOptions::default()
        };
        let rows = robustness::run(registry(), &options).map_err(|error| TestCaseError::fail(format!("{error:#}")))?;
        for row in &rows {
            let classified: usize = Outcome::ALL.into_iter().map(|outcome| row.count(outcome)).sum();
            prop_assert_eq!(classified, row.cases);
        }
        let decoders: std::collections::BTreeSet<String> = rows.iter().map(|row| row.id.to_string()).collect();
        // Every target of `order`: the decoders, check's path of every codec, the --data reader.
        let expected = robustness::targets(registry(), false, &|id| id.codec.payload == "order").unwrap().len();
        prop_assert!(expected > registry().decoders.iter().filter(|decoder| decoder.id.codec.payload == "order").count());
        prop_assert_eq!(decoders.len(), expected);
    }
}

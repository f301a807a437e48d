//! The registry as a whole: every arm proves its round trip, every (format, payload) pair is
//! either covered or unsupported with a reason, and the format list is the Cargo feature list.

use std::collections::BTreeSet;

use serbench::arm::{ArmId, Framing, Mode, Operation};
use serbench::compress;
use serbench::format::Registry;

mod common;

#[test]
fn every_registered_arm_proves_its_round_trip() {
    let registry = Registry::build();
    let failures: Vec<String> = registry
        .arms
        .iter()
        .filter_map(|arm| arm.prepare().err().map(|error| format!("{}: {error:#}", arm.id)))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(!registry.arms.is_empty());
}

#[test]
fn the_codecs_of_the_compressed_payloads_and_only_those_have_compression_arms() {
    let registry = Registry::build();
    let mut compressed = 0;
    for encoder in &registry.encoders {
        let arms: Vec<&serbench::arm::Arm> = registry
            .arms
            .iter()
            .filter(|arm| arm.id.codec == encoder.id && Operation::COMPRESSION.contains(&arm.id.operation))
            .collect();
        if !compress::has_arms(&encoder.id.payload) {
            assert!(arms.is_empty(), "{}", encoder.id.label());
            continue;
        }
        let operations: Vec<Operation> = arms.iter().map(|arm| arm.id.operation).collect();
        assert_eq!(
            operations,
            Operation::COMPRESSION,
            "{} {}",
            encoder.id.label(),
            encoder.id.payload
        );
        compressed += 1;
        // They time the codec's own bytes: the telemetry arms are proven and run here (the
        // vec-big ones by the test above).
        if encoder.id.payload == "telemetry" {
            let bytes = encoder.encode().unwrap();
            for arm in arms {
                let mut prepared = arm.prepare().unwrap();
                assert_eq!(prepared.encoded_bytes, bytes.len(), "{}", arm.id);
                prepared.runner.run(2).unwrap();
            }
        }
    }
    assert!(
        compressed >= compress::PAYLOADS.len(),
        "{compressed} codecs with compression arms"
    );
}

#[test]
fn every_format_covers_or_explains_every_payload() {
    let registry = Registry::build();
    for format in serbench::format::all() {
        for spec in serbench::payload::specs() {
            let covered = registry
                .encoders
                .iter()
                .any(|encoder| encoder.id.format == format.name && encoder.id.payload == spec.name);
            let explained = registry.unsupported.iter().any(|unsupported| {
                unsupported.format == format.name
                    && unsupported.payload == spec.name
                    && !unsupported.reason.is_empty()
            });
            assert!(
                covered || explained,
                "{} says nothing about {}",
                format.name,
                spec.name
            );
        }
    }
}

#[test]
fn every_typed_decode_of_a_borrowable_payload_has_a_borrowed_arm_or_a_reason() {
    let registry = Registry::build();
    let borrowable: BTreeSet<&str> = serbench::payload::borrowed_specs()
        .iter()
        .map(|spec| spec.name)
        .collect();
    assert!(borrowable.is_superset(&BTreeSet::from([
        "order",
        "readings",
        "telemetry",
        "vec-small",
        "vec-big"
    ])));
    let mut missing = Vec::new();
    for typed in registry.arms.iter().map(|arm| &arm.id).filter(|id| {
        id.operation == Operation::Decode
            && id.mode == Mode::Typed
            && id.codec.framing == Framing::Document
            && !id.is_baseline()
            && borrowable.contains(id.codec.payload.as_str())
    }) {
        let borrowed = ArmId {
            mode: Mode::Borrowed,
            ..typed.clone()
        };
        let explained = registry.unsupported.iter().any(|unsupported| {
            unsupported.format == typed.codec.format
                && (unsupported.backend == "*" || unsupported.backend == typed.codec.backend)
                && unsupported.payload == typed.codec.payload
                && unsupported.mode == Some(Mode::Borrowed)
                && !unsupported.reason.is_empty()
        });
        if registry.arm(&borrowed).is_none() && !explained {
            missing.push(borrowed.to_string());
        }
    }
    assert!(missing.is_empty(), "no borrowed arm and no reason: {missing:#?}");
}

#[test]
fn unsupported_payloads_really_fail_to_round_trip_where_the_library_could_try() {
    // CSV is the format that lists payloads unsupported; its writer must indeed refuse the
    // nested ones, so the reason is a fact and not a shortcut.
    let telemetry: serbench::payload::TelemetryEvent =
        serde_json::from_str(&serbench::payload::logical_json("telemetry").unwrap()).unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    assert!(
        writer.serialize(&telemetry).is_err(),
        "csv accepted a nested document"
    );
    let readings: serbench::payload::Readings =
        serde_json::from_str(&serbench::payload::logical_json("readings").unwrap()).unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    assert!(
        writer.serialize(&readings.readings[0]).is_err(),
        "csv accepted a record with a list"
    );
}

#[test]
fn the_format_list_is_the_cargo_feature_list() {
    let features = common::default_formats();
    let features: BTreeSet<&str> = features.iter().map(String::as_str).collect();
    let registry: BTreeSet<&str> = serbench::format::all().iter().map(|format| format.name).collect();
    // build.rs records which features this build has; the registry is exactly the enabled
    // formats of the default list, whatever subset of features the test was built with.
    let enabled: BTreeSet<&str> = env!("SERBENCH_FEATURES").split(',').collect();
    let expected: BTreeSet<&str> = features.intersection(&enabled).copied().collect();
    assert_eq!(registry, expected);
}

#[test]
fn every_format_file_is_registered_and_in_the_default_list() {
    // A format file left out of the registry or of `default` would silently vanish from
    // every run; the file names are the format names.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/format");
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let stem = path.file_stem()?.to_str()?.to_string();
            let is_format = path.is_dir() || path.extension().is_some_and(|extension| extension == "rs");
            (is_format && stem != "mod").then_some(stem)
        })
        .collect();
    let default: BTreeSet<String> = common::default_formats().into_iter().collect();
    assert_eq!(
        files, default,
        "src/format/ files vs Cargo.toml's default features"
    );
    common::require_every_format("format::all() vs the src/format/ files");
    let registered: BTreeSet<String> = serbench::format::all()
        .iter()
        .map(|format| format.name.to_string())
        .collect();
    assert_eq!(
        registered, default,
        "format::all() vs Cargo.toml's default features"
    );
}

/// A name of the `default` list without a module in src/format/ is one backend's feature: it
/// enables exactly one format and its own crate (`dep:<name>`), which that format documents by
/// its package name (rust-protobuf's dependency is the package `protobuf`, renamed).
#[test]
fn every_backend_feature_enables_one_format_and_its_documented_crate() {
    common::require_every_format("the backend features' formats");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    let features = manifest["features"].as_table().unwrap();
    let formats = common::default_formats();
    assert!(
        !serbench::format::BACKEND_FEATURES.is_empty(),
        "no backend feature to check (cbor4ii is one)"
    );
    for &backend in serbench::format::BACKEND_FEATURES {
        let enables: Vec<&str> = features[backend]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item.as_str().unwrap())
            .collect();
        let owners: Vec<&String> = formats
            .iter()
            .filter(|format| enables.contains(&format.as_str()))
            .collect();
        assert_eq!(
            owners.len(),
            1,
            "{backend} enables one format's feature: {enables:?}"
        );
        let crate_feature = format!("dep:{backend}");
        assert!(
            enables.contains(&crate_feature.as_str()),
            "{backend} does not enable its crate ({crate_feature}): {enables:?}"
        );
        let format = serbench::format::by_name(owners[0]).unwrap();
        // The crate by its package name (a renamed dependency's `package`).
        let package = serbench::format::backend_package(backend);
        assert!(
            format.backends.iter().any(|doc| doc.crates.contains(&package)),
            "{}'s BackendDocs name no crate {package} (feature {backend})",
            format.name
        );
        assert!(serbench::format::features_of(format).contains(&backend));
    }
}

#[test]
fn every_backend_is_documented_and_every_documented_backend_registers() {
    let registry = Registry::build();
    let registered: BTreeSet<(String, String, String)> = registry
        .arms
        .iter()
        .map(|arm| {
            let codec = &arm.id.codec;
            (codec.format.clone(), codec.backend.clone(), codec.variant.clone())
        })
        .collect();
    let documented: BTreeSet<(String, String, String)> = serbench::format::all()
        .iter()
        .flat_map(|format| {
            format.backends.iter().map(|doc| {
                (
                    format.name.to_string(),
                    doc.backend.to_string(),
                    doc.variant.to_string(),
                )
            })
        })
        .collect();
    assert_eq!(
        registered, documented,
        "registered backends vs the formats' BackendDocs: each backend and variant a format registers needs its \
         BackendDoc in the format's `backends`, and each BackendDoc a registered backend"
    );
    for format in serbench::format::all() {
        for doc in format.backends {
            for name in doc.crates {
                assert!(
                    serbench::format::crate_version(name).is_some(),
                    "{}/{}: {name} is not a direct dependency (name the crate as Cargo.toml does)",
                    format.name,
                    doc.backend
                );
            }
        }
    }
}

#[test]
fn every_backend_has_a_fidelity_case_of_a_registered_typed_document_arm() {
    let registry = Registry::build();
    for format in serbench::format::all() {
        // Each backend with a typed arm of its own: one case of the library called directly.
        let backends: BTreeSet<&str> = registry
            .arms
            .iter()
            .filter(|arm| {
                arm.id.codec.format == format.name
                    && arm.id.mode == Mode::Typed
                    && arm.id.codec.framing == Framing::Document
            })
            .map(|arm| arm.id.codec.backend.as_str())
            .collect();
        let missing: Vec<&str> = backends
            .into_iter()
            .filter(|backend| !format.fidelity.iter().any(|case| case.backend == *backend))
            .collect();
        assert!(
            missing.is_empty(),
            "{}: no fidelity case for {missing:?}: add one `Fidelity` each to its `fidelity` (the library called directly)",
            format.name
        );
        for fidelity in format.fidelity {
            let id = fidelity.arm(format.name);
            assert!(
                registry.arms.iter().any(|arm| arm.id == id),
                "{id}: no arm of the registry has this id (a fidelity case measures a registered typed document arm)"
            );
            // The direct call runs (each one unwraps its library's result).
            let mut case = (fidelity.case)();
            case();
        }
    }
}

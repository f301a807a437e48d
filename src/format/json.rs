//! JSON through three backends on the same bytes: serde_json (the reference), simd-json (SIMD
//! parsing, in place) and sonic-rs (SIMD parsing straight into the structs, and lazy access), in
//! three framings for batch payloads and in two record modes.
//!
//! Framings (batch payloads `readings`, `vec-*`; the records are identical, only the layout
//! differs): `document` is the payload struct as one JSON object (`{"items":[...]}`), `array`
//! a top-level array of the records, `ndjson` one record per line with a fresh parse per line,
//! so a malformed line is an error for that line only ([`Ndjson::decode_each_line`]).
//!
//! Modes: typed decodes into the model structs; dynamic into the library's value tree
//! (`serde_json::Value`, simd-json's `OwnedValue`, `sonic_rs::Value`), proven equal by converting
//! it back; borrowed (document framing, the payloads with a borrowed type) into the borrowed
//! structs, whose `&str` fields point into the input for serde_json and sonic-rs, and into the
//! scratch copy simd-json parses in place (it unescapes there, so it could borrow even an
//! escaped string; serde_json and sonic-rs refuse one, see `payload::Borrowed`).
//!
//! In-place access (sonic-rs, document framing): `access-partial` asks `sonic_rs::get_many` for
//! the routing fields of [`Fields::fold_route`] and reads them from the `LazyValue`s it returns;
//! `access-all` reads every field from one pass of sonic-rs's lazy object iterator, members looked
//! up by key, nested objects and arrays iterated lazily too. Neither builds a tree or an owned
//! value (an escaped string is unescaped on its own). What they validate differs, as lazy access
//! does: `access-all` validates every value it passes (the whole document up to its closing
//! brace, nothing after it); `access-partial` validates only the text it scans, which ends at
//! the last routing field, so a damaged tail after it goes unnoticed. Neither has a nesting
//! limit (sonic-rs skips a container by recursion): see docs/robustness.md. Neither reads a list's length for free: the
//! digest folds a list's length before its elements, so a list is iterated twice (counted, then
//! read; the second pass skips without validating again, as sonic-rs does inside a validated
//! value). There is no update: a JSON number's text can change length.
//!
//! Buffer policy: both encoders write into the harness's reused output buffer. simd-json parses
//! a `&mut [u8]` in place and clobbers it, so its decoder copies the borrowed input into a
//! scratch buffer it keeps (cleared, never freed) and reuses its parser `Buffers` too, as its
//! documentation recommends for repeated parsing. A `copy-only` arm per framing times that copy
//! alone, so users see what remains of simd-json's decode. sonic-rs decodes from the borrowed
//! bytes with `from_slice` (UTF-8 validated; its `_unchecked` functions are not used) and
//! encodes with `to_writer` into the reused buffer. Its SIMD is chosen at compile time
//! (`cfg(target_feature)`, no run-time detection), so this portable build runs its SSE2 code
//! and scalar fallbacks on x86_64 (its AVX2 and PCLMULQDQ paths need `-C target-cpu`) and its
//! NEON code on aarch64; only its UTF-8 validation (simdutf8) picks AVX2 at run time. simd-json
//! detects AVX2 at run time.
//!
//! Data payloads (`--data`): each backend's value tree (`serde_json::Value`, simd-json's
//! `OwnedValue`, written by its own writer) of the document, or of the records as a top-level
//! array and as NDJSON, compared exactly with the file's records. serbench's serde_json is built
//! with its `float_roundtrip` feature: without it, it reads some doubles one unit in the last
//! place off, and its arms failed their proof on float-heavy data (canada).
//! simd-json keeps an object of more than 32 keys in a hash map whose order changes from
//! process to process, so on such data it writes no bytes for sizes.csv and `dump` (serde_json
//! writes the same JSON with its keys sorted).

use std::borrow::Cow;
use std::hint::black_box;
use std::marker::PhantomData;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sonic_rs::{ArrayJsonIter, JsonContainerTrait, JsonValueTrait, LazyValue, ObjectJsonIter, PointerTree};

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedDerive, TypedSupport};
use crate::arm::{
    Access, Backend, BorrowedDecode, Codec, DataTree, Dynamic, Framing, Mode, Operation, Value, address_range,
};
use crate::payload::data::{DataPayload, Difference, Equivalence};
use crate::payload::fields::{self, Digest, Fields, model_fields};
use crate::payload::{
    Address, Batch, Borrowed, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample,
    Model, Order, OrderStatus, Payload, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta,
    ServiceInfo, Shipment, TelemetryEvent, Visit, VisitBatch, VisitBorrowed, visit_all, visit_batches,
    visit_borrowed, visit_corpora,
};

pub static FORMAT: Format = Format {
    name: "json",
    about: "JSON: serde_json, simd-json and sonic-rs; document, array and NDJSON framings",
    colour: [0x4E, 0x79, 0xA7],
    capabilities: super::Capabilities {
        self_describing: true,
        evolution: "by field name (serde): `default` and `alias` attributes; unknown fields are ignored",
        languages: &["every language (RFC 8259)"],
        languages_source: "https://www.json.org",
    },
    backends: &[
        BackendDoc {
            backend: "serde_json",
            variant: "",
            crates: &["serde_json"],
            crate_note: "",
            schema: "-",
            buffer_policy: "encode into a reused, cleared `Vec`; decode from the borrowed bytes",
        },
        BackendDoc {
            backend: "simd-json",
            variant: "",
            crates: &["simd-json"],
            crate_note: "",
            schema: "-",
            buffer_policy: "encode into a reused `Vec`; decode copies the borrowed input into a reused scratch buffer (simd-json parses in place and clobbers it) and reuses its parser `Buffers`",
        },
        BackendDoc {
            backend: "simd-json",
            variant: "copy-only",
            crates: &[],
            crate_note: "a baseline, not a decoder",
            schema: "-",
            buffer_policy: "only the copy simd-json's decode starts with (per line for NDJSON), so you see what remains of its decode",
        },
        BackendDoc {
            backend: "sonic-rs",
            variant: "",
            crates: &["sonic-rs"],
            crate_note: "SIMD picked at compile time: SSE2 in a portable x86_64 build (AVX2 needs `-C target-cpu`; only its UTF-8 check detects AVX2 at run time), NEON on aarch64",
            schema: "-",
            buffer_policy: "`to_writer` into a reused `Vec`; `from_slice` (UTF-8 validated) from the borrowed bytes; access through `get_many` (partial) and its lazy object iterator (all), no tree",
        },
        #[cfg(feature = "nanoserde")]
        BackendDoc {
            backend: "nanoserde",
            variant: "",
            crates: &["nanoserde"],
            crate_note: "its JSON mode (`json` feature; the binary mode is the nanoserde format), no serde; document framing, built-in payloads only; it leaves `None` fields out where serde_json writes null",
            schema: "-",
            buffer_policy: "native `SerJson`/`DeJson` derive; `ser_json` into a `String` made from the reused `Vec`; decode from the UTF-8-checked borrowed bytes",
        },
    ],
    fidelity: &[
        Fidelity {
            backend: "serde_json",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: serde_json_order_decode,
        },
        Fidelity {
            backend: "simd-json",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: simd_json_order_decode,
        },
        Fidelity {
            backend: "sonic-rs",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: sonic_rs_order_decode,
        },
        #[cfg(feature = "nanoserde")]
        Fidelity {
            backend: "nanoserde",
            variant: "",
            payload: "order",
            operation: Operation::Decode,
            case: nano::order_decode,
        },
        Fidelity {
            backend: "serde_json",
            variant: "",
            payload: "telemetry",
            operation: Operation::Encode,
            case: serde_json_telemetry_encode,
        },
    ],
    register: |registry| {
        visit_all(&mut Json(registry));
        visit_batches(&mut Json(registry));
        visit_all(&mut SonicLazy(registry));
        visit_borrowed(&mut Json(registry));
        visit_corpora(&mut Json(registry));
        #[cfg(feature = "nanoserde")]
        nano::register(registry);
        for spec in crate::payload::corpus_specs() {
            for operation in [Operation::AccessAll, Operation::AccessPartial] {
                registry.unsupported_operation(spec, SONIC_RS.name, operation, NO_CORPUS_LAZY);
            }
        }
    },
    typed: TypedSupport::Derive(&TypedDerive::SERDE),
    data: DataSupport::Arms(register_data),
    evolution: super::EvolutionSupport::Measured {
        serde: &[
            super::SerdeEvolution {
                backend: "serde_json",
                variant: "",
                encode: |value| serde_json::to_vec(value).map_err(|error| error.to_string()),
                decode: |bytes, seed| {
                    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
                    let value = serde::de::DeserializeSeed::deserialize(seed, &mut deserializer);
                    value
                        .and_then(|value| deserializer.end().map(|()| value))
                        .map_err(|error| error.to_string())
                },
            },
            super::SerdeEvolution {
                backend: "simd-json",
                variant: "",
                encode: |value| simd_json::to_vec(value).map_err(|error| error.to_string()),
                decode: |bytes, seed| {
                    // simd-json parses in place: a copy of the bytes.
                    let mut bytes = bytes.to_vec();
                    crate::shape::read_as(seed.0, || {
                        simd_json::serde::from_slice::<crate::shape::Seeded>(&mut bytes)
                    })
                },
            },
            super::SerdeEvolution {
                backend: "sonic-rs",
                variant: "",
                encode: |value| sonic_rs::to_vec(value).map_err(|error| error.to_string()),
                decode: |bytes, seed| {
                    crate::shape::read_as(seed.0, || sonic_rs::from_slice::<crate::shape::Seeded>(bytes))
                },
            },
        ],
        schema: &[],
    },
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]). A list's records are
/// also framed as a top-level array and as NDJSON, as the data's own file is.
pub fn register_typed<P: Batch>(registry: &mut Registry, payload: &Payload<P>) {
    Json(registry).payload(payload);
    #[cfg(feature = "nanoserde")]
    registry.unsupported(payload.spec, nano::NANOSERDE.name, nano::NOT_TYPED);
    if matches!(payload.spec.shape, crate::payload::Shape::Batch { .. }) {
        Json(registry).batch(payload);
    }
}

/// The borrowed decodes of a generated payload's twin type (`--typed`). serde_json and sonic-rs
/// unescape a string into a copy, so where the data has a string JSON writes with an escape (a
/// quote, a backslash, a control character) they cannot borrow it and are listed with that
/// reason; simd-json unescapes in its own reused buffer and borrows from there.
pub fn register_typed_borrowed<B: Borrowed>(registry: &mut Registry, payload: &Payload<B>)
where
    for<'a> B::Ref<'a>: Deserialize<'a>,
{
    let escaped = serde_json::to_vec((payload.value)()).map_or(true, |bytes| bytes.contains(&b'\\'));
    if !escaped {
        Json(registry).borrowed(payload);
        return;
    }
    registry.borrowed(
        payload,
        SIMD_JSON,
        Document::<SimdJson>::default,
        Document::<SimdJson>::default,
    );
    for backend in [SERDE_JSON, SONIC_RS] {
        registry.unsupported_mode(payload.spec, backend.name, Mode::Borrowed, ESCAPED);
    }
}

/// Why serde_json and sonic-rs have no borrowed decode of data with an escaped string.
const ESCAPED: &str = "a string of the data is written with an escape (a quote, a backslash or a control character), which this library unescapes into a copy: a `&str` cannot borrow it";

/// nanoserde's JSON mode through its own derive, document framing: every built-in payload, in
/// serde_json's bytes (tested); not the corpora (serde renames), no borrowed decode (its `&str`
/// reads copy) and no `--data` (no value tree).
#[cfg(feature = "nanoserde")]
mod nano {
    use anyhow::{Context, Result};
    use nanoserde::{DeJson, SerJson, SerJsonState};

    use crate::arm::{Backend, Codec};
    use crate::format::Registry;
    use crate::payload::{Model, Payload, Visit, borrowed_specs, corpus_specs, visit_all};

    pub const NANOSERDE: Backend = Backend::new("nanoserde");
    /// Why nanoserde's JSON mode has no `--typed` arms.
    pub const NOT_TYPED: &str = "the generated types name their JSON keys in serde attributes, which nanoserde's derive does not read";
    const NOT_BORROWED: &str = "nanoserde's `DeJson` has no borrowed string: every `&str` field is refused";
    const NO_TREE: &str = "nanoserde has no JSON value tree to hold data without Rust types";

    /// Why the corpora are not carried.
    const NO_RENAME: &str = "nanoserde's derive does not read serde's renames (citm_catalog's camelCase keys, twitter's `type`): it would write other keys";

    pub fn register(registry: &mut Registry) {
        visit_all(&mut Nanos(registry));
        for spec in corpus_specs() {
            registry.unsupported(spec, NANOSERDE.name, NO_RENAME);
        }
        for spec in borrowed_specs() {
            registry.unsupported_mode(spec, NANOSERDE.name, crate::arm::Mode::Borrowed, NOT_BORROWED);
        }
    }

    /// The reason `--data` payloads give for this backend.
    pub fn register_data(registry: &mut Registry, payload: &crate::payload::data::DataPayload) {
        registry.unsupported(payload.spec, NANOSERDE.name, NO_TREE);
    }

    /// What nanoserde's JSON derive gives a model type.
    pub trait Native: SerJson + DeJson {}
    impl<T: SerJson + DeJson> Native for T {}

    struct Nanos<'a>(&'a mut Registry);

    impl<P: Model + Native> Visit<P> for Nanos<'_> {
        fn payload(&mut self, payload: &Payload<P>) {
            self.0.codec(payload, NANOSERDE, || NanoJson);
        }
    }

    pub struct NanoJson;

    /// Fidelity: nanoserde's `DeJson::deserialize_json` of `order`, from the bytes as they
    /// arrive: checked as UTF-8 first, as the arm does (nanoserde reads only a `&str`).
    pub fn order_decode() -> Box<dyn FnMut()> {
        let order: &crate::payload::Order = crate::payload::value_of("order").expect("order is an Order");
        let bytes = order.serialize_json().into_bytes();
        Box::new(move || {
            let text = std::str::from_utf8(std::hint::black_box(&bytes)).expect("it is UTF-8");
            std::hint::black_box(crate::payload::Order::deserialize_json(text).expect("it decodes"));
        })
    }

    impl<P: Model + Native> Codec<P> for NanoJson {
        /// The reused buffer becomes the `String` nanoserde writes to (it is empty: nothing to
        /// check), and its bytes come back with their capacity.
        fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
            out.clear();
            let text = String::from_utf8(std::mem::take(out)).expect("an empty buffer is UTF-8");
            let mut state = SerJsonState::new(text);
            value.ser_json(0, &mut state);
            *out = state.out.into_bytes();
            Ok(out)
        }

        fn decode(&mut self, bytes: &[u8]) -> Result<P> {
            let text = std::str::from_utf8(bytes).context("JSON that is not UTF-8")?;
            P::deserialize_json(text).map_err(|error| anyhow::anyhow!("{error}"))
        }
    }
}

const SERDE_JSON: Backend = Backend::new("serde_json");
const SIMD_JSON: Backend = Backend::new("simd-json");
const SONIC_RS: Backend = Backend::new("sonic-rs");
const COPY_ONLY: &str = "copy-only";
/// Why sonic-rs has no update arm.
const NO_UPDATE: &str =
    "JSON text has no fixed-width fields: a changed number can change length, so nothing is updated in place";

struct Json<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Json<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.codec(payload, SERDE_JSON, Document::<SerdeJson>::default);
        registry.codec(payload, SIMD_JSON, Document::<SimdJson>::default);
        registry.codec(payload, SONIC_RS, Document::<SonicRs>::default);
        registry.dynamic(payload, SERDE_JSON, Document::<SerdeJson>::default, || {
            SerdeJsonTree
        });
        registry.dynamic(
            payload,
            SIMD_JSON,
            Document::<SimdJson>::default,
            SimdJsonTree::default,
        );
        registry.dynamic(payload, SONIC_RS, Document::<SonicRs>::default, || SonicRsTree);
        registry.copy_baseline(
            payload,
            SIMD_JSON.variant(COPY_ONLY),
            Document::<SimdJson>::default,
        );
        registry.unsupported_operation(payload.spec, SONIC_RS.name, Operation::Update, NO_UPDATE);
    }
}

/// The borrowed decode of every backend, document framing.
impl<B: Borrowed> VisitBorrowed<B> for Json<'_>
where
    for<'a> B::Ref<'a>: Deserialize<'a>,
{
    fn borrowed(&mut self, payload: &Payload<B>) {
        let registry = &mut *self.0;
        registry.borrowed(
            payload,
            SERDE_JSON,
            Document::<SerdeJson>::default,
            Document::<SerdeJson>::default,
        );
        registry.borrowed(
            payload,
            SIMD_JSON,
            Document::<SimdJson>::default,
            Document::<SimdJson>::default,
        );
        registry.borrowed(
            payload,
            SONIC_RS,
            Document::<SonicRs>::default,
            Document::<SonicRs>::default,
        );
    }
}

/// sonic-rs's lazy access (access-all, access-partial) on the built-in payloads, whose fields
/// it reads by name ([`LazyFields`]); the corpora have no such reader.
struct SonicLazy<'a>(&'a mut Registry);

impl<P: Model + LazyRoute> Visit<P> for SonicLazy<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let registry = &mut *self.0;
        registry.access(
            payload,
            SONIC_RS,
            Operation::AccessAll,
            Document::<SonicRs>::default,
            || LazyReadAll,
        );
        registry.access(
            payload,
            SONIC_RS,
            Operation::AccessPartial,
            Document::<SonicRs>::default,
            LazyReadRoute::<P>::new,
        );
    }
}

/// Why the corpora have no sonic-rs access arms.
const NO_CORPUS_LAZY: &str = "no lazy field reader (LazyFields) written for the corpus types";

/// The batch payloads' records also as a top-level array and as NDJSON.
impl<B: Batch> VisitBatch<B> for Json<'_> {
    fn batch(&mut self, payload: &Payload<B>) {
        let registry = &mut *self.0;
        registry.codec(
            payload,
            SERDE_JSON.framing(Framing::Array),
            Array::<SerdeJson>::default,
        );
        registry.codec(
            payload,
            SERDE_JSON.framing(Framing::Ndjson),
            Ndjson::<SerdeJson>::default,
        );
        registry.codec(
            payload,
            SIMD_JSON.framing(Framing::Array),
            Array::<SimdJson>::default,
        );
        registry.codec(
            payload,
            SIMD_JSON.framing(Framing::Ndjson),
            Ndjson::<SimdJson>::default,
        );
        registry.codec(
            payload,
            SONIC_RS.framing(Framing::Array),
            Array::<SonicRs>::default,
        );
        registry.codec(
            payload,
            SONIC_RS.framing(Framing::Ndjson),
            Ndjson::<SonicRs>::default,
        );
        let copy_only = SIMD_JSON.variant(COPY_ONLY);
        registry.copy_baseline(
            payload,
            copy_only.framing(Framing::Array),
            Array::<SimdJson>::default,
        );
        registry.copy_baseline(
            payload,
            copy_only.framing(Framing::Ndjson),
            Ndjson::<SimdJson>::default,
        );
    }
}

/// What the framings need of a JSON library: write one value, read one value (owned, or
/// borrowing from the bytes it parses).
pub trait JsonLibrary: Default + Send + 'static {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()>;
    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T>;
    fn read_borrowed<'a, T: Deserialize<'a>>(&'a mut self, bytes: &'a [u8]) -> Result<T>;
    /// The bytes the last [`read_borrowed`](Self::read_borrowed) value borrows from.
    fn source(&self, input: &[u8]) -> std::ops::Range<usize> {
        address_range(input)
    }
}

#[derive(Default)]
pub struct SerdeJson;

impl JsonLibrary for SerdeJson {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        Ok(serde_json::to_writer(out, value)?)
    }

    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T> {
        Ok(serde_json::from_slice(bytes)?)
    }

    fn read_borrowed<'a, T: Deserialize<'a>>(&'a mut self, bytes: &'a [u8]) -> Result<T> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

#[derive(Default)]
pub struct SimdJson {
    scratch: Vec<u8>,
    buffers: simd_json::Buffers,
}

impl JsonLibrary for SimdJson {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        Ok(simd_json::to_writer(out, value)?)
    }

    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T> {
        self.read_borrowed(bytes)
    }

    /// Parses the scratch copy in place: the value borrows from the scratch, not the input.
    fn read_borrowed<'a, T: Deserialize<'a>>(&'a mut self, bytes: &'a [u8]) -> Result<T> {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        Ok(simd_json::serde::from_slice_with_buffers(
            &mut self.scratch,
            &mut self.buffers,
        )?)
    }

    fn source(&self, _input: &[u8]) -> std::ops::Range<usize> {
        address_range(&self.scratch)
    }
}

/// sonic-rs through serde: no state to keep (it needs no scratch copy or parser buffers).
#[derive(Default)]
pub struct SonicRs;

impl JsonLibrary for SonicRs {
    fn write<T: Serialize + ?Sized>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<()> {
        Ok(sonic_rs::to_writer(out, value)?)
    }

    fn read<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T> {
        Ok(sonic_rs::from_slice(bytes)?)
    }

    fn read_borrowed<'a, T: Deserialize<'a>>(&'a mut self, bytes: &'a [u8]) -> Result<T> {
        Ok(sonic_rs::from_slice(bytes)?)
    }
}

/// The payload as one JSON document.
#[derive(Default)]
pub struct Document<L>(L);

impl<P: Model, L: JsonLibrary> Codec<P> for Document<L> {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write(out, value)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        self.0.read(bytes)
    }
}

impl<B: Borrowed, L: JsonLibrary> BorrowedDecode<B> for Document<L>
where
    for<'a> B::Ref<'a>: Deserialize<'a>,
{
    fn decode_borrowed<'a>(&'a mut self, bytes: &'a [u8]) -> Result<B::Ref<'a>> {
        self.0.read_borrowed(bytes)
    }

    fn source(&self, input: &[u8]) -> std::ops::Range<usize> {
        self.0.source(input)
    }
}

/// The batch's records as a top-level JSON array.
#[derive(Default)]
pub struct Array<L>(L);

impl<B: Batch, L: JsonLibrary> Codec<B> for Array<L> {
    fn encode<'a>(&'a mut self, value: &B, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write(out, value.records())?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<B> {
        Ok(B::from_records(self.0.read(bytes)?))
    }
}

/// The batch's records as NDJSON: one record per line, each line parsed on its own.
#[derive(Default)]
pub struct Ndjson<L>(L);

/// The non-empty lines of an NDJSON text, with their 1-based line numbers.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    bytes
        .split(|&byte| byte == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(index, line)| (index + 1, line))
}

impl<L: JsonLibrary> Ndjson<L> {
    /// Decodes every line on its own: a malformed line is an error for that line only, and
    /// every other line still decodes.
    pub fn decode_each_line<R: DeserializeOwned>(&mut self, bytes: &[u8]) -> Vec<Result<R>> {
        lines(bytes)
            .map(|(number, line)| self.0.read(line).with_context(|| format!("NDJSON line {number}")))
            .collect()
    }
}

impl<B: Batch, L: JsonLibrary> Codec<B> for Ndjson<L> {
    fn encode<'a>(&'a mut self, value: &B, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        for record in value.records() {
            self.0.write(out, record)?;
            out.push(b'\n');
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<B> {
        let mut records = Vec::new();
        for (number, line) in lines(bytes) {
            records.push(
                self.0
                    .read(line)
                    .with_context(|| format!("NDJSON line {number}"))?,
            );
        }
        Ok(B::from_records(records))
    }
}

/// serde_json's dynamic tree.
pub struct SerdeJsonTree;

impl<P: Model> Dynamic<P> for SerdeJsonTree {
    type Tree = serde_json::Value;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        Ok(serde_json::from_slice(bytes)?)
    }

    fn to_model(&mut self, tree: serde_json::Value) -> Result<P> {
        Ok(serde_json::from_value(tree)?)
    }
}

/// simd-json's owned tree, with the same scratch-copy and buffer reuse as its typed decode.
#[derive(Default)]
pub struct SimdJsonTree(SimdJson);

impl<P: Model> Dynamic<P> for SimdJsonTree {
    type Tree = simd_json::OwnedValue;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<simd_json::OwnedValue> {
        self.0.read_tree(bytes)
    }

    fn to_model(&mut self, tree: simd_json::OwnedValue) -> Result<P> {
        Ok(simd_json::serde::from_owned_value(tree)?)
    }
}

/// A data payload in each backend's value tree: the document, or the records as a top-level
/// array and as NDJSON.
fn register_data(registry: &mut Registry, payload: &'static DataPayload) {
    register_trees::<SerdeJson>(registry, payload, SERDE_JSON);
    register_trees::<SimdJson>(registry, payload, SIMD_JSON);
    register_trees::<SonicRs>(registry, payload, SONIC_RS);
    #[cfg(feature = "nanoserde")]
    nano::register_data(registry, payload);
}

fn register_trees<L: TreeLibrary>(registry: &mut Registry, payload: &'static DataPayload, backend: Backend) {
    let operations = &Operation::CODEC;
    if payload.is_list() {
        let array = backend.framing(Framing::Array);
        registry.data_tree(payload, array, OneTree::<L>::default(), operations);
        let ndjson = backend.framing(Framing::Ndjson);
        registry.data_tree(payload, ndjson, TreeLines::<L>::default(), operations);
    } else {
        registry.data_tree(payload, backend, OneTree::<L>::default(), operations);
    }
}

/// What the data trees need of a JSON library: its own value tree, written and read by the
/// library itself, and converted from and to the file's records (untimed).
pub trait TreeLibrary: Default + Send + Sync + 'static {
    type Tree: Value;
    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &Self::Tree) -> Result<()>;
    fn read_tree(&mut self, bytes: &[u8]) -> Result<Self::Tree>;
    fn from_json(value: &serde_json::Value) -> Self::Tree;
    fn to_json(tree: &Self::Tree) -> serde_json::Value;
    /// Whether two trees are the same (see [`DataTree::same`]).
    fn same(one: &Self::Tree, other: &Self::Tree) -> bool {
        one == other
    }
    /// Why the bytes of `payload`'s tree change from run to run, if they do.
    fn unstable(_payload: &DataPayload) -> Option<String> {
        None
    }
}

impl TreeLibrary for SerdeJson {
    type Tree = serde_json::Value;

    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &serde_json::Value) -> Result<()> {
        self.write(out, tree)
    }

    fn read_tree(&mut self, bytes: &[u8]) -> Result<serde_json::Value> {
        self.read(bytes)
    }

    fn from_json(value: &serde_json::Value) -> serde_json::Value {
        value.clone()
    }

    fn to_json(tree: &serde_json::Value) -> serde_json::Value {
        tree.clone()
    }
}

impl TreeLibrary for SimdJson {
    type Tree = simd_json::OwnedValue;

    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &simd_json::OwnedValue) -> Result<()> {
        use simd_json::prelude::Writable;
        Ok(tree.write(out)?)
    }

    fn read_tree(&mut self, bytes: &[u8]) -> Result<simd_json::OwnedValue> {
        self.scratch.clear();
        self.scratch.extend_from_slice(bytes);
        Ok(simd_json::to_owned_value_with_buffers(
            &mut self.scratch,
            &mut self.buffers,
        )?)
    }

    fn from_json(value: &serde_json::Value) -> simd_json::OwnedValue {
        use simd_json::OwnedValue;
        match value {
            serde_json::Value::Null => OwnedValue::Static(simd_json::StaticNode::Null),
            serde_json::Value::Bool(flag) => OwnedValue::from(*flag),
            serde_json::Value::Number(number) => match number.as_i64() {
                Some(integer) => OwnedValue::from(integer),
                None => OwnedValue::from(number.as_f64().expect("a JSON number is an i64 or a double here")),
            },
            serde_json::Value::String(text) => OwnedValue::from(text.clone()),
            serde_json::Value::Array(items) => {
                OwnedValue::Array(Box::new(items.iter().map(Self::from_json).collect()))
            }
            serde_json::Value::Object(object) => {
                let mut tree =
                    simd_json::owned::Object::with_capacity_and_hasher(object.len(), Default::default());
                for (key, value) in object {
                    tree.insert(key.clone(), Self::from_json(value));
                }
                OwnedValue::Object(Box::new(tree))
            }
        }
    }

    fn to_json(tree: &simd_json::OwnedValue) -> serde_json::Value {
        use simd_json::{OwnedValue, StaticNode};
        match tree {
            OwnedValue::Static(StaticNode::Null) => serde_json::Value::Null,
            OwnedValue::Static(StaticNode::Bool(flag)) => serde_json::Value::from(*flag),
            OwnedValue::Static(StaticNode::I64(integer)) => serde_json::Value::from(*integer),
            OwnedValue::Static(StaticNode::U64(integer)) => serde_json::Value::from(*integer),
            OwnedValue::Static(StaticNode::F64(float)) => serde_json::Value::from(*float),
            OwnedValue::String(text) => serde_json::Value::from(text.as_str()),
            OwnedValue::Array(items) => serde_json::Value::Array(items.iter().map(Self::to_json).collect()),
            OwnedValue::Object(object) => serde_json::Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.clone(), Self::to_json(value)))
                    .collect(),
            ),
        }
    }

    /// Objects of up to 32 keys keep their order (a vector); larger ones are a hash map.
    fn unstable(payload: &DataPayload) -> Option<String> {
        let place = payload.first_object_wider_than(32)?;
        Some(format!(
            "simd-json keeps an object of more than 32 keys ({place}) in a hash map whose order changes \
             from process to process, and so do its bytes; serde_json's are the same JSON, sorted"
        ))
    }
}

/// sonic-rs's parsed `Value` keeps an object's members in order (an array of pairs), so its
/// bytes are stable; it converts from and to the file's records untimed.
impl TreeLibrary for SonicRs {
    type Tree = sonic_rs::Value;

    fn write_tree(&mut self, out: &mut Vec<u8>, tree: &sonic_rs::Value) -> Result<()> {
        self.write(out, tree)
    }

    fn read_tree(&mut self, bytes: &[u8]) -> Result<sonic_rs::Value> {
        Ok(sonic_rs::from_slice(bytes)?)
    }

    /// Parsed from serde_json's text: `sonic_rs::to_value` would put a wide object's members
    /// in a hashed order (see the test below).
    fn from_json(value: &serde_json::Value) -> sonic_rs::Value {
        let text = serde_json::to_vec(value).expect("a serde_json value serializes");
        sonic_rs::from_slice(&text).expect("serde_json's text parses in sonic-rs")
    }

    fn to_json(tree: &sonic_rs::Value) -> serde_json::Value {
        serde_json::to_value(tree).expect("every sonic-rs value is a serde_json value")
    }

    /// Members compared in order: sonic-rs's own `==` looks every key up in the other object,
    /// a linear search, so an object of 100,000 keys took hours to prove. Its parser keeps the
    /// order of the bytes, so a round trip keeps it too.
    fn same(one: &sonic_rs::Value, other: &sonic_rs::Value) -> bool {
        match (
            one.as_object(),
            other.as_object(),
            one.as_array(),
            other.as_array(),
        ) {
            (Some(one), Some(other), ..) => {
                one.len() == other.len()
                    && one
                        .iter()
                        .zip(other.iter())
                        .all(|((key, one), (other_key, other))| key == other_key && Self::same(one, other))
            }
            (_, _, Some(one), Some(other)) => {
                one.len() == other.len()
                    && one
                        .iter()
                        .zip(other.iter())
                        .all(|(one, other)| Self::same(one, other))
            }
            (None, None, None, None) => one == other,
            _ => false,
        }
    }
}

/// One JSON value per message: the document, or the records as a top-level array.
#[derive(Default)]
pub struct OneTree<L>(L);

impl<L: TreeLibrary> Codec<L::Tree> for OneTree<L> {
    fn encode<'a>(&'a mut self, tree: &L::Tree, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.0.write_tree(out, tree)?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<L::Tree> {
        self.0.read_tree(bytes)
    }
}

impl<L: TreeLibrary> DataTree<DataPayload> for OneTree<L> {
    type Tree = L::Tree;
    type Codec = OneTree<L>;

    fn codec(&self) -> OneTree<L> {
        OneTree::default()
    }

    fn tree(&self, data: &DataPayload) -> Result<L::Tree> {
        Ok(L::from_json(&data.as_value()))
    }

    fn holds(&self, tree: &L::Tree, data: &DataPayload) -> Result<Option<Difference>> {
        Ok(data.compare(&L::to_json(tree), Equivalence::Exact))
    }

    fn same(&self, one: &L::Tree, other: &L::Tree) -> bool {
        L::same(one, other)
    }

    fn unstable(&self, data: &DataPayload) -> Option<String> {
        L::unstable(data)
    }
}

/// The records as NDJSON: one value per line, each line parsed on its own.
#[derive(Default)]
pub struct TreeLines<L>(L);

impl<L: TreeLibrary> Codec<Vec<L::Tree>> for TreeLines<L> {
    fn encode<'a>(&'a mut self, records: &Vec<L::Tree>, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        for record in records {
            self.0.write_tree(out, record)?;
            out.push(b'\n');
        }
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Vec<L::Tree>> {
        lines(bytes)
            .map(|(number, line)| {
                self.0
                    .read_tree(line)
                    .with_context(|| format!("NDJSON line {number}"))
            })
            .collect()
    }
}

impl<L: TreeLibrary> DataTree<DataPayload> for TreeLines<L> {
    type Tree = Vec<L::Tree>;
    type Codec = TreeLines<L>;

    fn codec(&self) -> TreeLines<L> {
        TreeLines::default()
    }

    fn tree(&self, data: &DataPayload) -> Result<Vec<L::Tree>> {
        Ok(data.records.iter().map(L::from_json).collect())
    }

    fn holds(&self, tree: &Vec<L::Tree>, data: &DataPayload) -> Result<Option<Difference>> {
        let records: Vec<serde_json::Value> = tree.iter().map(L::to_json).collect();
        Ok(data.compare_records(&records, Equivalence::Exact))
    }

    fn same(&self, one: &Vec<L::Tree>, other: &Vec<L::Tree>) -> bool {
        one.len() == other.len() && one.iter().zip(other).all(|(one, other)| L::same(one, other))
    }

    fn unstable(&self, data: &DataPayload) -> Option<String> {
        L::unstable(data)
    }
}

/// sonic-rs's value tree (its arena-backed `Value`; an object is an array of pairs).
pub struct SonicRsTree;

impl<P: Model> Dynamic<P> for SonicRsTree {
    type Tree = sonic_rs::Value;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<sonic_rs::Value> {
        Ok(sonic_rs::from_slice(bytes)?)
    }

    fn to_model(&mut self, tree: sonic_rs::Value) -> Result<P> {
        Ok(sonic_rs::from_value(&tree)?)
    }
}

// --- sonic-rs lazy access -------------------------------------------------------------------

/// [`LazyFields::fold_lazy`] through sonic-rs's lazy members, from [`model_fields!`]'s list: the
/// owned fold's fields, each read by its name (serde's, the field's own).
macro_rules! lazy_fold {
    ($($kind:ident $field:ident $(: $type:ident)?),* $(,)?) => {
        fn fold_lazy(members: &Members<'_>, digest: &mut Digest) -> Result<()> {
            $(lazy_fold!(@ members digest $kind $field $($type)?);)*
            Ok(())
        }
    };
    (@ $m:ident $d:ident int $f:ident) => { $d.int($m.int(stringify!($f))?) };
    (@ $m:ident $d:ident float $f:ident) => { $d.float($m.float(stringify!($f))?) };
    (@ $m:ident $d:ident flag $f:ident) => { $d.flag($m.flag(stringify!($f))?) };
    (@ $m:ident $d:ident text $f:ident) => { $d.text($m.text(stringify!($f))?) };
    (@ $m:ident $d:ident texts $f:ident) => { $m.fold_texts(stringify!($f), $d)? };
    (@ $m:ident $d:ident pairs $f:ident) => { $m.fold_pairs(stringify!($f), $d)? };
    (@ $m:ident $d:ident record $f:ident $type:ident) => {
        $type::fold_lazy(&$m.object(stringify!($f))?, $d)?
    };
    (@ $m:ident $d:ident records $f:ident $type:ident) => {
        $m.fold_records::<$type>(stringify!($f), $d)?
    };
    // The name is read through serde, so the variant names are not written twice.
    (@ $m:ident $d:ident status $f:ident) => {{
        let status: OrderStatus = sonic_rs::from_str($m.value(stringify!($f))?.as_raw_str())
            .context(concat!("field `", stringify!($f), "`"))?;
        $d.int(status as i64);
    }};
    (@ $m:ident $d:ident keyed $f:ident $type:ident) => {{
        let entries = $m.value(stringify!($f))?;
        $d.count(object_iter(entries)?.count());
        for entry in object_iter(entries)? {
            let (key, record) = entry?;
            $d.text(&key);
            $type::fold_lazy(&object(&record)?, $d)?;
        }
    }};
}

/// How sonic-rs's lazy API reads a model type in place: every field, as [`Fields::fold_all`]
/// folds the owned value, from the members of its JSON object.
pub trait LazyFields: Fields {
    fn fold_lazy(members: &Members<'_>, digest: &mut Digest) -> Result<()>;
}

/// The routing fields of a payload type (and of the records whose first one a batch routes on),
/// as [`Fields::fold_route`] folds the owned value.
pub trait LazyRoute: LazyFields + 'static {
    /// The paths `get_many` is asked for, in the order [`fold_route_lazy`](Self::fold_route_lazy)
    /// receives the values found there.
    const ROUTE: &'static [&'static [&'static str]];
    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()>;
}

/// `access-all`: one validating pass of `to_object_iter` over the document, every field read
/// from the lazy values it yields.
pub struct LazyReadAll;

impl<P: LazyRoute> Access<P> for LazyReadAll {
    fn expected(value: &P) -> u64 {
        fields::digest_all(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let mut digest = Digest::default();
        P::fold_lazy(&Members::read(sonic_rs::to_object_iter(bytes))?, &mut digest)?;
        Ok(digest.finish())
    }
}

/// `access-partial`: `get_many` over the payload's routing paths (its `PointerTree` built once,
/// outside the timed loop), then only the values found.
pub struct LazyReadRoute<P> {
    tree: PointerTree,
    payload: PhantomData<fn() -> P>,
}

impl<P: LazyRoute> LazyReadRoute<P> {
    fn new() -> Self {
        let mut tree = PointerTree::new();
        for path in P::ROUTE {
            tree.add_path(path.iter());
        }
        LazyReadRoute {
            tree,
            payload: PhantomData,
        }
    }
}

impl<P: LazyRoute> Access<P> for LazyReadRoute<P> {
    fn expected(value: &P) -> u64 {
        fields::digest_route(value)
    }

    fn access(&mut self, bytes: &[u8]) -> Result<u64> {
        let found = sonic_rs::get_many(bytes, &self.tree)?
            .into_iter()
            .zip(P::ROUTE)
            .map(|(value, path)| value.with_context(|| format!("no field at {path:?}")))
            .collect::<Result<Vec<_>>>()?;
        let mut digest = Digest::default();
        P::fold_route_lazy(&found, &mut digest)?;
        Ok(digest.finish())
    }
}

/// The members of one JSON object as sonic-rs's lazy iterator yields them, looked up by key
/// (the first of duplicate keys, as `get_many` finds it); values stay unparsed until read.
/// One allocation per object is ours (this list); sonic-rs's iterator adds its key buffer and
/// an owned `String` per key (it returns every key as `Cow::Owned`).
pub struct Members<'a>(Vec<(Cow<'a, str>, LazyValue<'a>)>);

/// More members than any model struct has, so reading one never grows the list.
const MEMBERS_CAPACITY: usize = 16;

impl<'a> Members<'a> {
    fn read(object: ObjectJsonIter<'a>) -> Result<Self> {
        let mut members = Vec::with_capacity(MEMBERS_CAPACITY);
        for member in object {
            members.push(member?);
        }
        Ok(Members(members))
    }

    fn value(&self, key: &str) -> Result<&LazyValue<'a>> {
        self.0
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
            .with_context(|| format!("missing field `{key}`"))
    }

    fn int(&self, key: &str) -> Result<i64> {
        int(self.value(key)?).with_context(|| format!("field `{key}`"))
    }

    fn float(&self, key: &str) -> Result<f64> {
        let value = self.value(key)?;
        value
            .as_f64()
            .with_context(|| format!("field `{key}` is not a number: {}", value.as_raw_str()))
    }

    fn flag(&self, key: &str) -> Result<bool> {
        flag(self.value(key)?).with_context(|| format!("field `{key}`"))
    }

    fn text(&self, key: &str) -> Result<&str> {
        text(self.value(key)?).with_context(|| format!("field `{key}`"))
    }

    fn object(&self, key: &str) -> Result<Members<'a>> {
        object(self.value(key)?).with_context(|| format!("field `{key}`"))
    }

    /// A list field's elements, counted first, as [`Digest`] folds a list.
    fn list(&self, key: &str) -> Result<(usize, ArrayJsonIter<'a>)> {
        list(self.value(key)?).with_context(|| format!("field `{key}`"))
    }

    /// A list of strings, folded as [`Digest::texts`] folds it.
    fn fold_texts(&self, key: &str, digest: &mut Digest) -> Result<()> {
        let (count, elements) = self.list(key)?;
        digest.count(count);
        for element in elements {
            digest.text(text(&element?)?);
        }
        Ok(())
    }

    /// A list of records, folded as [`Digest`] folds records: the count, then each record.
    fn fold_records<T: LazyFields>(&self, key: &str, digest: &mut Digest) -> Result<()> {
        let (count, elements) = self.list(key)?;
        digest.count(count);
        for element in elements {
            T::fold_lazy(&object(&element?)?, digest)?;
        }
        Ok(())
    }

    /// A map of strings, folded as [`Digest::pairs`] folds it (in document order, which is the
    /// key order every encoder here writes).
    fn fold_pairs(&self, key: &str, digest: &mut Digest) -> Result<()> {
        let pairs = self.value(key)?;
        digest.count(object_iter(pairs)?.count());
        for pair in object_iter(pairs)? {
            let (name, value) = pair?;
            digest.text(&name);
            digest.text(text(&value)?);
        }
        Ok(())
    }
}

fn int(value: &LazyValue<'_>) -> Result<i64> {
    value
        .as_i64()
        .with_context(|| format!("not an i64: {}", value.as_raw_str()))
}

fn flag(value: &LazyValue<'_>) -> Result<bool> {
    value
        .as_bool()
        .with_context(|| format!("not a boolean: {}", value.as_raw_str()))
}

fn text<'v>(value: &'v LazyValue<'_>) -> Result<&'v str> {
    value
        .as_str()
        .with_context(|| format!("not a string: {}", value.as_raw_str()))
}

fn object_iter<'a>(value: &LazyValue<'a>) -> Result<ObjectJsonIter<'a>> {
    value
        .clone()
        .into_object_iter()
        .with_context(|| format!("not an object: {}", value.as_raw_str()))
}

fn object<'a>(value: &LazyValue<'a>) -> Result<Members<'a>> {
    Members::read(object_iter(value)?)
}

/// An array's length (a first pass) and its elements (a second one). The value was validated
/// when it was found, so both passes skip without validating again.
fn list<'a>(value: &LazyValue<'a>) -> Result<(usize, ArrayJsonIter<'a>)> {
    let elements = || {
        value
            .clone()
            .into_array_iter()
            .with_context(|| format!("not an array: {}", value.as_raw_str()))
    };
    let mut count = 0;
    for element in elements()? {
        element?;
        count += 1;
    }
    Ok((count, elements()?))
}

/// Routing fields that are all strings.
fn fold_found_texts(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
    for value in found {
        digest.text(text(value)?);
    }
    Ok(())
}

/// The routing fields of a batch's first record, found by path inside that record.
fn fold_first_route<T: LazyRoute>(record: &LazyValue<'_>, digest: &mut Digest) -> Result<()> {
    let found = T::ROUTE
        .iter()
        .map(|path| {
            record
                .pointer(path.iter())
                .with_context(|| format!("no field at {path:?}"))
        })
        .collect::<Result<Vec<_>>>()?;
    T::fold_route_lazy(&found, digest)
}

/// A batch's route: the record count, then the first record's routing fields.
fn fold_batch_route<T: LazyRoute>(records: &LazyValue<'_>, digest: &mut Digest) -> Result<()> {
    let (count, mut elements) = list(records)?;
    digest.count(count);
    if let Some(first) = elements.next() {
        fold_first_route::<T>(&first?, digest)?;
    }
    Ok(())
}

impl LazyFields for Reading {
    model_fields!(Reading, lazy_fold);
}

impl LazyRoute for Reading {
    const ROUTE: &'static [&'static [&'static str]] = &[&["valid"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        digest.flag(flag(&found[0])?);
        Ok(())
    }
}

impl LazyFields for Readings {
    model_fields!(Readings, lazy_fold);
}

impl LazyRoute for Readings {
    const ROUTE: &'static [&'static [&'static str]] = &[&["readings"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        fold_batch_route::<Reading>(&found[0], digest)
    }
}

impl LazyFields for Order {
    model_fields!(Order, lazy_fold);
}

impl LazyRoute for Order {
    const ROUTE: &'static [&'static [&'static str]] = &[&["order_id"], &["customer_id"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        digest.int(int(&found[0])?);
        digest.int(int(&found[1])?);
        Ok(())
    }
}

impl LazyFields for ServiceInfo {
    model_fields!(ServiceInfo, lazy_fold);
}

impl LazyFields for MetricSample {
    model_fields!(MetricSample, lazy_fold);
}

impl LazyFields for TelemetryEvent {
    model_fields!(TelemetryEvent, lazy_fold);
}

impl LazyRoute for TelemetryEvent {
    const ROUTE: &'static [&'static [&'static str]] = &[
        &["service", "name"],
        &["service", "instance_id"],
        &["service", "region"],
        &["metric"],
        &["samples"],
    ];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        fold_found_texts(&found[..4], digest)?;
        // The latest sample is the last: every element is skipped to reach it.
        let mut latest = None;
        for sample in list(&found[4])?.1 {
            latest = Some(sample?);
        }
        if let Some(latest) = latest {
            MetricSample::fold_lazy(&object(&latest)?, digest)?;
        }
        Ok(())
    }
}

impl LazyFields for RequestMeta {
    model_fields!(RequestMeta, lazy_fold);
}

impl LazyFields for LineItem {
    model_fields!(LineItem, lazy_fold);
}

impl LazyFields for Address {
    model_fields!(Address, lazy_fold);
}

impl LazyFields for PaymentMethod {
    model_fields!(PaymentMethod, lazy_fold);
}

impl LazyFields for CheckoutRequest {
    model_fields!(CheckoutRequest, lazy_fold);
}

impl LazyRoute for CheckoutRequest {
    const ROUTE: &'static [&'static [&'static str]] = &[&["meta", "request_id"], &["customer_id"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        fold_found_texts(found, digest)
    }
}

impl LazyFields for ResponseMeta {
    model_fields!(ResponseMeta, lazy_fold);
}

impl LazyFields for Shipment {
    model_fields!(Shipment, lazy_fold);
}

impl LazyFields for CheckoutResponse {
    model_fields!(CheckoutResponse, lazy_fold);
}

impl LazyRoute for CheckoutResponse {
    const ROUTE: &'static [&'static [&'static str]] = &[&["meta", "request_id"], &["order_id"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        fold_found_texts(found, digest)
    }
}

impl LazyFields for Item {
    model_fields!(Item, lazy_fold);
}

impl LazyRoute for Item {
    const ROUTE: &'static [&'static [&'static str]] = &[&["id"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        digest.int(int(&found[0])?);
        Ok(())
    }
}

impl LazyFields for Items {
    model_fields!(Items, lazy_fold);
}

impl LazyRoute for Items {
    const ROUTE: &'static [&'static [&'static str]] = &[&["items"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        fold_batch_route::<Item>(&found[0], digest)
    }
}

impl LazyFields for Keyed {
    model_fields!(Keyed, lazy_fold);
}

impl LazyRoute for Keyed {
    const ROUTE: &'static [&'static [&'static str]] = &[&["entries"]];

    fn fold_route_lazy(found: &[LazyValue<'_>], digest: &mut Digest) -> Result<()> {
        let mut entries = object_iter(&found[0])?;
        let first = entries.next().transpose()?;
        digest.count(usize::from(first.is_some()) + entries.count());
        if let Some((key, item)) = first {
            digest.text(&key);
            fold_first_route::<Item>(&item, digest)?;
        }
        Ok(())
    }
}

/// Fidelity: `serde_json::from_slice` of `order`.
fn serde_json_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = serde_json::to_vec(order).expect("order serializes");
    Box::new(move || {
        black_box(serde_json::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

/// Fidelity: simd-json's serde decode of `order`, copying the input into a reused scratch
/// buffer and reusing its `Buffers`, as its documentation recommends.
fn simd_json_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let json = serde_json::to_vec(order).expect("order serializes");
    let (mut scratch, mut buffers) = (Vec::new(), simd_json::Buffers::default());
    Box::new(move || {
        scratch.clear();
        scratch.extend_from_slice(black_box(&json));
        black_box(
            simd_json::serde::from_slice_with_buffers::<Order>(&mut scratch, &mut buffers)
                .expect("it decodes"),
        );
    })
}

/// Fidelity: `sonic_rs::from_slice` of `order`.
fn sonic_rs_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let bytes = sonic_rs::to_vec(order).expect("order serializes");
    Box::new(move || {
        black_box(sonic_rs::from_slice::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

/// Fidelity: `serde_json::to_writer` of `telemetry` into a reused `Vec`.
fn serde_json_telemetry_encode() -> Box<dyn FnMut()> {
    let event: &TelemetryEvent =
        crate::payload::value_of("telemetry").expect("telemetry is a TelemetryEvent");
    let mut out = Vec::new();
    Box::new(move || {
        out.clear();
        serde_json::to_writer(&mut out, black_box(event)).expect("it encodes");
        black_box(&out);
    })
}

/// The data arms on the files that once failed them.
#[cfg(test)]
mod data_tests {
    use crate::format::Registry;
    use crate::payload::data::{TRICKY, test_payload};

    #[test]
    fn every_json_data_arm_proves_on_tricky_records() {
        let (proofs, reasons) = Registry::data_proofs(&super::FORMAT, test_payload("tricky", TRICKY));
        assert_eq!(
            proofs.len(),
            18,
            "three backends, array and NDJSON, three operations"
        );
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        let expected = if cfg!(feature = "nanoserde") { 1 } else { 0 };
        assert_eq!(reasons.len(), expected, "{reasons:?}");
    }

    #[test]
    fn every_backend_reads_the_double_serde_json_once_misread() {
        // Without serde_json's float_roundtrip (before), its arms failed here: "expected
        // -59.879722999999956, found -59.87972299999995".
        let payload = test_payload("float", r#"{"x": [1.5, -59.879722999999956]}"#);
        let (proofs, _) = Registry::data_proofs(&super::FORMAT, payload);
        assert_eq!(proofs.len(), 9);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::payload::{Item, Items, ItemsRef, Reading, Readings};

    #[test]
    fn an_escaped_string_is_refused_by_the_borrowing_backends_that_unescape_into_a_copy() {
        let bytes = br#"{"items":[{"id":1,"name":"a \"quoted\" name","category":"toys","price":1.5,"stock":2,"active":true}]}"#;
        let escaped = |decoded: Result<ItemsRef<'_>>| decoded.map(|items| Items::to_owned_model(&items));
        let serde_json = escaped(BorrowedDecode::<Items>::decode_borrowed(
            &mut Document::<SerdeJson>::default(),
            bytes,
        ));
        assert!(serde_json.unwrap_err().to_string().contains("borrowed"));
        assert!(
            escaped(BorrowedDecode::<Items>::decode_borrowed(
                &mut Document::<SonicRs>::default(),
                bytes
            ))
            .is_err()
        );
        // simd-json unescapes in its scratch copy, in place, so it still borrows.
        let mut simd_json = Document::<SimdJson>::default();
        let items = escaped(BorrowedDecode::<Items>::decode_borrowed(&mut simd_json, bytes)).unwrap();
        assert_eq!(items.items[0].name, r#"a "quoted" name"#);
    }

    fn readings() -> Readings {
        serde_json::from_str(&crate::payload::logical_json("readings").unwrap()).unwrap()
    }

    fn round_trip<B: Batch, C: Codec<B> + Default>(value: &B) -> (Vec<u8>, B) {
        let mut out = Vec::new();
        let bytes = C::default().encode(value, &mut out).unwrap().to_vec();
        let decoded = C::default().decode(&bytes).unwrap();
        (bytes, decoded)
    }

    #[test]
    fn every_framing_of_a_batch_decodes_to_the_same_records() {
        let batch = readings();
        let (document, from_document) = round_trip::<_, Document<SerdeJson>>(&batch);
        let (array, from_array) = round_trip::<_, Array<SimdJson>>(&batch);
        let (ndjson, from_ndjson) = round_trip::<_, Ndjson<SerdeJson>>(&batch);
        assert_eq!(from_document, batch);
        assert_eq!(from_array, batch);
        assert_eq!(from_ndjson, batch);
        assert!(document.starts_with(b"{\"readings\":["));
        assert!(array.starts_with(b"[{"));
        assert_eq!(
            ndjson.iter().filter(|&&byte| byte == b'\n').count(),
            batch.readings.len()
        );
        // The same records in all three: only the framing bytes differ.
        assert_eq!(document.len(), array.len() + "{\"readings\":}".len());
        assert_eq!(
            ndjson.len(),
            array.len() - 2 - (batch.readings.len() - 1) + batch.readings.len()
        );
    }

    #[test]
    fn a_malformed_ndjson_line_is_an_error_for_that_line_only() {
        for backend in ["serde_json", "simd-json", "sonic-rs"] {
            let mut text = Vec::new();
            let batch = readings();
            Ndjson::<SerdeJson>::default().encode(&batch, &mut text).unwrap();
            let mut lines: Vec<&[u8]> = text.split(|&byte| byte == b'\n').collect();
            lines[2] = b"{\"valid\": tru";
            let broken = lines.join(&b'\n');
            let results: Vec<Result<Reading>> = match backend {
                "serde_json" => Ndjson::<SerdeJson>::default().decode_each_line(&broken),
                "simd-json" => Ndjson::<SimdJson>::default().decode_each_line(&broken),
                _ => Ndjson::<SonicRs>::default().decode_each_line(&broken),
            };
            assert_eq!(results.len(), batch.readings.len());
            for (index, result) in results.iter().enumerate() {
                match result {
                    Err(error) => {
                        assert_eq!(index, 2, "{backend}");
                        assert!(error.to_string().contains("NDJSON line 3"), "{backend}: {error}");
                    }
                    Ok(reading) => assert_eq!(reading, &batch.readings[index], "{backend}"),
                }
            }
            assert!(results[2].is_err());
            // The codec's whole-batch decode fails, naming the line.
            let error = Codec::<Readings>::decode(&mut Ndjson::<SerdeJson>::default(), &broken).unwrap_err();
            assert!(error.to_string().contains("line 3"), "{error}");
        }
    }

    #[test]
    fn dynamic_trees_agree_with_the_typed_decode() {
        let items = Items {
            items: vec![Item {
                id: 7,
                name: "a b".into(),
                category: "c".into(),
                price: 1.25,
                stock: 3,
                active: true,
            }],
        };
        let mut out = Vec::new();
        let bytes = Document::<SerdeJson>::default()
            .encode(&items, &mut out)
            .unwrap()
            .to_vec();
        let tree = Dynamic::<Items>::decode_tree(&mut SerdeJsonTree, &bytes).unwrap();
        assert_eq!(tree["items"][0]["price"], 1.25);
        assert_eq!(
            Dynamic::<Items>::to_model(&mut SerdeJsonTree, tree).unwrap(),
            items
        );
        let mut simd = SimdJsonTree::default();
        let tree = Dynamic::<Items>::decode_tree(&mut simd, &bytes).unwrap();
        assert_eq!(Dynamic::<Items>::to_model(&mut simd, tree).unwrap(), items);
        let tree = Dynamic::<Items>::decode_tree(&mut SonicRsTree, &bytes).unwrap();
        assert_eq!(tree["items"][0]["price"].as_f64(), Some(1.25));
        assert_eq!(Dynamic::<Items>::to_model(&mut SonicRsTree, tree).unwrap(), items);
    }

    /// Every backend's encoder, for every payload and framing the registry holds, writes the
    /// bytes serde_json writes: the A/B ratios compare decoders on the same input.
    #[test]
    fn every_backend_writes_the_bytes_serde_json_writes_for_every_payload_and_framing() {
        use std::collections::BTreeMap;
        let registry = Registry::of_formats(|format| format == "json");
        let mut codecs: BTreeMap<(&str, Framing), BTreeMap<&str, Vec<u8>>> = BTreeMap::new();
        for encoder in &registry.encoders {
            let id = &encoder.id;
            let bytes = encoder.encode().unwrap();
            let previous = codecs
                .entry((&id.payload, id.framing))
                .or_default()
                .insert(&id.backend, bytes);
            assert!(
                previous.is_none(),
                "two encoders of {} {:?}",
                id.backend,
                id.framing
            );
        }
        // 9 payloads and 2 corpora as documents, 3 batch payloads also as array and NDJSON.
        assert_eq!(codecs.len(), 9 + 2 + 3 * 2);
        for ((payload, framing), by_backend) in &codecs {
            let backends: Vec<&str> = by_backend.keys().copied().collect();
            let mut expected = vec!["serde_json", "simd-json", "sonic-rs"];
            // nanoserde's JSON mode: document framing, the built-in payloads.
            let corpus = crate::payload::corpus_specs()
                .iter()
                .any(|spec| spec.name == *payload);
            if cfg!(feature = "nanoserde") && *framing == Framing::Document && !corpus {
                expected.insert(0, "nanoserde");
            }
            assert_eq!(backends, expected, "{payload} {framing:?}");
            let reference = &by_backend["serde_json"];
            for (backend, bytes) in by_backend {
                assert!(
                    bytes == reference,
                    "{backend} writes other bytes than serde_json for {payload} {framing:?}: {} vs {} bytes",
                    bytes.len(),
                    reference.len()
                );
            }
        }
    }

    fn order_json() -> Vec<u8> {
        serde_json::to_vec(crate::payload::value_of::<Order>("order").unwrap()).unwrap()
    }

    #[test]
    fn lazy_access_folds_what_the_owned_value_folds_and_refuses_what_it_cannot_read() {
        let order = crate::payload::value_of::<Order>("order").unwrap();
        let json = order_json();
        let all = Access::<Order>::access(&mut LazyReadAll, &json).unwrap();
        assert_eq!(all, fields::digest_all(order));
        let mut route = LazyReadRoute::<Order>::new();
        assert_eq!(route.access(&json).unwrap(), fields::digest_route(order));
        // By key, not by position: the same members in another order read the same.
        let mut tree: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&json).unwrap();
        let first = tree.keys().next().unwrap().clone();
        let moved = tree.remove(&first).unwrap();
        tree.insert(first, moved);
        let reordered = serde_json::to_vec(&tree).unwrap();
        assert_ne!(reordered, json);
        assert_eq!(
            Access::<Order>::access(&mut LazyReadAll, &reordered).unwrap(),
            all
        );
        assert_eq!(route.access(&reordered).unwrap(), fields::digest_route(order));
        // A missing field, or one of another type, is an error naming it.
        let without = String::from_utf8(json.clone())
            .unwrap()
            .replace("\"customer_id\"", "\"client\"");
        for access in [
            Access::<Order>::access(&mut LazyReadAll, without.as_bytes()),
            route.access(without.as_bytes()),
        ] {
            assert!(format!("{:#}", access.unwrap_err()).contains("customer_id"));
        }
        let quoted = String::from_utf8(json)
            .unwrap()
            .replace("\"quantity\":", "\"quantity\":\"x\",\"q\":");
        let error = Access::<Order>::access(&mut LazyReadAll, quoted.as_bytes()).unwrap_err();
        assert!(format!("{error:#}").contains("field `quantity`"), "{error:#}");
    }

    /// What each lazy access validates (see the module doc): access-all everything up to the
    /// closing brace, access-partial only up to the last routing field.
    #[test]
    fn lazy_access_validates_only_the_text_it_scans() {
        let json = order_json();
        let mut route = LazyReadRoute::<Order>::new();
        // The routing fields are the first two members, so a tail cut after them goes unseen by
        // access-partial; access-all and the typed decode refuse it.
        let find = |needle: &[u8]| json.windows(needle.len()).position(|window| window == needle);
        let cut = &json[..find(b"\"created_at_ms\"").unwrap() + 3];
        assert!(route.access(cut).is_ok());
        assert!(Access::<Order>::access(&mut LazyReadAll, cut).is_err());
        assert!(SonicRs.read::<Order>(cut).is_err());
        // Invalid UTF-8 in a later string: the same.
        let mut bad_utf8 = json.clone();
        bad_utf8[find(b"@example").unwrap()] = 0xFF;
        assert!(route.access(&bad_utf8).is_ok());
        assert!(Access::<Order>::access(&mut LazyReadAll, &bad_utf8).is_err());
        assert!(SonicRs.read::<Order>(&bad_utf8).is_err());
        // Trailing text after the closing brace: only the typed decode looks there.
        let mut trailing = json.clone();
        trailing.extend_from_slice(b" x");
        assert!(route.access(&trailing).is_ok());
        assert!(Access::<Order>::access(&mut LazyReadAll, &trailing).is_ok());
        assert!(SonicRs.read::<Order>(&trailing).is_err());
    }
}

/// Where the JSON backends are known to differ, each backend's behaviour is pinned here (and
/// tabled in docs/formats.md), instead of assuming they agree.
#[cfg(test)]
mod differential {
    use sonic_rs::JsonValueTrait;

    fn serde_json_tree(text: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }

    fn simd_json_tree(text: &str) -> Result<simd_json::OwnedValue, String> {
        simd_json::to_owned_value(&mut text.as_bytes().to_vec()).map_err(|error| error.to_string())
    }

    fn simd_json_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        simd_json::serde::from_slice(&mut text.as_bytes().to_vec()).map_err(|error| error.to_string())
    }

    fn sonic_rs_tree(text: &str) -> Result<sonic_rs::Value, String> {
        sonic_rs::from_slice(text.as_bytes()).map_err(|error| error.to_string())
    }

    fn sonic_rs_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        sonic_rs::from_slice(text.as_bytes()).map_err(|error| error.to_string())
    }

    #[test]
    fn integers_beyond_u64_become_lossy_floats_in_serde_json_and_sonic_rs_and_errors_in_simd_json() {
        let text = "18446744073709551616";
        assert_eq!(
            serde_json_tree(text).unwrap().as_f64(),
            Some(1.8446744073709552e19)
        );
        assert!(simd_json_tree(text).is_err());
        assert_eq!(sonic_rs_tree(text).unwrap().as_f64(), Some(1.8446744073709552e19));
        assert!(serde_json::from_str::<i64>(text).is_err());
        assert!(simd_json_typed::<i64>(text).is_err());
        assert!(sonic_rs_typed::<i64>(text).is_err());
        let long_integer = "123456789012345678901234567890";
        assert!(serde_json_tree(long_integer).unwrap().is_f64());
        assert!(simd_json_tree(long_integer).is_err());
        assert!(sonic_rs_tree(long_integer).unwrap().is_f64());
    }

    #[test]
    fn integers_between_i64_and_u64_are_u64_in_all_three_and_not_i64() {
        let text = "9223372036854775808";
        assert_eq!(
            serde_json_tree(text).unwrap().as_u64(),
            Some(9_223_372_036_854_775_808)
        );
        assert_eq!(
            simd_json_tree(text).unwrap(),
            simd_json::OwnedValue::from(9_223_372_036_854_775_808u64)
        );
        assert_eq!(
            sonic_rs_tree(text).unwrap().as_u64(),
            Some(9_223_372_036_854_775_808)
        );
        assert!(serde_json::from_str::<i64>(text).is_err());
        assert!(simd_json_typed::<i64>(text).is_err());
        assert!(sonic_rs_typed::<i64>(text).is_err());
    }

    #[test]
    fn negative_zero_keeps_its_sign_in_serde_json_in_simd_json_only_as_minus_zero_point_zero_never_in_sonic_rs()
     {
        let serde_zero = serde_json::from_str::<f64>("-0").unwrap();
        let simd_zero = simd_json_typed::<f64>("-0").unwrap();
        assert!(serde_zero == 0.0 && serde_zero.is_sign_negative());
        assert!(simd_zero == 0.0 && simd_zero.is_sign_positive());
        // serde_json reads `-0` as a float, so it is not an i64; simd-json reads integer 0.
        assert!(serde_json::from_str::<i64>("-0").is_err());
        assert_eq!(simd_json_typed::<i64>("-0").unwrap(), 0);
        // Written as `-0.0` (what all three write for -0.0), serde_json and simd-json keep the
        // sign; sonic-rs reads +0.0 from both spellings, typed or into its tree, and `-0` is a
        // float for it too.
        assert!(serde_json::from_str::<f64>("-0.0").unwrap().is_sign_negative());
        assert!(simd_json_typed::<f64>("-0.0").unwrap().is_sign_negative());
        for text in ["-0", "-0.0"] {
            let sonic_zero = sonic_rs_typed::<f64>(text).unwrap();
            assert!(sonic_zero == 0.0 && sonic_zero.is_sign_positive(), "{text}");
            let tree_zero = sonic_rs_tree(text).unwrap().as_f64().unwrap();
            assert!(tree_zero == 0.0 && tree_zero.is_sign_positive(), "{text}");
            assert!(sonic_rs_typed::<i64>(text).is_err(), "{text}");
        }
        assert_eq!(sonic_rs::to_string(&-0.0f64).unwrap(), "-0.0");
    }

    #[test]
    fn very_long_numbers_round_to_the_same_double() {
        let text = "3.14159265358979323846264338327950288419716939937510582097494459";
        assert_eq!(serde_json::from_str::<f64>(text).unwrap(), std::f64::consts::PI);
        assert_eq!(simd_json_typed::<f64>(text).unwrap(), std::f64::consts::PI);
        assert_eq!(sonic_rs_typed::<f64>(text).unwrap(), std::f64::consts::PI);
        assert!(serde_json::from_str::<f64>("1e400").is_err());
        assert!(simd_json_typed::<f64>("1e400").is_err());
        assert!(sonic_rs_typed::<f64>("1e400").is_err());
        assert!(sonic_rs_tree("1e400").is_err());
    }

    /// serde_json without `float_roundtrip` is one ULP off here; serbench builds it with the
    /// feature, and the SIMD parsers are correctly rounded.
    #[test]
    fn a_seventeen_digit_float_is_read_exactly_by_every_backend() {
        let float = -1.0077660691570425e185;
        let text = serde_json::to_string(&float).unwrap();
        assert_eq!(serde_json::from_str::<f64>(&text).unwrap(), float);
        assert_eq!(simd_json_typed::<f64>(&text).unwrap(), float);
        assert_eq!(sonic_rs_typed::<f64>(&text).unwrap(), float);
    }

    /// The payloads hold no float that needs an exponent, so every backend writes the same
    /// bytes for them (tested above); outside them, simd-json drops the exponent's `+`.
    #[test]
    fn large_floats_are_written_with_e_plus_by_serde_json_and_sonic_rs_and_with_e_by_simd_json() {
        for (float, with_plus) in [(1e21, "1e+21"), (1.5e300, "1.5e+300"), (1e16, "1e+16")] {
            assert_eq!(serde_json::to_string(&float).unwrap(), with_plus);
            assert_eq!(sonic_rs::to_string(&float).unwrap(), with_plus);
            assert_eq!(simd_json::to_string(&float).unwrap(), with_plus.replace('+', ""));
        }
        for float in [1e-7, 5e-324, 0.30000000000000004, 1e15, 0.00001] {
            let text = serde_json::to_string(&float).unwrap();
            assert_eq!(sonic_rs::to_string(&float).unwrap(), text);
            assert_eq!(simd_json::to_string(&float).unwrap(), text);
        }
        // Non-finite floats: `null` from serde_json and sonic-rs alike.
        assert_eq!(serde_json::to_string(&f64::NAN).unwrap(), "null");
        assert_eq!(sonic_rs::to_string(&f64::INFINITY).unwrap(), "null");
    }

    #[test]
    fn duplicate_keys_last_wins_in_serde_json_tree_both_kept_in_simd_json_and_sonic_rs_trees_typed_errors() {
        use simd_json::prelude::*;
        let text = r#"{"a":1,"a":2}"#;
        assert_eq!(serde_json_tree(text).unwrap(), serde_json::json!({"a": 2}));
        let simd = simd_json_tree(text).unwrap();
        assert_eq!(simd.as_object().unwrap().len(), 2, "{simd:?}");
        let sonic = sonic_rs_tree(text).unwrap();
        assert_eq!(sonic_rs::to_string(&sonic).unwrap(), text);
        // Indexing sonic-rs's tree finds the first.
        assert_eq!(sonic["a"].as_i64(), Some(1));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Single {
            a: i64,
        }
        assert!(
            serde_json::from_str::<Single>(text)
                .unwrap_err()
                .to_string()
                .contains("duplicate field")
        );
        assert!(
            simd_json_typed::<Single>(text)
                .unwrap_err()
                .contains("duplicate field")
        );
        assert!(
            sonic_rs_typed::<Single>(text)
                .unwrap_err()
                .contains("duplicate field")
        );
        // sonic-rs's lazy `get_many` (access-partial) reads the first as well.
        let mut tree = sonic_rs::PointerTree::new();
        tree.add_path(["a"]);
        let found = sonic_rs::get_many(text, &tree).unwrap();
        assert_eq!(found[0].as_ref().unwrap().as_raw_str(), "1");
    }

    /// Nesting: serde_json refuses 128 levels, sonic-rs's typed (serde) decode 255; but a
    /// container sonic-rs skips (an unknown field's value, or one where a scalar or struct is
    /// expected, skipped whole to report the type error) is skipped by recursion without a
    /// limit, as are its value tree and its lazy access: `serbench robustness` sees every
    /// sonic-rs decoder overflow its stack on 2,000 unclosed brackets.
    #[test]
    fn sonic_rs_limits_the_depth_of_what_it_decodes_not_of_what_it_skips() {
        // A debug build's frames are large: 254 levels need more than a test thread's stack.
        let check = || {
            let nested = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
            assert!(sonic_rs_typed::<serde_json::Value>(&nested(254)).is_ok());
            // Its message has serde_json's number, not its own.
            let error = sonic_rs_typed::<serde_json::Value>(&nested(255)).unwrap_err();
            assert!(
                error.contains("more than 128 layers deep at line 1 column 255"),
                "{error}"
            );
            assert!(serde_json::from_str::<serde_json::Value>(&nested(127)).is_ok());
            assert!(serde_json::from_str::<serde_json::Value>(&nested(128)).is_err());
            // No limit for sonic-rs's own tree, nor for what it skips.
            assert!(sonic_rs_tree(&nested(1000)).is_ok());
            let error = sonic_rs_typed::<i64>(&nested(1000)).unwrap_err();
            assert!(error.contains("invalid type: sequence"), "{error}");
            #[derive(serde::Deserialize)]
            struct Known {
                a: i64,
            }
            let unknown = format!(r#"{{"unknown":{},"a":1}}"#, nested(1000));
            assert_eq!(sonic_rs_typed::<Known>(&unknown).unwrap().a, 1);
        };
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(check)
            .unwrap()
            .join()
            .unwrap();
    }
}
#[cfg(test)]
mod sonic_data_tests {
    use super::{SonicRs, TreeLibrary};

    /// `sonic_rs::to_value` writes an object of more than 32 members in a hashed order that
    /// changes from call to call; the tree serbench builds keeps the file's order.
    #[test]
    fn a_wide_object_keeps_its_member_order() {
        let object: serde_json::Map<String, serde_json::Value> = (0..40)
            .map(|index| (format!("k{index:02}"), serde_json::Value::from(index)))
            .collect();
        let value = serde_json::Value::Object(object);
        let expected = serde_json::to_string(&value).unwrap();
        for _ in 0..5 {
            assert_eq!(
                sonic_rs::to_string(&SonicRs::from_json(&value)).unwrap(),
                expected
            );
        }
    }

    /// The proof's comparison is linear in the members and stricter than sonic-rs's `==`:
    /// members in another order are another encoding.
    #[test]
    fn trees_are_compared_member_by_member_in_order() {
        let tree = |text: &str| sonic_rs::from_str::<sonic_rs::Value>(text).unwrap();
        let one = tree(r#"{"a": [1, {"b": null}], "c": "x"}"#);
        assert!(SonicRs::same(&one, &tree(r#"{"a": [1, {"b": null}], "c": "x"}"#)));
        let reordered = tree(r#"{"c": "x", "a": [1, {"b": null}]}"#);
        assert!(one == reordered && !SonicRs::same(&one, &reordered));
        assert!(!SonicRs::same(&one, &tree(r#"{"a": [1, {"b": 0}], "c": "x"}"#)));
        assert!(!SonicRs::same(&one, &tree(r#"{"a": [1], "c": "x"}"#)));
        assert!(!SonicRs::same(&tree("[1]"), &tree(r#"{"1": 1}"#)));
    }
}

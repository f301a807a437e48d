//! Apache Fory (crate `fory` 1.7) with its native derives (`ForyStruct` on every model struct,
//! `ForyEnum` on `OrderStatus`), as two backends:
//!
//! - `fory[xlang]`: the cross-language wire format (header bit `xlang` set), readable by the
//!   Java, Python, C++, Go and JavaScript implementations.
//! - `fory[native]`: the Rust-only native mode (`xlang(false)`).
//!
//! Mode: both backends run schema-consistent (`compatible(false)`). Fory defaults to compatible
//! mode (schema evolution; each message carries the type metadata of every struct it holds),
//! and its docs recommend `compatible(false)` "when every reader and writer always uses the
//! same schema and you want faster serialization and smaller size", which is this benchmark's
//! situation: both ends are built from the same Rust types. A writer and a reader are always
//! built the same way; Fory rejects a message whose header disagrees with the reader's mode.
//!
//! Struct version hash: the xlang spec lays out a schema-consistent struct as a 4-byte type
//! hash followed by its fields, and the builder turns `check_struct_version` on for xlang
//! same-schema mode, so every struct value (each `Item` of `vec-big`, too) carries 4 bytes that
//! the reader checks. Native mode keeps the library default (off), so `native` is smaller by
//! exactly 4 bytes per struct value. Both are pinned explicitly because the builder's result
//! otherwise depends on the order of its `xlang`/`compatible` calls. UTF-8 checking of decoded
//! strings (`check_string_read`) stays at its default (on) in both modes.
//!
//! Registration: every model type (nested ones and the enum included) is registered by numeric
//! id, the compact form (a named registration writes namespace and type name strings), once,
//! when the codec is built, outside any timing. Each codec registers the whole model, as an
//! application registers its types once on its one `Fory`; registering types a payload does not
//! use costs nothing per message.
//!
//! Typed data (`--typed`): the generated structs derive `ForyStruct`, and the generated root type's
//! [`Registered`] impl registers every one of them by id (1, 2, ... in the order they are
//! written), as the model's are.
//!
//! Buffer policy: encodes with `Fory::serialize_to`, which writes straight into the harness's
//! reused, cleared output buffer. Decoding reads the borrowed slice and builds owned values.
//! Fory keeps its own write/read contexts per thread and per `Fory` instance, reused across
//! calls.

use anyhow::{Context, Result};
use fory::Fory;
use std::hint::black_box;

use super::{
    BackendDoc, DataSupport, Fidelity, Format, NEEDS_RUST_TYPES, Registry, TypedBorrowed, TypedDerive,
    TypedItems, TypedModule, TypedSupport,
};
use crate::arm::{Backend, Codec, Operation};
use crate::payload::{
    Address, CheckoutRequest, CheckoutResponse, Item, Items, Keyed, LineItem, MetricSample, Model, Order,
    OrderStatus, Payload, PaymentMethod, Reading, Readings, RequestMeta, ResponseMeta, ServiceInfo, Shipment,
    TelemetryEvent, Visit, visit_all,
};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str = "fory's `Serializer` is `'static` and reads strings into owned `String`s: no type of its derive can borrow the input";

pub static FORMAT: Format = Format {
    name: "fory",
    about: "Apache Fory, native derive, schema-consistent: xlang and Rust-native modes",
    colour: [0x55, 0xDD, 0x88],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "compatible mode (its own variant): fields matched by name and type, added and removed fields tolerated; the default mode needs identical types",
        languages: &["Java", "Python", "Go", "Rust", "JavaScript", "C++"],
        languages_source: "https://fory.apache.org/docs/ (cross-language serialization guide)",
    },
    backends: &[
        BackendDoc {
            backend: "fory",
            variant: "xlang",
            crates: &["fory"],
            crate_note: "",
            schema: "types registered by id in code",
            buffer_policy: "the cross-language format, schema-consistent mode; `serialize_to` into a reused `Vec`",
        },
        BackendDoc {
            backend: "fory",
            variant: "native",
            crates: &["fory"],
            crate_note: "",
            schema: "types registered by id in code",
            buffer_policy: "Rust-native mode, schema-consistent; `serialize_to` into a reused `Vec`",
        },
    ],
    fidelity: &[Fidelity {
        backend: "fory",
        variant: "xlang",
        payload: "order",
        operation: Operation::Decode,
        case: fory_xlang_order_decode,
    }],
    register: |registry| {
        visit_all(&mut ForyFormat(registry));
        registry.unsupported_borrowed(NO_BORROWED);
        registry
            .unsupported_corpora("serbench has no Fory derive and type registration for the corpus types");
    },
    typed: TypedSupport::Derive(&TypedDerive {
        derives: &["fory::ForyStruct"],
        crates: &["fory"],
        items: typed_items,
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Unsupported(NEEDS_RUST_TYPES),
    evolution: super::EvolutionSupport::Unmeasured(
        "Fory's compatible mode needs its derive; not wired into `evolve` yet",
    ),
};

/// What Fory needs of a model type: the serializer its derive generates, registrable as a
/// struct and serializing to and from itself.
pub trait Native: ::fory::StructSerializer + ::fory::Serializer<Target = Self> {}
impl<T: ::fory::StructSerializer + ::fory::Serializer<Target = T>> Native for T {}

struct ForyFormat<'a>(&'a mut Registry);

impl<P: Model + Native> Visit<P> for ForyFormat<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        self.0
            .codec(payload, Backend::new("fory").variant("xlang"), ForyCodec::xlang);
        self.0
            .codec(payload, Backend::new("fory").variant("native"), ForyCodec::native);
    }
}

/// The wire mode a `Fory` instance writes and expects to read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WireMode {
    Xlang,
    Native,
}

/// A generated payload type that registers itself and every type it holds (`--typed`).
pub trait Registered {
    fn register(fory: &mut Fory) -> Result<(), ::fory::Error>;
}

/// The typed arms of a generated payload type (`--typed`): both wire modes.
pub fn register_typed<P: Model + Native + Registered>(registry: &mut Registry, payload: &Payload<P>) {
    registry.codec(
        payload,
        Backend::new("fory").variant("xlang"),
        ForyCodec::typed::<P, true>,
    );
    registry.codec(
        payload,
        Backend::new("fory").variant("native"),
        ForyCodec::typed::<P, false>,
    );
}

/// The generated root type's [`Registered`] impl: every struct by id, in the order written.
fn typed_items(module: &TypedModule) -> TypedItems {
    let registrations: String = (module.structs.iter().enumerate())
        .map(|(index, record)| format!("        fory.register::<{}>({})?;\n", record.name, index + 1))
        .collect();
    TypedItems {
        rust: format!(
            "/// Fory's registration of every type of this payload, by id.\nimpl serbench::format::fory::Registered for {root} {{\n    fn register(fory: &mut fory::Fory) -> Result<(), fory::Error> {{\n{registrations}        Ok(())\n    }}\n}}\n",
            root = module.root,
        ),
        ..TypedItems::default()
    }
}

/// Builds a schema-consistent `Fory` in `mode` with every model type registered.
pub fn build(mode: WireMode) -> Result<Fory> {
    let mut fory = builder(mode);
    register_model(&mut fory).with_context(|| format!("registering the model types ({mode:?})"))?;
    Ok(fory)
}

/// A schema-consistent `Fory` in `mode`, nothing registered yet.
fn builder(mode: WireMode) -> Fory {
    let xlang = mode == WireMode::Xlang;
    Fory::builder()
        .xlang(xlang)
        .compatible(false)
        .check_struct_version(xlang)
        .build()
}

/// Registers every model type with a fixed id: both ends of a wire must use the same ids.
fn register_model(fory: &mut Fory) -> Result<()> {
    fory.register::<Reading>(1)?;
    fory.register::<Readings>(2)?;
    fory.register::<Order>(3)?;
    fory.register::<ServiceInfo>(4)?;
    fory.register::<MetricSample>(5)?;
    fory.register::<TelemetryEvent>(6)?;
    fory.register::<RequestMeta>(7)?;
    fory.register::<LineItem>(8)?;
    fory.register::<Address>(9)?;
    fory.register::<PaymentMethod>(10)?;
    fory.register::<CheckoutRequest>(11)?;
    fory.register::<ResponseMeta>(12)?;
    fory.register::<OrderStatus>(13)?;
    fory.register::<Shipment>(14)?;
    fory.register::<CheckoutResponse>(15)?;
    fory.register::<Item>(16)?;
    fory.register::<Items>(17)?;
    fory.register::<Keyed>(18)?;
    Ok(())
}

pub struct ForyCodec {
    fory: Fory,
    mode: WireMode,
}

impl ForyCodec {
    pub fn new(mode: WireMode) -> Self {
        // The registry's `make` cannot fail; registration only fails on an id or type clash in
        // `register_model`, a programming error that the first arm would report anyway.
        let fory = build(mode).unwrap_or_else(|error| panic!("building Fory: {error:#}"));
        ForyCodec { fory, mode }
    }

    pub fn xlang() -> Self {
        Self::new(WireMode::Xlang)
    }

    pub fn native() -> Self {
        Self::new(WireMode::Native)
    }

    /// A codec whose `Fory` has the generated payload type `P` registered (`XLANG`: the mode).
    fn typed<P: Registered, const XLANG: bool>() -> Self {
        let mode = if XLANG { WireMode::Xlang } else { WireMode::Native };
        let mut fory = builder(mode);
        P::register(&mut fory)
            .unwrap_or_else(|error| panic!("registering the generated types ({mode:?}): {error}"));
        ForyCodec { fory, mode }
    }
}

impl<P: Model + Native> Codec<P> for ForyCodec {
    fn encode<'a>(&'a mut self, value: &P, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        self.fory
            .serialize_to(out, value)
            .with_context(|| format!("Fory {:?} serialize", self.mode))?;
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<P> {
        self.fory
            .deserialize(bytes)
            .with_context(|| format!("Fory {:?} deserialize", self.mode))
    }
}

/// Fidelity: a schema-consistent xlang `Fory` with `Order` registered, deserializing `order`.
fn fory_xlang_order_decode() -> Box<dyn FnMut()> {
    let order: &Order = crate::payload::value_of("order").expect("order is an Order");
    let mut fory = Fory::builder()
        .xlang(true)
        .compatible(false)
        .check_struct_version(true)
        .build();
    fory.register::<Order>(3).expect("Order registers");
    let bytes = fory.serialize(order).expect("order encodes");
    Box::new(move || {
        black_box(fory.deserialize::<Order>(black_box(&bytes)).expect("it decodes"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode<P: Model + Native>(codec: &mut ForyCodec, value: &P) -> Vec<u8> {
        let mut out = Vec::new();
        Codec::<P>::encode(codec, value, &mut out).unwrap().to_vec()
    }

    /// Encodes each payload with two fresh `Fory` instances and with one instance twice: the
    /// bytes depend only on the value (no per-instance or per-call state), so a fresh process
    /// writes them too.
    #[test]
    fn bytes_are_deterministic_in_both_modes() {
        struct Check;
        impl<P: Model + Native> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                for mode in [WireMode::Xlang, WireMode::Native] {
                    let mut first = ForyCodec::new(mode);
                    let bytes = encode(&mut first, value);
                    assert_eq!(
                        bytes,
                        encode(&mut ForyCodec::new(mode), value),
                        "{} {mode:?}",
                        payload.spec.name
                    );
                    assert_eq!(
                        bytes,
                        encode(&mut first, value),
                        "{} {mode:?} reused",
                        payload.spec.name
                    );
                }
            }
        }
        visit_all(&mut Check);
    }

    #[test]
    fn every_payload_round_trips_in_both_modes() {
        struct Check;
        impl<P: Model + Native> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                for mode in [WireMode::Xlang, WireMode::Native] {
                    let bytes = encode(&mut ForyCodec::new(mode), value);
                    let decoded: P = Codec::<P>::decode(&mut ForyCodec::new(mode), &bytes)
                        .unwrap_or_else(|error| panic!("{} {mode:?}: {error:#}", payload.spec.name));
                    assert_eq!(&decoded, value, "{} {mode:?}", payload.spec.name);
                }
            }
        }
        visit_all(&mut Check);
    }

    /// The header says which mode wrote a message, and a reader of the other mode refuses it.
    #[test]
    fn writer_and_reader_must_agree_on_the_mode() {
        struct Check;
        impl<P: Model + Native> Visit<P> for Check {
            fn payload(&mut self, payload: &Payload<P>) {
                let value = (payload.value)();
                let name = payload.spec.name;
                let xlang_bytes = encode(&mut ForyCodec::xlang(), value);
                let native_bytes = encode(&mut ForyCodec::native(), value);
                assert_ne!(xlang_bytes, native_bytes, "{name}");
                let misread = Codec::<P>::decode(&mut ForyCodec::xlang(), &native_bytes);
                assert!(misread.is_err(), "{name}: xlang reader accepted native bytes");
                let misread = Codec::<P>::decode(&mut ForyCodec::native(), &xlang_bytes);
                assert!(misread.is_err(), "{name}: native reader accepted xlang bytes");
            }
        }
        visit_all(&mut Check);
    }
}

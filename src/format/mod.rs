//! The format registry: one file per format, one line per format in [`all`], one Cargo
//! feature per format (named like the format; `default` in Cargo.toml lists them all).
//!
//! A format file exposes `pub static FORMAT: Format`, whose `register` adds the format's codecs
//! for every payload to the [`Registry`](crate::arm::Registry), and lists what it cannot carry.

use crate::arm::Registry;

#[cfg(feature = "avro")]
pub mod avro;
#[cfg(feature = "bincode")]
pub mod bincode;
#[cfg(feature = "bitcode")]
pub mod bitcode;
#[cfg(feature = "bson")]
pub mod bson;
#[cfg(feature = "csv")]
pub mod csv;
#[cfg(feature = "dbus")]
pub mod dbus;
#[cfg(feature = "flatbuffers")]
pub mod flatbuffers;
#[cfg(feature = "fory")]
pub mod fory;
#[cfg(feature = "json")]
pub mod json;
#[cfg(feature = "postcard")]
pub mod postcard;
#[cfg(feature = "protobuf")]
pub mod protobuf;

/// A format: its name (also its Cargo feature), one line about it, and its registration.
pub struct Format {
    pub name: &'static str,
    pub about: &'static str,
    pub register: fn(&mut Registry),
}

/// Every enabled format, in the order reports show them.
// One cfg'd push per format keeps each format's registration to one line.
#[allow(clippy::vec_init_then_push, unused_mut)]
pub fn all() -> Vec<&'static Format> {
    let mut formats = Vec::new();
    #[cfg(feature = "json")]
    formats.push(&json::FORMAT);
    #[cfg(feature = "bincode")]
    formats.push(&bincode::FORMAT);
    #[cfg(feature = "bitcode")]
    formats.push(&bitcode::FORMAT);
    #[cfg(feature = "postcard")]
    formats.push(&postcard::FORMAT);
    #[cfg(feature = "bson")]
    formats.push(&bson::FORMAT);
    #[cfg(feature = "dbus")]
    formats.push(&dbus::FORMAT);
    #[cfg(feature = "csv")]
    formats.push(&csv::FORMAT);
    #[cfg(feature = "protobuf")]
    formats.push(&protobuf::FORMAT);
    #[cfg(feature = "flatbuffers")]
    formats.push(&flatbuffers::FORMAT);
    #[cfg(feature = "fory")]
    formats.push(&fory::FORMAT);
    #[cfg(feature = "avro")]
    formats.push(&avro::FORMAT);
    formats
}

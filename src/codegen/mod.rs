//! Writing Rust source for a data schema: the types of a user's data with each format's derives
//! ([`rust`]) under names no format's own generated code takes ([`names`]). The typed build that
//! uses them is [`crate::typed`]; FlatBuffers' and Cap'n Proto's typed readers use them too.

pub mod names;
pub mod rust;

/// FNV-1a, 64 bits, in hex: a cache key, not a checksum against an adversary.
pub(crate) fn key_of(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

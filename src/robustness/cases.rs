//! The hostile inputs: each case is a small description ([`Mutation`]) of how to derive the
//! input from a decoder's real encoded payload, planned deterministically from the seed and
//! the payload's length alone, so the parent (which attributes a crash to a case) and the
//! worker (which runs the case) build the same list without exchanging any input bytes, and
//! every decoder of the same bytes (e.g. serde_json and simd-json) sees the same cases.

use crate::payload::SplitMix64;
pub use crate::schema::robustness::CaseKind;

/// A value spliced over the payload where a length or count might sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bomb {
    pub name: &'static str,
    pub bytes: &'static [u8],
    /// How many payload bytes the pattern replaces: its own width for fixed-width integers,
    /// one byte for varints (a one-byte length grown into a ten-byte one).
    pub replaces: usize,
}

/// Format-agnostic bombs: the maximum of every common integer width (which tends to hit
/// overflow checks or `capacity overflow` panics) and moderate huge values (2^30, 2^40),
/// which pass overflow checks and go straight to the allocator.
pub const BOMBS: [Bomb; 14] = [
    Bomb {
        name: "u8-max",
        bytes: &[0xFF],
        replaces: 1,
    },
    Bomb {
        name: "u16-max",
        bytes: &[0xFF, 0xFF],
        replaces: 2,
    },
    Bomb {
        name: "u32-max",
        bytes: &[0xFF; 4],
        replaces: 4,
    },
    Bomb {
        name: "i32-max-le",
        bytes: &[0xFF, 0xFF, 0xFF, 0x7F],
        replaces: 4,
    },
    Bomb {
        name: "i32-max-be",
        bytes: &[0x7F, 0xFF, 0xFF, 0xFF],
        replaces: 4,
    },
    Bomb {
        name: "u32-2^30-le",
        bytes: &[0x00, 0x00, 0x00, 0x40],
        replaces: 4,
    },
    Bomb {
        name: "u64-max",
        bytes: &[0xFF; 8],
        replaces: 8,
    },
    Bomb {
        name: "u64-2^40-le",
        bytes: &[0, 0, 0, 0, 0, 0x01, 0, 0],
        replaces: 8,
    },
    Bomb {
        name: "varint-u64-max",
        bytes: &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
        replaces: 1,
    },
    Bomb {
        name: "varint-2^30",
        bytes: &[0x80, 0x80, 0x80, 0x80, 0x04],
        replaces: 1,
    },
    Bomb {
        name: "varint-2^40",
        bytes: &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20],
        replaces: 1,
    },
    // bincode's varint: 251/252/253 announce a u16/u32/u64 that follows.
    Bomb {
        name: "bincode-varint-u64-max",
        bytes: &[0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        replaces: 1,
    },
    Bomb {
        name: "bincode-varint-2^30",
        bytes: &[0xFC, 0x00, 0x00, 0x00, 0x40],
        replaces: 1,
    },
    Bomb {
        name: "bincode-varint-2^40",
        bytes: &[0xFD, 0, 0, 0, 0, 0, 0x01, 0, 0],
        replaces: 1,
    },
];

/// CBOR heads (RFC 8949 §3) whose 8-byte argument announces 2^40 or 2^64 - 1 items or bytes,
/// each spliced over one byte where an item's head may sit: the generic patterns above are
/// CBOR's "break" (0xFF) or reserved heads, so they never announce a CBOR length.
const CBOR_HEADS: [Bomb; 6] = [
    Bomb {
        name: "cbor-array-2^40",
        bytes: &[0x9B, 0, 0, 0x01, 0, 0, 0, 0, 0],
        replaces: 1,
    },
    Bomb {
        name: "cbor-map-2^40",
        bytes: &[0xBB, 0, 0, 0x01, 0, 0, 0, 0, 0],
        replaces: 1,
    },
    Bomb {
        name: "cbor-text-2^40",
        bytes: &[0x7B, 0, 0, 0x01, 0, 0, 0, 0, 0],
        replaces: 1,
    },
    Bomb {
        name: "cbor-bytes-2^40",
        bytes: &[0x5B, 0, 0, 0x01, 0, 0, 0, 0, 0],
        replaces: 1,
    },
    Bomb {
        name: "cbor-array-u64-max",
        bytes: &[0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        replaces: 1,
    },
    Bomb {
        name: "cbor-text-u64-max",
        bytes: &[0x7B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        replaces: 1,
    },
];

/// The bombs of a CBOR decoder: every generic one, then the CBOR heads.
const CBOR_BOMBS: [Bomb; BOMBS.len() + CBOR_HEADS.len()] = concat(&BOMBS, &CBOR_HEADS);

const fn concat<const N: usize>(first: &[Bomb], second: &[Bomb]) -> [Bomb; N] {
    let mut all = [first[0]; N];
    let mut index = 0;
    while index < N {
        all[index] = if index < first.len() {
            first[index]
        } else {
            second[index - first.len()]
        };
        index += 1;
    }
    all
}

impl Bomb {
    /// The length bombs spliced into a format's payloads.
    fn for_format(format: &str) -> &'static [Bomb] {
        match format {
            "cbor" => &CBOR_BOMBS,
            _ => &BOMBS,
        }
    }
}

/// A nesting input: `depth` levels of one container inside the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nest {
    /// `[[[[...` (unclosed, as an attacker would not bother to close them).
    JsonArrays,
    /// `{"a":{"a":...` (unclosed).
    JsonObjects,
    /// Embedded documents `{a: {a: ...}}`, every length prefix consistent.
    BsonDocuments,
    /// Start-group tags of field 1 (wire type 3), each group opened inside the previous.
    ProtobufGroups,
    /// Field 1 as a length-delimited message inside a message, every length consistent.
    ProtobufMessages,
    /// CBOR arrays of one item, each holding the next (`0x81 0x81 ...`).
    CborArrays,
    /// CBOR maps of one entry, key "a", each value the next map (`0xA1 0x61 0x61 ...`).
    CborMaps,
}

impl Nest {
    fn name(self) -> &'static str {
        match self {
            Nest::JsonArrays => "json-arrays",
            Nest::JsonObjects => "json-objects",
            Nest::BsonDocuments => "bson-documents",
            Nest::ProtobufGroups => "protobuf-groups",
            Nest::ProtobufMessages => "protobuf-messages",
            Nest::CborArrays => "cbor-arrays",
            Nest::CborMaps => "cbor-maps",
        }
    }

    /// The nesting inputs that make sense for a format.
    fn for_format(format: &str) -> &'static [Nest] {
        match format {
            "json" => &[Nest::JsonArrays, Nest::JsonObjects],
            "bson" => &[Nest::BsonDocuments],
            "protobuf" => &[Nest::ProtobufGroups, Nest::ProtobufMessages],
            "cbor" => &[Nest::CborArrays, Nest::CborMaps],
            _ => &[],
        }
    }
}

/// Nesting depths tried: past every documented limit (serde_json 128, prost 100, simd-json
/// 1024) and deep enough to overflow an 8 MiB stack through plain recursion.
pub const NEST_DEPTHS: [usize; 2] = [2_000, 100_000];

/// How one case's input is made from the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    Truncate { len: usize },
    FlipBit { offset: usize, bit: u8 },
    Replace { offset: usize, byte: u8 },
    Garbage { len: usize, seed: u64 },
    Bomb { offset: usize, bomb: Bomb },
    Nest { nest: Nest, depth: usize },
}

impl Mutation {
    pub fn kind(&self) -> CaseKind {
        match self {
            Mutation::Truncate { .. } => CaseKind::Truncate,
            Mutation::FlipBit { .. } => CaseKind::BitFlip,
            Mutation::Replace { .. } => CaseKind::ByteReplace,
            Mutation::Garbage { len, .. } if *len <= SHORT_GARBAGE => CaseKind::GarbageShort,
            Mutation::Garbage { .. } => CaseKind::Garbage,
            Mutation::Bomb { .. } => CaseKind::LengthBomb,
            Mutation::Nest { .. } => CaseKind::Nesting,
        }
    }

    /// One line a person can reproduce the case from.
    pub fn describe(&self) -> String {
        match self {
            Mutation::Truncate { len } => format!("truncated to {len} bytes"),
            Mutation::FlipBit { offset, bit } => format!("bit {bit} of byte {offset} flipped"),
            Mutation::Replace { offset, byte } => format!("byte {offset} replaced by 0x{byte:02x}"),
            Mutation::Garbage { len, seed } => format!("{len} random bytes (seed {seed:#x})"),
            Mutation::Bomb { offset, bomb } => format!("{} spliced in at byte {offset}", bomb.name),
            Mutation::Nest { nest, depth } => format!("{} nested {depth} deep", nest.name()),
        }
    }

    /// The input bytes of the case.
    pub fn apply(&self, payload: &[u8]) -> Vec<u8> {
        match *self {
            Mutation::Truncate { len } => payload[..len.min(payload.len())].to_vec(),
            Mutation::FlipBit { offset, bit } => {
                let mut bytes = payload.to_vec();
                bytes[offset] ^= 1 << bit;
                bytes
            }
            Mutation::Replace { offset, byte } => {
                let mut bytes = payload.to_vec();
                bytes[offset] = byte;
                bytes
            }
            Mutation::Garbage { len, seed } => {
                let mut rng = SplitMix64::new(seed);
                (0..len).map(|_| rng.next_u64() as u8).collect()
            }
            Mutation::Bomb { offset, bomb } => {
                let end = (offset + bomb.replaces).min(payload.len());
                let mut bytes = Vec::with_capacity(payload.len() + bomb.bytes.len());
                bytes.extend_from_slice(&payload[..offset]);
                bytes.extend_from_slice(bomb.bytes);
                bytes.extend_from_slice(&payload[end..]);
                bytes
            }
            Mutation::Nest { nest, depth } => nested(nest, depth),
        }
    }
}

const SHORT_GARBAGE: usize = 64;

/// Every case for a payload of `len` bytes of `format`, generated one at a time so that a plan
/// of any length takes no memory: `cases` per random kind, at most `cases` truncation lengths,
/// at most `4 * cases` bombs, and the format's nesting inputs.
pub fn plan(len: usize, format: &str, cases: usize, seed: u64) -> Plan {
    let truncations = cases.min(len);
    let random = if len > 0 { cases } else { 0 };
    // Same-length garbage longer than the short kind's limit, so the two kinds never mix.
    let garbage = if len > SHORT_GARBAGE { cases } else { 0 };
    let bombs = Bomb::for_format(format);
    let bomb_offsets = (4 * cases).div_ceil(bombs.len()).min(len);
    let nests = Nest::for_format(format);
    Plan {
        len,
        bombs,
        nests,
        counts: [
            truncations,
            random,
            random,
            garbage,
            cases,
            bomb_offsets * bombs.len(),
            nests.len() * NEST_DEPTHS.len(),
        ],
        phase: 0,
        index: 0,
        rng: SplitMix64::new(seed ^ 0x0B5E_55ED_CA5E_5EED),
    }
}

/// The cases of one decoder in plan order: truncations, bit flips, byte replacements, garbage,
/// short garbage, bombs, nesting. The random kinds draw from one generator in that order, so
/// the plan depends on the seed, `cases`, the payload's length and the format alone.
pub struct Plan {
    len: usize,
    bombs: &'static [Bomb],
    nests: &'static [Nest],
    /// Cases of each phase, in the order above.
    counts: [usize; 7],
    phase: usize,
    /// The next case's index within its phase.
    index: usize,
    rng: SplitMix64,
}

impl Iterator for Plan {
    type Item = Mutation;

    fn next(&mut self) -> Option<Mutation> {
        while self
            .counts
            .get(self.phase)
            .is_some_and(|&count| self.index == count)
        {
            self.phase += 1;
            self.index = 0;
        }
        let count = *self.counts.get(self.phase)?;
        let (index, len) = (self.index, self.len);
        self.index += 1;
        let rng = &mut self.rng;
        Some(match self.phase {
            // `count` lengths evenly spread over 0..len, starting at 0 (every length when few).
            0 => Mutation::Truncate {
                len: index * len / count,
            },
            1 => {
                let offset = rng.next_u64() as usize % len;
                Mutation::FlipBit {
                    offset,
                    bit: (rng.next_u64() % 8) as u8,
                }
            }
            2 => {
                // Half the replacements use the values that most often mean something to a parser.
                const TELLING: [u8; 12] = [
                    0x00, 0xFF, 0x7F, 0x80, 0x01, b'"', b'\\', b'{', b'[', b',', b'\n', b'e',
                ];
                let offset = rng.next_u64() as usize % len;
                let byte = if index % 2 == 0 {
                    TELLING[rng.next_u64() as usize % TELLING.len()]
                } else {
                    rng.next_u64() as u8
                };
                Mutation::Replace { offset, byte }
            }
            3 => Mutation::Garbage {
                len,
                seed: rng.next_u64(),
            },
            4 => {
                let short = rng.next_u64() as usize % (SHORT_GARBAGE + 1);
                Mutation::Garbage {
                    len: short,
                    seed: rng.next_u64(),
                }
            }
            // Every bomb at each of the offsets evenly spread over the payload.
            5 => Mutation::Bomb {
                offset: index / self.bombs.len() * len / (count / self.bombs.len()),
                bomb: self.bombs[index % self.bombs.len()],
            },
            _ => Mutation::Nest {
                nest: self.nests[index / NEST_DEPTHS.len()],
                depth: NEST_DEPTHS[index % NEST_DEPTHS.len()],
            },
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.counts.iter().skip(self.phase).sum::<usize>() - self.index;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Plan {}

fn nested(nest: Nest, depth: usize) -> Vec<u8> {
    match nest {
        Nest::JsonArrays => vec![b'['; depth],
        Nest::JsonObjects => b"{\"a\":".repeat(depth),
        Nest::BsonDocuments => {
            // Level k from the inside is 8 bytes longer than level k-1; the innermost is the
            // empty document (5 bytes): int32 length, then the terminating 0.
            let mut bytes = Vec::with_capacity(depth * 8 + 5);
            for level in (1..=depth).rev() {
                let length = (5 + 8 * level) as i32;
                bytes.extend_from_slice(&length.to_le_bytes());
                bytes.extend_from_slice(&[0x03, b'a', 0x00]);
            }
            bytes.extend_from_slice(&[5, 0, 0, 0, 0]);
            bytes.resize(bytes.len() + depth, 0);
            bytes
        }
        Nest::ProtobufGroups => vec![0x0B; depth],
        Nest::CborArrays => vec![0x81; depth],
        Nest::CborMaps => [0xA1, 0x61, b'a'].repeat(depth),
        Nest::ProtobufMessages => {
            // Field 1, wire type 2 (tag 0x0A), then the varint length of everything inside.
            let mut lengths = Vec::with_capacity(depth);
            let mut inner = 0usize;
            for _ in 0..depth {
                lengths.push(inner);
                inner += 1 + varint_len(inner);
            }
            let mut bytes = Vec::with_capacity(inner);
            for &length in lengths.iter().rev() {
                bytes.push(0x0A);
                write_varint(&mut bytes, length as u64);
            }
            bytes
        }
    }
}

fn varint_len(mut value: usize) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_plan_is_deterministic_and_covers_every_kind() {
        let first: Vec<Mutation> = plan(300, "json", 16, 7).collect();
        assert_eq!(first, plan(300, "json", 16, 7).collect::<Vec<_>>());
        assert_ne!(first, plan(300, "json", 16, 8).collect::<Vec<_>>());
        assert_eq!(plan(300, "json", 16, 7).len(), first.len());
        for kind in CaseKind::ALL {
            assert!(first.iter().any(|case| case.kind() == kind), "{kind:?}");
        }
        let counts = |kind| first.iter().filter(|case| case.kind() == kind).count();
        assert_eq!(counts(CaseKind::Truncate), 16);
        assert_eq!(counts(CaseKind::BitFlip), 16);
        assert_eq!(counts(CaseKind::Garbage), 16);
        assert_eq!(counts(CaseKind::Nesting), 4);
        assert!(counts(CaseKind::LengthBomb) >= 4 * 16);
    }

    #[test]
    fn small_payloads_are_truncated_at_every_length() {
        let lengths: Vec<usize> = plan(10, "bincode", 16, 1)
            .filter_map(|case| match case {
                Mutation::Truncate { len } => Some(len),
                _ => None,
            })
            .collect();
        assert_eq!(lengths, (0..10).collect::<Vec<_>>());
        // No nesting for a format without a nesting input, and no same-length garbage that
        // would be indistinguishable from the short kind.
        assert!(
            plan(10, "bincode", 16, 1)
                .all(|case| case.kind() != CaseKind::Nesting && case.kind() != CaseKind::Garbage)
        );
    }

    #[test]
    fn mutations_change_what_they_say() {
        let payload: Vec<u8> = (0..100).collect();
        assert_eq!(Mutation::Truncate { len: 3 }.apply(&payload), vec![0, 1, 2]);
        assert_eq!(Mutation::FlipBit { offset: 2, bit: 0 }.apply(&payload)[2], 3);
        assert_eq!(
            Mutation::Replace {
                offset: 5,
                byte: 0xAA
            }
            .apply(&payload)[5],
            0xAA
        );
        let bomb = Mutation::Bomb {
            offset: 1,
            bomb: BOMBS[8],
        }
        .apply(&payload);
        assert_eq!(
            &bomb[..12],
            &[0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 2]
        );
        assert_eq!(bomb.len(), payload.len() + 9);
        let at_end = Mutation::Bomb {
            offset: 99,
            bomb: BOMBS[6],
        }
        .apply(&payload);
        assert_eq!(at_end.len(), 99 + 8);
    }

    #[test]
    fn cbor_plans_add_cbor_length_heads_and_nesting_and_other_plans_do_not() {
        let bomb_names = |format| -> BTreeSet<&'static str> {
            plan(300, format, 16, 7)
                .filter_map(|case| match case {
                    Mutation::Bomb { bomb, .. } => Some(bomb.name),
                    _ => None,
                })
                .collect()
        };
        let generic: BTreeSet<&str> = BOMBS.iter().map(|bomb| bomb.name).collect();
        let heads: BTreeSet<&str> = CBOR_HEADS.iter().map(|bomb| bomb.name).collect();
        assert_eq!(bomb_names("json"), generic);
        assert_eq!(bomb_names("cbor"), &generic | &heads);
        let nests: Vec<Mutation> = plan(300, "cbor", 16, 7)
            .filter(|case| case.kind() == CaseKind::Nesting)
            .collect();
        assert_eq!(nests.len(), 2 * NEST_DEPTHS.len());
        let arrays = Mutation::Nest {
            nest: Nest::CborArrays,
            depth: 3,
        };
        assert_eq!(arrays.apply(&[]), [0x81, 0x81, 0x81]);
        let maps = Mutation::Nest {
            nest: Nest::CborMaps,
            depth: 2,
        };
        assert_eq!(maps.apply(&[]), [0xA1, 0x61, b'a', 0xA1, 0x61, b'a']);
    }

    #[test]
    fn cbor_heads_announce_what_they_say() {
        // Major type in the top 3 bits; 27 in the low 5: an 8-byte big-endian argument follows.
        for bomb in CBOR_HEADS {
            let (major, argument) = (bomb.bytes[0] >> 5, &bomb.bytes[1..]);
            assert_eq!(bomb.bytes[0] & 0x1F, 27, "{}", bomb.name);
            let announced = u64::from_be_bytes(argument.try_into().unwrap());
            let kind = ["", "", "bytes", "text", "array", "map"][major as usize];
            let size = if announced == u64::MAX {
                "u64-max".to_string()
            } else {
                format!("2^{}", announced.ilog2())
            };
            assert_eq!(bomb.name, format!("cbor-{kind}-{size}"));
        }
    }

    #[test]
    fn nested_bson_documents_have_consistent_lengths() {
        let bytes = nested(Nest::BsonDocuments, 3);
        assert_eq!(
            i32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize,
            bytes.len()
        );
        // The innermost document is the empty one, closed by one 0 per level.
        assert_eq!(&bytes[bytes.len() - 8..], &[5, 0, 0, 0, 0, 0, 0, 0]);
        let inner = &bytes[7..];
        assert_eq!(
            i32::from_le_bytes(inner[..4].try_into().unwrap()) as usize,
            inner.len() - 1
        );
    }

    #[test]
    fn nested_protobuf_messages_have_consistent_lengths() {
        let bytes = nested(Nest::ProtobufMessages, 200);
        // Walk down: each level is tag 0x0A, then a varint length covering the rest.
        let mut rest = &bytes[..];
        for _ in 0..200 {
            assert_eq!(rest[0], 0x0A);
            let (mut length, mut shift, mut index) = (0usize, 0, 1);
            loop {
                length |= ((rest[index] & 0x7F) as usize) << shift;
                shift += 7;
                index += 1;
                if rest[index - 1] < 0x80 {
                    break;
                }
            }
            assert_eq!(length, rest.len() - index);
            rest = &rest[index..];
        }
        assert!(rest.is_empty());
    }
}

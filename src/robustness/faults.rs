//! The `fault-injection` format: fake decoders that misbehave on purpose, one way each, so the
//! tests can prove that the harness records every kind of failure and carries on. Offered only
//! when `SERBENCH_FAULT_INJECTION=1` (or [`RobustnessOptions::fault_injection`]), never in a
//! normal run.
//!
//! Each fake decodes a fixed synthetic payload and fails on inputs of one length, which the
//! truncation cases are sure to produce: 3 bytes hangs, 5 bytes overflows the stack, 7 bytes
//! asks the allocator for 1 TiB, 9 bytes asks for it through `try_reserve`; a length divisible
//! by 4 panics.
//!
//! [`RobustnessOptions::fault_injection`]: super::RobustnessOptions::fault_injection

use std::hint::black_box;

use anyhow::{Result, bail};

use crate::arm::{ArmId, CodecId, Framing, Mode, Operation};

pub const FORMAT: &str = "fault-injection";
pub const PAYLOAD: &str = "synthetic";
/// The synthetic payload: 16 bytes, so with 16 cases or more every truncation length is a
/// case.
pub const ORIGINAL: &[u8] = b"synthetic-16byte";

/// A fake decoder: its backend name and its behaviour.
pub struct Fault {
    pub backend: &'static str,
    pub decode: fn(&[u8]) -> Result<bool>,
}

/// Every fake, in the order the run visits them: the well-behaved one last, to show the run
/// goes on after the others have crashed their workers.
pub const FAULTS: [Fault; 7] = [
    Fault {
        backend: "panics",
        decode: panics,
    },
    Fault {
        backend: "over-allocates",
        decode: over_allocates,
    },
    Fault {
        backend: "over-allocates-gracefully",
        decode: over_allocates_gracefully,
    },
    Fault {
        backend: "overflows-stack",
        decode: overflows_stack,
    },
    Fault {
        backend: "hangs",
        decode: hangs,
    },
    Fault {
        backend: "corrupts",
        decode: corrupts,
    },
    Fault {
        backend: "well-behaved",
        decode: well_behaved,
    },
];

impl Fault {
    pub fn id(&self) -> ArmId {
        ArmId {
            codec: CodecId {
                format: FORMAT.to_string(),
                backend: self.backend.to_string(),
                variant: String::new(),
                payload: PAYLOAD.to_string(),
                framing: Framing::Document,
            },
            operation: Operation::Decode,
            mode: Mode::Typed,
        }
    }
}

fn well_behaved(bytes: &[u8]) -> Result<bool> {
    if bytes.len() != ORIGINAL.len() {
        bail!("wrong length");
    }
    Ok(bytes == ORIGINAL)
}

fn panics(bytes: &[u8]) -> Result<bool> {
    if bytes.len().is_multiple_of(4) && bytes != ORIGINAL {
        panic!("injected panic on {} bytes", bytes.len());
    }
    well_behaved(bytes)
}

const ONE_TIB: usize = 1 << 40;

fn over_allocates(bytes: &[u8]) -> Result<bool> {
    if bytes.len() == 7 {
        let huge: Vec<u8> = Vec::with_capacity(black_box(ONE_TIB));
        black_box(huge);
    }
    well_behaved(bytes)
}

fn over_allocates_gracefully(bytes: &[u8]) -> Result<bool> {
    if bytes.len() == 9 {
        let mut huge: Vec<u8> = Vec::new();
        huge.try_reserve(black_box(ONE_TIB))?;
        black_box(huge);
    }
    well_behaved(bytes)
}

fn overflows_stack(bytes: &[u8]) -> Result<bool> {
    if bytes.len() == 5 {
        black_box(recurse(black_box(u64::MAX)));
    }
    well_behaved(bytes)
}

/// Unbounded recursion with a frame the optimiser cannot remove.
fn recurse(depth: u64) -> u64 {
    let frame = black_box([depth; 64]);
    if depth == 0 {
        frame[0]
    } else {
        recurse(depth - 1).wrapping_add(frame[63])
    }
}

fn hangs(bytes: &[u8]) -> Result<bool> {
    if bytes.len() == 3 {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    well_behaved(bytes)
}

fn corrupts(bytes: &[u8]) -> Result<bool> {
    Ok(bytes == ORIGINAL)
}

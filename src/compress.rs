//! The general-purpose compressors serbench puts after a codec: zstd at level 3 (the zstd
//! crate's default, what a user who "just adds zstd" gets) and zlib at level 6 (flate2's
//! default, `Compression::default()`), through the same code for sizes.csv and for the
//! compression arms, so the bytes counted are the bytes timed.
//!
//! Both are set up for repeated use as their documentation describes it: zstd keeps one context
//! per direction (`zstd::bulk::Compressor` and `Decompressor`, which "re-use the zstd context
//! between jobs to avoid re-allocations"), flate2 one stream per direction (`Compress` and
//! `Decompress`), reset before each message ("without having to reallocate anything"). Every call
//! writes into a buffer the caller keeps: cleared, never freed, grown only when too small. Both
//! are deterministic: zstd is the bundled C library at a fixed level; flate2 is built with its
//! pure-Rust miniz_oxide backend only (Cargo.toml), so the zlib bytes are the same on every host.

use anyhow::{Context, Result, anyhow, bail};
use flate2::{FlushCompress, FlushDecompress, Status};

/// The zstd level of sizes.csv and the zstd arms.
pub const ZSTD_LEVEL: i32 = 3;
/// The zlib level of sizes.csv and the zlib arms.
pub const ZLIB_LEVEL: u32 = 6;

/// The payloads whose codecs get compression arms (compress and decompress, zstd and zlib):
/// `telemetry`, a mid-sized message (2-8 KB, an event or RPC body), and `vec-big`, a bulk batch
/// (0.3-1 MB, a file or a transfer), the two sizes at which compressing is worth asking about.
/// The small messages are left out because compression does not pay for them (sizes.csv: most
/// grow under zstd), and the others repeat these two shapes; together they keep the default
/// matrix within its time (docs/measurement.md).
pub const PAYLOADS: [&str; 2] = ["telemetry", "vec-big"];

/// Whether the codecs of `payload` get compression arms.
pub fn has_arms(payload: &str) -> bool {
    PAYLOADS.contains(&payload)
}

/// A compressor and its decompressor, each with its own state reused from call to call.
pub trait Compressor: Send + Sized + 'static {
    /// A fresh pair; its contexts are allocated here, once.
    fn new() -> Result<Self>;
    /// Replaces what `out` holds with `input` compressed.
    fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()>;
    /// Replaces what `out` holds with `input` decompressed.
    fn decompress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()>;
}

/// zstd at [`ZSTD_LEVEL`], one bulk context per direction.
pub struct Zstd {
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl Compressor for Zstd {
    fn new() -> Result<Zstd> {
        Ok(Zstd {
            compressor: zstd::bulk::Compressor::new(ZSTD_LEVEL).context("cannot create a zstd compressor")?,
            decompressor: zstd::bulk::Decompressor::new().context("cannot create a zstd decompressor")?,
        })
    }

    fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        // zstd writes from the start of a Vec into its capacity and sets its length.
        out.clear();
        out.reserve(zstd::compress_bound(input.len()));
        self.compressor
            .compress_to_buffer(input, out)
            .context("zstd compression failed")?;
        Ok(())
    }

    fn decompress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let size =
            zstd::bulk::Decompressor::upper_bound(input).context("not a zstd frame that records its size")?;
        out.clear();
        out.reserve(size);
        self.decompressor
            .decompress_to_buffer(input, out)
            .context("zstd decompression failed")?;
        Ok(())
    }
}

/// zlib (a zlib header and Adler-32 trailer around deflate) at [`ZLIB_LEVEL`], one flate2
/// stream per direction.
pub struct Zlib {
    compress: flate2::Compress,
    decompress: flate2::Decompress,
}

impl Compressor for Zlib {
    fn new() -> Result<Zlib> {
        Ok(Zlib {
            compress: flate2::Compress::new(flate2::Compression::new(ZLIB_LEVEL), true),
            decompress: flate2::Decompress::new(true),
        })
    }

    fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        self.compress.reset();
        out.clear();
        // zlib's compressBound: deflate's worst case for stored blocks, header and trailer.
        out.reserve(input.len() + (input.len() >> 12) + (input.len() >> 14) + (input.len() >> 25) + 13);
        loop {
            let (read, written) = (self.compress.total_in(), self.compress.total_out());
            let status = self
                .compress
                .compress_vec(&input[read as usize..], out, FlushCompress::Finish)
                .map_err(|error| anyhow!("zlib compression failed: {error}"))?;
            if status == Status::StreamEnd {
                return Ok(());
            }
            // The bound above holds for deflate; growing keeps any other backend correct.
            if out.len() == out.capacity() {
                out.reserve(out.capacity().max(64));
            } else if (read, written) == (self.compress.total_in(), self.compress.total_out()) {
                bail!("zlib compression made no progress");
            }
        }
    }

    /// One call with `Finish` into the room `out` has: miniz_oxide then inflates straight into
    /// it, the fast path for a whole message. With too little room that call fails as a whole,
    /// so the message is inflated again from its start into twice the room; the buffer keeps
    /// that capacity, so the next messages of its size take one call.
    fn decompress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        loop {
            self.decompress.reset(true);
            out.clear();
            let status = self
                .decompress
                .decompress_vec(input, out, FlushDecompress::Finish)
                .map_err(|error| anyhow!("zlib decompression failed: {error}"))?;
            match status {
                Status::StreamEnd => return Ok(()),
                // The room ran out: more of it. Room left over means the input ran out first.
                Status::BufError if out.len() == out.capacity() => {
                    out.reserve((2 * out.capacity()).max(4 * input.len()).max(256));
                }
                _ => bail!("a truncated zlib stream ({} bytes)", input.len()),
            }
        }
    }
}

/// `input` compressed by a fresh `C` (sizes.csv; the input of a decompress arm).
pub fn compressed<C: Compressor>(input: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    C::new()?.compress(input, &mut out)?;
    Ok(out)
}

/// Proves that `decompress(compress(input)) == input` with two instances, a sender's and a
/// receiver's (no state inside one can fake it), and returns the compressed bytes.
pub fn verified<C: Compressor>(input: &[u8]) -> Result<Vec<u8>> {
    let compressed = compressed::<C>(input)?;
    let mut back = Vec::new();
    C::new()?.decompress(&compressed, &mut back)?;
    if back != input {
        bail!(
            "decompress(compress(bytes)) != bytes ({} bytes in, {} compressed, {} out)",
            input.len(),
            compressed.len(),
            back.len()
        );
    }
    Ok(compressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that compresses (repeated words) followed by bytes that do not (a SplitMix64
    /// stream), so both a shrinking and a growing input are round-tripped.
    fn sample() -> Vec<u8> {
        let mut bytes = b"serbench compresses this line again and again. ".repeat(400);
        let mut rng = crate::payload::SplitMix64::new(7);
        bytes.extend((0..5000).map(|_| rng.next_u64() as u8));
        bytes
    }

    fn round_trips_reusing_its_state<C: Compressor>() {
        let input = sample();
        let mut compressor = C::new().unwrap();
        let (mut packed, mut unpacked) = (Vec::new(), Vec::new());
        for round in 0..3 {
            // Each round starts from the state the previous one left behind.
            let input = &input[round * 100..];
            compressor.compress(input, &mut packed).unwrap();
            assert!(packed.len() < input.len(), "round {round}: did not compress");
            compressor.decompress(&packed, &mut unpacked).unwrap();
            assert_eq!(unpacked, input, "round {round}");
        }
        let empty = verified::<C>(&[]).unwrap();
        assert!(!empty.is_empty(), "even an empty input has a frame");
        assert_eq!(verified::<C>(&input).unwrap(), compressed::<C>(&input).unwrap());
    }

    #[test]
    fn zstd_and_zlib_round_trip_reusing_their_state() {
        round_trips_reusing_its_state::<Zstd>();
        round_trips_reusing_its_state::<Zlib>();
    }

    #[test]
    fn the_formats_are_what_they_say() {
        let input = sample();
        // zstd's frame magic number; zlib's header for deflate with a 32 KiB window, level 6.
        assert_eq!(compressed::<Zstd>(&input).unwrap()[..4], [0x28, 0xB5, 0x2F, 0xFD]);
        let zlib = compressed::<Zlib>(&input).unwrap();
        assert_eq!(zlib[..2], [0x78, 0x9C]);
        // Another implementation reads it back: flate2's reader over the same stream.
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&zlib[..]), &mut back).unwrap();
        assert_eq!(back, input);
        assert_eq!(
            zstd::bulk::decompress(&compressed::<Zstd>(&input).unwrap(), input.len()).unwrap(),
            input
        );
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let mut zlib = compressed::<Zlib>(&sample()).unwrap();
        zlib.truncate(zlib.len() / 2);
        let mut out = Vec::new();
        assert!(Zlib::new().unwrap().decompress(&zlib, &mut out).is_err());
        assert!(Zlib::new().unwrap().decompress(b"not zlib", &mut out).is_err());
        assert!(Zstd::new().unwrap().decompress(b"not zstd", &mut out).is_err());
    }

    #[test]
    fn the_compressed_payloads_exist() {
        let names: Vec<&str> = crate::payload::specs().iter().map(|spec| spec.name).collect();
        for payload in PAYLOADS {
            assert!(names.contains(&payload), "{payload} is not a payload");
        }
    }
}

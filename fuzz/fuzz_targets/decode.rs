//! Every decoder of serbench's registry (or of the formats in `SERBENCH_FUZZ_FORMAT`), on
//! arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| serbench_fuzz::decode_all(data));

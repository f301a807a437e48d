//! Every protobuf decoder of serbench's registry, on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| serbench_fuzz::decode_all("protobuf", data));

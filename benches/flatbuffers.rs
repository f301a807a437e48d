//! `cargo bench --bench flatbuffers`: the flatbuffers arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("flatbuffers");
}

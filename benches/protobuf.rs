//! `cargo bench --bench protobuf`: the protobuf arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("protobuf");
}

//! `cargo bench --bench avro`: the avro arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("avro");
}

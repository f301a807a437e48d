//! `cargo bench --bench json`: the json arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("json");
}

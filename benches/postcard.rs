//! `cargo bench --bench postcard`: the postcard arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("postcard");
}

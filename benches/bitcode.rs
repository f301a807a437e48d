//! `cargo bench --bench bitcode`: the bitcode arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("bitcode");
}

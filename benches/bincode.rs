//! `cargo bench --bench bincode`: the bincode arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("bincode");
}

//! `cargo bench --bench csv`: the csv arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("csv");
}

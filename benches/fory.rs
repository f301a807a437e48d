//! `cargo bench --bench fory`: the fory arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("fory");
}

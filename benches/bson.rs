//! `cargo bench --bench bson`: the bson arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("bson");
}

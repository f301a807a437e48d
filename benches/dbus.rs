//! `cargo bench --bench dbus`: the dbus arms of the registry, through criterion.

mod common;

fn main() {
    common::bench_format("dbus");
}

//! `cargo bench --bench formats`: every arm of the registry through criterion, one benchmark
//! group per format, so criterion's own reports sit beside serbench's. The arms come from the
//! same registry as `serbench run`, prepared (and so round-trip-proven) the same way, and
//! criterion times the same monomorphic runner loop through `iter_custom`.
//!
//! One target for every format, not one per format: a new format then needs no bench file and
//! no `[[bench]]` block, and one binary links instead of one per format. Criterion's filter
//! picks a format or an arm: `cargo bench --bench formats -- postcard/`,
//! `cargo bench --bench formats -- 'json/serde_json/order/decode'`.

use std::time::Instant;

use criterion::Criterion;
use serbench::format::Registry;

fn main() {
    let registry = Registry::build();
    let mut criterion = Criterion::default().configure_from_args();
    for format in serbench::format::all() {
        let mut group = criterion.benchmark_group(format.name);
        for arm in registry
            .arms
            .iter()
            .filter(|arm| arm.id.codec.format == format.name)
        {
            // The arm's path without its format (the group): `backend[variant]/payload/op...`.
            let path = arm.id.path();
            let name = path
                .split_once('/')
                .map_or(path.as_str(), |(_, rest)| rest)
                .to_string();
            let mut prepared = match arm.prepare() {
                Ok(prepared) => prepared,
                Err(error) => {
                    eprintln!("skipping {}: {error:#}", arm.id);
                    continue;
                }
            };
            group.bench_function(name, |bencher| {
                bencher.iter_custom(|iterations| {
                    let start = Instant::now();
                    prepared.runner.run(iterations).expect("a proven arm runs");
                    start.elapsed()
                })
            });
        }
        group.finish();
    }
    criterion.final_summary();
}

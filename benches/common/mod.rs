//! Shared by every per-format criterion target: the arms come from the same registry as
//! `serbench run`, prepared (and so round-trip-proven) the same way, and criterion times the
//! same monomorphic runner loop through `iter_custom`.

use std::time::Instant;

use criterion::Criterion;
use serbench::format::Registry;

/// Benchmarks every arm of `format`; criterion's own CLI filters apply (`-- order/decode`).
pub fn bench_format(format: &str) {
    let registry = Registry::build();
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format);
    for arm in registry.arms.iter().filter(|arm| arm.id.codec.format == format) {
        let codec = &arm.id.codec;
        let name = if codec.variant.is_empty() {
            format!(
                "{}/{}/{}/{}",
                codec.backend,
                codec.payload.name,
                arm.id.operation.name(),
                arm.id.mode.name()
            )
        } else {
            format!(
                "{}[{}]/{}/{}/{}",
                codec.backend,
                codec.variant,
                codec.payload.name,
                arm.id.operation.name(),
                arm.id.mode.name()
            )
        };
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
    criterion.final_summary();
}

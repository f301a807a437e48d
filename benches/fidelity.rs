//! `cargo bench --bench fidelity`: independent, minimal criterion benchmarks of some arms of
//! every format, each written straight against its library in the format's own file
//! ([`serbench::format::Fidelity`]; the payload data is the only thing taken from serbench, and
//! it is prepared before timing). `serbench fidelity` pairs criterion's means with serbench's
//! for the same arms, to show the harness measures what a plain benchmark would. Each benchmark
//! id is `format/backend[variant]/payload/operation` as in results.csv.
//!
//! Each case is one closure, called through `&mut dyn FnMut()` both by criterion and, when
//! `SERBENCH_FIDELITY_COUNT=<id>` is set, by [`fidelity_counted_region`] under callgrind
//! (`serbench fidelity --bench-binary`): the two run the same machine code, so the instruction
//! count belongs to the code criterion timed. The dynamic call costs criterion about a
//! nanosecond per iteration; serbench pays one dynamic call per batch.

use criterion::Criterion;
use serbench::instructions::ITERATIONS;

type Case = (String, Box<dyn FnMut()>);

/// The one function callgrind collects in when counting a case.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn fidelity_counted_region(case: &mut dyn FnMut(), iterations: u64) {
    for _ in 0..iterations {
        case();
    }
}

fn main() {
    let mut cases: Vec<Case> = serbench::format::all()
        .into_iter()
        .flat_map(|format| {
            format
                .fidelity
                .iter()
                .map(move |fidelity| (fidelity.arm(format.name).path(), (fidelity.case)()))
        })
        .collect();
    if let Ok(id) = std::env::var("SERBENCH_FIDELITY_COUNT") {
        let (_, case) = cases
            .iter_mut()
            .find(|(name, _)| *name == id)
            .unwrap_or_else(|| panic!("no fidelity case {id}"));
        fidelity_counted_region(case.as_mut(), 1);
        fidelity_counted_region(case.as_mut(), ITERATIONS);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    for (id, case) in &mut cases {
        criterion.bench_function(id.as_str(), |b| b.iter(case.as_mut()));
    }
    criterion.final_summary();
}

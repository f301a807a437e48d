//! The memory bound docs/your-data.md and `payload::data` state: reading a data file and inferring its
//! schema take at most `READ_MEMORY_FACTOR` times the file's size, measured by serbench's own
//! allocator (live bytes and their peak) on the shapes that cost the most per byte of JSON.
//! One test in its own binary, so no other test allocates during the measurement.

use serbench::payload::data::{DataFraming, READ_MEMORY_FACTOR, Request, load};

/// A quarter to one MiB of each costly shape (the smallest values JSON has, one Rust value each; a
/// one-key object costs serde_json a whole B-tree node), and the three public corpora.
fn worst_cases() -> Vec<(&'static str, Option<DataFraming>, Vec<u8>)> {
    let count = 1 << 17;
    let repeated = |open: &str, item: &str, separator: &str, close: &str| {
        let mut text = String::from(open);
        text.push_str(&vec![item; count].join(separator));
        text.push_str(close);
        text.into_bytes()
    };
    let keys: Vec<String> = (0..count / 8).map(|index| format!("\"{index:x}\":0")).collect();
    vec![
        ("an array of zeros", None, repeated("[", "0", ",", "]")),
        ("an array of empty arrays", None, repeated("[", "[]", ",", "]")),
        ("an array of empty objects", None, repeated("[", "{}", ",", "]")),
        ("an array of empty strings", None, repeated("[", "\"\"", ",", "]")),
        ("an array of nulls", None, repeated("[", "null", ",", "]")),
        (
            "NDJSON of zeros",
            Some(DataFraming::Ndjson),
            repeated("", "0", "\n", "\n"),
        ),
        (
            "NDJSON of empty objects",
            Some(DataFraming::Ndjson),
            repeated("", "{}", "\n", "\n"),
        ),
        (
            "one object of many keys",
            None,
            format!("{{{}}}", keys.join(",")).into_bytes(),
        ),
        (
            "nested one-element arrays",
            None,
            repeated("[", "[[[[0]]]]", ",", "]"),
        ),
        (
            "an array of one-key objects",
            None,
            repeated("[", "{\"a\":0}", ",", "]"),
        ),
        (
            "NDJSON of one-key objects",
            Some(DataFraming::Ndjson),
            repeated("", "{\"a\":0}", "\n", "\n"),
        ),
    ]
    .into_iter()
    .chain(["twitter", "citm_catalog", "canada"].map(|name| {
        let corpus = serbench::payload::data::Corpus::by_name(name).unwrap();
        (name, None, corpus.json())
    }))
    .collect()
}

#[test]
fn reading_and_inference_stay_within_the_stated_multiple_of_the_file_size() {
    let dir = tempfile::tempdir().unwrap();
    // Tracking only: no request is refused below 64 GiB.
    serbench::alloc::cap_allocations(64 << 30);
    let mut report = Vec::new();
    for (index, (shape, framing, bytes)) in worst_cases().into_iter().enumerate() {
        let path = dir.path().join(format!("shape{index}.json"));
        std::fs::write(&path, &bytes).unwrap();
        let size = bytes.len() as u64;
        drop(bytes);
        serbench::alloc::reset_allocation_peak();
        let payloads = load(&Request {
            sources: vec![path.display().to_string()],
            framing,
            ..Request::default()
        })
        .unwrap_or_else(|error| panic!("{shape}: {error:#}"));
        let peak = serbench::alloc::allocation_peak_bytes();
        assert!(payloads[0].spec.records >= 1);
        let factor = peak as f64 / size as f64;
        report.push(format!("{shape}: {size} bytes, peak {peak} bytes, {factor:.1}x"));
        assert!(
            peak <= READ_MEMORY_FACTOR * size,
            "{shape}: {peak} bytes at the peak for a file of {size} bytes ({factor:.1}x > {READ_MEMORY_FACTOR}x)\n{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}

//! The flake builds from a filtered copy of the repository (nix/source.nix keeps only the
//! top-level entries it lists). A file the code embeds at compile time (`include_bytes!`,
//! `include_str!`) outside those entries builds with cargo and fails only in Nix, which the
//! offline flake tests (stub inputs) cannot show: this test reads every such path in the
//! sources and checks that its top-level folder is kept.

use std::fs;
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The quoted names in nix/source.nix's `kept = [ ... ];` list.
fn kept() -> Vec<String> {
    let text = fs::read_to_string(root().join("nix/source.nix")).unwrap();
    let start = text
        .find("kept = [")
        .expect("nix/source.nix has a `kept = [` list");
    let list = &text[start..start + text[start..].find("];").expect("the list ends")];
    list.lines()
        .filter_map(|line| {
            let line = line.trim();
            line.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            out.push(path);
        }
    }
}

/// Every literal path given to `include_bytes!` or `include_str!` in `file`, resolved against
/// the file's folder and made relative to the repository.
fn embedded(file: &Path) -> Vec<PathBuf> {
    let text = fs::read_to_string(file).unwrap();
    let mut paths = Vec::new();
    for macro_call in ["include_bytes!(\"", "include_str!(\""] {
        for (at, _) in text.match_indices(macro_call) {
            let rest = &text[at + macro_call.len()..];
            let literal = &rest[..rest.find('"').unwrap()];
            let mut resolved = file.parent().unwrap().to_path_buf();
            for component in Path::new(literal).components() {
                match component {
                    Component::ParentDir => {
                        resolved.pop();
                    }
                    Component::Normal(name) => resolved.push(name),
                    _ => {}
                }
            }
            paths.push(resolved.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
    paths
}

#[test]
fn every_file_the_code_embeds_is_in_the_flake_source() {
    let kept = kept();
    assert!(kept.contains(&"src".to_string()), "{kept:?}");
    let mut files = vec![root().join("build.rs")];
    for dir in ["src", "benches", "tests"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut embedded_paths = Vec::new();
    for file in &files {
        embedded_paths.extend(embedded(file));
    }
    assert!(
        embedded_paths.iter().any(|path| path.starts_with("data")),
        "the corpora are embedded from data/: {embedded_paths:?}"
    );
    for path in embedded_paths {
        assert!(path.exists(), "{} is embedded but does not exist", path.display());
        let top = path
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        assert!(
            kept.contains(&top),
            "{} is embedded at compile time, but nix/source.nix keeps only {kept:?}",
            path.display()
        );
    }
}

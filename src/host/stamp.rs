//! Which sources a build was compiled from: the files cargo compiles this package from
//! ([`SOURCES`]), hashed in one order. build.rs stamps the hash of what it compiled (and watches
//! only these files, not git, so a commit or a `git status` recompiles nothing); the binary
//! hashes the checkout again at run time and, when the two agree, takes the commit from git then
//! (src/host/mod.rs). Shared with build.rs (`#[path]`), so both hash the same way.

use std::path::Path;

/// What cargo compiles the package from, relative to its manifest folder: files, or folders
/// taken whole.
pub const SOURCES: [&str; 7] = [
    "build.rs",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    "src",
    "schemas",
    "data",
];

/// FNV-1a (64 bits) over every file of [`SOURCES`] under `root`, each as its relative path and
/// its bytes, in path order; a missing entry hashes as absent. Not a checksum against an
/// adversary: it tells one build's sources from another's.
pub fn source_hash(root: &Path) -> std::io::Result<String> {
    let mut files = Vec::new();
    for source in SOURCES {
        collect(root, Path::new(source), &mut files)?;
    }
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |bytes: &[u8]| {
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in files {
        mix(file.to_string_lossy().as_bytes());
        mix(&[0]);
        mix(&std::fs::read(root.join(&file))?);
        mix(&[0xff]);
    }
    Ok(format!("{hash:016x}"))
}

/// The files at `relative` under `root` (itself, or every file below a folder).
fn collect(root: &Path, relative: &Path, files: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    let path = root.join(relative);
    let Ok(metadata) = std::fs::metadata(&path) else {
        return Ok(());
    };
    if metadata.is_dir() {
        for entry in std::fs::read_dir(&path)? {
            collect(root, &relative.join(entry?.file_name()), files)?;
        }
    } else {
        files.push(relative.to_path_buf());
    }
    Ok(())
}

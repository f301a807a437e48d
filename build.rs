//! Records the compiler and the source commit into the binary, so every result row says which
//! build produced it. Nix builds have no `.git`: the flake passes SERBENCH_COMMIT instead.

use std::process::Command;

fn output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|text| !text.is_empty())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc_version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SERBENCH_RUSTC={rustc_version}");

    println!("cargo:rerun-if-env-changed=SERBENCH_COMMIT");
    let commit = std::env::var("SERBENCH_COMMIT").ok().or_else(|| {
        let head = output("git", &["rev-parse", "--short=12", "HEAD"])?;
        let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"]).is_some();
        Some(if dirty { format!("{head}-dirty") } else { head })
    });
    println!(
        "cargo:rustc-env=SERBENCH_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".to_string())
    );
    // Re-run when HEAD moves, the index changes or a source file is edited (the dirty flag).
    for path in [".git/HEAD", ".git/index", "src"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

//! Records the compiler, the source commit and the CPU the code is compiled for (portable or
//! native, src/host/flags.rs) into the binary, so every result row says which build
//! produced it, and the hash of its sources (src/host/stamp.rs), by which the binary takes the
//! commit from git at run time. A Nix build has no `.git` and compiles in `unknown`: the flake's
//! wrapper sets SERBENCH_COMMIT at run time instead (src/host/mod.rs). Either way a commit
//! that changes no source does not rebuild the binary.
//!
//! It also writes the locked version of every direct dependency (`$OUT_DIR/crate_versions.rs`),
//! so the formats table names the crate versions actually built, and with the `protobuf`
//! feature it generates the prost types of `schemas/protobuf/` (and rust-protobuf's, with the
//! `rust-protobuf` feature).

use std::process::Command;

// The one reading of the compiler flags, shared with the library (and tested there).
#[path = "src/host/flags.rs"]
mod flags;
// The one hash of the package's sources, shared with the library.
#[path = "src/host/stamp.rs"]
mod stamp;

fn output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|text| !text.is_empty())
}

fn rerun_if_exists(path: &str) {
    if std::path::Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc_version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SERBENCH_RUSTC={rustc_version}");

    // Portable or native, from the flags cargo passes to rustc for this package (RUSTFLAGS and
    // cargo's config alike): a results row then says which build measured it.
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    println!("cargo:rustc-env=SERBENCH_BUILD={}", flags::build_kind(&rustflags));

    // The enabled Cargo features, so a test can check the format registry against them.
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(name, _)| {
            name.strip_prefix("CARGO_FEATURE_")
                .map(|feature| feature.to_lowercase().replace('_', "-"))
        })
        .collect();
    features.sort();
    println!("cargo:rustc-env=SERBENCH_FEATURES={}", features.join(","));

    // One commit id everywhere (nix/commit.nix computes the same for a flake build): the first
    // 12 hex digits of HEAD, `-dirty` when tracked files have uncommitted changes. Compiled in as
    // a fallback: the binary takes the commit from git at run time while the checkout still holds
    // the sources it was compiled from (their hash, below), so only a changed source reruns this
    // script and recompiles: not a commit, a checkout of the same sources or a `git status`.
    println!("cargo:rerun-if-env-changed=SERBENCH_COMMIT");
    let commit = std::env::var("SERBENCH_COMMIT").ok().or_else(|| {
        let head = output("git", &["rev-parse", "HEAD"])?;
        let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"]).is_some();
        let short = head.get(..12)?;
        Some(if dirty {
            format!("{short}-dirty")
        } else {
            short.to_string()
        })
    });
    println!(
        "cargo:rustc-env=SERBENCH_COMMIT={}",
        commit.unwrap_or_else(|| "unknown".to_string())
    );
    // By absolute path: another copy of the package built in the same target dir (the offline
    // flake test's stub build shares ./target) must not pass for this one.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    for source in stamp::SOURCES {
        rerun_if_exists(&format!("{manifest_dir}/{source}"));
    }
    let hash = stamp::source_hash(std::path::Path::new(&manifest_dir)).expect("the sources are readable");
    println!("cargo:rustc-env=SERBENCH_SOURCE_HASH={hash}");

    crate_versions();
    format_list();
    keep_link(&rustc);

    #[cfg(feature = "protobuf")]
    protobuf::generate();
}

/// Keeps the release link of the serbench binary, so `serbench layouts` can relink its
/// optimized program (after fat LTO) with lld's `--shuffle-sections` in seconds: lld's
/// `--reproduce` writes every input and the command line into `$OUT_DIR/link.tar`, whose path
/// and that of rustc's bundled lld are compiled in. Only where rustc links with that lld by
/// default (x86_64 Linux, no linker of the user's: cargo then sets RUSTC_LINKER) and
/// SERBENCH_KEEP_LINK is not `0`; elsewhere serbench has no layouts (docs/measurement.md).
fn keep_link(rustc: &str) {
    println!("cargo:rerun-if-env-changed=SERBENCH_KEEP_LINK");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let applies = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("HOST") == var("TARGET")
        && std::env::var_os("RUSTC_LINKER").is_none()
        && var("SERBENCH_KEEP_LINK") != "0";
    let Some(sysroot) = applies.then(|| output(rustc, &["--print", "sysroot"])).flatten() else {
        return;
    };
    let bin = std::path::Path::new(&sysroot).join("lib/rustlib/x86_64-unknown-linux-gnu/bin");
    if !bin.join("gcc-ld/ld.lld").exists() || !bin.join("rust-lld").exists() {
        return;
    }
    let tar = std::path::Path::new(&var("OUT_DIR")).join("link.tar");
    println!(
        "cargo:rustc-link-arg-bin=serbench=-Wl,--reproduce={}",
        tar.display()
    );
    println!("cargo:rustc-env=SERBENCH_LINK_TAR={}", tar.display());
    println!("cargo:rustc-env=SERBENCH_LLD={}", bin.join("rust-lld").display());
}

/// Writes `all()`, the enabled formats in the order of Cargo.toml's `default` feature list:
/// the one list of formats, so no other file repeats it. A name of the list is a format when
/// src/format/ has its module (exposing `FORMAT`); any other name is the feature of one backend
/// of a format, named like its crate, which that format's file registers under `#[cfg(feature)]`
/// (`BACKEND_FEATURES`).
fn format_list() {
    println!("cargo:rerun-if-changed=Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").expect("cannot read Cargo.toml");
    let list = manifest
        .split_once("\ndefault = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("Cargo.toml has a `default = [...]` feature list");
    let names: Vec<&str> = list
        .split(',')
        .map(|item| item.trim().trim_matches('"'))
        .filter(|item| !item.is_empty())
        .collect();
    let module = |name: &&str| {
        let dir = std::path::Path::new("src/format");
        dir.join(format!("{name}.rs")).is_file() || dir.join(name).join("mod.rs").is_file()
    };
    let (formats, backends): (Vec<&str>, Vec<&str>) = names.iter().copied().partition(module);
    let entries: String = formats
        .iter()
        .map(|name| {
            format!(
                "    #[cfg(feature = {name:?})]\n    &{}::FORMAT,\n",
                name.replace('-', "_")
            )
        })
        .collect();
    // A backend's crate whose package name is taken (rust-protobuf's `protobuf`, the format's
    // feature name) is a dependency renamed to the feature's name: `<feature> = { package = ".." }`.
    let packages: Vec<(&str, &str)> = backends
        .iter()
        .filter_map(|&feature| {
            let line = manifest
                .lines()
                .find(|line| line.starts_with(&format!("{feature} = {{")))?;
            let (_, rest) = line.split_once("package = \"")?;
            Some((feature, rest.split_once('"')?.0))
        })
        .collect();
    let code = format!(
        "/// Every enabled format, in the order of Cargo.toml's `default` list.\n\
         pub fn all() -> Vec<&'static Format> {{\n    let formats: &[&'static Format] = &[\n{entries}    ];\n    formats.to_vec()\n}}\n\n\
         /// The names of Cargo.toml's `default` list that are one backend's feature, not a format.\n\
         pub const BACKEND_FEATURES: &[&str] = &{backends:?};\n\n\
         /// `(feature, package)` of each backend feature whose dependency is renamed to it.\n\
         pub const BACKEND_PACKAGES: &[(&str, &str)] = &{packages:?};\n"
    );
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(std::path::Path::new(&out_dir).join("formats.rs"), code).expect("cannot write formats.rs");
}

/// Writes `CRATE_VERSIONS`, `(name, version)` of serbench's direct dependencies as Cargo.lock
/// resolves them. A dependency that the lock names with its version (two versions in the
/// graph) is written with that version.
fn crate_versions() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let packages: Vec<&str> = lock.split("[[package]]").skip(1).collect();
    let field = |package: &str, key: &str| -> Option<String> {
        package
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key} = \"")))
            .map(|value| value.trim_end_matches('"').to_string())
    };
    let versions_of = |name: &str| -> Vec<String> {
        packages
            .iter()
            .filter(|package| field(package, "name").as_deref() == Some(name))
            .filter_map(|package| field(package, "version"))
            .collect()
    };
    let mut entries = Vec::new();
    if let Some(own) = packages
        .iter()
        .find(|package| field(package, "name").as_deref() == Some("serbench"))
        && let Some(list) = own.split("dependencies = [").nth(1)
    {
        for dependency in list.split(']').next().unwrap_or_default().split(',') {
            let dependency = dependency.trim().trim_matches('"');
            let mut parts = dependency.split_whitespace();
            let Some(name) = parts.next() else { continue };
            let version = match parts.next() {
                Some(version) => Some(version.to_string()),
                None => versions_of(name).into_iter().next(),
            };
            if let Some(version) = version {
                entries.push(format!("    ({name:?}, {version:?}),\n"));
            }
        }
    }
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let code = format!(
        "/// `(name, version)` of every direct dependency, from Cargo.lock.\npub const CRATE_VERSIONS: &[(&str, &str)] = &[\n{}];\n",
        entries.concat()
    );
    std::fs::write(std::path::Path::new(&out_dir).join("crate_versions.rs"), code)
        .expect("cannot write crate_versions.rs");
}

/// Cargo passes the package's features to the build script as cfgs (the same set it exports as
/// CARGO_FEATURE_*), so this only runs, and protox and prost-build are only built, with the
/// `protobuf` feature.
#[cfg(feature = "protobuf")]
mod protobuf {
    const SCHEMA_DIR: &str = "schemas/protobuf";

    /// Compiles every `.proto` file of the schema directory with protox (a protobuf compiler
    /// written in Rust, so no system `protoc` is needed) and generates `$OUT_DIR/serbench.rs`
    /// (one file per proto package) with prost-build.
    pub fn generate() {
        println!("cargo:rerun-if-changed={SCHEMA_DIR}");
        let mut files: Vec<_> = std::fs::read_dir(SCHEMA_DIR)
            .unwrap_or_else(|error| panic!("cannot list {SCHEMA_DIR}: {error}"))
            .map(|entry| entry.expect("readable schema directory entry").path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "proto"))
            .collect();
        files.sort();
        let descriptors = protox::compile(&files, [SCHEMA_DIR])
            .unwrap_or_else(|error| panic!("protox cannot compile {SCHEMA_DIR}: {error:?}"));
        // The descriptor set, for the dynamic decode (prost-reflect's DynamicMessage).
        let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
        let descriptor_set = std::path::Path::new(&out_dir).join("serbench.fds");
        std::fs::write(&descriptor_set, prost::Message::encode_to_vec(&descriptors))
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", descriptor_set.display()));
        prost_build::Config::new()
            // BTreeMap for every map field: entries are encoded in sorted key order, so the
            // bytes are deterministic, and the maps match the model's BTreeMaps.
            .btree_map(["."])
            // `prost::Name` on every message: its full name finds its descriptor.
            .enable_type_names()
            .compile_fds(descriptors)
            .unwrap_or_else(|error| panic!("prost-build cannot generate {SCHEMA_DIR}: {error}"));
        #[cfg(feature = "buffa")]
        buffa(&descriptor_set, &out_dir);
        #[cfg(feature = "rust-protobuf")]
        rust_protobuf(&files);
    }

    /// buffa's owned messages and borrowed views of the same schema, from the descriptor set
    /// protox compiled (no `protoc`), into `$OUT_DIR/buffa/` (its own folder: buffa also names
    /// its file `serbench.rs`). `BTreeMap` for every map field, as prost's: sorted entries,
    /// deterministic bytes.
    #[cfg(feature = "buffa")]
    fn buffa(descriptor_set: &std::path::Path, out_dir: &str) {
        let dir = std::path::Path::new(out_dir).join("buffa");
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
        buffa_build::Config::new()
            .descriptor_set(descriptor_set)
            .files(&["serbench.proto"])
            .out_dir(&dir)
            .include_file("mod.rs")
            .map_type(buffa_build::MapRepr::BTreeMap)
            .compile()
            .unwrap_or_else(|error| panic!("buffa-build cannot generate {SCHEMA_DIR}: {error}"));
    }

    /// rust-protobuf's messages of the same schema (the second backend of the protobuf format):
    /// protobuf-codegen with its pure-Rust parser (no `protoc`) writes
    /// `$OUT_DIR/rust_protobuf/serbench.rs` and the `mod.rs` that declares it.
    #[cfg(feature = "rust-protobuf")]
    fn rust_protobuf(files: &[std::path::PathBuf]) {
        protobuf_codegen::Codegen::new()
            .pure()
            .include(SCHEMA_DIR)
            .inputs(files)
            .cargo_out_dir("rust_protobuf")
            .run_from_script();
    }
}

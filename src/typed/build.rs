//! Builds the generated crate ([`super::generate`]) and hands the command to it.
//!
//! Cache: one folder per crate key under `$SERBENCH_CACHE/typed/` (default
//! `$XDG_CACHE_HOME/serbench`, else `~/.cache/serbench`, else a new folder for one command):
//! the crate's sources, `build.log`, and the built binary, moved into place only once the build
//! succeeded, so an interrupted build leaves a cache that builds again and never a binary half
//! written. Every folder and file of it is the user's alone ([`PrivateDir`]), or refused: its
//! binaries are run. A build holds its key folder's `lock` until its binary is in place. The key is the crate's
//! ([`super::Crate::key`]) and this binary's size and time, so a second run on data of the same
//! schema by the same serbench finds the binary and builds nothing.
//!
//! Build: cargo (`$CARGO`, else `cargo` on the path), offline, with serbench's own toolchain
//! file, lock file and profiles, into the target folder serbench itself was built in when this
//! binary sits in one (so its dependencies are not compiled again; its own library is, once for
//! all typed crates, as their dependency outside its workspace), else into one
//! folder of the cache shared by every typed crate, in the same profile as this binary
//! (`--release` for a release build). `$SERBENCH_VENDOR` names a folder of vendored crates to
//! build from instead of cargo's registry (the Nix app sets it, with `SERBENCH_SOURCE` and the
//! toolchain on `PATH`).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::UsageError;
use crate::files::PrivateDir;
use crate::payload::data::{self, Request};

/// The binary's name inside its cache folder.
const BINARY: &str = "serbench-typed";
/// In a key folder: the generated crate, cargo's output, and the lock a build holds.
const CRATE: &str = "crate";
const BUILD_LOG: &str = "build.log";
const LOCK: &str = "lock";

/// The build's log, opened in its key folder.
struct Log {
    file: std::fs::File,
    path: PathBuf,
}

/// Builds (or finds) the typed binary for the data of `request`, then runs the command line it
/// was given in that binary: this process's own arguments, `--typed` included.
pub fn run_typed(request: &Request, formats: &[String]) -> Result<()> {
    let binary = typed_binary(request, formats)?;
    let arguments: Vec<OsString> = std::env::args_os().skip(1).collect();
    hand_over(&binary, &arguments)
}

/// The path of the typed binary for the data of `request`, built first when the cache has none.
/// A built binary of every format serves a command naming a few (`--format`, `dump`, `check`);
/// otherwise only the formats named are built.
pub fn typed_binary(request: &Request, formats: &[String]) -> Result<PathBuf> {
    let payloads = data::load(request)?;
    let source = super::source_dir();
    if !source.join("Cargo.toml").is_file() {
        return Err(UsageError::error(format!(
            "--typed builds against serbench's source, which is not at {} (set SERBENCH_SOURCE to a checkout of this version)",
            source.display()
        )));
    }
    let typed = crate::files::cache_root()?.child("typed")?;
    let key = |generated: &super::Crate| crate::codegen::key_of(&[&generated.key, &build_stamp()]);
    let built = |key: &str| -> Result<Option<PathBuf>> {
        // A binary in place is whole: it is renamed in only once built.
        match typed.existing_child(key)? {
            Some(folder) if folder.existing_file(BINARY)?.is_some() => Ok(Some(folder.join(BINARY))),
            _ => Ok(None),
        }
    };
    if !formats.is_empty()
        && let Some(binary) = built(&key(&super::generate(&payloads, &[], &source)))?
    {
        return Ok(binary);
    }
    let generated = super::generate(&payloads, formats, &source);
    let key = key(&generated);
    if let Some(binary) = built(&key)? {
        return Ok(binary);
    }
    // Refused before anything is made: a build the machine's memory cannot hold.
    let compiled = library_marker(&generated.features);
    let size = super::check_size(&generated, typed.existing_file(&compiled)?.is_none())?;
    let folder = typed.child(&key)?;
    // One build per key folder: a second command on the same schema waits, then finds the binary.
    let _lock = folder.lock(LOCK, || {
        eprintln!(
            "serbench: waiting for another build of this schema (in {})",
            crate::escape::terminal(&folder.path().display().to_string())
        )
    })?;
    if folder.existing_file(BINARY)?.is_some() {
        return Ok(folder.join(BINARY));
    }
    let log = Log {
        file: folder.rewrite_file(BUILD_LOG, 0o600)?,
        path: folder.join(BUILD_LOG),
    };
    // What an interrupted build left is ours to write again: the lock says no build runs.
    if folder.existing_child(CRATE)?.is_some() {
        let crate_dir = folder.join(CRATE);
        std::fs::remove_dir_all(&crate_dir)
            .with_context(|| format!("cannot remove {}", crate_dir.display()))?;
    }
    remove_leftovers(&folder)?;
    let crate_dir = folder.join(CRATE);
    super::write_files(&generated, &crate_dir)?;
    let names: Vec<&str> = payloads.iter().map(|data| data.spec.name).collect();
    eprintln!("serbench: {size}");
    eprintln!(
        "{}",
        crate::escape::terminal(&format!(
            "serbench: building the typed crate of {} (once per schema; cached in {})",
            names.join(", "),
            folder.path().display()
        ))
    );
    let started = Instant::now();
    let built = cargo_build(&crate_dir, &generated.binary, log, &typed)?;
    let partial = format!("{BINARY}.partial");
    folder.remove_file(&partial)?;
    let copied = (|| -> std::io::Result<()> {
        let mut from = std::fs::File::open(&built)?;
        let mut to = folder
            .create_new(&partial, 0o755)
            .map_err(std::io::Error::other)?;
        std::io::copy(&mut from, &mut to)?;
        to.sync_all()
    })();
    copied.with_context(|| format!("cannot copy {} to {}", built.display(), folder.path().display()))?;
    folder.rename(&partial, BINARY)?;
    typed.rewrite_file(&compiled, 0o600)?;
    eprintln!(
        "serbench: built the typed crate in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(folder.join(BINARY))
}

/// The temporary crates of writes killed midway ([`super::write_files`]).
fn remove_leftovers(folder: &PrivateDir) -> Result<()> {
    let prefix = super::temporary_prefix(CRATE);
    let entries = std::fs::read_dir(folder.path())
        .with_context(|| format!("cannot read {}", folder.path().display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", folder.path().display()))?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The name of the file in the typed cache that says a typed crate with serbench's `features`
/// was built by this serbench build into its target folder, so serbench's library is compiled
/// there as a dependency and the next typed build is quicker: the estimate before a build says
/// which.
fn library_marker(features: &str) -> String {
    let built = built_in();
    let parts = [
        build_stamp(),
        features.to_string(),
        format!("{:?}", built.target_dir),
        built.profile,
        format!("{:?}", built.triple),
    ];
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    format!("library-{}", crate::codegen::key_of(&parts))
}

/// This binary's size and modification time: a rebuilt serbench (whose source the typed crate
/// compiles) never reuses a typed binary of its previous build, even under one version string.
fn build_stamp() -> String {
    let metadata = std::env::current_exe().and_then(std::fs::metadata);
    match metadata {
        Ok(metadata) => format!("{} {:?}", metadata.len(), metadata.modified().ok()),
        Err(_) => String::new(),
    }
}

/// Where and how this binary was built: cargo's target folder, the profile folder's name, and the
/// target triple when it was a cross build.
struct BuiltIn {
    target_dir: Option<PathBuf>,
    profile: String,
    triple: Option<String>,
}

fn built_in() -> BuiltIn {
    let fallback_profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let exe = std::env::current_exe().ok();
    let profile_dir = exe.as_deref().and_then(Path::parent);
    // Cargo marks its target folder with CACHEDIR.TAG; a cross build adds the triple's folder.
    let found = profile_dir.and_then(|dir| {
        let profile = dir.file_name()?.to_string_lossy().into_owned();
        let above = dir.parent()?;
        if above.join("CACHEDIR.TAG").is_file() {
            return Some((above.to_path_buf(), profile, None));
        }
        let root = above.parent()?;
        root.join("CACHEDIR.TAG").is_file().then(|| {
            let triple = above.file_name().map(|name| name.to_string_lossy().into_owned());
            (root.to_path_buf(), profile, triple)
        })
    });
    match found {
        // The test harness's binaries live in deps/; their profile folder is the one above.
        Some((target_dir, profile, triple)) if profile != "deps" => BuiltIn {
            target_dir: Some(target_dir),
            profile,
            triple,
        },
        _ => BuiltIn {
            target_dir: None,
            profile: fallback_profile.to_string(),
            triple: None,
        },
    }
}

/// Runs `cargo build` on the crate in `crate_dir`, its output to `log` (and cargo's progress lines
/// to stderr); returns the binary built.
fn cargo_build(crate_dir: &Path, name: &str, log: Log, typed: &PrivateDir) -> Result<PathBuf> {
    let built_in = built_in();
    // Outside a cargo target folder (an installed or Nix-built serbench), one folder for every
    // typed crate, so serbench's dependencies are compiled once, not once per schema.
    let target_dir = match built_in.target_dir.clone() {
        Some(dir) => dir,
        None => typed.child("target")?.path().to_path_buf(),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .current_dir(crate_dir)
        .args(["build", "--offline", "--bin", name, "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let profile_dir = match built_in.profile.as_str() {
        "debug" => "debug".to_string(),
        "release" => {
            command.arg("--release");
            "release".to_string()
        }
        other => {
            command.args(["--profile", other]);
            other.to_string()
        }
    };
    if let Some(triple) = &built_in.triple {
        command.args(["--target", triple]);
    }
    // The crates serbench was built from, where it says (the Nix app: its vendored Cargo.lock).
    if let Some(vendor) = std::env::var_os("SERBENCH_VENDOR") {
        let vendor = Path::new(&vendor).display().to_string();
        command.args([
            "--config",
            "source.crates-io.replace-with=\"serbench-vendor\"",
            "--config",
            &format!("source.serbench-vendor.directory={vendor:?}"),
        ]);
    }
    let mut child = command.spawn().with_context(|| {
        format!(
            "cannot run {} (set CARGO to cargo's path)",
            cargo.to_string_lossy()
        )
    })?;
    let Log {
        file: mut log_file,
        path: log,
    } = log;
    let stderr = child.stderr.take().expect("stderr is piped");
    for line in BufReader::new(stderr).lines() {
        let line = line.context("cannot read cargo's output")?;
        writeln!(log_file, "{line}").with_context(|| format!("cannot write {}", log.display()))?;
        let trimmed = line.trim_start();
        if trimmed.starts_with("Compiling") || trimmed.starts_with("Finished") {
            eprintln!("  {trimmed}");
        }
    }
    let status = child.wait().context("cargo did not finish")?;
    if !status.success() {
        bail!("the typed build failed ({status}): see {}", log.display());
    }
    let mut binary = target_dir;
    if let Some(triple) = &built_in.triple {
        binary.push(triple);
    }
    binary.push(profile_dir);
    binary.push(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    Ok(binary)
}

/// Replaces this process with `binary` run on `arguments` (elsewhere than Unix: runs it and exits
/// with its status).
fn hand_over(binary: &Path, arguments: &[OsString]) -> Result<()> {
    let mut command = Command::new(binary);
    command.args(arguments);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        Err(error).with_context(|| format!("cannot run {}", binary.display()))
    }
    #[cfg(not(unix))]
    {
        let status = command
            .status()
            .with_context(|| format!("cannot run {}", binary.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}

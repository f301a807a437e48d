//! Code layouts: this build's optimized program linked again with lld's
//! `--shuffle-sections=*=SEED`, so its functions land at other addresses and in another order,
//! what an unrelated change elsewhere in the binary does to the same code. The release build
//! keeps its link (build.rs: lld's `--reproduce` tar of every input after fat LTO), so a layout
//! costs one link, not another LTO: [`make`] (`serbench layouts K`). The pool ([`Pool`]) is the
//! plain binary and the layouts made from it, kept in the private cache under the hash of the
//! binary; the full profile and `vs` draw each worker's program from it. Why: docs/measurement.md,
//! "Code layout".

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::Digest;

use crate::UsageError;
use crate::files::{PrivateDir, cache_root};
use crate::measure::Order;

/// The kept link (lld's `--reproduce` tar) and rustc's bundled lld, compiled in by build.rs
/// where the release build links with that lld.
const LINK_TAR: Option<&str> = option_env!("SERBENCH_LINK_TAR");
const LLD: Option<&str> = option_env!("SERBENCH_LLD");

/// Layouts `serbench layouts` makes unless told: enough that no section of the full profile
/// runs two workers in one layout below [`crate::measure::Passes::max_workers`] with the plain
/// binary as one more.
pub const DEFAULT_COUNT: usize = 20;

/// The programs a run's workers are drawn from: the plain binary first, then its layouts.
#[derive(Clone, Debug)]
pub struct Pool {
    pub programs: Vec<PathBuf>,
    /// Why there are no layouts, when there are none.
    pub none_because: Option<String>,
}

impl Pool {
    /// This binary alone (process-level randomization only), saying why.
    pub fn plain(why: String) -> Result<Pool> {
        Ok(Pool {
            programs: vec![std::env::current_exe().context("cannot find this executable for its workers")?],
            none_because: Some(why),
        })
    }

    /// This build's pool: the plain binary and the layouts [`make`] made of it, each checked to be
    /// the user's own file in the private cache and to report this binary's `--version`.
    pub fn of_this_build() -> Result<Pool> {
        if LINK_TAR.is_none() {
            return Pool::plain(no_link_reason());
        }
        let exe = std::env::current_exe().context("cannot find this executable")?;
        let Some(folder) = cache_root()?
            .existing_child("layouts")?
            .map(|layouts| layouts.existing_child(&build_key()?))
            .transpose()?
            .flatten()
        else {
            return Pool::plain(
                "no layouts of this build yet (`serbench layouts` makes them in seconds)".into(),
            );
        };
        let mut programs = vec![exe];
        for seed in 1.. {
            let name = layout_name(seed);
            if folder.existing_file(&name)?.is_none() {
                break;
            }
            programs.push(folder.join(&name));
        }
        check_versions(&programs[1..])?;
        Ok(Pool {
            none_because: (programs.len() == 1)
                .then(|| "the layouts folder of this build is empty".to_string()),
            programs,
        })
    }

    /// The number of distinct programs (the plain binary counts as one layout).
    pub fn layouts(&self) -> usize {
        self.programs.len()
    }

    /// The pool's programs in a random order, for a run to draw from in turn: every layout once
    /// before any twice.
    pub fn draw_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.programs.len()).collect();
        Order::seeded().shuffle(&mut order);
        order
    }
}

fn no_link_reason() -> String {
    if cfg!(target_os = "macos") {
        "macOS' ld64 cannot shuffle sections: process-level randomization only".to_string()
    } else {
        "this build kept no link to relink (only a release build on x86_64 Linux linked by rustc's \
         bundled lld does): process-level randomization only"
            .to_string()
    }
}

fn layout_name(seed: usize) -> String {
    format!("serbench-layout-{seed}")
}

/// This build's key, the name of its layouts' folder and of its `vs` sessions' log: the first 16
/// hex digits of the running binary's SHA-256 (hashed once per process), so neither is ever
/// another build's of the same version string.
pub fn build_key() -> Result<String> {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(key) = KEY.get() {
        return Ok(key.clone());
    }
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let key = key_of(&exe)?;
    Ok(KEY.get_or_init(|| key).clone())
}

fn key_of(exe: &Path) -> Result<String> {
    let mut file = std::fs::File::open(exe).with_context(|| format!("cannot read {}", exe.display()))?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file
            .read(&mut buffer)
            .with_context(|| format!("cannot read {}", exe.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

/// Refuses a layout that does not report this binary's `--version` (the commit and the build).
pub fn check_versions(programs: &[PathBuf]) -> Result<()> {
    let ours = crate::host::version();
    for program in programs {
        let output = Command::new(program).arg("--version").output().map_err(|error| {
            UsageError::error(format!("cannot run the layout {}: {error}", program.display()))
        })?;
        let theirs = String::from_utf8_lossy(&output.stdout);
        let theirs = theirs.trim().trim_start_matches("serbench ");
        if theirs != ours {
            return Err(UsageError::error(format!(
                "{}: {theirs:?} is not a build of this serbench ({ours:?}): a layout must be the same commit built for the same CPU",
                crate::escape::terminal(&program.display().to_string())
            )));
        }
    }
    Ok(())
}

/// `serbench layouts K`: relinks this build's kept link K times with seeds 1..=K into the pool
/// (replacing the pool's earlier layouts), after proving that the kept link, relinked without a
/// shuffle, gives this very binary byte for byte. Returns what it did, for the terminal.
pub fn make(count: usize) -> Result<String> {
    let started = Instant::now();
    let (Some(tar), Some(lld)) = (LINK_TAR, LLD) else {
        return Err(UsageError::error(no_link_reason()));
    };
    let (tar, lld) = (Path::new(tar), Path::new(lld));
    if !tar.is_file() {
        return Err(UsageError::error(format!(
            "{}: the kept link of this build is gone (a `cargo clean`?): build it again with `cargo build --release`",
            tar.display()
        )));
    }
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let pool = cache_root()?.child("layouts")?.child(&key_of(&exe)?)?;
    let _lock = pool.lock("lock", || {
        eprintln!("waiting for another `serbench layouts` of this build")
    })?;
    let scratch = PrivateDir::fresh_temporary("serbench-link-", crate::files::CACHE_HINT)?;
    let extracted = Instant::now();
    let status = Command::new("tar")
        .arg("-xf")
        .arg(tar)
        .arg("-C")
        .arg(scratch.path())
        .status()
        .context("cannot run tar to unpack the kept link")?;
    if !status.success() {
        bail!("tar could not unpack {} ({status})", tar.display());
    }
    // lld names the tar's one folder after the tar's stem.
    let root = scratch.join(tar.file_stem().and_then(|stem| stem.to_str()).unwrap_or("link"));
    let extracted = extracted.elapsed();
    let link = |output: &Path, seed: Option<usize>| -> Result<std::time::Duration> {
        let started = Instant::now();
        let mut command = Command::new(lld);
        command
            .current_dir(&root)
            .args(["-flavor", "gnu", "@response.txt"]);
        if let Some(seed) = seed {
            command.arg(format!("--shuffle-sections=*={seed}"));
        }
        let output_status = command
            .arg("-o")
            .arg(output)
            .output()
            .with_context(|| format!("cannot run {}", lld.display()))?;
        if !output_status.status.success() {
            bail!(
                "relinking failed ({}): {}",
                output_status.status,
                String::from_utf8_lossy(&output_status.stderr)
                    .lines()
                    .last()
                    .unwrap_or("no message")
            );
        }
        Ok(started.elapsed())
    };
    let plain = scratch.join("plain");
    link(&plain, None)?;
    if std::fs::read(&plain)? != std::fs::read(&exe)? {
        return Err(UsageError::error(format!(
            "the kept link ({}) is not this binary's: it was rebuilt since; run the binary cargo built last",
            tar.display()
        )));
    }
    std::fs::remove_file(&plain).ok();
    for seed in 1.. {
        if pool.existing_file(&layout_name(seed))?.is_none() {
            break;
        }
        pool.remove_file(&layout_name(seed))?;
    }
    let mut each = Vec::new();
    let mut programs = Vec::new();
    for seed in 1..=count {
        let name = layout_name(seed);
        let partial = format!(".{name}.partial");
        pool.remove_file(&partial)?;
        each.push(link(&pool.join(&partial), Some(seed))?.as_secs_f64());
        pool.rename(&partial, &name)?;
        if pool.existing_file(&name)?.is_none() {
            bail!("{} vanished as it was made", pool.join(&name).display());
        }
        programs.push(pool.join(&name));
    }
    check_versions(&programs)?;
    scratch_cleanup(scratch).ok();
    each.sort_by(f64::total_cmp);
    Ok(format!(
        "{count} layouts of this build in {:.1} s (unpacking the kept link {:.1} s, proving it relinks to this \
         binary, then a median {:.2} s per link): {}\n",
        started.elapsed().as_secs_f64(),
        extracted.as_secs_f64(),
        each.get(each.len() / 2).copied().unwrap_or(0.0),
        crate::escape::terminal(&pool.path().display().to_string())
    ))
}

fn scratch_cleanup(scratch: PrivateDir) -> Result<()> {
    std::fs::remove_dir_all(scratch.path())
        .with_context(|| format!("cannot remove {}", scratch.path().display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_key_is_the_binary_hash_and_a_draw_uses_every_layout_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bin");
        std::fs::write(&file, b"abc").unwrap();
        // SHA-256("abc") begins ba7816bf8f01cfea.
        assert_eq!(key_of(&file).unwrap(), "ba7816bf8f01cfea");
        let pool = Pool {
            programs: (0..17).map(|index| PathBuf::from(format!("p{index}"))).collect(),
            none_because: None,
        };
        let mut order = pool.draw_order();
        order.sort();
        assert_eq!(order, (0..17).collect::<Vec<_>>());
    }
}

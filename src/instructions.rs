//! Deterministic instruction counts (Linux, valgrind's callgrind): a change's effect is visible
//! on a noisy machine, because the count of the same binary on the same input does not depend
//! on what else the machine does.
//!
//! For each arm, serbench re-runs itself under callgrind as a worker that proves the arm's round
//! trip, then calls [`counted_region`] twice: once with one iteration (warming caches, lazy
//! statics and buffers) and once with [`ITERATIONS`]. Collection is on only inside that function
//! (`--toggle-collect`) and a profile is dumped after each call (`--dump-after`), so the second
//! dump holds exactly the instructions of `ITERATIONS` warm operations.
//!
//! The counts go to instructions.csv (one row per arm, [`InstructionRow`], checked on reading
//! like every serbench file).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::arm::{Arm, ArmId, Runner};
use crate::format::Registry;
use crate::report::SCHEMA_VERSION;
use crate::report::files::{self, Record, in_range};

/// Operations counted in the measured call.
pub const ITERATIONS: u64 = 20;

pub const FILE_NAME: &str = "instructions.csv";

/// The one function callgrind collects in; its symbol is unmangled so callgrind can name it.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn serbench_counted_region(runner: &mut dyn Runner, iterations: u64) -> Result<()> {
    runner.run(iterations)
}

/// What the worker does inside valgrind: prove the arm `id`, warm it, count it. The worker
/// builds only the arm's own format: another format's set-up (hash maps with random seeds)
/// would shift heap addresses, and with them the instruction paths of address-dependent code
/// such as `memcmp`.
pub fn worker(id: &ArmId) -> Result<()> {
    let registry = Registry::of_formats(|name| name == id.codec.format);
    let arm = registry
        .arm(id)
        .with_context(|| format!("{id}: no such arm in this build"))?;
    let mut prepared = arm.prepare()?;
    serbench_counted_region(prepared.runner.as_mut(), 1)?;
    serbench_counted_region(prepared.runner.as_mut(), ITERATIONS)
}

/// One arm's count; the counts are empty for an arm that failed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InstructionRow {
    pub schema_version: u32,
    pub arm: ArmId,
    pub records: usize,
    pub iterations: u64,
    pub instructions_per_op: Option<f64>,
    pub instructions_per_record: Option<f64>,
    pub status: String,
    pub note: String,
}

impl Record for InstructionRow {
    const ROW: &'static str = "arm";

    /// An ok row has both counts, each finite and positive.
    fn check(&self) -> Result<(), String> {
        files::check_versioned(self.schema_version, self.records)?;
        if self.iterations == 0 {
            return Err("iterations 0: a count takes at least one".to_string());
        }
        for (column, value) in [
            ("instructions_per_op", self.instructions_per_op),
            ("instructions_per_record", self.instructions_per_record),
        ] {
            match value {
                Some(value) => in_range(column, value, f64::MIN_POSITIVE, f64::MAX)?,
                None if self.status == "ok" => return Err(format!("{column} is empty in an ok row")),
                None => {}
            }
        }
        Ok(())
    }

    fn key(&self) -> String {
        self.arm.to_string()
    }
}

/// Counts one arm by running `serbench` under callgrind.
pub fn count(arm: &Arm, scratch: &Path) -> InstructionRow {
    let id = &arm.id;
    let mut row = InstructionRow {
        schema_version: SCHEMA_VERSION,
        arm: id.clone(),
        records: arm.spec.records,
        iterations: ITERATIONS,
        instructions_per_op: None,
        instructions_per_record: None,
        status: "ok".to_string(),
        note: String::new(),
    };
    match callgrind(id, scratch) {
        Ok(instructions) => {
            let per_op = instructions as f64 / ITERATIONS as f64;
            row.instructions_per_op = Some(per_op);
            row.instructions_per_record = Some(per_op / row.records as f64);
        }
        Err(error) => {
            row.status = "failed".to_string();
            row.note = format!("{id}: {error:#}").replace('\n', " ");
        }
    }
    row
}

fn callgrind(id: &ArmId, scratch: &Path) -> Result<u64> {
    let executable = std::env::current_exe().context("cannot find the serbench executable")?;
    let arm = serde_json::to_string(id)?;
    count_region(
        &executable,
        &["instructions-worker", "--arm", &arm],
        &[],
        "serbench_counted_region",
        &scratch.join(format!("callgrind.{}.out", file_safe(&id.path()))),
    )
}

/// `text` with every character but ASCII letters and digits replaced by `_`: a file name.
fn file_safe(text: &str) -> String {
    text.chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character
            } else {
                '_'
            }
        })
        .collect()
}

/// The executable `program` in the first folder of `path` (a PATH value) that has one: NixOS
/// and `nix develop` have setarch on PATH only, not in /usr/bin.
fn find_on_path(program: &str, path: Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&path?)
        .map(|folder| folder.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
        })
}

/// Runs `program` under callgrind with collection on only inside `region`, an unmangled
/// function the program calls twice: once to warm up, then for [`ITERATIONS`] operations.
/// Returns the instructions of the second call. Also counts the fidelity benchmark's direct
/// library calls, so both sides of a fidelity pair are counted the same way.
pub fn count_region(
    program: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    region: &str,
    out_file: &Path,
) -> Result<u64> {
    // Without address-space randomisation (where `setarch -R` exists), so the heap and stack
    // addresses, and with them the paths of address-dependent code, repeat from run to run.
    let mut command = match find_on_path("setarch", std::env::var_os("PATH")) {
        Some(setarch) => {
            let mut command = Command::new(setarch);
            command.args(["-R", "valgrind"]);
            command
        }
        None => Command::new("valgrind"),
    };
    let output = command
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={region}"))
        .arg(format!("--dump-after={region}"))
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(program)
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .context("cannot run valgrind (Linux only; install it, e.g. `apt-get install valgrind`)")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rfind(|line| !line.starts_with("=="))
            .unwrap_or("no message");
        bail!("{} under callgrind failed: {last}", program.display());
    }
    // Dumps are numbered in call order: .1 is the warm-up call, .2 the counted one.
    let counted = out_file.with_extension("out.2");
    let text = std::fs::read_to_string(&counted)
        .with_context(|| format!("callgrind wrote no {}", counted.display()))?;
    for path in [out_file.with_extension("out.1"), counted] {
        std::fs::remove_file(path).ok();
    }
    total_instructions(&text).with_context(|| format!("no instruction total in callgrind's dump of {region}"))
}

/// Instructions per operation of one fidelity pair: the fidelity benchmark's direct library
/// call (its case of the arm `id`, counted in `bench_binary`), then serbench's arm `id`.
pub fn count_fidelity_pair(id: &ArmId, bench_binary: &Path, scratch: &Path) -> Result<(f64, f64)> {
    let path = id.path();
    let direct = count_region(
        bench_binary,
        &[],
        &[("SERBENCH_FIDELITY_COUNT", &path)],
        "fidelity_counted_region",
        &scratch.join(format!("callgrind.fidelity.{}.out", file_safe(&path))),
    )
    .with_context(|| format!("counting the fidelity case {path}"))?;
    let harness = callgrind(id, scratch).with_context(|| format!("counting serbench's arm {id}"))?;
    Ok((
        direct as f64 / ITERATIONS as f64,
        harness as f64 / ITERATIONS as f64,
    ))
}

/// The `totals:` (or `summary:`) line of a callgrind dump: instructions executed (Ir).
pub fn total_instructions(dump: &str) -> Option<u64> {
    dump.lines()
        .find_map(|line| {
            line.strip_prefix("totals:")
                .or_else(|| line.strip_prefix("summary:"))
        })
        .and_then(|value| value.split_whitespace().next())
        .and_then(|value| value.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total_of_a_dump() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) x\n16 42\ntotals: 123456\n";
        assert_eq!(total_instructions(dump), Some(123_456));
        assert_eq!(total_instructions("events: Ir\n"), None);
    }

    #[test]
    fn setarch_is_found_on_path_wherever_it_lives() {
        use std::os::unix::fs::PermissionsExt;
        let store = tempfile::tempdir().unwrap();
        let bin = store.path().join("util-linux/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let setarch = bin.join("setarch");
        std::fs::write(&setarch, "#!/bin/sh\n").unwrap();
        let path = |folders: &[&Path]| Some(std::env::join_paths(folders).unwrap());
        let empty = store.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();

        // Not executable yet: not a program.
        assert_eq!(find_on_path("setarch", path(&[&bin])), None);
        std::fs::set_permissions(&setarch, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("setarch", path(&[&empty, &bin])), Some(setarch));
        assert_eq!(find_on_path("setarch", path(&[&empty])), None);
        assert_eq!(find_on_path("setarch", None), None);
    }
}

//! Deterministic costs (Linux, valgrind's callgrind with its cache simulation): a change's
//! effect is visible on a noisy machine, because the counts of the same binary on the same input
//! do not depend on what else the machine does.
//!
//! For each arm, serbench re-runs itself under callgrind as a worker that proves the arm's round
//! trip, then calls [`serbench_counted_region`] twice: once with one iteration (warming caches, lazy
//! statics and buffers) and once with [`ITERATIONS`]. Collection is on only inside that function
//! (`--toggle-collect`) and a profile is dumped after each call (`--dump-after`), so the second
//! dump holds exactly the events of `ITERATIONS` warm operations: instructions, and the misses of
//! a simulated cache whose sizes are fixed ([`CACHE`]), so counts do not depend on the host's.
//! [`Counts::estimated_cycles`] weighs them with iai-callgrind's model.
//!
//! The counts go to instructions.csv (one row per arm, [`InstructionRow`], checked on reading
//! like every serbench file).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::arm::{Arm, ArmId, Runner};
use crate::format::Registry;
use crate::schema::SCHEMA_VERSION;
use crate::schema::instructions::InstructionRow;
use crate::worker::{self, Launcher, Request};

/// Operations counted in the measured call.
pub const ITERATIONS: u64 = 20;

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

/// Counts one arm by running `serbench` under callgrind.
pub fn count(arm: &Arm, scratch: &Path) -> InstructionRow {
    let id = &arm.id;
    let mut row = InstructionRow {
        schema_version: SCHEMA_VERSION,
        arm: id.clone(),
        records: arm.spec.records,
        iterations: ITERATIONS,
        status: "ok".to_string(),
        ..InstructionRow::default()
    };
    match callgrind(id, scratch) {
        Ok(counts) => {
            let per_op = |count: u64| Some(count as f64 / ITERATIONS as f64);
            row.instructions_per_op = per_op(counts.instructions);
            row.instructions_per_record =
                Some(counts.instructions as f64 / ITERATIONS as f64 / row.records as f64);
            row.d1_misses_per_op = per_op(counts.d1_misses());
            row.ll_misses_per_op = per_op(counts.ll_misses());
            row.estimated_cycles_per_op = per_op(counts.estimated_cycles());
        }
        Err(error) => {
            row.status = "failed".to_string();
            row.note = format!("{id}: {error:#}").replace('\n', " ");
        }
    }
    row
}

fn callgrind(id: &ArmId, scratch: &Path) -> Result<Counts> {
    let worker = Launcher::current_exe()?;
    let args: Vec<&str> = worker.args.iter().map(String::as_str).collect();
    count_region(
        &worker.program,
        &args,
        &[],
        Some(&Request::Instructions { arm: id.clone() }),
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

/// The simulated caches, as valgrind's `--I1`, `--D1` and `--LL` (size, associativity, line):
/// 32 KiB 8-way first-level caches and an 8 MiB 16-way last level, a common x86-64 and aarch64
/// server core. Fixed, not detected: a count then means the same on every host (valgrind would
/// otherwise read the host's caches, which a VM may report differently from day to day).
pub const CACHE: [(&str, &str); 3] = [
    ("--I1", "32768,8,64"),
    ("--D1", "32768,8,64"),
    ("--LL", "8388608,16,64"),
];

/// What callgrind counted in one dump, with its cache simulation on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Instructions executed (`Ir`), which are also the instruction cache's reads.
    pub instructions: u64,
    /// Data reads and writes (`Dr`, `Dw`).
    pub data_accesses: u64,
    /// First-level misses: instruction reads, data reads, data writes (`I1mr`, `D1mr`, `D1mw`).
    pub l1_misses: [u64; 3],
    /// Last-level misses, in the same order (`ILmr`, `DLmr`, `DLmw`).
    pub ll_misses: [u64; 3],
}

impl Counts {
    /// The first-level data cache's misses.
    pub fn d1_misses(&self) -> u64 {
        self.l1_misses[1] + self.l1_misses[2]
    }

    /// Every last-level miss: the accesses that went to RAM.
    pub fn ll_misses(&self) -> u64 {
        self.ll_misses.iter().sum()
    }

    /// Cycles as iai-callgrind estimates them (after Itamar Turner-Trauring's model, which
    /// iai and CodSpeed use too): an L1 hit costs 1, a last-level hit 5, a RAM access 35. A
    /// model of memory cost, not of any CPU: no pipelining, branch prediction or prefetching.
    pub fn estimated_cycles(&self) -> u64 {
        let accesses = self.instructions + self.data_accesses;
        let l1_misses: u64 = self.l1_misses.iter().sum();
        let ram = self.ll_misses();
        let l1_hits = accesses.saturating_sub(l1_misses);
        let ll_hits = l1_misses.saturating_sub(ram);
        l1_hits + 5 * ll_hits + 35 * ram
    }

    /// The `events:` line's names and the `totals:` (or `summary:`) line's values of a callgrind
    /// dump; `None` when the dump lacks an event of the cache simulation.
    pub fn of_dump(dump: &str) -> Option<Counts> {
        let line = |prefix: &str| dump.lines().find_map(|line| line.strip_prefix(prefix));
        let names: Vec<&str> = line("events:")?.split_whitespace().collect();
        let totals = line("totals:").or_else(|| line("summary:"))?;
        let values: Vec<u64> = totals
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        // callgrind leaves out trailing events that are zero.
        let event = |name: &str| {
            let index = names.iter().position(|event| *event == name)?;
            Some(values.get(index).copied().unwrap_or(0))
        };
        Some(Counts {
            instructions: event("Ir")?,
            data_accesses: event("Dr")? + event("Dw")?,
            l1_misses: [event("I1mr")?, event("D1mr")?, event("D1mw")?],
            ll_misses: [event("ILmr")?, event("DLmr")?, event("DLmw")?],
        })
    }
}

/// Runs `program` under callgrind with collection on only inside `region`, an unmangled
/// function the program calls twice: once to warm up, then for [`ITERATIONS`] operations.
/// Returns the counts of the second call. Also counts the fidelity benchmark's direct
/// library calls, so both sides of a fidelity pair are counted the same way.
pub fn count_region(
    program: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    request: Option<&Request>,
    region: &str,
    out_file: &Path,
) -> Result<Counts> {
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
    command
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--cache-sim=yes")
        .args(CACHE.iter().map(|(option, cache)| format!("{option}={cache}")))
        .arg(format!("--toggle-collect={region}"))
        .arg(format!("--dump-after={region}"))
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(program)
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = match request {
        Some(request) => worker::spawn(command, request),
        None => command.spawn().map_err(anyhow::Error::from),
    };
    let output = started
        .and_then(|child| Ok(child.wait_with_output()?))
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
    Counts::of_dump(&text)
        .with_context(|| format!("no cache-simulation totals in callgrind's dump of {region}"))
}

/// Instructions per operation of one fidelity pair: the fidelity benchmark's direct library
/// call (its case of the arm `id`, counted in `bench_binary`), then serbench's arm `id`.
pub fn count_fidelity_pair(id: &ArmId, bench_binary: &Path, scratch: &Path) -> Result<(f64, f64)> {
    let path = id.path();
    let direct = count_region(
        bench_binary,
        &[],
        &[("SERBENCH_FIDELITY_COUNT", &path)],
        None,
        "fidelity_counted_region",
        &scratch.join(format!("callgrind.fidelity.{}.out", file_safe(&path))),
    )
    .with_context(|| format!("counting the fidelity case {path}"))?;
    let harness = callgrind(id, scratch).with_context(|| format!("counting serbench's arm {id}"))?;
    Ok((
        direct.instructions as f64 / ITERATIONS as f64,
        harness.instructions as f64 / ITERATIONS as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cache_totals_of_a_dump() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                    fn=(1) x\n16 42\ntotals: 1000 300 200 10 40 20 2 5\n";
        let counts = Counts::of_dump(dump).unwrap();
        // DLmw, zero, is left out of the line.
        assert_eq!(counts.ll_misses, [2, 5, 0]);
        assert_eq!((counts.d1_misses(), counts.ll_misses()), (60, 7));
        // 1500 accesses, 70 L1 misses of which 7 went to RAM: 1430 + 5 * 63 + 35 * 7.
        assert_eq!(counts.estimated_cycles(), 1430 + 315 + 245);
        // A dump without the cache simulation has instructions only: not enough.
        assert_eq!(Counts::of_dump("events: Ir\ntotals: 123456\n"), None);
        assert_eq!(Counts::of_dump("events: Ir Dr\n"), None);
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

//! `serbench footprint`: what a format costs in code size and compile time. One fixed program
//! (footprint/src/main.rs, the `serbench-footprint` package, which calls [`program`]) is built
//! once per format with that format's feature only, and once with none (the baseline), each in
//! a fresh target dir with the release profile and stripped by rustc; each binary is measured
//! (file size, `.text` read from its headers with the `object` crate) and run once, so a build
//! that does not work is never measured. `--runs` repeats every build (back to back, and
//! footprint.csv is written after each build, so an interrupted footprint keeps the builds it
//! finished); the rows ([`FootprintRow`]) hold the median and the fastest and slowest run, and
//! the highest load average seen, since a clean build's wall time is only as quiet as the
//! machine.
//!
//! The program reaches its format through [`Registry::build`], so its binary holds the format's
//! library and serbench's codecs of every payload for it (not only of [`PAYLOAD`]): the figures
//! are what the format costs as serbench integrates it, an upper bound for a program with one
//! message type. Cargo is `$CARGO` when set (cargo sets it for what it runs), else `cargo`.
//!
//! The program is its own package rather than an example so that its build compiles serbench's
//! library and that library's dependencies only (cargo builds every dev-dependency for an
//! example).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result, bail};
use object::{Object, ObjectSection};
use serde::{Deserialize, Serialize};

use crate::UsageError;
use crate::arm::Operation;
use crate::format::Registry;
use crate::host::{Host, utc_timestamp};
use crate::schema::footprint::{BASELINE, FootprintRow, SCHEMA_VERSION};
use crate::schema::results::{STATUS_FAILED, STATUS_OK};
use crate::stats::percentile;

/// The package of the fixed program, in the workspace of serbench's own Cargo.toml.
pub const PROGRAM: &str = "serbench-footprint";
/// The payload the program encodes and decodes: the flat record every format carries.
pub const PAYLOAD: &str = "order";

/// What the built program says when it runs: which formats it has, how many of its codecs
/// round-tripped [`PAYLOAD`], and the compiler, commit and build it was compiled with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramReport {
    pub formats: Vec<String>,
    pub round_trips: usize,
    pub rustc: String,
    pub commit: String,
    pub build: String,
}

/// The fixed program: every round-trip arm of [`PAYLOAD`] in the registry proven and run once
/// (an encode and a decode each), then the report as one JSON line.
pub fn program() -> Result<String> {
    let registry = Registry::build();
    let mut round_trips = 0;
    for arm in registry
        .arms
        .iter()
        .filter(|arm| arm.id.codec.payload == PAYLOAD && arm.id.operation == Operation::RoundTrip)
    {
        arm.prepare()?.runner.run(1)?;
        round_trips += 1;
    }
    let host = Host::detect();
    let report = ProgramReport {
        formats: crate::format::all()
            .iter()
            .map(|format| format.name.to_string())
            .collect(),
        round_trips,
        rustc: host.rustc,
        commit: host.commit,
        build: host.build,
    };
    Ok(serde_json::to_string(&report)?)
}

/// What to build and how often.
#[derive(Clone, Debug)]
pub struct FootprintOptions {
    /// The formats (empty: every format this serbench knows); the baseline is always built.
    pub formats: Vec<String>,
    pub runs: usize,
    /// serbench's source tree (the folder of its Cargo.toml).
    pub source: PathBuf,
}

/// The source tree `footprint` builds from without `--source`: the one this binary was built
/// from, if it is still there, else the current folder.
pub fn default_source() -> PathBuf {
    let built_from = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if is_source(&built_from) {
        built_from
    } else {
        PathBuf::from(".")
    }
}

fn is_source(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file() && dir.join("footprint").join("Cargo.toml").is_file()
}

/// One build of one run, measured.
#[derive(Clone, Debug)]
struct Sample {
    seconds: f64,
    /// The 1-minute load average as the build finished (Linux), see [`load_average`].
    load: Option<f64>,
    binary: Binary,
    report: ProgramReport,
}

/// Builds and measures everything `options` names, the baseline first, each build's runs back
/// to back; a build that fails in any run is a failed row with the reason, and the others go
/// on. After each build, `finished` gets the rows of the builds done so far (to write them, so
/// that an interrupted footprint keeps what it measured).
pub fn measure(
    options: &FootprintOptions,
    mut finished: impl FnMut(&[FootprintRow]) -> Result<()>,
) -> Result<Vec<FootprintRow>> {
    if !is_source(&options.source) {
        return Err(UsageError::error(format!(
            "{}: not serbench's source tree (no Cargo.toml with footprint/Cargo.toml beside it); \
             pass --source with the folder of serbench's Cargo.toml",
            options.source.display()
        )));
    }
    let builds: Vec<String> = std::iter::once(BASELINE.to_string())
        .chain(if options.formats.is_empty() {
            crate::format::all()
                .iter()
                .map(|format| format.name.to_string())
                .collect()
        } else {
            options.formats.clone()
        })
        .collect();
    // A format named twice is built once (its row is its key in footprint.csv).
    let builds: Vec<String> = builds
        .iter()
        .enumerate()
        .filter(|(index, build)| !builds[..*index].contains(build))
        .map(|(_, build)| build.clone())
        .collect();
    let scratch = Scratch::new()?;
    let timestamp = utc_timestamp(SystemTime::now());
    let mut samples: Vec<Result<Vec<Sample>, String>> = Vec::new();
    let mut rows_so_far = Vec::new();
    for (done, build) in builds.iter().enumerate() {
        let mut outcome = Ok(Vec::new());
        for run in 1..=options.runs {
            // A fresh target dir per build: nothing of one build is left for the next.
            let target = scratch.0.join(format!("target-{build}"));
            let sample = build_once(&options.source, build, &target);
            std::fs::remove_dir_all(&target).ok();
            match sample {
                Ok(sample) => {
                    eprintln!(
                        "footprint: {build} run {run}/{}: {:.1} s, {} bytes (.text {})",
                        options.runs, sample.seconds, sample.binary.bytes, sample.binary.text_bytes
                    );
                    if let Ok(samples) = &mut outcome {
                        samples.push(sample);
                    }
                }
                Err(error) => {
                    eprintln!("footprint: {build} run {run}/{}: failed: {error:#}", options.runs);
                    outcome = Err(format!("{error:#}"));
                    break;
                }
            }
        }
        samples.push(outcome);
        rows_so_far = rows(&builds[..=done], &samples, options.runs, &timestamp)?;
        finished(&rows_so_far)?;
    }
    Ok(rows_so_far)
}

/// The rows of the builds from their samples, the baseline first; `runs` is how many runs were
/// asked for (a failed build stopped at its first failure).
fn rows(
    builds: &[String],
    samples: &[Result<Vec<Sample>, String>],
    runs: usize,
    timestamp: &str,
) -> Result<Vec<FootprintRow>> {
    let host = Host::detect();
    // Every program of one run comes from one source tree: one compiler, commit and build.
    let reports: Vec<&ProgramReport> = samples
        .iter()
        .flatten()
        .flatten()
        .map(|sample| &sample.report)
        .collect();
    let compiled = |field: fn(&ProgramReport) -> &String, fallback: &str| -> Result<String> {
        let mut values: Vec<&String> = reports.iter().map(|report| field(report)).collect();
        values.sort();
        values.dedup();
        match values.as_slice() {
            [] => Ok(fallback.to_string()),
            [value] => Ok(value.to_string()),
            several => bail!("the programs of one footprint run disagree: {several:?}"),
        }
    };
    let row = FootprintRow {
        schema_version: SCHEMA_VERSION,
        host: Host {
            rustc: compiled(|report| &report.rustc, &host.rustc)?,
            commit: compiled(|report| &report.commit, &host.commit)?,
            build: compiled(|report| &report.build, &host.build)?,
            ..host.clone()
        },
        timestamp: timestamp.to_string(),
        runs,
        status: STATUS_FAILED.to_string(),
        ..FootprintRow::default()
    };
    let mut rows: Vec<FootprintRow> = builds
        .iter()
        .zip(samples)
        .map(|(build, outcome)| {
            let row = FootprintRow {
                format: build.clone(),
                ..row.clone()
            };
            match outcome {
                Ok(samples) => summarise(row, samples),
                Err(error) => FootprintRow {
                    note: error.replace('\n', " "),
                    ..row
                },
            }
        })
        .collect();
    let baseline = rows[0].clone();
    if baseline.status == STATUS_OK {
        for row in rows.iter_mut().skip(1).filter(|row| row.status == STATUS_OK) {
            let over = |this: Option<u64>, base: Option<u64>| Some(this? as i64 - base? as i64);
            row.binary_bytes_over_baseline = over(row.binary_bytes, baseline.binary_bytes);
            row.text_bytes_over_baseline = over(row.text_bytes, baseline.text_bytes);
            row.compile_s_over_baseline = Some(round1(
                row.compile_s.unwrap_or_default() - baseline.compile_s.unwrap_or_default(),
            ));
        }
    }
    Ok(rows)
}

/// One build's row from its runs: the sizes of the first (a note when a later one differs),
/// the median build time and the fastest and slowest.
fn summarise(row: FootprintRow, samples: &[Sample]) -> FootprintRow {
    let Some(first) = samples.first() else {
        return FootprintRow {
            note: "no run".to_string(),
            ..row
        };
    };
    let seconds: Vec<f64> = samples.iter().map(|sample| sample.seconds).collect();
    let differing: Vec<String> = samples
        .iter()
        .filter(|sample| sample.binary != first.binary)
        .map(|sample| format!("{} ({} .text)", sample.binary.bytes, sample.binary.text_bytes))
        .collect();
    FootprintRow {
        binary_bytes: Some(first.binary.bytes),
        text_bytes: Some(first.binary.text_bytes),
        compile_s: Some(round1(percentile(&seconds, 0.5))),
        compile_s_min: Some(round1(seconds.iter().copied().fold(f64::INFINITY, f64::min))),
        compile_s_max: Some(round1(seconds.iter().copied().fold(0.0, f64::max))),
        load_average_max: samples.iter().filter_map(|sample| sample.load).reduce(f64::max),
        status: STATUS_OK.to_string(),
        note: if differing.is_empty() {
            String::new()
        } else {
            format!(
                "later runs built other sizes: {} (the first run's are shown)",
                differing.join(", ")
            )
        },
        ..row
    }
}

/// A tenth of a second: more digits would only record noise.
fn round1(seconds: f64) -> f64 {
    (seconds * 10.0).round() / 10.0
}

/// The environment a footprint build must not inherit: anything that changes what cargo builds
/// or how (a compiler wrapper would serve a cached, not a clean, build; flags and profile
/// overrides would build another program than the release profile's).
fn inherited(name: &str) -> bool {
    name.starts_with("CARGO_PROFILE_")
        || name.starts_with("CARGO_BUILD_")
        || name.starts_with("CARGO_TARGET_")
        || matches!(
            name,
            "RUSTFLAGS"
                | "CARGO_ENCODED_RUSTFLAGS"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "CARGO_INCREMENTAL"
        )
}

/// Builds the program for `build` (a format, or the baseline) in the fresh target dir
/// `target`, times the build, measures the binary and runs it.
fn build_once(source: &Path, build: &str, target: &Path) -> Result<Sample> {
    std::fs::remove_dir_all(target).ok();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .current_dir(source)
        .args(["build", "--release", "--locked", "-p", PROGRAM]);
    if let Some(format) = crate::format::by_name(build) {
        let features: Vec<String> = crate::format::features_of(format)
            .iter()
            .map(|feature| format!("serbench/{feature}"))
            .collect();
        command.args(["--features", &features.join(",")]);
    }
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(inherited) {
            command.env_remove(&name);
        }
    }
    command
        .env("CARGO_TARGET_DIR", target)
        // rustc strips (symbols and debug info) as it links: the file size is the stripped size.
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = command
        .output()
        .with_context(|| format!("cannot run {}", Path::new(&cargo).display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let load = load_average();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .find(|line| line.starts_with("error"))
            .or_else(|| stderr.lines().last())
            .unwrap_or("no message");
        bail!("cargo build failed ({}): {last}", output.status);
    }
    let binary_path = target
        .join("release")
        .join(format!("{PROGRAM}{}", std::env::consts::EXE_SUFFIX));
    let binary = measure_binary(&binary_path)?;
    if binary.stripped == Some(false) {
        bail!("{} still has its symbols or debug info", binary_path.display());
    }
    let report = run_program(&binary_path)?;
    let expected: Vec<String> = if build == BASELINE {
        Vec::new()
    } else {
        vec![build.to_string()]
    };
    if report.formats != expected || (build != BASELINE) != (report.round_trips > 0) {
        bail!(
            "the program built for {build} has the formats {:?} and round-tripped {} codecs of {PAYLOAD}",
            report.formats,
            report.round_trips
        );
    }
    Ok(Sample {
        seconds,
        load,
        binary,
        report,
    })
}

/// The 1-minute load average (the first field of /proc/loadavg), where the system has one.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn run_program(path: &Path) -> Result<ProgramReport> {
    let output = Command::new(path)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", path.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{} did not print its report", path.display()))
}

/// An executable's size and the size of its code section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binary {
    pub bytes: u64,
    /// `.text` (`__text` in Mach-O).
    pub text_bytes: u64,
    /// ELF: whether it has neither a symbol table nor debug info (`.debug_info`, `.debug_line`). `None` for other formats,
    /// whose linkers keep what the loader needs, so there is nothing simple to check.
    pub stripped: Option<bool>,
}

/// Reads an executable's headers with the `object` crate (ELF and Mach-O).
pub fn measure_binary(path: &Path) -> Result<Binary> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file =
        object::File::parse(&*data).with_context(|| format!("{}: not an executable", path.display()))?;
    let text = file
        .section_by_name(".text")
        .with_context(|| format!("{}: no .text section", path.display()))?;
    // Not every `.debug` section is debug info: rustc keeps the loaded `.debug_gdb_scripts`.
    let stripped = (file.format() == object::BinaryFormat::Elf).then(|| {
        [".symtab", ".debug_info", ".debug_line"]
            .iter()
            .all(|name| file.section_by_name(name).is_none())
    });
    Ok(Binary {
        bytes: data.len() as u64,
        text_bytes: text.size(),
        stripped,
    })
}

/// A private scratch folder for the target dirs, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("serbench-footprint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Record;

    /// An ELF object with a `.text` of exactly `size` bytes and one symbol.
    fn elf_with_text(size: usize) -> Vec<u8> {
        use object::write::{Object as Writer, Symbol, SymbolSection};
        use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};
        let mut writer = Writer::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let text = writer.section_id(object::write::StandardSection::Text);
        writer.append_section_data(text, &vec![0x90; size], 16);
        let data = writer.section_id(object::write::StandardSection::Data);
        writer.append_section_data(data, &[1; 100], 8);
        writer.add_symbol(Symbol {
            name: b"main".to_vec(),
            value: 0,
            size: size as u64,
            kind: SymbolKind::Text,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
        writer.write().unwrap()
    }

    #[test]
    fn the_text_section_and_the_symbols_are_read_from_the_headers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("object.o");
        let bytes = elf_with_text(12_345);
        std::fs::write(&path, &bytes).unwrap();
        let binary = measure_binary(&path).unwrap();
        assert_eq!(binary.text_bytes, 12_345);
        assert_eq!(binary.bytes, bytes.len() as u64);
        assert_eq!(binary.stripped, Some(false));
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        assert!(format!("{:#}", measure_binary(&path).unwrap_err()).contains("not an executable"));
    }

    /// binutils' `size -A` (the linker's own package, so present wherever Rust links on Linux)
    /// agrees on a real executable; `strip` removes what the check looks for. The executable is
    /// this test binary itself: it exists wherever the test runs, a Nix build's sandbox too,
    /// which has no /bin/true (only /bin/sh), and it is unstripped, so `strip` has work to do.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_executable_measures_as_binutils_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("test-binary");
        std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
        assert_eq!(measure_binary(&copy).unwrap().stripped, Some(false));
        let size = Command::new("size")
            .args(["-A"])
            .arg(&copy)
            .output()
            .expect("binutils' size (apt-get install binutils)");
        let listing = String::from_utf8(size.stdout).unwrap();
        let text: u64 = listing
            .lines()
            .find_map(|line| line.strip_prefix(".text "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|bytes| bytes.parse().ok())
            .unwrap_or_else(|| panic!("no .text in {listing}"));
        let measured = measure_binary(&copy).unwrap();
        assert_eq!(measured.text_bytes, text);
        let stripped = Command::new("strip").arg(&copy).status().unwrap();
        assert!(stripped.success());
        assert_eq!(measure_binary(&copy).unwrap().stripped, Some(true));
        assert_eq!(measure_binary(&copy).unwrap().text_bytes, text);
    }

    fn sample(seconds: f64, bytes: u64) -> Sample {
        Sample {
            seconds,
            load: Some(seconds / 20.0),
            binary: Binary {
                bytes,
                text_bytes: bytes / 2,
                stripped: Some(true),
            },
            report: ProgramReport {
                formats: Vec::new(),
                round_trips: 0,
                rustc: "rustc 1.95.0".into(),
                commit: "0123456789ab".into(),
                build: "portable".into(),
            },
        }
    }

    #[test]
    fn rows_hold_medians_spreads_and_the_difference_to_the_baseline() {
        let builds = [BASELINE.to_string(), "postcard".to_string(), "csv".to_string()];
        let samples = vec![
            Ok(vec![sample(50.0, 1000), sample(54.0, 1000), sample(51.0, 1000)]),
            Ok(vec![sample(60.0, 1600), sample(58.0, 1600), sample(70.0, 1700)]),
            Err("cargo build failed: error[E0425]".to_string()),
        ];
        let rows = rows(&builds, &samples, 3, "2026-12-01T00:00:00Z").unwrap();
        let [baseline, postcard, csv] = &rows[..] else {
            panic!("{rows:?}")
        };
        assert_eq!(
            (baseline.compile_s, baseline.compile_s_min, baseline.compile_s_max),
            (Some(51.0), Some(50.0), Some(54.0))
        );
        assert_eq!(baseline.binary_bytes_over_baseline, None);
        assert_eq!(baseline.load_average_max, Some(2.7));
        assert_eq!(postcard.compile_s, Some(60.0));
        assert_eq!(postcard.compile_s_over_baseline, Some(9.0));
        assert_eq!(
            (
                postcard.binary_bytes_over_baseline,
                postcard.text_bytes_over_baseline
            ),
            (Some(600), Some(300))
        );
        assert!(
            postcard.note.contains("later runs built other sizes: 1700"),
            "{}",
            postcard.note
        );
        assert_eq!(
            (csv.status.as_str(), csv.note.as_str()),
            (STATUS_FAILED, "cargo build failed: error[E0425]")
        );
        assert!(
            rows.iter()
                .all(|row| row.host.commit == "0123456789ab" && row.check().is_ok())
        );
    }

    /// Two tenths differ by a tenth, not by a float's noise (447.1 - 179.9 is 267.20000000000005).
    #[test]
    fn the_difference_to_the_baseline_is_rounded_like_the_times() {
        let builds = [BASELINE.to_string(), "json".to_string()];
        let samples = vec![Ok(vec![sample(179.9, 1000)]), Ok(vec![sample(447.1, 2000)])];
        let rows = rows(&builds, &samples, 1, "2026-12-01T00:00:00Z").unwrap();
        assert_eq!(rows[1].compile_s_over_baseline, Some(267.2));
    }

    #[test]
    fn the_program_round_trips_every_codec_of_its_payload() {
        let report: ProgramReport = serde_json::from_str(&program().unwrap()).unwrap();
        let formats: Vec<String> = crate::format::all()
            .iter()
            .map(|format| format.name.to_string())
            .collect();
        assert_eq!(report.formats, formats);
        let codecs = Registry::build()
            .encoders
            .iter()
            .filter(|encoder| encoder.id.payload == PAYLOAD)
            .count();
        assert_eq!(report.round_trips, codecs);
        assert_eq!(report.build, crate::host::build());
    }

    #[test]
    fn a_folder_without_the_program_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let options = FootprintOptions {
            formats: Vec::new(),
            runs: 1,
            source: dir.path().to_path_buf(),
        };
        let error = measure(&options, |_| Ok(())).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some());
        assert!(
            format!("{error:#}").contains("not serbench's source tree"),
            "{error:#}"
        );
    }
}

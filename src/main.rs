//! The serbench command line: list, run, sizes, report, compare, selfcheck, overhead, fidelity,
//! robustness, dump, check, schema. Every usage error (a bad name or number, a folder refused) exits with 2
//! before any work; everything printed goes through [`print`], so a closed stdout (`| head`)
//! ends the command quietly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};

use serbench::arm::Operation;
use serbench::format::Registry;
use serbench::measure::{Profile, Schedule};
use serbench::payload;
use serbench::report::files::{OutDir, SetKind};
use serbench::report::{host, table};
use serbench::robustness::{MAX_ALLOC_CAP_MIB, MAX_CASE_TIMEOUT_SECS, MAX_CASES};
use serbench::run::{RunOptions, Selection, run, write_sizes};
use serbench::{UsageError, check_names};

#[derive(Parser)]
#[command(
    name = "serbench",
    version,
    about = "Which serialization format is cheapest for my data?"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every arm, and every unsupported combination with its reason.
    List {
        #[command(flatten)]
        select: Select,
        /// Print JSON (formats, payloads, arms, unsupported) instead of a table.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// List the formats and backends (crates, schema, buffer policy) instead of the arms.
        #[arg(long = "formats")]
        formats_table: bool,
        /// With --formats: as the Markdown table README holds.
        #[arg(long, requires = "formats_table")]
        markdown: bool,
    },
    /// Verify and time the selected arms; write results.csv and sizes.csv.
    Run {
        #[command(flatten)]
        select: Select,
        /// Operations to time (repeatable; default: all).
        #[arg(long = "op", value_parser = PossibleValuesParser::new(Operation::ALL.map(Operation::name)))]
        operations: Vec<String>,
        #[arg(long, default_value = "quick", value_parser = PossibleValuesParser::new(Profile::ALL.map(|profile| profile.name)))]
        profile: String,
        /// Results folder (default: results/local/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Extend the folder's result set (after an interrupted run): measure only the selected
        /// arms it does not hold yet, and again those that failed. The set must be of the same
        /// machine, build, profile and schedule.
        #[arg(long, conflicts_with = "replace")]
        resume: bool,
        /// Move the result set the folder holds into its replaced/ folder and start anew.
        #[arg(long)]
        replace: bool,
        /// `time` (default) or `instructions`: deterministic instruction counts per operation
        /// under valgrind's callgrind (Linux only), written to instructions.csv.
        #[arg(long, default_value = "time", value_parser = ["time", "instructions"])]
        measure: String,
        /// Take every rep of one arm before the next arm (default: round-robin across the
        /// payload's arms). Kept to measure what interleaving buys.
        #[arg(long)]
        burst: bool,
    },
    /// Encoded and zstd-compressed sizes only, no timing: writes sizes.csv.
    Sizes {
        #[command(flatten)]
        select: Select,
        /// Output folder (default: results/local/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Move the result set the folder holds into its replaced/ folder first.
        #[arg(long)]
        replace: bool,
    },
    /// Markdown report and SVG charts from one or more results folders (hosts side by side).
    Report {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder (default: the first results folder).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Two results folders side by side, arm by arm, with coverage and drift.
    Compare {
        a: PathBuf,
        b: PathBuf,
        /// Print Markdown instead of a text table.
        #[arg(long)]
        markdown: bool,
    },
    /// Run the same selection twice back to back (into OUT/a and OUT/b) and print how well the
    /// first run's intervals cover the second run's means.
    Selfcheck {
        #[command(flatten)]
        select: Select,
        #[arg(long = "op", value_parser = PossibleValuesParser::new(Operation::ALL.map(Operation::name)))]
        operations: Vec<String>,
        #[arg(long, default_value = "full", value_parser = PossibleValuesParser::new(Profile::ALL.map(|profile| profile.name)))]
        profile: String,
        #[arg(long)]
        burst: bool,
        /// Where both runs go (default: a temporary folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Move result sets already in OUT/a and OUT/b into their replaced/ folders first.
        #[arg(long)]
        replace: bool,
    },
    /// What the harness costs: the timed loop around a no-op, and copy bandwidth.
    Overhead {
        #[arg(long, default_value = "quick", value_parser = PossibleValuesParser::new(Profile::ALL.map(|profile| profile.name)))]
        profile: String,
    },
    /// Pair serbench's means with the independent criterion benchmarks of the same arms
    /// (`cargo bench --bench fidelity` first).
    Fidelity {
        /// A results folder holding the same arms (from `serbench run`).
        results: PathBuf,
        /// Criterion's output folder.
        #[arg(long, default_value = "target/criterion")]
        criterion: PathBuf,
        /// The fidelity benchmark's executable (`cargo bench --bench fidelity --no-run` prints
        /// it): also count instructions per operation of both sides under callgrind.
        #[arg(long)]
        bench_binary: Option<PathBuf>,
    },
    /// Internal: one worker process of a block (see `Profile::processes`); prints its reports
    /// as JSON on stdout.
    #[command(hide = true)]
    BlockWorker {
        #[arg(long, value_parser = PossibleValuesParser::new(Profile::ALL.map(|profile| profile.name)))]
        profile: String,
        /// Registry indices of the arms, comma-separated.
        #[arg(long, value_delimiter = ',')]
        arms: Vec<usize>,
        #[arg(long)]
        burst: bool,
        /// The run's data, read again to build the same registry.
        #[command(flatten)]
        data: DataArgs,
    },
    /// Internal: one arm under callgrind (see `run --measure instructions`).
    #[command(hide = true)]
    InstructionsWorker {
        #[arg(long)]
        format: String,
        #[arg(long)]
        arm_index: usize,
    },
    /// Feed every decoder hostile inputs derived from its real payloads (truncations, bit flips,
    /// garbage, length bombs, deep nesting), each decoder in its own worker processes; write
    /// robustness.csv and print the outcome table.
    Robustness {
        #[arg(long = "format", value_parser = PossibleValuesParser::new(serbench::robustness::format_names()))]
        formats: Vec<String>,
        /// Payloads (default: the small ones).
        #[arg(long = "payload", value_parser = payload_names())]
        payloads: Vec<String>,
        #[arg(long = "backend")]
        backends: Vec<String>,
        /// Random cases per kind of hostile input, 1 to 1000000000 (bombs get four times as
        /// many); generated as they run, so memory does not grow with it.
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_CASES as u64,
              value_parser = clap::value_parser!(u64).range(1..=MAX_CASES as u64))]
        cases: u64,
        /// The seed of the cases, decimal or 0x-hex (any 64-bit value).
        #[arg(long, default_value = "0x5EED0B05", value_parser = parse_seed)]
        seed: u64,
        /// Allocation cap of a worker, in MiB, 1 to 1048576: a decoder asking for more is
        /// recorded over-cap.
        #[arg(long, default_value_t = (serbench::robustness::DEFAULT_ALLOC_CAP >> 20) as u64,
              value_parser = clap::value_parser!(u64).range(1..=MAX_ALLOC_CAP_MIB as u64))]
        alloc_cap_mib: u64,
        /// Seconds without an answer before a case counts as a hang, 1 to 86400.
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_CASE_TIMEOUT.as_secs(),
              value_parser = clap::value_parser!(u64).range(1..=MAX_CASE_TIMEOUT_SECS))]
        case_timeout: u64,
        /// Output folder (default: results/local/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Move the robustness.csv the folder holds into its replaced/ folder first.
        #[arg(long)]
        replace: bool,
    },
    /// Write the exact encoded bytes of one payload, or its logical data as pretty JSON.
    Dump {
        #[arg(long, value_parser = format_names())]
        format: Option<String>,
        #[command(flatten)]
        codec: CodecArgs,
        /// The logical data as pretty JSON instead of a format's bytes.
        #[arg(long, conflicts_with = "format")]
        logical: bool,
        /// Output file (default: standard output).
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
    /// Decode BYTES_FILE, made by another program, with one codec and compare it with a payload:
    /// exit 0 when it holds the same data, 1 with the first differing path and both values.
    Check {
        #[arg(long, value_parser = format_names())]
        format: String,
        #[command(flatten)]
        codec: CodecArgs,
        bytes_file: PathBuf,
    },
    /// Infer the schema of data files and write it as FILE.avsc, FILE.proto and FILE.schema.txt.
    Schema {
        #[command(flatten)]
        data: DataArgs,
        /// Output folder.
        #[arg(long)]
        out: PathBuf,
        /// Move the schema files the folder holds for these data into its replaced/ folder first.
        #[arg(long)]
        replace: bool,
    },
}

/// The matrix axes every command can narrow; each flag is repeatable.
#[derive(Args)]
struct Select {
    #[arg(long = "format", value_parser = format_names())]
    formats: Vec<String>,
    #[arg(long = "payload", value_parser = payload_names())]
    payloads: Vec<String>,
    /// Backends to keep (e.g. serde_json, simd-json).
    #[arg(long = "backend")]
    backends: Vec<String>,
    #[command(flatten)]
    data: DataArgs,
}

/// One codec of one payload, besides its format (`dump`, `check`); the registry's first match
/// for what is left out.
#[derive(Args)]
struct CodecArgs {
    #[arg(long, value_parser = payload_names(), required_unless_present = "sources", conflicts_with = "sources")]
    payload: Option<String>,
    #[arg(long)]
    backend: Option<String>,
    #[arg(long)]
    variant: Option<String>,
    /// The JSON framing: document, array or ndjson (a batch's records as a top-level array or
    /// one per line).
    #[arg(long, value_parser = ["document", "array", "ndjson"])]
    framing: Option<String>,
    #[command(flatten)]
    data: DataArgs,
}

impl CodecArgs {
    fn query<'a>(&'a self, format: &'a str, payload: &'a str) -> serbench::check::CodecQuery<'a> {
        serbench::check::CodecQuery {
            format,
            payload,
            backend: self.backend.as_deref(),
            variant: self.variant.as_deref(),
            framing: self.framing.as_deref().and_then(|name| {
                serbench::arm::Framing::ALL
                    .into_iter()
                    .find(|framing| framing.name() == name)
            }),
        }
    }
}

/// Data without Rust types to measure as payloads `data:<file stem>`: see README, "Your own data".
#[derive(Args, Clone, Default)]
struct DataArgs {
    /// A JSON file (one document, an array of records, or NDJSON), a folder of them, or
    /// corpus:twitter, corpus:citm_catalog, corpus:canada (repeatable). Its payloads join the
    /// --payload ones; alone, they are the selection.
    #[arg(long = "data", value_name = "FILE")]
    sources: Vec<String>,
    /// How the files hold their records (default: detected).
    #[arg(long = "data-framing", value_parser = ["document", "array", "ndjson"])]
    data_framing: Option<String>,
    /// Read the objects at this schema path (`$.events`, `$.items[].tags`) as a map (repeatable).
    #[arg(long = "map", value_name = "PATH")]
    maps: Vec<String>,
    /// Read the objects at this schema path as a record, whatever their keys (repeatable).
    #[arg(long = "record", value_name = "PATH")]
    records: Vec<String>,
    /// Refuse data files larger than this many MiB, 1 to 1048576 (reading one takes up to
    /// 100 times its size).
    #[arg(long, default_value_t = payload::data::DEFAULT_MAX_MIB,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_data_mib: u64,
}

impl DataArgs {
    fn request(&self) -> payload::data::Request {
        payload::data::Request {
            sources: self.sources.clone(),
            framing: self
                .data_framing
                .as_deref()
                .and_then(payload::data::DataFraming::by_name),
            overrides: payload::data::Overrides {
                maps: self.maps.clone(),
                records: self.records.clone(),
            },
            max_mib: self.max_data_mib,
        }
    }
}

fn format_names() -> PossibleValuesParser {
    PossibleValuesParser::new(serbench::format::all().into_iter().map(|format| format.name))
}

fn payload_names() -> PossibleValuesParser {
    PossibleValuesParser::new(payload::specs().into_iter().map(|spec| spec.name))
}

impl Select {
    fn selection(self, operations: Vec<String>, registry: &Registry) -> Result<Selection> {
        let known = registry
            .encoders
            .iter()
            .map(|encoder| encoder.id.backend.to_string());
        check_names("backend", &self.backends, known)?;
        // The data's payloads join the `--payload`s (alone, they are the selection).
        let mut payloads = self.payloads;
        payloads.extend(registry.data.iter().map(|data| data.spec.name.to_string()));
        Ok(Selection {
            formats: self.formats,
            backends: self.backends,
            payloads,
            operations,
        })
    }
}

/// `--seed`: decimal, or hexadecimal after `0x` (as README writes the default, 0x5EED0B05).
fn parse_seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|error| format!("{error}: a seed is a 64-bit number, decimal or 0x-hex"))
}

/// Writes to stdout; unlike `print!` it returns a closed pipe as an error instead of panicking.
fn print(text: impl std::fmt::Display) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{text}")?;
    stdout.flush()?;
    Ok(())
}

/// Whether `error` is a write to a stdout whose reader has gone (`serbench list | head`).
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|error| error.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Where results go without `--out`: not results/<system>/, whose committed results a run
/// must not touch unless told to in words.
fn default_out() -> PathBuf {
    PathBuf::from("results").join("local").join(host::system())
}

fn main() -> ExitCode {
    // The robustness run's worker processes: before clap, so they stay hidden and parse their
    // own arguments.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(serbench::robustness::WORKER_SUBCOMMAND) {
        return serbench::robustness::worker_main(&args[2..]);
    }
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        // As standard tools do: the reader of our output has what it wanted.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("serbench: {error:#}");
            if error.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn execute(command: Command) -> Result<()> {
    // The worker builds only its own format: nothing else may touch its heap before counting.
    if let Command::InstructionsWorker { format, arm_index } = &command {
        return serbench::instructions::worker(format, *arm_index);
    }
    if let Command::Schema { data, out, replace } = &command {
        let written = serbench::report::schema::write(&data.request(), out, *replace)?;
        let names: Vec<String> = written
            .iter()
            .map(|path| format!("{}\n", path.display()))
            .collect();
        return print(names.concat());
    }
    let registry = Registry::build_with_data(&command.data_request())?;
    if let Command::BlockWorker {
        profile, arms, burst, ..
    } = &command
    {
        let profile = Profile::by_name(profile).expect("clap checked the profile name");
        let reports = serbench::run::block_worker(&registry, arms, &profile, schedule(*burst))?;
        return print(format_args!("{}\n", serde_json::to_string(&reports)?));
    }
    match command {
        Command::List {
            formats_table: true,
            markdown,
            ..
        } => print(list_formats(markdown)),
        Command::List { select, json, .. } => list(&registry, select.selection(Vec::new(), &registry)?, json),
        Command::Run {
            select,
            operations,
            measure,
            out,
            resume,
            replace,
            ..
        } if measure == "instructions" => {
            if resume {
                return Err(UsageError::error(
                    "--resume extends a timing run; instruction counts are taken whole (--replace to redo them)",
                ));
            }
            if !registry.data.is_empty() {
                return Err(UsageError::error(
                    "--measure instructions counts the built-in payloads; data payloads are timed only",
                ));
            }
            let selection = select.selection(operations, &registry)?;
            count_instructions(&registry, &selection, &out.unwrap_or_else(default_out), replace)
        }
        Command::InstructionsWorker { .. } => unreachable!("handled before the registry is built"),
        Command::BlockWorker { .. } => unreachable!("handled before the other commands"),
        Command::Run {
            select,
            operations,
            profile,
            out,
            resume,
            replace,
            burst,
            ..
        } => {
            let selection = select.selection(operations, &registry)?;
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let out = out.unwrap_or_else(default_out);
            let started = std::time::Instant::now();
            let options = RunOptions {
                profile,
                schedule: schedule(burst),
                out: out.clone(),
                resume,
                replace,
            };
            // Every file is written before anything is printed: a closed stdout loses no result.
            let summary = run(&registry, &selection, &options)?;
            let rows = &summary.rows;
            let mut text = table::summary(rows);
            let ratios = serbench::report::ratios::headline(rows);
            if !ratios.is_empty() {
                text += "\nheadline ratios (time per record; below 1 means the first arm is faster):\n";
                text += &table::ratios(&ratios);
            }
            let failed = rows.iter().filter(|row| row.status != "ok").count();
            text += &format!(
                "\n{} arms ({failed} failed) in {:.1} s, profile {}: results.csv, sizes.csv, ratios.csv in {}\nreport: {}\n",
                rows.len(),
                started.elapsed().as_secs_f64(),
                profile.name,
                out.display(),
                summary.report.display()
            );
            print(text)
        }
        Command::Sizes { select, out, replace } => {
            let selection = select.selection(Vec::new(), &registry)?;
            let path = write_sizes(&registry, &selection, &out.unwrap_or_else(default_out), replace)?;
            print(format_args!("{}\n", path.display()))
        }
        Command::Robustness {
            formats,
            payloads,
            backends,
            cases,
            seed,
            alloc_cap_mib,
            case_timeout,
            out,
            replace,
        } => {
            let options = serbench::robustness::RobustnessOptions {
                formats,
                payloads,
                backends,
                // clap checked the ranges: the values fit.
                cases: cases as usize,
                seed,
                alloc_cap: (alloc_cap_mib as usize) << 20,
                case_timeout: std::time::Duration::from_secs(case_timeout),
                progress: true,
                ..Default::default()
            };
            let known = serbench::robustness::backend_names(&registry, options.fault_injection);
            check_names("backend", &options.backends, known.into_iter())?;
            let targets = serbench::robustness::select(&registry, &options)?;
            let out = OutDir::for_new_set(&out.unwrap_or_else(default_out), SetKind::Robustness, replace)?;
            // The folder's report shows robustness.csv: with a results.csv there, the report is
            // written again, so what it reads must be valid before the run.
            let results = out.file(serbench::report::results::FILE_NAME);
            let reported = results.exists();
            if reported {
                serbench::report::load::load(out.path())?;
            }
            let started = std::time::Instant::now();
            let rows = serbench::robustness::run_targets(&targets, &options)?;
            let path = out.file(serbench::robustness::FILE_NAME);
            out.write_file(serbench::robustness::FILE_NAME, |file| {
                serbench::robustness::write_csv(file, &rows)
            })?;
            let mut text = serbench::robustness::markdown_table(&rows);
            text += &format!(
                "\n{} rows in {:.1} s (seed {seed:#x}, {cases} cases per kind): {}\n",
                rows.len(),
                started.elapsed().as_secs_f64(),
                path.display()
            );
            if reported {
                let loaded = serbench::report::load::load(out.path())?;
                let report = serbench::report::markdown::write(&[loaded], &out)?;
                text += &format!("report: {}\n", report.report.display());
            }
            print(text)
        }
        Command::Report { dirs, out } => {
            // The first folder, also when it is given as its results.csv.
            let first = &dirs[0];
            let out = out.unwrap_or_else(|| {
                if first.is_file() {
                    first.parent().map_or_else(PathBuf::new, Path::to_path_buf)
                } else {
                    first.clone()
                }
            });
            print(serbench::report::markdown::report(&dirs, &out)?)
        }
        Command::Compare { a, b, markdown } => {
            let comparison = serbench::report::compare::compare(&a, &b)?;
            if markdown {
                print(comparison.markdown())
            } else {
                print(comparison)
            }
        }
        Command::Selfcheck {
            select,
            operations,
            profile,
            burst,
            out,
            replace,
        } => {
            let selection = select.selection(operations, &registry)?;
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let out = out.unwrap_or_else(|| {
                std::env::temp_dir().join(format!("serbench-selfcheck-{}", std::process::id()))
            });
            // One selfcheck per folder; each run also holds its own.
            let _out = OutDir::lock(&out)?;
            for run_name in ["a", "b"] {
                let options = RunOptions {
                    profile,
                    schedule: schedule(burst),
                    out: out.join(run_name),
                    resume: false,
                    replace,
                };
                eprintln!("selfcheck: run {run_name} into {}", options.out.display());
                run(&registry, &selection, &options)?;
            }
            print(serbench::report::compare::compare(
                &out.join("a"),
                &out.join("b"),
            )?)
        }
        Command::Overhead { profile } => {
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let overhead = serbench::measure::overhead(&profile)?;
            let noop = &overhead.noop;
            print(format_args!(
                "no-op loop: {:.3} ns per iteration (95% CI {:.3}-{:.3}), {} allocations and {} bytes per iteration\n\
                 copy of 1 MiB (in cache, as the copy-only arms): {:.2} GB/s\n\
                 copy of 256 MiB (memory bandwidth): {:.2} GB/s\n",
                noop.mean_ns,
                noop.ci95_low_ns,
                noop.ci95_high_ns,
                noop.allocs_per_op,
                noop.alloc_bytes_per_op,
                overhead.cached_copy_gb_per_s,
                overhead.memory_copy_gb_per_s
            ))
        }
        Command::Fidelity {
            results,
            criterion,
            bench_binary,
        } => {
            use serbench::report::fidelity;
            let rows = serbench::report::load::load(&results)?.rows;
            let mut pairs = fidelity::pairs(&fidelity::criterion_means(&criterion)?, &rows);
            anyhow::ensure!(
                !pairs.is_empty(),
                "no arm of {} has a criterion result in {}",
                results.display(),
                criterion.display()
            );
            if let Some(bench_binary) = &bench_binary {
                let scratch = tempfile_dir()?;
                for pair in &mut pairs {
                    let counted = serbench::instructions::count_fidelity_pair(
                        &registry,
                        &pair.id,
                        bench_binary,
                        &scratch,
                    )?;
                    pair.instructions = Some(counted);
                }
                std::fs::remove_dir_all(&scratch).ok();
            }
            let instructions = |pair: &fidelity::Pair| match pair.instructions {
                Some((direct, harness)) => vec![
                    format!("{direct:.0}"),
                    format!("{harness:.0}"),
                    format!("{:.3}", harness / direct),
                ],
                None => vec!["-".into(); 3],
            };
            let cells: Vec<Vec<String>> = pairs
                .iter()
                .map(|pair| {
                    let mut cells = vec![
                        pair.id.clone(),
                        format!("{:.1}", pair.criterion_ns),
                        format!(
                            "{:.1} ±{:.1}%",
                            pair.serbench_ns,
                            pair.serbench_half_width * 100.0
                        ),
                        format!("{:.3}", pair.ratio()),
                        if (pair.ratio() - 1.0).abs() <= 0.03 {
                            "yes".into()
                        } else {
                            "NO".into()
                        },
                    ];
                    cells.extend(instructions(pair));
                    cells
                })
                .collect();
            print(table::render(
                &[
                    "arm",
                    ">criterion ns",
                    ">serbench ns",
                    ">ratio",
                    "within ±3%",
                    ">criterion instr/op",
                    ">serbench instr/op",
                    ">instr ratio",
                ],
                &cells,
            ))
        }
        Command::Dump {
            format,
            codec,
            logical,
            output,
        } => {
            let payload = one_payload(&registry, &codec.payload)?;
            let bytes = if logical {
                match registry.data.iter().find(|data| data.spec.name == payload) {
                    Some(data) => serde_json::to_string_pretty(&data.as_value())?.into_bytes(),
                    None => payload::logical_json(&payload)
                        .context("unknown payload")?
                        .into_bytes(),
                }
            } else {
                let Some(format) = format else {
                    bail!(UsageError("dump needs --format F or --logical".into()))
                };
                serbench::check::encoder(&registry, &codec.query(&format, &payload))?.encode()?
            };
            match output {
                Some(path) => std::fs::write(&path, bytes)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes)?;
                    stdout.flush()?;
                }
            }
            Ok(())
        }
        Command::Check {
            format,
            codec,
            bytes_file,
        } => {
            let payload = one_payload(&registry, &codec.payload)?;
            let max_bytes = codec.data.max_data_mib << 20;
            let query = codec.query(&format, &payload);
            print(serbench::check::check(&registry, &query, &bytes_file, max_bytes)?)
        }
        Command::Schema { .. } => unreachable!("handled before the registry is built"),
    }
}

impl Command {
    /// The data the command measures (`--data`), read before the registry is built.
    fn data_request(&self) -> payload::data::Request {
        match self {
            Command::List { select, .. }
            | Command::Run { select, .. }
            | Command::Sizes { select, .. }
            | Command::Selfcheck { select, .. } => select.data.request(),
            Command::Dump { codec, .. } | Command::Check { codec, .. } => codec.data.request(),
            Command::BlockWorker { data, .. } => data.request(),
            _ => payload::data::Request::default(),
        }
    }
}

/// The payload `dump` and `check` name: `--payload`, or the one data payload of `--data`.
fn one_payload(registry: &Registry, payload: &Option<String>) -> Result<String> {
    match (payload, registry.data.as_slice()) {
        (Some(payload), _) => Ok(payload.clone()),
        (None, [data]) => Ok(data.spec.name.to_string()),
        (None, data) => Err(UsageError::error(format!(
            "--data names {} payloads here; dump and check take one file",
            data.len()
        ))),
    }
}

fn schedule(burst: bool) -> Schedule {
    if burst {
        Schedule::Burst
    } else {
        Schedule::Interleaved
    }
}

fn list(registry: &Registry, selection: Selection, json: bool) -> Result<()> {
    let arms = selection.arms(registry);
    let unsupported: Vec<_> = registry
        .unsupported
        .iter()
        .filter(|unsupported| {
            (selection.formats.is_empty() || selection.formats.iter().any(|name| name == unsupported.format))
                && (selection.payloads.is_empty()
                    || selection.payloads.iter().any(|name| name == unsupported.payload))
        })
        .collect();
    if json {
        let value = serde_json::json!({
            "formats": serbench::format::all().iter().map(|format| serde_json::json!({"name": format.name, "about": format.about})).collect::<Vec<_>>(),
            "payloads": payload::specs().iter().map(|spec| serde_json::json!({"name": spec.name, "records": spec.records, "description": spec.description})).collect::<Vec<_>>(),
            "arms": arms.iter().map(|arm| {
                let codec = &arm.id.codec;
                serde_json::json!({
                    "format": codec.format, "backend": codec.backend, "variant": codec.variant,
                    "payload": codec.payload.name, "operation": arm.id.operation.name(),
                    "mode": arm.id.mode.name(), "framing": codec.framing.name(),
                })
            }).collect::<Vec<_>>(),
            "unsupported": unsupported.iter().map(|unsupported| serde_json::json!({
                "format": unsupported.format, "backend": unsupported.backend,
                "payload": unsupported.payload,
                "operation": unsupported.operation.map_or("*", |operation| operation.name()),
                "reason": unsupported.reason,
            })).collect::<Vec<_>>(),
        });
        return print(format_args!("{}\n", serde_json::to_string_pretty(&value)?));
    }
    let rows: Vec<Vec<String>> = arms
        .iter()
        .map(|arm| {
            let codec = &arm.id.codec;
            vec![
                codec.format.to_string(),
                codec.backend.to_string(),
                codec.variant.to_string(),
                codec.payload.name.to_string(),
                arm.id.operation.name().to_string(),
                arm.id.mode.name().to_string(),
                codec.framing.name().to_string(),
            ]
        })
        .collect();
    let mut text = table::render(
        &["format", "backend", "variant", "payload", "op", "mode", "framing"],
        &rows,
    );
    text += &format!("\n{} arms\n", rows.len());
    if !unsupported.is_empty() {
        let rows: Vec<Vec<String>> = unsupported
            .iter()
            .map(|unsupported| {
                vec![
                    unsupported.format.to_string(),
                    unsupported.backend.to_string(),
                    unsupported.payload.to_string(),
                    unsupported
                        .operation
                        .map_or("*", |operation| operation.name())
                        .to_string(),
                    unsupported.reason.clone(),
                ]
            })
            .collect();
        text += "\nunsupported:\n";
        text += &table::render(&["format", "backend", "payload", "op", "reason"], &rows);
    }
    print(text)
}

/// The formats table, as Markdown or as text.
fn list_formats(markdown: bool) -> String {
    use serbench::report::formats;
    if markdown {
        formats::markdown()
    } else {
        table::render(&formats::HEADER, &formats::rows())
    }
}

/// `run --measure instructions`: counts the selected arms into OUT/instructions.csv, in a folder
/// that holds no instruction counts (or, with `replace`, after moving them aside).
fn count_instructions(registry: &Registry, selection: &Selection, out: &Path, replace: bool) -> Result<()> {
    let arms = selection.arms(registry);
    if arms.is_empty() {
        return Err(UsageError::error(
            "the selection matches no arm (see `serbench list`)",
        ));
    }
    let out = OutDir::for_new_set(out, SetKind::Instructions, replace)?;
    let scratch = tempfile_dir()?;
    let mut rows = Vec::new();
    let count = |value: Option<f64>, decimals: usize| {
        value.map_or("-".to_string(), |value| format!("{value:.decimals$}"))
    };
    for arm in arms {
        let row = serbench::instructions::count(registry, arm, &scratch);
        eprintln!(
            "{}: {} instructions/op {}",
            arm.id,
            count(row.instructions_per_op, 0),
            row.note
        );
        rows.push(row);
    }
    std::fs::remove_dir_all(&scratch).ok();
    let path = out.write_csv(serbench::instructions::FILE_NAME, &rows)?;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                serbench::report::load::arm_label(
                    &row.format,
                    &row.backend,
                    &row.variant,
                    "typed",
                    "document",
                ),
                row.payload.clone(),
                format!("{} {} {}", row.operation, row.mode, row.framing),
                count(row.instructions_per_op, 0),
                count(row.instructions_per_record, 1),
                row.status.clone(),
            ]
        })
        .collect();
    let mut text = table::render(
        &[
            "arm",
            "payload",
            "op",
            ">instructions/op",
            ">per record",
            "status",
        ],
        &cells,
    );
    text += &format!("{}\n", path.display());
    print(text)
}

/// A private scratch folder for callgrind's dump files.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("serbench-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_decimal_or_hex_and_the_default_is_the_library_one() {
        assert_eq!(parse_seed("0x5EED0B05"), Ok(serbench::robustness::DEFAULT_SEED));
        assert_eq!(parse_seed("1592593157"), Ok(serbench::robustness::DEFAULT_SEED));
        assert_eq!(parse_seed("0XFF"), Ok(255));
        assert!(parse_seed("0x").is_err() && parse_seed("-1").is_err() && parse_seed("0x1g").is_err());
        assert!(parse_seed("18446744073709551616").is_err());
    }
}

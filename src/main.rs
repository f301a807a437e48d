//! The serbench command line: list, run, sizes, dump.

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
use serbench::report::{host, table};
use serbench::run::{RunOptions, Selection, run, write_sizes};

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
        /// Results folder (default: results/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Keep the folder's results.csv and run only the arms it does not yet hold for this
        /// commit and profile (after an interrupted run).
        #[arg(long)]
        resume: bool,
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
        /// Output folder (default: results/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
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
        /// Random cases per kind of hostile input (bombs get four times as many).
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_CASES)]
        cases: usize,
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_SEED)]
        seed: u64,
        /// Allocation cap of a worker, in MiB: a decoder asking for more is recorded over-cap.
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_ALLOC_CAP >> 20)]
        alloc_cap_mib: usize,
        /// Seconds without an answer before a case counts as a hang.
        #[arg(long, default_value_t = serbench::robustness::DEFAULT_CASE_TIMEOUT.as_secs())]
        case_timeout: u64,
        /// Output folder (default: results/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write the exact encoded bytes of one payload, or its logical data as pretty JSON.
    Dump {
        #[arg(long, value_parser = format_names())]
        format: Option<String>,
        #[arg(long, value_parser = payload_names())]
        payload: String,
        #[arg(long)]
        backend: Option<String>,
        #[arg(long)]
        variant: Option<String>,
        /// The logical data as pretty JSON instead of a format's bytes.
        #[arg(long, conflicts_with = "format")]
        logical: bool,
        /// Output file (default: standard output).
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
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
}

fn format_names() -> PossibleValuesParser {
    PossibleValuesParser::new(serbench::format::all().into_iter().map(|format| format.name))
}

fn payload_names() -> PossibleValuesParser {
    PossibleValuesParser::new(payload::specs().into_iter().map(|spec| spec.name))
}

impl Select {
    fn selection(self, operations: Vec<String>, registry: &Registry) -> Result<Selection> {
        let known: Vec<&str> = registry
            .encoders
            .iter()
            .map(|encoder| encoder.id.backend)
            .collect();
        for backend in &self.backends {
            if !known.contains(&backend.as_str()) {
                let mut valid = known.clone();
                valid.dedup();
                return Err(UsageError(format!(
                    "unknown backend '{backend}' [possible values: {}]",
                    valid.join(", ")
                ))
                .into());
            }
        }
        Ok(Selection {
            formats: self.formats,
            backends: self.backends,
            payloads: self.payloads,
            operations,
        })
    }
}

/// A bad name given on the command line: exit 2, like clap's own usage errors.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn default_out() -> PathBuf {
    PathBuf::from("results").join(host::system())
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
    let registry = Registry::build();
    if let Command::BlockWorker { profile, arms, burst } = &command {
        let profile = Profile::by_name(profile).expect("clap checked the profile name");
        let schedule = if *burst {
            Schedule::Burst
        } else {
            Schedule::Interleaved
        };
        let reports = serbench::run::block_worker(&registry, arms, &profile, schedule)?;
        println!("{}", serde_json::to_string(&reports)?);
        return Ok(());
    }
    match command {
        Command::List {
            formats_table: true,
            markdown,
            ..
        } => {
            print!("{}", list_formats(markdown));
            Ok(())
        }
        Command::List { select, json, .. } => list(&registry, select.selection(Vec::new(), &registry)?, json),
        Command::Run {
            select,
            operations,
            measure,
            out,
            ..
        } if measure == "instructions" => {
            let selection = select.selection(operations, &registry)?;
            count_instructions(&registry, &selection, &out.unwrap_or_else(default_out))
        }
        Command::InstructionsWorker { .. } => unreachable!("handled before the registry is built"),
        Command::BlockWorker { .. } => unreachable!("handled before the other commands"),
        Command::Run {
            select,
            operations,
            profile,
            out,
            resume,
            burst,
            ..
        } => {
            let selection = select.selection(operations, &registry)?;
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let out = out.unwrap_or_else(default_out);
            let started = std::time::Instant::now();
            let schedule = if burst {
                Schedule::Burst
            } else {
                Schedule::Interleaved
            };
            let options = RunOptions {
                profile,
                schedule,
                out: out.clone(),
                resume,
            };
            let rows = run(&registry, &selection, &options)?;
            print!("{}", table::summary(&rows));
            let report = serbench::report::markdown::report(std::slice::from_ref(&out), &out)?;
            let ratios = serbench::report::ratios::headline(&rows);
            if !ratios.is_empty() {
                println!("\nheadline ratios (time per record; below 1 means the first arm is faster):");
                print!("{}", table::ratios(&ratios));
            }
            let failed = rows.iter().filter(|row| row.status != "ok").count();
            println!(
                "\n{} arms ({failed} failed) in {:.1} s, profile {}: results.csv, sizes.csv, ratios.csv in {}",
                rows.len(),
                started.elapsed().as_secs_f64(),
                profile.name,
                out.display()
            );
            println!("report: {}", report.report.display());
            Ok(())
        }
        Command::Sizes { select, out } => {
            let selection = select.selection(Vec::new(), &registry)?;
            let path = write_sizes(&registry, &selection, &out.unwrap_or_else(default_out))?;
            println!("{}", path.display());
            Ok(())
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
        } => {
            let options = serbench::robustness::RobustnessOptions {
                formats,
                payloads,
                backends,
                cases,
                seed,
                alloc_cap: alloc_cap_mib << 20,
                case_timeout: std::time::Duration::from_secs(case_timeout),
                progress: true,
                ..Default::default()
            };
            let out = out.unwrap_or_else(default_out);
            std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
            let started = std::time::Instant::now();
            let rows = serbench::robustness::run(&registry, &options)?;
            let path = out.join(serbench::robustness::FILE_NAME);
            serbench::robustness::write_csv(&path, &rows)?;
            print!("{}", serbench::robustness::markdown_table(&rows));
            println!(
                "\n{} rows in {:.1} s (seed {seed}, {cases} cases per kind): {}",
                rows.len(),
                started.elapsed().as_secs_f64(),
                path.display()
            );
            Ok(())
        }
        Command::Report { dirs, out } => {
            let out = out.unwrap_or_else(|| dirs[0].clone());
            print!("{}", serbench::report::markdown::report(&dirs, &out)?);
            Ok(())
        }
        Command::Compare { a, b, markdown } => {
            let comparison = serbench::report::compare::compare(&a, &b)?;
            if markdown {
                print!("{}", comparison.markdown());
            } else {
                print!("{comparison}");
            }
            Ok(())
        }
        Command::Selfcheck {
            select,
            operations,
            profile,
            burst,
            out,
        } => {
            let selection = select.selection(operations, &registry)?;
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let schedule = if burst {
                Schedule::Burst
            } else {
                Schedule::Interleaved
            };
            let out = out.unwrap_or_else(|| {
                std::env::temp_dir().join(format!("serbench-selfcheck-{}", std::process::id()))
            });
            for run_name in ["a", "b"] {
                let options = RunOptions {
                    profile,
                    schedule,
                    out: out.join(run_name),
                    resume: false,
                };
                eprintln!("selfcheck: run {run_name} into {}", options.out.display());
                run(&registry, &selection, &options)?;
            }
            let comparison = serbench::report::compare::compare(&out.join("a"), &out.join("b"))?;
            print!("{comparison}");
            Ok(())
        }
        Command::Overhead { profile } => {
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let overhead = serbench::measure::overhead(&profile)?;
            let noop = &overhead.noop;
            println!(
                "no-op loop: {:.3} ns per iteration (95% CI {:.3}-{:.3}), {} allocations and {} bytes per iteration",
                noop.mean_ns,
                noop.ci95_low_ns,
                noop.ci95_high_ns,
                noop.allocs_per_op,
                noop.alloc_bytes_per_op
            );
            println!(
                "copy of 1 MiB (in cache, as the copy-only arms): {:.2} GB/s",
                overhead.cached_copy_gb_per_s
            );
            println!(
                "copy of 256 MiB (memory bandwidth): {:.2} GB/s",
                overhead.memory_copy_gb_per_s
            );
            Ok(())
        }
        Command::Fidelity {
            results,
            criterion,
            bench_binary,
        } => {
            use serbench::report::fidelity;
            let rows = serbench::report::results::read(&results.join(serbench::report::results::FILE_NAME))?;
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
            print!(
                "{}",
                table::render(
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
                    &cells
                )
            );
            Ok(())
        }
        Command::Dump {
            format,
            payload,
            backend,
            variant,
            logical,
            output,
        } => {
            let bytes = if logical {
                payload::logical_json(&payload)
                    .context("unknown payload")?
                    .into_bytes()
            } else {
                let Some(format) = format else {
                    bail!(UsageError("dump needs --format F or --logical".into()))
                };
                let encoder = registry
                    .encoders
                    .iter()
                    .filter(|encoder| encoder.id.format == format && encoder.id.payload.name == payload)
                    .find(|encoder| {
                        backend
                            .as_ref()
                            .is_none_or(|backend| encoder.id.backend == backend)
                            && variant
                                .as_ref()
                                .is_none_or(|variant| encoder.id.variant == variant)
                    });
                match encoder {
                    Some(encoder) => encoder.encode()?,
                    None => {
                        let reason = registry
                            .unsupported
                            .iter()
                            .find(|unsupported| {
                                unsupported.format == format && unsupported.payload == payload
                            })
                            .map_or(
                                "no such backend or variant (see `serbench list`)".to_string(),
                                |unsupported| unsupported.reason.clone(),
                            );
                        bail!(UsageError(format!("{format} cannot dump {payload}: {reason}")));
                    }
                }
            };
            match output {
                Some(path) => std::fs::write(&path, bytes)
                    .with_context(|| format!("cannot write {}", path.display()))?,
                None => std::io::stdout().write_all(&bytes)?,
            }
            Ok(())
        }
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
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
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
    print!(
        "{}",
        table::render(
            &["format", "backend", "variant", "payload", "op", "mode", "framing"],
            &rows
        )
    );
    println!("\n{} arms", rows.len());
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
        println!("\nunsupported:");
        print!(
            "{}",
            table::render(&["format", "backend", "payload", "op", "reason"], &rows)
        );
    }
    Ok(())
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

fn count_instructions(registry: &Registry, selection: &Selection, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let scratch = tempfile_dir()?;
    let mut rows = Vec::new();
    for arm in registry.arms.iter().filter(|arm| selection.arm(&arm.id)) {
        let row = serbench::instructions::count(registry, arm, &scratch);
        eprintln!(
            "{}: {:.0} instructions/op {}",
            arm.id, row.instructions_per_op, row.note
        );
        rows.push(row);
    }
    std::fs::remove_dir_all(&scratch).ok();
    let path = out.join(serbench::instructions::FILE_NAME);
    serbench::report::results::write_rows(&path, &rows)?;
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
                format!("{:.0}", row.instructions_per_op),
                format!("{:.1}", row.instructions_per_record),
                row.status.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table::render(
            &[
                "arm",
                "payload",
                "op",
                ">instructions/op",
                ">per record",
                "status"
            ],
            &cells
        )
    );
    println!("{}", path.display());
    Ok(())
}

/// A private scratch folder for callgrind's dump files.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("serbench-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

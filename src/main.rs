//! The serbench command line: parses the arguments (clap), calls the subcommand's one function
//! in [`serbench::commands`], prints what it returns. Every usage error (a bad name or number,
//! a folder refused) exits with 2 before any work; everything printed goes through [`print`],
//! so a closed stdout (`| head`) ends the command quietly.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};

use serbench::UsageError;
use serbench::arm::Operation;
use serbench::commands;
use serbench::format::Registry;
use serbench::measure::Profile;
use serbench::payload;
use serbench::robustness::{MAX_ALLOC_CAP_MIB, MAX_CASE_TIMEOUT_SECS, MAX_CASES};
use serbench::run::{RunOptions, Selection};

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
        /// Results folder (default: results/local/<system>/, or <system>-native/ for a native
        /// build).
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
    /// Internal: one worker process of a block (see `Profile::processes`): reads its arms as
    /// JSON on stdin, prints its reports as JSON on stdout.
    #[command(hide = true)]
    BlockWorker {
        #[arg(long, value_parser = PossibleValuesParser::new(Profile::ALL.map(|profile| profile.name)))]
        profile: String,
        #[arg(long)]
        burst: bool,
    },
    /// Internal: one arm under callgrind (see `run --measure instructions`).
    #[command(hide = true)]
    InstructionsWorker {
        /// The arm's coordinates as JSON.
        #[arg(long)]
        arm: String,
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
    /// What each format adds to a binary and to a clean build: the fixed program footprint/
    /// built per format (and with none, the baseline) in fresh target dirs, release profile,
    /// stripped; writes footprint.csv. Slow: a clean build per format and run.
    Footprint {
        /// Formats to build (repeatable; default: all); the baseline is always built.
        #[arg(long = "format", value_parser = format_names())]
        formats: Vec<String>,
        /// Clean builds of each, 1 to 100, round-robin across the builds.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
        runs: u64,
        /// serbench's source tree (default: the one this binary was built from, else the
        /// current folder).
        #[arg(long)]
        source: Option<PathBuf>,
        /// Output folder (default: results/local/<system>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Move the footprint.csv the folder holds into its replaced/ folder first.
        #[arg(long)]
        replace: bool,
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
        commands::selection(registry, self.formats, self.backends, self.payloads, operations)
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

/// Profiles are clap-checked names.
fn profile(name: &str) -> Profile {
    Profile::by_name(name).expect("clap checked the profile name")
}

/// Calls the subcommand's function and prints what it returns.
fn execute(command: Command) -> Result<()> {
    // Workers first: the instructions worker builds only its own format (nothing else may touch
    // its heap before counting), the block worker only what its arms need.
    match command {
        Command::InstructionsWorker { arm } => return commands::instructions_worker(&arm),
        Command::BlockWorker { ref profile, burst } => {
            return print(commands::block_worker(
                &self::profile(profile),
                commands::schedule(burst),
            )?);
        }
        _ => {}
    }
    let registry = Registry::build();
    match command {
        Command::InstructionsWorker { .. } | Command::BlockWorker { .. } => unreachable!("handled above"),
        Command::List {
            formats_table: true,
            markdown,
            ..
        } => print(commands::list_formats(markdown)),
        Command::List { select, json, .. } => {
            let selection = select.selection(Vec::new(), &registry)?;
            print(commands::list(&registry, &selection, json)?)
        }
        Command::Run {
            select,
            operations,
            profile,
            out,
            resume,
            replace,
            measure,
            burst,
        } => {
            let selection = select.selection(operations, &registry)?;
            let out = out.unwrap_or_else(commands::default_out);
            match measure.as_str() {
                "instructions" if resume => Err(UsageError::error(
                    "--resume extends a timing run; instruction counts are taken whole (--replace to redo them)",
                )),
                "instructions" => print(commands::count_instructions(
                    &registry, &selection, &out, replace,
                )?),
                _ => {
                    let options = RunOptions {
                        profile: self::profile(&profile),
                        schedule: commands::schedule(burst),
                        out,
                        resume,
                        replace,
                    };
                    print(commands::run(&registry, &selection, &options)?)
                }
            }
        }
        Command::Sizes { select, out, replace } => {
            let selection = select.selection(Vec::new(), &registry)?;
            let out = out.unwrap_or_else(commands::default_out);
            print(commands::sizes(&registry, &selection, &out, replace)?)
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
            let options = commands::robustness_options(
                formats,
                payloads,
                backends,
                cases,
                seed,
                alloc_cap_mib,
                case_timeout,
            );
            let out = out.unwrap_or_else(commands::default_out);
            print(commands::robustness(&registry, &options, &out, replace)?)
        }
        Command::Footprint {
            formats,
            runs,
            source,
            out,
            replace,
        } => {
            let options = serbench::footprint::FootprintOptions {
                formats,
                runs: runs as usize,
                source: source.unwrap_or_else(serbench::footprint::default_source),
            };
            let out = out.unwrap_or_else(commands::default_out);
            print(commands::footprint(&options, &out, replace)?)
        }
        Command::Report { dirs, out } => print(commands::report(&dirs, out)?),
        Command::Compare { a, b, markdown } => print(commands::compare(&a, &b, markdown)?),
        Command::Selfcheck {
            select,
            operations,
            profile,
            burst,
            out,
            replace,
        } => {
            let selection = select.selection(operations, &registry)?;
            print(commands::selfcheck(
                &registry,
                &selection,
                self::profile(&profile),
                commands::schedule(burst),
                out,
                replace,
            )?)
        }
        Command::Overhead { profile } => print(commands::overhead(&self::profile(&profile))?),
        Command::Fidelity {
            results,
            criterion,
            bench_binary,
        } => print(commands::fidelity(&results, &criterion, bench_binary.as_deref())?),
        Command::Dump {
            format,
            payload,
            backend,
            variant,
            logical,
            output,
        } => {
            let bytes = commands::dump(
                &registry,
                format.as_deref(),
                &payload,
                backend.as_deref(),
                variant.as_deref(),
                logical,
            )?;
            match output {
                Some(path) => {
                    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
                }
                None => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes)?;
                    Ok(stdout.flush()?)
                }
            }
        }
    }
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

//! The serbench command line: list, run, sizes, dump.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};

use serbench::arm::{Operation, Registry};
use serbench::measure::Profile;
use serbench::payload;
use serbench::report::{host, table};
use serbench::run::{Selection, run, write_sizes};

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
        #[arg(long)]
        json: bool,
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
    },
    /// Encoded and zstd-compressed sizes only, no timing: writes sizes.csv.
    Sizes {
        #[command(flatten)]
        select: Select,
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
    let registry = Registry::build();
    match command {
        Command::List { select, json } => list(&registry, select.selection(Vec::new(), &registry)?, json),
        Command::Run { select, operations, profile, out, resume } => {
            let selection = select.selection(operations, &registry)?;
            let profile = Profile::by_name(&profile).expect("clap checked the profile name");
            let out = out.unwrap_or_else(default_out);
            let started = std::time::Instant::now();
            let rows = run(&registry, &selection, &profile, &out, resume)?;
            print!("{}", table::summary(&rows));
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
            Ok(())
        }
        Command::Sizes { select, out } => {
            let selection = select.selection(Vec::new(), &registry)?;
            let path = write_sizes(&registry, &selection, &out.unwrap_or_else(default_out))?;
            println!("{}", path.display());
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
                "payload": unsupported.payload, "reason": unsupported.reason,
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
                    unsupported.reason.clone(),
                ]
            })
            .collect();
        println!("\nunsupported:");
        print!(
            "{}",
            table::render(&["format", "backend", "payload", "reason"], &rows)
        );
    }
    Ok(())
}

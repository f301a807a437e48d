//! The serbench command line: parses the arguments (clap), calls the subcommand's one function
//! in [`crate::commands`], prints what it returns. Every usage error (a bad name or number,
//! a folder refused) exits with 2 before any work; everything printed goes through [`print`],
//! so a closed stdout (`| head`) ends the command quietly.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::UsageError;
use crate::arm::{Framing, Operation};
use crate::commands;
use crate::format::Registry;
use crate::measure::Profile;
use crate::payload;
use crate::payload::data::DataFraming;
use crate::robustness::{MAX_ALLOC_CAP_MIB, MAX_CASE_TIMEOUT_SECS, MAX_CASES};
use crate::run::{RunOptions, Selection};

/// Which serialization format is cheapest for my data?
///
/// A flag that takes a list (`--format`, `--payload`, `--backend`, `--op`) is repeatable or
/// takes a comma-separated list: `--format postcard,protobuf --op decode,encode`.
///
/// The same arms also run through criterion: `cargo bench --bench formats [-- <format>/]`, one
/// group per format (same registry, same runners); criterion's filter picks a format or an arm
/// (`-- postcard/postcard/order/decode`).
#[derive(Parser)]
#[command(
    name = "serbench",
    // The commit and the build too: a run checks that its other layouts (`--layout`) are
    // builds of itself.
    version = crate::host::version(),
    after_long_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Not per subcommand, so after the top-level help (and under its own heading in
/// docs/commands.md).
const EXIT_STATUS: &str = "Exit status: 0 when the command did its work (also when its reader \
    closed stdout early, as in `serbench list | head`: it ends quietly, as standard tools do); 2 \
    when it refused before doing any work: an unknown format, payload, backend, operation, \
    profile or variant (the valid names listed once each), a number out of its stated range, an \
    output folder in use by another serbench or holding another result set, a file that does \
    not validate (named with its line); 1 when the work itself failed (an I/O error such as a \
    full disk, a run that could not finish).";

// Each variant's first paragraph is its line in `serbench --help`; all of it is its
// `--help` and its section of docs/commands.md.
#[derive(Subcommand)]
enum Command {
    /// List every arm, and every unsupported combination with its reason.
    ///
    /// With `--formats`, the formats table instead: every backend with its crates (locked
    /// versions), schema and buffer policy; README holds the Markdown one (`--markdown`).
    List(ListArgs),
    /// Verify and time the selected arms; write results.csv and sizes.csv.
    ///
    /// Verifies, then times the selected arms; a progress bar on a terminal, one line per arm
    /// (or per pass, `full`) otherwise. Writes DIR/results.csv (`full` also DIR/samples.csv,
    /// one row per worker and arm; with `--data`, DIR/sources.csv, each file's size and
    /// SHA-256), then sizes.csv, ratios.csv, report.md, report.html and charts/ from the whole
    /// results.csv, and prints the answer: per payload, the cheapest formats to decode, to encode
    /// and on the wire (ties as one rank) and the front of time against bytes. `--verbose` adds
    /// every arm's row and the headline ratios.
    ///
    /// A DIR that holds a result set is refused unless `--resume` (extend it) or `--replace`
    /// (move it aside first). `--measure instructions` counts instructions under callgrind
    /// instead of timing.
    ///
    /// `--data FILE` measures your own JSON as the payload `data:<file stem>` on every format
    /// that can carry it without Rust types, here and in `sizes` and `list`
    /// (docs/your-data.md#your-own-data---data); `--typed` adds its typed arms
    /// (docs/your-data.md#your-data-typed---typed).
    Run(RunArgs),
    /// Encoded, zstd- and zlib-compressed sizes only, no timing: writes sizes.csv.
    ///
    /// Writes DIR/sizes.csv; a DIR holding a run's results is refused unless `--replace`.
    Sizes(SizesArgs),
    /// The report of one or more results folders (hosts side by side): Markdown with SVG charts,
    /// and one self-contained HTML page.
    ///
    /// Writes `OUT/report.md`, `OUT/charts/*.svg`, `OUT/report.html` (filters, sortable
    /// columns, charts, a pair ratio and a cost calculator; no network) and `OUT/report.json`
    /// (its data: the analysis, versioned: every arm's estimates and ranks, every size, and per
    /// payload the answer), and prints the answer. Each opens with the answer: per payload, the
    /// cheapest formats to decode, to encode and on the wire, and the front of time against
    /// bytes. Several hosts get rank agreement and flips between them; their sizes must match at
    /// one commit.
    Report(ReportArgs),
    /// Two results folders side by side, arm by arm, with coverage and drift.
    ///
    /// For each arm: A, B, B/A with its interval and a verdict from it (≈ where it holds 1),
    /// and the arms only on one side; then the agreement (difference test), coverage, drift
    /// and half-widths, with and without the common shift, over all arms and per payload.
    Compare(CompareArgs),
    /// One arm over another of one payload and operation in a results folder: the unpaired
    /// interval, and the paired one where the folder kept its workers (full profile).
    ///
    /// Prints the arm labelled A over the arm labelled B with both intervals, then the verdict
    /// as a sentence: "`A` decodes `order` 1.24 ± 0.01 times slower than `B` (95%, paired over
    /// 20 workers)".
    ///
    /// With `--headline`, the headline ratios README quotes instead, read from DIR/ratios.csv
    /// as the run wrote them; `--headline --markdown` prints README's table (tests/readme.rs
    /// checks README against it for results/x86_64-linux).
    Ratio(RatioArgs),
    /// Two arms of one payload and operation measured against each other over fresh processes
    /// and code layouts for the whole budget: one sentence.
    ///
    /// Each worker process is a fresh draw (a code layout from `serbench layouts`, an
    /// environment size, stack and heap offsets, a preparation order) in which the arms labelled
    /// A and B take turns of about 1 ms in a random order per round (tango's paired method). The
    /// ratio's 95% interval is Student t over 8 blocks of consecutive processes, so it spans
    /// process, layout and the machine's drift during the run, widened by the spread between
    /// sessions that this build's earlier `vs` runs on this host show (its session log in the
    /// cache), so it says what a rerun would find: "`A` decodes `P` R ± h times faster than `B`
    /// (95%, N processes over L layouts, T s, and the spread between sessions: S% (K sessions of
    /// this pair and the prior))". `vs A A` is the A/A check (docs/measurement.md#levels).
    Vs(VsArgs),
    /// Make this build's code layouts: its optimized program relinked with lld's
    /// `--shuffle-sections`, seconds each, for `run --profile full` and `vs` to draw from.
    ///
    /// Only a release build on x86_64 Linux keeps its link (docs/measurement.md#code-layout);
    /// the layouts live in the private cache under the binary's hash, and replace earlier ones.
    Layouts(LayoutsArgs),
    /// Run the same selection twice back to back (into OUT/a and OUT/b) and print how well the
    /// first run's intervals cover the second run's means.
    ///
    /// Then `compare` of the two runs: how often the two runs agree within their intervals.
    Selfcheck(SelfcheckArgs),
    /// What the harness costs: the timed loop around a no-op, and copy bandwidth.
    ///
    /// Times the loop around a no-op, and copy bandwidth in and out of cache.
    Overhead(OverheadArgs),
    /// Pair serbench's means with the independent criterion benchmarks of the same arms
    /// (`cargo bench --bench fidelity` first).
    ///
    /// With the bench executable (`--bench-binary`), also both sides' instructions per
    /// operation under callgrind.
    Fidelity(FidelityArgs),
    /// Internal: a worker process of serbench's own (a block of the full profile, a decoder's
    /// hostile cases, one arm under callgrind): reads its request as JSON on stdin and answers
    /// on stdout (the protocol of `serbench::worker`).
    #[command(hide = true)]
    Worker(WorkerArgs),
    /// Feed every decoder hostile inputs derived from its real payloads (truncations, bit flips,
    /// garbage, length bombs, deep nesting), each decoder in its own worker processes; write
    /// robustness.csv and print the outcome table.
    ///
    /// Writes DIR/robustness.csv (docs/robustness.md#robustness); with a results.csv in DIR,
    /// its report is written again to include the new table.
    Robustness(RobustnessArgs),
    /// What each format adds to a binary and to a clean build; writes footprint.csv.
    ///
    /// The fixed program footprint/ is built per format (and with none, the baseline) in fresh
    /// target dirs, release profile, stripped: code size and clean build time per format
    /// against the baseline, into DIR/footprint.csv
    /// (docs/footprint.md#code-size-and-compile-time-serbench-footprint). Slow: a clean release
    /// build per format and run.
    Footprint(FootprintArgs),
    /// Write the exact encoded bytes of one payload, or its logical data as pretty JSON.
    ///
    /// The bytes of one codec, to inspect them or feed them to other tools: of one JSON framing
    /// of a batch payload (`--framing`: records as a top-level array, NDJSON), or of a data
    /// payload (`--data`). `--logical` writes the payload's logical data instead.
    Dump(DumpArgs),
    /// Decode BYTES_FILE, made by another program, with one codec and compare it with a payload:
    /// exit 0 when it holds the same data, 1 with the first differing path and both values.
    ///
    /// Exits 0 when they hold the same data; 1 with the first differing path and both values,
    /// or why the bytes do not decode; 2 for a usage error.
    Check(CheckArgs),
    /// Write the Rust crate `--typed` builds for data files (types, derives, the arms' hook)
    /// without building it: to read, copy into a service, or edit.
    ///
    /// The crate of FILE's types (serde's and each format's derives) is written to DIR;
    /// `--typed` on `run`, `sizes`, `list`, `dump` and `check` builds it once (cached) and adds
    /// the typed arms, mode `typed` (docs/your-data.md#your-data-typed---typed).
    Gen(GenArgs),
    /// Infer the schema of data files and write it as FILE.avsc, FILE.proto and FILE.schema.txt.
    ///
    /// Written as `DIR/<stem>.avsc`, `.proto` and `.schema.txt` (a summary: every path, how
    /// often null or absent, maps, conflicts), and `<stem>.typed.avsc`, the Avro schema the
    /// typed arms write with (`--typed`: the generated crate's `schemas/data_<n>.avsc`).
    Schema(SchemaArgs),
    /// What each format does when the schema changes: the schema-evolution matrix.
    ///
    /// For the record type of each payload (`--payload`, default `order`; `--data FILE` for
    /// yours), each change (add an optional field, add one with a default, remove, rename,
    /// reorder, widen i32 to i64, make nullable, add an enum variant) gives an old and a new
    /// type with the format's own mechanism (serde derive's `default` and `alias`; the schema
    /// files of Avro, Protobuf and FlatBuffers; savefile's version numbers, each side told the
    /// writer's and the reader's version); records written by one version are read by the
    /// other, both ways. Each cell: ok (the expected projection), refused (an error, or a
    /// reader that crashed: each cell runs in a child process whose allocations are capped at
    /// 256 MiB, and the detail says how it ended), SILENTLY WRONG (another value, no error), or
    /// why the change cannot be expressed. Formats not measured yet are listed with the reason.
    Evolve(EvolveArgs),
    /// Internal: this command line's reference as Markdown, docs/commands.md.
    #[command(hide = true)]
    HelpMarkdown(HelpMarkdownArgs),
}

#[derive(Args)]
struct ListArgs {
    #[command(flatten)]
    select: Select,
    /// Print JSON (formats, payloads, arms, unsupported) instead of a table.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// List the formats and backends (crates and their locked versions, schema, buffer policy)
    /// instead of the arms.
    #[arg(long = "formats")]
    formats_table: bool,
    /// The capability table instead of the arms: per backend, self-describing or not, schema,
    /// documented evolution, zero-copy access and update, `unsafe` in its crates, languages,
    /// crate versions with release day and licence, advisories (docs/capabilities.md).
    #[arg(long, conflicts_with_all = ["formats_table", "json"])]
    capabilities: bool,
    /// With --formats or --capabilities: as Markdown (README's formats table,
    /// docs/capabilities.md).
    #[arg(long)]
    markdown: bool,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    select: Select,
    /// Operations to time (default: all).
    #[arg(long = "op", value_name = "OP", value_delimiter = ',')]
    operations: Vec<Operation>,
    /// How long and how often to sample: smoke (wiring checks; the numbers mean nothing),
    /// quick (a few minutes, for smoke runs and CI) or full (adaptive, in worker processes over
    /// passes of the whole matrix; docs/measurement.md).
    #[arg(long, default_value = "quick")]
    profile: Profile,
    /// Results folder (default: `results/local/<system>/`, or `<system>-native/` for a native
    /// build).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Extend the folder's result set (after an interrupted run): measure only the selected
    /// arms it does not hold yet, and again those that failed; `full` continues its passes.
    /// The set must be of the same machine, build, profile and schedule.
    #[arg(long, conflicts_with = "replace")]
    resume: bool,
    /// Move the result set the folder holds into `DIR/replaced/<time>/` and start anew.
    #[arg(long)]
    replace: bool,
    /// What to measure.
    #[arg(long, value_enum, default_value = "time")]
    measure: Measure,
    /// Take every rep of one arm before the next arm (default: round-robin across the
    /// payload's arms). Kept to measure what interleaving buys.
    #[arg(long)]
    burst: bool,
    /// Full profile: the builds of this serbench whose worker processes take turns pass by pass
    /// (repeatable), instead of this build's code layouts from `serbench layouts`, which the
    /// workers draw from by default (docs/measurement.md#code-layout).
    #[arg(long = "layout", value_name = "BIN")]
    layouts: Vec<PathBuf>,
    /// Stop, keeping every finished block's rows, when no arm has made progress (a proof, a rep,
    /// a worker's answer) for this many seconds: a decoder stuck on its data.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0, value_parser = parse_timeout)]
    stall_limit: f64,
    /// Earlier result sets of this host, commit and build (at least two): after the run, the
    /// session spread they show and each headline ratio's 95% prediction interval for a rerun
    /// (docs/measurement.md#later-runs).
    #[arg(long, value_name = "DIR", num_args = 1..)]
    history: Vec<PathBuf>,
    /// After the answer, every arm's row (rank, time, interval, bytes, allocations) and the
    /// headline ratios; without it they are in the folder's report.md and report.html.
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Args)]
struct SizesArgs {
    #[command(flatten)]
    select: Select,
    /// Output folder (default: `results/local/<system>/`).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Move the result set the folder holds into its replaced/ folder first.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct ReportArgs {
    /// Results folders, one per host or run (each its results.csv, and sizes.csv, samples.csv
    /// and the others where present).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Output folder (default: the first DIR; an OUT holding its own results.csv must be among
    /// the DIRs).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Move report files OUT holds that serbench did not write (or that changed since) into
    /// `OUT/replaced/<time>/` first, with the rest of that report.
    #[arg(long)]
    replace: bool,
    /// Earlier result sets of the reported DIR's host, commit and build (at least two; after
    /// the DIR): report.md gains each headline ratio's 95% prediction interval for a rerun,
    /// from the session spread they show (docs/measurement.md#later-runs).
    #[arg(long, value_name = "H", num_args = 1..)]
    history: Vec<PathBuf>,
}

#[derive(Args)]
struct CompareArgs {
    /// The first results folder.
    a: PathBuf,
    /// The second results folder (ratios are B/A).
    b: PathBuf,
    /// Print Markdown instead of a text table.
    #[arg(long)]
    markdown: bool,
    /// List the arms only one side has, or that one side could not measure (by default, their
    /// counts), and every headline ratio both sides hold (by default, the at most 20 whose two
    /// intervals disagree; docs/measurement.md#later-runs).
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Args)]
struct RatioArgs {
    /// A results folder (results.csv; its samples.csv for the paired interval).
    dir: PathBuf,
    /// The payload both arms measured.
    #[arg(short, long, required_unless_present = "headline")]
    payload: Option<String>,
    /// The operation both arms timed.
    #[arg(long = "op", value_name = "OP", required_unless_present = "headline")]
    operation: Option<Operation>,
    /// The first arm's label as the report shows it, e.g. `postcard/postcard` or
    /// `json/serde_json dynamic`.
    #[arg(value_name = "A", required_unless_present = "headline")]
    numerator: Option<String>,
    /// The second arm's label.
    #[arg(value_name = "B", required_unless_present = "headline")]
    denominator: Option<String>,
    /// Instead of two arms: the headline ratios README quotes, as DIR/ratios.csv recorded them
    /// (every headline ratio is in that file).
    #[arg(long, conflicts_with_all = ["payload", "operation", "numerator", "denominator"])]
    headline: bool,
    /// With --headline: as the Markdown table README holds.
    #[arg(long, requires = "headline")]
    markdown: bool,
    /// The ratio as one JSON object (ratios.csv's columns, the quoted interval and the
    /// sentence), for tools: report.html's browser test checks the page's pair against it.
    #[arg(long, conflicts_with = "headline")]
    json: bool,
}

#[derive(Args)]
struct VsArgs {
    /// The first arm's label as the report shows it, e.g. `postcard/postcard`.
    a: String,
    /// The second arm's label.
    b: String,
    /// The payload both arms measure (or a `--data` payload, `data:<file stem>`).
    #[arg(short, long)]
    payload: String,
    /// The operation both arms time.
    #[arg(long = "op", value_name = "OP")]
    operation: Operation,
    /// Seconds to spend over processes (with --one-process: at most, stopping at ±1%).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3600))]
    budget: u64,
    /// Measure in this process only: its interval leaves out what differs between processes
    /// and code layouts (placement, environment, layout), so a rerun may fall outside it.
    #[arg(long)]
    one_process: bool,
    #[command(flatten)]
    data: DataArgs,
}

#[derive(Args)]
struct LayoutsArgs {
    /// How many layouts to make (seeds 1 to K).
    #[arg(default_value_t = crate::run::layouts::DEFAULT_COUNT as u64, value_parser = clap::value_parser!(u64).range(1..=256))]
    count: u64,
}

#[derive(Args)]
struct SelfcheckArgs {
    #[command(flatten)]
    select: Select,
    /// Operations to time (default: all).
    #[arg(long = "op", value_name = "OP", value_delimiter = ',')]
    operations: Vec<Operation>,
    /// How long and how often each run samples (as `run --profile`).
    #[arg(long, default_value = "full")]
    profile: Profile,
    /// Take every rep of one arm before the next arm (as `run --burst`).
    #[arg(long)]
    burst: bool,
    /// Where both runs go (default: a temporary folder).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Move result sets already in OUT/a and OUT/b into their replaced/ folders first.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct OverheadArgs {
    /// How long and how often to sample (as `run --profile`).
    #[arg(long, default_value = "quick")]
    profile: Profile,
}

#[derive(Args)]
struct FidelityArgs {
    /// A results folder holding the same arms (from `serbench run`).
    #[arg(value_name = "DIR")]
    results: PathBuf,
    /// Criterion's output folder.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// The fidelity benchmark's executable (`cargo bench --bench fidelity --no-run` prints
    /// it): also count instructions per operation of both sides under callgrind.
    #[arg(long)]
    bench_binary: Option<PathBuf>,
}

#[derive(Args)]
struct WorkerArgs {
    /// The run's data, read again to build the same registry.
    #[command(flatten)]
    data: DataArgs,
}

#[derive(Args)]
struct RobustnessArgs {
    /// Formats whose decoders to feed (default: all).
    #[arg(short, long = "format", value_name = "FORMAT", value_delimiter = ',',
          value_parser = PossibleValuesParser::new(crate::robustness::format_names()))]
    formats: Vec<String>,
    /// Payloads (default: the small ones).
    #[arg(short, long = "payload", value_name = "PAYLOAD", value_parser = payload_names(), value_delimiter = ',')]
    payloads: Vec<String>,
    /// Backends to keep (default: all).
    #[arg(short, long = "backend", value_name = "BACKEND", value_delimiter = ',')]
    backends: Vec<String>,
    /// Random cases per kind of hostile input, 1 to 1000000000 (bombs get four times as
    /// many); generated as they run, so memory does not grow with it.
    #[arg(long, default_value_t = crate::robustness::DEFAULT_CASES as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_CASES as u64))]
    cases: u64,
    /// The seed of the cases, decimal or 0x-hex (any 64-bit value).
    #[arg(long, default_value = "0x5EED0B05", value_parser = parse_seed)]
    seed: u64,
    /// Allocation cap of a worker, in MiB, 1 to 1048576: a decoder asking for more is
    /// recorded over-cap.
    #[arg(long, default_value_t = (crate::robustness::DEFAULT_ALLOC_CAP >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_ALLOC_CAP_MIB as u64))]
    alloc_cap_mib: u64,
    /// Seconds without an answer before a case counts as a hang, 1 to 86400.
    #[arg(long, default_value_t = crate::robustness::DEFAULT_CASE_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=MAX_CASE_TIMEOUT_SECS))]
    case_timeout: u64,
    /// Output folder (default: `results/local/<system>/`).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Move the robustness.csv the folder holds into its replaced/ folder first.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct FootprintArgs {
    /// Formats to build (default: all); the baseline is always built.
    #[arg(short, long = "format", value_name = "FORMAT", value_parser = format_names(), value_delimiter = ',')]
    formats: Vec<String>,
    /// Clean builds of each, 1 to 100, back to back (footprint.csv is written after each
    /// build).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    runs: u64,
    /// serbench's source tree (default: the one this binary was built from, else the
    /// current folder).
    #[arg(long, value_name = "DIR")]
    source: Option<PathBuf>,
    /// Output folder (default: `results/local/<system>/`).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Move the footprint.csv the folder holds into its replaced/ folder first.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct DumpArgs {
    /// The format whose bytes to write.
    #[arg(short, long, value_parser = format_names())]
    format: Option<String>,
    #[command(flatten)]
    codec: CodecArgs,
    /// The logical data as pretty JSON instead of a format's bytes.
    #[arg(long, conflicts_with = "format")]
    logical: bool,
    /// Output file (default: standard output). An existing file is refused unless --replace.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Move an existing output file into `replaced/<time>/` beside it first.
    #[arg(long, requires = "output")]
    replace: bool,
}

#[derive(Args)]
struct CheckArgs {
    /// The format that wrote BYTES_FILE.
    #[arg(short, long, value_parser = format_names())]
    format: String,
    #[command(flatten)]
    codec: CodecArgs,
    /// The bytes another program wrote with that codec.
    bytes_file: PathBuf,
    /// The longest the decode may take, in seconds: past it the check stops with one line (exit
    /// 1).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_timeout)]
    timeout: f64,
}

#[derive(Args)]
struct GenArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Output folder (created; must not exist, or be empty).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Formats the crate carries (default: all).
    #[arg(short, long = "format", value_name = "FORMAT", value_parser = format_names(), value_delimiter = ',')]
    formats: Vec<String>,
}

#[derive(Args)]
struct SchemaArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Output folder.
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Move the schema files the folder holds for these data into its replaced/ folder first.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct EvolveArgs {
    /// A built-in payload whose record type to change (repeatable; default `order` without
    /// --data).
    #[arg(short, long, value_name = "PAYLOAD")]
    payload: Vec<String>,
    #[command(flatten)]
    data: DataArgs,
    /// Also write the matrix as DIR/evolution.csv (docs/capabilities.md#schema-evolution); with a
    /// results.csv in DIR, its report is written again to include it.
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Move the evolution.csv the folder holds into its replaced/ folder first.
    #[arg(long, requires = "out")]
    replace: bool,
}

#[derive(Args)]
struct HelpMarkdownArgs {}

/// The matrix axes every command can narrow; each flag is repeatable.
#[derive(Args)]
struct Select {
    /// Formats to keep (default: all).
    #[arg(short, long = "format", value_name = "FORMAT", value_parser = format_names(), value_delimiter = ',')]
    formats: Vec<String>,
    /// Payloads to keep (default: all the built-in ones; with --data alone, none of them).
    #[arg(short, long = "payload", value_name = "PAYLOAD", value_parser = payload_names(), value_delimiter = ',')]
    payloads: Vec<String>,
    /// Backends to keep (e.g. serde_json,simd-json; default: all).
    #[arg(short, long = "backend", value_name = "BACKEND", value_delimiter = ',')]
    backends: Vec<String>,
    #[command(flatten)]
    data: DataArgs,
}

/// One codec of one payload, besides its format (`dump`, `check`); the registry's first match
/// for what is left out.
#[derive(Args)]
struct CodecArgs {
    /// The payload (or --data).
    #[arg(short, long, value_parser = payload_names(), required_unless_present = "sources", conflicts_with = "sources")]
    payload: Option<String>,
    /// The backend (default: the registry's first match).
    #[arg(short, long)]
    backend: Option<String>,
    /// The backend's variant (default: the registry's first match).
    #[arg(long)]
    variant: Option<String>,
    /// The JSON framing: document, array or ndjson (a batch's records as a top-level array or
    /// one per line).
    #[arg(long)]
    framing: Option<Framing>,
    #[command(flatten)]
    data: DataArgs,
}

impl CodecArgs {
    fn query<'a>(&'a self, format: &'a str, payload: &'a str) -> crate::check::CodecQuery<'a> {
        crate::check::CodecQuery {
            format,
            payload,
            backend: self.backend.as_deref(),
            variant: self.variant.as_deref(),
            framing: self.framing,
            typed: self.data.typed,
        }
    }
}

/// Data without Rust types to measure as payloads `data:<file stem>`: see docs/your-data.md.
#[derive(Args, Clone, Default)]
struct DataArgs {
    /// A JSON file (one document, an array of records, or NDJSON), a folder of them, or
    /// corpus:twitter, corpus:citm_catalog, corpus:canada (repeatable), measured as the payload
    /// `data:<file stem>` on every format that can carry it without Rust types
    /// (docs/your-data.md#your-own-data---data). Its payloads join the --payload ones; alone,
    /// they are the selection.
    #[arg(long = "data", value_name = "FILE")]
    sources: Vec<String>,
    /// How the files hold their records (default: detected).
    #[arg(long = "data-framing")]
    data_framing: Option<DataFraming>,
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
    /// Also measure the data typed: generate Rust types (and each format's derive or schema) for
    /// its inferred schema, build them once (cached), and add their arms, mode `typed`.
    #[arg(long, requires = "sources")]
    typed: bool,
}

impl DataArgs {
    fn request(&self) -> payload::data::Request {
        payload::data::Request {
            sources: self.sources.clone(),
            framing: self.data_framing,
            overrides: payload::data::Overrides {
                maps: self.maps.clone(),
                records: self.records.clone(),
            },
            max_mib: self.max_data_mib,
            typed: self.typed,
        }
    }
}

fn format_names() -> PossibleValuesParser {
    PossibleValuesParser::new(crate::format::all().into_iter().map(|format| format.name))
}

fn payload_names() -> PossibleValuesParser {
    PossibleValuesParser::new(payload::specs().into_iter().map(|spec| spec.name))
}

/// What `run` measures.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Measure {
    /// Wall time per operation, sampled as the profile says: results.csv.
    Time,
    /// Deterministic instruction counts per operation under valgrind's callgrind, with its
    /// cache simulation (Linux only): instructions.csv.
    Instructions,
}

/// The library's named enums are command-line values under their own names, so what clap
/// accepts and what the code matches on are one list.
macro_rules! named_values {
    ($($type:ty => $name:expr),* $(,)?) => {$(
        impl ValueEnum for $type {
            fn value_variants<'a>() -> &'a [Self] {
                &<$type>::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                let name: fn(&$type) -> &'static str = $name;
                Some(PossibleValue::new(name(self)))
            }
        }
    )*};
}

named_values! {
    Operation => |operation| operation.name(),
    Framing => |framing| framing.name(),
    DataFraming => |framing| framing.name(),
    Profile => |profile| profile.name,
}

impl Select {
    fn selection(self, operations: Vec<Operation>, registry: &Registry) -> Result<Selection> {
        commands::selection(registry, self.formats, self.backends, self.payloads, operations)
    }
}

/// `--timeout`: positive seconds, at most a day.
fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!("{text:?} is not a number of seconds in 0..=86400")),
    }
}

/// `--seed`: decimal, or hexadecimal after `0x` (as docs/commands.md writes the default, 0x5EED0B05).
fn parse_seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|error| format!("{error}: a seed is a 64-bit number, decimal or 0x-hex"))
}

/// Writes to stdout, line by line through [`crate::escape::terminal`] (a name, note or host
/// column from a file reaches the terminal as visible escapes, never as a control sequence);
/// unlike `print!` it returns a closed pipe as an error instead of panicking.
fn print(text: impl std::fmt::Display) -> Result<()> {
    print_raw(terminal_lines(&text.to_string()))
}

/// Writes `text` to stdout as it is: the worker protocol's answers, for the parent to read.
fn print_raw(text: impl std::fmt::Display) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{text}")?;
    stdout.flush()?;
    Ok(())
}

/// `text` for the terminal: each line through [`crate::escape::terminal`], the line breaks
/// kept.
fn terminal_lines(text: &str) -> String {
    text.split('\n')
        .map(|line| crate::escape::terminal(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `error` is a write to a stdout whose reader has gone (`serbench list | head`).
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|error| error.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The `serbench` command: parses `std::env::args`, runs the subcommand, and returns its exit
/// status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command.data_request() {
        // The plain binary hands a `--typed` command to the binary built for the data's types;
        // `evolve`'s typed versions are made at run time (src/shape.rs), so it builds nothing.
        request
            if request.typed
                && !crate::typed::hook::installed()
                && !matches!(cli.command, Command::Evolve(_)) =>
        {
            match cli.command.built_in_payloads().first() {
                Some(payload) => Err(UsageError::error(format!(
                    "--typed measures the --data files only (its binary holds no built-in payload): \
                     measure --payload {payload} in a command without --typed"
                ))),
                None => crate::typed::build::run_typed(&request, &cli.command.typed_formats()),
            }
        }
        _ => execute(cli.command),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // As standard tools do: the reader of our output has what it wanted.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, whatever a name in it holds: a line break shows as `\n`.
            eprintln!("serbench: {}", crate::escape::terminal(&format!("{error:#}")));
            if error.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Calls the subcommand's function and prints what it returns, one line per subcommand. The
/// registry is built only where arms are listed, measured or read: the instructions worker
/// builds its own format alone (nothing else may touch its heap before counting), the block
/// worker only what its arms need, and gen and schema read data files, not arms.
fn execute(command: Command) -> Result<()> {
    let request = command.data_request();
    let registry = || crate::typed::hook::registry(&request);
    match command {
        Command::List(args) => args.execute(&registry()?),
        Command::Run(args) => args.execute(&registry()?),
        Command::Sizes(args) => args.execute(&registry()?),
        Command::Report(args) => print(commands::report(
            &args.dirs,
            args.out,
            args.replace,
            &args.history,
        )?),
        Command::Compare(args) => print(commands::compare(&args.a, &args.b, args.markdown, args.verbose)?),
        Command::Ratio(args) => args.execute(),
        Command::Vs(args) => args.execute(&registry()?),
        Command::Layouts(args) => print(crate::run::layouts::make(args.count as usize)?),
        Command::Selfcheck(args) => args.execute(&registry()?),
        Command::Overhead(args) => print(commands::overhead(&args.profile)?),
        Command::Fidelity(args) => args.execute(),
        Command::Worker(_) => print_raw(commands::worker(&request)?),
        Command::Robustness(args) => args.execute(&registry()?),
        Command::Footprint(args) => args.execute(),
        Command::Dump(args) => args.execute(&registry()?),
        Command::Check(args) => args.execute(&registry()?),
        Command::Gen(args) => print(crate::typed::write_crate(&request, &args.formats, &args.out)?),
        Command::Schema(args) => print(commands::schema(&request, &args.out, args.replace)?),
        Command::Evolve(args) => print(commands::evolve(
            &args.payload,
            &request,
            args.out.as_deref(),
            args.replace,
        )?),
        Command::HelpMarkdown(args) => args.execute(),
    }
}

impl ListArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        if self.formats_table {
            return print(commands::list_formats(self.markdown));
        }
        if self.capabilities {
            return print(commands::list_capabilities(registry, self.markdown));
        }
        if self.markdown {
            return Err(UsageError::error(
                "--markdown goes with --formats or --capabilities",
            ));
        }
        let selection = self.select.selection(Vec::new(), registry)?;
        print(commands::list(registry, &selection, self.json)?)
    }
}

impl RunArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let selection = self.select.selection(self.operations, registry)?;
        let out = self.out.unwrap_or_else(commands::default_out);
        match self.measure {
            Measure::Instructions if self.resume => Err(UsageError::error(
                "--resume extends a timing run; instruction counts are taken whole (--replace to redo them)",
            )),
            Measure::Instructions if !self.layouts.is_empty() => Err(UsageError::error(
                "--layout spreads timing workers over builds; instruction counts are taken in this build only",
            )),
            Measure::Instructions if !self.history.is_empty() => Err(UsageError::error(
                "--history predicts reruns of timed ratios; instruction counts do not move between sessions",
            )),
            Measure::Instructions => print(commands::count_instructions(
                registry,
                &selection,
                &out,
                self.replace,
            )?),
            Measure::Time => {
                let options = RunOptions {
                    profile: self.profile,
                    schedule: commands::schedule(self.burst),
                    out,
                    resume: self.resume,
                    replace: self.replace,
                    layouts: self.layouts,
                    stall_limit: Duration::from_secs_f64(self.stall_limit),
                };
                print(commands::run(
                    registry,
                    &selection,
                    &options,
                    &self.history,
                    self.verbose,
                )?)
            }
        }
    }
}

impl SizesArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let selection = self.select.selection(Vec::new(), registry)?;
        let out = self.out.unwrap_or_else(commands::default_out);
        print(commands::sizes(registry, &selection, &out, self.replace)?)
    }
}

impl RatioArgs {
    fn execute(self) -> Result<()> {
        if self.headline {
            return print(commands::headline_ratios(&self.dir, self.markdown)?);
        }
        let (Some(payload), Some(operation), Some(numerator), Some(denominator)) =
            (self.payload, self.operation, self.numerator, self.denominator)
        else {
            unreachable!("clap requires the payload, operation and both arms without --headline")
        };
        print(commands::ratio(
            &self.dir,
            &payload,
            operation,
            &numerator,
            &denominator,
            self.json,
        )?)
    }
}

impl VsArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let budget = std::time::Duration::from_secs(self.budget);
        print(commands::vs(
            registry,
            &self.payload,
            self.operation,
            &self.a,
            &self.b,
            budget,
            self.one_process,
        )?)
    }
}

impl SelfcheckArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let selection = self.select.selection(self.operations, registry)?;
        print(commands::selfcheck(
            registry,
            &selection,
            self.profile,
            commands::schedule(self.burst),
            self.out,
            self.replace,
        )?)
    }
}

impl FidelityArgs {
    fn execute(self) -> Result<()> {
        print(commands::fidelity(
            &self.results,
            &self.criterion,
            self.bench_binary.as_deref(),
        )?)
    }
}

impl RobustnessArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let options = crate::robustness::RobustnessOptions {
            formats: self.formats,
            payloads: self.payloads,
            backends: self.backends,
            cases: self.cases as usize,
            seed: self.seed,
            alloc_cap: (self.alloc_cap_mib as usize) << 20,
            case_timeout: std::time::Duration::from_secs(self.case_timeout),
            progress: true,
            ..Default::default()
        };
        let out = self.out.unwrap_or_else(commands::default_out);
        print(commands::robustness(registry, &options, &out, self.replace)?)
    }
}

impl FootprintArgs {
    fn execute(self) -> Result<()> {
        let options = crate::footprint::FootprintOptions {
            formats: self.formats,
            runs: self.runs as usize,
            source: self.source.unwrap_or_else(crate::footprint::default_source),
        };
        let out = self.out.unwrap_or_else(commands::default_out);
        print(commands::footprint(&options, &out, self.replace)?)
    }
}

impl DumpArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let payload = commands::one_payload(registry, self.codec.payload.as_deref())?;
        let query = self
            .format
            .as_deref()
            .map(|format| self.codec.query(format, &payload));
        let bytes = commands::dump(registry, &payload, query.as_ref(), self.logical)?;
        match self.output {
            Some(path) => commands::write_output(&path, &bytes, self.replace),
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(&bytes)?;
                Ok(stdout.flush()?)
            }
        }
    }
}

impl HelpMarkdownArgs {
    fn execute(self) -> Result<()> {
        print(crate::reference::markdown(
            &<Cli as clap::CommandFactory>::command(),
        ))
    }
}

impl CheckArgs {
    fn execute(self, registry: &Registry) -> Result<()> {
        let payload = commands::one_payload(registry, self.codec.payload.as_deref())?;
        let max_bytes = self.codec.data.max_data_mib << 20;
        print(crate::check::check(
            registry,
            &self.codec.query(&self.format, &payload),
            &self.bytes_file,
            max_bytes,
            Duration::from_secs_f64(self.timeout),
        )?)
    }
}

impl Command {
    /// The data the command measures (`--data`), read before the registry is built.
    fn data_request(&self) -> payload::data::Request {
        match self {
            Command::List(ListArgs { select, .. })
            | Command::Run(RunArgs { select, .. })
            | Command::Sizes(SizesArgs { select, .. })
            | Command::Selfcheck(SelfcheckArgs { select, .. }) => select.data.request(),
            Command::Dump(DumpArgs { codec, .. }) | Command::Check(CheckArgs { codec, .. }) => {
                codec.data.request()
            }
            Command::Worker(WorkerArgs { data, .. })
            | Command::Schema(SchemaArgs { data, .. })
            | Command::Evolve(EvolveArgs { data, .. })
            | Command::Gen(GenArgs { data, .. })
            | Command::Vs(VsArgs { data, .. }) => data.request(),
            _ => payload::data::Request::default(),
        }
    }

    /// The formats a `--typed` build must carry (none named: every enabled format).
    fn typed_formats(&self) -> Vec<String> {
        match self {
            Command::List(ListArgs { select, .. })
            | Command::Run(RunArgs { select, .. })
            | Command::Sizes(SizesArgs { select, .. })
            | Command::Selfcheck(SelfcheckArgs { select, .. }) => select.formats.clone(),
            Command::Dump(args) => args.format.iter().cloned().collect(),
            Command::Check(args) => vec![args.format.clone()],
            _ => Vec::new(),
        }
    }

    /// The built-in payloads the command names (`--payload`), which the typed binary does not
    /// hold (it is built with the feature `data-only`, [`crate::payload::visit_all`]).
    fn built_in_payloads(&self) -> Vec<String> {
        let named: Vec<String> = match self {
            Command::List(ListArgs { select, .. })
            | Command::Run(RunArgs { select, .. })
            | Command::Sizes(SizesArgs { select, .. })
            | Command::Selfcheck(SelfcheckArgs { select, .. }) => select.payloads.clone(),
            Command::Vs(args) => vec![args.payload.clone()],
            Command::Dump(args) => args.codec.payload.iter().cloned().collect(),
            Command::Check(args) => args.codec.payload.iter().cloned().collect(),
            _ => Vec::new(),
        };
        named
            .into_iter()
            .filter(|name| !name.starts_with("data:"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_take_commas_and_named_values_parse_to_their_types() {
        let cli = Cli::try_parse_from([
            "serbench",
            "run",
            "--format",
            "postcard,json",
            "--format",
            "bson",
            "--op",
            "decode,encode",
            "--backend",
            "serde_json,postcard",
            "--profile",
            "smoke",
            "--measure",
            "instructions",
        ])
        .unwrap();
        let Command::Run(RunArgs {
            select,
            operations,
            profile,
            measure,
            ..
        }) = cli.command
        else {
            panic!("not run")
        };
        assert_eq!(select.formats, ["postcard", "json", "bson"]);
        assert_eq!(select.backends, ["serde_json", "postcard"]);
        assert_eq!(operations, [Operation::Decode, Operation::Encode]);
        assert_eq!(profile.name, "smoke");
        assert!(measure == Measure::Instructions);
        for bad in [
            ["--op", "decode,nope"],
            ["--format", "postcard,nope"],
            ["--profile", "fast"],
        ] {
            let error = Cli::try_parse_from(["serbench", "run", bad[0], bad[1]])
                .err()
                .unwrap();
            assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue, "{bad:?}");
        }
        // Every named value clap offers is one the library names.
        let offered: Vec<String> = Operation::value_variants()
            .iter()
            .map(|operation| operation.to_possible_value().unwrap().get_name().to_string())
            .collect();
        assert_eq!(
            offered,
            Operation::ALL.map(|operation| operation.name().to_string())
        );
    }

    #[test]
    fn seeds_are_decimal_or_hex_and_the_default_is_the_library_one() {
        assert_eq!(parse_seed("0x5EED0B05"), Ok(crate::robustness::DEFAULT_SEED));
        assert_eq!(parse_seed("1592593157"), Ok(crate::robustness::DEFAULT_SEED));
        assert_eq!(parse_seed("0XFF"), Ok(255));
        assert!(parse_seed("0x").is_err() && parse_seed("-1").is_err() && parse_seed("0x1g").is_err());
        assert!(parse_seed("18446744073709551616").is_err());
    }
}

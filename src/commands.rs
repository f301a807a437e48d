//! One function per `serbench` subcommand: it takes the parsed arguments, checks what clap
//! cannot (names that only the registry knows), calls the stages, and returns what the command
//! prints. Every file is written before anything is returned, so a closed stdout loses no
//! result; main.rs only parses and prints.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::arm::{ArmId, Operation};
use crate::check::CodecQuery;
use crate::files::{OutDir, ResultSet};
use crate::footprint::FootprintOptions;
use crate::format::{Registry, Unsupported};
use crate::host;
use crate::measure::{Profile, Schedule};
use crate::report::{compare, fidelity, formats, history, markdown, table, verdict};
use crate::robustness::RobustnessOptions;
use crate::run::{RunOptions, Selection};
use crate::schema::footprint::{self as footprint_csv, FootprintRow};
use crate::schema::{SetKind, load, ratios, results};
use crate::worker::Request;
use crate::{UsageError, check_names};

/// Where results go without `--out`: not results/<system>/, whose committed results a run
/// must not touch unless told to in words; results/local/<system>/ for a portable build,
/// results/local/<system>-native/ for a native one (so the two sit side by side for `compare`).
pub fn default_out() -> PathBuf {
    PathBuf::from("results")
        .join("local")
        .join(out_name(&host::system(), host::build()))
}

/// The folder name of `system`'s results from a `build`: the system for a portable build,
/// else the system and the build with anything but letters, digits, `-` and `_` as `-`.
fn out_name(system: &str, build: &str) -> String {
    if build == "portable" {
        return system.to_string();
    }
    let build: String = build
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{system}-{build}")
}

/// The selection `formats`, `backends`, `payloads` and `operations` name, after checking the
/// backends against the registry (clap knows the other names). The registry's data payloads
/// (`--data`) join the `payloads`; alone, they are the selection.
pub fn selection(
    registry: &Registry,
    formats: Vec<String>,
    backends: Vec<String>,
    payloads: Vec<String>,
    operations: Vec<Operation>,
) -> Result<Selection> {
    let known = registry.encoders.iter().map(|encoder| encoder.id.backend.clone());
    check_names("backend", &backends, known)?;
    let mut payloads = payloads;
    payloads.extend(registry.data.iter().map(|data| data.spec.name.to_string()));
    Ok(Selection {
        formats,
        backends,
        payloads,
        operations,
    })
}

pub fn schedule(burst: bool) -> Schedule {
    if burst {
        Schedule::Burst
    } else {
        Schedule::Interleaved
    }
}

/// `serbench list`: the selected arms and the unsupported combinations of the selected formats
/// and payloads, as a table or as JSON.
pub fn list(registry: &Registry, selection: &Selection, json: bool) -> Result<String> {
    let arms = selection.arms(registry);
    let unsupported: Vec<&Unsupported> = registry
        .unsupported
        .iter()
        .filter(|unsupported| {
            selection.allows_format(unsupported.format) && selection.allows_payload(unsupported.payload)
        })
        .collect();
    if json {
        let value = table::arms_json(&registry.payloads(), &arms, &unsupported);
        return Ok(format!("{}\n", serde_json::to_string_pretty(&value)?));
    }
    Ok(table::arms(&arms, &unsupported))
}

/// `serbench list --formats`: the formats table, as Markdown (README's) or as text.
pub fn list_formats(markdown: bool) -> String {
    if markdown {
        formats::markdown()
    } else {
        table::render(&formats::HEADER, &formats::rows())
    }
}

/// `serbench list --capabilities`: the capability table of every backend, as Markdown
/// (docs/capabilities.md) or as text; zero-copy access and update from the registry's arms.
pub fn list_capabilities(registry: &Registry, markdown: bool) -> String {
    let has = |format: &str, backend: &str, variant: &str, operation: crate::arm::Operation| {
        registry.arms.iter().any(|arm| {
            let codec = &arm.id.codec;
            codec.format == format
                && codec.backend == backend
                && codec.variant == variant
                && arm.id.operation == operation
        })
    };
    let rows = crate::report::capabilities::table(
        |format, backend, variant| {
            (
                has(format, backend, variant, crate::arm::Operation::AccessAll),
                has(format, backend, variant, crate::arm::Operation::Update),
            )
        },
        None,
        None,
    );
    if markdown {
        return crate::report::capabilities::markdown(&rows);
    }
    let header = crate::report::capabilities::header(&rows);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| crate::report::capabilities::cells(row, &header))
        .collect();
    table::render(&header, &cells)
}

/// `serbench run` (timing): the run, then its answer (per payload, the cheapest formats and
/// the front of time against bytes), the per-arm summary and headline ratios with `verbose`,
/// and where the files are; with `history` (earlier result sets of this host, commit and build,
/// checked before anything is measured), the session spread and the headline ratios'
/// prediction intervals for a rerun.
pub fn run(
    registry: &Registry,
    selection: &Selection,
    options: &RunOptions,
    history: &[PathBuf],
    verbose: bool,
) -> Result<String> {
    let history = (!history.is_empty())
        .then(|| history::load(history, &history::Identity::of_this_run()))
        .transpose()?;
    let started = Instant::now();
    let (summary, report) = run_and_report(registry, selection, options)?;
    let rows = &summary.rows;
    let smoke = options.profile.name == Profile::SMOKE.name;
    let mut text = String::new();
    if verbose {
        text += &table::summary(rows, &report.analysis.ranks);
        if !summary.ratios.is_empty() && !smoke {
            text += "\nheadline ratios (time per record; below 1 means the first arm is faster):\n";
            text += &table::ratios(&summary.ratios);
        }
        text += "\n";
    }
    text += &table::answer(&report.analysis);
    let failed = rows.iter().filter(|row| row.status != results::STATUS_OK).count();
    text += &format!(
        "\n{} arms ({failed} failed) in {:.1} s, profile {}: results.csv, sizes.csv, ratios.csv in {}\nreport: {}{}\n",
        rows.len(),
        started.elapsed().as_secs_f64(),
        options.profile.name,
        options.out.display(),
        report.report.display(),
        if verbose {
            ""
        } else {
            " (and report.html; every arm's row: --verbose)"
        }
    );
    text += &profile_caveat(&options.profile);
    text += &busy_warning(rows);
    if let Some(history) = history {
        text += &format!("\n{}\n", history.line());
        if !summary.ratios.is_empty() && !smoke {
            text +=
                "\nheadline ratios, each with the 95% prediction interval of a rerun (* an unpaired CI):\n";
            text += &history.text(&summary.ratios);
        }
    }
    Ok(text)
}

/// A run, then the report of its whole folder (written while the run still holds the folder),
/// whose analysis the terminal renders.
fn run_and_report(
    registry: &Registry,
    selection: &Selection,
    options: &RunOptions,
) -> Result<(crate::run::RunSummary, markdown::ReportSummary)> {
    let summary = crate::run::run(registry, selection, options)?;
    let loaded = load::load(summary.out.path())?;
    let report = markdown::write(std::slice::from_ref(&loaded), &summary.out)?;
    Ok((summary, report))
}

/// What a profile's intervals are, for the profiles whose intervals are not rerun intervals.
fn profile_caveat(profile: &Profile) -> String {
    match profile.passes {
        Some(_) => String::new(),
        None if profile.name == Profile::SMOKE.name => {
            "profile smoke is a wiring check: its times are a few \
             milliseconds of one process, not measurements, so it prints no ratios\n"
                .to_string()
        }
        None => format!(
            "profile {}: each interval is over the reps of one process, not over reruns: a rerun's mean \
             often falls outside it; --profile full gives intervals that hold across runs\n",
            profile.name
        ),
    }
}

/// One line when some arms ran while the machine was busy ([`crate::busy`]).
fn busy_warning(rows: &[results::ResultRow]) -> String {
    let busy: Vec<crate::busy::Busy> = rows
        .iter()
        .filter_map(results::ResultRow::busy)
        .filter(crate::busy::Busy::was_busy)
        .collect();
    let Some(busiest) = busy.iter().copied().reduce(crate::busy::Busy::max) else {
        return String::new();
    };
    format!(
        "warning: the machine was busy while {} of {} arms ran (load average up to {:.2}, {:.1}% of CPU time \
         stolen by the hypervisor): their times are slower and noisier than on an idle machine; rerun them \
         when it is idle\n",
        busy.len(),
        rows.len(),
        busiest.load_1m,
        busiest.stolen_percent
    )
}

/// `serbench run --measure instructions`: counts the selected arms into OUT/instructions.csv,
/// in a folder that holds no instruction counts (or, with `replace`, after moving them aside).
pub fn count_instructions(
    registry: &Registry,
    selection: &Selection,
    out: &Path,
    replace: bool,
) -> Result<String> {
    if !registry.data.is_empty() {
        return Err(UsageError::error(
            "--measure instructions counts the built-in payloads; data payloads are timed only",
        ));
    }
    let arms = selection.arms(registry);
    if arms.is_empty() {
        return Err(UsageError::error(
            "the selection matches no arm (see `serbench list`)",
        ));
    }
    let out = OutDir::for_new_set(out, SetKind::Instructions, replace)?;
    let scratch = scratch_dir()?;
    let mut rows = Vec::new();
    for arm in arms {
        let row = crate::instructions::count(arm, &scratch);
        let per_op = row
            .instructions_per_op
            .map_or("-".to_string(), |count| format!("{count:.0}"));
        let line = format!("{}: {per_op} instructions/op {}", arm.id, row.note);
        eprintln!("{}", crate::escape::terminal(&line));
        rows.push(row);
    }
    std::fs::remove_dir_all(&scratch).ok();
    let path = out.write_csv(crate::schema::instructions::FILE_NAME, &rows)?;
    Ok(table::instructions(&rows) + &format!("{}\n", path.display()))
}

/// `serbench sizes`: sizes.csv of the selected codecs.
pub fn sizes(registry: &Registry, selection: &Selection, out: &Path, replace: bool) -> Result<String> {
    let path = crate::run::write_sizes(registry, selection, out, replace)?;
    Ok(format!("{}\n", path.display()))
}

/// `serbench robustness`: every selected decoder under hostile inputs, into robustness.csv
/// (and the folder's report again when it has a results.csv).
pub fn robustness(
    registry: &Registry,
    options: &RobustnessOptions,
    out: &Path,
    replace: bool,
) -> Result<String> {
    let known = crate::robustness::backend_names(registry, options.fault_injection);
    check_names("backend", &options.backends, known.into_iter())?;
    let targets = crate::robustness::select(registry, options)?;
    let out = OutDir::lock(out)?;
    // With a results.csv there, the folder's report is written again at the end: what it reads
    // must be valid before the old robustness.csv is moved aside or anything is measured.
    load::check_besides(out.path(), SetKind::Robustness.files())?;
    if out.holds(results::FILE_NAME) {
        out.check_owned(crate::schema::REPORT)?;
    }
    out.claim(SetKind::Robustness, replace)?;
    let reported = out.holds(results::FILE_NAME);
    let started = Instant::now();
    let rows = crate::robustness::run_targets(&targets, options)?;
    let path = out.file(crate::robustness::FILE_NAME);
    out.write_file(crate::robustness::FILE_NAME, |file| {
        crate::robustness::write_csv(file, &rows)
    })?;
    let mut text = crate::report::robustness::markdown_table(&rows);
    text += &format!(
        "\n{} rows in {:.1} s (seed {:#x}, {} cases per kind): {}\n",
        rows.len(),
        started.elapsed().as_secs_f64(),
        options.seed,
        options.cases,
        path.display()
    );
    if reported {
        let report = markdown::write(&[load::load(out.path())?], &out)?;
        text += &format!("report: {}\n", report.report.display());
    }
    Ok(text)
}

/// `serbench footprint`: every selected format's program built, measured and timed into
/// OUT/footprint.csv (and the folder's report again when it has a results.csv).
pub fn footprint(options: &FootprintOptions, out: &Path, replace: bool) -> Result<String> {
    let out = OutDir::lock(out)?;
    // With a results.csv there, the folder's report is written again at the end: what it reads
    // must be valid before the old footprint.csv is moved aside or anything is measured.
    load::check_besides(out.path(), SetKind::Footprint.files())?;
    if out.holds(results::FILE_NAME) {
        out.check_owned(crate::schema::REPORT)?;
    }
    out.claim(SetKind::Footprint, replace)?;
    let reported = out.holds(results::FILE_NAME);
    let started = Instant::now();
    let rows = crate::footprint::measure(options, |rows| {
        out.write_csv(footprint_csv::FILE_NAME, rows).map(drop)
    })?;
    let path = out.file(footprint_csv::FILE_NAME);
    // What was written must read back as every other command reads it.
    crate::files::read_complete::<FootprintRow>(&path)?;
    let mut text = crate::report::footprint::markdown_table(&rows);
    text += &format!(
        "{} builds, {} run(s) each, in {:.0} s: {}\n",
        rows.len(),
        options.runs,
        started.elapsed().as_secs_f64(),
        path.display()
    );
    if reported {
        let report = markdown::write(&[load::load(out.path())?], &out)?;
        text += &format!("report: {}\n", report.report.display());
    }
    Ok(text)
}

/// `serbench report`: report.md, report.html and charts/ from `dirs`, into `out` (default: the
/// first folder, also when it is given as its results.csv), and the answer printed. Report files there that serbench did not write
/// are refused, or with `replace` moved into `replaced/<time>/`. With `history` (earlier result
/// sets of one DIR's host, commit and build), report.md gains the headline ratios' prediction
/// intervals, and the session spread is printed.
pub fn report(dirs: &[PathBuf], out: Option<PathBuf>, replace: bool, history: &[PathBuf]) -> Result<String> {
    if !history.is_empty() && dirs.len() != 1 {
        return Err(UsageError::error(format!(
            "--history predicts reruns of one result set: report one DIR with it (not {})",
            dirs.len()
        )));
    }
    let first = &dirs[0];
    let out = out.unwrap_or_else(|| {
        if first.is_file() {
            first.parent().map_or_else(PathBuf::new, Path::to_path_buf)
        } else {
            first.clone()
        }
    });
    let answered = |summary: markdown::ReportSummary| {
        let answer = table::answer(&summary.analysis);
        match answer.is_empty() {
            true => summary.to_string(),
            false => format!("{answer}\n{summary}"),
        }
    };
    if history.is_empty() {
        return Ok(answered(markdown::report_replacing(dirs, &out, replace)?));
    }
    let mut line = String::new();
    let summary = markdown::report_with(dirs, &out, replace, |loaded| {
        let (section, sentence) = history::report_section(history, &loaded[0])?;
        line = sentence;
        Ok(section)
    })?;
    Ok(format!("{line}\n{}", answered(summary)))
}

/// `serbench compare`: two results folders arm by arm.
pub fn compare(a: &Path, b: &Path, as_markdown: bool, verbose: bool) -> Result<String> {
    let comparison = compare::compare(a, b)?;
    Ok(if as_markdown {
        comparison.markdown_with(verbose)
    } else {
        comparison.text(verbose)
    })
}

/// `serbench ratio`: the arm labelled `numerator` over the one labelled `denominator`, of one
/// payload and operation of the results in `dir`: unpaired, and paired where the folder kept its
/// workers (samples.csv); with `json`, as one JSON object.
pub fn ratio(
    dir: &Path,
    payload: &str,
    operation: Operation,
    numerator: &str,
    denominator: &str,
    json: bool,
) -> Result<String> {
    let loaded = load::load(dir)?;
    let arms: Vec<&ArmId> = loaded
        .rows
        .iter()
        .map(|row| &row.arm)
        .filter(|arm| arm.codec.payload == payload && arm.operation == operation)
        .collect();
    let find = |label: &str| -> Result<ArmId> {
        let known = arms.iter().map(|arm| arm.label());
        check_names(
            &format!("arm of {payload} {}", operation.name()),
            &[label.to_string()],
            known,
        )?;
        Ok(arms
            .iter()
            .find(|arm| arm.label() == label)
            .map(|arm| (*arm).clone())
            .expect("a checked label names an arm"))
    };
    let (numerator, denominator) = (find(numerator)?, find(denominator)?);
    let workers = loaded.samples.as_deref().map(ratios::worker_means);
    let ratio = ratios::pair(
        "ratio",
        &ratios::by_arm(&loaded.rows),
        workers.as_ref(),
        &numerator,
        &denominator,
    )
    .ok_or_else(|| unmeasured(dir, &loaded.rows, [&numerator, &denominator]))?;
    let (interval, paired) = ratio.quoted();
    let basis = match ratio.paired_workers {
        Some(workers) if paired => format!("95%, paired over {workers} workers"),
        _ => "95%, unpaired: no worker of this folder measured both".to_string(),
    };
    let sentence = verdict::sentence(
        &numerator.label(),
        &denominator.label(),
        ratio.operation,
        payload,
        interval,
        &basis,
    );
    if json {
        let value = serde_json::json!({
            "ratio": ratio,
            "quoted": {"ratio": interval.ratio, "low": interval.low, "high": interval.high, "paired": paired},
            "sentence": sentence,
        });
        return Ok(serde_json::to_string_pretty(&value)? + "\n");
    }
    Ok(format!("{}\n{sentence}\n", table::ratios(&[ratio])))
}

/// Why `ratio` has no figures for `arms` of the folder `dir`: the arm(s) that failed, with the
/// note of each. A usage error (exit 2): the user asked for a ratio that folder cannot give.
fn unmeasured(dir: &Path, rows: &[results::ResultRow], arms: [&ArmId; 2]) -> anyhow::Error {
    let failed: Vec<String> = rows
        .iter()
        .filter(|row| arms.contains(&&row.arm) && row.status != results::STATUS_OK)
        .map(|row| match row.note.as_str() {
            "" => format!("{} failed", row.arm),
            note => format!("{} failed ({note})", row.arm),
        })
        .collect();
    let why = if failed.is_empty() {
        format!("{} or {} has no figures", arms[0], arms[1])
    } else {
        failed.join("; ")
    };
    UsageError::error(crate::escape::terminal(&format!(
        "{}: {why}: no ratio without both arms' figures",
        dir.display()
    )))
}

/// `serbench ratio --headline`: the ratios README quotes ([`ratios::README_RATIOS`]) as the
/// run in `dir` recorded them in its ratios.csv, as the terminal table (or README's Markdown
/// one). Read as written, not recomputed from results.csv, so README quotes the committed file.
pub fn headline_ratios(dir: &Path, as_markdown: bool) -> Result<String> {
    let path = dir.join(ratios::FILE_NAME);
    let recorded: Vec<ratios::Ratio> = crate::files::read_complete(&path)?;
    let quoted = ratios::README_RATIOS
        .iter()
        .map(|&(numerator, denominator, payload, operation)| {
            recorded
                .iter()
                .find(|ratio| {
                    (ratio.numerator.as_str(), ratio.denominator.as_str(), ratio.payload.as_str(), ratio.operation)
                        == (numerator, denominator, payload, operation)
                })
                .cloned()
                .ok_or_else(|| {
                    UsageError::error(format!(
                        "{}: no ratio `{numerator}` / `{denominator}` of {payload} {}, one of the headline ratios README quotes",
                        path.display(),
                        operation.name()
                    ))
                })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(if as_markdown {
        markdown::headline_table(&quoted)
    } else {
        table::ratios(&quoted)
    })
}

/// `serbench selfcheck`: the same selection twice, into OUT/a and OUT/b, then their comparison.
pub fn selfcheck(
    registry: &Registry,
    selection: &Selection,
    profile: Profile,
    schedule: Schedule,
    out: Option<PathBuf>,
    replace: bool,
) -> Result<String> {
    let out = out
        .unwrap_or_else(|| std::env::temp_dir().join(format!("serbench-selfcheck-{}", std::process::id())));
    // One selfcheck per folder; each run also holds its own.
    let _out = OutDir::lock(&out)?;
    // Refused here, before run's own refusal offers a --resume that selfcheck does not take.
    for run_name in ["a", "b"] {
        let run_dir = out.join(run_name);
        if !replace && run_dir.join(crate::schema::results::FILE_NAME).exists() {
            return Err(UsageError::error(format!(
                "{} already holds a selfcheck run: pass --replace to move it into its replaced/ \
                 folder and start anew, or choose another --out",
                run_dir.display()
            )));
        }
    }
    for run_name in ["a", "b"] {
        let options = RunOptions {
            profile,
            schedule,
            out: out.join(run_name),
            resume: false,
            replace,
            layouts: Vec::new(),
            stall_limit: crate::run::watchdog::DEFAULT_STALL_LIMIT,
        };
        eprintln!(
            "selfcheck: run {run_name} into {}",
            crate::escape::terminal(&options.out.display().to_string())
        );
        run_and_report(registry, selection, &options)?;
    }
    Ok(compare::compare(&out.join("a"), &out.join("b"))?.to_string())
}

/// `serbench overhead`: the timed loop around a no-op, and copy bandwidth.
pub fn overhead(profile: &Profile) -> Result<String> {
    Ok(crate::measure::overhead(profile)?.to_string())
}

/// `serbench fidelity`: serbench's means next to criterion's for the same arms, and with the
/// fidelity bench's executable both sides' instructions per operation.
pub fn fidelity(results_dir: &Path, criterion: &Path, bench_binary: Option<&Path>) -> Result<String> {
    let loaded = load::load(results_dir)?;
    let rows = loaded.rows;
    let mut pairs = fidelity::pairs(&fidelity::criterion_means(criterion)?, &rows);
    if pairs.is_empty() {
        return Err(UsageError::error(format!(
            "no arm of {} has a criterion result in {}",
            results_dir.display(),
            criterion.display()
        )));
    }
    if let Some(bench_binary) = bench_binary {
        let scratch = scratch_dir()?;
        for pair in &mut pairs {
            let arm = rows
                .iter()
                .map(|row| &row.arm)
                .find(|arm| arm.path() == pair.id)
                .expect("a pair is of a row's arm");
            pair.instructions = Some(crate::instructions::count_fidelity_pair(
                arm,
                bench_binary,
                &scratch,
            )?);
        }
        std::fs::remove_dir_all(&scratch).ok();
    }
    let ratio_pairs = fidelity::ratio_pairs(&pairs, &rows, loaded.samples.as_deref());
    let mut out = fidelity::table(&pairs);
    if !ratio_pairs.is_empty() {
        out += "\n";
        out += &fidelity::ratio_table(&ratio_pairs);
    }
    Ok(out)
}

/// `serbench vs A B`: the two arms labelled `a` and `b` (as the report labels them) of `payload`
/// and `operation`, each proven in every process before it is timed, measured over fresh
/// processes drawn from this build's code layouts for the whole `budget`
/// ([`crate::run::versus::over_processes`]), or with `one_process` in this process alone until
/// the ratio is known to ±1% ([`crate::measure::versus`]): one sentence, as `ratio` words it.
pub fn vs(
    registry: &Registry,
    payload: &str,
    operation: Operation,
    a: &str,
    b: &str,
    budget: std::time::Duration,
    one_process: bool,
) -> Result<String> {
    let arms: Vec<&crate::arm::Arm> = registry
        .arms
        .iter()
        .filter(|arm| arm.id.codec.payload == payload && arm.id.operation == operation)
        .collect();
    let find = |label: &str| -> Result<&crate::arm::Arm> {
        check_names(
            &format!("arm of {payload} {}", operation.name()),
            &[label.to_string()],
            arms.iter().map(|arm| arm.id.label()),
        )?;
        Ok(arms
            .iter()
            .find(|arm| arm.id.label() == label)
            .expect("a checked label names an arm"))
    };
    let (first, second) = (find(a)?, find(b)?);
    let seconds = |elapsed: std::time::Duration| format!("{:.1} s", elapsed.as_secs_f64());
    let (interval, basis) = if one_process {
        let measured = crate::measure::versus(
            &mut || Ok(first.prepare()?.runner),
            &mut || Ok(second.prepare()?.runner),
            VS_PRECISION,
            budget,
        )?;
        let basis = format!(
            "95%, one process: {} paired slices, {}; leaves out the spread between processes and code layouts",
            crate::report::text::grouped(measured.rounds as i64),
            seconds(measured.elapsed)
        );
        (measured.interval, basis)
    } else {
        let pool = crate::run::layouts::Pool::of_this_build()?;
        let measured = crate::run::versus::over_processes(registry, &pool, first, second, budget)?;
        let layouts = match (measured.layouts, &pool.none_because) {
            (1, Some(_)) => "of one layout (no layouts made: `serbench layouts`)".to_string(),
            (1, None) => "of one layout".to_string(),
            (count, _) => format!("over {count} layouts"),
        };
        let across = crate::run::sessions::across(payload, operation, a, b, &measured);
        let basis = format!(
            "95%, {} processes {layouts}, {}{}",
            measured.processes,
            seconds(measured.elapsed),
            across.words
        );
        if let Some(levels) = measured.levels {
            eprintln!(
                "levels: a round's log-ratio sd {:.2}%, a process's (layout's) {:.2}%, a session's {:.2}%; a round \
                 {:.2} ms, a process {:.2} s beyond its rounds: {} rounds per process (Kalibera & Jones); this \
                 session alone {:.5} [{:.5}, {:.5}]; time ratio {:.5} [{:.5}, {:.5}]",
                levels.round_sd * 100.0,
                levels.process_sd * 100.0,
                across.sigma * 100.0,
                levels.round_s * 1e3,
                levels.process_s,
                measured.rounds_per_process,
                measured.interval.ratio,
                measured.interval.low,
                measured.interval.high,
                across.interval.ratio,
                across.interval.low,
                across.interval.high
            );
        }
        (across.interval, basis)
    };
    Ok(format!(
        "{}\n",
        verdict::sentence(a, b, first.id.operation, payload, interval, &basis)
    ))
}

/// How precisely `vs --one-process` wants the ratio: ±1%.
pub const VS_PRECISION: f64 = 0.01;

/// `serbench dump`: the encoded bytes of the codec `query` names (of `payload`), or (`logical`)
/// the payload as pretty JSON.
pub fn dump(
    registry: &Registry,
    payload: &str,
    query: Option<&CodecQuery>,
    logical: bool,
) -> Result<Vec<u8>> {
    if logical {
        let json = match registry.data.iter().find(|data| data.spec.name == payload) {
            Some(data) => serde_json::to_string_pretty(&data.as_value())?,
            None => crate::payload::logical_json(payload).context("unknown payload")?,
        };
        return Ok(json.into_bytes());
    }
    match query {
        Some(query) => crate::check::encoder(registry, query)?.encode(),
        None => Err(UsageError::error("dump needs --format F or --logical")),
    }
}

/// `dump -o PATH`: a file outside any result set, written as result files are: under its folder's
/// lock (a run writing there is not disturbed), never over an existing file unless `replace`
/// (which moves it into `replaced/<time>/`), atomically. PATH is a regular file or nothing yet:
/// a device, FIFO, socket, link or folder is refused before the folder is touched, with or
/// without `replace`.
pub fn write_output(path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
    const FLAG: &str = "-o/--output";
    let name = path.file_name().and_then(|name| name.to_str()).ok_or_else(|| {
        UsageError::error(format!(
            "{}: not a file name (choose another {FLAG})",
            path.display()
        ))
    })?;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        crate::files::not_regular(path, &metadata, FLAG)?;
    }
    if folder.exists() && !folder.is_dir() {
        return Err(UsageError::error(format!(
            "{}: not a folder, so {name} cannot be written in it (choose another {FLAG})",
            folder.display()
        )));
    }
    let out = OutDir::lock_for(folder, FLAG)?;
    out.claim_files(&[name], replace)?;
    out.write_file(name, |file| Ok(file.write_all(bytes)?))?;
    Ok(())
}

/// The payload `dump` and `check` name: `--payload`, or the one data payload of `--data`.
pub fn one_payload(registry: &Registry, payload: Option<&str>) -> Result<String> {
    match (payload, registry.data.as_slice()) {
        (Some(payload), _) => Ok(payload.to_string()),
        (None, [data]) => Ok(data.spec.name.to_string()),
        (None, data) => Err(UsageError::error(format!(
            "--data names {} payloads here; dump and check take one file",
            data.len()
        ))),
    }
}

/// `serbench schema`: infers the schema of the data `request` reads and writes it into `out`;
/// the paths written, one per line.
pub fn schema(request: &crate::payload::data::Request, out: &Path, replace: bool) -> Result<String> {
    let written = crate::report::data_schema::write(request, out, replace)?;
    Ok(written
        .iter()
        .map(|path| format!("{}\n", path.display()))
        .collect())
}

/// `serbench evolve`: the schema-evolution matrix of each payload named (default `order` when
/// no data file is given) and of each `--data` file; with `out`, also into evolution.csv (and
/// the folder's report again when it has a results.csv).
pub fn evolve(
    payloads: &[String],
    request: &crate::payload::data::Request,
    out: Option<&Path>,
    replace: bool,
) -> Result<String> {
    // The folder is checked and claimed before anything is measured.
    let out = out
        .map(|out| -> Result<OutDir> {
            let out = OutDir::lock(out)?;
            load::check_besides(out.path(), SetKind::Evolution.files())?;
            if out.holds(results::FILE_NAME) {
                out.check_owned(crate::schema::REPORT)?;
            }
            out.claim(SetKind::Evolution, replace)?;
            Ok(out)
        })
        .transpose()?;
    let mut sources: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
    let named: Vec<String> = match (payloads.is_empty(), request.sources.is_empty()) {
        (true, true) => vec!["order".to_string()],
        _ => payloads.to_vec(),
    };
    for payload in &named {
        let records =
            crate::evolve::builtin_records(payload).map_err(|error| UsageError::error(error.to_string()))?;
        sources.push((payload.clone(), records));
    }
    if !request.sources.is_empty() {
        for data in crate::payload::data::load(request)? {
            sources.push((data.spec.name.to_string(), data.records.clone()));
        }
    }
    let mut text = String::new();
    let mut rows = Vec::new();
    for (payload, records) in &sources {
        let matrix = crate::evolve::matrix(payload, records, crate::evolve::Isolation::Forked)?;
        text += &evolution_text(&matrix);
        rows.extend(matrix.csv_rows());
    }
    if let Some(out) = out {
        out.write_file(crate::schema::evolution::FILE_NAME, |file| {
            file.write_all(&crate::files::to_csv(&rows)?)?;
            Ok(())
        })?;
        text += &format!("{}\n", out.file(crate::schema::evolution::FILE_NAME).display());
        if out.holds(results::FILE_NAME) {
            let report = markdown::write(&[load::load(out.path())?], &out)?;
            text += &format!("report: {}\n", report.report.display());
        }
    }
    Ok(text)
}

/// A matrix as text: one row per backend, one column per change, each cell `new reads old /
/// old reads new`; then what each change did, each backend's mechanism, the first detail of
/// every cell that is not ok, and what is not measured. The table is the report's model
/// ([`crate::report::evolution`]); names from a data file are escaped for the terminal.
fn evolution_text(matrix: &crate::evolve::Matrix) -> String {
    use crate::escape::terminal;
    let rows = matrix.csv_rows();
    let Some(model) = crate::report::evolution::matrices(&rows).pop() else {
        return format!(
            "{}: no backend carries its record type\n",
            terminal(&matrix.payload)
        );
    };
    let (header, rows) = model.table();
    let escaped = |cells: Vec<String>| -> Vec<String> {
        cells.iter().map(|cell| terminal(cell).into_owned()).collect()
    };
    let header = escaped(header);
    let rows: Vec<Vec<String>> = rows.into_iter().map(escaped).collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let of = matrix
        .wrapper
        .as_ref()
        .map_or(String::new(), |field| format!(" of its `{}`", terminal(field)));
    let mut text = format!(
        "{}: schema evolution of its record type (each cell: new reads old / old reads new; {}{of})\n",
        terminal(&matrix.payload),
        model.records_text()
    );
    text += &table::render(&header, &rows);
    text += "\nmechanisms:\n";
    for row in &model.rows {
        text += &format!("  {}: {}\n", row.label, row.mechanism);
    }
    text += "\nchanges:\n";
    for change in &model.changes {
        text += &format!("  {}: {}\n", change.change, terminal(&change.what));
    }
    if !model.not_ok.is_empty() {
        text += "\nnot ok:\n";
        for line in &model.not_ok {
            text += &format!("  {}\n", terminal(line));
        }
    }
    if !matrix.left_out.is_empty() {
        text += &format!(
            "\nfields left out of the type (mixed types): {}\n",
            terminal(&matrix.left_out.join(", "))
        );
    }
    text += "\nnot measured:\n";
    for (backend, reason) in &matrix.unmeasured {
        text += &format!("  {backend}: {}\n", terminal(reason));
    }
    text + "\n"
}

/// The hidden `worker`: serves the one request of [`crate::worker`]'s protocol on standard
/// input; the text returned is its role's answer (empty for the roles that stream theirs or
/// have none).
pub fn worker(data: &crate::payload::data::Request) -> Result<String> {
    match crate::worker::read_request(std::io::stdin().lock())? {
        Request::Block { arms, profile, burst } => {
            let profile = Profile::ALL
                .iter()
                .find(|known| known.name == profile && known.passes.is_some())
                .with_context(|| {
                    format!("a block worker's profile {profile:?} is not one of this build's that samples in workers")
                })?;
            let registry = crate::typed::hook::registry(data)?;
            let reports = crate::worker::with_random_offsets(|| {
                crate::run::block_worker(&registry, &arms, profile, schedule(burst))
            })?;
            Ok(format!("{}\n", serde_json::to_string(&reports)?))
        }
        Request::Versus { a, b, rounds } => {
            let registry = crate::typed::hook::registry(data)?;
            let report =
                crate::worker::with_random_offsets(|| crate::run::versus::worker(&registry, &a, &b, rounds))?;
            Ok(format!("{}\n", serde_json::to_string(&report)?))
        }
        Request::Robustness(request) => crate::robustness::worker(&request).map(|()| String::new()),
        Request::Instructions { arm } => crate::instructions::worker(&arm).map(|()| String::new()),
    }
}

/// A private scratch folder for callgrind's dump files.
fn scratch_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("serbench-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_build_has_its_own_default_folder() {
        assert_eq!(out_name("x86_64-linux", "portable"), "x86_64-linux");
        assert_eq!(out_name("x86_64-linux", "native"), "x86_64-linux-native");
        assert_eq!(
            out_name("x86_64-linux", "target-cpu=x86-64-v3 target-feature=+avx2"),
            "x86_64-linux-target-cpu-x86-64-v3-target-feature--avx2"
        );
    }
}

//! `serbench report`: one or more results folders -> OUT/report.md and OUT/charts/*.svg.
//!
//! The report has a header with each host's metadata, how precise its figures are, the
//! headline ratios (recomputed from results.csv with [`crate::schema::ratios::headline`], so a missing
//! ratios.csv costs nothing), then per payload and operation a timing chart with its data table
//! (each arm also over the fastest arm of its section and mode, paired over workers where
//! samples.csv exists), and per payload a sizes chart with its table. Several folders (hosts, or runs)
//! share each chart as side-by-side panels.
//!
//! Every input is read and checked, and every chart rendered in memory, before anything is
//! written: a bad input writes nothing. Then charts/ is replaced whole (no chart of an older
//! report remains) and report.md atomically, under OUT's lock. The output is a pure function of
//! the inputs (no clock), so the same folders give the same bytes.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::analysis::{self, Analysis, Source, VersusFastest};
use super::charts::{self, Bar, BarChart, Panel, RenderedChart, SizeChart};
use super::hosts::RankAgreement;
use super::rank::Interval;
use super::text::{code, ns, ratio_interval, table};
use crate::UsageError;
use crate::arm::{ArmId, CodecId, Operation};
use crate::escape;
use crate::files::OutDir;
use crate::schema::load::{self, ResultsDir};
use crate::schema::ratios;
use crate::schema::results::{self, ResultRow, STATUS_OK};
use crate::schema::sizes::SizeRow;

pub use crate::schema::{CHARTS_DIR, MODEL_FILE, PAGE_FILE, REPORT_FILE};

/// What `report` wrote.
#[derive(Clone, Debug)]
pub struct ReportSummary {
    pub report: PathBuf,
    pub charts: Vec<PathBuf>,
    /// Sections the report leaves out and why (e.g. a folder without sizes.csv).
    pub absent: Vec<String>,
    /// The model the report rendered: the terminal's answer renders it too.
    pub analysis: Analysis,
}

impl ReportSummary {
    /// Every file written, report.md first.
    pub fn paths(&self) -> Vec<&Path> {
        std::iter::once(self.report.as_path())
            .chain(self.charts.iter().map(PathBuf::as_path))
            .collect()
    }
}

impl fmt::Display for ReportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.absent {
            writeln!(f, "note: {note}")?;
        }
        writeln!(f, "{} ({} charts)", self.report.display(), self.charts.len())
    }
}

/// The whole report, in memory.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub markdown: String,
    /// report.html and report.json: the page and its model ([`super::page`]).
    pub html: String,
    pub json: String,
    pub charts: Vec<RenderedChart>,
    pub absent: Vec<String>,
    /// The model every part renders.
    pub analysis: Analysis,
}

/// `serbench report`: takes OUT's lock, reads and checks every folder, renders the report, and
/// only then writes OUT/charts/ and OUT/report.md.
pub fn report(dirs: &[PathBuf], out: &Path) -> Result<ReportSummary> {
    report_replacing(dirs, out, false)
}

/// [`report`], where a report OUT holds that serbench did not write (or that was changed since)
/// is refused, or with `replace` moved into OUT's `replaced/<time>/` once all is rendered.
pub fn report_replacing(dirs: &[PathBuf], out: &Path, replace: bool) -> Result<ReportSummary> {
    report_with(dirs, out, replace, |_| Ok(String::new()))
}

/// [`report_replacing`] with a section of report.md the caller renders from the loaded folders
/// (`report --history`'s prediction intervals), placed after the headline ratios. `section`
/// runs after every folder is read and checked and before anything is written, so a refusal
/// of its own writes nothing either.
pub fn report_with(
    dirs: &[PathBuf],
    out: &Path,
    replace: bool,
    section: impl FnOnce(&[ResultsDir]) -> Result<String>,
) -> Result<ReportSummary> {
    if dirs.is_empty() {
        return Err(UsageError::error("report needs at least one results folder"));
    }
    let out_dir = OutDir::lock(out)?;
    let loaded = dirs
        .iter()
        .map(|dir| load::load(dir))
        .collect::<Result<Vec<_>>>()?;
    // The report beside a results.csv describes that results.csv: never other folders alone.
    if out_dir.holds(results::FILE_NAME) && !loaded.iter().any(|dir| same_folder(&dir.dir, out)) {
        return Err(UsageError::error(format!(
            "{} holds its own results.csv, which a report there must describe: add the folder to \
             the ones to report, or choose another --out",
            out.display()
        )));
    }
    let section = section(&loaded)?;
    let rendered = render_with(&loaded, &section)?;
    out_dir.claim_owned(crate::schema::REPORT, replace)?;
    write_rendered(rendered, &out_dir)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    let canonical = |path: &Path| {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        path.canonicalize().ok()
    };
    canonical(a).is_some_and(|a| Some(a) == canonical(b))
}

/// Renders the report of `dirs` into `out`, which the caller holds: the whole charts/ folder
/// replaced first, then report.md.
pub fn write(dirs: &[ResultsDir], out: &OutDir) -> Result<ReportSummary> {
    write_rendered(render(dirs)?, out)
}

/// Writes a rendered report as one group ([`crate::schema::REPORT`]): only over files the last
/// report wrote, recorded in its manifest.
fn write_rendered(rendered: Rendered, out: &OutDir) -> Result<ReportSummary> {
    let charts: Vec<String> = rendered
        .charts
        .iter()
        .map(|chart| format!("{CHARTS_DIR}/{}", chart.file_name))
        .collect();
    let mut files: Vec<(&str, &[u8])> = charts
        .iter()
        .zip(&rendered.charts)
        .map(|(path, chart)| (path.as_str(), chart.svg.as_bytes()))
        .collect();
    files.push((PAGE_FILE, rendered.html.as_bytes()));
    files.push((MODEL_FILE, rendered.json.as_bytes()));
    files.push((REPORT_FILE, rendered.markdown.as_bytes()));
    out.write_owned(crate::schema::REPORT, &files)?;
    Ok(ReportSummary {
        report: out.file(REPORT_FILE),
        charts: charts.iter().map(|path| out.file(path)).collect(),
        absent: rendered.absent,
        analysis: rendered.analysis,
    })
}

/// Renders report.md and the charts from loaded folders.
pub fn render(dirs: &[ResultsDir]) -> Result<Rendered> {
    render_with(dirs, "")
}

/// [`render`], with `section` (Markdown, a `## ` section or nothing) after the headline ratios.
fn render_with(dirs: &[ResultsDir], section: &str) -> Result<Rendered> {
    let sources = analysis::sources(dirs);
    let (sizes, size_conflicts) = analysis::merged_sizes(&sources)?;
    let analysis = Analysis::of(&sources, &sizes);
    let mut absent = Vec::new();
    let mut markdown = String::new();
    let mut charts = Vec::new();

    writeln!(markdown, "# serbench report\n")?;
    writeln!(
        markdown,
        "Time per record and encoded size of every arm; lower is better everywhere. Intervals are \
         95% confidence intervals over the reps (Student t). Absolute times compare only within \
         one host and one run; the ratios are what to quote.\n"
    )?;
    write_answer(&mut markdown, &analysis)?;
    write_hosts(&mut markdown, &sources)?;
    write_precision(&mut markdown, &sources, &sections(dirs))?;
    write_across_hosts(&mut markdown, &sources, &analysis, &sections(dirs))?;

    let without_sizes: Vec<&Source> = sources
        .iter()
        .filter(|source| source.dir.sizes.is_none())
        .collect();
    if without_sizes.len() == sources.len() {
        absent.push("no folder has a sizes.csv: the sizes sections are absent".to_string());
    } else {
        for source in &without_sizes {
            absent.push(format!(
                "{} has no sizes.csv: its sizes come from the other folders",
                source.dir.dir.display()
            ));
        }
    }
    absent.extend(size_conflicts.iter().cloned());
    if !absent.is_empty() {
        writeln!(markdown, "**Absent or partial sections:**\n")?;
        for note in &absent {
            writeln!(markdown, "- {}", escape::markdown(note))?;
        }
        writeln!(markdown)?;
    }

    // Computed once: each payload's section shows its own rows.
    let headline = headline_cells(&sources);
    write_headline(&mut markdown, &headline)?;
    markdown.push_str(section);

    let mut payloads: Vec<String> = dirs
        .iter()
        .flat_map(|dir| dir.rows.iter().map(|row| row.arm.codec.payload.clone()))
        .chain(sizes.keys().map(|key| key.payload.clone()))
        .collect();
    payloads.sort_by_key(|name| (crate::payload::rank(name), name.clone()));
    payloads.dedup();
    for payload in &payloads {
        writeln!(markdown, "## {}\n", escape::markdown(payload))?;
        write_payload_headline(&mut markdown, &sources, &headline, payload)?;
        let mut operations: Vec<Operation> = dirs
            .iter()
            .flat_map(|dir| dir.rows.iter())
            .filter(|row| &row.arm.codec.payload == payload)
            .map(|row| row.arm.operation)
            .collect();
        operations.sort();
        operations.dedup();
        for operation in operations {
            write_timing_section(
                &mut markdown,
                &mut charts,
                &sources,
                &analysis,
                payload,
                operation.name(),
            )?;
        }
        write_zero_copy_section(&mut markdown, &mut charts, &sources, payload)?;
        let payload_sizes: Vec<&SizeRow> = sizes
            .values()
            .filter(|row| &row.codec.payload == payload)
            .collect();
        if !payload_sizes.is_empty() {
            write_sizes_section(&mut markdown, &mut charts, payload, &payload_sizes)?;
        }
    }
    if !analysis.capabilities.is_empty() {
        writeln!(markdown, "## Capabilities\n")?;
        writeln!(
            markdown,
            "What each backend offers besides speed (docs/capabilities.md says how each column is \
             obtained); zero-copy from this report's arms, hostile input from its robustness.csv.\n"
        )?;
        markdown.push_str(&super::capabilities::markdown(&analysis.capabilities));
        markdown.push('\n');
    }
    if !analysis.evolution.is_empty() {
        writeln!(markdown, "## Schema evolution\n")?;
        writeln!(
            markdown,
            "What each backend's reader does with bytes written by the other version of a changed \
             record type (`serbench evolve`, evolution.csv; docs/capabilities.md#schema-evolution): \
             ok (the expected value), refused (an error) or SILENTLY WRONG (another value, no error).\n"
        )?;
        for matrix in &analysis.evolution {
            markdown.push_str(&matrix.markdown());
        }
    }
    for source in &sources {
        if let Some(rows) = &source.dir.robustness {
            writeln!(markdown, "## Robustness: {}\n", text(source))?;
            writeln!(
                markdown,
                "Every decoder fed hostile inputs derived from its real payloads (`serbench robustness`, \
                 robustness.csv): cases per outcome, and the worst case of each decoder.\n"
            )?;
            writeln!(markdown, "{}", super::robustness::markdown_table(rows))?;
        }
    }
    for source in &sources {
        if let Some(counts) = &source.dir.instructions {
            super::deterministic::write_section(&mut markdown, &source.label, &source.dir.rows, counts)?;
        }
    }
    for source in &sources {
        if let Some(rows) = &source.dir.footprint {
            super::footprint::write_section(&mut markdown, &mut charts, &source.label, rows)?;
        }
    }
    Ok(Rendered {
        html: super::page::html(&analysis),
        json: super::page::json(&analysis),
        analysis,
        markdown: with_contents(&markdown),
        charts,
        absent,
    })
}

/// The report with a table of contents of its sections (`## ` headings) before the first one,
/// each linked by the anchor GitHub and most Markdown renderers give it.
fn with_contents(markdown: &str) -> String {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let entries: Vec<String> = markdown
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(|title| {
            let slug = anchor(title);
            let count = seen.entry(slug.clone()).or_insert(0);
            let unique = if *count == 0 {
                slug.clone()
            } else {
                format!("{slug}-{count}")
            };
            *count += 1;
            // The title is Markdown already, escaped where it was written.
            format!("- [{title}](#{unique})")
        })
        .collect();
    // The answer comes first, then the contents of the rest.
    let after_answer = markdown
        .find(&format!("\n## {ANSWER}\n"))
        .map_or(0, |answer| answer + 1);
    let Some(first) = markdown[after_answer..]
        .find("\n## ")
        .map(|first| first + after_answer)
    else {
        return markdown.to_string();
    };
    format!(
        "{}## Contents\n\n{}\n\n{}",
        &markdown[..first + 1],
        entries.join("\n"),
        &markdown[first + 1..]
    )
}

/// A heading's anchor as GitHub makes it: lower case, spaces to `-`, punctuation other than `-`
/// and `_` dropped. `title` is Markdown: its character references (`&lt;`) are dropped too.
fn anchor(title: &str) -> String {
    let mut text = String::new();
    let mut rest = title;
    while let Some(at) = rest.find('&') {
        text.push_str(&rest[..at]);
        rest = &rest[at..];
        match rest.find(';').filter(|&end| {
            end > 1
                && rest[1..end]
                    .chars()
                    .all(|c| c == '#' || c.is_ascii_alphanumeric())
        }) {
            Some(end) => rest = &rest[end + 1..],
            None => {
                text.push('&');
                rest = &rest[1..];
            }
        }
    }
    text.push_str(rest);
    text.chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A row of the hosts table: its name and how to read it from a result row.
type MetadataColumn = (&'static str, fn(&ResultRow) -> String);

/// The title of the answer's section.
const ANSWER: &str = "The answer";

/// The answer ([`super::analysis::Answer`]) as the report's first section: per payload, the
/// first rank of decode and encode (ties joined by `=`), the fewest bytes and zstd bytes per
/// record, and the front of round-trip time against bytes.
fn write_answer(markdown: &mut String, analysis: &Analysis) -> Result<()> {
    let Some(host) = analysis.hosts.first().filter(|_| !analysis.answers.is_empty()) else {
        return Ok(());
    };
    writeln!(markdown, "## {ANSWER}\n")?;
    writeln!(
        markdown,
        "On {}, per record: the cheapest to decode and to encode (the first rank: formats joined by \
         = are those a rerun could order either way), the fewest bytes encoded and after zstd, and \
         the front of round-trip time against bytes (nothing else is both faster and smaller). Typed \
         arms where the payload has them, else dynamic.\n",
        escape::markdown(&host.label)
    )?;
    let names = |labels: Vec<&str>| labels.into_iter().map(code).collect::<Vec<_>>().join(" = ");
    let timed = |placed: &[analysis::Placed]| {
        let first = analysis::Answer::first(placed);
        first.first().map_or("-".to_string(), |fastest| {
            format!(
                "{} {}",
                names(first.iter().map(|arm| arm.label.as_str()).collect()),
                fastest.time
            )
        })
    };
    let sized = |sized: &[analysis::Sized]| {
        let first = analysis::Answer::smallest(sized);
        first.first().map_or("-".to_string(), |smallest| {
            format!(
                "{} {}",
                names(first.iter().map(|codec| codec.label.as_str()).collect()),
                smallest.size
            )
        })
    };
    let rows: Vec<Vec<String>> = analysis
        .answers
        .iter()
        .map(|answer| {
            let front: Vec<String> = answer
                .front()
                .map(|point| format!("{} {}, {}", code(&point.label), point.time, point.size))
                .collect();
            let payload = match answer.mode.as_str() {
                "typed" => code(&answer.payload),
                mode => format!("{} ({mode})", code(&answer.payload)),
            };
            vec![
                payload,
                timed(&answer.decode),
                timed(&answer.encode),
                sized(&answer.bytes),
                sized(&answer.zstd),
                if front.is_empty() {
                    "-".to_string()
                } else {
                    front.join("; ")
                },
            ]
        })
        .collect();
    let header = [
        "payload",
        "decode",
        "encode",
        "bytes",
        "zstd bytes",
        "front (round trip, bytes)",
    ];
    markdown.push_str(&table(&header.map(String::from), &rows));
    Ok(())
}

/// A folder's label as Markdown: it holds the folder's name and system.
fn text(source: &Source) -> String {
    escape::markdown(&source.label)
}

fn write_hosts(markdown: &mut String, sources: &[Source]) -> Result<()> {
    writeln!(markdown, "## Hosts\n")?;
    let mut header = vec![String::new()];
    header.extend(sources.iter().map(|source| text(source)));
    let columns: [MetadataColumn; 11] = [
        ("host", |row| row.host.host.clone()),
        ("CPU", |row| row.host.cpu.clone()),
        ("cores", |row| row.host.cores.to_string()),
        ("OS", |row| row.host.os.clone()),
        ("system", |row| row.host.system.clone()),
        ("rustc", |row| row.host.rustc.clone()),
        ("commit", |row| row.host.commit.clone()),
        ("build", |row| row.host.build.clone()),
        ("environment", |row| row.host.environment.clone()),
        ("profile", |row| row.profile.clone()),
        ("run started", |row| row.timestamp.clone()),
    ];
    let mut rows: Vec<Vec<String>> = columns
        .iter()
        .map(|(name, column)| {
            let mut cells = vec![name.to_string()];
            cells.extend(
                sources
                    .iter()
                    .map(|source| source.dir.distinct(column).join(", "))
                    // Every column but the parsed number of cores is a string from the file.
                    .map(|cell| {
                        if *name == "cores" {
                            cell
                        } else {
                            escape::markdown(&cell)
                        }
                    }),
            );
            cells
        })
        .collect();
    let mut folder = vec!["folder".to_string()];
    folder.extend(
        sources
            .iter()
            .map(|source| code(&source.dir.dir.display().to_string())),
    );
    rows.push(folder);
    let mut arms = vec!["arms".to_string()];
    arms.extend(sources.iter().map(|source| {
        let ok = source.dir.ok_rows().count();
        let failed = source.dir.rows.len() - ok;
        format!("{ok} measured, {failed} failed")
    }));
    rows.push(arms);
    markdown.push_str(&table(&header, &rows));
    Ok(())
}

/// The hosts a ranking counts (the measured ones, not the emulated), the first the reference.
fn ranked<'s, 'a>(sources: &'s [Source<'a>]) -> Vec<&'s Source<'a>> {
    sources.iter().filter(|source| !source.emulated).collect()
}

/// Each section's ranking on every measured host against the reference host's: rank agreement
/// (Kendall's tau over the arms both measured) and the pairs whose order flips with intervals
/// that overlap on neither host. Emulated folders are named and left out.
fn write_across_hosts(
    markdown: &mut String,
    sources: &[Source],
    analysis: &Analysis,
    sections: &std::collections::BTreeSet<(String, Operation)>,
) -> Result<()> {
    let ranked = ranked(sources);
    let emulated: Vec<String> = sources
        .iter()
        .filter(|source| source.emulated)
        .map(|source| {
            let machine = source
                .dir
                .distinct(|row| row.host.emulated_on().unwrap_or("").to_string());
            format!(
                "{} (run by an emulator on {})",
                text(source),
                escape::markdown(&machine.join(", "))
            )
        })
        .collect();
    if ranked.len() < 2 && emulated.is_empty() {
        return Ok(());
    }
    writeln!(
        markdown,
        "## Across hosts
"
    )?;
    if !emulated.is_empty() {
        writeln!(
            markdown,
            "Emulated, so its times are the emulator's and count in no ranking, verdict or \
             `vs fastest`: {}. Its rows still prove every round trip on that architecture, and its \
             sizes are checked against the others'.\n",
            emulated.join("; ")
        )?;
    }
    let Some((reference, others)) = ranked.split_first().filter(|(_, others)| !others.is_empty()) else {
        writeln!(
            markdown,
            "Fewer than two measured hosts: no ranking to compare.\n"
        )?;
        return Ok(());
    };
    writeln!(
        markdown,
        "Does a section's ranking hold on another host? τ is Kendall's rank correlation of the \
         arms' times per record against {} (1: the same order, 0: unrelated, -1: reversed); a \
         flip is a pair of arms each host orders surely (their intervals do not overlap) and the \
         two hosts order oppositely. The flips are listed in their sections.\n",
        text(reference)
    )?;
    let mut header: Vec<String> = ["payload", "op", ">arms"].map(String::from).to_vec();
    for other in others {
        header.push(format!(">τ {}", text(other)));
        header.push(format!(">flips {}", text(other)));
    }
    let mut rows = Vec::new();
    let (mut flipped_sections, mut compared, mut reference_only) = (0, 0, 0);
    for (payload, operation) in sections {
        let first = reference.section_intervals(payload, operation.name());
        if first.len() < 2 {
            continue;
        }
        let mut row = vec![
            escape::markdown(payload),
            operation.name().to_string(),
            first.len().to_string(),
        ];
        let key = (payload.clone(), operation.name().to_string());
        let Some(agreements) = analysis.agreements.get(&key) else {
            continue;
        };
        let (mut any_flip, mut any_tau) = (false, false);
        for agreement in agreements {
            any_flip |= !agreement.flips.is_empty();
            any_tau |= agreement.tau.is_some();
            row.push(optional(agreement.tau, |tau| format!("{tau:.2}")));
            row.push(agreement.flips.len().to_string());
        }
        if !any_tau {
            reference_only += 1;
            continue;
        }
        compared += 1;
        flipped_sections += usize::from(any_flip);
        rows.push(row);
    }
    if !rows.is_empty() {
        markdown.push_str(&table(&header, &rows));
    }
    writeln!(
        markdown,
        "{flipped_sections} of {compared} sections have a pair of arms whose order flips between \
         hosts{}.\n",
        match reference_only {
            0 => String::new(),
            count => format!(
                "; {count} other sections of {} share fewer than two arms with every other host, \
                 so have no τ",
                text(reference)
            ),
        }
    )?;
    Ok(())
}

/// The section's flips between the reference host and each other measured host, as list items.
fn flip_lines(sources: &[Source], analysis: &Analysis, payload: &str, operation: &str) -> Vec<String> {
    let ranked = ranked(sources);
    let Some((reference, others)) = ranked.split_first() else {
        return Vec::new();
    };
    let Some(agreements) = analysis
        .agreements
        .get(&(payload.to_string(), operation.to_string()))
    else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (other, RankAgreement { flips, .. }) in others.iter().zip(agreements) {
        for flip in flips {
            let span = |interval: &Interval| {
                format!(
                    "{} [{}, {}]",
                    ns(interval.mean),
                    ns(interval.low),
                    ns(interval.high)
                )
            };
            lines.push(format!(
                "- {} is faster than {} on {} ({} against {} ns per record), slower on {} ({} against {})",
                code(&flip.faster_first.label()),
                code(&flip.slower_first.label()),
                text(reference),
                span(&flip.first.0),
                span(&flip.first.1),
                text(other),
                span(&flip.second.0),
                span(&flip.second.1),
            ));
        }
    }
    lines
}

/// Every (payload, operation) of the folders' rows, once each.
fn sections(dirs: &[ResultsDir]) -> std::collections::BTreeSet<(String, Operation)> {
    dirs.iter()
        .flat_map(|dir| dir.rows.iter())
        .map(|row| (row.arm.codec.payload.clone(), row.arm.operation))
        .collect()
}

/// How precise the figures are, per folder: the median (and 90th percentile) half-width of the
/// arms' own intervals, and of their ratios to their section's fastest arm, unpaired and, where
/// the folder kept its workers, paired. What a user compares is the ratio; on a machine whose
/// speed drifts from worker to worker the paired ratio is the narrower one.
fn write_precision(
    markdown: &mut String,
    sources: &[Source],
    sections: &std::collections::BTreeSet<(String, Operation)>,
) -> Result<()> {
    let median_and_p90 = |halves: &[f64]| match halves.is_empty() {
        true => "-".to_string(),
        false => format!(
            "±{:.1}% (±{:.1}%)",
            crate::stats::percentile(halves, 0.5) * 100.0,
            crate::stats::percentile(halves, 0.9) * 100.0
        ),
    };
    let mut rows = vec![
        vec!["arm's time per record".to_string()],
        vec!["its ratio to the section's fastest arm, unpaired".to_string()],
        vec!["the same ratio, paired over workers".to_string()],
        vec!["A/A: sections whose reference against its twin held 1.00".to_string()],
        vec!["A/A across code layouts: sections whose reference held 1.00".to_string()],
        vec!["arms measured while the machine was busy".to_string()],
    ];
    let mut failed_checks = Vec::new();
    for source in sources {
        let own: Vec<f64> = source
            .dir
            .ok_rows()
            .filter_map(ResultRow::relative_half_width)
            .collect();
        let (mut unpaired, mut paired) = (Vec::new(), Vec::new());
        for (payload, operation) in sections {
            let section = source.versus_fastest(payload, operation.name());
            for ratio in section.iter().flat_map(|section| section.ratios.values()) {
                unpaired.push((ratio.ci95_high - ratio.ci95_low) / (2.0 * ratio.ratio));
                if let (Some(value), Some(low), Some(high)) =
                    (ratio.paired_ratio, ratio.paired_low, ratio.paired_high)
                {
                    paired.push((high - low) / (2.0 * value));
                }
            }
        }
        rows[0].push(median_and_p90(&own));
        rows[1].push(median_and_p90(&unpaired));
        rows[2].push(match source.workers {
            None => "- (no samples.csv)".to_string(),
            Some(_) => median_and_p90(&paired),
        });
        let samples = source.dir.samples.as_deref();
        let mut check_cell = |checks: Vec<ratios::SelfCheck>, missing: &str, across_layouts: bool| {
            match ratios::SelfCheckSummary::of(&checks) {
                None => missing.to_string(),
                Some(summary) => {
                    if !summary.passed() {
                        let sentence = match across_layouts {
                            true => summary.layouts_sentence(),
                            false => summary.sentence(),
                        };
                        failed_checks.push(format!("- **{}**: {sentence}", text(source)));
                    }
                    format!(
                        "{} of {} ({:.0}%), ±{:.1}%",
                        summary.held,
                        summary.sections,
                        100.0 * summary.held as f64 / summary.sections as f64,
                        100.0 * summary.median_half_width
                    )
                }
            }
        };
        let twins = samples.map(ratios::self_checks).unwrap_or_default();
        rows[3].push(check_cell(twins, "- (no twins in samples.csv)", false));
        let layouts = samples.map(ratios::layout_checks).unwrap_or_default();
        rows[4].push(check_cell(layouts, "- (one code layout)", true));
        let recorded: Vec<crate::busy::Busy> = source.dir.rows.iter().filter_map(ResultRow::busy).collect();
        let busy = recorded.iter().filter(|busy| busy.was_busy()).count();
        rows[5].push(match recorded.is_empty() {
            true => "- (not recorded)".to_string(),
            false => format!("{busy} of {}", recorded.len()),
        });
    }
    writeln!(markdown, "## Precision\n")?;
    writeln!(
        markdown,
        "Median (90th percentile) half-width of the 95% intervals. A ratio to the fastest arm of \
         the same payload, operation and mode (typed, borrowed and dynamic decodes are different \
         jobs) is what the sections' `vs fastest` column shows: paired, \
         it is the geometric mean of the per-worker ratios with a t interval over the workers that \
         measured both arms, so a worker that ran slow as a whole slows both and cancels. The A/A \
         row: in every worker each section's reference arm took its turns beside a second copy of \
         itself; with right intervals about 95% of those ratios' intervals hold 1. Busy: a load \
         average more than half a task above serbench's own, or over 1% of CPU time stolen.\n"
    )?;
    writeln!(
        markdown,
        "The sections' `rank` column places the arms of one payload, operation and mode by \
         time. An arm shares the rank of the arm that opened it (written `=1`) when their ratio, \
         paired as `vs fastest` is, is a tie: its 95% interval holds 1 or lies inside ±{}%, the \
         shift a code layout alone makes; the next rank counts every arm before it (=1, =1, 3).\n",
        super::verdict::percent(crate::stats::LAYOUT_SPREAD)
    )?;
    let mut header = vec![String::new()];
    header.extend(sources.iter().map(|source| format!(">{}", text(source))));
    markdown.push_str(&table(&header, &rows));
    if !failed_checks.is_empty() {
        writeln!(markdown, "\n{}", failed_checks.join("\n"))?;
    }
    Ok(())
}

/// What a headline ratio compares: comparison, payload, operation, numerator, denominator.
type RatioKey = (String, String, Operation, String, String);

/// Every headline ratio of the measured folders, in first-seen order, with one cell per folder.
/// Every headline ratio in first-seen order, and its cell per folder (by the folder's index).
type HeadlineCells = (Vec<RatioKey>, BTreeMap<(RatioKey, usize), String>);

fn headline_cells(sources: &[Source]) -> HeadlineCells {
    let mut order: Vec<RatioKey> = Vec::new();
    let mut cells: BTreeMap<(RatioKey, usize), String> = BTreeMap::new();
    for (index, source) in sources.iter().enumerate().filter(|(_, source)| !source.emulated) {
        for ratio in ratios::headline(&source.dir.rows, source.dir.samples.as_deref()) {
            let key = (
                ratio.comparison.clone(),
                ratio.payload.clone(),
                ratio.operation,
                ratio.numerator.clone(),
                ratio.denominator.clone(),
            );
            if !order.contains(&key) {
                order.push(key.clone());
            }
            cells.insert((key, index), ratio_cell(&ratio));
        }
    }
    (order, cells)
}

/// How to read the headline ratios, said once; each payload's own open its section
/// ([`write_payload_headline`]).
fn write_headline(markdown: &mut String, headline: &HeadlineCells) -> Result<()> {
    writeln!(markdown, "## Headline ratios\n")?;
    if headline.0.is_empty() {
        writeln!(
            markdown,
            "No headline ratio: the results lack the pairs of arms they compare (e.g. Avro and JSON \
             NDJSON decode of one payload).\n"
        )?;
        return Ok(());
    }
    writeln!(
        markdown,
        "Each payload's section opens with its headline ratios: time per record of the first arm \
         over the second, recomputed from results.csv; below 1 means the first arm is faster. In \
         brackets an approximate 95% interval from the two arms' own intervals. Where the run kept \
         its workers (samples.csv), *paired* is the interval over the workers that measured both \
         arms, in which noise the two share inside a worker cancels. ≈ marks a ratio whose \
         interval (the paired one where there is one) holds 1: the two arms cannot be told apart.\n"
    )?;
    Ok(())
}

/// One payload's headline ratios, one column per folder.
fn write_payload_headline(
    markdown: &mut String,
    sources: &[Source],
    (order, cells): &HeadlineCells,
    payload: &str,
) -> Result<()> {
    let keys: Vec<&RatioKey> = order.iter().filter(|key| key.1 == payload).collect();
    if keys.is_empty() {
        return Ok(());
    }
    writeln!(markdown, "### {}: headline ratios\n", escape::markdown(payload))?;
    let mut header: Vec<String> = ["comparison", "op", "arms"].map(String::from).to_vec();
    header.extend(sources.iter().map(|source| text(source)));
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|key| {
            let (comparison, _, operation, numerator, denominator) = key;
            let mut row = vec![
                escape::markdown(comparison),
                operation.name().to_string(),
                format!("{} / {}", code(numerator), code(denominator)),
            ];
            row.extend(sources.iter().enumerate().map(|(index, source)| {
                match cells.get(&((*key).clone(), index)) {
                    _ if source.emulated => "(emulated)".to_string(),
                    Some(cell) => cell.clone(),
                    None => "-".to_string(),
                }
            }));
            row
        })
        .collect();
    markdown.push_str(&table(&header, &rows));
    Ok(())
}

/// The chart file name of a section. Names of `[a-z0-9-]` are kept as they are; any other name
/// has its other characters replaced by `_` and its FNV-1a hash appended, so two payloads
/// (`data:注文`, `data:顧客`; `a|b`, `a_b`; `A`, `a` on a case-blind disk) never share a chart.
fn file_name(parts: &[&str]) -> String {
    let joined = parts.join("-");
    if joined
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return format!("{joined}.svg");
    }
    let stem: String = joined
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = joined.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{stem}-{hash:016x}.svg")
}

/// The zero-copy formats of one payload side by side (the first folder's figures): for every
/// backend with an in-place arm (access-all, access-partial, update), those arms and its decode
/// in one chart, so reading in place can be weighed against decoding on the same bytes.
fn write_zero_copy_section(
    markdown: &mut String,
    charts: &mut Vec<RenderedChart>,
    sources: &[Source],
    payload: &str,
) -> Result<()> {
    const IN_PLACE: [Operation; 3] = [Operation::AccessAll, Operation::AccessPartial, Operation::Update];
    let Some(source) = sources.first() else {
        return Ok(());
    };
    let zero_copy: Vec<&CodecId> = source
        .by_arm
        .keys()
        .filter(|arm| arm.codec.payload == payload && IN_PLACE.contains(&arm.operation))
        .map(|arm| &arm.codec)
        .collect();
    let mut arms: Vec<(&ArmId, &ResultRow)> = source
        .by_arm
        .iter()
        .filter(|(arm, row)| {
            row.status == STATUS_OK
                && zero_copy.contains(&&arm.codec)
                && arm.mode == crate::arm::Mode::Typed
                && (arm.operation == Operation::Decode || IN_PLACE.contains(&arm.operation))
        })
        .map(|(arm, row)| (arm, *row))
        .collect();
    if arms.is_empty() {
        return Ok(());
    }
    arms.sort_by_key(|(arm, _)| (arm.operation, arm.codec.clone()));
    let payload_text = escape::markdown(payload);
    writeln!(
        markdown,
        "### {payload_text}: zero-copy access, update and decode
"
    )?;
    writeln!(
        markdown,
        "Every format that reads in place, on the same fields (docs/results.md, zero-copy formats): its \
         access of every field and of the routing fields, its in-place update of one scalar, and \
         its decode into the owned model, time per record ({}).\n",
        text(source)
    )?;
    let bars: Vec<Option<Bar>> = arms
        .iter()
        .map(|(_, row)| {
            let records = row.records as f64;
            Some(Bar {
                value: row.ns_per_record?,
                interval: Some((row.ci95_low_ns? / records, row.ci95_high_ns? / records)),
            })
        })
        .collect();
    let chart = BarChart {
        title: format!("{payload}: zero-copy formats, time per record"),
        axis: "ns per record".to_string(),
        labels: arms
            .iter()
            .map(|(arm, _)| format!("{} {}", arm.operation.name(), arm.label()))
            .collect(),
        formats: arms.iter().map(|(arm, _)| arm.codec.format.clone()).collect(),
        baselines: vec![false; arms.len()],
        panels: vec![Panel {
            title: source.label.clone(),
            bars,
            failed: Vec::new(),
        }],
    };
    let file = file_name(&[payload, "zero-copy"]);
    writeln!(
        markdown,
        "![{payload_text}: zero-copy formats, ns per record with 95% intervals, lower is better]({CHARTS_DIR}/{file})\n"
    )?;
    let drawn = chart.panels[0].bars.iter().flatten().count();
    charts.push(RenderedChart {
        file_name: file,
        svg: charts::bar_chart(&chart)?,
        bars: drawn,
    });
    let header: Vec<String> = ["operation", "arm", ">ns/record", ">±%"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = arms
        .iter()
        .map(|(arm, row)| {
            vec![
                arm.operation.name().to_string(),
                code(&arm.label()),
                optional(row.ns_per_record, ns),
                optional(row.relative_half_width(), |half| format!("{:.1}", half * 100.0)),
            ]
        })
        .collect();
    markdown.push_str(&table(&header, &rows));
    Ok(())
}

fn write_timing_section(
    markdown: &mut String,
    charts: &mut Vec<RenderedChart>,
    sources: &[Source],
    analysis: &Analysis,
    payload: &str,
    operation: &str,
) -> Result<()> {
    let payload_text = escape::markdown(payload);
    writeln!(markdown, "### {payload_text} {operation}\n")?;
    let in_section = |key: &ArmId| key.codec.payload == payload && key.operation.name() == operation;
    let figures = |row: &ResultRow| -> Option<Bar> {
        if row.status != STATUS_OK {
            return None;
        }
        let records = row.records as f64;
        Some(Bar {
            value: row.ns_per_record?,
            interval: Some((row.ci95_low_ns? / records, row.ci95_high_ns? / records)),
        })
    };
    // Rows: arms measured on the first host, fastest first; then those only the second has...
    let mut arms: Vec<ArmId> = Vec::new();
    for source in sources {
        let mut measured: Vec<(&ArmId, f64)> = source
            .by_arm
            .iter()
            .filter(|(key, _)| in_section(key) && !arms.contains(key))
            .filter_map(|(key, row)| figures(row).map(|bar| (key, bar.value)))
            .collect();
        measured.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        arms.extend(measured.into_iter().map(|(key, _)| key.clone()));
    }
    if !arms.is_empty() {
        let panels: Vec<Panel> = sources
            .iter()
            .map(|source| Panel {
                title: source.label.clone(),
                bars: arms
                    .iter()
                    .map(|key| source.by_arm.get(key).and_then(|row| figures(row)))
                    .collect(),
                failed: arms
                    .iter()
                    .enumerate()
                    .filter(|(_, key)| source.by_arm.get(*key).is_some_and(|row| row.status != STATUS_OK))
                    .map(|(row, _)| row)
                    .collect(),
            })
            .collect();
        let chart = BarChart {
            title: format!("{payload} {operation}: time per record"),
            axis: "ns per record".to_string(),
            labels: arms.iter().map(ArmId::label).collect(),
            formats: arms.iter().map(|key| key.codec.format.clone()).collect(),
            baselines: arms.iter().map(ArmId::is_baseline).collect(),
            panels,
        };
        let bars = chart
            .panels
            .iter()
            .map(|panel| panel.bars.iter().flatten().count())
            .sum();
        let file = file_name(&[payload, operation]);
        writeln!(
            markdown,
            "![{payload_text} {operation}: ns per record with 95% intervals, lower is better]({CHARTS_DIR}/{file})\n"
        )?;
        charts.push(RenderedChart {
            file_name: file,
            svg: charts::bar_chart(&chart)?,
            bars,
        });
    }

    let several = sources.len() > 1;
    let mut header: Vec<String> = vec![">rank".into(), "arm".into()];
    if several {
        header.push("host".into());
    }
    header.extend(
        [
            ">ns/record",
            "95% CI",
            ">±",
            ">n (reps)",
            ">encoded bytes",
            ">allocs/op",
        ]
        .map(String::from),
    );
    header.push(">vs fastest [95% CI]".into());
    if several {
        // Host against host, arm by arm: how much slower or faster than the first folder.
        header.push(format!(">vs {} [95% CI]", text(&sources[0])));
    }
    let versus_fastest: Vec<Option<&VersusFastest>> = sources
        .iter()
        .map(|source| source.versus_fastest(payload, operation))
        .collect();
    let mut unpaired = false;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for key in &arms {
        let reference = sources[0].by_arm.get(key).filter(|row| row.status == STATUS_OK);
        for (source, versus_fastest) in sources.iter().zip(&versus_fastest) {
            let Some(row) = source.by_arm.get(key) else {
                continue;
            };
            if row.status != STATUS_OK {
                continue;
            }
            let records = row.records as f64;
            let baseline = if key.is_baseline() { " (baseline)" } else { "" };
            let mut cells = vec![
                match source.emulated {
                    true => "(emulated)".to_string(),
                    false => optional(source.ranks.get(key), ToString::to_string),
                },
                format!("{}{baseline}", code(&key.label())),
            ];
            if several {
                cells.push(text(source));
            }
            cells.extend([
                optional(row.ns_per_record, ns),
                match (row.ci95_low_ns, row.ci95_high_ns) {
                    (Some(low), Some(high)) => format!("[{}, {}]", ns(low / records), ns(high / records)),
                    _ => "-".to_string(),
                },
                optional(row.relative_half_width(), |fraction| {
                    format!("{:.1}%", fraction * 100.0)
                }),
                optional(row.reps, |reps| reps.to_string()),
                optional(row.encoded_bytes, |bytes| bytes.to_string()),
                optional(row.allocs_per_op, super::table::count),
                match versus_fastest {
                    _ if source.emulated => "(emulated)".to_string(),
                    Some(section) if section.fastest.contains(key) => "fastest".to_string(),
                    Some(section) => match section.ratios.get(key) {
                        Some(ratio) => {
                            let (cell, paired) = fastest_cell(ratio);
                            unpaired |= !paired;
                            cell
                        }
                        None => "-".to_string(),
                    },
                    None => "-".to_string(),
                },
            ]);
            if several {
                // Two hosts' runs are independent: the interval is the unpaired one.
                cells.push(
                    match reference.and_then(|reference| ratios::ratio_of(row, reference)) {
                        _ if source.emulated => "(emulated)".to_string(),
                        Some(_) if std::ptr::eq(source, &sources[0]) => "1.00x".to_string(),
                        Some((ratio, low, high)) => ratio_interval(ratio, low, high),
                        None => "-".to_string(),
                    },
                );
            }
            rows.push(cells);
        }
    }
    for source in sources {
        for (key, row) in &source.by_arm {
            if in_section(key) && row.status != STATUS_OK {
                failed.push(format!(
                    "- {} failed on {}: {}",
                    code(&key.label()),
                    text(source),
                    escape::markdown(&row.note)
                ));
            }
        }
    }
    if !rows.is_empty() {
        markdown.push_str(&table(&header, &rows));
        if unpaired {
            writeln!(
                markdown,
                "`vs fastest` marked * is unpaired, from the two arms' own intervals (the \
                 folder has no samples.csv, or no two of its workers measured both arms).\n"
            )?;
        }
    }
    let flips = flip_lines(sources, analysis, payload, operation);
    if !flips.is_empty() {
        writeln!(
            markdown,
            "Order flips between hosts (intervals apart on both):\n\n{}\n",
            flips.join("\n")
        )?;
    }
    if arms.iter().any(ArmId::is_baseline) {
        writeln!(
            markdown,
            "A baseline (grey bar) times only the copy of the input a decoder makes, not a decode; \
             it is never counted as the fastest.\n"
        )?;
    }
    if !failed.is_empty() {
        writeln!(markdown, "Not measured:\n\n{}\n", failed.join("\n"))?;
    }
    Ok(())
}

fn write_sizes_section(
    markdown: &mut String,
    charts: &mut Vec<RenderedChart>,
    payload: &str,
    rows: &[&SizeRow],
) -> Result<()> {
    let payload_text = escape::markdown(payload);
    writeln!(markdown, "### {payload_text} sizes\n")?;
    let mut measured: Vec<&SizeRow> = rows
        .iter()
        .copied()
        .filter(|row| row.status == STATUS_OK && row.encoded_bytes.is_some())
        .collect();
    measured.sort_by_key(|row| (row.encoded_bytes, row.codec.clone()));
    let zstd = compressor_label("zstd", measured.iter().map(|row| i64::from(row.zstd_level)));
    let zlib = compressor_label("zlib", measured.iter().map(|row| i64::from(row.zlib_level)));
    if !measured.is_empty() {
        let chart = SizeChart {
            title: format!("{payload}: encoded size"),
            labels: measured.iter().map(|row| row.codec.label()).collect(),
            formats: measured.iter().map(|row| row.codec.format.clone()).collect(),
            encoded: measured
                .iter()
                .map(|row| row.encoded_bytes.unwrap_or_default() as f64)
                .collect(),
            compressed: measured
                .iter()
                .map(|row| row.zstd_bytes.map(|bytes| bytes as f64))
                .collect(),
            compressed_label: zstd.clone(),
        };
        let bars = measured.len() + measured.iter().filter(|row| row.zstd_bytes.is_some()).count();
        let file = file_name(&[payload, "sizes"]);
        writeln!(
            markdown,
            "![{payload_text}: encoded and {zstd} bytes, lower is better]({CHARTS_DIR}/{file})\n"
        )?;
        charts.push(RenderedChart {
            file_name: file,
            svg: charts::size_chart(&chart)?,
            bars,
        });
    }
    let header: Vec<String> = [
        "arm",
        ">encoded bytes",
        ">bytes/record",
        &format!(">{zstd} bytes"),
        ">zstd bytes/record",
        &format!(">{zlib} bytes"),
        ">zlib bytes/record",
        ">% of JSON",
    ]
    .map(String::from)
    .to_vec();
    let cells: Vec<Vec<String>> = measured
        .iter()
        .map(|row| {
            vec![
                code(&row.codec.label()),
                optional(row.encoded_bytes, |bytes| bytes.to_string()),
                optional(row.bytes_per_record, |bytes| format!("{bytes:.1}")),
                optional(row.zstd_bytes, |bytes| bytes.to_string()),
                optional(row.zstd_bytes_per_record, |bytes| format!("{bytes:.1}")),
                optional(row.zlib_bytes, |bytes| bytes.to_string()),
                optional(row.zlib_bytes_per_record, |bytes| format!("{bytes:.1}")),
                optional(row.ratio_to_json, |ratio| format!("{:.1}%", ratio * 100.0)),
            ]
        })
        .collect();
    if !cells.is_empty() {
        markdown.push_str(&table(&header, &cells));
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|row| row.status != STATUS_OK)
        .map(|row| format!("- {}: {}", code(&row.codec.label()), escape::markdown(&row.note)))
        .collect();
    if !failed.is_empty() {
        writeln!(markdown, "Not measured:\n\n{}\n", failed.join("\n"))?;
    }
    Ok(())
}

/// `name level N` when every row used level N, else the name alone.
fn compressor_label(name: &str, levels: impl Iterator<Item = i64>) -> String {
    let mut levels: Vec<i64> = levels.collect();
    levels.sort();
    levels.dedup();
    match levels.as_slice() {
        [level] => format!("{name} level {level}"),
        _ => name.to_string(),
    }
}

/// `1.12x [1.08, 1.16]`, `≈` when the interval that decides (paired where there is one) holds
/// 1, then the paired interval when there is one.
fn ratio_cell(ratio: &ratios::Ratio) -> String {
    let overlap = if ratio.holds_one { " ≈" } else { "" };
    let mut cell = ratio_interval(ratio.ratio, ratio.ci95_low, ratio.ci95_high) + overlap;
    if let (Some(paired), Some(low), Some(high), Some(workers)) = (
        ratio.paired_ratio,
        ratio.paired_low,
        ratio.paired_high,
        ratio.paired_workers,
    ) {
        cell += &format!(
            "; paired {} ({workers} workers)",
            ratio_interval(paired, low, high)
        );
    }
    cell
}

/// README's headline table (`serbench ratio DIR --headline --markdown`): each ratio's arms,
/// payload and operation, then its unpaired interval and its paired one with the workers,
/// written as the report writes them (≈ as in [`ratio_cell`]).
pub fn headline_table(ratios: &[ratios::Ratio]) -> String {
    let interval = ratio_interval;
    let header = [
        "comparison",
        "payload, op",
        ">ratio [95% CI, unpaired]",
        ">paired [95% CI] (workers)",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = ratios
        .iter()
        .map(|ratio| {
            let overlap = if ratio.holds_one { " ≈" } else { "" };
            let paired = match (
                ratio.paired_ratio,
                ratio.paired_low,
                ratio.paired_high,
                ratio.paired_workers,
            ) {
                (Some(paired), Some(low), Some(high), Some(workers)) => {
                    format!("{} ({workers})", interval(paired, low, high))
                }
                _ => "-".to_string(),
            };
            vec![
                format!("{} / {}", code(&ratio.numerator), code(&ratio.denominator)),
                format!("{} {}", escape::markdown(&ratio.payload), ratio.operation.name()),
                interval(ratio.ratio, ratio.ci95_low, ratio.ci95_high) + overlap,
                paired,
            ]
        })
        .collect();
    table(&header, &rows)
}

/// An arm over its section's fastest arm: the paired ratio and interval when there is one
/// (and `true`), else the unpaired ones marked `*` (and `false`).
fn fastest_cell(ratio: &ratios::Ratio) -> (String, bool) {
    let interval = ratio_interval;
    let (quoted, paired) = ratio.quoted();
    let cell = interval(quoted.ratio, quoted.low, quoted.high);
    (if paired { cell } else { cell + " *" }, paired)
}

fn optional<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "-".to_string(), show)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::Named;
    use proptest::prelude::*;
    use proptest::test_runner::Config;

    #[test]
    fn table_aligns_numeric_columns_right_and_keeps_escaped_pipes() {
        let text = table(
            &["arm".into(), ">ns".into()],
            &[vec![escape::markdown("a|b"), "1.0".into()]],
        );
        assert_eq!(text, "| arm  |  ns |\n| ---- | --: |\n| a\\|b | 1.0 |\n\n");
    }

    #[test]
    fn nanoseconds_keep_three_significant_digits_at_least() {
        assert_eq!(ns(3000.0), "3000.0");
        assert_eq!(ns(12.345), "12.3");
        assert_eq!(ns(1.2345), "1.23");
        assert_eq!(ns(0.12345), "0.123");
    }

    #[test]
    fn small_ratios_keep_two_significant_digits() {
        assert_eq!(crate::report::text::ratio_text(0.3125), "0.31");
        assert_eq!(crate::report::text::ratio_text(1.0), "1.00");
        assert_eq!(crate::report::text::ratio_text(0.0432), "0.043");
        assert_eq!(crate::report::text::ratio_text(0.000_412), "0.00041");
    }

    #[test]
    fn readmes_headline_table_has_both_intervals_and_marks_one_held() {
        let ratio =
            |numerator: &str, interval: [f64; 3], paired: Option<[f64; 3]>, holds_one| ratios::Ratio {
                numerator: numerator.to_string(),
                denominator: "flatbuffers/flatbuffers".to_string(),
                payload: "order".to_string(),
                operation: Operation::AccessPartial,
                ratio: interval[0],
                ci95_low: interval[1],
                ci95_high: interval[2],
                holds_one,
                paired_ratio: paired.map(|paired| paired[0]),
                paired_low: paired.map(|paired| paired[1]),
                paired_high: paired.map(|paired| paired[2]),
                paired_workers: paired.map(|_| 7),
                ..ratios::Ratio::default()
            };
        let text = headline_table(&[
            ratio(
                "rkyv/rkyv",
                [0.0853, 0.0762, 0.0956],
                Some([0.0813, 0.0796, 0.0830]),
                false,
            ),
            ratio("capnp/capnp", [0.98, 0.9, 1.07], None, true),
        ]);
        assert_eq!(
            text,
            "| comparison                                | payload, op          | ratio [95% CI, unpaired] | paired [95% CI] (workers) |\n\
             | ----------------------------------------- | -------------------- | -----------------------: | ------------------------: |\n\
             | `rkyv/rkyv` / `flatbuffers/flatbuffers`   | order access-partial |    0.085x [0.076, 0.096] | 0.081x [0.080, 0.083] (7) |\n\
             | `capnp/capnp` / `flatbuffers/flatbuffers` | order access-partial |     0.98x [0.90, 1.07] ≈ |                         - |\n\n"
        );
    }

    #[test]
    fn the_contents_link_every_section_by_its_anchor() {
        let markdown = "# t\n\nintro\n\n## Hosts\n\n## data:canada\n\n### x\n\n## Robustness: x86_64-linux (a b)\n\n## Hosts\n";
        let with = with_contents(markdown);
        assert!(
            with.starts_with(
                "# t\n\nintro\n\n## Contents\n\n- [Hosts](#hosts)\n- [data:canada](#datacanada)\n"
            ),
            "{with}"
        );
        assert!(with.contains("- [Robustness: x86_64-linux (a b)](#robustness-x86_64-linux-a-b)\n- [Hosts](#hosts-1)\n\n## Hosts"), "{with}");
    }

    #[test]
    fn chart_file_names_are_safe() {
        assert_eq!(file_name(&["map-small", "decode"]), "map-small-decode.svg");
        let names: Vec<String> = [["data:注文", "decode"], ["data:顧客", "decode"]]
            .iter()
            .chain(&[["a|b", "x"], ["a_b", "x"], ["A", "x"], ["a", "x"]])
            .map(|parts| file_name(parts))
            .collect();
        let distinct: std::collections::BTreeSet<String> =
            names.iter().map(|name| name.to_lowercase()).collect();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        assert!(
            names.iter().all(|name| name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')),
            "{names:?}"
        );
        assert!(names[0].starts_with("data___-decode-"), "{names:?}");
    }

    /// Two arms of one section measured by the same four workers, the second twice the first
    /// in every worker while whole workers run at 0.8x to 1.5x speed: the arms' own intervals
    /// are wide, their ratio paired over workers is 2 with a narrow interval.
    fn two_arms_four_workers(samples: bool) -> ResultsDir {
        let fast = ArmId::typed("postcard", "postcard", "", "order", Operation::Decode);
        let slow = ArmId::typed("bincode", "bincode", "", "order", Operation::Decode);
        let speeds = [1.0, 1.5, 0.8, 1.2];
        let mut rows = Vec::new();
        let mut sample_rows = Vec::new();
        for (arm, cost, noise) in [(&fast, 100.0, 0.001), (&slow, 200.0, -0.001)] {
            let means: Vec<f64> = speeds
                .iter()
                .enumerate()
                .map(|(worker, speed)| cost * speed * (1.0 + noise * worker as f64))
                .collect();
            let summary = crate::stats::Summary::of(&means);
            rows.push(ResultRow {
                schema_version: crate::schema::SCHEMA_VERSION,
                arm: arm.clone(),
                records: 1,
                status: STATUS_OK.into(),
                mean_ns: Some(summary.mean),
                ci95_low_ns: Some(summary.mean - summary.half_width),
                ci95_high_ns: Some(summary.mean + summary.half_width),
                ns_per_record: Some(summary.mean),
                ..ResultRow::default()
            });
            for (pass, mean) in means.into_iter().enumerate() {
                sample_rows.push(crate::schema::samples::SampleRow {
                    arm: arm.clone(),
                    records: 1,
                    pass,
                    mean_ns: Some(mean),
                    status: STATUS_OK.into(),
                    ..Default::default()
                });
            }
        }
        ResultsDir {
            dir: PathBuf::from("run"),
            results_path: PathBuf::from("run/results.csv"),
            rows,
            sizes: None,
            robustness: None,
            samples: samples.then_some(sample_rows),
            footprint: None,
            instructions: None,
            evolution: None,
        }
    }

    #[test]
    fn vs_fastest_is_paired_over_workers_where_the_run_kept_them() {
        let paired = render(&[two_arms_four_workers(true)]).unwrap().markdown;
        // A line by its start, its padding squeezed.
        let line = |markdown: &str, start: &str| -> String {
            squeezed_lines(markdown)
                .find(|line| line.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start:?} in\n{markdown}"))
        };
        // Rank 2: paired, 1.99 [1.99, 2.00] is far from a tie.
        let slow = line(&paired, "| 2 | `bincode/bincode`");
        // The per-worker ratios are 2.000, 1.996, 1.992 and 1.988: a t interval over four
        // workers of ±0.41% around 1.994, whatever speed each worker ran at.
        assert!(
            slow.contains("1.99x [1.99, 2.00]") && !slow.contains('*'),
            "{slow}"
        );
        assert!(
            line(&paired, "| 1 | `postcard/postcard`").contains("fastest"),
            "{paired}"
        );
        let precision = line(&paired, "| the same ratio, paired over workers");
        assert!(precision.contains("±0.4% (±0.4%)"), "{precision}");
        // Unpaired, the workers' speeds (0.8x to 1.5x) are in both arms' intervals.
        let unpaired_precision = line(&paired, "| its ratio to the section's fastest arm, unpaired");
        let first_percent = |cell: &str| -> f64 {
            let after = cell.split('±').nth(1).expect("a half-width");
            after[..after.find('%').unwrap()].parse().unwrap()
        };
        assert!(first_percent(&unpaired_precision) > 30.0, "{unpaired_precision}");

        // Without samples.csv the same figures give only the unpaired ratio, marked and wide.
        let unpaired = render(&[two_arms_four_workers(false)]).unwrap().markdown;
        let slow = line(&unpaired, "| 2 | `bincode/bincode`");
        // The arms' own intervals (±42%) hold the workers' speeds, so the ratio's does too.
        assert!(slow.contains("1.99x [1.10, 3.62] *"), "{slow}");
        assert!(unpaired.contains("`vs fastest` marked * is unpaired, from the two arms' own intervals"));
        assert!(line(&unpaired, "| the same ratio, paired").contains("no samples.csv"));
    }

    /// One host's folder: four decodes of `order` with the given times per record (±1%), at
    /// commit `c1`, and one size row.
    fn host(name: &str, system: &str, environment: &str, times: [f64; 4], encoded: usize) -> ResultsDir {
        let rows = ["a", "b", "c", "d"]
            .into_iter()
            .zip(times)
            .map(|(format, time)| ResultRow {
                schema_version: crate::schema::SCHEMA_VERSION,
                arm: ArmId::typed(format, format, "", "order", Operation::Decode),
                host: crate::host::Host {
                    host: name.into(),
                    system: system.into(),
                    commit: "c1".into(),
                    environment: environment.into(),
                    ..Default::default()
                },
                records: 1,
                status: STATUS_OK.into(),
                mean_ns: Some(time),
                ci95_low_ns: Some(time * 0.99),
                ci95_high_ns: Some(time * 1.01),
                ns_per_record: Some(time),
                ..ResultRow::default()
            })
            .collect();
        let size = SizeRow {
            schema_version: crate::schema::SCHEMA_VERSION,
            codec: ArmId::typed("a", "a", "", "order", Operation::Decode).codec,
            records: 1,
            encoded_bytes: Some(encoded),
            status: STATUS_OK.into(),
            ..SizeRow::default()
        };
        ResultsDir {
            dir: PathBuf::from(name),
            results_path: PathBuf::from(name).join("results.csv"),
            rows,
            sizes: Some(vec![size]),
            robustness: None,
            samples: None,
            footprint: None,
            instructions: None,
            evolution: None,
        }
    }

    #[test]
    fn several_hosts_get_rank_agreement_flips_and_an_emulated_host_in_no_ranking() {
        let emulated = host(
            "qemu",
            "aarch64-linux",
            "direct emulated-on=x86_64",
            [9e3, 1e3, 5e3, 7e3],
            40,
        );
        // b and a swap surely on the second host; the emulated host, given first, reverses most.
        let dirs = [
            emulated,
            host("x86", "x86_64-linux", "direct", [100.0, 200.0, 300.0, 400.0], 40),
            host("arm", "aarch64-linux", "direct", [250.0, 150.0, 300.0, 400.0], 40),
        ];
        let markdown = render(&dirs).unwrap().markdown;
        let across = &markdown[markdown.find("## Across hosts").unwrap()..];
        let across = across.split_whitespace().collect::<Vec<_>>().join(" ");
        // Labels are Markdown-escaped text ([`escape::markdown`]): they render as written.
        assert!(
            across.contains(r"aarch64-linux \(qemu\) \(emulated\) (run by an emulator on x86\_64)"),
            "{across}"
        );
        // The reference is the first measured folder; τ over the four arms: (5 - 1) / 6.
        assert!(across.contains(r"against x86\_64-linux"), "{across}");
        assert!(across.contains("| order | decode | 4 | 0.67 | 1 |"), "{across}");
        assert!(across.contains("1 of 1 sections have a pair"), "{across}");
        assert!(
            markdown.contains(
                r"- `a/a` is faster than `b/b` on x86\_64-linux (100.0 [99.0, 101.0] against 200.0"
            ),
            "{markdown}"
        );
        // The emulated host's rows are shown, but ranked nowhere; the measured hosts' are.
        let rows_of = |host: &str| -> Vec<Vec<String>> {
            squeezed_lines(&markdown)
                .filter(|line| line.contains("| `") && line.contains(host))
                .map(|row| row.split('|').map(|cell| cell.trim().to_string()).collect())
                .collect()
        };
        let emulated_rows = rows_of(r"\(qemu\)");
        assert_eq!(emulated_rows.len(), 4, "{markdown}");
        for cells in &emulated_rows {
            assert_eq!(cells[1], "(emulated)", "{cells:?}");
            assert_eq!(
                cells[cells.len() - 3..],
                ["(emulated)", "(emulated)", ""],
                "{cells:?}"
            );
        }
        // x86: a 100, b 200, c 300, d 400, each ±1%: four ranks, in the table's order.
        let ranks: Vec<(String, String)> = rows_of(r"x86\_64-linux |")
            .into_iter()
            .map(|cells| (cells[1].clone(), cells[2].clone()))
            .collect();
        assert_eq!(
            ranks,
            [("1", "`a/a`"), ("2", "`b/b`"), ("3", "`c/c`"), ("4", "`d/d`")]
                .map(|(rank, arm)| (rank.to_string(), arm.to_string())),
            "{markdown}"
        );
        assert!(!markdown.contains("is faster than `c/c`"), "{markdown}");

        // Sizes of one commit must agree; of two commits they may differ, and the report says so.
        let mut other = host("arm", "aarch64-linux", "direct", [1.0; 4], 41);
        let error = render(&[dirs[1].clone(), other.clone()]).unwrap_err().to_string();
        assert!(
            error.contains("sizes differ between hosts at one commit (c1): order a/a is (Some(40)"),
            "{error}"
        );
        for row in &mut other.rows {
            row.host.commit = "c2".into();
        }
        let rendered = render(&[dirs[1].clone(), other]).unwrap();
        assert!(
            rendered
                .absent
                .iter()
                .any(|note| note.contains("differ between commits")),
            "{:?}",
            rendered.absent
        );
    }

    /// A borrowed decode is another job than a typed one: each mode has its own fastest arm, so
    /// a typed arm is never rated against a borrowed one (before, `a/a` read 2.50x here).
    #[test]
    fn vs_fastest_is_within_the_arms_mode() {
        let mut dir = host("x86", "x86_64-linux", "direct", [100.0, 200.0, 300.0, 40.0], 40);
        dir.rows[3].arm.mode = crate::arm::Mode::Borrowed;
        let markdown = render(&[dir]).unwrap().markdown;
        let cell = |label: &str, column: usize| {
            let line = squeezed_lines(&markdown)
                .find(|line| line.contains(&format!("| `{label}` |")))
                .unwrap_or_else(|| panic!("no {label} row in {markdown}"));
            line.split('|').map(str::trim).nth(column).unwrap().to_string()
        };
        let row = |label: &str| cell(label, 9);
        assert_eq!(row("a/a"), "fastest");
        assert_eq!(row("d/d borrowed"), "fastest");
        assert!(row("b/b").starts_with("2.00x"), "{}", row("b/b"));
        // Ranks too are within the mode: the borrowed decode is first of its own.
        let rank = |label: &str| cell(label, 1);
        assert_eq!(
            ["a/a", "b/b", "c/c", "d/d borrowed"].map(rank),
            ["1", "2", "3", "1"]
        );
    }

    /// The lines of `markdown` with their padding squeezed to single spaces.
    fn squeezed_lines(markdown: &str) -> impl Iterator<Item = String> + '_ {
        markdown
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// Ties share a rank in the section's table, and the Precision section says what a tie is.
    #[test]
    fn tied_arms_share_a_rank_written_with_an_equals_sign() {
        // a 100 and b 101 (±1%: the ratio's interval holds 1), then c 300, d 400.
        let dir = host("x86", "x86_64-linux", "direct", [100.0, 101.0, 300.0, 400.0], 40);
        let markdown = render(&[dir]).unwrap().markdown;
        let ranks: Vec<String> = squeezed_lines(&markdown)
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                (cells.len() > 9 && cells[2].starts_with('`')).then(|| format!("{} {}", cells[1], cells[2]))
            })
            .collect();
        assert_eq!(
            ranks,
            ["=1 `a/a`", "=1 `b/b`", "3 `c/c`", "4 `d/d`"],
            "{markdown}"
        );
        assert!(squeezed_lines(&markdown).any(|line| line.starts_with("| rank | arm |")));
        let said = markdown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            said.contains(&format!(
                "lies inside ±{}%, the shift a code layout alone makes",
                super::super::verdict::percent(crate::stats::LAYOUT_SPREAD)
            )),
            "{said}"
        );
    }

    #[test]
    fn a_run_whose_a_a_check_fails_says_so() {
        // Twenty sections whose reference's twin ran 5% slower in every worker: no interval
        // holds 1, which right intervals would do in about 19 of 20.
        let mut dir = two_arms_four_workers(true);
        let samples = dir.samples.as_mut().unwrap();
        let reference: Vec<_> = samples
            .iter()
            .filter(|sample| sample.arm.codec.format == "postcard")
            .cloned()
            .collect();
        samples.clear();
        for section in 0..20 {
            for sample in &reference {
                let mut twin = sample.clone();
                twin.arm.codec.payload = format!("data:p{section}");
                twin.twin_mean_ns = sample
                    .mean_ns
                    .map(|mean| mean * 1.05 * (1.0 + 0.001 * sample.pass as f64));
                samples.push(twin);
            }
        }
        let markdown = render(&[dir]).unwrap().markdown;
        let row = markdown
            .lines()
            .find(|line| line.starts_with("| A/A: sections"))
            .unwrap_or_else(|| panic!("no A/A row in\n{markdown}"));
        assert!(row.contains("0 of 20 (0%)"), "{row}");
        assert!(
            markdown.contains("- **run**: A/A check:") && markdown.contains("FAILED"),
            "{markdown}"
        );
        let passing = render(&[two_arms_four_workers(true)]).unwrap().markdown;
        assert!(passing.contains("no twins in samples.csv") && !passing.contains("FAILED"));
    }

    /// The values a hand-edited or corrupted file may hold where a figure belongs.
    fn hostile() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(0.0),
            Just(-1.0),
            Just(1e308),
            Just(1e-300),
            Just(f64::MIN_POSITIVE),
            any::<f64>(),
        ]
    }

    /// A plausible row, with its figures anywhere in their ranges (1e-2 to 1e15 ns), or one
    /// field of it replaced by a hostile value (a quarter of the rows).
    fn row() -> impl Strategy<Value = ResultRow> {
        (
            prop::sample::select(vec!["order", "readings", "vec-big"]),
            prop::sample::select(vec!["encode", "decode"]),
            prop::sample::select(vec!["postcard", "json", "bincode"]),
            prop::sample::select(vec![1usize, 50, 10_000]),
            any::<bool>(),
            -2.0..15.0f64,
            0.0..0.5f64,
            prop::option::weighted(0.25, (0..9usize, hostile())),
        )
            .prop_map(
                |(payload, operation, format, records, baseline, exponent, spread, damage)| {
                    let mean = 10f64.powf(exponent);
                    let mut row = ResultRow {
                        schema_version: crate::schema::SCHEMA_VERSION,
                        arm: ArmId::typed(
                            format,
                            format,
                            if baseline { crate::arm::COPY_ONLY } else { "" },
                            payload,
                            Operation::from_name(operation).unwrap(),
                        ),
                        records,
                        status: STATUS_OK.into(),
                        encoded_bytes: Some(100),
                        reps: Some(3),
                        mean_ns: Some(mean),
                        ci95_low_ns: Some(mean * (1.0 - spread)),
                        ci95_high_ns: Some(mean * (1.0 + spread)),
                        ns_per_record: Some(mean / records as f64),
                        records_per_s: Some(records as f64 * 1e9 / mean),
                        mb_per_s: Some(1e5 / mean),
                        allocs_per_op: Some(1.0),
                        alloc_bytes_per_op: Some(64.0),
                        ..ResultRow::default()
                    };
                    if let Some((field, value)) = damage {
                        match field {
                            0 => row.mean_ns = Some(value),
                            1 => row.ci95_low_ns = Some(value),
                            2 => row.ci95_high_ns = Some(value),
                            3 => row.ns_per_record = Some(value),
                            4 => row.records_per_s = Some(value),
                            5 => row.allocs_per_op = Some(value),
                            6 => row.records = 0,
                            7 => row.status = "odd".into(),
                            _ => row.mean_ns = None,
                        }
                    }
                    row
                },
            )
    }

    proptest! {
        #![proptest_config(Config { cases: 64, ..Config::default() })]

        /// Whatever numbers results.csv holds, load -> report ends (with a report or a refusal)
        /// within a bound per row: no hostile figure reaches plotters' axis code unchecked.
        #[test]
        fn load_and_report_end_on_any_rows(rows in prop::collection::vec(row(), 1..8)) {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("results.csv"), crate::files::to_csv(&rows).unwrap()).unwrap();
            let path = dir.path().to_path_buf();
            let (done, ended) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                // A report or a refusal: either ends the case.
                let _ = done.send(load::load(&path).and_then(|loaded| render(&[loaded])).is_ok());
            });
            let bound = std::time::Duration::from_secs(2) + rows.len() as u32 * std::time::Duration::from_millis(250);
            let outcome = ended.recv_timeout(bound);
            prop_assert!(outcome.is_ok(), "load -> report ran past {bound:?} on {rows:?}");
        }
    }
}

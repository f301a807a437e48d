//! `--history DIR...`: how far a ratio moves between sessions, and the prediction interval of a
//! rerun (docs/measurement.md, "Later runs").
//!
//! A ratio's 95% interval holds the spread a run draws (workers, layouts); a later session on the
//! same host and commit also moves with the host's state over hours, the session level. Earlier
//! result sets of that host, commit and build give its standard deviation σ_s on the log scale
//! ([`session_spread`]): per ratio held by two or more sets, the between-set variance of ln r less
//! the mean within-set variance (h/1.96)², pooled over the ratios with their degrees of freedom
//! as weights, floored at 0. A ratio r with log half-width h then predicts a rerun's estimate
//! within `r·exp(±1.96·sqrt(2σ_s² + 2(h/1.96)²))` ([`prediction`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;

use super::text::{code, ratio, ratio_bounds, table};
use crate::UsageError;
use crate::arm::Operation;
use crate::escape;
use crate::host::Host;
use crate::schema::load::{self, ResultsDir};
use crate::schema::ratios::{self, Ratio};
use crate::stats::{self, RatioInterval, SessionEstimate, SessionSpread, Z_975};

/// The fewest earlier result sets a session's spread is estimated from: one set shows no spread
/// between sessions.
pub const MIN_SETS: usize = 2;

/// σ_s from `groups`, each one ratio's quoted intervals in the sets that hold it, each
/// interval's within-set variance taken as (h/1.96)² ([`stats::session_spread`]). `None` when
/// no ratio has two intervals with finite half-widths.
pub fn session_spread(groups: &[Vec<RatioInterval>]) -> Option<SessionSpread> {
    let groups: Vec<Vec<SessionEstimate>> = groups
        .iter()
        .map(|group| {
            group
                .iter()
                .filter(|interval| interval.ratio > 0.0)
                .map(|interval| SessionEstimate {
                    log: interval.ratio.ln(),
                    variance: (interval.log_half_width() / Z_975).powi(2),
                })
                .collect()
        })
        .collect();
    stats::session_spread(&groups)
}

/// The 95% prediction interval of a rerun's estimate of a ratio quoted as `quoted`, with the
/// session spread `sigma`: the rerun's estimate less this one's has variance 2σ_s² + 2(h/1.96)²
/// on the log scale (the rerun's own within-run variance taken equal to this run's), so
/// `ratio·exp(±1.96·sqrt(2σ_s² + 2(h/1.96)²))`.
pub fn prediction(quoted: RatioInterval, sigma: f64) -> RatioInterval {
    let within = quoted.log_half_width() / Z_975;
    let half = Z_975 * (2.0 * sigma * sigma + 2.0 * within * within).sqrt();
    RatioInterval {
        ratio: quoted.ratio,
        low: quoted.ratio / half.exp(),
        high: quoted.ratio * half.exp(),
    }
}

/// What earlier sets must share with the set they predict: the host, the commit and the build
/// columns of results.csv (each the distinct values of its rows), and a name for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    pub name: String,
    pub host: Vec<String>,
    pub commit: Vec<String>,
    pub build: Vec<String>,
}

impl Identity {
    /// The columns of a result set's rows.
    pub fn of_set(dir: &ResultsDir) -> Identity {
        Identity {
            name: dir.results_path.display().to_string(),
            host: dir.distinct(|row| row.host.host.clone()),
            commit: dir.distinct(|row| row.host.commit.clone()),
            build: dir.distinct(|row| row.host.build.clone()),
        }
    }

    /// What this serbench's run will write in those columns.
    pub fn of_this_run() -> Identity {
        let host = Host::detect();
        Identity {
            name: "this run".to_string(),
            host: vec![host.host],
            commit: vec![host.commit],
            build: vec![host.build],
        }
    }

    /// The first column in which `other` differs, as one line naming its folder.
    fn refuse(&self, other: &Identity) -> Result<()> {
        let columns = [
            ("host", &self.host, &other.host),
            ("commit", &self.commit, &other.commit),
            ("build", &self.build, &other.build),
        ];
        for (column, ours, theirs) in columns {
            if ours != theirs {
                return Err(UsageError::error(format!(
                    "{}: {column} {}, where {} has {}: --history takes earlier result sets of the same \
                     host, commit and build",
                    other.name,
                    quoted(theirs),
                    self.name,
                    quoted(ours)
                )));
            }
        }
        Ok(())
    }
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|value| format!("{value:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A ratio's identity across result sets.
type RatioKey = (String, Operation, String, String);

fn key(ratio: &Ratio) -> RatioKey {
    (
        ratio.payload.clone(),
        ratio.operation,
        ratio.numerator.clone(),
        ratio.denominator.clone(),
    )
}

/// The session spread of earlier result sets of one host, commit and build.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    pub sets: Vec<PathBuf>,
    /// The host and commit the sets share, for the sentence.
    pub host: String,
    pub commit: String,
    pub spread: SessionSpread,
}

/// Reads the result sets at `paths` (at least [`MIN_SETS`], each completely validated), refuses
/// any whose host, commit or build is not `reported`'s and any given twice, and estimates the
/// session spread from their headline ratios (ratios.csv's, recomputed from results.csv and
/// samples.csv as the report does). Every refusal is a usage error, before anything is written.
pub fn load(paths: &[PathBuf], reported: &Identity) -> Result<History> {
    if paths.len() < MIN_SETS {
        return Err(UsageError::error(format!(
            "--history takes at least {MIN_SETS} earlier result sets (one shows no spread between \
             sessions), not {}",
            paths.len()
        )));
    }
    let mut sets: Vec<ResultsDir> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for path in paths {
        let set = load::load(path)?;
        let canonical = set
            .results_path
            .canonicalize()
            .unwrap_or_else(|_| set.results_path.clone());
        if seen.contains(&canonical) {
            return Err(UsageError::error(format!(
                "{}: given twice to --history (one session counted twice would narrow the spread)",
                path.display()
            )));
        }
        seen.push(canonical);
        reported.refuse(&Identity::of_set(&set))?;
        sets.push(set);
    }
    let mut groups: BTreeMap<RatioKey, Vec<RatioInterval>> = BTreeMap::new();
    for set in &sets {
        let mut held = std::collections::BTreeSet::new();
        for ratio in ratios::headline(&set.rows, set.samples.as_deref()) {
            if held.insert(key(&ratio)) {
                groups.entry(key(&ratio)).or_default().push(ratio.quoted().0);
            }
        }
    }
    let groups: Vec<Vec<RatioInterval>> = groups.into_values().collect();
    let spread = session_spread(&groups).ok_or_else(|| {
        UsageError::error(format!(
            "{}: no headline ratio is held by two or more of these result sets, so they show no \
             spread between sessions",
            names(paths)
        ))
    })?;
    Ok(History {
        sets: paths.to_vec(),
        host: reported.host.join(", "),
        commit: reported.commit.join(", "),
        spread,
    })
}

fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A headline ratio of the reported set with its prediction interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    pub ratio: Ratio,
    /// Its quoted 95% interval, and whether that is paired over workers.
    pub quoted: RatioInterval,
    pub paired: bool,
    /// The 95% prediction interval of a rerun's estimate ([`prediction`]).
    pub predicted: RatioInterval,
}

impl History {
    /// One line: σ_s and what it was estimated from.
    pub fn line(&self) -> String {
        self.line_with(|text| text.to_string())
    }

    /// [`History::line`], the host and commit (read from files) through `escape`, and the
    /// rest as it is (plain text, and Markdown too).
    fn line_with(&self, escape: impl Fn(&str) -> String) -> String {
        let spread = &self.spread;
        format!(
            "session spread: σ_s = {:.2}% of ln ratio, from {} history sets of host {}, commit {} \
             ({} ratios held by two or more, {} degrees of freedom{}); a rerun's 95% prediction interval \
             is ratio·exp(±1.96·sqrt(2σ_s² + 2(h/1.96)²))",
            spread.sigma * 100.0,
            self.sets.len(),
            escape(&self.host),
            escape(&self.commit),
            spread.ratios,
            spread.degrees_of_freedom,
            if spread.floored {
                "; the sets moved less than their own intervals say: floored at 0"
            } else {
                ""
            }
        )
    }

    /// Each of `ratios` with its prediction interval for a rerun.
    pub fn predictions(&self, ratios: &[Ratio]) -> Vec<Prediction> {
        ratios
            .iter()
            .map(|ratio| {
                let (quoted, paired) = ratio.quoted();
                Prediction {
                    ratio: ratio.clone(),
                    quoted,
                    paired,
                    predicted: prediction(quoted, self.spread.sigma),
                }
            })
            .collect()
    }

    /// The terminal's table of `ratios` with their prediction intervals.
    pub fn text(&self, ratios: &[Ratio]) -> String {
        let rows: Vec<Vec<String>> = self
            .predictions(ratios)
            .iter()
            .map(|prediction| {
                let mut cells = prediction.cells();
                cells[3] = format!(
                    "{} / {}",
                    prediction.ratio.numerator, prediction.ratio.denominator
                );
                cells
            })
            .collect();
        super::table::render(&HEADERS, &rows)
    }

    /// report.md's section: the line, how to read it, and each of `ratios` (the reported set's
    /// headline ratios) with its confidence and prediction intervals.
    pub fn markdown(&self, ratios: &[Ratio]) -> String {
        let mut text = String::from("## Later runs: prediction intervals\n\n");
        text += &format!("{}\n\n", self.line_with(escape::markdown));
        let sets: Vec<String> = self
            .sets
            .iter()
            .map(|path| code(&path.display().to_string()))
            .collect();
        text += &format!(
            "The 95% CI says where this run's ratio lies; the 95% prediction interval, where a rerun's \
             estimate will fall in a later session on this host and commit (docs/measurement.md, \
             \"Later runs\"; \\* marks an unpaired CI). From: {}.\n\n",
            sets.join(", ")
        );
        if ratios.is_empty() {
            text += "No headline ratio to predict.\n\n";
            return text;
        }
        let header: Vec<String> = HEADERS.iter().map(|name| name.to_string()).collect();
        let rows: Vec<Vec<String>> = self
            .predictions(ratios)
            .iter()
            .map(|prediction| {
                let mut cells = prediction.cells();
                cells[0] = escape::markdown(&cells[0]);
                cells[1] = escape::markdown(&cells[1]);
                cells[3] = format!(
                    "{} / {}",
                    code(&prediction.ratio.numerator),
                    code(&prediction.ratio.denominator)
                );
                cells[5] = cells[5].replace('*', "\\*");
                cells
            })
            .collect();
        text += &table(&header, &rows);
        text
    }
}

const HEADERS: [&str; 7] = [
    "comparison",
    "payload",
    "op",
    "arms",
    ">ratio",
    ">95% CI",
    ">95% prediction interval",
];

impl Prediction {
    /// comparison, payload, op, arms (left to the renderer), ratio, CI (`*` where unpaired), PI.
    fn cells(&self) -> Vec<String> {
        let interval = |interval: &RatioInterval| ratio_bounds(interval.low, interval.high);
        vec![
            self.ratio.comparison.clone(),
            self.ratio.payload.clone(),
            self.ratio.operation.name().to_string(),
            String::new(),
            ratio(self.quoted.ratio),
            interval(&self.quoted) + if self.paired { "" } else { "*" },
            interval(&self.predicted),
        ]
    }
}

/// `report DIR --history H...`: the history of `paths` checked against `dir`, and its section
/// of report.md with the terminal's line.
pub fn report_section(paths: &[PathBuf], dir: &ResultsDir) -> Result<(String, String)> {
    let history = load(paths, &Identity::of_set(dir))?;
    let headline = ratios::headline(&dir.rows, dir.samples.as_deref());
    Ok((history.markdown(&headline), history.line()))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::schema::results::ResultRow;

    fn interval(ratio: f64, log_half: f64) -> RatioInterval {
        RatioInterval {
            ratio,
            low: ratio / log_half.exp(),
            high: ratio * log_half.exp(),
        }
    }

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= 1e-12 * expected.abs().max(1.0)
    }

    #[test]
    fn the_session_spread_is_the_between_set_variance_less_the_within_pooled() {
        // Ratio 1 in three sets: ln r = -0.1, 0, 0.1 (variance 0.01), each ±1.96·0.05 (within
        // 0.0025): 0.0075 on 2 degrees of freedom. Ratio 2 in two sets: ln r 0 and 0.2 (variance
        // 0.02), each ±1.96·0.1 (within 0.01): 0.01 on 1. Pooled: (2·0.0075 + 0.01) / 3.
        let half = |se: f64| Z_975 * se;
        let groups = vec![
            vec![
                interval((-0.1f64).exp(), half(0.05)),
                interval(1.0, half(0.05)),
                interval(0.1f64.exp(), half(0.05)),
            ],
            vec![interval(2.0, half(0.1)), interval(2.0 * 0.2f64.exp(), half(0.1))],
            // Held by one set only: no part of the estimate.
            vec![interval(5.0, half(0.5))],
        ];
        let spread = session_spread(&groups).unwrap();
        assert!(
            close(spread.sigma, ((2.0 * 0.0075 + 0.01) / 3.0f64).sqrt()),
            "{spread:?}"
        );
        assert_eq!(
            (spread.ratios, spread.degrees_of_freedom, spread.floored),
            (2, 3, false)
        );
    }

    #[test]
    fn a_spread_within_the_sets_own_intervals_is_floored_at_zero() {
        // Identical estimates with wide intervals: the between-set variance, 0, is below the
        // within-set one.
        let groups = vec![vec![interval(1.5, 0.1), interval(1.5, 0.1)]];
        let spread = session_spread(&groups).unwrap();
        assert_eq!((spread.sigma, spread.floored), (0.0, true));
        // No ratio in two sets: nothing to estimate.
        assert_eq!(session_spread(&[vec![interval(1.5, 0.1)]]), None);
        assert_eq!(session_spread(&[]), None);
    }

    #[test]
    fn the_prediction_interval_adds_twice_the_session_and_within_variances() {
        // h = 1.96·0.03, σ_s = 0.04: half-width 1.96·sqrt(2·0.04² + 2·0.03²) = 1.96·0.05·√2.
        let quoted = interval(2.0, Z_975 * 0.03);
        let predicted = prediction(quoted, 0.04);
        let half = Z_975 * 0.05 * 2f64.sqrt();
        assert!(close(predicted.ratio, 2.0));
        assert!(close(predicted.high, 2.0 * half.exp()) && close(predicted.low, 2.0 / half.exp()));
        // Without a session spread: √2 times the confidence interval's log half-width.
        assert!(close(
            prediction(quoted, 0.0).log_half_width(),
            2f64.sqrt() * quoted.log_half_width()
        ));
    }

    /// A result set with one ratio (the two formats chosen, each against each) at `ratio`,
    /// on `host` and `commit`.
    fn set(dir: &Path, host: &str, commit: &str, ratio: f64) -> PathBuf {
        let run = ResultRow::of_run(
            &Host {
                host: host.into(),
                commit: commit.into(),
                build: "portable".into(),
                ..Host::detect()
            },
            crate::measure::Profile::QUICK.name,
            crate::measure::Schedule::Interleaved,
            &crate::host::utc_timestamp(std::time::UNIX_EPOCH),
        );
        let row = |format: &str, backend: &str, mean: f64| {
            let arm = crate::arm::ArmId::typed(format, backend, "", "order", Operation::Decode);
            run.for_arm(&arm, 1).measured(
                100,
                &crate::measure::Measurement {
                    reps: crate::measure::Profile::QUICK.min_reps,
                    workers: 1,
                    batch: 1,
                    mean_ns: mean,
                    ci95_low_ns: mean * 0.99,
                    ci95_high_ns: mean * 1.01,
                    allocs_per_op: 0.0,
                    alloc_bytes_per_op: 0.0,
                    peak_heap_bytes: 0.0,
                    target_met: None,
                },
            )
        };
        let rows = [
            row("json", "serde_json", 100.0 * ratio),
            row("postcard", "postcard", 100.0),
        ];
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("results.csv"), crate::files::to_csv(&rows).unwrap()).unwrap();
        dir.to_path_buf()
    }

    #[test]
    fn history_sets_of_another_host_or_commit_are_refused_in_one_line() {
        let root = tempfile::tempdir().unwrap();
        let at = |name: &str| root.path().join(name);
        let reported = load::load(&set(&at("now"), "box", "abc", 3.0)).unwrap();
        let identity = Identity::of_set(&reported);
        let same = [
            set(&at("h1"), "box", "abc", 3.0),
            set(&at("h2"), "box", "abc", 3.3),
        ];
        let history = load(&same, &identity).unwrap();
        assert_eq!((history.spread.ratios, history.spread.degrees_of_freedom), (1, 1));
        assert!(history.spread.sigma > 0.0, "{history:?}");
        let line = history.line();
        assert!(
            line.starts_with("session spread: σ_s = ")
                && line.contains("from 2 history sets of host box, commit abc (1 ratios"),
            "{line}"
        );
        let (section, _) = report_section(&same, &reported).unwrap();
        assert!(
            section.starts_with("## Later runs: prediction intervals\n"),
            "{section}"
        );
        assert!(
            section.contains("`json/serde_json` / `postcard/postcard`"),
            "{section}"
        );

        let refused = |paths: &[PathBuf]| {
            let error = load(paths, &identity).unwrap_err();
            assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
            format!("{error:#}")
        };
        let other_commit = set(&at("old"), "box", "def", 3.0);
        let message = refused(&[same[0].clone(), other_commit]);
        assert!(
            message.contains("old/results.csv: commit \"def\", where ")
                && message.contains("now/results.csv has \"abc\"")
                && !message.contains('\n'),
            "{message}"
        );
        let other_host = set(&at("elsewhere"), "laptop", "abc", 3.0);
        assert!(refused(&[other_host, same[1].clone()]).contains("host \"laptop\""));
        assert!(refused(&same[..1]).contains("at least 2 earlier result sets"));
        assert!(refused(&[same[0].clone(), same[0].clone()]).contains("given twice"));
    }
}

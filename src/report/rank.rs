//! Rankings that group ties: the one place a section's arms get their ranks, which report.md,
//! report.html and the terminal summary all show.
//!
//! A section is one payload, operation and mode (typed, borrowed and dynamic decodes are
//! different jobs, as for `vs fastest`), baselines left out. Its arms are sorted by time per
//! record; the fastest starts rank 1, and each next arm joins the current rank when its ratio to
//! that rank's first arm is a tie ([`crate::stats::RatioInterval::is_tie`] at
//! [`LAYOUT_SPREAD`]), else starts a new rank numbered by its position (competition ranking:
//! "=1, =1, 3"). The ratio is paired over the workers that measured both arms where the folder
//! kept them (samples.csv), else unpaired from the two arms' own intervals, as
//! [`ratios::pair`] quotes it. Comparing with the rank's first arm, not the arm before, keeps a
//! chain of small steps from sharing one rank.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::Serialize;

use crate::arm::{ArmId, Mode, Operation};
use crate::schema::ratios::{self, WorkerMeans};
use crate::schema::results::{ResultRow, STATUS_OK};
use crate::stats::{LAYOUT_SPREAD, RatioInterval};

/// An arm's place in its section: its position when it starts a rank, the rank's first arm's
/// when it joins one; `shared` when another arm holds the same place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Rank {
    pub place: usize,
    pub shared: bool,
}

/// A shared rank is written with a leading `=` ("=1"), a rank held alone as its number.
impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shared {
            true => write!(f, "={}", self.place),
            false => write!(f, "{}", self.place),
        }
    }
}

/// The ranks of `times` (an item and its time), fastest first: the items sorted by time (then by
/// item, so equal times rank the same way every time), each with its rank. `ratio(a, b)` is the
/// interval of item `a`'s time over item `b`'s; an item whose ratio to its rank's first item is
/// a tie at `spread` shares that rank, and one without an interval (`None`) starts its own.
pub fn ranks<K: Clone + Ord>(
    times: &[(K, f64)],
    mut ratio: impl FnMut(&K, &K) -> Option<RatioInterval>,
    spread: f64,
) -> Vec<(K, Rank)> {
    let mut sorted = times.to_vec();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let mut places: Vec<usize> = Vec::with_capacity(sorted.len());
    let mut first = 0;
    for index in 0..sorted.len() {
        let tied = index > 0
            && ratio(&sorted[index].0, &sorted[first].0).is_some_and(|interval| interval.is_tie(spread));
        if !tied {
            first = index;
        }
        places.push(first + 1);
    }
    sorted
        .into_iter()
        .zip(&places)
        .map(|((key, _), &place)| {
            let shared = places.iter().filter(|&&other| other == place).count() > 1;
            (key, Rank { place, shared })
        })
        .collect()
}

/// A ranked section: payload, operation and mode.
type Section = (String, Operation, Mode);

/// The rank of every ok arm of `rows` that has a time per record and is no baseline, within its
/// section, at [`LAYOUT_SPREAD`]; `workers` (samples.csv's) pair the ratios.
pub fn of_rows<'a>(
    rows: impl IntoIterator<Item = &'a ResultRow>,
    workers: Option<&WorkerMeans>,
) -> BTreeMap<ArmId, Rank> {
    let mut sections: BTreeMap<Section, HashMap<&ArmId, &ResultRow>> = BTreeMap::new();
    for row in rows {
        if row.status != STATUS_OK || row.arm.is_baseline() || row.ns_per_record.is_none() {
            continue;
        }
        let section = (row.arm.codec.payload.clone(), row.arm.operation, row.arm.mode);
        sections.entry(section).or_default().insert(&row.arm, row);
    }
    let mut ranked = BTreeMap::new();
    for arms in sections.values() {
        let times: Vec<(&ArmId, f64)> = arms
            .iter()
            .filter_map(|(&arm, row)| Some((arm, row.ns_per_record?)))
            .collect();
        let ratio = |arm: &&ArmId, first: &&ArmId| {
            ratios::pair("rank", arms, workers, arm, first).map(|ratio| ratio.quoted().0)
        };
        for (arm, rank) in ranks(&times, ratio, LAYOUT_SPREAD) {
            ranked.insert(arm.clone(), rank);
        }
    }
    ranked
}

/// A mean and its 95% interval, per record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// A row's time per record and its interval; `None` for a row without figures.
    pub fn of(row: &ResultRow) -> Option<Interval> {
        let records = row.records as f64;
        Some(Interval {
            mean: row.mean_ns? / records,
            low: row.ci95_low_ns? / records,
            high: row.ci95_high_ns? / records,
        })
    }

    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }

    /// Half the interval's width as a fraction of the mean.
    pub fn relative_half_width(&self) -> f64 {
        (self.high - self.low) / 2.0 / self.mean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::samples::SampleRow;

    /// Ranks of items `0..` with the given times, the ratio of two items their time ratio with a
    /// relative half-width of `half` around it.
    fn ranked(times: &[f64], half: f64, spread: f64) -> Vec<(usize, String)> {
        let items: Vec<(usize, f64)> = times.iter().copied().enumerate().collect();
        let ratio = |a: &usize, b: &usize| {
            let value = times[*a] / times[*b];
            Some(RatioInterval {
                ratio: value,
                low: value * (1.0 - half),
                high: value * (1.0 + half),
            })
        };
        ranks(&items, ratio, spread)
            .into_iter()
            .map(|(item, rank)| (item, rank.to_string()))
            .collect()
    }

    fn strings(ranks: &[(usize, &str)]) -> Vec<(usize, String)> {
        ranks
            .iter()
            .map(|&(item, rank)| (item, rank.to_string()))
            .collect()
    }

    #[test]
    fn a_clear_order_ranks_each_arm_alone_fastest_first() {
        // Given out of order; 10% apart with ±1% intervals: no ties.
        assert_eq!(
            ranked(&[121.0, 100.0, 110.0], 0.01, 0.035),
            strings(&[(1, "1"), (2, "2"), (0, "3")])
        );
    }

    #[test]
    fn a_tie_chain_joins_the_ranks_first_arm_not_the_arm_before() {
        // 100, 102, 104.5, 107.5: each within 3.5% of the one before, but 104.5 is 4.5% over 100,
        // so it starts rank 3 and 107.5 (2.9% over 104.5) shares it: =1, =1, =3, =3.
        assert_eq!(
            ranked(&[100.0, 102.0, 104.5, 107.5], 0.001, 0.035),
            strings(&[(0, "=1"), (1, "=1"), (2, "=3"), (3, "=3")])
        );
        // Without a spread only an interval that holds 1 ties: every arm alone.
        assert_eq!(
            ranked(&[100.0, 102.0, 104.5, 107.5], 0.001, 0.0),
            strings(&[(0, "1"), (1, "2"), (2, "3"), (3, "4")])
        );
        // Competition ranking: after a shared first place the next is 3, not 2.
        assert_eq!(
            ranked(&[100.0, 101.0, 150.0], 0.001, 0.035),
            strings(&[(0, "=1"), (1, "=1"), (2, "3")])
        );
    }

    #[test]
    fn an_all_tie_section_shares_rank_one_and_one_arm_holds_it_alone() {
        // ±20% intervals hold 1 for every pair 10% apart.
        assert_eq!(
            ranked(&[110.0, 100.0, 105.0], 0.2, 0.0),
            strings(&[(1, "=1"), (2, "=1"), (0, "=1")])
        );
        assert_eq!(ranked(&[100.0], 0.01, 0.035), strings(&[(0, "1")]));
        assert!(ranked(&[], 0.01, 0.035).is_empty());
    }

    #[test]
    fn an_arm_without_an_interval_starts_its_own_rank() {
        let items = [(0, 100.0), (1, 100.5)];
        let ranks = ranks(&items, |_: &i32, _: &i32| None, 0.035);
        assert_eq!(
            ranks.iter().map(|(_, rank)| rank.to_string()).collect::<Vec<_>>(),
            ["1", "2"]
        );
    }

    fn row(backend: &str, mode: Mode, mean: f64, half: f64) -> ResultRow {
        let mut arm = ArmId::typed("f", backend, "", "order", Operation::Decode);
        arm.mode = mode;
        ResultRow {
            arm,
            records: 1,
            mean_ns: Some(mean),
            ci95_low_ns: Some(mean - half),
            ci95_high_ns: Some(mean + half),
            ns_per_record: Some(mean / 1.0),
            status: STATUS_OK.into(),
            ..ResultRow::default()
        }
    }

    fn by_backend(ranks: &BTreeMap<ArmId, Rank>) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = ranks
            .iter()
            .map(|(arm, rank)| (arm.label(), rank.to_string()))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn rows_rank_within_their_mode_and_pair_over_workers_where_kept() {
        // a 100 ± 5, b 102 ± 5, c 150 ± 1 typed; d borrowed. Unpaired, b/a holds 1: =1, =1, 3;
        // d ranks alone in its mode.
        let rows = vec![
            row("a", Mode::Typed, 100.0, 5.0),
            row("b", Mode::Typed, 102.0, 5.0),
            row("c", Mode::Typed, 150.0, 1.0),
            row("d", Mode::Borrowed, 50.0, 1.0),
        ];
        assert_eq!(
            by_backend(&of_rows(&rows, None)),
            [
                ("f/a".to_string(), "=1".to_string()),
                ("f/b".to_string(), "=1".to_string()),
                ("f/c".to_string(), "3".to_string()),
                ("f/d borrowed".to_string(), "1".to_string()),
            ]
        );
        // Paired: b is 6% slower than a in every worker, whatever the worker's speed, so b/a is
        // exactly 1.06, beyond the layout spread: a, b and c each alone.
        let sample = |row: &ResultRow, pass: usize, mean: f64| SampleRow {
            arm: row.arm.clone(),
            pass,
            records: 1,
            mean_ns: Some(mean),
            status: STATUS_OK.to_string(),
            ..SampleRow::default()
        };
        let samples: Vec<SampleRow> = (0..4)
            .flat_map(|pass| {
                let speed = 1.0 + 0.05 * pass as f64;
                [
                    sample(&rows[0], pass, 100.0 * speed),
                    sample(&rows[1], pass, 106.0 * speed),
                    sample(&rows[2], pass, 150.0 * speed),
                ]
            })
            .collect();
        let workers = ratios::worker_means(&samples);
        let paired = by_backend(&of_rows(&rows, Some(&workers)));
        assert_eq!(
            paired.iter().map(|(_, rank)| rank.as_str()).collect::<Vec<_>>(),
            ["1", "2", "3", "1"]
        );
        // A baseline, a failed arm and an arm without figures get no rank.
        let mut baseline = row("x", Mode::Typed, 1.0, 0.1);
        baseline.arm.codec.variant = crate::arm::COPY_ONLY.to_string();
        let mut failed = row("y", Mode::Typed, 1.0, 0.1);
        failed.status = "failed".into();
        let mut bare = row("z", Mode::Typed, 1.0, 0.1);
        bare.ns_per_record = None;
        let ranks = of_rows(&[baseline, failed, bare], None);
        assert!(ranks.is_empty(), "{ranks:?}");
    }
}

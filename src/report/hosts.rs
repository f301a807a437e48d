//! Whether hosts agree on a section's ranking: Kendall's tau over the arms both measured, and
//! the pairs of arms whose order flips with intervals that do not overlap on either host (a
//! flip that no noise explains). Pure: intervals in, figures out.

use std::collections::BTreeMap;

use super::rank::Interval;
use crate::arm::ArmId;
use crate::stats;

/// Two arms that two hosts order differently, each host sure of its order.
#[derive(Clone, Debug, PartialEq)]
pub struct Flip {
    /// Faster on the first host, slower on the second.
    pub faster_first: ArmId,
    pub slower_first: ArmId,
    /// (faster_first's, slower_first's) time per record on the first host, then the second.
    pub first: (Interval, Interval),
    pub second: (Interval, Interval),
}

/// One section's ranking on one host against another's.
#[derive(Clone, Debug, PartialEq)]
pub struct RankAgreement {
    /// Arms both hosts measured.
    pub arms: usize,
    /// Kendall's tau-b of their means; `None` under two arms.
    pub tau: Option<f64>,
    pub flips: Vec<Flip>,
}

/// Compares two hosts' intervals of one section's arms (time per record).
pub fn rank_agreement(
    first: &BTreeMap<ArmId, Interval>,
    second: &BTreeMap<ArmId, Interval>,
) -> RankAgreement {
    let shared: Vec<(&ArmId, Interval, Interval)> = first
        .iter()
        .filter_map(|(key, a)| Some((key, *a, *second.get(key)?)))
        .collect();
    let means: Vec<(f64, f64)> = shared.iter().map(|(_, a, b)| (a.mean, b.mean)).collect();
    let mut flips = Vec::new();
    for (index, (x, x_first, x_second)) in shared.iter().enumerate() {
        for (y, y_first, y_second) in &shared[index + 1..] {
            // Ordered on the first host, the opposite way on the second, neither by an overlap.
            let surely_below = |low: &Interval, high: &Interval| low.high < high.low;
            let flip = if surely_below(x_first, y_first) && surely_below(y_second, x_second) {
                Some((x, y, (*x_first, *y_first), (*x_second, *y_second)))
            } else if surely_below(y_first, x_first) && surely_below(x_second, y_second) {
                Some((y, x, (*y_first, *x_first), (*y_second, *x_second)))
            } else {
                None
            };
            if let Some((faster, slower, first, second)) = flip {
                flips.push(Flip {
                    faster_first: (*faster).clone(),
                    slower_first: (*slower).clone(),
                    first,
                    second,
                });
            }
        }
    }
    RankAgreement {
        arms: shared.len(),
        tau: stats::kendall_tau(&means),
        flips,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::Operation;

    fn arm(format: &str) -> ArmId {
        ArmId::typed(format, format, "", "order", Operation::Decode)
    }

    fn at(mean: f64, half: f64) -> Interval {
        Interval {
            mean,
            low: mean - half,
            high: mean + half,
        }
    }

    #[test]
    fn only_orders_both_hosts_are_sure_of_count_as_flips() {
        let first = BTreeMap::from([
            (arm("a"), at(100.0, 1.0)),
            (arm("b"), at(200.0, 1.0)),
            (arm("c"), at(300.0, 1.0)),
            (arm("d"), at(400.0, 1.0)),
        ]);
        // b and a swap surely; c and d swap within their intervals; an arm the first host lacks
        // does not count.
        let second = BTreeMap::from([
            (arm("a"), at(250.0, 10.0)),
            (arm("b"), at(150.0, 10.0)),
            (arm("c"), at(410.0, 20.0)),
            (arm("d"), at(400.0, 20.0)),
            (arm("e"), at(1.0, 0.1)),
        ]);
        let agreement = rank_agreement(&first, &second);
        assert_eq!(agreement.arms, 4);
        // Two of six pairs discordant: (4 - 2) / 6.
        assert!((agreement.tau.unwrap() - 2.0 / 6.0).abs() < 1e-12);
        assert_eq!(agreement.flips.len(), 1, "{:?}", agreement.flips);
        let flip = &agreement.flips[0];
        assert_eq!((&flip.faster_first, &flip.slower_first), (&arm("a"), &arm("b")));
        assert_eq!(flip.second, (at(250.0, 10.0), at(150.0, 10.0)));
        let same = rank_agreement(&first, &first);
        assert_eq!((same.tau, same.flips.len()), (Some(1.0), 0));
    }
}

//! Every statistic serbench computes, as pure functions of numbers: Student-t quantiles,
//! intervals over reps and over processes (cluster intervals), percentiles, ratio intervals
//! (independent, paired over workers, and batched over paired slices), and the difference test two runs' intervals are judged by. No I/O, no globals, no knowledge of arms or files: the measuring and reporting
//! stages call these with plain slices.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The two-sided 95% quantile of the standard normal distribution (its 97.5% point): a 95%
/// half-width over this is a standard error.
pub const Z_975: f64 = 1.959_964;

/// The two-sided 95% quantile of Student's t distribution (its 97.5% point) for `df` degrees
/// of freedom; infinite for none.
pub fn t_975(df: usize) -> f64 {
    // Beyond this statrs' incomplete-beta inversion loses digits (1.95985 at 10^6, 1.827 at
    // 10^7), while t itself is within 2·10^-5 of the normal quantile.
    const NORMAL_BEYOND: usize = 100_000;
    if df == 0 {
        return f64::INFINITY;
    }
    if df > NORMAL_BEYOND {
        return Z_975;
    }
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("a positive number of degrees of freedom is a valid t distribution")
        .inverse_cdf(0.975)
}

/// Mean and Student-t 95% half-width of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub half_width: f64,
}

impl Summary {
    /// The mean and t interval of independent samples: NaN for none, an infinite half-width
    /// for one. For samples taken in several processes, the samples are the processes' means
    /// (a cluster interval: it holds the spread between processes as well as within each).
    pub fn of(samples: &[f64]) -> Summary {
        let count = samples.len();
        if count == 0 {
            return Summary {
                mean: f64::NAN,
                half_width: f64::NAN,
            };
        }
        let mean = samples.iter().sum::<f64>() / count as f64;
        if count == 1 {
            return Summary {
                mean,
                half_width: f64::INFINITY,
            };
        }
        let variance = samples.iter().map(|sample| (sample - mean).powi(2)).sum::<f64>() / (count - 1) as f64;
        let half_width = t_975(count - 1) * (variance / count as f64).sqrt();
        Summary { mean, half_width }
    }

    /// The half-width as a fraction of the mean.
    pub fn relative_half_width(&self) -> f64 {
        self.half_width / self.mean
    }
}

/// The `q` quantile by linear interpolation between the closest ranks (the common default of
/// numpy and R, type 7): the median of an even count is the mean of the middle two. NaN for
/// no values.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        len => {
            let position = q.clamp(0.0, 1.0) * (len - 1) as f64;
            let (below, fraction) = (position.floor() as usize, position.fract());
            let above = (below + 1).min(len - 1);
            sorted[below] + (sorted[above] - sorted[below]) * fraction
        }
    }
}

/// A ratio of two means with its approximate 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioInterval {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

impl RatioInterval {
    /// How far the interval reaches from the ratio, as a fraction of it: the wider side.
    pub fn relative_half_width(&self) -> f64 {
        (self.high / self.ratio - 1.0).max(1.0 - self.low / self.ratio)
    }

    /// Whether the interval holds `value`.
    pub fn holds(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    /// How far the interval reaches from the ratio on the log scale: the wider side,
    /// `max(ln(high / ratio), ln(ratio / low))`.
    pub fn log_half_width(&self) -> f64 {
        (self.high / self.ratio).ln().max((self.ratio / self.low).ln())
    }

    /// The difference test ([`agrees`]) of two runs' estimates of one ratio, on the log scale:
    /// `|ln r_b - ln r_a| <= sqrt(h_a² + h_b²)`, `h` each side's [`Self::log_half_width`].
    pub fn agrees_with(&self, other: &RatioInterval) -> bool {
        agrees(
            self.ratio.ln(),
            self.log_half_width(),
            other.ratio.ln(),
            other.log_half_width(),
        )
    }

    /// Whether the two arms of the ratio are a tie: the interval holds 1, or lies wholly inside
    /// `[1/(1 + spread), 1 + spread]`, a difference no larger than `spread` (a relative shift,
    /// e.g. [`LAYOUT_SPREAD`]) can make alone. A NaN bound is no tie.
    pub fn is_tie(&self, spread: f64) -> bool {
        self.holds(1.0) || self.inside_spread(spread)
    }

    /// Whether the interval lies wholly inside `[1/(1 + spread), 1 + spread]`.
    pub fn inside_spread(&self, spread: f64) -> bool {
        1.0 / (1.0 + spread) <= self.low && self.high <= 1.0 + spread
    }
}

/// The relative shift of an arm's time that a code layout change alone makes: between the
/// workers of two builds of one commit relinked in another order, the arms moved by a median
/// 3.5% (docs/measurement.md, "Code layout"). A ratio whose interval lies inside it is called a
/// tie ([`RatioInterval::is_tie`]): the verdicts say indistinguishable and rankings share a rank.
pub const LAYOUT_SPREAD: f64 = 0.035;

/// One session's estimate of a ratio on the log scale: `log` its ln, `variance` that
/// estimate's variance within its session (its squared standard error).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SessionEstimate {
    pub log: f64,
    pub variance: f64,
}

/// The session level's spread, estimated from sessions that measured the same ratios.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SessionSpread {
    /// σ_s: the standard deviation of a ratio's ln between sessions, beyond its own interval.
    pub sigma: f64,
    /// The ratios held by two or more sessions (each gives the estimate its sessions less one
    /// degrees of freedom).
    pub ratios: usize,
    pub degrees_of_freedom: usize,
    /// The pooled estimate came out negative (the sessions moved less than their own intervals
    /// say) and is taken as 0.
    pub floored: bool,
}

impl SessionSpread {
    /// This estimate and `other` (of independent sessions) as one: their variances averaged with
    /// their degrees of freedom as weights, the degrees of freedom added.
    pub fn pooled_with(&self, other: &SessionSpread) -> SessionSpread {
        let degrees_of_freedom = self.degrees_of_freedom + other.degrees_of_freedom;
        let weighted = |spread: &SessionSpread| spread.sigma.powi(2) * spread.degrees_of_freedom as f64;
        SessionSpread {
            sigma: ((weighted(self) + weighted(other)) / degrees_of_freedom.max(1) as f64).sqrt(),
            ratios: self.ratios + other.ratios,
            degrees_of_freedom,
            floored: false,
        }
    }
}

/// σ_s from `groups`, each one ratio's estimates in the sessions that measured it: for every
/// group of two or more, the sample variance of the logs less the mean within-session variance,
/// pooled over the groups with weights n − 1, floored at 0 (the method of moments of a one-way
/// random-effects model). `None` when no group has two finite estimates.
pub fn session_spread(groups: &[Vec<SessionEstimate>]) -> Option<SessionSpread> {
    let (mut weighted, mut degrees_of_freedom, mut ratios) = (0.0, 0usize, 0usize);
    for group in groups {
        let usable: Vec<&SessionEstimate> = group
            .iter()
            .filter(|estimate| estimate.log.is_finite() && estimate.variance.is_finite())
            .collect();
        if usable.len() < 2 {
            continue;
        }
        let count = usable.len() as f64;
        let mean = usable.iter().map(|estimate| estimate.log).sum::<f64>() / count;
        let between = usable
            .iter()
            .map(|estimate| (estimate.log - mean).powi(2))
            .sum::<f64>()
            / (count - 1.0);
        let within = usable.iter().map(|estimate| estimate.variance).sum::<f64>() / count;
        weighted += (count - 1.0) * (between - within);
        degrees_of_freedom += usable.len() - 1;
        ratios += 1;
    }
    if degrees_of_freedom == 0 {
        return None;
    }
    let variance = weighted / degrees_of_freedom as f64;
    Some(SessionSpread {
        sigma: variance.max(0.0).sqrt(),
        ratios,
        degrees_of_freedom,
        floored: variance < 0.0,
    })
}

/// The 95% interval of a ratio's mean over sessions from one session's `estimate` (its
/// within-session variance on `df` degrees of freedom) and the session spread `spread`:
/// `exp(log ± t·sqrt(v + σ_s²))`, t on the Welch-Satterthwaite degrees of freedom of the two
/// variances (`df` and the spread's own). A rerun's interval of the same kind agrees with it
/// (the difference test) about 95% of the time, where the within-session interval alone does
/// not once sessions differ.
pub fn across_sessions(estimate: SessionEstimate, df: usize, spread: &SessionSpread) -> RatioInterval {
    let session = spread.sigma * spread.sigma;
    let total = estimate.variance + session;
    let per_df = |variance: f64, df: usize| variance * variance / df.max(1) as f64;
    let satterthwaite =
        total * total / (per_df(estimate.variance, df) + per_df(session, spread.degrees_of_freedom));
    let df = if satterthwaite.is_finite() {
        (satterthwaite.floor() as usize).max(1)
    } else {
        df
    };
    exp_around(estimate.log, t_975(df) * total.sqrt())
}

/// For `trials` intervals that should each hold the truth with probability `coverage`: the
/// probability that `held` or fewer do (the binomial lower tail). A small value says the
/// intervals are too narrow.
pub fn coverage_tail(held: usize, trials: usize, coverage: f64) -> f64 {
    use statrs::distribution::{Binomial, DiscreteCDF};
    Binomial::new(coverage, trials as u64)
        .expect("a probability in [0, 1] is a valid binomial")
        .cdf(held as u64)
}

/// The ratio `a / b` of two independently measured means with relative half-widths `h_a` and
/// `h_b`: the delta method on the log scale, `ratio · exp(±sqrt(h_a² + h_b²))`.
pub fn independent_ratio(a: f64, h_a: f64, b: f64, h_b: f64) -> RatioInterval {
    let ratio = a / b;
    let spread = (h_a * h_a + h_b * h_b).sqrt().exp();
    RatioInterval {
        ratio,
        low: ratio / spread,
        high: ratio * spread,
    }
}

/// The ratio `a / b` from paired measurements `(a_i, b_i)` (two arms measured in the same
/// worker processes): the t interval of the mean log-ratio over the pairs, exponentiated. Noise
/// the two arms share inside a process (the machine's speed while that worker ran) cancels in
/// each pair, where the independent interval counts it twice. `None` for fewer than two pairs
/// or a non-positive value.
pub fn paired_ratio(pairs: &[(f64, f64)]) -> Option<RatioInterval> {
    Some(exp_interval(&paired_logs(pairs)?))
}

/// Where the ratio of one more unit of `pairs` (a worker in another code layout, or another
/// binary altogether) falls, 95%: the prediction interval `mean ± t(n−1)·s·√(1 + 1/n)` of the
/// log-ratios, exponentiated; the paired interval's half-width times `√(n + 1)`. `None` as for
/// [`paired_ratio`].
pub fn next_unit_ratio(pairs: &[(f64, f64)]) -> Option<RatioInterval> {
    let logs = paired_logs(pairs)?;
    let summary = Summary::of(&logs);
    Some(exp_around(
        summary.mean,
        summary.half_width * ((logs.len() + 1) as f64).sqrt(),
    ))
}

/// `ln(a / b)` of each pair; `None` for fewer than two pairs or a non-positive value.
fn paired_logs(pairs: &[(f64, f64)]) -> Option<Vec<f64>> {
    if pairs.len() < 2 || pairs.iter().any(|&(a, b)| !(a > 0.0 && b > 0.0)) {
        return None;
    }
    Some(pairs.iter().map(|&(a, b)| (a / b).ln()).collect())
}

/// The t interval of the mean of `logs` (log-ratios), exponentiated into a ratio interval.
fn exp_interval(logs: &[f64]) -> RatioInterval {
    let summary = Summary::of(logs);
    exp_around(summary.mean, summary.half_width)
}

/// The ratio interval of the log-scale interval `mean ± half_width`.
fn exp_around(mean: f64, half_width: f64) -> RatioInterval {
    RatioInterval {
        ratio: mean.exp(),
        low: (mean - half_width).exp(),
        high: (mean + half_width).exp(),
    }
}

/// The ratio of two arms from their per-slice log-ratios, taken in rounds in which both ran
/// (`serbench vs`): the t interval over the means of consecutive batches of `batch` rounds,
/// exponentiated. Batching keeps the interval honest where neighbouring rounds are not
/// independent (a slow spell of the machine lasting several rounds): batch means of such
/// rounds are close to independent, and rounds that do not fill a last batch are left out.
/// `None` for fewer than two batches.
pub fn batched_ratio(log_ratios: &[f64], batch: usize) -> Option<RatioInterval> {
    let batch = batch.max(1);
    let means: Vec<f64> = log_ratios
        .chunks_exact(batch)
        .map(|chunk| chunk.iter().sum::<f64>() / batch as f64)
        .collect();
    (means.len() >= 2).then(|| exp_interval(&means))
}

/// The ratio of the geometric means of two independent groups `a` and `b` (an arm's workers in
/// two sets of code layouts): Welch's t interval of the difference of their mean logs, its
/// degrees of freedom by Welch-Satterthwaite (rounded down), exponentiated. `None` unless each
/// group has two positive values.
pub fn welch_ratio(a: &[f64], b: &[f64]) -> Option<RatioInterval> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|&value| value.is_nan() || value <= 0.0) {
        return None;
    }
    let moments = |values: &[f64]| {
        let logs: Vec<f64> = values.iter().map(|value| value.ln()).collect();
        let count = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / count;
        let variance = logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>() / (count - 1.0);
        (mean, variance / count, count - 1.0)
    };
    let ((mean_a, var_a, df_a), (mean_b, var_b, df_b)) = (moments(a), moments(b));
    let variance = var_a + var_b;
    let df = if variance > 0.0 {
        variance.powi(2) / (var_a.powi(2) / df_a + var_b.powi(2) / df_b)
    } else {
        df_a + df_b
    };
    let half = t_975((df.floor() as usize).max(1)) * variance.sqrt();
    Some(exp_around(mean_a - mean_b, half))
}

/// Kalibera & Jones' rule for two nested levels: how many repetitions of the lower level (a
/// paired round) to take in each unit of the upper one (a process), given the variance of one
/// lower repetition `lower_variance`, the variance the upper level adds `upper_variance`, and
/// what a new upper unit costs beyond its repetitions against what one repetition costs:
/// `sqrt(upper_cost / lower_cost · lower_variance / upper_variance)`. `None` when the upper
/// level adds no variance that could be measured (then as many as the budget allows).
pub fn repetitions_per_unit(
    lower_variance: f64,
    upper_variance: f64,
    lower_cost: f64,
    upper_cost: f64,
) -> Option<f64> {
    (upper_variance > 0.0 && lower_cost > 0.0 && lower_variance >= 0.0 && upper_cost >= 0.0)
        .then(|| (upper_cost / lower_cost * lower_variance / upper_variance).sqrt())
}

/// The mean of `values` without the `trim` share (rounded down) of the lowest and of the highest:
/// robust to a few wild values, nearly as efficient as the mean where there are none. NaN for
/// none.
pub fn trimmed_mean(values: &[f64], trim: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let cut = (sorted.len() as f64 * trim.clamp(0.0, 0.49)) as usize;
    let kept = &sorted[cut..sorted.len() - cut];
    kept.iter().sum::<f64>() / kept.len() as f64
}

/// The ratio over units taken one after another (processes), each giving its mean log-ratio:
/// the units are cut into `blocks` consecutive blocks of near-equal size (as many as there are
/// units, if fewer), and the t interval is over the blocks' means, with `blocks - 1` degrees of
/// freedom, exponentiated. Units that follow each other share the machine's state of those
/// seconds; a block mean holds that state, so drift over the run widens the interval instead
/// of hiding between neighbours. `None` for fewer than two units.
pub fn blocked_ratio(log_ratios: &[f64], blocks: usize) -> Option<RatioInterval> {
    let count = log_ratios.len();
    let blocks = blocks.min(count);
    if blocks < 2 {
        return None;
    }
    let means: Vec<f64> = (0..blocks)
        .map(|block| {
            let of_block = &log_ratios[block * count / blocks..(block + 1) * count / blocks];
            of_block.iter().sum::<f64>() / of_block.len() as f64
        })
        .collect();
    Some(exp_interval(&means))
}

/// The difference test of two runs' estimates of one quantity: whether `|b - a|` lies within
/// the 95% interval of the difference, `sqrt(h_a² + h_b²)` (`h` the half-widths). With correct
/// independent 95% intervals this holds for about 95% of arms; "b inside a's interval" cannot
/// reach that (about 83% for two equally precise exact intervals).
pub fn agrees(a: f64, half_a: f64, b: f64, half_b: f64) -> bool {
    (b - a).abs() <= (half_a * half_a + half_b * half_b).sqrt()
}

/// Kendall's rank correlation (tau-b, ties counted on neither side) of two measurements of the
/// same items: 1 when both order every pair alike, -1 when every pair flips, about 0 when the
/// orders are unrelated. `None` for fewer than two items or an order that is all ties.
pub fn kendall_tau(pairs: &[(f64, f64)]) -> Option<f64> {
    let (mut concordant, mut discordant, mut tied_a, mut tied_b) = (0u64, 0u64, 0u64, 0u64);
    for (index, (a1, b1)) in pairs.iter().enumerate() {
        for (a2, b2) in &pairs[index + 1..] {
            let (da, db) = (a1.total_cmp(a2), b1.total_cmp(b2));
            match (da.is_eq(), db.is_eq()) {
                (true, true) => {}
                (true, false) => tied_a += 1,
                (false, true) => tied_b += 1,
                (false, false) if da == db => concordant += 1,
                (false, false) => discordant += 1,
            }
        }
    }
    let ordered_a = (concordant + discordant + tied_b) as f64;
    let ordered_b = (concordant + discordant + tied_a) as f64;
    (ordered_a > 0.0 && ordered_b > 0.0)
        .then(|| (concordant as f64 - discordant as f64) / (ordered_a * ordered_b).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn across_sessions_adds_the_session_variance_on_satterthwaite_degrees_of_freedom() {
        let estimate = SessionEstimate {
            log: 0.5,
            variance: 0.01f64.powi(2),
        };
        let spread = SessionSpread {
            sigma: 0.02,
            ratios: 1,
            degrees_of_freedom: 8,
            floored: false,
        };
        let interval = across_sessions(estimate, 7, &spread);
        // v = 1e-4, σ² = 4e-4: total 5e-4; df = 25e-8 / (1e-8/7 + 16e-8/8) = 11.7, so 11.
        let half = t_975(11) * 5e-4f64.sqrt();
        assert!((interval.ratio - 0.5f64.exp()).abs() < 1e-12);
        assert!((interval.log_half_width() - half).abs() < 1e-12, "{interval:?}");
        // No spread between sessions: the within-session t interval on its own df.
        let none = SessionSpread { sigma: 0.0, ..spread };
        let alone = across_sessions(estimate, 7, &none);
        assert!(
            (alone.log_half_width() - t_975(7) * 0.01).abs() < 1e-12,
            "{alone:?}"
        );
    }

    #[test]
    fn kendall_tau_counts_pairs_ordered_alike() {
        let same = [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0), (4.0, 40.0)];
        assert_eq!(kendall_tau(&same), Some(1.0));
        let reversed = [(1.0, 40.0), (2.0, 30.0), (3.0, 20.0), (4.0, 10.0)];
        assert_eq!(kendall_tau(&reversed), Some(-1.0));
        // One swapped pair of six: (5 - 1) / 6.
        let one_swap = [(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 4.0)];
        assert!(close(kendall_tau(&one_swap).unwrap(), 4.0 / 6.0, 1e-12));
        // tau-b with a tie in b: C = 5, D = 0, ties in b 1: 5 / sqrt(6 * 5) (scipy: 0.9129).
        let tie = [(1.0, 1.0), (2.0, 2.0), (3.0, 2.0), (4.0, 4.0)];
        assert!(close(kendall_tau(&tie).unwrap(), 0.912_870_929, 1e-9));
        assert_eq!(kendall_tau(&[(1.0, 1.0)]), None);
        assert_eq!(kendall_tau(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    #[test]
    fn coverage_tail_is_the_binomial_lower_tail() {
        // 20 intervals at 95%: all held, probability 1; 17 or fewer: 1 - P(18..20) = 0.0755;
        // 15 or fewer: 0.0026 (by hand from the binomial pmf).
        assert!(close(coverage_tail(20, 20, 0.95), 1.0, 1e-12));
        assert!(close(coverage_tail(17, 20, 0.95), 0.0755, 1e-4));
        assert!(close(coverage_tail(15, 20, 0.95), 0.0026, 1e-4));
    }

    #[test]
    fn batched_ratio_is_the_geometric_mean_and_batches_widen_correlated_noise() {
        // Log-ratios of ln 2 with noise that alternates within runs of 10 rounds: rounds alone
        // look independent and precise; batches of 10 see the runs for what they are.
        let noise = |round: usize| {
            if (round / 10).is_multiple_of(2) {
                0.05
            } else {
                -0.05
            }
        };
        let logs: Vec<f64> = (0..400)
            .map(|round| 2f64.ln() + noise(round) * ((round % 7) as f64 / 6.0))
            .collect();
        let by_round = batched_ratio(&logs, 1).unwrap();
        let by_batch = batched_ratio(&logs, 10).unwrap();
        assert!(close(by_batch.ratio, by_round.ratio, 1e-12));
        assert!(by_batch.low < 2.0 && 2.0 < by_batch.high, "{by_batch:?}");
        assert!(by_batch.high - by_batch.low > by_round.high - by_round.low);
        // A constant ratio: its interval is that point.
        let constant = batched_ratio(&[0.5f64.ln(); 40], 10).unwrap();
        assert!(close(constant.ratio, 0.5, 1e-12) && close(constant.low, 0.5, 1e-12));
        // Fewer than two whole batches: no interval.
        assert_eq!(batched_ratio(&[0.1; 19], 10), None);
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        // Student's t, two-sided 95% (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
        for (df, expected) in [
            (1, 12.706),
            (2, 4.303),
            (4, 2.776),
            (9, 2.262),
            (30, 2.042),
            (120, 1.980),
        ] {
            assert!(close(t_975(df), expected, 0.0015), "df {df}: {}", t_975(df));
        }
        assert!(close(t_975(1_000_000), 1.959_964, 1e-4));
        assert_eq!(t_975(0), f64::INFINITY);
    }

    #[test]
    fn interval_matches_a_hand_computation() {
        // mean 10, sample sd 1.5811 (values 8..12), n 5: half-width 2.776 * 1.5811 / sqrt(5)
        let summary = Summary::of(&[8.0, 9.0, 10.0, 11.0, 12.0]);
        assert_eq!(summary.mean, 10.0);
        assert!(close(summary.half_width, 1.9630, 1e-3), "{summary:?}");
        assert!(Summary::of(&[]).mean.is_nan());
        assert_eq!(Summary::of(&[3.0]).half_width, f64::INFINITY);
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 0.5), 2.0);
        assert_eq!(percentile(&[4.0, 1.0, 2.0, 3.0], 0.5), 2.5);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), 4.8);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn paired_ratios_cancel_the_noise_both_arms_share() {
        // Each worker runs both arms 10% faster or slower together: the ratio is 2 in every
        // pair, so the paired interval is a point, while each arm alone varies by ±10%.
        let pairs = [(220.0, 110.0), (180.0, 90.0), (200.0, 100.0), (210.0, 105.0)];
        let paired = paired_ratio(&pairs).unwrap();
        assert!(
            close(paired.ratio, 2.0, 1e-12) && close(paired.low, 2.0, 1e-9) && close(paired.high, 2.0, 1e-9)
        );
        // Log-ratios 0 and ln 2 (ratios 1 and 2): mean ln √2, sd ln2/√2, n 2:
        // half-width 12.706 · (ln 2 / √2) / √2 = 12.706 · ln 2 / 2.
        let wide = paired_ratio(&[(1.0, 1.0), (2.0, 1.0)]).unwrap();
        assert!(close(wide.ratio, 2f64.sqrt(), 1e-12));
        let half = t_975(1) * 2f64.ln() / 2.0;
        assert!(close(wide.high, (2f64.sqrt().ln() + half).exp(), 1e-9));
        assert!(paired_ratio(&[(1.0, 1.0)]).is_none());
        assert!(paired_ratio(&[(1.0, 0.0), (1.0, 1.0)]).is_none());
    }

    #[test]
    fn the_next_unit_falls_in_the_prediction_interval_not_the_mean_s() {
        // Log-ratios ln 1.1, ln 1.2, ln 1.0, ln 1.3, ln 1.15: the mean's interval is ±t₄·s/√5;
        // one more unit's is ±t₄·s·√(1 + 1/5), √6 times as wide, around the same centre.
        let pairs: Vec<(f64, f64)> = [1.1, 1.2, 1.0, 1.3, 1.15].iter().map(|&r| (r, 1.0)).collect();
        let mean = paired_ratio(&pairs).unwrap();
        let next = next_unit_ratio(&pairs).unwrap();
        assert!(close(next.ratio, mean.ratio, 1e-12));
        let logs: Vec<f64> = pairs.iter().map(|&(a, _)| a.ln()).collect();
        let centre = logs.iter().sum::<f64>() / 5.0;
        let sd = (logs.iter().map(|l| (l - centre).powi(2)).sum::<f64>() / 4.0).sqrt();
        let half = t_975(4) * sd * (1.0 + 1.0 / 5.0f64).sqrt();
        assert!(
            close(next.low, (centre - half).exp(), 1e-9) && close(next.high, (centre + half).exp(), 1e-9)
        );
        assert!(close(
            next.high.ln() - centre,
            6f64.sqrt() * (mean.high.ln() - centre),
            1e-9
        ));
        // 1.3 lies outside the mean's interval and inside the next unit's.
        assert!(!mean.holds(1.3) && next.holds(1.3));
        assert!(next_unit_ratio(&pairs[..1]).is_none());
    }

    #[test]
    fn the_difference_test_uses_the_interval_of_the_difference() {
        // Half-widths 3 and 4: the difference's is 5.
        assert!(agrees(100.0, 3.0, 105.0, 4.0));
        assert!(!agrees(100.0, 3.0, 105.1, 4.0));
        // Coverage would say no (105 is outside [97, 103]); the difference test says yes.
        assert!(agrees(100.0, 3.0, 104.9, 4.0));
    }

    #[test]
    fn ratios_agree_by_the_difference_test_on_the_log_scale() {
        let interval = |ratio: f64, low: f64, high: f64| RatioInterval { ratio, low, high };
        // 2 [2/e^0.03, 2·e^0.04]: the wider side, 0.04.
        let a = interval(2.0, 2.0 / 0.03f64.exp(), 2.0 * 0.04f64.exp());
        assert!(close(a.log_half_width(), 0.04, 1e-12));
        // Against ±0.03 on the log scale: the difference's half-width is 0.05.
        let at = |log_distance: f64| {
            let ratio = 2.0 * log_distance.exp();
            interval(ratio, ratio / 0.03f64.exp(), ratio * 0.03f64.exp())
        };
        assert!(a.agrees_with(&at(0.0499)) && at(0.0499).agrees_with(&a));
        assert!(a.agrees_with(&at(-0.0499)));
        assert!(!a.agrees_with(&at(0.0501)) && !at(-0.0501).agrees_with(&a));
    }

    #[test]
    fn a_tie_holds_one_or_lies_inside_the_spread() {
        let interval = |ratio, low, high| RatioInterval { ratio, low, high };
        // Holds 1, however wide.
        assert!(interval(1.2, 0.9, 1.6).is_tie(LAYOUT_SPREAD));
        assert!(!interval(1.2, 0.9, 1.6).inside_spread(LAYOUT_SPREAD));
        // Excludes 1 but inside [1/1.035, 1.035] on either side.
        assert!(interval(1.012, 1.004, 1.020).is_tie(0.035));
        assert!(interval(0.98, 0.967, 0.99).is_tie(0.035));
        // The bounds themselves are inside; a hair beyond is not.
        assert!(interval(1.02, 1.01, 1.035).is_tie(0.035));
        assert!(!interval(1.02, 1.01, 1.0351).is_tie(0.035));
        assert!(interval(0.98, 1.0 / 1.035, 0.99).is_tie(0.035));
        assert!(!interval(0.98, 0.966, 0.99).is_tie(0.035));
        // Apart: excludes 1 and reaches beyond the spread.
        assert!(!interval(1.05, 1.03, 1.07).is_tie(0.035));
        // No spread: only holding 1 is a tie.
        assert!(!interval(1.012, 1.004, 1.020).is_tie(0.0));
        assert!(!interval(f64::NAN, f64::NAN, f64::NAN).is_tie(0.035));
    }

    #[test]
    fn independent_ratio_widens_on_the_log_scale() {
        // 200 ± 2% over 100 ± 1.5%: ratio 2, log half-width sqrt(0.02² + 0.015²) = 0.025.
        let interval = independent_ratio(200.0, 0.02, 100.0, 0.015);
        assert_eq!(interval.ratio, 2.0);
        assert!(close(interval.low, 2.0 / 0.025f64.exp(), 1e-12));
        assert!(close(interval.high, 2.0 * 0.025f64.exp(), 1e-12));
    }

    #[test]
    fn welch_ratio_of_two_groups_and_the_repetitions_rule() {
        // Logs of a: 0, 0.2 (mean 0.1, var 0.02); of b: 0, 0 (var 0): difference 0.1, variance
        // 0.01 over df 1: t_975(1) = 12.706, half 1.2706.
        let a = [1.0, 0.2f64.exp()];
        let b = [1.0, 1.0];
        let interval = welch_ratio(&a, &b).unwrap();
        assert!((interval.ratio - 0.1f64.exp()).abs() < 1e-12);
        assert!(
            (interval.high.ln() - (0.1 + 12.706_2 * 0.1)).abs() < 1e-3,
            "{interval:?}"
        );
        assert!(welch_ratio(&a, &[1.0]).is_none());
        assert!(
            welch_ratio(&[1.0, 2.0, 1.5], &[1.0, 2.0, 1.5])
                .unwrap()
                .holds(1.0)
        );
        // sqrt(100 / 1 * 4 / 1) = 20 rounds per process; none without an upper variance.
        assert_eq!(repetitions_per_unit(4.0, 1.0, 1.0, 100.0), Some(20.0));
        assert_eq!(repetitions_per_unit(4.0, 0.0, 1.0, 100.0), None);
        // Ten values, a tenth cut at each end: the wild 50 and -40 go.
        let values = [1.0, 2.0, 3.0, 4.0, 50.0, 2.0, 3.0, 1.0, 4.0, -40.0];
        assert_eq!(trimmed_mean(&values, 0.1), 20.0 / 8.0);
        assert_eq!(trimmed_mean(&values, 0.0), 30.0 / 10.0);
        // Five units in two blocks, [0.1, 0.1] and [0.4, 0.4, 0.4]: the mean of 0.1 and 0.4.
        let blocked = blocked_ratio(&[0.1, 0.1, 0.4, 0.4, 0.4], 2).unwrap();
        assert!((blocked.ratio - 0.25f64.exp()).abs() < 1e-12);
        assert!(
            (blocked.high.ln() - (0.25 + 12.706_2 * 0.15)).abs() < 1e-3,
            "{blocked:?}"
        );
        // Fewer units than blocks: each unit its own block.
        let units = blocked_ratio(&[0.1, 0.3], 8).unwrap();
        assert!((units.ratio - 0.2f64.exp()).abs() < 1e-12);
        assert!(blocked_ratio(&[0.1], 8).is_none());
    }
}

//! The report's deterministic-cost section: where a folder holds instructions.csv beside its
//! results.csv (`run --measure instructions --out` the same folder), each section's arms by
//! estimated cycles next to their wall time, and every pair of arms the two rank differently.
//! Cycles come from a simulated machine, so a disagreement is either the model missing what
//! the CPU does (branch prediction, prefetching, out-of-order overlap) or wall-time noise: each
//! pair's wall-time ratio is given with its interval, so the first can be told from the second.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::Result;

use super::text::{code, ratio, ratio_interval, table};
use crate::arm::{ArmId, Operation};
use crate::escape;
use crate::schema::instructions::InstructionRow;
use crate::schema::ratios::ratio_of;
use crate::schema::results::{ResultRow, STATUS_OK};

/// Pairs listed per section; the rest are counted.
const LISTED_PAIRS: usize = 6;

/// One arm with both a wall time and a count.
struct Costed<'a> {
    arm: &'a ArmId,
    wall: &'a ResultRow,
    count: &'a InstructionRow,
}

impl Costed<'_> {
    fn ns(&self) -> f64 {
        self.wall.ns_per_record.unwrap_or(f64::NAN)
    }

    fn cycles(&self) -> f64 {
        self.count.estimated_cycles_per_op.unwrap_or(f64::NAN) / self.count.records as f64
    }
}

/// A pair the two measures rank differently: `cheaper` by cycles, `faster` by wall time.
struct Disagreement<'a> {
    cheaper: &'a Costed<'a>,
    faster: &'a Costed<'a>,
    /// The cheaper arm's wall time over the faster one's, with its approximate 95% interval.
    ratio: (f64, f64, f64),
    /// That interval excludes 1.
    apart: bool,
}

/// Every pair of `arms` that cycles and wall time order differently.
fn disagreements<'a>(arms: &'a [Costed<'a>]) -> Vec<Disagreement<'a>> {
    let mut pairs = Vec::new();
    for (index, a) in arms.iter().enumerate() {
        for b in &arms[index + 1..] {
            let (cheaper, dearer) = if a.cycles() <= b.cycles() { (a, b) } else { (b, a) };
            if cheaper.cycles() < dearer.cycles() && dearer.ns() < cheaper.ns() {
                let ratio = ratio_of(cheaper.wall, dearer.wall).unwrap_or((
                    cheaper.ns() / dearer.ns(),
                    0.0,
                    f64::INFINITY,
                ));
                pairs.push(Disagreement {
                    cheaper,
                    faster: dearer,
                    ratio,
                    apart: ratio.1 > 1.0,
                });
            }
        }
    }
    pairs.sort_by_key(|pair| std::cmp::Reverse(pair.apart));
    pairs
}

/// The section for one folder's rows and counts; nothing when no section has two arms with both.
pub fn write_section(
    markdown: &mut String,
    label: &str,
    rows: &[ResultRow],
    counts: &[InstructionRow],
) -> Result<()> {
    let walls: BTreeMap<&ArmId, &ResultRow> = rows
        .iter()
        .filter(|row| row.status == STATUS_OK && row.ns_per_record.is_some())
        .map(|row| (&row.arm, row))
        .collect();
    let mut sections: BTreeMap<(&str, Operation), Vec<Costed>> = BTreeMap::new();
    for count in counts
        .iter()
        .filter(|count| count.status == STATUS_OK && count.estimated_cycles_per_op.is_some())
    {
        if let Some(wall) = walls.get(&count.arm) {
            let key = (count.arm.codec.payload.as_str(), count.arm.operation);
            sections.entry(key).or_default().push(Costed {
                arm: &count.arm,
                wall,
                count,
            });
        }
    }
    sections.retain(|_, arms| arms.len() >= 2);
    if sections.is_empty() {
        return Ok(());
    }
    for arms in sections.values_mut() {
        arms.sort_by(|a, b| a.cycles().total_cmp(&b.cycles()).then_with(|| a.arm.cmp(b.arm)));
    }
    let all: Vec<(&(&str, Operation), Vec<Disagreement>)> = sections
        .iter()
        .map(|(key, arms)| (key, disagreements(arms)))
        .collect();
    let pairs: usize = sections
        .values()
        .map(|arms| arms.len() * (arms.len() - 1) / 2)
        .sum();
    let flipped: usize = all.iter().map(|(_, pairs)| pairs.len()).sum();
    let apart: usize = all
        .iter()
        .map(|(_, pairs)| pairs.iter().filter(|pair| pair.apart).count())
        .sum();
    let flagged = all.iter().filter(|(_, pairs)| !pairs.is_empty()).count();

    writeln!(
        markdown,
        "## Deterministic cost against wall time: {}\n",
        escape::markdown(label)
    )?;
    writeln!(
        markdown,
        "Estimated cycles per record under callgrind's cache simulation (instructions.csv; an L1 \
         hit 1 cycle, a last-level hit 5, a RAM access 35: iai-callgrind's model), beside the \
         wall time of the same arms. {flagged} of {} sections rank some pair of arms differently: \
         {flipped} of {pairs} pairs, {apart} of them with a wall-time ratio whose 95% interval \
         excludes 1 (the model misses what the CPU does there; the others may be noise).\n",
        sections.len()
    )?;
    for ((payload, operation), arms) in &sections {
        let cheapest = arms[0].cycles();
        let fastest = arms.iter().map(Costed::ns).fold(f64::INFINITY, f64::min);
        writeln!(
            markdown,
            "### {} {}\n",
            escape::markdown(payload),
            operation.name()
        )?;
        let header: Vec<String> = [
            "arm",
            ">est. cycles/record",
            ">vs cheapest",
            ">ns/record",
            ">vs fastest",
            ">instructions/record",
            ">D1 misses/op",
            ">LL misses/op",
        ]
        .map(String::from)
        .to_vec();
        let cells: Vec<Vec<String>> = arms
            .iter()
            .map(|arm| {
                vec![
                    code(&arm.arm.label()),
                    format!("{:.1}", arm.cycles()),
                    ratio(arm.cycles() / cheapest),
                    format!("{:.1}", arm.ns()),
                    ratio(arm.ns() / fastest),
                    arm.count
                        .instructions_per_record
                        .map_or("-".into(), |count| format!("{count:.1}")),
                    arm.count
                        .d1_misses_per_op
                        .map_or("-".into(), |count| format!("{count:.1}")),
                    arm.count
                        .ll_misses_per_op
                        .map_or("-".into(), |count| format!("{count:.1}")),
                ]
            })
            .collect();
        markdown.push_str(&table(&header, &cells));
        let pairs = &all
            .iter()
            .find(|(key, _)| *key == &(*payload, *operation))
            .expect("every section")
            .1;
        if !pairs.is_empty() {
            writeln!(markdown, "\n**Ranked differently** ({} pairs):\n", pairs.len())?;
            for pair in pairs.iter().take(LISTED_PAIRS) {
                writeln!(
                    markdown,
                    "- {} costs {} the cycles of {} but runs {} its time{}",
                    code(&pair.cheaper.arm.label()),
                    ratio(pair.cheaper.cycles() / pair.faster.cycles()),
                    code(&pair.faster.arm.label()),
                    ratio_interval(pair.ratio.0, pair.ratio.1, pair.ratio.2),
                    if pair.apart {
                        " (apart)"
                    } else {
                        " (the interval holds 1: may be noise)"
                    }
                )?;
            }
            if pairs.len() > LISTED_PAIRS {
                writeln!(markdown, "- and {} more", pairs.len() - LISTED_PAIRS)?;
            }
        }
        writeln!(markdown)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(format: &str) -> ArmId {
        ArmId::typed(format, format, "", "order", Operation::Decode)
    }

    fn wall(format: &str, ns: f64, half_width: f64) -> ResultRow {
        ResultRow {
            arm: arm(format),
            records: 1,
            status: STATUS_OK.into(),
            ns_per_record: Some(ns),
            mean_ns: Some(ns),
            ci95_low_ns: Some(ns - half_width),
            ci95_high_ns: Some(ns + half_width),
            ..ResultRow::default()
        }
    }

    fn count(format: &str, cycles: f64) -> InstructionRow {
        InstructionRow {
            arm: arm(format),
            records: 1,
            iterations: 20,
            instructions_per_op: Some(cycles / 2.0),
            instructions_per_record: Some(cycles / 2.0),
            d1_misses_per_op: Some(1.0),
            ll_misses_per_op: Some(0.0),
            estimated_cycles_per_op: Some(cycles),
            status: STATUS_OK.into(),
            ..InstructionRow::default()
        }
    }

    #[test]
    fn pairs_ranked_differently_are_flagged_and_told_apart_from_noise() {
        // By cycles a < b < c; by wall time c is fastest (clearly, against a; within noise,
        // against b), and a is faster than b within noise.
        let rows = [wall("a", 100.0, 2.0), wall("b", 99.0, 2.0), wall("c", 90.0, 2.0)];
        let counts = [count("a", 1000.0), count("b", 1100.0), count("c", 1500.0)];
        let mut markdown = String::new();
        write_section(&mut markdown, "x86_64-linux", &rows, &counts).unwrap();
        assert!(markdown.contains("1 of 1 sections rank some pair of arms differently: 3 of 3 pairs, 2 of them with a wall-time ratio whose 95% interval excludes 1"), "{markdown}");
        assert!(
            markdown.contains(
                "- `a/a` costs 0.67x the cycles of `c/c` but runs 1.11x [1.08, 1.14] its time (apart)"
            ),
            "{markdown}"
        );
        assert!(markdown.contains("- `a/a` costs 0.91x the cycles of `b/b` but runs 1.01x [0.98, 1.04] its time (the interval holds 1: may be noise)"), "{markdown}");
        // The table is in cycle order.
        let order: Vec<usize> = ["`a/a`", "`b/b`", "`c/c`"]
            .iter()
            .map(|name| markdown.find(&format!("| {name}")).unwrap())
            .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{markdown}");
    }

    #[test]
    fn agreeing_measures_flag_nothing_and_lone_arms_make_no_section() {
        let rows = [wall("a", 50.0, 1.0), wall("b", 99.0, 2.0)];
        let mut markdown = String::new();
        write_section(&mut markdown, "h", &rows, &[count("a", 500.0), count("b", 900.0)]).unwrap();
        assert!(
            markdown.contains("0 of 1 sections") && !markdown.contains("Ranked differently"),
            "{markdown}"
        );
        let mut lone = String::new();
        write_section(&mut lone, "h", &rows, &[count("a", 500.0)]).unwrap();
        assert_eq!(lone, "");
    }
}

//! How busy the machine was while arms were measured, from what Linux's `/proc` shows: the
//! 1-minute load average and the share of CPU time stolen by the hypervisor. Recorded beside
//! each result, and a run warns when it was measured on a busy machine. Elsewhere (macOS) the
//! figures are empty.

/// The machine's state over a span of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Busy {
    /// The 1-minute load average at the span's end (runnable tasks; serbench's own measuring
    /// process is one of them).
    pub load_1m: f64,
    /// The percentage of all CPU time, over the span, that the hypervisor gave to other guests
    /// (`steal` in /proc/stat); 0 where the hypervisor does not report it.
    pub stolen_percent: f64,
}

/// A load average above this many tasks besides serbench's own measuring process means
/// another program wanted half a core or more.
pub const BUSY_LOAD_BEYOND_OURS: f64 = 0.5;
/// Stolen time above this percentage means the host's other guests took time from the run.
pub const BUSY_STOLEN_PERCENT: f64 = 1.0;

impl Busy {
    /// Whether another program or guest shared the machine enough to slow and spread the times.
    pub fn was_busy(&self) -> bool {
        self.load_1m - 1.0 > BUSY_LOAD_BEYOND_OURS || self.stolen_percent > BUSY_STOLEN_PERCENT
    }

    /// From a row's two columns: both recorded, or none.
    pub fn of_columns(load_1m: Option<f64>, stolen_percent: Option<f64>) -> Option<Busy> {
        Some(Busy {
            load_1m: load_1m?,
            stolen_percent: stolen_percent?,
        })
    }

    /// A row's two columns (`load_1m`, `stolen_percent`), empty where nothing was recorded.
    pub fn columns(busy: Option<Busy>) -> (Option<f64>, Option<f64>) {
        (
            busy.map(|busy| busy.load_1m),
            busy.map(|busy| busy.stolen_percent),
        )
    }

    /// The busier of two spans, field by field.
    pub fn max(self, other: Busy) -> Busy {
        Busy {
            load_1m: self.load_1m.max(other.load_1m),
            stolen_percent: self.stolen_percent.max(other.stolen_percent),
        }
    }
}

/// The CPU time counters at the start of a span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    steal: u64,
    total: u64,
}

/// Marks the start of a span; `None` without /proc/stat.
pub fn mark() -> Option<Mark> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

impl Mark {
    /// The machine's state from this mark to now; `None` without /proc.
    pub fn since(&self) -> Option<Busy> {
        let now = mark()?;
        let load = std::fs::read_to_string("/proc/loadavg").ok()?;
        Some(Busy {
            load_1m: parse_loadavg(&load)?,
            stolen_percent: stolen_percent(*self, now),
        })
    }
}

/// The first field of /proc/loadavg.
fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The steal counter and the total of the aggregate `cpu` line of /proc/stat (user nice
/// system idle iowait irq softirq steal; guest time is already inside user).
fn parse_stat(text: &str) -> Option<Mark> {
    let line = text.lines().find(|line| line.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|field| field.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    Some(Mark {
        steal: *fields.get(7).unwrap_or(&0),
        total: fields.iter().sum(),
    })
}

fn stolen_percent(start: Mark, end: Mark) -> f64 {
    let total = end.total.saturating_sub(start.total);
    match total {
        0 => 0.0,
        _ => 100.0 * end.steal.saturating_sub(start.steal) as f64 / total as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_load_and_the_stolen_share_of_procs_counters() {
        assert_eq!(parse_loadavg("1.52 0.80 0.41 3/412 9911\n"), Some(1.52));
        let start = parse_stat("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n").unwrap();
        let end = parse_stat("cpu  150 0 60 880 10 0 0 60 0 0\n").unwrap();
        // 160 jiffies passed, 20 of them stolen.
        assert_eq!(stolen_percent(start, end), 12.5);
        assert_eq!(parse_stat("intr 1 2\n"), None);
        let busy = Busy {
            load_1m: 1.2,
            stolen_percent: 12.5,
        };
        assert!(busy.was_busy(), "stolen time");
        let idle = Busy {
            load_1m: 1.2,
            stolen_percent: 0.2,
        };
        assert!(!idle.was_busy(), "serbench's own process and a little more");
        assert!(Busy { load_1m: 2.1, ..idle }.was_busy(), "another busy process");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_machine_has_the_counters() {
        let busy = mark().and_then(|mark| mark.since()).expect("/proc on Linux");
        assert!(
            busy.load_1m >= 0.0 && (0.0..=100.0).contains(&busy.stolen_percent),
            "{busy:?}"
        );
    }
}

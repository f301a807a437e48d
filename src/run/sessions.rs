//! `vs`'s earlier invocations of this build on this host, one JSON line each in the private cache
//! (`sessions/<build key>.jsonl`), and the spread between them: what an invocation's own seconds
//! cannot show, the host's state over minutes and hours (docs/measurement.md, "Later runs").

use std::io::{BufRead, BufReader, Write};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::versus::Outcome;
use crate::arm::Operation;
use crate::files::{PrivateDir, cache_root};
use crate::stats::{RatioInterval, SessionEstimate, SessionSpread, across_sessions, session_spread, t_975};

/// Sessions of its own pair (this one counted) from which a pair's spread is its own; with
/// fewer, the spread is pooled over every pair this build measured on this host.
pub const OWN_SESSIONS: usize = 5;

/// One invocation's estimate of `a / b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub host: String,
    pub payload: String,
    pub operation: Operation,
    pub a: String,
    pub b: String,
    /// ln of the ratio and that estimate's variance within the invocation.
    pub log: f64,
    pub variance: f64,
    /// Seconds since the Unix epoch when it ended.
    pub unix_s: u64,
}

impl Session {
    /// The pair whatever its order, and this estimate as `first / second` of that pair.
    fn pair(&self) -> ((&str, Operation, &str, &str), SessionEstimate) {
        let (first, second, sign) = if self.a <= self.b {
            (&self.a, &self.b, 1.0)
        } else {
            (&self.b, &self.a, -1.0)
        };
        (
            (&self.payload, self.operation, first, second),
            SessionEstimate {
                log: sign * self.log,
                variance: self.variance,
            },
        )
    }

    pub fn estimate(&self) -> SessionEstimate {
        SessionEstimate {
            log: self.log,
            variance: self.variance,
        }
    }
}

/// What the spread between sessions is taken to be before a host shows its own, pooled with what
/// it shows as 4 sessions' worth of degrees of freedom: σ_s of the five pairs of
/// docs/measurement.md ("Later runs") on this project's 2-core VM, 1.49% and 2.18% in two sets
/// of ten invocations an hour apart, about the lower.
pub const PRIOR: SessionSpread = SessionSpread {
    sigma: 0.015,
    ratios: 0,
    degrees_of_freedom: 4,
    floored: false,
};

/// Where the spread of a session came from, besides [`PRIOR`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// No pair measured twice on this host yet: the prior alone.
    Prior,
    /// The pair's own sessions, this one counted.
    Own { sessions: usize },
    /// Every pair's sessions on this host and build.
    Pooled { pairs: usize, sessions: usize },
}

/// The spread between sessions that applies to `current`, from `sessions` (earlier ones and
/// `current`, of any host) pooled with [`PRIOR`]: of its own pair where it has
/// [`OWN_SESSIONS`], else of every pair measured at least twice on `current`'s host, else the
/// prior alone.
pub fn spread_for(sessions: &[Session], current: &Session) -> (SessionSpread, Basis) {
    let (key, _) = current.pair();
    let mut groups: std::collections::BTreeMap<_, Vec<SessionEstimate>> = Default::default();
    for session in sessions.iter().filter(|session| session.host == current.host) {
        let (pair, estimate) = session.pair();
        groups.entry(pair).or_default().push(estimate);
    }
    let own = groups.get(&key).map_or(0, Vec::len);
    if own >= OWN_SESSIONS
        && let Some(spread) = session_spread(&[groups[&key].clone()])
    {
        return (spread.pooled_with(&PRIOR), Basis::Own { sessions: own });
    }
    let groups: Vec<Vec<SessionEstimate>> = groups.into_values().collect();
    let Some(spread) = session_spread(&groups) else {
        return (PRIOR, Basis::Prior);
    };
    let sessions = groups.iter().filter(|group| group.len() >= 2).map(Vec::len).sum();
    (
        spread.pooled_with(&PRIOR),
        Basis::Pooled {
            pairs: spread.ratios,
            sessions,
        },
    )
}

/// The log of one build's sessions.
pub struct SessionLog {
    dir: PrivateDir,
    name: String,
}

impl SessionLog {
    /// The log of the build whose key is `build_key` ([`super::layouts::build_key`]).
    pub fn of_build(build_key: &str) -> Result<SessionLog> {
        Ok(SessionLog {
            dir: cache_root()?.child("sessions")?,
            name: format!("{build_key}.jsonl"),
        })
    }

    /// Every session in the log (none before the first).
    pub fn read(&self) -> Result<Vec<Session>> {
        let Some(file) = self.dir.existing_file(&self.name)? else {
            return Ok(Vec::new());
        };
        let path = self.dir.join(&self.name);
        let mut sessions = Vec::new();
        for (index, line) in BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| format!("cannot read {}", path.display()))?;
            let session = serde_json::from_str(&line).with_context(|| {
                format!(
                    "{} line {}: not a session of `serbench vs` (remove the file to start its \
                     history again)",
                    path.display(),
                    index + 1
                )
            })?;
            sessions.push(session);
        }
        Ok(sessions)
    }

    /// Adds `session` under the log's lock: the log with it written beside and renamed over
    /// it, so a reader sees the old log or the new, never half of it. Returns every session the
    /// log now holds, as read under that lock.
    pub fn append(&self, session: &Session) -> Result<Vec<Session>> {
        let _lock = self.dir.lock(&format!("{}.lock", self.name), || {})?;
        let mut sessions = self.read()?;
        sessions.push(session.clone());
        let fresh = format!("{}.new", self.name);
        let mut file = self.dir.rewrite_file(&fresh, 0o600)?;
        for session in &sessions {
            serde_json::to_writer(&mut file, session)?;
            file.write_all(b"\n")?;
        }
        file.sync_all()
            .with_context(|| format!("cannot write {}", self.dir.join(&fresh).display()))?;
        self.dir.rename(&fresh, &self.name)?;
        Ok(sessions)
    }
}

/// A `vs` interval widened by the spread between sessions, and the words that say so.
pub struct Across {
    pub interval: RatioInterval,
    pub sigma: f64,
    pub words: String,
}

/// `measured` (one invocation of `vs` over processes) recorded in this build's session log, and
/// its interval widened by the spread between sessions that log shows on this host with the
/// prior ([`spread_for`], [`across_sessions`]). When the log cannot be used (said in one line on
/// standard error) the prior alone widens it: the measurement is not lost for it.
pub fn across(payload: &str, operation: Operation, a: &str, b: &str, measured: &Outcome) -> Across {
    let within = measured.interval.log_half_width() / t_975(measured.degrees_of_freedom);
    let current = Session {
        host: crate::host::Host::detect().host,
        payload: payload.to_string(),
        operation,
        a: a.to_string(),
        b: b.to_string(),
        log: measured.interval.ratio.ln(),
        variance: within * within,
        unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs()),
    };
    let (spread, from) = match recorded(&current) {
        Ok(sessions) => match spread_for(&sessions, &current) {
            (spread, Basis::Prior) => (
                spread,
                "serbench's prior: no pair measured twice here yet".to_string(),
            ),
            (spread, Basis::Own { sessions }) => {
                (spread, format!("{sessions} sessions of this pair and the prior"))
            }
            (spread, Basis::Pooled { pairs, sessions }) => (
                spread,
                format!(
                    "{sessions} sessions of {pairs} pair{} on this host and the prior",
                    if pairs == 1 { "" } else { "s" }
                ),
            ),
        },
        Err(error) => {
            eprintln!(
                "serbench: the session log is not used: {}",
                crate::escape::terminal(&format!("{error:#}"))
            );
            (
                PRIOR,
                "serbench's prior: no session log, see standard error".to_string(),
            )
        }
    };
    Across {
        interval: across_sessions(current.estimate(), measured.degrees_of_freedom, &spread),
        sigma: spread.sigma,
        words: format!(
            ", and the spread between sessions: {:.1}% ({from})",
            spread.sigma * 100.0
        ),
    }
}

/// The sessions of this build's log with `current` added to it.
fn recorded(current: &Session) -> Result<Vec<Session>> {
    SessionLog::of_build(&super::layouts::build_key()?)?.append(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(host: &str, a: &str, b: &str, log: f64) -> Session {
        Session {
            host: host.into(),
            payload: "order".into(),
            operation: Operation::Decode,
            a: a.into(),
            b: b.into(),
            log,
            variance: 0.01f64.powi(2),
            unix_s: 0,
        }
    }

    #[test]
    fn a_pair_with_few_sessions_takes_the_pooled_spread_and_with_enough_its_own_each_with_the_prior() {
        // Pair x/y swings by ±0.05 (either order of its arms, the log negated); pair p/q is calm.
        let mut sessions = vec![
            session("here", "x", "y", 0.05),
            session("here", "y", "x", 0.05),
            session("here", "p", "q", 0.0),
            session("here", "p", "q", 0.0),
            // Another host's sessions are not counted.
            session("there", "p", "q", 1.0),
            session("there", "p", "q", -1.0),
        ];
        let current = session("here", "p", "q", 0.0);
        let (pooled, basis) = spread_for(&sessions, &current);
        assert_eq!(
            basis,
            Basis::Pooled {
                pairs: 2,
                sessions: 4
            }
        );
        // x/y: logs 0.05 and -0.05, variance 0.005 less 1e-4; p/q: 0 less 1e-4; 1 df each, so
        // 0.0024 on 2 df; with the prior's 4 df at 0.015²: (2·0.0024 + 4·0.000225) / 6.
        let expected = ((2.0 * 0.0024 + 4.0 * 0.000225) / 6.0f64).sqrt();
        assert!((pooled.sigma - expected).abs() < 1e-12, "{pooled:?}");
        assert_eq!(pooled.degrees_of_freedom, 6);
        sessions.extend((0..3).map(|_| session("here", "q", "p", 0.0)));
        let (own, basis) = spread_for(&sessions, &current);
        assert_eq!(basis, Basis::Own { sessions: 5 });
        // Its own five show no spread (0 on 4 df), the prior 0.015² on 4.
        assert!(
            (own.sigma - (4.0 * 0.000225 / 8.0f64).sqrt()).abs() < 1e-12,
            "{own:?}"
        );
        // No pair measured twice: the prior alone.
        assert_eq!(spread_for(&sessions[..1], &current), (PRIOR, Basis::Prior));
    }

    #[test]
    fn the_log_keeps_every_session_and_refuses_a_line_it_did_not_write() {
        let cache = tempfile::tempdir().unwrap();
        let root = PrivateDir::open(&cache.path().join("c"), "test").unwrap();
        let log = SessionLog {
            dir: root.child("sessions").unwrap(),
            name: "k.jsonl".into(),
        };
        assert_eq!(log.read().unwrap(), vec![]);
        let first = session("here", "a`<b>", "b\n\"c\"", 0.1);
        assert_eq!(log.append(&first).unwrap(), vec![first.clone()]);
        let appended = log.append(&session("here", "a", "b", 0.2)).unwrap();
        let read = log.read().unwrap();
        assert_eq!(read, appended);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0], first);
        std::fs::write(log.dir.join("k.jsonl"), "{\"host\": 1}\n").unwrap();
        let error = format!("{:#}", log.read().unwrap_err());
        assert!(error.contains("k.jsonl line 1: not a session"), "{error}");
    }
}

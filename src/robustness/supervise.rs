//! The parent's side: runs one decoder's cases in a worker process, reads one line per
//! finished case, and when the worker dies (an abort for an allocation over the cap, a stack
//! overflow) or falls silent (a hang), records the case it was in and starts a new worker from
//! the next case.
//!
//! The lines a worker writes are [`crate::worker`]'s (`READY`, `CASE` on stdout, `START` on
//! stderr before each case); the capped allocator writes `ALLOC-CAP requested=<bytes>` to stderr
//! when it refuses a request. What stderr holds after the last `START` says why a worker died.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child as Process, Command, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::report::Outcome;
use crate::worker::{self, CaseLine, CaseReport, Request};

/// What a worker said or did next.
#[derive(Debug)]
pub enum Event {
    Ready {
        cases: usize,
    },
    Case(CaseReport),
    /// The worker is gone; every line it wrote has been read.
    Exited(Exit),
    /// Nothing within the case timeout.
    Silent,
}

/// How a worker ended, and what it wrote to stderr after its last `START`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exit {
    pub success: bool,
    /// `exit code 3`, `signal 6 (SIGABRT)`, `killed`.
    pub status: String,
    pub last_start: Option<usize>,
    pub stderr_tail: String,
}

/// A running worker, as the supervisor sees it (a process, or a script in the tests).
pub trait Worker {
    fn next_event(&mut self, timeout: Duration) -> Event;
    fn kill(&mut self) -> Exit;
}

/// Runs cases `0..cases` through workers started by `spawn(first_case)`, one worker after the
/// other, handing each case's report to `on_case` in case order (nothing is kept here, so any
/// number of cases takes the same memory). Fails only when a worker cannot run at all (it dies
/// three times in a row before starting a case), or speaks out of turn.
pub fn supervise(
    cases: usize,
    timeout: Duration,
    spawn: &mut dyn FnMut(usize) -> Result<Box<dyn Worker>>,
    on_case: &mut dyn FnMut(CaseReport),
) -> Result<()> {
    let mut done = 0;
    let mut failed_starts = 0;
    while done < cases {
        let mut worker = spawn(done)?;
        loop {
            match worker.next_event(timeout) {
                Event::Ready { cases: planned } => {
                    if planned != cases {
                        worker.kill();
                        bail!("the worker planned {planned} cases, the parent {cases}: not the same binary?");
                    }
                }
                Event::Case(report) => {
                    if report.index != done {
                        worker.kill();
                        bail!(
                            "the worker reported case {} while case {done} was due",
                            report.index
                        );
                    }
                    on_case(report);
                    done += 1;
                    failed_starts = 0;
                }
                Event::Exited(exit) => {
                    if done < cases {
                        if exit.last_start == Some(done) {
                            on_case(death(done, &exit));
                            done += 1;
                            failed_starts = 0;
                        } else {
                            failed_starts += 1;
                            if failed_starts >= 3 {
                                bail!(
                                    "the worker died before case {done} three times: {} {}",
                                    exit.status,
                                    exit.stderr_tail.trim()
                                );
                            }
                        }
                    }
                    break;
                }
                Event::Silent => {
                    let exit = worker.kill();
                    if exit.last_start != Some(done) {
                        bail!(
                            "the worker fell silent before case {done}: {}",
                            exit.stderr_tail.trim()
                        );
                    }
                    on_case(CaseReport {
                        index: done,
                        outcome: Outcome::Timeout,
                        peak_bytes: 0,
                        detail: format!("no answer within {} s", timeout.as_secs_f64()),
                    });
                    done += 1;
                    break;
                }
            }
        }
    }
    Ok(())
}

/// The case a worker died in: over the cap when the allocator said so (or std reported a
/// failed allocation), otherwise a crash, named by what stderr and the exit status say.
pub fn death(index: usize, exit: &Exit) -> CaseReport {
    let tail = &exit.stderr_tail;
    let line_with = |needle: &str| tail.lines().find(|line| line.contains(needle)).map(str::trim);
    let (outcome, detail) = if let Some(line) = line_with("ALLOC-CAP") {
        let requested = line.trim_start_matches("ALLOC-CAP requested=");
        let detail = match requested.parse::<u64>() {
            Ok(bytes) => format!("a request for {bytes} bytes ({}) refused", human_size(bytes)),
            Err(_) => line.to_string(),
        };
        (Outcome::OverCap, detail)
    } else if let Some(line) = line_with("memory allocation of") {
        (Outcome::OverCap, line.to_string())
    } else if tail.contains("has overflowed its stack") {
        (Outcome::Crash, format!("stack overflow ({})", exit.status))
    } else {
        let first = tail
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("");
        (
            Outcome::Crash,
            format!("{} {first}", exit.status).trim().to_string(),
        )
    };
    CaseReport {
        index,
        outcome,
        peak_bytes: 0,
        detail,
    }
}

/// `1.0 GiB`, `40.0 TiB`, `2.2 EiB`.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// A worker process: stdout lines arrive through a channel (so the parent can time out),
/// stderr is kept from the last `START` on.
pub struct ProcessWorker {
    process: Process,
    lines: Receiver<String>,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_reader: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct StderrTail {
    last_start: Option<usize>,
    since_start: String,
}

const STDERR_TAIL_LIMIT: usize = 8 * 1024;

impl ProcessWorker {
    /// Starts `command` (a [`worker::Launcher`]'s) on `request`.
    pub fn spawn(command: Command, request: &Request) -> Result<ProcessWorker> {
        let mut process = worker::spawn(command, request)?;
        let stdout = process.stdout.take().context("worker stdout")?;
        let stderr = process.stderr.take().context("worker stderr")?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let writer = Arc::clone(&tail);
        let stderr_reader = std::thread::spawn(move || read_stderr(stderr, &writer));
        Ok(ProcessWorker {
            process,
            lines,
            stderr: tail,
            stderr_reader: Some(stderr_reader),
        })
    }

    fn exit(&mut self, status: std::io::Result<ExitStatus>, killed: bool) -> Exit {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let tail = std::mem::take(&mut *self.stderr.lock().unwrap_or_else(|poison| poison.into_inner()));
        let status_text = match &status {
            _ if killed => "killed".to_string(),
            Ok(status) => describe_status(*status),
            Err(error) => format!("unknown exit ({error})"),
        };
        Exit {
            success: !killed && status.is_ok_and(|status| status.success()),
            status: status_text,
            last_start: tail.last_start,
            stderr_tail: tail.since_start,
        }
    }
}

fn read_stderr(stderr: impl Read, tail: &Mutex<StderrTail>) {
    for line in BufReader::new(stderr).split(b'\n') {
        let Ok(line) = line else { break };
        let line = String::from_utf8_lossy(&line);
        let mut tail = tail.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some(index) = worker::parse_start(&line) {
            tail.last_start = Some(index);
            tail.since_start.clear();
        } else if tail.since_start.len() < STDERR_TAIL_LIMIT {
            tail.since_start.push_str(&line);
            tail.since_start.push('\n');
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => "unknown exit".to_string(),
    }
}

impl Worker for ProcessWorker {
    fn next_event(&mut self, timeout: Duration) -> Event {
        loop {
            match self.lines.recv_timeout(timeout) {
                Ok(line) => match CaseLine::parse(&line) {
                    Some(CaseLine::Ready { cases }) => return Event::Ready { cases },
                    Some(CaseLine::Case(report)) => return Event::Case(report),
                    None => {}
                },
                Err(RecvTimeoutError::Timeout) => return Event::Silent,
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.process.wait();
                    return Event::Exited(self.exit(status, false));
                }
            }
        }
    }

    fn kill(&mut self) -> Exit {
        let _ = self.process.kill();
        let status = self.process.wait();
        self.exit(status, true)
    }
}

impl Drop for ProcessWorker {
    fn drop(&mut self) {
        // A worker the supervisor gave up on (an error) must not outlive the run.
        if let Ok(None) = self.process.try_wait() {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// A worker that plays a script: a list of events, then exits with `exit`.
    struct Scripted {
        events: VecDeque<Event>,
    }

    impl Worker for Scripted {
        fn next_event(&mut self, _timeout: Duration) -> Event {
            self.events.pop_front().unwrap_or(Event::Exited(Exit {
                success: true,
                ..Exit::default()
            }))
        }

        fn kill(&mut self) -> Exit {
            let last_start = self.events.iter().find_map(|event| match event {
                Event::Exited(exit) => exit.last_start,
                _ => None,
            });
            Exit {
                status: "killed".into(),
                last_start,
                ..Exit::default()
            }
        }
    }

    fn case(index: usize, outcome: Outcome) -> Event {
        Event::Case(CaseReport {
            index,
            outcome,
            peak_bytes: 1,
            detail: String::new(),
        })
    }

    fn died_in(index: usize, stderr_tail: &str, status: &str) -> Event {
        Event::Exited(Exit {
            success: false,
            status: status.into(),
            last_start: Some(index),
            stderr_tail: stderr_tail.into(),
        })
    }

    #[test]
    fn a_dead_worker_is_restarted_after_the_case_it_died_in() {
        let mut spawned = Vec::new();
        let mut spawn = |first: usize| -> Result<Box<dyn Worker>> {
            spawned.push(first);
            let events: Vec<Event> = match first {
                0 => vec![
                    Event::Ready { cases: 6 },
                    case(0, Outcome::Error),
                    case(1, Outcome::Panic),
                    died_in(
                        2,
                        "ALLOC-CAP requested=1099511627776\nmemory allocation of 1099511627776 bytes failed\n",
                        "signal 6 (SIGABRT)",
                    ),
                ],
                3 => vec![
                    Event::Ready { cases: 6 },
                    died_in(
                        3,
                        "\nthread 'decode' has overflowed its stack\nfatal runtime error: stack overflow\n",
                        "signal 6 (SIGABRT)",
                    ),
                ],
                4 => vec![Event::Ready { cases: 6 }, Event::Silent, died_in(4, "", "killed")],
                5 => vec![Event::Ready { cases: 6 }, case(5, Outcome::OkEqual)],
                _ => unreachable!("no worker starts at {first}"),
            };
            Ok(Box::new(Scripted {
                events: events.into(),
            }))
        };
        let mut reports = Vec::new();
        supervise(6, Duration::from_secs(1), &mut spawn, &mut |report| {
            reports.push(report)
        })
        .unwrap();
        assert_eq!(spawned, vec![0, 3, 4, 5]);
        let outcomes: Vec<Outcome> = reports.iter().map(|report| report.outcome).collect();
        assert_eq!(
            outcomes,
            vec![
                Outcome::Error,
                Outcome::Panic,
                Outcome::OverCap,
                Outcome::Crash,
                Outcome::Timeout,
                Outcome::OkEqual
            ]
        );
        assert_eq!(
            reports[2].detail,
            "a request for 1099511627776 bytes (1.0 TiB) refused"
        );
        assert_eq!(reports[3].detail, "stack overflow (signal 6 (SIGABRT))");
        assert!(
            reports
                .iter()
                .enumerate()
                .all(|(index, report)| report.index == index)
        );
    }

    #[test]
    fn a_worker_that_cannot_start_is_an_error_not_a_crash_of_a_case() {
        let mut spawn = |_first: usize| -> Result<Box<dyn Worker>> {
            let exit = Exit {
                status: "exit code 3".into(),
                stderr_tail: "no such decoder".into(),
                ..Exit::default()
            };
            Ok(Box::new(Scripted {
                events: vec![Event::Exited(exit)].into(),
            }))
        };
        let error = supervise(2, Duration::from_secs(1), &mut spawn, &mut |_| {}).unwrap_err();
        assert!(format!("{error:#}").contains("no such decoder"), "{error:#}");
    }

    #[test]
    fn a_plan_mismatch_is_an_error() {
        let mut spawn = |_first: usize| -> Result<Box<dyn Worker>> {
            Ok(Box::new(Scripted {
                events: vec![Event::Ready { cases: 9 }].into(),
            }))
        };
        assert!(supervise(2, Duration::from_secs(1), &mut spawn, &mut |_| {}).is_err());
    }

    #[test]
    fn a_plain_abort_is_a_crash_with_its_status() {
        let report = death(
            7,
            &Exit {
                status: "signal 11 (SIGSEGV)".into(),
                last_start: Some(7),
                ..Exit::default()
            },
        );
        assert_eq!(
            (report.outcome, report.detail.as_str()),
            (Outcome::Crash, "signal 11 (SIGSEGV)")
        );
    }
}

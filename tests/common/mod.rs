//! What the integration tests share: running the real binary and reading what it printed.
#![allow(dead_code)] // each test crate uses its own part

use std::process::{Command, Output};

/// The binary cargo built for these tests, run with `args`.
pub fn serbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(args)
        .output()
        .expect("serbench runs")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

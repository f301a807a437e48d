//! The program `serbench footprint` builds once per format (and once with none): it proves and
//! runs every round-trip arm of one payload through the registry (an encode and a decode each)
//! and prints what it did, with the compiler and commit it was built from, as one JSON line
//! (`serbench::footprint::program`).

use std::process::ExitCode;

fn main() -> ExitCode {
    match serbench::footprint::program() {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("serbench-footprint: {error:#}");
            ExitCode::FAILURE
        }
    }
}

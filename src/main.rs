//! The `serbench` binary: the command line of [`serbench::cli`].

fn main() -> std::process::ExitCode {
    serbench::cli::main()
}

//! The machine and build a result came from (the compiler, the commit, portable or native):
//! recorded in every row so results from several hosts and builds can be put side by side, and
//! whether the run was measured inside a Nix build.

pub mod flags;
pub mod stamp;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Host and build metadata: the same columns in every row type that records them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Host {
    pub host: String,
    /// Nix-style system name, e.g. `x86_64-linux` or `aarch64-darwin`.
    pub system: String,
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub rustc: String,
    pub commit: String,
    /// `portable`, `native` (`-C target-cpu=native`) or the CPU options the binary was compiled
    /// with, read from the compiler flags by build.rs ([`flags::build_kind`]).
    pub build: String,
    /// `direct`, or `nix-build ...` with what the build can see of its context ([`environment`]).
    pub environment: String,
}

/// The variable that names the commit: build.rs reads it at compile time (a Nix build has no
/// `.git`), and the binary at run time, so the flake's wrapper stamps a new commit on the same
/// binary instead of rebuilding it.
const COMMIT_VARIABLE: &str = "SERBENCH_COMMIT";

impl Host {
    /// The columns every row of one run shares, as [`crate::files::Record::set`] names them: the
    /// machine and the build (its cpu, cores and os follow from the host).
    pub fn run_columns(&self) -> [(&'static str, &str); 6] {
        [
            ("host", self.host.as_str()),
            ("system", self.system.as_str()),
            ("rustc", self.rustc.as_str()),
            ("commit", self.commit.as_str()),
            ("build", self.build.as_str()),
            ("environment", self.environment.as_str()),
        ]
    }

    pub fn detect() -> Host {
        Host {
            host: hostname(),
            system: system(),
            os: os_release(),
            cpu: cpu_model(),
            cores: std::thread::available_parallelism().map_or(1, |cores| cores.get()),
            rustc: env!("SERBENCH_RUSTC").to_string(),
            commit: commit_id().to_string(),
            build: build().to_string(),
            environment: environment(|name| std::env::var(name).ok(), std::env::consts::OS)
                + &emulated_on(machine_architecture().as_deref(), std::env::consts::ARCH)
                    .map_or_else(String::new, |machine| format!(" {EMULATED_ON}{machine}")),
        }
    }

    /// The machine's own architecture when the run was emulated (the environment column's
    /// `emulated-on=`): its times are the emulator's, not any CPU's, so no ranking counts them.
    pub fn emulated_on(&self) -> Option<&str> {
        self.environment
            .split_whitespace()
            .find_map(|word| word.strip_prefix(EMULATED_ON))
    }
}

/// The environment column's mark of an emulated run, followed by the machine's architecture.
const EMULATED_ON: &str = "emulated-on=";

/// The machine's architecture when it is not this binary's: `Some("x86_64")` for an aarch64
/// binary run by qemu-user on an x86_64 kernel (binfmt_misc runs it transparently).
fn emulated_on(machine: Option<&str>, binary: &str) -> Option<String> {
    let machine = match machine?.trim() {
        "arm64" => "aarch64",
        other => other,
    };
    (!machine.is_empty() && machine != binary).then(|| machine.to_string())
}

/// What the machine itself is, where an emulator cannot hide it: on Linux the kernel's
/// architecture (/proc/sys/kernel/arch, which qemu-user passes through while it answers
/// `uname` with the emulated one); on macOS `arm64` when Rosetta 2 translates this process.
fn machine_architecture() -> Option<String> {
    if let Ok(arch) = std::fs::read_to_string("/proc/sys/kernel/arch") {
        return Some(arch);
    }
    (command_output("sysctl", &["-n", "sysctl.proc_translated"]).as_deref() == Some("1"))
        .then(|| "arm64".to_string())
}

/// What `serbench --version` prints: the commit and the build it was compiled from, so a run
/// can tell that a `--layout` is a build of the same code for the same CPU (a native build of
/// this commit is not a layout of a portable one: its rows would be recorded as portable).
pub fn version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        format!(
            "{} ({}, {} build)",
            env!("CARGO_PKG_VERSION"),
            commit_id(),
            build()
        )
    })
}

/// The CPU this binary's code was compiled for: `portable`, `native` or the options given.
pub fn build() -> &'static str {
    env!("SERBENCH_BUILD")
}

/// The commit of the running binary's sources, once per process: SERBENCH_COMMIT when set (the
/// flake's wrapper); else, while the checkout it was compiled in still holds its sources (the
/// hash build.rs stamped, [`stamp`]), git's HEAD there now (a commit since the build that
/// changed no source is this binary's commit too); else the commit compiled in.
pub fn commit_id() -> &'static str {
    static COMMIT: OnceLock<String> = OnceLock::new();
    COMMIT.get_or_init(|| {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
        let from_git = || {
            let same = stamp::source_hash(checkout).ok()? == env!("SERBENCH_SOURCE_HASH");
            same.then(|| git_commit(checkout)).flatten()
        };
        commit(
            std::env::var(COMMIT_VARIABLE).ok(),
            checkout.join(".git").exists().then(from_git).flatten(),
            env!("SERBENCH_COMMIT"),
        )
    })
}

/// HEAD's first 12 hex digits in `checkout`, `-dirty` when a tracked file has changes, as
/// build.rs and nix/commit.nix spell it.
fn git_commit(checkout: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let output = Command::new("git")
            .arg("-C")
            .arg(checkout)
            .args(args)
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "HEAD"])?;
    let dirty = !git(&["status", "--porcelain", "--untracked-files=no"])?.is_empty();
    let short = head.get(..12)?;
    Some(if dirty {
        format!("{short}-dirty")
    } else {
        short.to_string()
    })
}

/// The commit of the running binary: the run-time variable when set (one line, not empty), else
/// what git says of the sources it was compiled from, else the one compiled in.
fn commit(run_time: Option<String>, checkout: Option<String>, compiled: &str) -> String {
    run_time
        .map(|commit| commit.trim().to_string())
        .filter(|commit| !commit.is_empty() && !commit.contains(['\n', '\r']))
        .or(checkout)
        .unwrap_or_else(|| compiled.to_string())
}

/// `direct` for a run started by a user (a shell, `nix run`, `nix develop`), or `nix-build` and
/// what a build can see of its context, for a run inside a Nix build (`nix build .#results`),
/// whose timings share the machine with the daemon's other builds.
///
/// Nix gives every builder NIX_BUILD_TOP; `nix develop` and `nix-shell` set it too, but mark
/// their shells with IN_NIX_SHELL. On Linux the sandbox builds in `/build` (Nix's
/// sandbox-build-dir) and an unsandboxed build in a temporary folder of the host; on macOS the
/// folder says nothing about the sandbox. NIX_BUILD_CORES is nix.conf's `cores` (0: all).
/// max-jobs and the daemon's scheduling are not visible from inside a build.
pub fn environment(variable: impl Fn(&str) -> Option<String>, os: &str) -> String {
    let (Some(build_top), None) = (variable("NIX_BUILD_TOP"), variable("IN_NIX_SHELL")) else {
        return "direct".to_string();
    };
    let sandbox = match (os, build_top == "/build") {
        ("linux", true) => "sandbox",
        ("linux", false) => "no-sandbox",
        _ => "sandbox-unknown",
    };
    let mut environment = format!("nix-build {sandbox}");
    if let Some(cores) = variable("NIX_BUILD_CORES") {
        environment.push_str(&format!(" build-cores={cores}"));
    }
    environment
}

/// The system name Nix uses for this build target (`darwin` for macOS).
pub fn system() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .or_else(|| command_output("hostname", &[]))
        .unwrap_or_else(|| "unknown".to_string())
}

fn cpu_model() -> String {
    let from_proc = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|info| {
        info.lines()
            .find(|line| line.starts_with("model name") || line.starts_with("Model"))
            .and_then(|line| line.split_once(':'))
            .map(|(_, model)| model.trim().to_string())
    });
    from_proc
        .or_else(|| command_output("sysctl", &["-n", "machdep.cpu.brand_string"]))
        .unwrap_or_else(|| "unknown".to_string())
}

fn os_release() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|release| {
            release
                .lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|name| name.trim_matches('"').to_string())
        });
    let kernel = command_output("uname", &["-sr"]);
    match (pretty, kernel) {
        (Some(pretty), Some(kernel)) => format!("{pretty} ({kernel})"),
        (None, Some(kernel)) => command_output("sw_vers", &["-productVersion"])
            .map_or(kernel.clone(), |version| format!("macOS {version} ({kernel})")),
        (Some(pretty), None) => pretty,
        (None, None) => std::env::consts::OS.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` without a date-time dependency (days-to-civil, Howard Hinnant).
pub fn utc_timestamp(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()) as i64;
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn variables<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name| {
            set.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn a_run_outside_a_nix_build_is_direct() {
        assert_eq!(environment(variables(&[]), "linux"), "direct");
        // nix develop and nix-shell set NIX_BUILD_TOP too.
        let shell = [("NIX_BUILD_TOP", "/tmp/nix-shell.x1"), ("IN_NIX_SHELL", "impure")];
        assert_eq!(environment(variables(&shell), "linux"), "direct");
    }

    #[test]
    fn a_nix_build_says_so_with_its_sandbox_and_cores() {
        let sandboxed = [("NIX_BUILD_TOP", "/build"), ("NIX_BUILD_CORES", "8")];
        assert_eq!(
            environment(variables(&sandboxed), "linux"),
            "nix-build sandbox build-cores=8"
        );
        let unsandboxed = [("NIX_BUILD_TOP", "/tmp/nix-build-serbench-results-full.drv-0")];
        assert_eq!(
            environment(variables(&unsandboxed), "linux"),
            "nix-build no-sandbox"
        );
        let darwin = [
            (
                "NIX_BUILD_TOP",
                "/private/tmp/nix-build-serbench-results-full.drv-0",
            ),
            ("NIX_BUILD_CORES", "0"),
        ];
        assert_eq!(
            environment(variables(&darwin), "macos"),
            "nix-build sandbox-unknown build-cores=0"
        );
    }

    #[test]
    fn a_binary_on_another_architectures_kernel_is_marked_emulated() {
        assert_eq!(
            emulated_on(Some("x86_64\n"), "aarch64").as_deref(),
            Some("x86_64")
        );
        assert_eq!(emulated_on(Some("arm64"), "x86_64").as_deref(), Some("aarch64"));
        assert_eq!(emulated_on(Some("x86_64\n"), "x86_64"), None);
        assert_eq!(emulated_on(Some(""), "x86_64"), None);
        assert_eq!(emulated_on(None, "x86_64"), None);
        let mut host = Host::detect();
        assert_eq!(
            host.emulated_on(),
            None,
            "this test runs natively: {}",
            host.environment
        );
        host.environment = "direct emulated-on=x86_64".to_string();
        assert_eq!(host.emulated_on(), Some("x86_64"));
    }

    #[test]
    fn the_run_time_commit_wins_then_the_checkouts_then_the_compiled_one() {
        let compiled = "0123456789ab";
        let checkout = || Some("aaaabbbbcccc".to_string());
        assert_eq!(
            commit(Some("fedcba987654-dirty".into()), checkout(), compiled),
            "fedcba987654-dirty"
        );
        assert_eq!(commit(None, checkout(), compiled), "aaaabbbbcccc");
        assert_eq!(commit(None, None, compiled), compiled);
        assert_eq!(commit(Some(" ".into()), None, compiled), compiled);
        assert_eq!(commit(Some("a\nb".into()), checkout(), compiled), "aaaabbbbcccc");
    }

    #[test]
    fn the_source_hash_is_the_one_build_rs_stamped_and_follows_a_changed_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let now = super::stamp::source_hash(root).unwrap();
        // The test binary was compiled from this checkout (cargo rebuilds it when a source changes).
        assert_eq!(now, env!("SERBENCH_SOURCE_HASH"));
        let copy = tempfile::tempdir().unwrap();
        for file in ["build.rs", "Cargo.toml"] {
            std::fs::copy(root.join(file), copy.path().join(file)).unwrap();
        }
        let before = super::stamp::source_hash(copy.path()).unwrap();
        std::fs::write(copy.path().join("build.rs"), "fn main() {}\n").unwrap();
        assert_ne!(super::stamp::source_hash(copy.path()).unwrap(), before);
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(utc_timestamp(leap_day), "2000-02-29T01:01:01Z");
    }
}

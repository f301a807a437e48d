//! What the integration tests share: running the real binary and reading what it printed.
#![allow(dead_code)] // each test crate uses its own part

use std::fs::File;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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

/// Runs `command` with its output in files, killed after `limit`: `None` when it was.
pub fn output_within(mut command: Command, limit: Duration) -> Option<Output> {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = command
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: std::fs::read(out_path).unwrap(),
        stderr: std::fs::read(err_path).unwrap(),
    })
}

/// Cargo.toml's `default` feature list: the one list of formats. Read as TOML, as the flake
/// reads it (`builtins.fromTOML`): a formatter may lay the list out over several lines.
pub fn default_formats() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let manifest: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    let features: Vec<String> = manifest["features"]["default"]
        .as_array()
        .expect("a default feature list")
        .iter()
        .map(|name| name.as_str().expect("feature names are strings").to_string())
        .collect();
    assert!(!features.is_empty(), "no formats in {path}");
    // A backend's own feature (named like its crate) is in the list too, not a format.
    features
        .into_iter()
        .filter(|name| !serbench::format::BACKEND_FEATURES.contains(&name.as_str()))
        .collect()
}

/// Stops a test that needs every format (a table of them all, a check of the whole registry)
/// when it was built without some (`--no-default-features --features ...`): it would compare,
/// or under SERBENCH_BLESS rewrite, with the enabled formats alone. `what` says what needs them.
pub fn require_every_format(what: &str) {
    let built: Vec<&str> = serbench::format::all().iter().map(|format| format.name).collect();
    let missing: Vec<String> = default_formats()
        .into_iter()
        .filter(|name| !built.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{what} needs every format of Cargo.toml's `default` list, and this build has only \
         {built:?} (not {missing:?}): run with the default features (no --no-default-features, \
         no --features subset); nothing was compared or rewritten"
    );
}

/// Why headless Chromium cannot run here (Debian's chromium and chromium-driver, python3's
/// selenium), or `None` when it can.
pub fn browser_missing() -> Option<String> {
    let chromium = std::env::var("SERBENCH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let driver = std::env::var("SERBENCH_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
    for path in [&chromium, &driver] {
        if !std::path::Path::new(path).exists() {
            return Some(format!(
                "{path} is missing (apt-get install chromium chromium-driver)"
            ));
        }
    }
    let selenium = Command::new("python3").args(["-c", "import selenium"]).status();
    (!selenium.is_ok_and(|status| status.success()))
        .then(|| "python3 has no selenium (pip install selenium)".to_string())
}

/// Whether the browser is here; where it is not and SERBENCH_REQUIRE_BROWSER is not 1, says so
/// and the caller skips its browser check.
pub fn browser_ready() -> bool {
    let Some(missing) = browser_missing() else {
        return true;
    };
    assert!(
        std::env::var("SERBENCH_REQUIRE_BROWSER").as_deref() != Ok("1"),
        "SERBENCH_REQUIRE_BROWSER=1 but {missing}"
    );
    eprintln!("skipped: {missing}");
    false
}

//! report.html in a real browser: Debian's headless Chromium driven by selenium
//! (tests/browser/check_page.py) on the pages `serbench report` writes for the two fixture hosts
//! (tests/fixtures/hosts) and for the committed full run (whose workers pair ratios). Skipped where Chromium, chromedriver or selenium is missing, unless
//! SERBENCH_REQUIRE_BROWSER=1 (.ci/run installs them and sets it). Screenshots go to
//! SERBENCH_SCREENSHOTS (default: target/screenshots).

mod common;
use common::{browser_ready, serbench};

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_page_of_two_hosts_agrees_with_their_csvs_in_a_real_browser() {
    if !browser_ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hosts: Vec<PathBuf> = ["results-x86_64-linux", "results-aarch64-linux"]
        .iter()
        .map(|name| root.join("tests/fixtures/hosts").join(name))
        .collect();
    check_page(&hosts, "two-hosts");
}

/// The committed full run, whose samples.csv pairs the two arms compared over its workers.
#[test]
fn the_page_of_the_committed_full_run_agrees_with_its_csvs_in_a_real_browser() {
    if !browser_ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = tempfile::tempdir().unwrap();
    // robustness.csv and evolution.csv too: the capability table's hostile-input and measured
    // evolution columns, and the page's "safe on untrusted input" and "survives added, removed
    // and renamed fields" constraints, come from them.
    for file in [
        "results.csv",
        "samples.csv",
        "sizes.csv",
        "robustness.csv",
        "evolution.csv",
    ] {
        std::fs::copy(
            root.join("results/x86_64-linux").join(file),
            run.path().join(file),
        )
        .unwrap();
    }
    check_page(&[run.path().to_path_buf()], "full-run");
}

/// A smoke set whose json/serde_json decode of `order` has a 95% interval reaching below 0, as
/// smoke's three reps can give (issue 41, defect 21): every bar is still drawn (the whisker
/// clipped at the axis), the pair sentence states no interval, the calculator no negative cores.
#[test]
fn the_page_of_a_smoke_set_whose_interval_reaches_below_zero_draws_every_bar() {
    if !browser_ready() {
        return;
    }
    let run = tempfile::tempdir().unwrap();
    let set = run.path().join("smoke");
    let output = serbench(&[
        "run",
        "--format",
        "json,postcard",
        "--payload",
        "order",
        "--profile",
        "smoke",
        "--out",
        set.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = set.join("results.csv");
    let mut rows: Vec<serbench::schema::results::ResultRow> = serbench::schema::results::read(&path).unwrap();
    let mut reaching = 0;
    for row in &mut rows {
        let (mean, decode) = (row.mean_ns.unwrap(), row.arm.operation.name() == "decode");
        if decode && row.arm.label() == "json/serde_json" {
            row.ci95_low_ns = Some(mean - 1.5 * mean);
            row.ci95_high_ns = Some(mean + 1.5 * mean);
            reaching += 1;
        } else {
            // Every other interval bounded, so only this one reaches 0.
            row.ci95_low_ns = Some(mean * 0.95);
            row.ci95_high_ns = Some(mean * 1.05);
        }
    }
    assert_eq!(reaching, 1);
    std::fs::write(&path, serbench::files::to_csv(&rows).unwrap()).unwrap();
    check_page(&[set], "smoke-interval-below-zero");
}

/// Reports `hosts` into a temporary folder and runs the browser check on its page.
fn check_page(hosts: &[PathBuf], name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["report".to_string()];
    args.extend(hosts.iter().map(|host| host.display().to_string()));
    args.extend(["--out".to_string(), out.path().display().to_string()]);
    let output = serbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let screenshots = std::env::var("SERBENCH_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/screenshots"))
        .join(name);
    let check = Command::new("python3")
        .env("SERBENCH_BIN", env!("CARGO_BIN_EXE_serbench"))
        .arg(root.join("tests/browser/check_page.py"))
        .arg(out.path().join("report.html"))
        .arg(&screenshots)
        .args(hosts)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

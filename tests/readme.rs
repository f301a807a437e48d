//! The generated documentation is what the binary prints today: README's formats table is
//! `serbench list --formats --markdown`, so a new format, backend or crate version shows up in
//! README or this test fails; README's headline table is `serbench ratio results/x86_64-linux
//! --headline --markdown`, the committed run's ratios.csv; docs/commands.md is `serbench
//! help-markdown`, so a new flag or a changed help text shows up there; docs/capabilities.md's
//! table is `serbench list --capabilities --markdown`.
//! `SERBENCH_BLESS=1 cargo test --test readme` rewrites all three. The formats table and the
//! command reference list every format: built without some (`--no-default-features --features
//! ...`), their tests refuse, blessed or not, rather than compare or rewrite with fewer.

use std::process::Command;

mod common;

const START: &str =
    "<!-- formats table: `serbench list --formats --markdown` (tests/readme.rs checks it) -->\n\n";
const END: &str = "<!-- end of formats table -->";

const HEADLINE_START: &str = "<!-- headline table: `serbench ratio results/x86_64-linux --headline --markdown` \
     (tests/readme.rs checks it) -->\n\n";
const HEADLINE_END: &str = "<!-- end of headline table -->";

#[test]
fn readme_holds_the_current_formats_table() {
    common::require_every_format("README's formats table");
    readme_section_is(&["list", "--formats", "--markdown"], START, END, "formats table");
}

#[test]
fn capabilities_md_holds_the_current_capability_table() {
    common::require_every_format("docs/capabilities.md");
    section_is(
        "docs/capabilities.md",
        &["list", "--capabilities", "--markdown"],
        "<!-- capability table: `serbench list --capabilities --markdown` (tests/readme.rs checks it) -->\n\n",
        "<!-- end of capability table -->",
        "capability table",
    );
}

#[test]
fn readme_holds_the_committed_runs_headline_table() {
    readme_section_is(
        &["ratio", "results/x86_64-linux", "--headline", "--markdown"],
        HEADLINE_START,
        HEADLINE_END,
        "headline table",
    );
}

/// What `serbench args` prints in the source tree (where README's run is committed), with the
/// fault-injection format hidden: it offers one more `--format` value the pages do not document.
fn printed(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove(serbench::robustness::FAULT_INJECTION_ENV)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// README between the markers is what `serbench args` prints, or is made so under
/// SERBENCH_BLESS.
fn readme_section_is(args: &[&str], start_marker: &str, end_marker: &str, name: &str) {
    section_is("README.md", args, start_marker, end_marker, name)
}

/// `file` (from the crate root) between the markers is what `serbench args` prints, or is made
/// so under SERBENCH_BLESS.
fn section_is(file: &str, args: &[&str], start_marker: &str, end_marker: &str, name: &str) {
    let table = printed(args);
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let path = path.as_str();
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme
        .find(start_marker)
        .unwrap_or_else(|| panic!("{file} has the {name}'s start marker"))
        + start_marker.len();
    let end = start
        + readme[start..]
            .find(end_marker)
            .unwrap_or_else(|| panic!("{file} has the {name}'s end marker"));
    if std::env::var_os("SERBENCH_BLESS").is_some() {
        std::fs::write(path, format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert!(
        readme[start..end] == table,
        "{file}'s {name} is not `serbench {}`; \
         run `SERBENCH_BLESS=1 cargo test --test readme` to rewrite it",
        args.join(" ")
    );
}

#[test]
fn commands_md_is_the_current_command_reference() {
    // Every --format option lists the enabled formats.
    common::require_every_format("docs/commands.md");
    let reference = printed(&["help-markdown"]);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md");
    if std::env::var_os("SERBENCH_BLESS").is_some() {
        std::fs::write(path, reference).unwrap();
        return;
    }
    let page = std::fs::read_to_string(path).unwrap();
    assert!(
        page == reference,
        "docs/commands.md is not `serbench help-markdown`; \
         run `SERBENCH_BLESS=1 cargo test --test readme` to rewrite it"
    );
}

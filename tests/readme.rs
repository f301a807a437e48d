//! The generated documentation is what the binary prints today: README's formats table is
//! `serbench list --formats --markdown`, so a new format, backend or crate version shows up in
//! README or this test fails; docs/commands.md is `serbench help-markdown`, so a new flag or a
//! changed help text shows up there. `SERBENCH_BLESS=1 cargo test --test readme` rewrites both.

use std::process::Command;

const START: &str =
    "<!-- formats table: `serbench list --formats --markdown` (tests/readme.rs checks it) -->\n\n";
const END: &str = "<!-- end of formats table -->";

#[test]
fn readme_holds_the_current_formats_table() {
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(["list", "--formats", "--markdown"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme
        .find(START)
        .expect("README has the formats table's start marker")
        + START.len();
    let end = start
        + readme[start..]
            .find(END)
            .expect("README has the formats table's end marker");
    if std::env::var_os("SERBENCH_BLESS").is_some() {
        std::fs::write(path, format!("{}{table}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert!(
        readme[start..end] == table,
        "README's formats table is not `serbench list --formats --markdown`; \
         run `SERBENCH_BLESS=1 cargo test --test readme` to rewrite it"
    );
}

#[test]
fn commands_md_is_the_current_command_reference() {
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .arg("help-markdown")
        // It offers one more --format value to robustness, which the page does not document.
        .env_remove(serbench::robustness::FAULT_INJECTION_ENV)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reference = String::from_utf8(output.stdout).unwrap();
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

//! README's generated parts are what the binary prints today: the formats table is
//! `serbench list --formats --markdown`, so a new format, backend or crate version shows up in
//! README or this test fails. `SERBENCH_BLESS=1 cargo test --test readme` rewrites the table.

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

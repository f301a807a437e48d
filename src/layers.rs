//! The layers of the crate (the picture in `src/lib.rs`), checked: a top-level module may use
//! only modules of lower layers, so there is no import cycle, and the measurements and the
//! report, which share one layer, never use one another (they meet in [`crate::schema`]).

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom to top. A new top-level module must be placed here.
const LAYERS: [(&str, &[&str]); 13] = [
    (
        "leaves",
        &["alloc", "busy", "escape", "host", "reference", "stats"],
    ),
    ("payloads", &["payload"]),
    ("payload tools", &["codegen", "compress"]),
    ("arms", &["arm"]),
    ("formats and timing", &["format", "measure"]),
    ("checks", &["check"]),
    ("files", &["files"]),
    ("schema", &["schema"]),
    ("worker protocol", &["worker"]),
    (
        "measurements and report",
        &[
            "footprint",
            "instructions",
            "report",
            "robustness",
            "run",
            "typed",
        ],
    ),
    ("commands", &["commands"]),
    ("command line", &["cli"]),
    ("tests", &["layers"]),
];

/// The top-level module a file under `src/` belongs to (`None` for lib.rs and main.rs).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!["lib", "main"].contains(&name)).then(|| name.to_string())
}

/// The top-level names a line of code reaches through `crate::` (`crate::a::b`, and each
/// item of `crate::{a, b::c}`), comments left out.
fn crate_uses(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or_default();
    let mut names = Vec::new();
    for (start, _) in code.match_indices("crate::") {
        let rest = &code[start + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth < 0
                })
                .map_or(group.len(), |(index, _)| index);
            let mut item_depth = 0;
            let mut item_start = true;
            for (index, c) in group[..end].char_indices() {
                match c {
                    '{' => item_depth += 1,
                    '}' => item_depth -= 1,
                    ',' if item_depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        names.push(first_segment(&group[index..]));
                    }
                    _ => {}
                }
            }
        } else {
            names.push(first_segment(rest));
        }
    }
    names
}

fn first_segment(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every `crate::` use of one top-level module of another: (user, used) -> the first place.
fn dependencies(src: &Path) -> BTreeMap<(String, String), String> {
    let mut found = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let Some(user) = module_of(relative).filter(|_| path.extension() == Some("rs".as_ref())) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).unwrap();
            for (number, line) in text.lines().enumerate() {
                for used in crate_uses(line) {
                    if used != user {
                        found
                            .entry((user.clone(), used))
                            .or_insert_with(|| format!("src/{}:{}", relative.display(), number + 1));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn crate_uses_reads_paths_and_groups_but_not_comments() {
    assert_eq!(
        crate_uses("use crate::schema::results::{self, ResultRow};"),
        ["schema"]
    );
    assert_eq!(
        crate_uses("use crate::{UsageError, arm::{ArmId, Mode}, files};"),
        ["UsageError", "arm", "files"]
    );
    assert_eq!(
        crate_uses("let x = 1; // see crate::report"),
        Vec::<String>::new()
    );
    assert_eq!(crate_uses("    /// [`crate::run`]"), Vec::<String>::new());
}

#[test]
fn every_module_uses_only_the_layers_below_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(layer, (_, modules))| modules.iter().map(move |&module| (module, layer)))
        .collect();
    let mut faults = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if let Some(module) = module_of(path.strip_prefix(&src).unwrap())
            && !layer_of.contains_key(module.as_str())
        {
            faults.push(format!(
                "src/{module}: a top-level module in no layer of src/layers.rs"
            ));
        }
    }
    for ((user, used), place) in dependencies(&src) {
        // Items of lib.rs itself (UsageError, check_names) sit below every layer.
        let (Some(&from), Some(&to)) = (layer_of.get(user.as_str()), layer_of.get(used.as_str())) else {
            continue;
        };
        if to >= from {
            faults.push(format!(
                "{place}: `{user}` ({}) uses `crate::{used}` ({}), which is not below it",
                LAYERS[from].0, LAYERS[to].0
            ));
        }
    }
    assert!(faults.is_empty(), "layering broken:\n{}", faults.join("\n"));
}

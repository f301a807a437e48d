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
    ("payload tools", &["codegen", "compress", "shape"]),
    ("arms", &["arm"]),
    ("formats and timing", &["format", "measure"]),
    ("checks", &["check"]),
    ("files", &["files"]),
    ("schema", &["schema"]),
    ("worker protocol", &["worker"]),
    (
        "measurements and report",
        &[
            "evolve",
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
    uses(line, "crate::")
}

/// The names a line of code reaches through `prefix` (`crate::`, `super::`, `crate::report::`),
/// as [`crate_uses`] reads them.
fn uses(line: &str, prefix: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or_default();
    let mut names = Vec::new();
    for (start, _) in code.match_indices(prefix) {
        // `super::` inside `super::super::` or `crate::x::super::` is not this prefix.
        let before = &code[..start];
        if before.ends_with("::") || before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[start + prefix.len()..];
        if rest.starts_with("super::") {
            continue;
        }
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

/// Within each folder module (src/report/, src/run/, ...), the uses of one submodule of another
/// (`super::x` from a file of the folder, `crate::folder::x` from anywhere in it), tests left
/// out: (user, used) -> the first place.
fn sibling_uses(folder: &Path, name: &str) -> BTreeMap<(String, String), String> {
    let mut siblings: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if let Some(module) = module_of(path.strip_prefix(folder).unwrap())
            && (path.is_dir() || path.extension() == Some("rs".as_ref()))
            && module != "mod"
        {
            siblings.push(module);
        }
    }
    let mut found = BTreeMap::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(folder).unwrap();
            let Some(user) = module_of(relative).filter(|_| path.extension() == Some("rs".as_ref())) else {
                continue;
            };
            // `super::` names a sibling from src/F/x.rs and src/F/x/mod.rs only.
            let direct = relative.components().count() == 1 || relative.ends_with("mod.rs");
            let text = std::fs::read_to_string(&path).unwrap();
            let own = format!("crate::{name}::");
            for (number, line) in text
                .lines()
                .enumerate()
                .take_while(|(_, line)| !line.starts_with("#[cfg(test)]"))
            {
                let mut used = uses(line, &own);
                if direct {
                    used.extend(uses(line, "super::"));
                }
                for used in used {
                    if used != user && siblings.contains(&used) {
                        let place = format!("src/{name}/{}:{}", relative.display(), number + 1);
                        found.entry((user.clone(), used)).or_insert(place);
                    }
                }
            }
        }
    }
    found
}

/// A cycle in `edges` (user -> used), as the modules along it, if there is one.
fn cycle(edges: &BTreeMap<(String, String), String>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        edges: &'a BTreeMap<(String, String), String>,
        path: &mut Vec<&'a str>,
        done: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|&on| on == node) {
            let mut found: Vec<String> = path[start..].iter().map(|s| s.to_string()).collect();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(&node) {
            return None;
        }
        path.push(node);
        for (_, used) in edges.keys().filter(|(user, _)| user == node) {
            if let Some(found) = visit(used, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.push(node);
        None
    }
    let mut done = Vec::new();
    edges
        .keys()
        .find_map(|(user, _)| visit(user, edges, &mut Vec::new(), &mut done))
}

#[test]
fn sibling_uses_read_super_and_the_folder_path_and_a_cycle_is_found() {
    assert_eq!(
        uses("use super::{analysis::Interval, text};", "super::"),
        ["analysis", "text"]
    );
    assert_eq!(uses("use super::super::x;", "super::"), Vec::<String>::new());
    let edges = |pairs: &[(&str, &str)]| -> BTreeMap<(String, String), String> {
        pairs
            .iter()
            .map(|&(a, b)| ((a.to_string(), b.to_string()), String::new()))
            .collect()
    };
    assert_eq!(cycle(&edges(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        cycle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".to_string(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn no_folder_module_has_an_import_cycle_among_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut faults = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .is_dir()
            .then(|| module_of(path.strip_prefix(&src).unwrap()))
            .flatten()
        else {
            continue;
        };
        let edges = sibling_uses(&path, &name);
        if let Some(found) = cycle(&edges) {
            let places: Vec<String> = found
                .windows(2)
                .map(|pair| {
                    format!(
                        "{} -> {} ({})",
                        pair[0],
                        pair[1],
                        edges[&(pair[0].clone(), pair[1].clone())]
                    )
                })
                .collect();
            faults.push(format!("src/{name}/: {}", places.join(", ")));
        }
    }
    assert!(faults.is_empty(), "import cycles:\n{}", faults.join("\n"));
}

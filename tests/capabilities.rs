//! The crate facts behind the capability table (src/report/crates.csv) are those of the locked
//! crate sources: each crate a backend calls, its locked version, licence (its Cargo.toml),
//! release time (crates.io's index, as cargo cached it) and the `unsafe` keywords in its own
//! src/ and that of the dependencies it names after itself (fory: fory-core, fory-derive; a
//! facade's code is in those), comments left out. `SERBENCH_BLESS=1 cargo test --test capabilities` rewrites the file.

use std::path::{Path, PathBuf};

/// The unpacked source of `name` `version` in cargo's registry, if cargo fetched it.
fn source(registry: &Path, name: &str, version: &str) -> Option<PathBuf> {
    std::fs::read_dir(registry.join("src"))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path().join(format!("{name}-{version}"))))
        .find(|path| path.join("Cargo.toml").is_file())
}

/// The `license` of a crate's Cargo.toml.
fn licence(root: &Path) -> String {
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    manifest["package"]
        .get("license")
        .and_then(|value| value.as_str())
        .unwrap_or("-")
        .to_string()
}

/// When crates.io published `name` `version`: the `pubtime` of its entry in cargo's cached
/// sparse index (`.cache/<prefix>/<name>`, entries separated by NUL bytes).
fn published(registry: &Path, name: &str, version: &str) -> Option<String> {
    let name = name.to_lowercase();
    let prefix = match name.len() {
        1 => "1".to_string(),
        2 => "2".to_string(),
        3 => format!("3/{}", &name[..1]),
        _ => format!("{}/{}", &name[..2], &name[2..4]),
    };
    std::fs::read_dir(registry.join("index")).ok()?.find_map(|index| {
        let bytes = std::fs::read(index.ok()?.path().join(".cache").join(&prefix).join(&name)).ok()?;
        bytes.split(|&byte| byte == 0).find_map(|entry| {
            let value: serde_json::Value = serde_json::from_slice(entry).ok()?;
            (value["vers"] == version).then(|| value["pubtime"].as_str().map(str::to_string))?
        })
    })
}

/// The `unsafe` keywords in the .rs files under `dir`, line and block comments left out.
fn unsafe_count(dir: &Path) -> (usize, usize) {
    let (mut count, mut files) = (0, 0);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.map(|entry| entry.unwrap().path()) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files += 1;
                count += keywords(&std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    (count, files)
}

/// `unsafe` as a word in `text`, outside `//` and `/* */` comments.
fn keywords(text: &str) -> usize {
    let mut code = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        match (rest.find("//"), rest.find("/*")) {
            (Some(line), block) if block.is_none_or(|block| line < block) => {
                code.push_str(&rest[..line]);
                rest = rest[line..].find('\n').map_or("", |end| &rest[line + end..]);
            }
            (_, Some(block)) => {
                code.push_str(&rest[..block]);
                rest = rest[block + 2..]
                    .find("*/")
                    .map_or("", |end| &rest[block + 2 + end + 2..]);
            }
            _ => {
                code.push_str(rest);
                rest = "";
            }
        }
    }
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| *word == "unsafe")
        .count()
}

/// `name` and the dependencies Cargo.lock gives it that carry its name as a prefix
/// (`fory-core` of `fory`), each with its locked version.
fn family(lock: &toml::Table, name: &str, version: &str) -> Vec<(String, String)> {
    let packages = lock["package"].as_array().unwrap();
    let package = packages
        .iter()
        .find(|package| {
            package["name"].as_str() == Some(name) && package["version"].as_str() == Some(version)
        })
        .unwrap_or_else(|| panic!("{name} {version}: not in Cargo.lock"));
    let mut family = vec![(name.to_string(), version.to_string())];
    for dependency in package
        .get("dependencies")
        .and_then(|list| list.as_array())
        .into_iter()
        .flatten()
    {
        let mut words = dependency.as_str().unwrap().split(' ');
        let dependency = words.next().unwrap();
        let own = dependency
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(['-', '_']));
        if !own {
            continue;
        }
        let version = words.next().map(str::to_string).unwrap_or_else(|| {
            let found = packages
                .iter()
                .find(|package| package["name"].as_str() == Some(dependency))
                .unwrap();
            found["version"].as_str().unwrap().to_string()
        });
        family.push((dependency.to_string(), version));
    }
    family
}

#[test]
fn keywords_count_unsafe_outside_comments() {
    assert_eq!(
        keywords("unsafe fn a() { unsafe { b() } } // unsafe\n/* unsafe */ x"),
        2
    );
    assert_eq!(keywords("let not_unsafe = 1; /* a */ unsafe impl X {}"), 1);
}

#[test]
fn crates_csv_holds_the_facts_of_every_locked_crate_a_backend_calls() {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let registry = home.join("registry");
    // A sandbox that builds from vendored crates (Nix) has no registry: skipped there, and
    // SERBENCH_REQUIRE_CRATE_SOURCES=1 (.ci/run) turns the skip into a failure.
    if !registry.join("src").is_dir() || !registry.join("index").is_dir() {
        let message = format!(
            "no cargo registry under {}: crates.csv not checked",
            registry.display()
        );
        assert!(
            std::env::var_os("SERBENCH_REQUIRE_CRATE_SOURCES").is_none(),
            "{message}"
        );
        eprintln!("skipped: {message}");
        return;
    }
    let mut names: Vec<&str> = serbench::format::all()
        .iter()
        .flat_map(|format| {
            format
                .backends
                .iter()
                .flat_map(|backend| backend.crates.iter().copied())
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    let lock: toml::Table = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let mut csv = String::from("crate,version,license,published,unsafe,rust_files,counted\n");
    for name in names {
        let version =
            serbench::format::crate_version(name).unwrap_or_else(|| panic!("{name}: not in Cargo.lock"));
        let root = source(&registry, name, version).unwrap_or_else(|| {
            panic!(
                "{name} {version}: no source under {} (run cargo fetch)",
                registry.display()
            )
        });
        let published = published(&registry, name, version)
            .unwrap_or_else(|| panic!("{name} {version}: no pubtime in cargo's index cache"));
        let (mut count, mut files, mut counted) = (0, 0, Vec::new());
        for (member, member_version) in family(&lock, name, version) {
            let root = source(&registry, &member, &member_version)
                .unwrap_or_else(|| panic!("{member} {member_version}: no source (run cargo fetch)"));
            let (member_count, member_files) = unsafe_count(&root.join("src"));
            (count, files) = (count + member_count, files + member_files);
            counted.push(member);
        }
        let licence = licence(&root);
        assert!(
            !licence.contains(','),
            "{name}: a comma in its licence {licence:?}"
        );
        let counted = counted.join(" + ");
        csv += &format!("{name},{version},{licence},{published},{count},{files},{counted}\n");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report/crates.csv");
    if std::env::var_os("SERBENCH_BLESS").is_some() {
        std::fs::write(&path, &csv).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == csv,
        "src/report/crates.csv is not the locked crates' facts; run `SERBENCH_BLESS=1 cargo test \
         --test capabilities`:\n{csv}"
    );
}

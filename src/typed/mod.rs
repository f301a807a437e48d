//! Typed code for a user's data (`--typed`, `serbench gen`): from the schema inferred for each
//! data payload, a Rust crate holding the data's types with serde's derives and each format's own
//! ([`crate::codegen`]), and a `main` that installs the typed arms' hook
//! ([`hook`]) and runs serbench's command line. [`build`] builds it once per schema
//! (cached) and hands the command to it.
//!
//! What a format needs of the types is the format's own declaration ([`Format::typed`]);
//! [`plan`] decides, from it and the schema, whether the format carries the data typed, and the
//! registry lists the reason where it does not.

pub mod build;
pub mod hook;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::UsageError;
use crate::codegen::{key_of, rust};
use crate::format::{Format, TypedBorrowed, TypedItems, TypedModule, TypedSupport, plan, typable};
use crate::payload::data::{self, DataPayload};

/// serbench's own manifest, lock file and toolchain: the generated crate depends on serbench's
/// crates exactly as serbench does, so it resolves and builds the same versions, offline.
const MANIFEST: &str = include_str!("../../Cargo.toml");
const LOCK_FILE: &str = include_str!("../../Cargo.lock");
const TOOLCHAIN: &str = include_str!("../../rust-toolchain.toml");

/// The key of the data's types alone (no derives): what a typed binary checks the data it is
/// given against.
pub fn types_key(payloads: &[&'static DataPayload]) -> String {
    let plain = rust::Derives {
        lines: Vec::new(),
        field_attributes: Vec::new(),
        borrowed: None,
    };
    let sources: Vec<String> = payloads
        .iter()
        .map(|data| match typable(&data.typed_schema) {
            Ok(()) => rust::module(data, &plain).source,
            Err(reason) => reason,
        })
        .collect();
    let parts: Vec<&str> = sources.iter().map(String::as_str).collect();
    key_of(&parts)
}

/// The generated crate: its files and its cache key.
pub struct Crate {
    /// Paths relative to the crate's folder, and their text.
    pub files: Vec<(String, String)>,
    /// Changes with anything that changes the build: the files, serbench's version and build.
    pub key: String,
    /// Per data payload, the formats it carries typed.
    pub formats: Vec<Vec<&'static str>>,
    /// The name of its binary.
    pub binary: String,
}

/// The crate for `payloads`, carrying the enabled formats named in `selected` (none: every one).
pub fn generate(payloads: &[&'static DataPayload], selected: &[String], source: &Path) -> Crate {
    let formats: Vec<&'static Format> = crate::format::all()
        .into_iter()
        .filter(|format| selected.is_empty() || selected.iter().any(|name| name == format.name))
        .collect();
    let mut modules = String::new();
    let mut arms = String::new();
    let mut carried: Vec<Vec<&'static str>> = Vec::new();
    let mut extra_files: Vec<(String, String)> = Vec::new();
    let mut build_crates: BTreeSet<&'static str> = BTreeSet::new();
    let mut build_steps: BTreeMap<&'static str, &'static str> = BTreeMap::new();
    let mut crates: BTreeSet<&'static str> = ["anyhow", "serde", "serde_json"].into();
    for (index, data) in payloads.iter().enumerate() {
        let usable: Vec<&'static Format> = formats
            .iter()
            .copied()
            .filter(|format| plan(format, data).is_ok())
            .collect();
        carried.push(usable.iter().map(|format| format.name).collect());
        writeln!(
            arms,
            "        {index} => data_{index}::register(registry, format, data),"
        )
        .expect("a String takes writes");
        if usable.is_empty() {
            writeln!(
                modules,
                "/// {:?}: no format carries it typed (`serbench list --typed` says why).\nmod data_{index} {{\n    pub fn register(\n        _: &mut serbench::format::Registry,\n        format: &str,\n        _: &'static serbench::payload::data::DataPayload,\n    ) -> anyhow::Result<()> {{\n        anyhow::bail!(\"{{format}} does not carry this payload typed\")\n    }}\n}}\n",
                data.origin
            )
            .expect("a String takes writes");
            continue;
        }
        let mut items = TypedItems::default();
        let mut derives = rust::Derives {
            lines: vec![
                "#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]"
                    .to_string(),
            ],
            field_attributes: Vec::new(),
            borrowed: None,
        };
        for format in &usable {
            if let TypedSupport::Derive(derive) = &format.typed {
                if !derive.derives.is_empty() {
                    derives
                        .lines
                        .push(format!("#[derive({})]", derive.derives.join(", ")));
                }
                if !derive.field_attribute.is_empty() {
                    derives.field_attributes.push(derive.field_attribute.to_string());
                }
                crates.extend(derive.crates.iter().copied());
                if let TypedBorrowed::Arms {
                    derives: twin_derives,
                    field_attribute,
                } = &derive.borrowed
                {
                    let twin = derives.borrowed.get_or_insert_with(|| rust::BorrowedDerives {
                        lines: Vec::new(),
                        field_attributes: Vec::new(),
                    });
                    if !twin_derives.is_empty() {
                        twin.lines.push(format!("#[derive({})]", twin_derives.join(", ")));
                    }
                    if !field_attribute.is_empty() {
                        twin.field_attributes.push(field_attribute.to_string());
                    }
                }
            }
        }
        let module = rust::module(data, &derives);
        for format in &usable {
            if let TypedSupport::Derive(derive) = &format.typed {
                let more = (derive.items)(&TypedModule {
                    data,
                    index,
                    root: module.root,
                    structs: &module.structs,
                    update: &module.update,
                    records: &module.records,
                });
                items.rust.push_str(&more.rust);
                debug_assert!(
                    more.files.iter().all(|(path, _)| path != "build.rs"),
                    "{}: build.rs is made of the formats' build steps",
                    format.name
                );
                extra_files.extend(more.files);
                build_crates.extend(more.build_crates);
                if let Some(step) = more.build_step {
                    build_steps.entry(step.name).or_insert(step.source);
                }
            }
        }
        let source = format!("{}{}", module.source, items.rust);
        let indented: String = source
            .lines()
            .map(|line| {
                if line.is_empty() {
                    "\n".to_string()
                } else {
                    format!("    {line}\n")
                }
            })
            .collect();
        writeln!(
            modules,
            "/// The types of {:?} ({}).\npub mod data_{index} {{\n    use std::collections::BTreeMap;\n    use std::sync::OnceLock;\n\n{indented}\n    /// Registers `format`'s typed arms on this payload's value.\n    pub fn register(\n        registry: &mut serbench::format::Registry,\n        format: &str,\n        data: &'static serbench::payload::data::DataPayload,\n    ) -> anyhow::Result<()> {{\n        static VALUE: OnceLock<{root}> = OnceLock::new();\n        if VALUE.get().is_none() {{\n            let _ = VALUE.set(serbench::typed::hook::value_of(data)?);\n        }}\n        let payload = serbench::typed::hook::payload(data, || VALUE.get().expect(\"set above\"));\n        match format {{\n{matches}            other => anyhow::bail!(\"{{other}} is not in this typed build\"),\n        }}\n        Ok(())\n    }}\n}}\n",
            data.origin,
            data.spec.name,
            root = module.root,
            matches = usable
                .iter()
                .map(|format| registration(format, &module))
                .collect::<String>(),
        )
        .expect("a String takes writes");
    }
    let types_key = types_key(payloads);
    let all_formats: BTreeSet<&str> = carried.iter().flatten().copied().collect();
    let format_list: Vec<String> = crate::format::all()
        .into_iter()
        .filter(|format| all_formats.contains(format.name))
        .map(|format| format!("{:?}", format.name))
        .collect();
    // Quoted: a file name may hold what a comment or a TOML line cannot.
    let origins: Vec<String> = payloads.iter().map(|data| format!("{:?}", data.origin)).collect();
    let main = format!(
        "//! serbench built with the Rust types of {origins}: generated by `serbench gen` (serbench\n//! {version}) from the inferred schema, for `serbench ... --typed`. Run it as serbench itself.\n\n// Records nest as deep as the data (128 levels, the reader's limit), and bitcode's and rkyv's\n// derived types nest with them, past rustc's default limit of 128.\n#![recursion_limit = \"1024\"]\n\n{modules}\n/// Registers `format`'s typed arms on data payload number `index`.\nfn register(\n    registry: &mut serbench::format::Registry,\n    format: &str,\n    index: usize,\n    data: &'static serbench::payload::data::DataPayload,\n) -> anyhow::Result<()> {{\n    match index {{\n{arms}        _ => anyhow::bail!(\"this typed build has no data payload number {{index}}\"),\n    }}\n}}\n\nfn main() -> std::process::ExitCode {{\n    serbench::typed::hook::install(serbench::typed::hook::Hook {{\n        types_key: {types_key:?},\n        formats: &[{formats}],\n        register,\n    }});\n    serbench::cli::main()\n}}\n",
        origins = origins.join(", "),
        version = crate::host::version(),
        formats = format_list.join(", "),
    );
    // The selected formats only (`--format`): the others are neither compiled nor linked.
    let features: Vec<String> = formats
        .iter()
        .map(|format| format!("{:?}", format.name))
        .collect();
    // The package and its binary are named after the sources: cargo names a workspace root's
    // artifacts (its build script's OUT_DIR, its binary) by its name, version and path relative to
    // itself, so two generated crates of one name would share them in serbench's target folder and
    // build with each other's generated code or copy each other's binary.
    let sources = extra_files
        .iter()
        .fold(main.clone(), |all, (path, text)| format!("{all}{path}{text}"));
    let binary = format!(
        "serbench-typed-{}",
        &key_of(&[&anonymized(&sources, payloads)])[..12]
    );
    let mut manifest = format!(
        "# Generated by `serbench gen`: serbench with the Rust types of {origins}.\n[package]\nname = \"{binary}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[[bin]]\nname = \"{binary}\"\npath = \"src/main.rs\"\n\n# Its own workspace: never a member of one it happens to sit in.\n[workspace]\n\n[dependencies]\nserbench = {{ path = {source:?}, default-features = false, features = [{features}] }}\n",
        origins = origins.join(", "),
        source = source.display().to_string(),
        features = features.join(", "),
    );
    for name in &crates {
        manifest.push_str(&dependency_line("dependencies", name));
        manifest.push('\n');
    }
    if !build_crates.is_empty() {
        manifest.push_str("\n[build-dependencies]\n");
        for name in &build_crates {
            manifest.push_str(&dependency_line("build-dependencies", name));
            manifest.push('\n');
        }
    }
    manifest.push_str(&profiles());
    let mut files: Vec<(String, String)> = [
        ("Cargo.toml", manifest),
        ("Cargo.lock", LOCK_FILE.to_string()),
        ("rust-toolchain.toml", TOOLCHAIN.to_string()),
        ("src/main.rs", main),
    ]
    .map(|(path, text)| (path.to_string(), text))
    .into();
    // One copy of a file that several payloads' formats add.
    for (path, text) in extra_files.into_iter().chain(build_script(&build_steps)) {
        if !files.iter().any(|(known, _)| *known == path) {
            files.push((path, text));
        }
    }
    // The files without the data's names: data of the same schema under another file name is the
    // same build.
    let anonymous: Vec<String> = files.iter().map(|(_, text)| anonymized(text, payloads)).collect();
    let mut parts: Vec<&str> = anonymous.iter().map(String::as_str).collect();
    parts.push(crate::host::version());
    let key = key_of(&parts);
    Crate {
        files,
        key,
        formats: carried,
        binary,
    }
}

/// `text` with every spelling of each payload's origin and name (the comments and schema headers
/// that cite them) replaced by its place in the crate.
fn anonymized(text: &str, payloads: &[&'static DataPayload]) -> String {
    let mut text = text.to_string();
    for (index, data) in payloads.iter().enumerate() {
        let place = format!("data_{index}");
        for spelling in [
            format!("{:?}", data.origin),
            data.origin.escape_debug().to_string(),
            data.origin.clone(),
            data.spec.name.to_string(),
        ] {
            text = text.replace(&spelling, &place);
        }
    }
    text
}

/// The generated `register`'s match arm of `format`: its typed arms, then its update arm and its
/// borrowed decodes, or the reason it has none.
fn registration(format: &Format, module: &rust::Module) -> String {
    let name = format.name;
    let TypedSupport::Derive(derive) = &format.typed else {
        unreachable!("plan() accepts only formats with typed support")
    };
    let mut calls = vec![format!(
        "serbench::format::{name}::register_typed(registry, &payload);"
    )];
    let unsupported = |operation: &str, reason: &str| {
        format!(
            "registry.unsupported_operation(payload.spec, \"*\", serbench::arm::Operation::{operation}, {reason:?});"
        )
    };
    if derive.in_place_update {
        calls.push(match &module.update {
            Ok(_) => format!("serbench::format::{name}::register_typed_update(registry, &payload);"),
            Err(reason) => unsupported("Update", reason),
        });
    }
    let not_borrowed = |reason: &str| {
        format!("registry.unsupported_mode(payload.spec, \"*\", serbench::arm::Mode::Borrowed, {reason:?});")
    };
    calls.push(match &derive.borrowed {
        TypedBorrowed::Arms { .. } if module.borrowed => {
            format!("serbench::format::{name}::register_typed_borrowed(registry, &payload);")
        }
        TypedBorrowed::Arms { .. } => not_borrowed("the data holds no string: nothing to borrow"),
        TypedBorrowed::Not(reason) => not_borrowed(reason),
    });
    let body: String = calls
        .iter()
        .map(|call| format!("                {call}\n"))
        .collect();
    format!("            {name:?} => {{\n{body}            }}\n")
}

/// The crate's one build script, which runs every format's step (`build/<format>.rs`), and the
/// steps; nothing when no format has one.
fn build_script(steps: &BTreeMap<&'static str, &'static str>) -> Vec<(String, String)> {
    if steps.is_empty() {
        return Vec::new();
    }
    let mut modules = String::new();
    let mut calls = String::new();
    for name in steps.keys() {
        writeln!(modules, "#[path = \"build/{name}.rs\"]\nmod {name};").expect("a String takes writes");
        writeln!(calls, "    {name}::run();").expect("a String takes writes");
    }
    let script = format!(
        "//! Generated by `serbench gen`: the crate's build script, which runs the build step of each\n//! format that needs one (build/<format>.rs).\n\n{modules}\nfn main() {{\n{calls}}}\n"
    );
    std::iter::once(("build.rs".to_string(), script))
        .chain(
            steps
                .iter()
                .map(|(name, source)| (format!("build/{name}.rs"), source.to_string())),
        )
        .collect()
}

/// serbench's own line for the dependency `name` of its `[section]`, as a plain (not optional)
/// dependency.
fn dependency_line(section: &str, name: &str) -> String {
    let dependencies = MANIFEST
        .split(&format!("\n[{section}]\n"))
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or_default();
    dependencies
        .lines()
        .find(|line| line.split_once(" = ").is_some_and(|(key, _)| key.trim() == name))
        .map(|line| line.replace(", optional = true", ""))
        .unwrap_or_else(|| panic!("serbench's Cargo.toml has no {section} {name}"))
}

/// serbench's `[profile.*]` sections, verbatim: the same profile builds the same dependencies.
fn profiles() -> String {
    let mut text = String::new();
    let mut inside = false;
    for line in MANIFEST.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
            if inside {
                text.push('\n');
            }
        }
        if inside && !line.starts_with('#') {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

/// The folder serbench was built from, whose library the generated crate depends on
/// (`SERBENCH_SOURCE` overrides it).
pub fn source_dir() -> PathBuf {
    std::env::var_os("SERBENCH_SOURCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// `serbench gen`: writes the crate for the data of `request` into `out`, a folder that does not
/// exist yet or is empty, and says what it holds.
pub fn write_crate(request: &data::Request, selected: &[String], out: &Path) -> Result<String> {
    let out = crate_folder(out)?;
    let out = out.as_path();
    let payloads = data::load(request)?;
    let refused = |why: &str| {
        Err(UsageError::error(format!(
            "{}: {why}; gen writes a crate only into a new or empty folder (choose another --out)",
            out.display()
        )))
    };
    match std::fs::symlink_metadata(out) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            return refused("a symbolic link, which gen never writes through");
        }
        Ok(metadata) if !metadata.is_dir() => return refused("not a folder"),
        Ok(_)
            if std::fs::read_dir(out)
                .with_context(|| format!("cannot read {}", out.display()))?
                .next()
                .is_some() =>
        {
            return refused("not empty");
        }
        _ => {}
    }
    let generated = generate(&payloads, selected, &source_dir());
    write_files(&generated, out)?;
    let mut text = format!(
        "wrote the crate {} ({} files):\n",
        out.display(),
        generated.files.len()
    );
    for (data, formats) in payloads.iter().zip(&generated.formats) {
        writeln!(text, "  {}: typed for {}", data.spec.name, formats.join(", "))
            .expect("a String takes writes");
    }
    text.push_str("build it with `cargo build --release` there; `serbench list --data ... --typed` lists every format's reason\n");
    Ok(text)
}

/// The folder `--out` names, by its own name: `X/.` is `X`; the current folder (`.`), a folder
/// reached by `..` and `/` are refused, since the crate is renamed into place as that folder.
fn crate_folder(out: &Path) -> Result<PathBuf> {
    use std::path::Component;
    let folder: PathBuf = out.components().collect();
    match folder.components().next_back() {
        Some(Component::Normal(_)) => Ok(folder),
        last => {
            let what = match last {
                None | Some(Component::CurDir) => "the current folder",
                Some(Component::ParentDir) => "a folder named through `..`",
                _ => "the root folder",
            };
            Err(UsageError::error(format!(
                "--out {}: {what}; gen writes its crate as a new folder (or into an empty one) \
                 renamed into place by its name: give that name, e.g. --out my-crate",
                out.display()
            )))
        }
    }
}

/// How the temporary folder of [`write_files`] for a crate folder named `name` begins.
pub(crate) fn temporary_prefix(name: &str) -> String {
    format!(".{name}.partial-")
}

/// Writes the whole crate as the folder `dir` (a path ending in a name), which must not exist or
/// be empty: built and synced in a temporary folder beside it, made new (never one found there)
/// and filled with new files (never through a link), then renamed into place, so a failure or a
/// kill leaves no half-written crate, and a folder that filled up meanwhile is never replaced.
pub(crate) fn write_files(generated: &Crate, dir: &Path) -> Result<()> {
    let name = dir
        .file_name()
        .filter(|_| {
            matches!(
                dir.components().next_back(),
                Some(std::path::Component::Normal(_))
            )
        })
        .with_context(|| format!("{}: the crate's folder needs a name", dir.display()))?
        .to_string_lossy();
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let temporary = new_folder(parent, &temporary_prefix(&name))
        .with_context(|| format!("cannot write the crate {}", dir.display()))?;
    let written = (|| -> Result<()> {
        for (path, text) in &generated.files {
            let path = temporary.join(path);
            let folder = path.parent().expect("the crate's files are in folders");
            for above in folder
                .ancestors()
                .take_while(|above| *above != temporary)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                match std::fs::create_dir(above) {
                    Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(error.into());
                    }
                    _ => {}
                }
            }
            // New, never through a link: the folder is this process's own, but not private.
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
            let mut file = options.open(&path)?;
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            file.sync_all()?;
        }
        std::fs::rename(&temporary, dir).map_err(|error| match error.raw_os_error() {
            Some(libc::ENOTEMPTY) | Some(libc::EEXIST) | Some(libc::ENOTDIR) | Some(libc::EISDIR) => {
                UsageError::error(format!(
                    "{}: no longer a new or empty folder (something was written there meanwhile); nothing was replaced",
                    dir.display()
                ))
            }
            _ => error.into(),
        })?;
        Ok(())
    })();
    written.map_err(|error| {
        let _ = std::fs::remove_dir_all(&temporary);
        if error.downcast_ref::<UsageError>().is_some() {
            error
        } else {
            error.context(format!("cannot write the crate {}", dir.display()))
        }
    })
}

/// A folder made new in `parent` under `prefix` and a number: never one that was there already.
fn new_folder(parent: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    let mut number = std::process::id();
    for _ in 0..100 {
        let path = parent.join(format!("{prefix}{number}"));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                number = number.wrapping_mul(31).wrapping_add(7);
            }
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!(
            "{}: 100 temporary folders {prefix}* are there already",
            parent.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::schema::{first_empty_record, first_option};

    fn data(json: &str) -> &'static DataPayload {
        DataPayload::from_bytes(
            "events.ndjson".into(),
            "events",
            json.as_bytes().to_vec(),
            &data::Request::default(),
        )
        .unwrap()
    }

    #[test]
    fn the_dependency_lines_are_serbenchs_own_and_not_optional() {
        assert_eq!(
            dependency_line("dependencies", "serde"),
            r#"serde = { version = "1", features = ["derive"] }"#
        );
        let bitcode = dependency_line("dependencies", "bitcode");
        assert_eq!(
            dependency_line("build-dependencies", "protox"),
            r#"protox = { version = "0.9" }"#
        );
        assert!(
            bitcode.starts_with("bitcode = ") && !bitcode.contains("optional"),
            "{bitcode}"
        );
        assert!(
            profiles().contains("[profile.release]\nlto = \"fat\""),
            "{}",
            profiles()
        );
    }

    #[test]
    fn the_types_follow_the_schema_and_keep_the_keys() {
        let payload = data(concat!(
            r#"{"id": 1, "type": "buy", "3ds": true, "content-type": "a", "tags": ["x"], "user": {"name": "n"}, "price": 1.5}"#,
            "\n",
            r#"{"id": 2, "type": "sell", "3ds": false, "content-type": "b", "tags": [], "user": {"name": "m"}, "price": 2, "note": null}"#,
            "\n"
        ));
        let generated = generate(&[payload], &[], Path::new("/src"));
        let main = &generated
            .files
            .iter()
            .find(|(path, _)| *path == "src/main.rs")
            .unwrap()
            .1;
        for expected in [
            "pub struct Record {",
            "    #[serde(rename = \"3ds\")]",
            "    pub _3ds: bool,",
            "    #[serde(rename = \"content-type\")]",
            "    pub content_type: String,",
            "    pub id: i64,",
            "    pub note: Option<String>,",
            "    pub price: f64,",
            "    pub tags: Vec<String>,",
            "    #[serde(rename = \"type\")]",
            "    pub type_: String,",
            "    pub user: User,",
            "pub struct Records {",
            "    pub records: Vec<Record>,",
            // The borrowed twins, serde borrowing what is not a bare `&str`.
            "pub struct RecordRef<'a> {",
            "    pub content_type: &'a str,",
            "    #[serde(borrow)]\n        #[b(5)]\n        pub tags: Vec<&'a str>,",
            "    pub user: UserRef<'a>,",
            "impl serbench::payload::Borrowed for Records {",
        ] {
            assert!(main.contains(expected), "{expected:?} missing from:\n{main}");
        }
        let manifest = &generated.files[0].1;
        assert!(manifest.contains("serbench = { path = \"/src\""), "{manifest}");
    }

    /// Two payloads' schemas, one build script: each format's step once, called from `main`.
    #[test]
    fn one_build_script_runs_each_formats_step_once() {
        let payloads = [data("{\"a\": 1}\n"), data("{\"b\": \"x\"}\n")];
        let formats = ["protobuf", "capnp"].map(String::from);
        let generated = generate(&payloads, &formats, Path::new("/src"));
        let file = |path: &str| {
            generated
                .files
                .iter()
                .find(|(known, _)| known == path)
                .map(|(_, text)| text.as_str())
        };
        let script = file("build.rs").expect("a build script");
        assert!(
            script.contains("#[path = \"build/protobuf.rs\"]\nmod protobuf;\n"),
            "{script}"
        );
        assert_eq!(script.matches("protobuf::run();").count(), 1, "{script}");
        assert!(file("build/protobuf.rs").is_some_and(|step| step.contains("pub fn run()")));
        assert!(file("protos/data_0.proto").is_some() && file("protos/data_1.proto").is_some());
        // Cap'n Proto's step too, where the capnp tool is there to run it.
        if generated.formats[0].contains(&"capnp") {
            assert!(
                script.ends_with("fn main() {\n    capnp::run();\n    protobuf::run();\n}\n"),
                "{script}"
            );
            assert!(file("build/capnp.rs").is_some() && file("capnp/data_1.capnp").is_some());
        }
        let plain = generate(&payloads, &["json".to_string()], Path::new("/src"));
        assert!(
            !plain.files.iter().any(|(path, _)| path.starts_with("build")),
            "no step, no build script"
        );
    }

    #[test]
    fn data_without_strings_has_no_borrowed_twin_and_says_why() {
        let numbers = data("{\"a\": 1, \"b\": [2.5]}\n{\"a\": 2, \"b\": []}\n");
        let generated = generate(&[numbers], &[], Path::new("/src"));
        let main = &generated.files[3].1;
        assert!(!main.contains("Ref<'a>"), "{main}");
        assert!(
            main.contains("Mode::Borrowed, \"the data holds no string: nothing to borrow\")"),
            "{main}"
        );
        // The update arms change the required integer `a` of the first record.
        assert!(main.contains("serbench::format::rkyv::register_typed_update(registry, &payload);"));
        assert!(main.contains("        self.records[0].a\n"), "{main}");
    }

    #[test]
    fn no_struct_takes_a_name_flatcs_code_uses() {
        let payload = data("{\"a\": {\"x\": 1}, \"result\": {\"y\": 2}, \"default\": {\"z\": 3}}\n");
        let generated = generate(&[payload], &["json".to_string()], Path::new("/src"));
        let main = &generated.files[3].1;
        for expected in ["pub struct A2 {", "pub struct Result2 {", "pub struct Default2 {"] {
            assert!(main.contains(expected), "{expected:?} missing from:\n{main}");
        }
    }

    #[test]
    fn a_conflict_is_a_reason_for_every_format_and_the_key_follows_the_schema() {
        let conflict = data("{\"a\": 1}\n{\"a\": \"x\"}\n");
        for format in crate::format::all() {
            let reason = plan(format, conflict).unwrap_err();
            assert!(
                reason.starts_with("$.a: a conflict (int, string)"),
                "{}: {reason}",
                format.name
            );
        }
        let one = data("{\"a\": 1}\n{\"a\": 2}\n");
        // The same schema in another file is the same crate: its name is not part of the key.
        let renamed = DataPayload::from_bytes(
            "other-day.ndjson".into(),
            "other-day",
            b"{\"a\": 3}\n{\"a\": 4}\n".to_vec(),
            &data::Request::default(),
        )
        .unwrap();
        let key = |payload| generate(&[payload], &[], Path::new("/src")).key;
        assert_eq!(key(one), key(renamed));
        assert_ne!(key(one), key(data("{\"b\": 1}\n")));
        // Crates of two schemas are two packages: cargo gives a workspace root's build script one
        // OUT_DIR per name and version, so in one target folder they would share generated code.
        let package = |payload| {
            let manifest = generate(&[payload], &[], Path::new("/src")).files[0].1.clone();
            manifest.lines().nth(2).unwrap_or_default().to_string()
        };
        assert!(
            package(one).starts_with("name = \"serbench-typed-"),
            "{}",
            package(one)
        );
        assert_eq!(package(one), package(renamed));
        assert_ne!(package(one), package(data("{\"b\": 1}\n")));
        let same = data("{\"a\": 7}\n{\"a\": 8}\n");
        let other = data("{\"b\": 1}\n{\"b\": 2}\n");
        assert_eq!(types_key(&[one]), types_key(&[same]));
        assert_ne!(types_key(&[one]), types_key(&[other]));
        assert_eq!(
            first_option(&data("{\"a\": 1}\n{}\n").typed_schema).as_deref(),
            Some("$.a")
        );
        assert_eq!(data::schema::first_option(&one.typed_schema), None);
        assert_eq!(
            first_empty_record(&data("{}\n").typed_schema).as_deref(),
            Some("$")
        );
    }
}

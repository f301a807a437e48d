//! Typed code for a user's data (`--typed`, `serbench gen`): from the schema inferred for each
//! data payload, a Rust crate holding the data's types with serde's derives and each format's own
//! ([`crate::codegen`]), and a `main` that installs the typed arms' hook
//! ([`hook`]) and runs serbench's command line. [`build`] builds it once per schema
//! (cached) and hands the command to it.
//!
//! Every string of the data (file names, keys, paths) reaches the crate's files escaped for its
//! place ([`crate::escape`]) through the templates in `templates/`, and the cache key covers
//! every byte of them. A crate whose estimated compilation would not fit the memory available
//! is refused before it is built ([`Size`]).
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
use crate::codegen::{key_of, render, rust};
use crate::escape::{rust_comment, rust_str, toml_str};
use crate::format::{Format, TypedBorrowed, TypedItems, TypedModule, TypedSupport, plan, typable};
use crate::payload::data::{self, DataPayload};

/// serbench's own manifest, lock file and toolchain: the generated crate depends on serbench's
/// crates exactly as serbench does, so it resolves and builds the same versions, offline.
const MANIFEST: &str = include_str!("../../Cargo.toml");
const LOCK_FILE: &str = include_str!("../../Cargo.lock");
const TOOLCHAIN: &str = include_str!("../../rust-toolchain.toml");

/// The generated crate's templates: every string of the data in them is escaped for its place
/// ([`crate::escape`]) and filled in by [`render`].
const MAIN_TEMPLATE: &str = include_str!("templates/main.rs.in");
const MODULE_TEMPLATE: &str = include_str!("templates/module.rs.in");
const UNTYPED_TEMPLATE: &str = include_str!("templates/untyped.rs.in");
const MANIFEST_TEMPLATE: &str = include_str!("templates/Cargo.toml.in");
/// serbench's feature of a build without the built-in payloads (Cargo.toml).
const DATA_ONLY: &str = "data-only";

/// The key of the data's types alone (no derives): what a typed binary checks the data it is
/// given against.
pub fn types_key(payloads: &[&'static DataPayload]) -> String {
    let plain = rust::Derives::default();
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
    /// Changes with any byte of any file ([`crate_key`]) and serbench's version; the build adds
    /// this binary's stamp.
    pub key: String,
    /// Per data payload, the formats it carries typed.
    pub formats: Vec<Vec<&'static str>>,
    /// The name of its binary.
    pub binary: String,
    /// serbench's features it builds with (`data-only` and the selected formats): serbench's
    /// library is compiled once per list, for every crate built with it.
    pub features: String,
    /// What it asks of the compiler, for [`Size::estimate`].
    pub size: Size,
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
    let mut size = Size::default();
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
        let origin = rust_comment(&data.origin);
        let name = rust_comment(data.spec.name);
        let index_text = index.to_string();
        if usable.is_empty() {
            modules.push_str(&render(
                UNTYPED_TEMPLATE,
                &[("origin", &origin), ("name", &name), ("index", &index_text)],
            ));
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
        size.add(data, &module, usable.len());
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
        let matches: String = usable
            .iter()
            .map(|format| registration(format, &module))
            .collect();
        modules.push_str(&render(
            MODULE_TEMPLATE,
            &[
                ("origin", &origin),
                ("name", &name),
                ("index", &index_text),
                ("types", &indented),
                ("root", module.root),
                ("matches", &matches),
            ],
        ));
    }
    let types_key = types_key(payloads);
    let all_formats: BTreeSet<&str> = carried.iter().flatten().copied().collect();
    let format_list: Vec<String> = crate::format::all()
        .into_iter()
        .filter(|format| all_formats.contains(format.name))
        .map(|format| rust_str(format.name))
        .collect();
    let origins: Vec<String> = payloads.iter().map(|data| rust_comment(&data.origin)).collect();
    let origins = origins.join(", ");
    let main = render(
        MAIN_TEMPLATE,
        &[
            ("origins", &origins),
            ("version", &rust_comment(crate::host::version())),
            ("modules", &modules),
            ("arms", &arms),
            ("types_key", &rust_str(&types_key)),
            ("formats", &format_list.join(", ")),
        ],
    );
    // The selected formats only (`--format`): the others are neither compiled nor linked; and
    // none of the built-in payloads (`data-only`): the binary holds the arms of this data alone.
    let features: Vec<String> = std::iter::once(DATA_ONLY)
        .chain(
            formats
                .iter()
                .flat_map(|format| crate::format::features_of(format)),
        )
        .map(toml_str)
        .collect();
    let mut dependencies = String::new();
    for name in &crates {
        dependencies.push_str(&dependency_line("dependencies", name));
        dependencies.push('\n');
    }
    if !build_crates.is_empty() {
        dependencies.push_str("\n[build-dependencies]\n");
        for name in &build_crates {
            dependencies.push_str(&dependency_line("build-dependencies", name));
            dependencies.push('\n');
        }
    }
    dependencies.push_str(&profiles());
    let mut files: Vec<(String, String)> = [
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
    // The package and its binary are named after everything else the crate holds: cargo names a
    // workspace root's artifacts (its build script's OUT_DIR, its binary) by its name, version
    // and path relative to itself, so two generated crates of one name would share them in
    // serbench's target folder and build with each other's generated code or copy each other's
    // binary.
    let source = toml_str(&source.display().to_string());
    let features = features.join(", ");
    let mut named: Vec<&str> = vec![&origins, &source, &features, &dependencies];
    for (path, text) in &files {
        named.extend([path.as_str(), text.as_str()]);
    }
    let binary = format!("serbench-typed-{}", &key_of(&named)[..12]);
    let manifest = render(
        MANIFEST_TEMPLATE,
        &[
            ("origins", &origins),
            ("binary", &binary),
            ("source", &source),
            ("features", &features),
        ],
    ) + &dependencies;
    files.insert(0, ("Cargo.toml".to_string(), manifest));
    let key = crate_key(&files);
    size.lines = files
        .iter()
        .filter(|(path, _)| path.ends_with(".rs"))
        .map(|(_, text)| text.lines().count())
        .sum();
    size.formats = all_formats.len();
    Crate {
        files,
        key,
        formats: carried,
        binary,
        features,
        size,
    }
}

/// What a generated crate asks of rustc: its types, their fields, how many formats' code each
/// field gets, its lines of Rust. rustc's peak memory grows faster than linearly with the fields
/// of one crate (docs/your-data.md has the measurements), so a crate too big for the machine is
/// refused before it is built.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Size {
    /// The generated structs.
    pub types: usize,
    /// The fields of every struct times the formats that carry it.
    pub field_formats: usize,
    /// The lines of generated Rust.
    pub lines: usize,
    /// The formats carried, all payloads together.
    pub formats: usize,
    /// The payload, the schema path and the field count of the widest record, for the refusal's
    /// advice (`--map PATH`).
    pub widest: Option<(String, String, usize)>,
    /// Per struct, its formats times its fields to the [`ESTIMATE_POWER`]: rustc's memory grows
    /// with the biggest functions, which derives make one per struct and format.
    load: f64,
}

/// The peak memory of the typed build of one wide record, debug profile, `--format postcard`
/// (docs/your-data.md, "Memory of a typed build"): `BASE + SCALE * fields^POWER` bytes, fitted
/// to the measurements there (BASE: a crate with no types; POWER: from 500 and 1,000 fields),
/// and taken per struct and format.
const ESTIMATE_BASE: f64 = 430e6;
const ESTIMATE_SCALE: f64 = 4.2;
const ESTIMATE_POWER: f64 = 2.6;
/// The release profile (fat LTO, one codegen unit, opt-level 3) over the debug one: assumed, not
/// measured on a wide record (docs/your-data.md says why this factor).
const RELEASE_FACTOR: f64 = 3.0;
/// The peak memory of a release typed build, bytes: its fat-LTO link, whose code is mostly
/// serbench's arms instantiated on the generated types once per format, fitted to five builds
/// here (docs/your-data.md, "Cost here"). A release estimate is never below it.
const RELEASE_LINK: Linear = Linear {
    base: 0.77e9,
    per_format: 0.145e9,
    per_line: 0.40e6,
};
/// A typed build's wall time on a 2-core machine, seconds, in the release and the debug profile,
/// fitted to the builds measured there; the first typed crate of a serbench build and feature
/// list also compiles serbench's library once more, as its dependency (`LIBRARY_*`).
const RELEASE_SECONDS: Linear = Linear {
    base: 0.0,
    per_format: 7.8,
    per_line: 0.073,
};
const RELEASE_LIBRARY_SECONDS: Linear = Linear {
    base: 60.0,
    per_format: 5.0,
    per_line: 0.0,
};
const DEBUG_SECONDS: Linear = Linear {
    base: 10.0,
    per_format: 0.0,
    per_line: 0.005,
};
const DEBUG_LIBRARY_SECONDS: Linear = Linear {
    base: 25.0,
    per_format: 0.0,
    per_line: 0.0,
};

/// `base + per_format * formats + per_line * lines` of a generated crate.
struct Linear {
    base: f64,
    per_format: f64,
    per_line: f64,
}

impl Linear {
    fn at(&self, size: &Size) -> f64 {
        self.base + self.per_format * size.formats as f64 + self.per_line * size.lines as f64
    }
}

impl Size {
    fn add(&mut self, data: &DataPayload, module: &rust::Module, formats: usize) {
        self.types += module.structs.len();
        for record in &module.structs {
            self.field_formats += record.fields.len() * formats;
            self.load += formats as f64 * (record.fields.len() as f64).powf(ESTIMATE_POWER);
        }
        if let Some((path, record)) = (module.records.iter()).max_by_key(|(_, record)| record.fields.len())
            && self
                .widest
                .as_ref()
                .is_none_or(|(_, _, widest)| record.fields.len() > *widest)
        {
            self.widest = Some((data.spec.name.to_string(), path.clone(), record.fields.len()));
        }
    }

    /// rustc's estimated peak memory, in bytes, building this crate in the release or the debug
    /// profile.
    pub fn estimate(&self, release: bool) -> u64 {
        let debug = ESTIMATE_BASE + ESTIMATE_SCALE * self.load;
        (if release {
            (debug * RELEASE_FACTOR).max(RELEASE_LINK.at(self))
        } else {
            debug
        }) as u64
    }

    /// The line said before the build, or the refusal (exit 2) of a build whose estimate exceeds
    /// `available` bytes (`None`: unknown, never refused). `first`: no typed crate was built yet
    /// by this serbench build, so its library is compiled once more.
    pub fn check(&self, release: bool, available: Option<u64>, first: bool) -> Result<String> {
        let estimate = self.estimate(release);
        let profile = if release { "release" } else { "debug" };
        let (build, library) = if release {
            (&RELEASE_SECONDS, &RELEASE_LIBRARY_SECONDS)
        } else {
            (&DEBUG_SECONDS, &DEBUG_LIBRARY_SECONDS)
        };
        let seconds = build.at(self) + if first { library.at(self) } else { 0.0 };
        let minutes = (seconds / 60.0).ceil();
        let line = format!(
            "generating {} types, ~{} lines for {} format{} ({} fields x formats; rustc needs ~{}, {profile}); \
             building, about {minutes} min on 2 cores{}",
            self.types,
            self.lines,
            self.formats,
            if self.formats == 1 { "" } else { "s" },
            self.field_formats,
            gigabytes(estimate),
            if first {
                " (serbench's library is compiled once more, for this first typed crate)"
            } else {
                ""
            }
        );
        let Some(available) = available.filter(|available| estimate > *available) else {
            return Ok(line);
        };
        let mut fits = Vec::new();
        if self.formats > 1 {
            let one = Size {
                load: self.load / self.formats as f64,
                ..self.clone()
            };
            fits.push(format!(
                "select fewer formats with --format (one alone: ~{})",
                gigabytes(one.estimate(release))
            ));
        }
        if let Some((payload, path, fields)) = &self.widest {
            fits.push(format!(
                "read the {fields}-field object of {} at {} as a map with --map {} (or without --record: past {} keys an object is a map)",
                crate::escape::terminal(payload),
                crate::escape::terminal(path),
                crate::escape::terminal(path),
                data::schema::MAX_FIELDS,
            ));
        }
        Err(UsageError::error(format!(
            "--typed: building these types would take ~{} of memory ({} fields x formats, {profile}) and {} is available: {}",
            gigabytes(estimate),
            self.field_formats,
            gigabytes(available),
            fits.join(", or "),
        )))
    }
}

fn gigabytes(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// The memory available now (`MemAvailable` of /proc/meminfo), where the system says.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Before a typed build: refuses (exit 2) a crate whose estimated compilation would not fit the
/// memory available, in this binary's profile (the build's); else the line that announces it.
pub fn check_size(generated: &Crate, first: bool) -> Result<String> {
    generated
        .size
        .check(!cfg!(debug_assertions), available_memory(), first)
}

/// The cache key of a crate: every byte of every file it holds (path and text) and serbench's
/// version, so any difference in generated source (a name in a comment included) is another key.
/// The build adds this binary's stamp ([`build`]).
fn crate_key(files: &[(String, String)]) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(2 * files.len() + 1);
    for (path, text) in files {
        parts.extend([path.as_str(), text.as_str()]);
    }
    parts.push(crate::host::version());
    key_of(&parts)
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
            "registry.unsupported_operation(payload.spec, \"*\", serbench::arm::Operation::{operation}, {});",
            rust_str(reason)
        )
    };
    if derive.in_place_update {
        calls.push(match &module.update {
            Ok(_) => format!("serbench::format::{name}::register_typed_update(registry, &payload);"),
            Err(reason) => unsupported("Update", reason),
        });
    }
    let not_borrowed = |reason: &str| {
        format!(
            "registry.unsupported_mode(payload.spec, \"*\", serbench::arm::Mode::Borrowed, {});",
            rust_str(reason)
        )
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
    format!("            {} => {{\n{body}            }}\n", rust_str(name))
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
    use crate::codegen::names;
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
        let key = |payload| generate(&[payload], &[], Path::new("/src")).key;
        assert_eq!(key(one), key(data("{\"a\": 3}\n{\"a\": 4}\n")));
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

    fn named(origin: &str, stem: &str, json: &str) -> &'static DataPayload {
        DataPayload::from_bytes(
            origin.to_string(),
            stem,
            json.as_bytes().to_vec(),
            &data::Request::default(),
        )
        .unwrap()
    }

    /// Issue 41: the key covers every byte of the generated crate, the data's names in its
    /// comments included, so a harmless file of a hostile one's schema never reuses its binary.
    #[test]
    fn the_same_schema_under_another_name_is_another_key_and_package() {
        let json = "{\"a\": 1}\n{\"a\": 2}\n";
        let harmless = named("day.ndjson", "day", json);
        let other = named("x\nconst _: &str = r#\".ndjson", "x\nconst _: &str = r#\"", json);
        let generated = |payload| generate(&[payload], &["postcard".to_string()], Path::new("/src"));
        let (one, two) = (generated(harmless), generated(other));
        assert_eq!(one.files.len(), two.files.len());
        assert_ne!(one.key, two.key);
        assert_ne!(one.binary, two.binary);
        // Any other byte is another key too: the source folder the manifest names.
        let moved = generate(&[harmless], &["postcard".to_string()], Path::new("/src2"));
        assert_ne!(one.key, moved.key);
        assert_eq!(generated(harmless).key, one.key, "the same crate, the same key");
    }

    /// The refusal of defect 23: a 5,000-field record is refused on a machine with 8 GB free,
    /// naming what would fit; a small one is not, and an unknown amount never is.
    #[test]
    fn a_build_estimated_past_the_memory_available_is_refused_with_what_fits() {
        let wide: String = (0..5000)
            .map(|index| format!("\"field_{index}\": {index}"))
            .collect::<Vec<_>>()
            .join(", ");
        // `--record $`: past 256 keys an object is otherwise read as a map.
        let request = data::Request {
            overrides: data::schema::Overrides {
                maps: Vec::new(),
                records: vec!["$".to_string()],
            },
            ..data::Request::default()
        };
        let wide = DataPayload::from_bytes(
            "wide.json".into(),
            "wide",
            format!("{{{wide}}}").into_bytes(),
            &request,
        )
        .unwrap();
        let formats = ["postcard", "bincode"].map(String::from);
        let generated = generate(&[wide], &formats, Path::new("/src"));
        assert_eq!(generated.size.field_formats, 2 * 5000);
        assert_eq!(
            generated.size.widest,
            Some(("data:wide".to_string(), "$".to_string(), 5000))
        );
        let gb = 1_000_000_000;
        let error = generated.size.check(false, Some(8 * gb), true).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error}");
        let message = error.to_string();
        assert!(!message.contains('\n'), "{message}");
        for expected in [
            "8.0 GB is available",
            "--format",
            "--map $",
            "5000-field object of data:wide",
        ] {
            assert!(message.contains(expected), "{expected:?} not in {message}");
        }
        assert!(generated.size.estimate(false) > 8 * gb);
        assert!(generated.size.estimate(true) > generated.size.estimate(false));
        assert!(generated.size.check(false, None, false).is_ok());
        let small = generate(&[data("{\"a\": 1}\n")], &formats, Path::new("/src"));
        let line = small.size.check(true, Some(8 * gb), true).unwrap();
        assert!(line.starts_with("generating 1 types, ~"), "{line}");
        assert!(line.contains("lines for 2 formats"), "{line}");
        // A release build links the typed binary with fat LTO: never estimated below that
        // link, and refused where even it cannot fit.
        let link = RELEASE_LINK.at(&small.size);
        assert!(link > 0.8e9 && small.size.estimate(true) >= link as u64, "{line}");
        // countries.json's crate: 14 formats, 2,255 lines, its link measured at 3.7 GB.
        let countries = Size {
            formats: 14,
            lines: 2255,
            ..small.size.clone()
        };
        assert_eq!(gigabytes(countries.estimate(true)), "3.7 GB");
        assert!(line.contains("compiled once more"), "{line}");
        let later = small.size.check(false, None, false).unwrap();
        assert!(
            !later.contains("compiled once more") && later.contains("about 1 min"),
            "{later}"
        );
        assert!(small.size.check(true, Some(gb), false).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Issue 41: any file name, key and source folder reaches the generated crate escaped:
        /// every line of Rust and of the .proto is printable ASCII, the crate has the lines of a plain
        /// name's (no line added or ended early), the key's literal is the one function's, and
        /// the manifest reads back as TOML naming the folder exactly.
        #[test]
        fn names_and_keys_reach_generated_source_escaped(
            stem in "\\PC*",
            key in "\\PC*",
            folder in "\\PC*",
        ) {
            proptest::prop_assume!(key != "zz");
            let json = serde_json::json!({ key.as_str(): 1, "zz": "s" }).to_string() + "\n";
            let plain_json = serde_json::json!({ "a b": 1, "zz": "s" }).to_string() + "\n";
            let formats = ["postcard", "protobuf"].map(String::from);
            let source = Path::new("/src").join(&folder);
            let hostile = generate(&[named(&format!("{stem}.ndjson"), &stem, &json)], &formats, &source);
            let plain = generate(&[named("plain.ndjson", "plain", &plain_json)], &formats, Path::new("/src"));
            let renamed = names::field(&key) != key;
            for ((path, text), (_, reference)) in hostile.files.iter().zip(&plain.files) {
                if path.ends_with(".rs") || path.ends_with(".proto") {
                    for line in text.lines() {
                        proptest::prop_assert!(
                            line.chars().all(|c| c.is_ascii_graphic() || c == ' '),
                            "{path}: {line:?}"
                        );
                    }
                }
                if path == "src/main.rs" && renamed && !key.bytes().all(|byte| byte.is_ascii_digit()) {
                    proptest::prop_assert_eq!(text.lines().count(), reference.lines().count());
                    let expected = format!("        #[serde(rename = {})]", rust_str(&key));
                    proptest::prop_assert!(text.lines().any(|line| line == expected));
                }
                if path == "src/main.rs" {
                    // The payload's module opens with its names escaped, whether its types were
                    // generated or (a key like "0" beside "zz" makes a map of mixed values) no
                    // format carries it typed.
                    let (file, name) = (rust_comment(&format!("{stem}.ndjson")), rust_comment(&format!("data:{stem}")));
                    let typed = format!("/// The types of {file} ({name}).\npub mod data_0 {{\n");
                    let untyped = format!("/// {file} ({name}): no format carries it typed (`serbench list --typed` says why).\nmod data_0 {{\n");
                    proptest::prop_assert!(
                        text.contains(&typed) || text.contains(&untyped),
                        "neither {typed:?} nor {untyped:?} in {text}"
                    );
                }
            }
            let manifest: toml::Table = toml::from_str(&hostile.files[0].1).unwrap();
            let path = manifest["dependencies"]["serbench"]["path"].as_str();
            let expected = source.display().to_string();
            proptest::prop_assert_eq!(path, Some(expected.as_str()));
        }
    }
}

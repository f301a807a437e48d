//! serbench: which serialization format is cheapest for my data?
//!
//! The data flows one way: [`payload`] (the logical data) -> [`format`] (one file per format,
//! its codecs, and the registry of every arm) -> [`arm`] (what one arm is: it proves its round
//! trip, then runs its timed loop; [`compress`] adds zstd and zlib after a codec) -> [`measure`]
//! (sampling, with the pure statistics of [`stats`] and the allocation counts of [`alloc`]) ->
//! the rows of [`schema`] (results.csv and every other file), written through [`files`] (lock,
//! atomic writes, validated reads) -> [`report`] (Markdown, charts, compare). [`run`] drives the
//! stages for `serbench run`; [`robustness`], [`instructions`] and [`footprint`] are other
//! measurements of the same arms, and [`typed`] builds the Rust types of a user's data
//! (`--typed`, from [`codegen`]). [`commands`] holds one function per subcommand, which [`cli`]
//! calls after parsing; [`reference`] renders its help as docs/commands.md. Each module uses
//! only those of lower layers (ARCHITECTURE.md; checked by a test): no import cycle, and the
//! measurements and the report never use one another; worker processes speak [`worker`].

// rust-protobuf is renamed in Cargo.toml (its package, `protobuf`, is the format's feature name);
// the code protobuf-codegen generates names it `::protobuf`.
#[cfg(feature = "rust-protobuf")]
extern crate rust_protobuf as protobuf;

pub mod alloc;
pub mod arm;
pub mod busy;
pub mod check;
pub mod cli;
pub mod codegen;
pub mod commands;
pub mod compress;
pub mod escape;
pub mod evolve;
pub mod files;
pub mod footprint;
pub mod format;
pub mod host;
pub mod instructions;
pub mod measure;
// The typed binary's build (`data-only`) compiles the built-in payloads and never visits them.
#[cfg_attr(feature = "data-only", allow(dead_code))]
pub mod payload;
pub mod reference;
pub mod report;
pub mod robustness;
pub mod run;
pub mod schema;
pub mod shape;
pub mod stats;
pub mod typed;
pub mod worker;

#[cfg(test)]
mod layers;

/// A refusal: a bad command-line value, or a folder or file serbench will not use as it is (in
/// use by another writer, holding another result set, failing validation). Nothing was
/// changed; the command exits with status 2, as for clap's own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl UsageError {
    pub fn error(message: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(UsageError(message.into()))
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Refuses a name that is not `known`, listing every valid one once, as clap does.
pub fn check_names(what: &str, given: &[String], known: impl Iterator<Item = String>) -> anyhow::Result<()> {
    let mut valid: Vec<String> = Vec::new();
    for name in known {
        if !valid.contains(&name) {
            valid.push(name);
        }
    }
    // The empty name is the default (a codec without a variant): it is chosen by leaving the
    // option out, so it is listed as that rather than as an empty value.
    let listed: Vec<&str> = valid
        .iter()
        .map(|name| {
            if name.is_empty() {
                "none (leave it out)"
            } else {
                name
            }
        })
        .collect();
    match given.iter().find(|name| !valid.contains(name)) {
        Some(name) => Err(UsageError::error(format!(
            "unknown {what} '{name}' [possible values: {}]",
            listed.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Every allocation in a serbench process goes through the counting allocator, so the
/// allocation pass of an arm sees exactly what the arm allocates.
#[global_allocator]
static ALLOCATOR: alloc::CountingAllocator = alloc::CountingAllocator;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_list_each_valid_name_once() {
        let known = ["a", "b", "a", "c", "b"].map(String::from);
        let error = check_names("backend", &["x".to_string()], known.into_iter()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown backend 'x' [possible values: a, b, c]"
        );
        assert!(check_names("backend", &["c".to_string()], ["c".to_string()].into_iter()).is_ok());
        let variants = ["", "hardened", ""].map(String::from);
        let error = check_names("variant", &["x".to_string()], variants.into_iter()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown variant 'x' [possible values: none (leave it out), hardened]"
        );
    }
}

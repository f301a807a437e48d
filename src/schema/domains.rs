//! The domain of every column a reader checks, in one place: the names of the closed sets
//! (format and backend as the registry spells them, payloads, systems, profiles, schedules,
//! statuses) and the counts a profile can produce. Each row type's [`crate::files::Record::check`]
//! calls these, so every file is checked alike when it is read; each refusal starts with the
//! column's name. Why each domain is what it is: docs/results.md.

use std::sync::OnceLock;

use crate::arm::CodecId;
use crate::measure::{Profile, Schedule};

/// The systems serbench measures on (the flake's `systems`), and the one this binary was built
/// for (a cargo build on any other target writes its own).
pub const SYSTEMS: [&str; 3] = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"];

/// A row's format, backend and variant are a backend the registry documents (spelled exactly
/// as it spells them), and its payload a built-in one or `data:<stem>`.
pub fn codec(codec: &CodecId) -> Result<(), String> {
    let formats = crate::format::all();
    let Some(format) = formats.iter().find(|format| format.name == codec.format) else {
        let names: Vec<&str> = formats.iter().map(|format| format.name).collect();
        return Err(format!(
            "format {:?} is not a format of this serbench (valid: {})",
            codec.format,
            names.join(", ")
        ));
    };
    if !format
        .backends
        .iter()
        .any(|doc| doc.backend == codec.backend && doc.variant == codec.variant)
    {
        let names: Vec<String> = format
            .backends
            .iter()
            .map(|doc| match doc.variant {
                "" => doc.backend.to_string(),
                variant => format!("{}[{variant}]", doc.backend),
            })
            .collect();
        return Err(format!(
            "backend {:?} with variant {:?} is not a backend of {} (valid: {})",
            codec.backend,
            codec.variant,
            format.name,
            names.join(", ")
        ));
    }
    payload(&codec.payload)
}

/// A built-in payload's name, or `data:` and a file stem.
pub fn payload(name: &str) -> Result<(), String> {
    static BUILT_IN: OnceLock<Vec<&'static str>> = OnceLock::new();
    let built_in = BUILT_IN.get_or_init(|| crate::payload::specs().iter().map(|spec| spec.name).collect());
    match name.strip_prefix("data:") {
        Some(stem) if !stem.is_empty() => Ok(()),
        _ if built_in.contains(&name) => Ok(()),
        _ => Err(format!(
            "payload {name:?} is neither a payload of this serbench ({}) nor data:<file stem>",
            built_in.join(", ")
        )),
    }
}

/// One of [`SYSTEMS`], or this build's own.
pub fn system(name: &str) -> Result<(), String> {
    let own = crate::host::system();
    if SYSTEMS.contains(&name) || name == own {
        return Ok(());
    }
    Err(format!(
        "system {name:?} is not a system serbench runs on ({}, or this build's {own})",
        SYSTEMS.join(", ")
    ))
}

/// The profile called `name`.
pub fn profile(name: &str) -> Result<&'static Profile, String> {
    Profile::ALL
        .iter()
        .find(|profile| profile.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Profile::ALL.iter().map(|profile| profile.name).collect();
            format!("profile {name:?} is not a profile (valid: {})", names.join(", "))
        })
}

/// The schedule called `name`.
pub fn schedule(name: &str) -> Result<(), String> {
    if Schedule::ALL.iter().any(|schedule| schedule.name() == name) {
        return Ok(());
    }
    let names: Vec<&str> = Schedule::ALL.iter().map(|schedule| schedule.name()).collect();
    Err(format!(
        "schedule {name:?} is not a schedule (valid: {})",
        names.join(", ")
    ))
}

/// A row whose arm proved its round trip and has figures.
pub const STATUS_OK: &str = "ok";
/// A row whose arm failed, its reason in `note`.
pub const STATUS_FAILED: &str = "failed";

/// `ok` or `failed`.
pub fn status(status: &str) -> Result<(), String> {
    if status == STATUS_OK || status == STATUS_FAILED {
        return Ok(());
    }
    Err(format!("status {status:?}: {STATUS_OK} or {STATUS_FAILED}"))
}

/// A `YYYY-MM-DDTHH:MM:SSZ` time, as [`crate::host::utc_timestamp`] writes it.
pub fn timestamp(value: &str) -> Result<(), String> {
    let bytes = value.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let well_formed = bytes.len() == 20
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && bytes[10] == b'T'
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19)
        && bytes[19] == b'Z';
    if well_formed {
        return Ok(());
    }
    Err(format!(
        "timestamp {value:?} is not a UTC time as serbench writes it (YYYY-MM-DDTHH:MM:SSZ)"
    ))
}

/// The reps and workers of an ok results row of `profile`: a profile without worker processes
/// takes its reps (`min_reps..=max_reps`) in one process; the full profile writes a row once
/// two workers bound its interval, each of which took at least one rep and at most `reps_each`
/// (the least per worker changed within this schema version, so older sets stay readable).
pub fn counts(profile: &Profile, reps: usize, workers: usize) -> Result<(), String> {
    let (workers_range, reps_range) = match profile.passes {
        None => (1..=1, profile.min_reps..=profile.max_reps),
        Some(passes) => (
            MIN_WORKERS..=usize::MAX,
            workers..=workers.saturating_mul(passes.reps_each),
        ),
    };
    let range = |range: &std::ops::RangeInclusive<usize>| match *range.end() {
        usize::MAX => format!("at least {}", range.start()),
        end if end == *range.start() => format!("{end}"),
        end => format!("{}..={end}", range.start()),
    };
    if !workers_range.contains(&workers) {
        return Err(format!(
            "workers {workers} is outside what profile {} produces ({})",
            profile.name,
            range(&workers_range)
        ));
    }
    if !reps_range.contains(&reps) {
        return Err(format!(
            "reps {reps} is outside what profile {} produces over {workers} worker{} ({})",
            profile.name,
            if workers == 1 { "" } else { "s" },
            range(&reps_range)
        ));
    }
    Ok(())
}

/// The fewest workers a full-profile row is written from: an interval over one has no width
/// (`run::passes` writes no row until then).
pub const MIN_WORKERS: usize = 2;

/// The reps of one worker's sample (full profile): at least one, at most `reps_each`.
pub fn worker_reps(profile: &Profile, reps: usize) -> Result<(), String> {
    let most = profile.passes.map_or(profile.max_reps, |passes| passes.reps_each);
    if (1..=most).contains(&reps) {
        return Ok(());
    }
    Err(format!(
        "reps {reps} is outside what one worker of profile {} takes (1..={most})",
        profile.name
    ))
}

/// An encoded size of `payload`: at least one byte, except a data payload's, whose one empty
/// object a format without framing encodes to none (bincode, postcard: tests/data.rs). A
/// compressed size (`payload` `None`) always holds its frame.
pub fn encoded_bytes(column: &str, bytes: Option<usize>, payload: Option<&str>) -> Result<(), String> {
    let may_be_empty = payload.is_some_and(|name| name.starts_with("data:"));
    match bytes {
        Some(0) if !may_be_empty => Err(format!(
            "{column} 0: {}",
            match payload {
                Some(name) => format!("every codec writes at least one byte of {name}"),
                None => "a compressed frame is at least one byte".to_string(),
            }
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_registrys_spelling() {
        let mut id = CodecId {
            format: "bincode".into(),
            backend: "bincode".into(),
            payload: "order".into(),
            ..CodecId::default()
        };
        if crate::format::by_name("bincode").is_some() {
            assert_eq!(codec(&id), Ok(()));
            id.format = "Bincode".into();
            assert!(codec(&id).unwrap_err().starts_with("format \"Bincode\""));
            id.format = "bincode".into();
            id.variant = "nope".into();
            assert!(codec(&id).unwrap_err().starts_with("backend \"bincode\""));
        }
        assert_eq!(payload("data:events"), Ok(()));
        assert!(payload("data:").is_err() && payload("Order").is_err());
        assert!(system("x86_64-linux").is_ok() && system("my laptop").is_err());
        assert!(profile("ultra").is_err() && schedule("chaos").is_err());
        assert!(timestamp("2026-12-05T09:19:23Z").is_ok() && timestamp("yesterday").is_err());
    }

    #[test]
    fn only_a_data_payload_may_encode_to_no_byte() {
        assert!(encoded_bytes("encoded_bytes", Some(0), Some("order")).is_err());
        assert!(encoded_bytes("encoded_bytes", Some(0), Some("data:empty")).is_ok());
        assert!(encoded_bytes("zstd_bytes", Some(0), None).is_err());
        assert!(encoded_bytes("encoded_bytes", Some(1), Some("order")).is_ok());
    }

    #[test]
    fn counts_follow_the_profile() {
        assert!(counts(&Profile::SMOKE, Profile::SMOKE.max_reps, 1).is_ok());
        assert!(
            counts(&Profile::SMOKE, 3, 100_000_000)
                .unwrap_err()
                .starts_with("workers 100000000")
        );
        assert!(counts(&Profile::QUICK, Profile::QUICK.max_reps + 1, 1).is_err());
        let each = Profile::FULL.passes.unwrap().reps_each;
        assert!(counts(&Profile::FULL, 7 * each, 7).is_ok());
        assert!(counts(&Profile::FULL, 7 * each + 1, 7).is_err());
        assert!(counts(&Profile::FULL, 1, 1).is_err());
    }

    /// The flake measures on the systems [`SYSTEMS`] lists, and no other.
    #[test]
    fn the_systems_are_the_flakes() {
        let flake = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/flake.nix")).unwrap();
        let list = flake
            .split("systems = [")
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap();
        let listed: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
        assert_eq!(listed, SYSTEMS);
    }
}

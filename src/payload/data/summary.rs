//! The inferred schema in a few lines a person reads: one line per path with its kind and how
//! often it was null or absent, then the maps (and why) and the conflicts.

use std::fmt::Write;

use super::DataPayload;
use super::schema::{Kind, MapReason, Type, walk};

/// The summary of `payload`'s schema.
pub fn text(payload: &DataPayload) -> String {
    let schema = &payload.schema;
    let mut text = format!(
        "{}: {} ({}), {} record{}, {} bytes of compact JSON\n\n",
        payload.spec.name,
        payload.origin,
        payload.framing.name(),
        payload.records.len(),
        if payload.records.len() == 1 { "" } else { "s" },
        payload.json_bytes
    );
    let mut lines: Vec<(String, String)> = Vec::new();
    walk(&schema.record, &mut String::from("$"), &mut |path, ty, record| {
        let absent = record.and_then(|record| match &record.kind {
            Kind::Record(fields) => fields
                .iter()
                .find(|field| std::ptr::eq(&field.ty, ty))
                .map(|field| field.absent),
            _ => None,
        });
        lines.push((path.to_string(), describe(ty, absent)));
    });
    let width = lines
        .iter()
        .map(|(path, _)| path.chars().count())
        .max()
        .unwrap_or(0);
    for (path, description) in &lines {
        let _ = writeln!(text, "{path:width$}  {description}");
    }
    text.push_str("\nmaps (objects whose keys are data, not field names):\n");
    if schema.maps.is_empty() {
        text.push_str("  none\n");
    }
    for (path, reason) in &schema.maps {
        let why = match reason {
            MapReason::Forced => "--map".to_string(),
            MapReason::Key(key) => format!("the key {key:?} is not a field name"),
            MapReason::ManyKeys(count) => format!("{count} distinct keys"),
            MapReason::Sparse { keys, objects, held } => format!(
                "{keys} distinct keys of one shape, each object holding few ({held} in {objects} objects)"
            ),
            MapReason::Codes { keys, example } => {
                format!("{keys} distinct keys of one shape, each a code like {example:?}")
            }
        };
        let _ = writeln!(text, "  {path}: {why}");
    }
    text.push_str("\nshared records (one type at several paths; its counts are over all of them):\n");
    if schema.shared.is_empty() {
        text.push_str("  none\n");
    }
    for paths in &schema.shared {
        let _ = writeln!(text, "  {}", paths.join(", "));
    }
    text.push_str("\nconflicts (several kinds at one path):\n");
    let conflicts = schema.conflicts();
    if conflicts.is_empty() {
        text.push_str("  none\n");
    }
    for conflict in conflicts {
        let _ = writeln!(text, "  {}: {}", conflict.path, conflict.kinds.join(" | "));
    }
    text
}

fn describe(ty: &Type, absent: Option<u64>) -> String {
    let mut words = match &ty.kind {
        Kind::Null if ty.seen == 0 => "never seen (only empty lists)".to_string(),
        Kind::Null => "always null".to_string(),
        Kind::Array(item) => format!("array of {}", short(item)),
        Kind::Map(value) => format!("map of {}", short(value)),
        Kind::Record(fields) => format!("record of {} fields", fields.len()),
        Kind::Union(branches) => {
            let kinds: Vec<&str> = branches.iter().map(|branch| branch.kind.name()).collect();
            format!("conflict: {}", kinds.join(" | "))
        }
        kind => kind.name().to_string(),
    };
    if ty.nullable() && ty.kind != Kind::Null {
        let _ = write!(words, ", null in {} of {}", ty.nulls, ty.seen);
    }
    if let Some(absent) = absent.filter(|&absent| absent > 0) {
        let _ = write!(words, ", absent from {absent} of {}", absent + ty.seen);
    }
    words
}

fn short(ty: &Type) -> String {
    let kind = match &ty.kind {
        Kind::Null if ty.seen == 0 => "nothing (always empty)",
        Kind::Union(_) => "several kinds",
        kind => kind.name(),
    };
    if ty.nullable() && ty.kind != Kind::Null {
        format!("{kind} or null")
    } else {
        kind.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::data::{Request, load};

    #[test]
    fn the_summary_lists_every_path_with_nulls_absences_maps_and_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("orders.ndjson");
        std::fs::write(
            &path,
            "{\"id\": 1, \"note\": null, \"items\": [{\"sku\": \"a\", \"qty\": 1}], \"tags\": {\"x-y\": 1}, \"v\": 1}\n\
             {\"id\": 2, \"note\": \"gift\", \"items\": [], \"v\": \"one\"}\n",
        )
        .unwrap();
        let payload = load(&Request {
            sources: vec![path.display().to_string()],
            ..Request::default()
        })
        .unwrap()[0];
        let text = text(payload);
        let expected = format!(
            "data:orders: {} (ndjson), 2 records, 119 bytes of compact JSON\n\n\
             $              record of 5 fields\n\
             $.id           int\n\
             $.items        array of record\n\
             $.items[]      record of 2 fields\n\
             $.items[].qty  int\n\
             $.items[].sku  string\n\
             $.note         string, null in 1 of 2\n\
             $.tags         map of int, absent from 1 of 2\n\
             $.tags.*       int\n\
             $.v            conflict: int | string\n\
             \n\
             maps (objects whose keys are data, not field names):\n  $.tags: the key \"x-y\" is not a field name\n\
             \n\
             shared records (one type at several paths; its counts are over all of them):\n  none\n\
             \n\
             conflicts (several kinds at one path):\n  $.v: int | string\n",
            path.display()
        );
        assert_eq!(text, expected);
    }
}

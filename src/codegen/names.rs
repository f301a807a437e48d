//! Rust names for the data's keys. A key becomes a snake_case field and a PascalCase type by one
//! rule, stated here once and printed in the generated code beside every field it changed:
//!
//! - words are split at every character that is not an ASCII letter or digit, and between a lower
//!   case letter or digit and an upper case letter (`userId`, `content-type` -> `user_id`,
//!   `content_type`); a non-ASCII character becomes `u` and its code point in hex (`über` ->
//!   `u00fc_ber`);
//! - a name that starts with a digit, or is empty, gets a leading `_` (`3ds` -> `_3ds`) for a
//!   field (a key with no letter or digit at all, `""` or `-`, is the field `empty_key`), `T` for a
//!   type; a Rust keyword gets a trailing `_` (`type` -> `type_`, `self` ->
//!   `self_`);
//! - two keys of one record that map to the same name are told apart by `_2`, `_3`, ... in key
//!   order.
//!
//! The original key stays in the bytes: every changed field carries `#[serde(rename = "...")]`.

use std::collections::BTreeSet;

/// Rust's keywords, strict and reserved (2024 edition), and the names a field or type may not
/// take for other reasons.
const KEYWORDS: [&str; 53] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "union",
];

/// The key's words, lower case.
fn words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for character in key.chars() {
        if character.is_ascii_alphanumeric() {
            if character.is_ascii_uppercase() && previous_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = character.is_ascii_lowercase() || character.is_ascii_digit();
            word.push(character.to_ascii_lowercase());
        } else {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            if !character.is_ascii() {
                words.push(format!("u{:04x}", character as u32));
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The snake_case field name of `key` (before telling equal names apart).
pub fn field(key: &str) -> String {
    let words = words(key);
    if words.is_empty() {
        // `_` alone is not a field name, and a leading `_` is dropped by prost-build's names.
        return "empty_key".to_string();
    }
    spellable(words.join("_"), "_")
}

/// The PascalCase type name of `key` (before telling equal names apart).
pub fn type_name(key: &str) -> String {
    let name: String = words(key)
        .iter()
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    spellable(name, "T")
}

/// `name` as Rust can spell it: `lead` before an empty name or one that starts with a digit, `_`
/// after a keyword.
fn spellable(name: String, lead: &str) -> String {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{lead}{name}")
    } else if KEYWORDS.contains(&name.as_str()) {
        format!("{name}_")
    } else {
        name
    }
}

/// Hands out names that are unique within one scope (the fields of a record, the types of a
/// module): a second `name` becomes `name_2`, then `name_3`. Types are told apart without the `_`
/// (`User2`), as Rust spells type names, and a type's name also takes the names generated code
/// makes of it (rkyv's `ArchivedUser` and `UserResolver`, flatc's `UserArgs`, `UserBuilder` and
/// `UserOffset` beside its table `User`, the borrowed twin `UserRef`), so no two types meet there
/// either.
#[derive(Default)]
pub struct Scope {
    taken: BTreeSet<String>,
    separator: &'static str,
    /// The (prefix, suffix) of every name a derive makes of a type's.
    derived: &'static [(&'static str, &'static str)],
}

/// rkyv's derive names the archived type and the resolver after the type; flatc names a table's
/// arguments, builder and offset marker after the table (which FlatBuffers names as the struct);
/// the borrowed twin of a struct is `{name}Ref` (src/codegen/rust.rs).
const DERIVED_TYPES: [(&str, &str); 6] = [
    ("Archived", ""),
    ("", "Resolver"),
    ("", "Args"),
    ("", "Builder"),
    ("", "Offset"),
    ("", "Ref"),
];

impl Scope {
    /// A scope of field names.
    pub fn fields() -> Scope {
        Scope {
            taken: BTreeSet::new(),
            separator: "_",
            derived: &[],
        }
    }

    /// A scope of type names in which `reserved` are already taken.
    pub fn types(reserved: &[&str]) -> Scope {
        Scope {
            taken: reserved.iter().map(|name| name.to_string()).collect(),
            separator: "",
            derived: &DERIVED_TYPES,
        }
    }

    pub fn claim(&mut self, name: String) -> String {
        let mut unique = name.clone();
        let mut suffix = 2;
        while self.names_of(&unique).any(|taken| self.taken.contains(&taken)) {
            unique = format!("{name}{}{suffix}", self.separator);
            suffix += 1;
        }
        let names: Vec<String> = self.names_of(&unique).collect();
        self.taken.extend(names);
        unique
    }

    /// `name` and the names derives make of it.
    fn names_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = String> + 'a {
        std::iter::once(name.to_string()).chain(
            self.derived
                .iter()
                .map(move |(prefix, suffix)| format!("{prefix}{name}{suffix}")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_rust_cannot_spell_are_mapped_by_the_stated_rule() {
        let cases = [
            ("id", "id"),
            ("userId", "user_id"),
            ("content-type", "content_type"),
            ("3ds", "_3ds"),
            ("type", "type_"),
            ("match", "match_"),
            ("self", "self_"),
            ("Self", "self_"),
            ("über", "u00fc_ber"),
            ("", "empty_key"),
            ("-", "empty_key"),
            ("a b", "a_b"),
            ("HTTPStatus", "httpstatus"),
            ("__proto__", "proto"),
        ];
        for (key, expected) in cases {
            assert_eq!(field(key), expected, "{key:?}");
        }
        assert_eq!(type_name("user_mentions"), "UserMentions");
        assert_eq!(type_name("3ds"), "T3ds");
        assert_eq!(type_name("self"), "Self_");
        assert_eq!(type_name("content-type"), "ContentType");
    }

    #[test]
    fn equal_names_in_one_scope_are_told_apart_in_order() {
        let mut fields = Scope::fields();
        let names: Vec<String> = ["user_id", "user_id", "user_id"]
            .map(|name| fields.claim(name.to_string()))
            .into();
        assert_eq!(names, ["user_id", "user_id_2", "user_id_3"]);
        let mut types = Scope::types(&["Records"]);
        let names: Vec<String> = ["User", "Records", "User"]
            .map(|name| types.claim(name.to_string()))
            .into();
        assert_eq!(names, ["User", "Records2", "User2"]);
        // rkyv's derive makes `ArchivedDns` and `DnsResolver` of `Dns` (and `ArchivedDnsResolver` of
        // `DnsResolver`, so `ArchivedDns` cannot be a type: its resolver would meet that one).
        let mut types = Scope::types(&[]);
        let names: Vec<String> = ["DnsResolver", "Dns", "ArchivedDns", "Archived"]
            .map(|name| types.claim(name.to_string()))
            .into();
        assert_eq!(names, ["DnsResolver", "Dns2", "ArchivedDns3", "Archived"]);
        // flatc makes `UserArgs` of the table `User`: a struct of the key `user_args` steps aside.
        let mut types = Scope::types(&[]);
        let names: Vec<String> = ["User", "UserArgs", "UserOffset", "Builder"]
            .map(|name| types.claim(name.to_string()))
            .into();
        assert_eq!(names, ["User", "UserArgs2", "UserOffset2", "Builder"]);
    }
}

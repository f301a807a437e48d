//! Writing Rust source for a data schema: the types of a user's data with each format's derives
//! ([`rust`]) under names no format's own generated code takes ([`names`]). The typed build that
//! uses them is [`crate::typed`]; FlatBuffers' and Cap'n Proto's typed readers use them too.
//! Every string of the data reaches generated source through [`crate::escape`] (`rust_str`,
//! `rust_comment`) or as a name of [`names`]; templates are filled by [`render`].

pub mod names;
pub mod rust;

/// FNV-1a, 64 bits, in hex: a cache key, not a checksum against an adversary.
pub(crate) fn key_of(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// `template` with each `{{name}}` replaced by its value in `values`, in one pass: a value is
/// never read again, so what it holds (a `{{...}}` of a key, say) stays text. Every placeholder
/// must have a value and every value a placeholder (a mismatch is a bug of serbench's).
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, value)| value.len()).sum::<usize>());
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").expect("a template's placeholder is closed");
        let name = &after[..end];
        let index = values
            .iter()
            .position(|(known, _)| *known == name)
            .unwrap_or_else(|| panic!("no value for the placeholder {name}"));
        out.push_str(values[index].1);
        used[index] = true;
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if let Some(index) = used.iter().position(|used| !used) {
        panic!("the template has no placeholder {}", values[index].0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_each_placeholder_once_and_never_reads_a_value_again() {
        let text = render("a {{x}} b {{y}} {{x}}", &[("x", "{{y}}"), ("y", "1")]);
        assert_eq!(text, "a {{y}} b 1 {{y}}");
    }

    #[test]
    #[should_panic(expected = "no value for the placeholder z")]
    fn a_placeholder_without_a_value_is_a_bug() {
        render("{{z}}", &[]);
    }
}

//! One escaping function per output language. Every string serbench did not write itself (a
//! file's name, a JSON key, a CSV cell, a host column, an environment variable) passes the one
//! for the output it reaches: generated Rust, Markdown (rendered by kramdown under Liquid),
//! HTML, JSON inside `<script>`, SVG/XML, the terminal. The rules are in docs/files.md.

use std::borrow::Cow;

/// Characters no output shows as themselves: C0 and C1 controls, DEL, the line and paragraph
/// separators, and the bidirectional overrides that reorder what a reader sees.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// A Rust string literal, quotes included, that holds `text` exactly: printable ASCII only,
/// so no newline, quote or raw-string delimiter of `text` can end it.
pub fn rust_str(text: &str) -> String {
    format!("\"{}\"", text.escape_default())
}

/// `text` as the words of a Rust `//` or `///` line: one line of printable ASCII (the same
/// escapes as [`rust_str`], without the quotes), so it cannot end the comment.
pub fn rust_comment(text: &str) -> String {
    text.escape_default().to_string()
}

/// A TOML basic string, quotes included, that holds `text` exactly (a generated Cargo.toml's
/// paths): JSON's escapes, which TOML's include, and DEL, which JSON leaves as it is, as
/// `\u007f`, so no quote, line break or control character of `text` can end it.
pub fn toml_str(text: &str) -> String {
    serde_json::to_string(text)
        .expect("a string is JSON")
        .replace('\u{7f}', "\\u007f")
}

/// Text for Liquid (Jekyll renders report.md through it): braces become character references,
/// so no `{{`, `{%` or `{% endraw %}` survives. The result is meant for Markdown or HTML,
/// which turn the references back into braces.
pub fn liquid(text: &str) -> Cow<'_, str> {
    if !text.contains(['{', '}']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('{', "&#123;").replace('}', "&#125;"))
}

/// Inline Markdown (kramdown and GitHub's) that renders as exactly the characters of `text`,
/// on one line, with no markup, link, HTML or Liquid: `&`, `<`, `>` and the braces become
/// character references, as are `^ ~` (kramdown has no backslash escape for them), every other
/// ASCII punctuation that Markdown reads is backslash-escaped (dashes and dots in runs, which
/// kramdown would turn into typographic ones, and the dot after leading digits), a first
/// character that could open a block and leading or trailing spaces are references, and line
/// breaks and control characters become U+FFFD. Also safe inside a table cell.
pub fn markdown(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (index, &c) in chars.iter().enumerate() {
        let neighbour = |offset: isize| {
            index
                .checked_add_signed(offset)
                .and_then(|at| chars.get(at))
                .copied()
        };
        let edge = chars[..index].iter().all(|&c| c == ' ') || chars[index..].iter().all(|&c| c == ' ');
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if is_unsafe_char(c) => out.push('\u{fffd}'),
            // Leading spaces open a code block, trailing ones a line break.
            ' ' if edge => out.push_str("&#32;"),
            // A list marker, a heading, a quote, a definition or an ordered list's number; and
            // what kramdown cannot backslash-escape (braces also end Liquid's `raw`).
            c if (index == 0 && !c.is_alphanumeric() && c.is_ascii() && c != ' ')
                || matches!(c, '{' | '}' | '^' | '~') =>
            {
                out.push_str(&format!("&#{};", u32::from(c)));
            }
            // Runs of dashes and dots become typographic dashes and ellipses; digits and a dot
            // open an ordered list.
            '-' | '.'
                if neighbour(-1) == Some(c)
                    || neighbour(1) == Some(c)
                    || (c == '.' && index > 0 && chars[..index].iter().all(char::is_ascii_digit)) =>
            {
                out.push('\\');
                out.push(c);
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '+' | '!' | '|' | '$' | ':' | '"'
            | '\'' | '=' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// HTML text or a quoted attribute's value: `& < > " '` as references, control characters as
/// U+FFFD.
pub fn html(text: &str) -> String {
    xml(text)
}

/// SVG/XML text or a quoted attribute's value: well-formed XML 1.0 whatever `text` holds
/// (`& < > " '` as references; control characters, which XML forbids or a reader cannot
/// see, as U+FFFD).
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if xml_forbids(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// What [`xml`] replaces by U+FFFD: controls and the other unsafe characters, and the
/// noncharacters XML 1.0 forbids.
fn xml_forbids(c: char) -> bool {
    is_unsafe_char(c) || matches!(c, '\u{fffe}' | '\u{ffff}')
}

/// [`xml`] for a writer that escapes `& < > " '` itself (plotters' SVG backend): only the
/// characters XML cannot hold become U+FFFD, so the writer's escapes are not doubled.
pub fn xml_chars(text: &str) -> Cow<'_, str> {
    if !text.chars().any(xml_forbids) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if xml_forbids(c) { '\u{fffd}' } else { c })
            .collect(),
    )
}

/// JSON text made safe inside an HTML `<script>` element: `<`, `>` and `&` as `\u003c`,
/// `\u003e`, `\u0026` (so neither `</script>` nor `<!--` can occur), and U+2028/U+2029 escaped.
/// `json` must be JSON (these characters occur only inside its strings, where the escapes
/// mean the same characters).
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for the terminal: every character of [`is_unsafe_char`] (ESC and every other
/// control, so no escape sequence, clipboard write or erased line) shown as its Rust escape
/// (`\n`, `\u{1b}`); everything else as it is.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads back a literal [`rust_str`] wrote, as rustc's lexer would (the escapes
    /// `escape_default` writes: `\t \r \n \\ \' \"` and `\u{…}`); `None` where it is not one
    /// literal.
    fn unescape_rust(literal: &str) -> Option<String> {
        let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return None,
                '\\' => match chars.next()? {
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'n' => out.push('\n'),
                    '\\' => out.push('\\'),
                    '\'' => out.push('\''),
                    '"' => out.push('"'),
                    'u' => {
                        if chars.next()? != '{' {
                            return None;
                        }
                        let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                },
                c if c.is_ascii_graphic() || c == ' ' => out.push(c),
                _ => return None,
            }
        }
        Some(out)
    }

    const HOSTILE: &[&str] = &[
        "\n\"; const _: &str = r#\"",
        "\"#; mod serbench {}",
        "<img src=x onerror=alert(1)>",
        "<!--<script>",
        "</script><script>alert(1)</script>",
        "{% endraw %}{{ site.github }}{% raw %}",
        "[x](javascript:alert(1))",
        "\u{1b}]52;c;aGk=\u{7}\u{1b}[2K",
        "\u{0}NUL\u{202e}gnp.exe",
        "# heading\n---\n| a | b |",
        "1. item",
        "$$x$$ {: .class} *[x]: y",
    ];

    #[test]
    fn rust_literals_read_back_as_the_text() {
        for text in HOSTILE {
            let literal = rust_str(text);
            assert!(literal.chars().all(|c| c.is_ascii_graphic() || c == ' '));
            assert_eq!(unescape_rust(&literal).as_deref(), Some(*text), "{literal}");
            assert!(!rust_comment(text).contains(['\n', '\r']));
        }
    }

    #[test]
    fn markdown_keeps_no_markup_liquid_or_line_break() {
        for text in HOSTILE {
            let out = markdown(text);
            for bad in ["<", "{%", "{{", "\n", "\r", "](", "\u{1b}", "\u{0}"] {
                assert!(!out.contains(bad), "{bad:?} in {out:?}");
            }
            assert!(!out.starts_with(['#', '-', '|', '$', '*']), "{out:?}");
            assert!(!out.starts_with("1."), "{out:?}");
        }
        assert_eq!(markdown("serde_json|x"), "serde\\_json\\|x");
        assert_eq!(markdown("data:orders"), "data\\:orders");
        assert_eq!(markdown("x86_64-linux a--b"), "x86\\_64-linux a\\-\\-b");
        assert_eq!(markdown(" x ~ "), "&#32;x &#126;&#32;");
        assert_eq!(markdown("a<!--b...c-d"), "a&lt;\\!\\-\\-b\\.\\.\\.c-d");
        assert_eq!(markdown("2026-12-06 12. x"), "2026-12-06 12. x");
        assert_eq!(markdown("12. x"), "12\\. x");
    }

    #[test]
    fn xml_is_well_formed_and_script_json_cannot_close_the_script() {
        for text in HOSTILE {
            let svg = format!("<svg><text a=\"{}\">{}</text></svg>", xml(text), xml(text));
            let document = roxmltree::Document::parse(&svg).expect("well-formed");
            let shown: String = text
                .chars()
                .map(|c| if is_unsafe_char(c) { '\u{fffd}' } else { c })
                .collect();
            assert_eq!(
                document.root_element().first_child().unwrap().text(),
                Some(&*shown)
            );
            let json = serde_json::to_string(text).unwrap();
            let safe = script_json(&json);
            assert!(!safe.contains('<') && !safe.contains("-->"));
            assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), *text);
        }
    }

    #[test]
    fn terminal_shows_escapes_instead_of_running_them() {
        assert_eq!(terminal("plain ümlaut"), "plain ümlaut");
        assert_eq!(terminal("\u{1b}[2Kx\n"), "\\u{1b}[2Kx\\n");
        assert_eq!(terminal("a\u{202e}b"), "a\\u{202e}b");
    }

    proptest! {
        #[test]
        fn every_escape_holds_for_arbitrary_unicode(text in any::<String>()) {
            let literal = rust_str(&text);
            prop_assert_eq!(unescape_rust(&literal), Some(text.clone()));
            prop_assert!(rust_comment(&text).chars().all(|c| c.is_ascii_graphic() || c == ' '));
            let md = markdown(&text);
            let markup = md.contains(['<', '\n', '\r']) || md.contains("{%") || md.contains("{{");
            prop_assert!(!markup, "markup in {:?}", md);
            prop_assert!(!md.chars().any(is_unsafe_char));
            let svg = format!("<t a=\"{}\">{}</t>", xml(&text), xml(&text));
            prop_assert!(roxmltree::Document::parse(&svg).is_ok());
            let json = script_json(&serde_json::to_string(&text).unwrap());
            prop_assert!(!json.contains('<'));
            prop_assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text.clone());
            prop_assert!(!terminal(&text).chars().any(is_unsafe_char));
            let toml: toml::Table = toml::from_str(&format!("a = {}", toml_str(&text))).unwrap();
            prop_assert_eq!(toml["a"].as_str(), Some(text.as_str()));
        }
    }
}

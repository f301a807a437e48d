//! Reading a JSON data file into records: the framing (one document, a top-level array of
//! records, or NDJSON), detected or given, and every number exactly as written.
//!
//! The parser is serde_json's (its errors carry line and column, and its recursion limit of 128
//! nested arrays or objects turns a 10^5-deep file into an error, not a stack overflow), driven
//! by a seed of our own that builds the `serde_json::Value`: each number is read again from its
//! own text with Rust's correctly rounded parser (serde_json without its `float_roundtrip`
//! feature reads some doubles one unit in the last place off; serbench enables it).
//! The seed also refuses what would silently change the data: an integer beyond the 64-bit
//! signed range (JSON integers are `i64` here) and a key that appears twice in one object.

use std::fmt;

use anyhow::{Result, anyhow};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// How a data file holds its records.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DataFraming {
    /// One JSON value: one record.
    Document,
    /// A top-level array: one record per element.
    Array,
    /// One JSON value per line.
    Ndjson,
}

impl DataFraming {
    pub const ALL: [DataFraming; 3] = [DataFraming::Document, DataFraming::Array, DataFraming::Ndjson];

    pub fn name(self) -> &'static str {
        match self {
            DataFraming::Document => "document",
            DataFraming::Array => "array",
            DataFraming::Ndjson => "ndjson",
        }
    }
}

/// The records of a data file and how it held them.
#[derive(Debug)]
pub struct Parsed {
    pub framing: DataFraming,
    pub records: Vec<Value>,
}

/// Parses `bytes` (the file `origin`, for messages) with the framing given or, without one,
/// detected: a text that is one value is a document, or an array of records when that value is
/// an array; more than one value is NDJSON. Errors name `origin`, line and column.
pub fn parse(origin: &str, bytes: &[u8], framing: Option<DataFraming>) -> Result<Parsed> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(anyhow!("{origin}: the file holds no JSON value"));
    }
    let framing = match framing {
        Some(framing) => framing,
        None => match one_value(bytes) {
            Ok(value) => {
                return Ok(match value {
                    Value::Array(records) => Parsed {
                        framing: DataFraming::Array,
                        records,
                    },
                    document => Parsed {
                        framing: DataFraming::Document,
                        records: vec![document],
                    },
                });
            }
            Err(Failure::Trailing) => DataFraming::Ndjson,
            Err(Failure::Json(error)) => return Err(located(origin, 0, &error)),
        },
    };
    let records = match framing {
        DataFraming::Document => vec![one_value(bytes).map_err(|failure| failure.located(origin))?],
        DataFraming::Array => match one_value(bytes).map_err(|failure| failure.located(origin))? {
            Value::Array(records) => records,
            other => {
                return Err(anyhow!(
                    "{origin}: --data-framing array needs a top-level array, and the file holds {}",
                    kind_name(&other)
                ));
            }
        },
        DataFraming::Ndjson => ndjson(origin, bytes)?,
    };
    Ok(Parsed { framing, records })
}

/// One record per non-blank line, each parsed on its own.
fn ndjson(origin: &str, bytes: &[u8]) -> Result<Vec<Value>> {
    let mut records = Vec::new();
    for (index, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match one_value(line) {
            Ok(value) => records.push(value),
            Err(Failure::Trailing) => {
                return Err(anyhow!(
                    "{origin}:{}: more than one JSON value on the line (NDJSON holds one record per line)",
                    index + 1
                ));
            }
            Err(Failure::Json(error)) => return Err(located(origin, index, &error)),
        }
    }
    Ok(records)
}

enum Failure {
    /// The text holds a complete value and then more.
    Trailing,
    Json(serde_json::Error),
}

impl Failure {
    fn located(self, origin: &str) -> anyhow::Error {
        match self {
            Failure::Trailing => {
                anyhow!("{origin}: more than one JSON value in the file (NDJSON? pass --data-framing ndjson)")
            }
            Failure::Json(error) => located(origin, 0, &error),
        }
    }
}

/// The one JSON value `bytes` holds.
fn one_value(bytes: &[u8]) -> Result<Value, Failure> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let mut state = State {
        numbers: NumberTokens { bytes, at: 0 },
        path: String::from("$"),
    };
    let value = Exact(&mut state)
        .deserialize(&mut deserializer)
        .map_err(Failure::Json)?;
    deserializer.end().map_err(|_| Failure::Trailing)?;
    Ok(value)
}

/// `origin:line:column: message`, the line counted from `first_line` (0 for a whole file).
fn located(origin: &str, first_line: usize, error: &serde_json::Error) -> anyhow::Error {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = message.strip_suffix(&position).unwrap_or(&message);
    let message = match message {
        "recursion limit exceeded" => {
            "nested deeper than 128 arrays or objects (serde_json's recursion limit)"
        }
        other => other,
    };
    if error.line() == 0 {
        anyhow!("{origin}: {message}")
    } else {
        anyhow!(
            "{origin}:{}:{}: {message}",
            first_line + error.line(),
            error.column()
        )
    }
}

pub(crate) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(number) if number.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The number tokens of a JSON text in document order, as written. serde_json visits numbers
/// in the same order, so the seed takes the next token at each number it is given.
struct NumberTokens<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> NumberTokens<'a> {
    fn next_token(&mut self) -> Option<&'a str> {
        let bytes = self.bytes;
        while self.at < bytes.len() {
            match bytes[self.at] {
                b'"' => {
                    // Skip the string, escapes included: digits inside it are text.
                    self.at += 1;
                    while self.at < bytes.len() && bytes[self.at] != b'"' {
                        self.at += if bytes[self.at] == b'\\' { 2 } else { 1 };
                    }
                    self.at += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = self.at;
                    while self.at < bytes.len()
                        && matches!(bytes[self.at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                    {
                        self.at += 1;
                    }
                    // ASCII only, so this cannot fail.
                    return std::str::from_utf8(&bytes[start..self.at]).ok();
                }
                _ => self.at += 1,
            }
        }
        None
    }
}

struct State<'a> {
    numbers: NumberTokens<'a>,
    /// The JSON path of the value being read, for messages.
    path: String,
}

impl State<'_> {
    fn number<E: de::Error>(&mut self) -> Result<&str, E> {
        self.numbers.next_token().ok_or_else(|| {
            E::custom(format!(
                "{}: a number serbench did not find in the text",
                self.path
            ))
        })
    }

    fn beyond_i64<E: de::Error>(&self, token: &str) -> E {
        E::custom(format!(
            "{}: the integer {token} is beyond the 64-bit signed range that serbench's formats share \
             (write it as a string, or as a float if it may be rounded)",
            self.path
        ))
    }
}

/// Builds the `Value` with every number read exactly from its text.
struct Exact<'s, 'a>(&'s mut State<'a>);

impl<'de> DeserializeSeed<'de> for Exact<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact<'_, '_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.0.number::<E>()?;
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        let token = self.0.number::<E>()?;
        match i64::try_from(value) {
            Ok(value) => Ok(Value::from(value)),
            Err(_) => {
                let token = token.to_string();
                Err(self.0.beyond_i64(&token))
            }
        }
    }

    fn visit_f64<E: de::Error>(self, _rounded: f64) -> Result<Value, E> {
        let token = self.0.number::<E>()?.to_string();
        // An integer literal serde_json could only read as a double (`-0` is the one integer it
        // reads as a double on purpose, keeping its sign).
        if !token.contains(['.', 'e', 'E']) && token != "-0" {
            return Err(self.0.beyond_i64(&token));
        }
        let exact: f64 = token
            .parse()
            .map_err(|_| E::custom(format!("{}: {token} is not a number", self.0.path)))?;
        serde_json::Number::from_f64(exact)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{}: {token} is not a finite double", self.0.path)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let state = self.0;
        let mut items = Vec::new();
        let parent = state.path.len();
        loop {
            state.path.truncate(parent);
            state.path.push_str(&format!("[{}]", items.len()));
            match seq.next_element_seed(Exact(&mut *state))? {
                Some(item) => items.push(item),
                None => break,
            }
        }
        state.path.truncate(parent);
        // Growth leaves room for up to twice the items (four for a short array): give it back,
        // which is most of the memory of a file of small arrays.
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let state = self.0;
        let mut object = Map::new();
        let parent = state.path.len();
        while let Some(key) = map.next_key::<String>()? {
            push_key(&mut state.path, &key);
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "{}: the key {key:?} appears twice in one object (a JSON reader keeps one of \
                     them, so the data would change)",
                    &state.path[..parent]
                )));
            }
            let value = map.next_value_seed(Exact(&mut *state))?;
            state.path.truncate(parent);
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Appends `.key` to a JSON path, or `["key"]` when the key is not a plain name.
pub(crate) fn push_key(path: &mut String, key: &str) {
    let plain = key
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{}]", serde_json::Value::from(key)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Parsed {
        parse("t.json", text.as_bytes(), None).unwrap()
    }

    fn error(text: &str, framing: Option<DataFraming>) -> String {
        format!("{:#}", parse("t.json", text.as_bytes(), framing).unwrap_err())
    }

    #[test]
    fn the_framing_is_detected_from_the_text() {
        let document = records(" {\"a\": 1} \n");
        assert_eq!(document.framing, DataFraming::Document);
        assert_eq!(document.records, vec![serde_json::json!({"a": 1})]);
        let array = records("[{\"a\": 1}, {\"a\": 2}]");
        assert_eq!(array.framing, DataFraming::Array);
        assert_eq!(array.records.len(), 2);
        let ndjson = records("{\"a\": 1}\r\n\n{\"a\": 2}\n[3]\n");
        assert_eq!(ndjson.framing, DataFraming::Ndjson);
        assert_eq!(ndjson.records.len(), 3);
        assert_eq!(records("\u{FEFF}[1]").records, vec![serde_json::json!(1)]);
    }

    #[test]
    fn a_given_framing_is_obeyed() {
        let forced = parse("t.json", b"[1, 2]", Some(DataFraming::Document)).unwrap();
        assert_eq!(forced.records, vec![serde_json::json!([1, 2])]);
        let one_line = parse("t.json", b"{\"a\": 1}", Some(DataFraming::Ndjson)).unwrap();
        assert_eq!(one_line.framing, DataFraming::Ndjson);
        assert!(
            error("{\"a\": 1}", Some(DataFraming::Array))
                .contains("needs a top-level array, and the file holds an object")
        );
        assert!(error("{} {}", Some(DataFraming::Document)).contains("more than one JSON value"));
        assert!(
            error("{} {}", Some(DataFraming::Ndjson))
                .contains("t.json:1: more than one JSON value on the line")
        );
    }

    #[test]
    fn malformed_text_is_one_line_with_file_line_and_column() {
        assert_eq!(
            error("{\"a\": 1,\n \"b\": tru}", None),
            "t.json:2:10: expected ident"
        );
        assert_eq!(
            error("{\"a\": 1}\n{\"a\": 2}\n{\"a\": }\n", None),
            "t.json:3:7: expected value"
        );
        assert_eq!(error("  \n ", None), "t.json: the file holds no JSON value");
        assert_eq!(error("[1, 2", None), "t.json:1:5: EOF while parsing a list");
        assert_eq!(
            error("\"\\ud800\"", None),
            "t.json:1:8: unexpected end of hex escape"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(
            error(&deep, None),
            "t.json:1:128: nested deeper than 128 arrays or objects (serde_json's recursion limit)"
        );
        let deep_objects = "{\"a\":".repeat(100_000) + "1" + &"}".repeat(100_000);
        assert!(error(&deep_objects, None).contains("nested deeper than 128"));
        let deep_line = format!("{{}}\n{}\n", "[".repeat(100_000));
        assert!(error(&deep_line, None).starts_with("t.json:2:128: nested deeper"));
    }

    #[test]
    fn numbers_are_read_exactly_as_written() {
        // serde_json's default reading of this literal is one unit in the last place off.
        let text = "[-65.613616999999977, 0.1, 1e-7, 2.5E3, -0.0, 17, -9223372036854775808]";
        let parsed = records(text);
        let numbers: Vec<f64> = parsed
            .records
            .iter()
            .map(|value| value.as_f64().unwrap())
            .collect();
        let exact: Vec<f64> = ["-65.613616999999977", "0.1", "1e-7", "2.5E3", "-0.0"]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
        assert_eq!(numbers[..5], exact[..]);
        assert!(numbers[4].is_sign_negative());
        assert_eq!(parsed.records[5], serde_json::json!(17));
        assert_eq!(parsed.records[6].as_i64(), Some(i64::MIN));
        // Digits inside strings and keys are not numbers.
        let tricky = records(r#"{"1e5": "2.5 \"3\" 4", "k\\": [1.25, "x9"], "z": 0.3}"#);
        assert_eq!(tricky.records[0]["z"].as_f64(), Some(0.3));
        assert_eq!(tricky.records[0]["k\\"][0].as_f64(), Some(1.25));
    }

    #[test]
    fn integers_beyond_i64_are_refused_with_path_and_value() {
        let message = error("{\"a\": [1, {\"id\": 9223372036854775808}]}", None);
        assert!(
            message.starts_with(
                "t.json:1:36: $.a[1].id: the integer 9223372036854775808 is beyond the 64-bit signed range"
            ),
            "{message}"
        );
        let huge = error("[123456789012345678901234567890]", None);
        assert!(
            huge.contains("$[0]: the integer 123456789012345678901234567890 is beyond"),
            "{huge}"
        );
    }

    #[test]
    fn a_key_twice_in_one_object_is_refused() {
        let message = error("{\"a\": {\"b\": 1, \"b\": 2}}", None);
        assert!(message.starts_with("t.json:1:"), "{message}");
        assert!(message.contains("$.a: the key \"b\" appears twice"), "{message}");
    }

    #[test]
    fn paths_quote_keys_that_are_not_plain_names() {
        let message = error("{\"über\": {\"a b\": [18446744073709551615]}}", None);
        assert!(
            message.contains("$[\"über\"][\"a b\"][0]: the integer"),
            "{message}"
        );
    }
}

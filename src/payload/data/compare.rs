//! Whether decoded data is the data: the first difference between two JSON values, with its
//! path and both values, under the equivalence a format can keep.

use std::fmt;

use serde_json::Value;

/// What counts as the same data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Equivalence {
    /// The same JSON: numbers of the same kind (integer or float) and value, every field as it
    /// was (a null field is not an absent one).
    Exact,
    /// What a format with a schema keeps: a record field that is null equals one that is
    /// absent (a schema writes one of the two for both), and an integer equals a float of the
    /// same value (a float field carries the integers the file wrote at that path).
    Schema,
}

/// The first place where two values differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// A concrete JSON path (`$.statuses[3].user.id`).
    pub path: String,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.path, self.expected, self.found
        )
    }
}

impl std::error::Error for Difference {}

/// The first difference between `expected` and `found` (depth first, fields in key order), or
/// `None` when they are the same data under `equivalence`.
pub fn first_difference(expected: &Value, found: &Value, equivalence: Equivalence) -> Option<Difference> {
    let mut path = String::from("$");
    differ(expected, found, equivalence, &mut path)
}

/// The same over two lists of records, the list being the path's root (`$[41].name`).
pub fn first_record_difference(
    expected: &[Value],
    found: &[Value],
    equivalence: Equivalence,
) -> Option<Difference> {
    if expected.len() != found.len() {
        return Some(Difference {
            path: "$".to_string(),
            expected: format!("{} records", expected.len()),
            found: format!("{} records", found.len()),
        });
    }
    let mut path = String::from("$");
    expected
        .iter()
        .zip(found)
        .enumerate()
        .find_map(|(index, (expected, found))| {
            path.truncate(1);
            path.push_str(&format!("[{index}]"));
            differ(expected, found, equivalence, &mut path)
        })
}

fn differ(
    expected: &Value,
    found: &Value,
    equivalence: Equivalence,
    path: &mut String,
) -> Option<Difference> {
    let difference = |path: &str| {
        Some(Difference {
            path: path.to_string(),
            expected: shown(Some(expected)),
            found: shown(Some(found)),
        })
    };
    match (expected, found) {
        (Value::Number(a), Value::Number(b)) => {
            let same = match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a == b,
                // A float on one side at least.
                _ => {
                    a.as_f64() == b.as_f64()
                        && (a.is_f64() == b.is_f64() || equivalence == Equivalence::Schema)
                }
            };
            if same { None } else { difference(path) }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(Difference {
                    path: path.to_string(),
                    expected: format!("{} items", a.len()),
                    found: format!("{} items", b.len()),
                });
            }
            let parent = path.len();
            for (index, (a, b)) in a.iter().zip(b).enumerate() {
                path.push_str(&format!("[{index}]"));
                if let Some(difference) = differ(a, b, equivalence, path) {
                    return Some(difference);
                }
                path.truncate(parent);
            }
            None
        }
        (Value::Object(a), Value::Object(b)) => {
            let parent = path.len();
            let keys = a.keys().chain(b.keys().filter(|key| !a.contains_key(*key)));
            let mut keys: Vec<&String> = keys.collect();
            keys.sort();
            for key in keys {
                let (x, y) = (a.get(key), b.get(key));
                super::read::push_key(path, key);
                let absent_is_null = equivalence == Equivalence::Schema;
                let difference = match (x, y) {
                    (Some(x), Some(y)) => differ(x, y, equivalence, path),
                    (Some(Value::Null), None) | (None, Some(Value::Null)) if absent_is_null => None,
                    (x, y) => Some(Difference {
                        path: path.clone(),
                        expected: shown(x),
                        found: shown(y),
                    }),
                };
                if difference.is_some() {
                    return difference;
                }
                path.truncate(parent);
            }
            None
        }
        (a, b) if a == b => None,
        _ => difference(path),
    }
}

/// A value as compact JSON, cut at 80 characters; `absent` for a missing field.
fn shown(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "absent".to_string();
    };
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exact(a: Value, b: Value) -> Option<String> {
        first_difference(&a, &b, Equivalence::Exact).map(|difference| difference.to_string())
    }

    fn schema(a: Value, b: Value) -> Option<String> {
        first_difference(&a, &b, Equivalence::Schema).map(|difference| difference.to_string())
    }

    #[test]
    fn the_first_difference_has_its_path_and_both_values() {
        let a = json!({"statuses": [{"id": 1, "user": {"name": "a"}}, {"id": 2, "user": {"name": "b"}}]});
        let b = json!({"statuses": [{"id": 1, "user": {"name": "a"}}, {"id": 2, "user": {"name": "c"}}]});
        assert_eq!(
            exact(a.clone(), b),
            Some("$.statuses[1].user.name: expected \"b\", found \"c\"".into())
        );
        assert_eq!(exact(a.clone(), a), None);
        assert_eq!(
            exact(json!([1, 2]), json!([1])),
            Some("$: expected 2 items, found 1 items".into())
        );
        assert_eq!(
            exact(json!({"a b": 1}), json!({})),
            Some("$[\"a b\"]: expected 1, found absent".into())
        );
    }

    #[test]
    fn integers_and_floats_differ_exactly_but_not_under_a_schema() {
        assert!(exact(json!(3), json!(3.0)).is_some());
        assert_eq!(schema(json!(3), json!(3.0)), None);
        assert!(schema(json!(3), json!(3.5)).is_some());
        assert_eq!(exact(json!(0.1), json!(0.1)), None);
        let off_by_one_ulp = f64::from_bits(0.1f64.to_bits() + 1);
        assert_eq!(
            exact(json!(0.1), json!(off_by_one_ulp)),
            Some("$: expected 0.1, found 0.10000000000000002".into())
        );
        assert_eq!(exact(json!(i64::MAX), json!(i64::MAX)), None);
        assert!(exact(json!(i64::MAX), json!(i64::MAX - 1)).is_some());
    }

    #[test]
    fn null_equals_absent_only_under_a_schema() {
        assert_eq!(
            exact(json!({"a": null}), json!({})),
            Some("$.a: expected null, found absent".into())
        );
        assert_eq!(schema(json!({"a": null}), json!({})), None);
        assert_eq!(schema(json!({}), json!({"a": null})), None);
        assert!(schema(json!({"a": 1}), json!({})).is_some());
        // Inside an array, null is a value like any other.
        assert!(schema(json!([null]), json!([0])).is_some());
    }

    #[test]
    fn record_lists_are_compared_record_by_record() {
        let a = [json!({"a": 1}), json!({"a": 2})];
        let b = [json!({"a": 1}), json!({"a": 3})];
        assert_eq!(
            first_record_difference(&a, &b, Equivalence::Exact)
                .unwrap()
                .to_string(),
            "$[1].a: expected 2, found 3"
        );
        assert_eq!(
            first_record_difference(&a, &b[..1], Equivalence::Exact)
                .unwrap()
                .to_string(),
            "$: expected 2 records, found 1 records"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(200);
        let message = exact(json!(long), json!("y")).unwrap();
        assert!(message.len() < 120 && message.contains('…'), "{message}");
    }
}

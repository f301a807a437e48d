//! The column names of a CSV row type: its fields in declaration order, with a nested struct
//! (an arm's [`ArmId`](crate::arm::ArmId) coordinates) spelled out as its own fields, so a
//! row type holds the one identity type and every file still has flat, named columns. The csv
//! crate writes and reads such rows by position; this gives the header that goes with them.

use std::fmt;

use serde::ser::{self, Serialize, Serializer};

/// The text columns of `row` that hold a character no output shows as itself
/// ([`crate::escape::is_unsafe_char`]: a control, a bidirectional override), as `(column,
/// character)`: serbench writes none ([`clean`]), so a reader refuses a row that holds one.
pub fn unsafe_text<T: Serialize>(row: &T) -> Option<(String, char)> {
    let mut names = Names::default();
    row.serialize(&mut names).ok()?;
    names.unsafe_text
}

/// `field` as serbench writes it into a CSV file: every character of
/// [`crate::escape::is_unsafe_char`] shown as its escape ([`crate::escape::terminal`]), so a
/// NUL or an escape sequence in a note or a host column stays readable and harmless.
pub fn clean(field: &str) -> std::borrow::Cow<'_, str> {
    crate::escape::terminal(field)
}

/// The columns of `T`, from serializing one value of it.
pub fn of<T: Serialize + Default>() -> Vec<String> {
    let mut names = Names::default();
    T::default()
        .serialize(&mut names)
        .expect("collecting column names cannot fail");
    names.columns
}

#[derive(Default)]
struct Names {
    columns: Vec<String>,
    /// The field whose value is being serialized: a leaf value makes it a column, a struct
    /// value makes its own fields columns instead.
    pending: Option<&'static str>,
    /// The first text column holding an unsafe character, and the character.
    unsafe_text: Option<(String, char)>,
}

impl Names {
    fn leaf(&mut self) -> Result<(), Error> {
        if let Some(name) = self.pending.take() {
            self.columns.push(name.to_string());
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Error(message.to_string())
    }
}

impl Serializer for &mut Names {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, _: bool) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_i8(self, _: i8) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_i16(self, _: i16) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_i32(self, _: i32) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_i64(self, _: i64) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_u8(self, _: u8) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_u16(self, _: u16) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_u32(self, _: u32) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_u64(self, _: u64) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_char(self, _: char) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_str(self, text: &str) -> Result<(), Error> {
        if self.unsafe_text.is_none()
            && let Some(found) = text.chars().find(|&c| crate::escape::is_unsafe_char(c))
        {
            let column = self.pending.unwrap_or("?").to_string();
            self.unsafe_text = Some((column, found));
        }
        self.leaf()
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Error> {
        self.leaf()
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(Error("a CSV column cannot hold an enum with data".into()))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(Error("a CSV column cannot hold a list".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(Error("a CSV column cannot hold a tuple".into()))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(Error("a CSV column cannot hold a tuple".into()))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(Error("a CSV column cannot hold an enum with data".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(Error("a CSV row cannot hold a map".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        // A nested struct: its fields are the columns, not the field that holds it.
        self.pending = None;
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(Error("a CSV column cannot hold an enum with data".into()))
    }
}

impl ser::SerializeStruct for &mut Names {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.pending = Some(key);
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, serde::Serialize)]
    struct Inner {
        format: String,
        payload: String,
    }

    #[derive(Default, serde::Serialize)]
    struct Row {
        schema_version: u32,
        arm: Inner,
        mean_ns: Option<f64>,
        status: String,
    }

    #[test]
    fn an_unsafe_character_is_found_with_its_column_and_cleaned_away() {
        let mut row = Row {
            arm: Inner {
                format: "json".into(),
                payload: "order".into(),
            },
            status: "ok".into(),
            ..Row::default()
        };
        assert_eq!(unsafe_text(&row), None);
        row.arm.payload = "or\0der".to_string();
        assert_eq!(unsafe_text(&row), Some(("payload".to_string(), '\0')));
        assert_eq!(clean("a\u{1b}[2Kb\n"), "a\\u{1b}[2Kb\\n");
        assert!(!clean(&row.arm.payload).chars().any(crate::escape::is_unsafe_char));
    }

    #[test]
    fn nested_structs_spell_out_their_fields_in_order() {
        assert_eq!(
            of::<Row>(),
            ["schema_version", "format", "payload", "mean_ns", "status"]
        );
    }
}

//! CSV (the csv crate, through serde): flat records only, one header row then one row per
//! record. `order` is one row, `vec-*` are one row per item. A payload whose records hold a
//! list, a map or a nested struct has no CSV shape, so it is listed unsupported rather than
//! flattened into something else.
//!
//! Buffer policy: the writer writes into the harness's reused output buffer; each decode opens
//! a reader over the borrowed bytes (one small internal buffer per document, as any reader of
//! a single CSV document allocates) and deserializes row by row. The dynamic decode reads the
//! header and every row as `csv::StringRecord`s (CSV's untyped record), converted back to the
//! model by the header names.
//!
//! Data payloads (`--data`): records whose fields are all scalars (a document of scalars is one
//! record) as a header and `StringRecord` rows, written by `write_record` and read like the
//! dynamic decode; cells are read back by the field's inferred type, an empty cell being null
//! for a number or boolean field. A string field that may be null or absent is unsupported (CSV
//! cannot tell an empty string from null), as is any nested value or conflict.

use anyhow::{Context, Result, bail};
use std::hint::black_box;

use super::{BackendDoc, DataSupport, Fidelity, Format, Registry, TypedBorrowed, TypedDerive, TypedSupport};
use crate::arm::{Backend, Codec, DataTree, Dynamic, Operation};
use crate::payload::data::{DataPayload, Difference, Equivalence, Kind, Type};
use crate::payload::{
    Batch, Item, Items, Model, Payload, Shape, Visit, VisitBatch, visit_all, visit_batches, visit_corpora,
};

/// Why no backend decodes borrowing.
const NO_BORROWED: &str = "csv deserializes `&str` only from the `StringRecord` it first copies each row into (reused row by row), so a record would borrow that copy, not the input, and could not outlive its row";

pub static FORMAT: Format = Format {
    name: "csv",
    about: "CSV: csv through serde, flat records only",
    colour: [0xEE, 0xAA, 0xFF],
    capabilities: super::Capabilities {
        self_describing: false,
        evolution: "by header name (serde): columns may move; a header names fields but types are not on the wire",
        languages: &["every language (RFC 4180)"],
        languages_source: "https://www.rfc-editor.org/rfc/rfc4180",
    },
    backends: &[BackendDoc {
        backend: "csv",
        variant: "",
        crates: &["csv"],
        crate_note: "",
        schema: "-",
        buffer_policy: "flat records only; a writer over a reused `Vec`; each decode opens a reader over the borrowed bytes",
    }],
    fidelity: &[Fidelity {
        backend: "csv",
        variant: "",
        payload: "vec-small",
        operation: Operation::Decode,
        case: csv_vec_small_decode,
    }],
    register: |registry| {
        visit_all(&mut Csv(registry));
        visit_batches(&mut Csv(registry));
        visit_corpora(&mut Csv(registry));
        registry.unsupported_borrowed(NO_BORROWED);
    },
    typed: TypedSupport::Derive(&TypedDerive {
        refuses: |data| flat_fields(&data.typed_schema.record).err(),
        borrowed: TypedBorrowed::Not(NO_BORROWED),
        ..TypedDerive::SERDE
    }),
    data: DataSupport::Arms(|registry, payload| match flat_fields(&payload.schema.record) {
        Ok(()) => registry.data_tree(payload, Backend::new(BACKEND), DataRows, &Operation::CODEC),
        Err(reason) => registry.unsupported(payload.spec, "*", &reason),
    }),
    evolution: super::EvolutionSupport::Unmeasured("not wired into `evolve` yet (flat records only)"),
};

/// The typed arms of a generated payload type (`--typed`, [`super::typed`]). A list of flat
/// records is one row each; anything else is listed with CSV's reason.
pub fn register_typed<P: Batch>(registry: &mut Registry, payload: &Payload<P>) {
    Csv(registry).payload(payload);
    Csv(registry).batch(payload);
}

const BACKEND: &str = "csv";

struct Csv<'a>(&'a mut Registry);

impl<P: Model> Visit<P> for Csv<'_> {
    fn payload(&mut self, payload: &Payload<P>) {
        let reason = match payload.spec.shape {
            Shape::FlatRecord => {
                self.0.codec(payload, Backend::new(BACKEND), || SingleRow);
                self.0.dynamic(
                    payload,
                    Backend::new(BACKEND),
                    || SingleRow,
                    || SingleStringRecord,
                );
                return;
            }
            // Registered record by record, as a batch (below).
            Shape::Batch { flat: true } => return,
            Shape::Batch { flat: false } => "CSV cannot hold a nested list inside a record",
            Shape::Map => "CSV has no map: keyed records would need the key turned into a column",
            Shape::Document => "CSV cannot hold nested structs, lists or maps inside a record",
        };
        self.0.unsupported(payload.spec, "*", reason);
    }
}

/// A batch of flat records: one row per record.
impl<B: Batch> VisitBatch<B> for Csv<'_> {
    fn batch(&mut self, payload: &Payload<B>) {
        if payload.spec.shape == (Shape::Batch { flat: true }) {
            self.0.codec(payload, Backend::new(BACKEND), || Rows);
            self.0
                .dynamic(payload, Backend::new(BACKEND), || Rows, || StringRecords);
        }
    }
}

/// A batch: one row per record.
pub struct Rows;

impl<B: Batch> Codec<B> for Rows {
    fn encode<'a>(&'a mut self, value: &B, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        let mut writer = csv::Writer::from_writer(&mut *out);
        for record in value.records() {
            writer.serialize(record)?;
        }
        writer.flush()?;
        drop(writer);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<B> {
        let records = csv::Reader::from_reader(bytes)
            .deserialize()
            .collect::<Result<Vec<B::Record>, _>>()?;
        Ok(B::from_records(records))
    }
}

/// A single flat record: the header and one row.
pub struct SingleRow;

impl<R: Model> Codec<R> for SingleRow {
    fn encode<'a>(&'a mut self, value: &R, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        let mut writer = csv::Writer::from_writer(&mut *out);
        writer.serialize(value)?;
        writer.flush()?;
        drop(writer);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<R> {
        let mut rows = csv::Reader::from_reader(bytes).into_deserialize::<R>();
        let (Some(row), None) = (rows.next(), rows.next()) else {
            bail!("expected exactly one CSV row");
        };
        Ok(row?)
    }
}

/// CSV's dynamic tree: the header and every row as untyped string records.
pub struct StringRecords;

#[derive(Clone, PartialEq, Debug)]
pub struct Table {
    header: csv::StringRecord,
    rows: Vec<csv::StringRecord>,
}

impl StringRecords {
    fn read(bytes: &[u8]) -> Result<Table> {
        let mut reader = csv::Reader::from_reader(bytes);
        let header = reader.headers()?.clone();
        let rows = reader.records().collect::<Result<Vec<_>, _>>()?;
        Ok(Table { header, rows })
    }

    fn typed<R: Model>(table: &Table) -> Result<Vec<R>> {
        Ok(table
            .rows
            .iter()
            .map(|row| row.deserialize(Some(&table.header)))
            .collect::<Result<Vec<R>, _>>()?)
    }
}

impl<B: Batch> Dynamic<B> for StringRecords {
    type Tree = Table;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<Table> {
        StringRecords::read(bytes)
    }

    fn to_model(&mut self, tree: Table) -> Result<B> {
        Ok(B::from_records(StringRecords::typed(&tree)?))
    }
}

/// The single-record payload's dynamic tree: the header and its one row.
pub struct SingleStringRecord;

impl<R: Model> Dynamic<R> for SingleStringRecord {
    type Tree = Table;

    fn decode_tree(&mut self, bytes: &[u8]) -> Result<Table> {
        StringRecords::read(bytes)
    }

    fn to_model(&mut self, tree: Table) -> Result<R> {
        let mut rows = StringRecords::typed::<R>(&tree)?;
        match (rows.pop(), rows.is_empty()) {
            (Some(row), true) => Ok(row),
            _ => bail!("expected exactly one CSV row"),
        }
    }
}

/// Whether a data payload's records (of type `record`) are flat rows CSV can carry, or why not.
fn flat_fields(record: &Type) -> Result<(), String> {
    let Kind::Record(fields) = &record.kind else {
        return Err(format!(
            "CSV holds records of named fields, and the records are {}",
            record.kind.name()
        ));
    };
    if record.nullable() {
        return Err("a record is null; CSV has no null row".to_string());
    }
    if fields.is_empty() {
        // Its header and rows would be empty lines, which a CSV reader skips.
        return Err(
            "the records have no fields: CSV would write empty lines, read back as no rows".to_string(),
        );
    }
    for field in fields {
        let mut path = String::from("$");
        crate::payload::data::read::push_key(&mut path, &field.name);
        match field.ty.kind {
            Kind::String if field.ty.nullable() || field.optional() => {
                return Err(format!(
                    "{path}: CSV cannot tell an empty string from null or absent"
                ));
            }
            Kind::Null | Kind::Bool | Kind::Int | Kind::Float | Kind::String => {}
            ref kind => {
                return Err(format!(
                    "{path}: CSV cannot hold a nested {} in a cell",
                    kind.name()
                ));
            }
        }
    }
    Ok(())
}

/// A data payload's flat records as a header and string rows.
pub struct DataRows;

impl Codec<Table> for DataRows {
    fn encode<'a>(&'a mut self, table: &Table, out: &'a mut Vec<u8>) -> Result<&'a [u8]> {
        let mut writer = csv::Writer::from_writer(&mut *out);
        writer.write_record(&table.header)?;
        for row in &table.rows {
            writer.write_record(row)?;
        }
        writer.flush()?;
        drop(writer);
        Ok(out)
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Table> {
        StringRecords::read(bytes)
    }
}

impl DataTree<DataPayload> for DataRows {
    type Tree = Table;
    type Codec = DataRows;

    fn codec(&self) -> DataRows {
        DataRows
    }

    fn tree(&self, data: &DataPayload) -> Result<Table> {
        let Kind::Record(fields) = &data.schema.record.kind else {
            bail!("the records are not flat");
        };
        let header: csv::StringRecord = fields.iter().map(|field| field.name.as_str()).collect();
        let rows = data
            .records
            .iter()
            .map(|record| {
                fields
                    .iter()
                    .map(|field| match record.get(&field.name) {
                        None | Some(serde_json::Value::Null) => String::new(),
                        Some(serde_json::Value::String(text)) => text.clone(),
                        Some(value) => value.to_string(),
                    })
                    .collect()
            })
            .collect();
        Ok(Table { header, rows })
    }

    fn holds(&self, table: &Table, data: &DataPayload) -> Result<Option<Difference>> {
        let Kind::Record(fields) = &data.schema.record.kind else {
            bail!("the records are not flat");
        };
        let header: Vec<&str> = table.header.iter().collect();
        let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
        if header != names {
            return Ok(Some(Difference {
                path: "$".into(),
                expected: format!("the header {}", names.join(",")),
                found: format!("the header {}", header.join(",")),
            }));
        }
        let mut records = Vec::with_capacity(table.rows.len());
        for (index, row) in table.rows.iter().enumerate() {
            let mut record = serde_json::Map::new();
            for (field, cell) in fields.iter().zip(row.iter()) {
                let value = match (&field.ty.kind, cell) {
                    (_, "") if field.ty.kind != Kind::String => serde_json::Value::Null,
                    (Kind::String, text) => serde_json::Value::from(text),
                    (_, text) => serde_json::from_str(text).with_context(|| {
                        format!(
                            "row {}, {}: {text:?} is not a {}",
                            index + 1,
                            field.name,
                            field.ty.kind.name()
                        )
                    })?,
                };
                record.insert(field.name.clone(), value);
            }
            records.push(serde_json::Value::Object(record));
        }
        Ok(data.compare(
            &match data.is_list() {
                true => serde_json::Value::Array(records),
                false => records.pop().unwrap_or_default(),
            },
            Equivalence::Schema,
        ))
    }
}

/// Fidelity: a `csv::Reader` over `vec-small`'s rows, deserialized record by record.
fn csv_vec_small_decode() -> Box<dyn FnMut()> {
    let items: &Items = crate::payload::value_of("vec-small").expect("vec-small is Items");
    let mut writer = csv::Writer::from_writer(Vec::new());
    for item in &items.items {
        writer.serialize(item).expect("an item is one row");
    }
    let bytes = writer.into_inner().expect("an in-memory writer");
    Box::new(move || {
        let records: Vec<Item> = csv::Reader::from_reader(black_box(&bytes[..]))
            .deserialize()
            .collect::<Result<_, _>>()
            .expect("it decodes");
        black_box(Items { items: records });
    })
}

#[cfg(test)]
mod data_tests {
    use super::*;
    use crate::payload::data::{TRICKY, test_payload};

    #[test]
    fn flat_records_are_rows_and_empty_cells_are_null_numbers() {
        let payload = test_payload(
            "flat",
            "{\"id\": 1, \"price\": 2.5, \"ok\": true, \"name\": \"a,\\\"b\\\"\"}\n{\"id\": 2, \"price\": null, \"ok\": false, \"name\": \"\"}\n",
        );
        let (proofs, reasons) = Registry::data_proofs(&FORMAT, payload);
        assert_eq!(proofs.len(), 3);
        for (arm, proof) in proofs {
            proof.unwrap_or_else(|error| panic!("{arm}: {error:#}"));
        }
        assert!(reasons.is_empty());
        let mut out = Vec::new();
        let bytes = DataRows
            .encode(&DataRows.tree(payload).unwrap(), &mut out)
            .unwrap()
            .to_vec();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "id,name,ok,price\n1,\"a,\"\"b\"\"\",true,2.5\n2,,false,\n"
        );
    }

    #[test]
    fn nested_values_and_nullable_strings_are_unsupported_with_the_path() {
        let reasons = |text: &str| Registry::data_proofs(&FORMAT, test_payload("t", text)).1;
        assert_eq!(
            reasons(TRICKY),
            ["$.grid: CSV cannot hold a nested array in a cell"]
        );
        assert_eq!(
            reasons("{\"a\": \"x\"}\n{\"a\": null}\n"),
            ["$.a: CSV cannot tell an empty string from null or absent"]
        );
        assert_eq!(
            reasons("[1, 2]"),
            ["CSV holds records of named fields, and the records are int"]
        );
    }
}

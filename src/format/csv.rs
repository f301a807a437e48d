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

use anyhow::{Result, bail};
use std::hint::black_box;

use super::{BackendDoc, Fidelity, Format, Registry};
use crate::arm::{Backend, Codec, Dynamic, Operation};
use crate::payload::{
    Batch, Item, Items, Model, Payload, Shape, Visit, VisitBatch, visit_all, visit_batches,
};

pub static FORMAT: Format = Format {
    name: "csv",
    about: "CSV: csv through serde, flat records only",
    colour: [0xB0, 0x7A, 0xA1],
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
    },
};

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

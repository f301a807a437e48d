//! What a user reads: the Markdown report and its SVG charts ([`markdown`], [`charts`]), the
//! tables printed after a command ([`table`]), results folders side by side ([`compare`]), a
//! rerun's prediction intervals from earlier runs ([`history`]), the fidelity and
//! deterministic-cost comparisons, the schema-evolution matrices, the one-sentence verdicts, the rankings that group ties
//! ([`rank`]), and a data file's inferred schema written out ([`data_schema`]). It reads the rows
//! of [`crate::schema`] and writes through [`crate::files`].

pub mod analysis;
pub mod capabilities;
pub mod charts;
pub mod compare;
pub mod data_schema;
pub mod deterministic;
pub mod evolution;
pub mod facts;
pub mod fidelity;
pub mod footprint;
pub mod formats;
pub mod history;
pub mod hosts;
pub mod markdown;
pub mod page;
pub mod rank;
pub mod robustness;
pub mod table;
pub mod text;
pub mod verdict;

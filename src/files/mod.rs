//! What every command that writes shares, so that a user's results are never lost or mixed,
//! and the one validated reading of serbench's CSV files that writers and readers both use:
//!
//! - [`OutDir`]: an output folder held by one process at a time (an exclusive lock on
//!   [`LOCK_FILE`] inside it, for the whole command; a second writer is refused at once).
//! - Rewritten files are written to a temporary file in the same folder, synced and renamed into
//!   place ([`OutDir::write_file`]); a rewritten folder (charts/) is built beside it and swapped
//!   in ([`OutDir::write_dir`]). A writer that finds a swap or a `--replace` move killed
//!   midway finishes it or puts the old folder back before it writes ([`OutDir::lock`]).
//! - results.csv grows through an [`Appender`]: whole rows per write, synced, and cut back to the
//!   last complete row when a write fails (a full disk).
//! - [`read`]: a file parses completely or is refused with file and line: this version's exact
//!   header, every row well-formed with every number finite and in range ([`Record::check`]), no
//!   row twice, one result set per file. A torn last line (no newline: an interrupted append) is
//!   reported, for `run --resume` to drop and redo.
//! - [`OutDir::claim`]: a folder holding a result set ([`ResultSet`]) is not written over unless
//!   the user asked, and `--replace` moves the old set into `replaced/<time>/` first (a folder
//!   made here, never reached through a link).
//! - [`Owned`]: files written as a group (a report) and rewritten or removed only where its
//!   manifest records them with their bytes ([`OutDir::write_owned`]).
//! - Whatever is written or replaced as one file is a regular file or nothing yet
//!   ([`not_regular`]): a device, FIFO, socket, link or folder is refused, never moved.
//!
//! It knows no file of serbench's by name: each row type ([`Record`]) and each kind of result
//! set ([`ResultSet`]) is declared by the schema layer above it ([`crate::schema`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::UsageError;

mod cache;
pub mod columns;
mod private;

pub use cache::{HINT as CACHE_HINT, cache_root};
pub use private::PrivateDir;

/// The lock file inside an output folder; it holds the writer's process id.
pub const LOCK_FILE: &str = ".serbench.lock";
/// Where `--replace` moves a previous result set, one folder per replacement.
pub const REPLACED_DIR: &str = "replaced";
/// Temporary files and folders start with this; a writer removes the leftovers of a crashed one.
const TEMP_PREFIX: &str = ".serbench-tmp-";
/// A folder being swapped out ([`OutDir::write_dir`]) is renamed to this prefix and its name
/// until the new one is in place; a writer that finds one with no folder of its name puts it back.
const OLD_PREFIX: &str = ".serbench-old-";
/// In a `replaced/<time>/` folder while `--replace` moves a set into it: the names to move, one
/// per line. A writer that finds one finishes the move ([`OutDir::finish_move`]).
const MOVING_FILE: &str = ".serbench-moving";

/// One kind of row of a serbench CSV file: its columns are its fields, in order (serde), and
/// what makes a row valid is its own.
pub trait Record: Serialize + DeserializeOwned + Default {
    /// What one row stands for, in messages ("arm", "codec").
    const ROW: &'static str;

    /// The schema version a file of these rows holds in its first column, for files that have
    /// one: a file of another version is refused by its version, not by its columns.
    const SCHEMA_VERSION: Option<u32> = None;

    /// Whether the row is well-formed: every number finite and in its range.
    fn check(&self) -> Result<(), String>;

    /// What no two rows of one file may share.
    fn key(&self) -> String;

    /// What every row of one file shares, as `(column, value)`: nothing, unless the file holds
    /// one run.
    fn set(&self) -> Vec<(&'static str, &str)> {
        Vec::new()
    }
}

/// The exact header this version writes for `T`: its field names, in order.
pub fn header<T: Serialize + Default>() -> Vec<String> {
    columns::of::<T>()
}

/// One row from its fields, by position (the header was checked to be this version's exact
/// one); the error names the column.
fn parse<T: DeserializeOwned>(record: &csv::StringRecord, header: &csv::StringRecord) -> Result<T, String> {
    record.deserialize(None).map_err(|error| match error.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(field) => format!(
                "field {} ({}): {}",
                field + 1,
                header.get(field as usize).unwrap_or("?"),
                err.kind()
            ),
            None => err.kind().to_string(),
        },
        _ => error.to_string(),
    })
}

/// `value` is finite and in `low..=high`, or why not.
pub fn in_range(column: &str, value: f64, low: f64, high: f64) -> Result<(), String> {
    if value.is_finite() && (low..=high).contains(&value) {
        return Ok(());
    }
    // Short numbers: 1e-6, not 0.000001; no 309-digit f64::MAX.
    let short = |number: f64| match number.abs() {
        0.0 => "0".to_string(),
        magnitude if (1e-3..1e6).contains(&magnitude) || !number.is_finite() => number.to_string(),
        _ => format!("{number:e}"),
    };
    let range = if high == f64::MAX {
        format!("finite, at least {}", short(low))
    } else {
        format!("{}..={}", short(low), short(high))
    };
    Err(format!("{column} {} is outside its range {range}", short(value)))
}

/// A refusal naming the file and line.
fn refused(path: &Path, line: u64, why: impl std::fmt::Display) -> anyhow::Error {
    UsageError::error(format!("{}:{line}: {why}", path.display()))
}

/// A serbench CSV file, read completely and checked.
#[derive(Debug)]
pub struct Table<T> {
    pub path: PathBuf,
    pub rows: Vec<T>,
    /// The line of a torn last row (the file does not end with a newline), which is not in
    /// `rows`.
    pub torn_line: Option<u64>,
}

/// Reads and checks a whole file; a torn last line is left out of the rows and reported in
/// [`Table::torn_line`], anything else that does not validate is a refusal with file and line.
pub fn read<T: Record>(path: &Path) -> Result<Table<T>> {
    let bytes = read_regular(path)?;
    let complete = bytes
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |last| last + 1);
    if complete == 0 {
        let why = if bytes.is_empty() {
            "an empty file, without the header serbench writes"
        } else {
            "the header line is incomplete"
        };
        return Err(refused(path, 1, why));
    }
    let torn_line = (complete < bytes.len())
        .then(|| bytes[..complete].iter().filter(|&&byte| byte == b'\n').count() as u64 + 1);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&bytes[..complete]);
    let mut records = reader.records();
    let line_of = |record: &csv::StringRecord| record.position().map_or(0, csv::Position::line);
    let read_error = |error: csv::Error| {
        let line = error.position().map_or(0, csv::Position::line);
        refused(path, line, error)
    };
    let header = records
        .next()
        .transpose()
        .map_err(read_error)?
        .unwrap_or_default();
    let expected = csv::StringRecord::from(self::header::<T>());
    if header != expected {
        // A file of another schema version may have other columns: its version is what to say.
        if let Some(ours) = T::SCHEMA_VERSION
            && expected.get(0) == Some("schema_version")
            && header.get(0) == Some("schema_version")
        {
            let first = records.next().transpose().map_err(read_error)?;
            if let Some(version) = first.as_ref().and_then(|row| row.get(0))
                && version != ours.to_string()
            {
                return Err(refused(
                    path,
                    2,
                    format!("schema version {version:?}, this serbench reads version {ours}"),
                ));
            }
        }
        let why = match header
            .iter()
            .zip(&expected)
            .position(|(found, want)| found != want)
        {
            Some(column) => format!(
                "column {} is {:?} where this version's header has {:?}",
                column + 1,
                &header[column],
                &expected[column]
            ),
            None => format!(
                "{} columns where this version's header has {}",
                header.len(),
                expected.len()
            ),
        };
        return Err(refused(path, 1, format!("not this serbench's header: {why}")));
    }
    let mut rows: Vec<T> = Vec::new();
    let mut first_line: BTreeMap<String, u64> = BTreeMap::new();
    let mut set_line = 0;
    for record in records {
        let record = record.map_err(read_error)?;
        let line = line_of(&record);
        if record.len() != header.len() {
            return Err(refused(
                path,
                line,
                format!(
                    "{} fields where the header has {} (a truncated or corrupt row)",
                    record.len(),
                    header.len()
                ),
            ));
        }
        let row: T = parse(&record, &header).map_err(|why| refused(path, line, why))?;
        if let Some((column, found)) = columns::unsafe_text(&row) {
            return Err(refused(
                path,
                line,
                format!(
                    "{column} holds {} (a control or bidirectional character): serbench writes none, only its escape",
                    found.escape_unicode()
                ),
            ));
        }
        row.check().map_err(|why| refused(path, line, why))?;
        if let Some(first) = first_line.insert(row.key(), line) {
            return Err(refused(
                path,
                line,
                format!(
                    "{} {} appears a second time (first on line {first}): two runs mixed",
                    T::ROW,
                    row.key()
                ),
            ));
        }
        if let Some(first) = rows.first() {
            for ((column, value), (_, first_value)) in row.set().into_iter().zip(first.set()) {
                if value != first_value {
                    return Err(refused(
                        path,
                        line,
                        format!(
                            "a row of another run ({column} {value:?}, line {set_line} has {first_value:?}): \
                             one file holds one run"
                        ),
                    ));
                }
            }
        } else {
            set_line = line;
        }
        rows.push(row);
    }
    Ok(Table {
        path: path.to_path_buf(),
        rows,
        torn_line,
    })
}

/// Reads a file that must be complete: a torn last line is refused too, with how to repair it.
pub fn read_complete<T: Record>(path: &Path) -> Result<Vec<T>> {
    let table = read::<T>(path)?;
    match table.torn_line {
        Some(line) => Err(refused(
            path,
            line,
            "a torn last row (an interrupted write); `serbench run --resume` drops it and measures its arm again",
        )),
        None => Ok(table.rows),
    }
}

/// The bytes of a file serbench reads back, which must be a regular file (or a link to one): a
/// FIFO would block the read forever while the folder's lock is held, a device never end.
fn read_regular(path: &Path) -> Result<Vec<u8>> {
    let metadata = own_file(path)?;
    if !metadata.is_file() {
        return Err(UsageError::error(format!(
            "{}: not a regular file (a folder, FIFO or device): serbench reads and writes regular files only",
            path.display()
        )));
    }
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// What is at `path`, which must not be a symbolic link: a result set's files are the
/// folder's own. One rule for every reader and writer, because each way of following a link
/// broke something: `--resume` appended to the target, a rewrite replaced the link with a
/// file, and `--replace` moved a relative link where it pointed nowhere.
pub fn own_file(path: &Path) -> Result<std::fs::Metadata> {
    let metadata =
        std::fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if metadata.file_type().is_symlink() {
        return Err(UsageError::error(format!(
            "{}: a symbolic link: serbench reads and writes a result set's own files, never through \
             a link (copy the file into the folder)",
            path.display()
        )));
    }
    Ok(metadata)
}

/// Refuses what `metadata` (not followed) says is anything but a regular file, naming what it
/// is; `flag` is the option that named it, which the refusal offers to change.
pub fn not_regular(path: &Path, metadata: &std::fs::Metadata, flag: &str) -> Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    Err(UsageError::error(format!(
        "{}: {}, not a regular file: serbench writes and replaces regular files only (choose another {flag})",
        path.display(),
        kind(metadata)
    )))
}

/// What a non-regular entry is, in words.
fn kind(metadata: &std::fs::Metadata) -> &'static str {
    let file_type = metadata.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_dir() {
        "a folder"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Refuses a `path` that is not a folder of its own (a link to one included).
fn own_dir(path: &Path) -> Result<()> {
    let metadata =
        std::fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if metadata.is_dir() {
        return Ok(());
    }
    Err(UsageError::error(format!(
        "{}: {}, not a folder serbench made: --replace moves a set only into a folder of this one's \
         own, never through a link; move it away and run again",
        path.display(),
        kind(&metadata)
    )))
}

/// The schema version of a serbench CSV file: the first field of its first data row (`None`
/// for a file with a header only), read without parsing the rows (a file of another schema
/// may not parse at all). It reads the first lines as [`read`] does (a leading UTF-8 BOM
/// skipped, as the csv reader skips it), so what it accepts, [`read`] judges with the same
/// words: a fault further down is [`read`]'s to name, with its line.
pub fn schema_version(path: &Path) -> Result<Option<(usize, String)>> {
    let bytes = read_regular(path)?;
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
    let mut lines = bytes.split(|&byte| byte == b'\n').enumerate();
    let text = |(index, line): (usize, &[u8])| {
        std::str::from_utf8(line)
            .map(|line| (index, line.trim_end_matches('\r').to_string()))
            .map_err(|_| refused(path, index as u64 + 1, "not UTF-8"))
    };
    match lines.next().map(text).transpose()? {
        Some((_, header)) if header.starts_with("schema_version,") => {}
        _ => {
            return Err(refused(
                path,
                1,
                "not a serbench CSV file (the header does not start with schema_version)",
            ));
        }
    }
    let Some(first) = lines.find(|(_, line)| !line.trim_ascii().is_empty()) else {
        return Ok(None);
    };
    // A row that is not UTF-8 is read's to refuse, with its words.
    Ok(text(first)
        .ok()
        .map(|(index, line)| (index + 1, line.split(',').next().unwrap_or_default().to_string())))
}

/// A whole CSV file of `rows`: this version's header, then the rows (what every writer here
/// writes; tests build files with it).
pub fn to_csv<T: Serialize + Default>(rows: &[T]) -> Result<Vec<u8>> {
    csv_bytes(Some(&header::<T>()), rows)
}

/// Rows as CSV bytes, after `header` when given.
fn csv_bytes<T: Serialize>(header: Option<&[String]>, rows: &[T]) -> Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    if let Some(header) = header {
        writer.write_record(header)?;
    }
    for row in rows {
        writer.write_record(
            clean_fields(row)?
                .iter()
                .map(|field| columns::clean(field).into_owned()),
        )?;
    }
    writer
        .into_inner()
        .map_err(|error| anyhow!("cannot serialize rows: {}", error.error()))
}

/// The fields of `row` as the csv crate writes them, for [`columns::clean`] to clean one by one.
fn clean_fields<T: Serialize>(row: &T) -> Result<csv::StringRecord> {
    let mut one = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    one.serialize(row)?;
    let bytes = one
        .into_inner()
        .map_err(|error| anyhow!("cannot serialize a row: {}", error.error()))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&bytes[..]);
    Ok(reader.records().next().transpose()?.unwrap_or_default())
}

/// A kind of result set a command writes, as the schema layer declares it: the files that make
/// up one, and so what a folder must not hold already unless the user asked to resume or
/// replace it.
pub trait ResultSet: Copy {
    fn files(self) -> &'static [&'static str];

    /// Whether a folder holding `present` (some of [`ResultSet::files`]) can be extended with
    /// `--resume`.
    fn resumable(self, present: &[&str]) -> bool;

    /// What the file `name` at `path` holds, for the refusal that names it (`None`: its name
    /// says enough).
    fn describe(self, name: &str, path: &Path) -> Option<String>;
}

/// Files a command writes together and rewrites later (a report: its pages and its charts
/// folder): `names` in the output folder, each a file or a folder of files, and among them the
/// `manifest`, which lists every file written with its SHA-256 (as `sha256sum` prints them). A
/// rewrite overwrites or removes only files the manifest lists with their bytes: anything else
/// under those names (a file the user put there, or changed) is refused, or with `--replace`
/// moved aside with the rest ([`OutDir::claim_owned`]).
#[derive(Clone, Copy, Debug)]
pub struct Owned {
    pub manifest: &'static str,
    pub names: &'static [&'static str],
}

/// The SHA-256 of `bytes` in hex.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// At most a few of `names`, for a one-line refusal.
fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut text = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text += &format!(" and {} more", names.len() - SHOWN);
    }
    text
}

/// The lock file, created if missing, never through a link (O_NOFOLLOW closes the gap between
/// the check before it and the open).
fn open_lock(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    options.open(path)
}

/// An output folder this process writes alone: locked from [`OutDir::lock`] until dropped.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    lock: File,
    lock_path: PathBuf,
    /// Made by this command: removed again if it is left empty (a refused command).
    created: bool,
    /// The flag that named the output, for refusals to offer another (`--out`, `-o/--output`).
    flag: &'static str,
}

impl OutDir {
    /// Creates the folder if needed and takes its lock; another serbench holding it is a
    /// refusal. This is also the proof that the folder is writable, before any work is done.
    pub fn lock(path: &Path) -> Result<OutDir> {
        OutDir::lock_for(path, "--out")
    }

    /// [`OutDir::lock`] of a folder the user named with `flag`, which refusals name.
    pub fn lock_for(path: &Path, flag: &'static str) -> Result<OutDir> {
        let created = !path.exists();
        if !created && !path.is_dir() {
            return Err(UsageError::error(format!(
                "{} is a file, not a folder: results go into a folder (choose another {flag})",
                path.display()
            )));
        }
        std::fs::create_dir_all(path)
            .with_context(|| format!("cannot create the output folder {}", path.display()))?;
        let lock_path = path.join(LOCK_FILE);
        let lock = loop {
            // A link planted as the lock would have its target truncated below.
            if std::fs::symlink_metadata(&lock_path).is_ok_and(|entry| !entry.file_type().is_file()) {
                return Err(UsageError::error(format!(
                    "{} is not a regular file (a link, folder or FIFO): serbench's lock must be its own \
                     file; remove it",
                    lock_path.display()
                )));
            }
            let file = open_lock(&lock_path)
                .with_context(|| format!("cannot write in the output folder {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                    let holder = match holder.trim() {
                        "" => String::new(),
                        pid => format!(" (process {pid})"),
                    };
                    return Err(UsageError::error(format!(
                        "{} is in use by another serbench{holder}: one writer per folder; wait for it \
                         to finish or choose another {flag}",
                        path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(error)) => {
                    return Err(error).with_context(|| format!("cannot lock {}", lock_path.display()));
                }
            }
            // The writer before us removed the file we opened as it finished: lock the new one.
            if is_same_file(&file, &lock_path) {
                break file;
            }
        };
        // From here on, dropping `out` releases the lock and removes what it made.
        let mut out = OutDir {
            path: path.to_path_buf(),
            lock,
            lock_path,
            created,
            flag,
        };
        let pid = format!("{}\n", std::process::id());
        out.lock
            .set_len(0)
            .and_then(|()| out.lock.write_all(pid.as_bytes()))
            .with_context(|| format!("cannot write {}", out.lock_path.display()))?;
        out.recover()?;
        out.remove_leftovers()?;
        Ok(out)
    }

    /// [`OutDir::lock`], then [`OutDir::claim`] for a new set of `kind`: what a command that
    /// writes one set (and never resumes one) starts with.
    pub fn for_new_set(path: &Path, kind: impl ResultSet, replace: bool) -> Result<OutDir> {
        let out = OutDir::lock(path)?;
        out.claim(kind, replace)?;
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Whether the folder has an entry `name` (a file, a folder, or even a dangling link).
    pub fn holds(&self, name: &str) -> bool {
        std::fs::symlink_metadata(self.file(name)).is_ok()
    }

    /// Refuses a folder that holds any file of a `kind` set, unless `replace`: then that set
    /// is moved into `replaced/<time>/` (returned) and the folder is free for the new one.
    pub fn claim(&self, kind: impl ResultSet, replace: bool) -> Result<Option<PathBuf>> {
        let present: Vec<&str> = kind
            .files()
            .iter()
            .copied()
            .filter(|name| self.holds(name))
            .collect();
        if present.is_empty() {
            return Ok(None);
        }
        self.no_links(&present)?;
        if replace {
            return self.set_aside(&present).map(Some);
        }
        let held: Vec<String> = present
            .iter()
            .map(|&name| match kind.describe(name, &self.file(name)) {
                Some(holds) => format!("{name}: {holds}"),
                None => name.to_string(),
            })
            .collect();
        let resume = if kind.resumable(&present) {
            "--resume to extend it, "
        } else {
            ""
        };
        Err(UsageError::error(format!(
            "{} already holds a result set ({}): pass {resume}--replace to move it into {} and start \
             anew, or choose another {}",
            self.path.display(),
            held.join("; "),
            self.file(REPLACED_DIR).display(),
            self.flag
        )))
    }

    /// Refuses a folder that holds any of the files `names` a command is about to write, unless
    /// `replace`: then those files are moved into `replaced/<time>/` (returned) first. Each must
    /// be a regular file either way: a device, FIFO, socket, link or folder under one of the
    /// names is refused, and never moved.
    pub fn claim_files(&self, names: &[&str], replace: bool) -> Result<Option<PathBuf>> {
        let present: Vec<&str> = names.iter().copied().filter(|name| self.holds(name)).collect();
        if present.is_empty() {
            return Ok(None);
        }
        for name in &present {
            self.regular(name)?;
        }
        if replace {
            return self.set_aside(&present).map(Some);
        }
        Err(UsageError::error(format!(
            "{} already holds {}: pass --replace to move them into {} first, or choose another {}",
            self.path.display(),
            present.join(", "),
            self.file(REPLACED_DIR).display(),
            self.flag
        )))
    }

    /// Refuses an entry `name` that is anything but a regular file of the folder's own.
    fn regular(&self, name: &str) -> Result<()> {
        let path = self.file(name);
        let metadata = own_file(&path)?;
        not_regular(&path, &metadata, self.flag)
    }

    /// The `(path, SHA-256)` pairs `group`'s manifest records; none when it is missing or not
    /// a regular file of the folder's own (then nothing there counts as serbench's).
    fn recorded(&self, group: Owned) -> BTreeSet<(String, String)> {
        let path = self.file(group.manifest);
        if !std::fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.is_file()) {
            return BTreeSet::new();
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        text.lines()
            .filter_map(|line| line.split_once("  "))
            // Names inside the folder only: the manifest is read, never trusted as a path.
            .filter(|(_, name)| {
                !name.starts_with('/') && !name.split('/').any(|part| part.is_empty() || part == "..")
            })
            .map(|(hash, name)| (name.to_string(), hash.to_string()))
            .collect()
    }

    /// What is under `group`'s names that its manifest does not record with these bytes: the
    /// files serbench did not write there (or that changed since), as paths in the folder.
    pub fn foreign(&self, group: Owned) -> Result<Vec<String>> {
        let recorded = self.recorded(group);
        let ours = |name: &str, path: &Path, metadata: &std::fs::Metadata| -> Result<bool> {
            if !metadata.is_file() {
                return Ok(false);
            }
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(recorded.contains(&(name.to_string(), sha256(&bytes))))
        };
        let mut foreign = Vec::new();
        for &name in group.names {
            let path = self.file(name);
            let Ok(metadata) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if name == group.manifest {
                if !metadata.is_file() {
                    foreign.push(name.to_string());
                }
            } else if metadata.is_dir() {
                let entries =
                    std::fs::read_dir(&path).with_context(|| format!("cannot read {}", path.display()))?;
                let mut inside = Vec::new();
                for entry in entries {
                    let entry = entry.with_context(|| format!("cannot read {}", path.display()))?;
                    let file = format!("{name}/{}", entry.file_name().to_string_lossy());
                    let metadata = std::fs::symlink_metadata(entry.path())
                        .with_context(|| format!("cannot read {}", entry.path().display()))?;
                    if !ours(&file, &entry.path(), &metadata)? {
                        inside.push(file);
                    }
                }
                inside.sort();
                foreign.extend(inside);
            } else if !ours(name, &path, &metadata)? {
                foreign.push(name.to_string());
            }
        }
        Ok(foreign)
    }

    /// The refusal of `foreign` files under `group`'s names, offering `choices`.
    fn not_ours(&self, foreign: &[String], choices: &str) -> anyhow::Error {
        UsageError::error(format!(
            "{} holds {} that serbench did not write there (or that changed since): it rewrites only \
             its own files; {choices}",
            self.path.display(),
            some_of(foreign)
        ))
    }

    /// Refuses a folder where `group`'s names hold anything serbench did not write there
    /// ([`OutDir::foreign`]), unless `replace`: then everything under the names is moved into
    /// `replaced/<time>/` (returned), whole, before the group is written anew.
    pub fn claim_owned(&self, group: Owned, replace: bool) -> Result<Option<PathBuf>> {
        let foreign = self.foreign(group)?;
        if foreign.is_empty() {
            return Ok(None);
        }
        if !replace {
            return Err(self.not_ours(
                &foreign,
                &format!(
                    "pass --replace to move them into {} first, or choose another {}",
                    self.file(REPLACED_DIR).display(),
                    self.flag
                ),
            ));
        }
        let present: Vec<&str> = group
            .names
            .iter()
            .copied()
            .filter(|name| self.holds(name))
            .collect();
        self.no_links(&present)?;
        self.set_aside(&present).map(Some)
    }

    /// Writes `group` anew as exactly `files` (paths in the folder: a name of the group, or
    /// `name/file` inside one of its folders), after [`OutDir::foreign`] finds nothing of
    /// another's there. The manifest is written first listing the old files and the new, so a
    /// write killed midway leaves only files it records, then each name atomically (a folder
    /// swapped whole, a name without files removed), then the manifest of the new files alone.
    pub fn write_owned(&self, group: Owned, files: &[(&str, &[u8])]) -> Result<()> {
        self.check_owned(group)?;
        let new: BTreeSet<(String, String)> = files
            .iter()
            .map(|(name, bytes)| (name.to_string(), sha256(bytes)))
            .collect();
        let manifest = self.file(group.manifest);
        let old_manifest = std::fs::read(&manifest).ok();
        let both: BTreeSet<(String, String)> = self.recorded(group).union(&new).cloned().collect();
        self.write_manifest(group, &both)?;
        let mut rewritten = false;
        let written = group
            .names
            .iter()
            .filter(|&&name| name != group.manifest)
            .try_for_each(|&name| {
                let inside: Vec<(&str, &[u8])> = files
                    .iter()
                    .filter_map(|&(path, bytes)| {
                        let file = path.strip_prefix(name)?.strip_prefix('/')?;
                        Some((file, bytes))
                    })
                    .collect();
                if let Some(&(_, bytes)) = files.iter().find(|(path, _)| *path == name) {
                    self.write_file(name, |file| Ok(file.write_all(bytes)?))?;
                } else if !inside.is_empty() {
                    self.write_dir(name, &inside)?;
                } else if self.holds(name) {
                    self.remove(&[name])?;
                } else {
                    return Ok(());
                }
                rewritten = true;
                Ok(())
            });
        if let Err(error) = written {
            // Nothing rewritten: the manifest as it was. Else it records what is there now.
            let _ = match (rewritten, old_manifest) {
                (false, Some(bytes)) => self
                    .write_file(group.manifest, |file| Ok(file.write_all(&bytes)?))
                    .map(drop),
                (false, None) => self.remove(&[group.manifest]),
                (true, _) => {
                    let there: BTreeSet<(String, String)> = both
                        .into_iter()
                        .filter(|(name, hash)| {
                            let path = self.file(name);
                            std::fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.is_file())
                                && std::fs::read(&path).is_ok_and(|bytes| sha256(&bytes) == *hash)
                        })
                        .collect();
                    self.write_manifest(group, &there)
                }
            };
            return Err(error);
        }
        self.write_manifest(group, &new)
    }

    fn write_manifest(&self, group: Owned, entries: &BTreeSet<(String, String)>) -> Result<()> {
        let text: String = entries
            .iter()
            .map(|(name, hash)| format!("{hash}  {name}\n"))
            .collect();
        self.write_file(group.manifest, |file| Ok(file.write_all(text.as_bytes())?))?;
        Ok(())
    }

    /// Removes `group`'s files, which must all be serbench's ([`OutDir::foreign`]): a file of
    /// another's under its names is refused, and nothing is removed.
    pub fn remove_owned(&self, group: Owned) -> Result<()> {
        self.check_owned(group)?;
        self.remove(group.names)
    }

    /// Refuses a folder where `group`'s names hold anything serbench did not write there.
    pub fn check_owned(&self, group: Owned) -> Result<()> {
        let foreign = self.foreign(group)?;
        if foreign.is_empty() {
            return Ok(());
        }
        Err(self.not_ours(
            &foreign,
            &format!("move them away first, or choose another {}", self.flag),
        ))
    }

    /// Refuses when any of `names` is a link ([`own_file`]).
    fn no_links(&self, names: &[&str]) -> Result<()> {
        for name in names {
            own_file(&self.file(name))?;
        }
        Ok(())
    }

    /// [`OutDir::move_aside`], saying so.
    fn set_aside(&self, present: &[&str]) -> Result<PathBuf> {
        let moved = self.move_aside(present)?;
        eprintln!(
            "serbench: moved the previous {} into {}",
            present.join(", "),
            moved.display()
        );
        Ok(moved)
    }

    /// Moves `names` into a new `replaced/<UTC time>/` folder, as one recoverable step: the
    /// names are written there first ([`MOVING_FILE`]), so a move that is killed midway is
    /// finished by the next writer, and the set never ends split over two folders.
    fn move_aside(&self, names: &[&str]) -> Result<PathBuf> {
        let target = self.begin_move(names)?;
        self.finish_move(&target)?;
        Ok(target)
    }

    /// Creates the `replaced/<UTC time>/` folder for `names` and writes their list into it.
    /// Both folders are made here, never reached through a link: `replaced` or a `<time>` that
    /// is a link, file or anything but a folder of its own is refused before anything moves.
    fn begin_move(&self, names: &[&str]) -> Result<PathBuf> {
        let stamp = crate::host::utc_timestamp(std::time::SystemTime::now()).replace([':', '-'], "");
        let replaced = self.file(REPLACED_DIR);
        // mkdir follows no link in its last component: a link planted as `replaced` stays a
        // link, and own_dir refuses it.
        match std::fs::create_dir(&replaced) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(error).with_context(|| format!("cannot create {}", replaced.display()));
            }
            _ => own_dir(&replaced)?,
        }
        let mut number = 1;
        let target = loop {
            let target = match number {
                1 => replaced.join(&stamp),
                _ => replaced.join(format!("{stamp}-{number}")),
            };
            match std::fs::create_dir(&target) {
                Ok(()) => break target,
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => number += 1,
                Err(error) => {
                    return Err(error).with_context(|| format!("cannot create {}", target.display()));
                }
            }
        };
        // Made just now by this process, which holds the folder: checked all the same.
        own_dir(&replaced)?;
        own_dir(&target)?;
        let journal = target.join(MOVING_FILE);
        let temp = target.join(format!("{MOVING_FILE}.tmp"));
        (|| -> std::io::Result<()> {
            let mut file = File::create(&temp)?;
            file.write_all(names.join("\n").as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temp, &journal)?;
            sync_dir(&target)
        })()
        .with_context(|| format!("cannot write {}", journal.display()))?;
        Ok(target)
    }

    /// Moves into `target` each file its [`MOVING_FILE`] names that is still in the folder, then
    /// removes the list. Whatever step a move was killed at, this completes it.
    fn finish_move(&self, target: &Path) -> Result<()> {
        let journal = target.join(MOVING_FILE);
        let names = std::fs::read_to_string(&journal)
            .with_context(|| format!("cannot read {}", journal.display()))?;
        for name in names.lines().filter(|name| !name.is_empty()) {
            // Only plain names of this folder were written: anything else is not ours to move.
            if name.contains(['/', '\\']) || name.starts_with('.') || !self.holds(name) {
                continue;
            }
            std::fs::rename(self.file(name), target.join(name)).with_context(|| {
                format!(
                    "cannot move {} into {}",
                    self.file(name).display(),
                    target.display()
                )
            })?;
        }
        sync_dir(&self.path).with_context(|| format!("cannot sync {}", self.path.display()))?;
        std::fs::remove_file(&journal).with_context(|| format!("cannot remove {}", journal.display()))?;
        Ok(sync_dir(target)?)
    }

    /// Finishes what a killed writer left half done: a `--replace` move (its [`MOVING_FILE`])
    /// and a folder swap (an [`OLD_PREFIX`] folder with none of its name).
    fn recover(&self) -> Result<()> {
        // Only through folders of the folder's own: a link as `replaced` (or as one of its
        // folders) is never followed, so no move ends outside the folder.
        let real_dir = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir());
        let replaced = self.file(REPLACED_DIR);
        if real_dir(&replaced)
            && let Ok(entries) = std::fs::read_dir(&replaced)
        {
            for entry in entries.flatten() {
                let target = entry.path();
                let journal = target.join(MOVING_FILE);
                if real_dir(&target)
                    && std::fs::symlink_metadata(&journal).is_ok_and(|metadata| metadata.is_file())
                {
                    self.finish_move(&target)?;
                    eprintln!(
                        "serbench: finished moving the previous set into {} (a --replace was interrupted)",
                        target.display()
                    );
                }
            }
        }
        let entries =
            std::fs::read_dir(&self.path).with_context(|| format!("cannot read {}", self.path.display()))?;
        for entry in entries.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = file_name.strip_prefix(OLD_PREFIX) else {
                continue;
            };
            let old = entry.path();
            if self.holds(name) {
                std::fs::remove_dir_all(&old)
            } else {
                std::fs::rename(&old, self.file(name))
            }
            .with_context(|| format!("cannot recover {}", old.display()))?;
        }
        Ok(sync_dir(&self.path)?)
    }

    /// Removes derived files or folders that would no longer describe the folder's results.
    pub fn remove(&self, names: &[&str]) -> Result<()> {
        for name in names {
            let path = self.file(name);
            let removed = match std::fs::symlink_metadata(&path) {
                Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(&path),
                Ok(_) => std::fs::remove_file(&path),
                Err(_) => continue,
            };
            removed.with_context(|| format!("cannot remove {}", path.display()))?;
        }
        sync_dir(&self.path).with_context(|| format!("cannot sync {}", self.path.display()))
    }

    /// Replaces the file `name` with what `write` writes, atomically: a temporary file in the
    /// folder, synced, renamed over the old one. A failure leaves the old file as it was.
    pub fn write_file(
        &self,
        name: &str,
        write: impl FnOnce(&mut dyn Write) -> Result<()>,
    ) -> Result<PathBuf> {
        let target = self.file(name);
        // A rename over a device, FIFO or socket would replace the node itself.
        if self.holds(name) {
            self.regular(name)?;
        }
        let temp = self.temp_path(name);
        let written = (|| -> Result<()> {
            let mut file = BufWriter::new(File::create(&temp)?);
            write(&mut file)?;
            let file = file.into_inner().map_err(|error| error.into_error())?;
            file.sync_all()?;
            std::fs::rename(&temp, &target)?;
            Ok(sync_dir(&self.path)?)
        })();
        written.map_err(|error| {
            let _ = std::fs::remove_file(&temp);
            error.context(format!("cannot write {}", target.display()))
        })?;
        Ok(target)
    }

    /// [`OutDir::write_file`] of rows under the header of `T`.
    pub fn write_csv<T: Serialize + Default>(&self, name: &str, rows: &[T]) -> Result<PathBuf> {
        let bytes = to_csv(rows)?;
        self.write_file(name, |file| Ok(file.write_all(&bytes)?))
    }

    /// Replaces the folder `name` with one holding exactly `files`: built beside it, synced,
    /// then swapped in, so no file of the old folder remains. No files: the folder is removed.
    pub fn write_dir(&self, name: &str, files: &[(&str, &[u8])]) -> Result<Vec<PathBuf>> {
        let target = self.file(name);
        if files.is_empty() {
            self.remove(&[name])?;
            return Ok(Vec::new());
        }
        let temp = self.temp_path(name);
        let old = self.file(&format!("{OLD_PREFIX}{name}"));
        let written = (|| -> Result<()> {
            std::fs::create_dir(&temp)?;
            for (file_name, bytes) in files {
                let mut file = File::create(temp.join(file_name))?;
                file.write_all(bytes)?;
                file.sync_all()?;
            }
            sync_dir(&temp)?;
            if self.holds(name) {
                std::fs::rename(&target, &old)?;
            }
            if let Err(error) = std::fs::rename(&temp, &target) {
                // Put the old folder back: report.md links into it.
                if old.exists() {
                    std::fs::rename(&old, &target)?;
                }
                return Err(error.into());
            }
            sync_dir(&self.path)?;
            if old.exists() {
                std::fs::remove_dir_all(&old)?;
            }
            Ok(())
        })();
        written.map_err(|error| {
            let _ = std::fs::remove_dir_all(&temp);
            error.context(format!("cannot write {}", target.display()))
        })?;
        Ok(files
            .iter()
            .map(|(file_name, _)| target.join(file_name))
            .collect())
    }

    /// Starts the CSV file `name` afresh with the header of `T` and `rows` (atomically), then
    /// opens it for appending.
    pub fn start_csv<T: Record>(&self, name: &str, rows: &[T]) -> Result<Appender<T>> {
        let bytes = to_csv(rows)?;
        let path = self.write_file(name, |file| Ok(file.write_all(&bytes)?))?;
        Appender::open(path)
    }

    /// Opens the complete CSV file `name` (see [`read`]) for appending.
    pub fn append_csv<T: Record>(&self, name: &str) -> Result<Appender<T>> {
        Appender::open(self.file(name))
    }

    fn temp_path(&self, name: &str) -> PathBuf {
        self.file(&format!("{TEMP_PREFIX}{}-{name}", std::process::id()))
    }

    /// Temporary files of a writer that crashed (this one holds the lock, so no writer is using
    /// them).
    fn remove_leftovers(&self) -> Result<()> {
        let entries =
            std::fs::read_dir(&self.path).with_context(|| format!("cannot read {}", self.path.display()))?;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let path = entry.path();
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.with_context(|| format!("cannot remove the leftover {}", path.display()))?;
            }
        }
        Ok(())
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        // Removed while still locked; a writer that opened it meanwhile sees it gone and retries.
        if is_same_file(&self.lock, &self.lock_path) {
            let _ = std::fs::remove_file(&self.lock_path);
        }
        if self.created {
            // Succeeds only when nothing was written into it.
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

#[cfg(unix)]
fn is_same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// Makes a rename or removal inside `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// An open CSV file that whole rows are appended to.
pub struct Appender<T> {
    file: File,
    path: PathBuf,
    /// The length after the last complete append.
    len: u64,
    rows: PhantomData<fn(&T)>,
}

impl<T: Serialize> Appender<T> {
    fn open(path: PathBuf) -> Result<Appender<T>> {
        own_file(&path)?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let len = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        Ok(Appender {
            file,
            path,
            len,
            rows: PhantomData,
        })
    }

    /// Appends `rows` in one write and syncs. When the write fails (a full disk), the file is
    /// cut back to its last complete row, so nothing torn is left if that succeeds.
    pub fn append(&mut self, rows: &[T]) -> Result<()> {
        let bytes = csv_bytes(None, rows)?;
        let written = self.file.write_all(&bytes).and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.len += bytes.len() as u64;
                Ok(())
            }
            Err(error) => {
                let _ = self.file.set_len(self.len).and_then(|()| self.file.sync_data());
                Err(error).with_context(|| format!("cannot write {}", self.path.display()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Point {
        name: String,
        run: String,
        x: f64,
    }

    impl Record for Point {
        const ROW: &'static str = "point";

        fn check(&self) -> Result<(), String> {
            in_range("x", self.x, 0.0, 10.0)
        }

        fn key(&self) -> String {
            self.name.clone()
        }

        fn set(&self) -> Vec<(&'static str, &str)> {
            vec![("run", &self.run)]
        }
    }

    fn table(text: &str) -> Result<Table<Point>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("points.csv");
        std::fs::write(&path, text).unwrap();
        read::<Point>(&path)
    }

    fn refusal(text: &str) -> String {
        let error = table(text).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
        let message = format!("{error:#}");
        message[message.find("points.csv").unwrap()..].to_string()
    }

    #[test]
    fn a_valid_file_reads_and_a_torn_last_line_is_reported_not_read() {
        let read = table("name,run,x\na,r,1\nb,r,2\nc,r,3").unwrap();
        assert_eq!(read.rows.len(), 2);
        assert_eq!(read.torn_line, Some(4));
        assert_eq!(table("name,run,x\na,r,1\n").unwrap().torn_line, None);
    }

    #[test]
    fn every_kind_of_bad_file_is_refused_with_its_line() {
        assert_eq!(
            refusal(""),
            "points.csv:1: an empty file, without the header serbench writes"
        );
        assert_eq!(
            refusal("name,x,run\n"),
            "points.csv:1: not this serbench's header: column 2 is \"x\" where this version's header has \"run\""
        );
        assert_eq!(
            refusal("name,run\n"),
            "points.csv:1: not this serbench's header: 2 columns where this version's header has 3"
        );
        assert_eq!(
            refusal("name,run,x\na,r,1\nb,r\n"),
            "points.csv:3: 2 fields where the header has 3 (a truncated or corrupt row)"
        );
        assert_eq!(
            refusal("name,run,x\na,r,one\n"),
            "points.csv:2: field 3 (x): invalid float literal"
        );
        for bad in ["inf", "NaN", "-1", "1e308"] {
            assert!(
                refusal(&format!("name,run,x\na,r,{bad}\n")).starts_with("points.csv:2: x "),
                "{bad}"
            );
        }
        assert_eq!(
            refusal("name,run,x\na,r,1\na,r,2\n"),
            "points.csv:3: point a appears a second time (first on line 2): two runs mixed"
        );
        assert_eq!(
            refusal("name,run,x\na,r,1\nb,s,2\n"),
            "points.csv:3: a row of another run (run \"s\", line 2 has \"r\"): one file holds one run"
        );
    }

    #[test]
    fn a_second_lock_on_a_folder_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutDir::lock(dir.path()).unwrap();
        let error = OutDir::lock(dir.path()).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some());
        assert!(
            format!("{error:#}").contains("is in use by another serbench"),
            "{error:#}"
        );
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists());
        OutDir::lock(dir.path()).unwrap();
    }

    #[test]
    fn a_folder_made_for_a_refused_command_is_removed_again() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new");
        drop(OutDir::lock(&out).unwrap());
        assert!(!out.exists());
        let kept = OutDir::lock(&out).unwrap();
        kept.write_file("a.txt", |file| Ok(file.write_all(b"a")?))
            .unwrap();
        drop(kept);
        assert!(out.join("a.txt").is_file());
    }

    #[test]
    fn rewritten_files_and_folders_leave_nothing_of_the_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        out.write_dir("charts", &[("a.svg", b"1"), ("b.svg", b"2")])
            .unwrap();
        out.write_dir("charts", &[("c.svg", b"3")]).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path().join("charts"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["c.svg"]);
        out.write_file("report.md", |file| Ok(file.write_all(b"new")?))
            .unwrap();
        let failed = out.write_file("report.md", |file| {
            file.write_all(b"half")?;
            anyhow::bail!("disk full")
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(dir.path().join("report.md")).unwrap(), b"new");
        let mut entries: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        entries.sort();
        assert_eq!(entries, [LOCK_FILE, "charts", "report.md"]);
    }

    /// A `--replace` killed after any number of its renames: the next writer finishes the
    /// move, so the old set is whole in one `replaced/` folder and nothing of it is left out.
    #[test]
    fn a_move_killed_at_any_step_is_finished_by_the_next_writer() {
        let names = ["results.csv", "sizes.csv", "report.md"];
        for killed_after in 0..=names.len() {
            let dir = tempfile::tempdir().unwrap();
            for name in names {
                std::fs::write(dir.path().join(name), name).unwrap();
            }
            let out = OutDir::lock(dir.path()).unwrap();
            let target = out.begin_move(&names).unwrap();
            for name in &names[..killed_after] {
                std::fs::rename(dir.path().join(name), target.join(name)).unwrap();
            }
            drop(out);
            let _next = OutDir::lock(dir.path()).unwrap();
            let folders: Vec<PathBuf> = std::fs::read_dir(dir.path().join(REPLACED_DIR))
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            assert_eq!(
                folders,
                std::slice::from_ref(&target),
                "killed after {killed_after}"
            );
            for name in names {
                assert!(
                    !dir.path().join(name).exists(),
                    "killed after {killed_after}: {name} left"
                );
                assert_eq!(std::fs::read_to_string(target.join(name)).unwrap(), name);
            }
            assert!(!target.join(MOVING_FILE).exists());
        }
    }

    /// A folder swap killed between its two renames leaves the old folder under
    /// [`OLD_PREFIX`]: the next writer puts it back; killed after both, it removes it.
    #[test]
    fn a_folder_swap_killed_between_its_renames_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        out.write_dir("charts", &[("a.svg", b"1")]).unwrap();
        let old = dir.path().join(format!("{OLD_PREFIX}charts"));
        std::fs::rename(dir.path().join("charts"), &old).unwrap();
        drop(out);
        let out = OutDir::lock(dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("charts/a.svg")).unwrap(), b"1");
        assert!(!old.exists());

        std::fs::create_dir(&old).unwrap();
        drop(out);
        drop(OutDir::lock(dir.path()).unwrap());
        assert!(!old.exists() && dir.path().join("charts/a.svg").is_file());
    }

    /// A group of a folder and a file, as a report's.
    const GROUP: Owned = Owned {
        manifest: "made.sha256",
        names: &["charts", "page.html", "made.sha256"],
    };

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_group_rewrites_and_removes_only_the_files_its_manifest_records() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        out.write_owned(GROUP, &[("charts/a.svg", b"1"), ("page.html", b"p")])
            .unwrap();
        out.write_owned(GROUP, &[("charts/b.svg", b"2"), ("page.html", b"q")])
            .unwrap();
        assert_eq!(entries(&dir.path().join("charts")), ["b.svg"]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.sha256")).unwrap(),
            format!("{}  charts/b.svg\n{}  page.html\n", sha256(b"2"), sha256(b"q"))
        );

        std::fs::write(dir.path().join("charts/notes.txt"), "mine").unwrap();
        std::fs::write(dir.path().join("page.html"), "edited").unwrap();
        assert_eq!(out.foreign(GROUP).unwrap(), ["charts/notes.txt", "page.html"]);
        let error = out.write_owned(GROUP, &[("page.html", b"r")]).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
        assert!(out.remove_owned(GROUP).is_err());
        assert!(out.claim_owned(GROUP, false).is_err());
        assert_eq!(
            std::fs::read(dir.path().join("charts/notes.txt")).unwrap(),
            b"mine"
        );
        assert_eq!(std::fs::read(dir.path().join("page.html")).unwrap(), b"edited");

        let moved = out.claim_owned(GROUP, true).unwrap().unwrap();
        assert_eq!(std::fs::read(moved.join("charts/notes.txt")).unwrap(), b"mine");
        assert_eq!(std::fs::read(moved.join("page.html")).unwrap(), b"edited");
        assert!(moved.join("made.sha256").is_file());
        assert_eq!(entries(dir.path()), [LOCK_FILE, REPLACED_DIR]);
    }

    #[test]
    fn a_group_write_that_fails_leaves_the_manifest_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        out.write_owned(GROUP, &[("page.html", b"p")]).unwrap();
        let manifest = std::fs::read(dir.path().join("made.sha256")).unwrap();
        // The charts folder cannot be built: its temporary name is taken.
        std::fs::write(out.temp_path("charts"), "").unwrap();
        assert!(
            out.write_owned(GROUP, &[("charts/a.svg", b"1"), ("page.html", b"q")])
                .is_err()
        );
        assert_eq!(std::fs::read(dir.path().join("made.sha256")).unwrap(), manifest);
        assert_eq!(std::fs::read(dir.path().join("page.html")).unwrap(), b"p");
        assert!(out.foreign(GROUP).unwrap().is_empty());
    }

    #[test]
    fn replace_refuses_a_replaced_that_is_not_its_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        std::fs::write(dir.path().join("sizes.csv"), "old").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(REPLACED_DIR)).unwrap();
        let error = out.claim_files(&["sizes.csv"], true).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some());
        assert!(format!("{error:#}").contains("a symbolic link, not a folder serbench made"));
        assert!(dir.path().join("sizes.csv").is_file());
        assert!(entries(elsewhere.path()).is_empty());
    }

    /// A set of the files it names, which no `--resume` extends.
    #[derive(Clone, Copy)]
    struct Files(&'static [&'static str]);

    impl ResultSet for Files {
        fn files(self) -> &'static [&'static str] {
            self.0
        }

        fn resumable(self, _: &[&str]) -> bool {
            false
        }

        fn describe(self, _: &str, _: &Path) -> Option<String> {
            None
        }
    }

    #[test]
    fn replace_moves_the_old_set_aside_and_claim_refuses_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutDir::lock(dir.path()).unwrap();
        std::fs::write(dir.path().join("sizes.csv"), "old").unwrap();
        let error = out.claim(Files(&["sizes.csv", "report.md"]), false).unwrap_err();
        assert!(
            format!("{error:#}").contains("already holds a result set (sizes.csv)"),
            "{error:#}"
        );
        assert!(out.claim(Files(&["robustness.csv"]), false).unwrap().is_none());
        let moved = out
            .claim(Files(&["sizes.csv", "report.md"]), true)
            .unwrap()
            .unwrap();
        assert_eq!(std::fs::read_to_string(moved.join("sizes.csv")).unwrap(), "old");
        assert!(!dir.path().join("sizes.csv").exists());
    }
}

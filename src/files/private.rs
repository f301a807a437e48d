//! A folder private to the user, for what serbench runs from it (the typed cache): owned by the
//! effective user, not writable by group or others, a folder and not a link, created 0700. Every
//! folder and file in it is opened relative to its parent's descriptor without following a link
//! and checked on the opened descriptor (fstat), so a swap between the check and the use changes
//! nothing; files are written only when they are the folder's own (regular, one link). The
//! folders above its root must be root's or the user's and writable by no one else (unless
//! sticky, as /tmp): whoever can rename a folder above could put another in its place.
//! Why: docs/your-data.md, "The typed cache".

use std::ffi::CString;
use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::UsageError;

/// A folder checked private, open: what it holds is reached through its descriptor.
#[derive(Debug)]
pub struct PrivateDir {
    dir: File,
    path: PathBuf,
    /// What the user can do about a refusal (said after what is wrong).
    hint: String,
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// One path component as a C string: `name` is a plain name (no `/`, not `.` or `..`).
fn c_name(name: &str) -> CString {
    assert!(
        !name.is_empty() && !name.contains('/') && name != "." && name != "..",
        "{name:?} is not one plain name"
    );
    CString::new(name).expect("a name without NUL")
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| UsageError::error(format!("{}: a path with a NUL byte", path.display())))
}

/// A descriptor from a libc call's return value, or the OS error.
fn owned(fd: libc::c_int) -> std::io::Result<File> {
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned open by the kernel and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Who may write a folder or file of `mode`, in words, or `None` for its owner alone.
fn writable_by(mode: u32) -> Option<&'static str> {
    match mode & 0o022 {
        0 => None,
        0o020 => Some("its group"),
        0o002 => Some("everyone"),
        _ => Some("its group and everyone"),
    }
}

impl PrivateDir {
    /// Opens the folder `path`, creating it 0700 when absent (its parents as needed, with the
    /// usual mode), and checks it and every folder above it; `hint` ends each refusal.
    pub fn open(path: &Path, hint: &str) -> Result<PrivateDir> {
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        check_above(path, parent, hint)?;
        match std::fs::DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error).with_context(|| format!("cannot create {}", path.display())),
        }
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid C string and flags; the result is checked by `owned`.
        let dir = owned(unsafe { libc::open(c_path(path)?.as_ptr(), flags) });
        let dir = dir.map_err(|error| refusal_on_open(path, error, true, hint))?;
        let private = PrivateDir {
            dir,
            path: path.to_path_buf(),
            hint: hint.to_string(),
        };
        private.check(&private.dir, path, true)?;
        Ok(private)
    }

    /// A new folder of this process alone in the temporary folder (mkdtemp: a fresh random name,
    /// 0700), never a fixed name others could have made first.
    pub fn fresh_temporary(prefix: &str, hint: &str) -> Result<PrivateDir> {
        let temp = std::env::temp_dir();
        let template = temp.join(format!("{prefix}XXXXXX"));
        let mut bytes = c_path(&template)?.into_bytes_with_nul();
        // SAFETY: a NUL-terminated, writable template ending in XXXXXX, as mkdtemp requires.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot create a private folder in {}", temp.display()));
        }
        bytes.pop();
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&bytes));
        PrivateDir::open(&path, hint)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this folder (for messages and for tools given a path).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The folder `name` in this one, created 0700 when absent, checked as this one was.
    pub fn child(&self, name: &str) -> Result<PrivateDir> {
        let c = c_name(name);
        // SAFETY: an open directory descriptor and a valid C string.
        if unsafe { libc::mkdirat(self.dir.as_raw_fd(), c.as_ptr(), 0o700) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != ErrorKind::AlreadyExists {
                return Err(error).with_context(|| format!("cannot create {}", self.join(name).display()));
            }
        }
        self.existing_child(name)?
            .with_context(|| format!("{} vanished as it was made", self.join(name).display()))
    }

    /// The folder `name` in this one if there is one, checked as this one was.
    pub fn existing_child(&self, name: &str) -> Result<Option<PrivateDir>> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let path = self.join(name);
        let dir = match self.open_at(name, flags, 0) {
            Ok(dir) => dir,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(refusal_on_open(&path, error, true, &self.hint)),
        };
        let child = PrivateDir {
            dir,
            path,
            hint: self.hint.clone(),
        };
        child.check(&child.dir, &child.path, true)?;
        Ok(Some(child))
    }

    /// The file `name` opened for reading if there is one: a regular file, the user's own, that
    /// no one else can write (what may be run).
    pub fn existing_file(&self, name: &str) -> Result<Option<File>> {
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        let path = self.join(name);
        let file = match self.open_at(name, flags, 0) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(refusal_on_open(&path, error, false, &self.hint)),
        };
        self.check(&file, &path, false)?;
        Ok(Some(file))
    }

    /// The file `name` for writing from its start, created with `mode` when absent; an existing
    /// one must be this folder's own (regular, the user's, one link), and is truncated only then.
    pub fn rewrite_file(&self, name: &str, mode: u32) -> Result<File> {
        let file = self.own_file(name, libc::O_WRONLY, mode)?;
        file.set_len(0)
            .with_context(|| format!("cannot write {}", self.join(name).display()))?;
        Ok(file)
    }

    /// The new file `name`, which must not exist (nor a link of that name).
    pub fn create_new(&self, name: &str, mode: u32) -> Result<File> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        self.open_at(name, flags, mode)
            .with_context(|| format!("cannot create {}", self.join(name).display()))
    }

    /// Removes the file `name` if there is one.
    pub fn remove_file(&self, name: &str) -> Result<()> {
        // SAFETY: an open directory descriptor and a valid C string.
        if unsafe { libc::unlinkat(self.dir.as_raw_fd(), c_name(name).as_ptr(), 0) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != ErrorKind::NotFound {
                return Err(error).with_context(|| format!("cannot remove {}", self.join(name).display()));
            }
        }
        Ok(())
    }

    /// Renames `from` to `to`, both in this folder, and makes the rename durable.
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        let fd = self.dir.as_raw_fd();
        // SAFETY: open directory descriptors and valid C strings.
        if unsafe { libc::renameat(fd, c_name(from).as_ptr(), fd, c_name(to).as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot rename {} to {to}", self.join(from).display()));
        }
        self.dir
            .sync_all()
            .with_context(|| format!("cannot sync {}", self.path.display()))
    }

    /// An exclusive lock on the file `name` (created if absent, never through a link), held
    /// until the returned file is dropped. When another process holds it, calls `waiting` once,
    /// then waits for it.
    pub fn lock(&self, name: &str, waiting: impl FnOnce()) -> Result<File> {
        let file = self.own_file(name, libc::O_RDWR, 0o600)?;
        let path = self.join(name);
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting();
                file.lock()
                    .with_context(|| format!("cannot lock {}", path.display()))?;
            }
            Err(std::fs::TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        Ok(file)
    }

    /// `name` opened with `access`, created with `mode` when absent, never through a link, and
    /// checked to be this folder's own regular file with one link.
    fn own_file(&self, name: &str, access: libc::c_int, mode: u32) -> Result<File> {
        let flags = access | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        let path = self.join(name);
        let file = self
            .open_at(name, flags, mode)
            .map_err(|error| refusal_on_open(&path, error, false, &self.hint))?;
        self.check(&file, &path, false)?;
        let links = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .nlink();
        if links != 1 {
            return Err(UsageError::error(format!(
                "{}: a file with {links} names (a hard link): serbench writes only its own files; {}",
                path.display(),
                self.hint
            )));
        }
        Ok(file)
    }

    fn open_at(&self, name: &str, flags: libc::c_int, mode: u32) -> std::io::Result<File> {
        // SAFETY: an open directory descriptor, a valid C string, flags and a mode for O_CREAT.
        owned(unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c_name(name).as_ptr(),
                flags,
                mode as libc::c_uint,
            )
        })
    }

    /// The opened `file` at `path` is a folder (or regular file), the user's, that no one else
    /// can write: checked on the descriptor.
    fn check(&self, file: &File, path: &Path, folder: bool) -> Result<()> {
        let metadata = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?;
        let hint = &self.hint;
        if folder && !metadata.is_dir() {
            return Err(UsageError::error(format!(
                "{}: not a folder; {hint}",
                path.display()
            )));
        }
        if !folder && !metadata.is_file() {
            return Err(UsageError::error(format!(
                "{}: not a regular file (a folder, FIFO or device); {hint}",
                path.display()
            )));
        }
        if metadata.uid() != euid() {
            return Err(UsageError::error(format!(
                "{}: owned by user {}, not by you (user {}); {hint}",
                path.display(),
                metadata.uid(),
                euid()
            )));
        }
        if let Some(who) = writable_by(metadata.mode()) {
            return Err(UsageError::error(format!(
                "{}: writable by {who} (mode {:o}), not only by you; {hint}",
                path.display(),
                metadata.mode() & 0o7777
            )));
        }
        Ok(())
    }
}

/// Why `path` could not be opened as a folder (or file) of its own: a link or another kind is a
/// refusal; anything else is the OS's error.
fn refusal_on_open(path: &Path, error: std::io::Error, folder: bool, hint: &str) -> anyhow::Error {
    let link = std::fs::symlink_metadata(path).is_ok_and(|entry| entry.file_type().is_symlink());
    match error.raw_os_error() {
        // O_NOFOLLOW refuses a link with ELOOP, or ENOTDIR where O_DIRECTORY is checked first.
        Some(libc::ELOOP | libc::EMLINK | libc::ENOTDIR) if link => UsageError::error(format!(
            "{}: a symbolic link, which serbench never follows here; {hint}",
            path.display()
        )),
        Some(libc::ENOTDIR) if folder => {
            UsageError::error(format!("{}: not a folder; {hint}", path.display()))
        }
        _ => anyhow::Error::new(error).context(format!("cannot open {}", path.display())),
    }
}

/// Every folder above `path` (from `parent`, its links resolved) is root's or the user's and
/// writable by no one else, unless sticky (only an entry's owner can rename it there).
fn check_above(path: &Path, parent: &Path, hint: &str) -> Result<()> {
    let real =
        std::fs::canonicalize(parent).with_context(|| format!("cannot resolve {}", parent.display()))?;
    for folder in real.ancestors() {
        let metadata =
            std::fs::symlink_metadata(folder).with_context(|| format!("cannot read {}", folder.display()))?;
        let owner = metadata.uid();
        let sticky = metadata.mode() & 0o1000 != 0;
        let problem = if owner != 0 && owner != euid() {
            format!("owned by user {owner}, neither root nor you")
        } else if let Some(who) = writable_by(metadata.mode()).filter(|_| !sticky) {
            format!(
                "writable by {who} (mode {:o}) and not sticky",
                metadata.mode() & 0o7777
            )
        } else {
            continue;
        };
        return Err(UsageError::error(format!(
            "{}: the folder {} above it is {problem}, so another user could put a folder of theirs \
             in its place; {hint}",
            path.display(),
            folder.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const HINT: &str = "remove it";

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn refusal(result: Result<impl std::fmt::Debug>) -> String {
        let error = result.expect_err("refused");
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
        let text = format!("{error:#}");
        assert_eq!(text.lines().count(), 1, "{text}");
        text
    }

    #[test]
    fn a_new_folder_is_made_0700_and_a_shared_or_linked_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("a/b/cache");
        let private = PrivateDir::open(&root, HINT).unwrap();
        let mode = |path: &Path| std::fs::symlink_metadata(path).unwrap().mode() & 0o7777;
        assert_eq!(mode(&root), 0o700);
        let typed = private.child("typed").unwrap();
        assert_eq!(mode(typed.path()), 0o700);
        assert!(private.existing_child("nothing").unwrap().is_none());
        drop(private);

        chmod(&root, 0o1777);
        let text = refusal(PrivateDir::open(&root, HINT));
        assert!(
            text.contains("writable by its group and everyone (mode 1777)"),
            "{text}"
        );
        chmod(&root, 0o700);
        chmod(typed.path(), 0o720);
        let opened = PrivateDir::open(&root, HINT).unwrap();
        assert!(refusal(opened.child("typed")).contains("writable by its group"));

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        assert!(refusal(PrivateDir::open(&link, HINT)).contains("a symbolic link"));
        std::fs::write(dir.path().join("file"), "").unwrap();
        assert!(refusal(PrivateDir::open(&dir.path().join("file"), HINT)).contains("not a folder"));

        // A folder above that others can write, not sticky: refused, even for a folder of ours.
        chmod(&dir.path().join("a"), 0o777);
        assert!(refusal(PrivateDir::open(&root, HINT)).contains("above it is writable by"));
        chmod(&dir.path().join("a"), 0o1777);
        PrivateDir::open(&root, HINT).unwrap();
    }

    #[test]
    fn files_are_opened_without_links_and_only_when_they_are_the_folders_own() {
        let dir = tempfile::tempdir().unwrap();
        let private = PrivateDir::open(&dir.path().join("cache"), HINT).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, private.join("build.log")).unwrap();
        assert!(refusal(private.rewrite_file("build.log", 0o600)).contains("a symbolic link"));
        assert!(refusal(private.existing_file("build.log")).contains("a symbolic link"));
        assert!(private.create_new("build.log", 0o600).is_err());
        std::fs::remove_file(private.join("build.log")).unwrap();
        std::fs::hard_link(&victim, private.join("build.log")).unwrap();
        assert!(refusal(private.rewrite_file("build.log", 0o600)).contains("hard link"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");

        std::fs::write(private.join("binary"), "#!/bin/sh\n").unwrap();
        chmod(&private.join("binary"), 0o757);
        assert!(refusal(private.existing_file("binary")).contains("writable by everyone"));
        chmod(&private.join("binary"), 0o755);
        assert!(private.existing_file("binary").unwrap().is_some());
        assert!(private.existing_file("absent").unwrap().is_none());
        private.create_new("new", 0o600).unwrap();
        private.rename("new", "renamed").unwrap();
        assert!(private.join("renamed").is_file() && !private.join("new").exists());
        private.remove_file("renamed").unwrap();
        private.remove_file("renamed").unwrap();
    }

    /// Run as root (as CI does): files and folders of another user are refused.
    #[test]
    fn what_another_user_owns_is_refused() {
        if euid() != 0 {
            eprintln!("skipped: giving a file to another user needs root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let private = PrivateDir::open(&dir.path().join("cache"), HINT).unwrap();
        let key = private.child("key").unwrap();
        std::fs::write(key.join("binary"), "").unwrap();
        let chown = |path: &Path| std::os::unix::fs::lchown(path, Some(65534), Some(65534)).unwrap();
        chown(&key.join("binary"));
        assert!(refusal(key.existing_file("binary")).contains("owned by user 65534, not by you"));
        chown(key.path());
        assert!(refusal(private.existing_child("key")).contains("owned by user 65534"));
    }

    /// A second locker waits, says so once, and gets the lock when the first lets it go.
    #[test]
    fn a_second_locker_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let private = PrivateDir::open(&dir.path().join("cache"), HINT).unwrap();
        let first = private.lock("lock", || panic!("nobody holds it yet")).unwrap();
        let (said, heard) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _second = private.lock("lock", || said.send(()).unwrap()).unwrap();
        });
        heard.recv().expect("the second locker said it waits");
        drop(first);
        waiter.join().unwrap();
    }

    #[test]
    fn a_fresh_temporary_folder_is_new_and_private() {
        let one = PrivateDir::fresh_temporary("serbench-test-", HINT).unwrap();
        let two = PrivateDir::fresh_temporary("serbench-test-", HINT).unwrap();
        assert_ne!(one.path(), two.path());
        assert_eq!(std::fs::metadata(one.path()).unwrap().mode() & 0o7777, 0o700);
        for dir in [one, two] {
            std::fs::remove_dir(dir.path()).unwrap();
        }
    }
}

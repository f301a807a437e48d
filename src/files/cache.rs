//! Where serbench keeps what it builds and runs (typed binaries, code layouts): `$SERBENCH_CACHE`,
//! else `$XDG_CACHE_HOME/serbench`, else `~/.cache/serbench` (the home from the password database
//! when HOME is unset), else a new private folder for one command; never a fixed name under /tmp.
//! The folder is a [`PrivateDir`]: its binaries are run, so it is the user's alone or refused.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use anyhow::Result;

use super::PrivateDir;

/// What ends every refusal of the cache.
pub const HINT: &str = "serbench runs the binaries its cache holds, so the cache must be yours alone: \
                    remove what is named, or set SERBENCH_CACHE to a folder of your own";

/// The cache, open and checked private ([`PrivateDir`]): where [`cache_location`] says, else a
/// new private folder for this process alone.
pub fn cache_root() -> Result<PrivateDir> {
    if let Some(path) = cache_location(|name| std::env::var_os(name), user_home) {
        return PrivateDir::open(&path, HINT);
    }
    let dir = PrivateDir::fresh_temporary("serbench-cache-", HINT)?;
    eprintln!(
        "serbench: no home folder (HOME, XDG_CACHE_HOME and SERBENCH_CACHE unset, none in the \
         password database): the typed build is cached in {} for this process only",
        crate::escape::terminal(&dir.path().display().to_string())
    );
    Ok(dir)
}

/// Where typed builds are cached: `$SERBENCH_CACHE`, `$XDG_CACHE_HOME/serbench`, or
/// `.cache/serbench` in `$HOME` or the home folder `home` finds; `None` when there is none.
fn cache_location(
    variable: impl Fn(&str) -> Option<OsString>,
    home: impl FnOnce() -> Option<PathBuf>,
) -> Option<PathBuf> {
    let set = |name: &str| {
        variable(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = set("SERBENCH_CACHE") {
        return Some(dir);
    }
    // The XDG spec: a relative path is ignored.
    if let Some(dir) = set("XDG_CACHE_HOME").filter(|dir| dir.is_absolute()) {
        return Some(dir.join("serbench"));
    }
    let home = set("HOME").or_else(home)?;
    Some(home.join(".cache").join("serbench"))
}

/// The effective user's home folder in the password database, if it names one that exists.
fn user_home() -> Option<PathBuf> {
    let mut buffer = vec![0u8; 1024];
    loop {
        // SAFETY: a zeroed passwd is a valid out-parameter; the buffer outlives the call and the
        // reads of `entry`'s strings below, which point into it.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let code = unsafe {
            libc::getpwuid_r(
                libc::geteuid(),
                &mut entry,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut result,
            )
        };
        if code == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 2, 0);
            continue;
        }
        if code != 0 || result.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: getpwuid_r succeeded, so pw_dir is a NUL-terminated string in `buffer`.
        let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
        return (dir.is_absolute() && dir.is_dir()).then_some(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SERBENCH_CACHE, then XDG_CACHE_HOME (absolute), then HOME, then the password database's
    /// home; with none, no path at all (a new private folder), never a fixed name under /tmp.
    #[test]
    fn the_cache_is_where_the_environment_or_the_user_says_and_else_nowhere_fixed() {
        let location = |set: &[(&str, &str)], home: Option<&str>| {
            let variables: Vec<(String, OsString)> = set
                .iter()
                .map(|(name, value)| (name.to_string(), OsString::from(value)))
                .collect();
            cache_location(
                |name| {
                    variables
                        .iter()
                        .find(|(known, _)| known == name)
                        .map(|(_, value)| value.clone())
                },
                || home.map(PathBuf::from),
            )
        };
        let all = [("SERBENCH_CACHE", "/c"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(location(&all, Some("/p")), Some(PathBuf::from("/c")));
        assert_eq!(
            location(&all[1..], Some("/p")),
            Some(PathBuf::from("/x/serbench"))
        );
        assert_eq!(
            location(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")], None),
            Some(PathBuf::from("/h/.cache/serbench"))
        );
        assert_eq!(
            location(&[("SERBENCH_CACHE", ""), ("HOME", "")], Some("/p")),
            Some(PathBuf::from("/p/.cache/serbench"))
        );
        assert_eq!(location(&[], None), None);
    }
}

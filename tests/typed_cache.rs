//! The typed cache and `gen --out` through the real binary (issue 41): a cache others can write,
//! or a key folder, binary or build.log that is not the user's own, is refused in one line and
//! nothing in it runs or is written through; without a home the cache is a new private folder,
//! never a fixed name under /tmp; two `--typed` commands on one schema build once. `CARGO` is a
//! script here (the build's failure, or a "binary" that is a script), so no crate is compiled.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};

use common::stderr;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    chmod(path, 0o755);
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        assert!(
            std::env::var_os("SERBENCH_REQUIRE_ROOT").is_none(),
            "SERBENCH_REQUIRE_ROOT is set, but this test does not run as root"
        );
        eprintln!("skipped: giving files to another user needs root (SERBENCH_REQUIRE_ROOT requires it)");
    }
    root
}

/// A data file and a `CARGO` that fails, in a fresh folder.
struct Setup {
    dir: tempfile::TempDir,
    data: PathBuf,
    failing_cargo: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("cache-test.ndjson");
        std::fs::write(&data, "{\"cache_test_field\": 1}\n{\"cache_test_field\": 2}\n").unwrap();
        let failing_cargo = dir.path().join("failing-cargo");
        script(&failing_cargo, "echo 'error: the compiler said no' >&2\nexit 101");
        Setup {
            dir,
            data,
            failing_cargo,
        }
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// `serbench list --typed` on the data, with this cache and `cargo`.
    fn command(&self, cargo: &Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_serbench"));
        command
            .args(["list", "--typed", "--format", "postcard", "--data"])
            .arg(&self.data)
            .env("SERBENCH_CACHE", self.cache())
            .env("CARGO", cargo);
        command
    }

    fn list_typed(&self) -> Output {
        self.command(&self.failing_cargo).output().unwrap()
    }

    /// The key folder of the data's schema, made by a first command whose build failed.
    fn key_folder(&self) -> PathBuf {
        let failed = self.list_typed();
        assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
        assert!(
            stderr(&failed).contains("the typed build failed"),
            "{}",
            stderr(&failed)
        );
        // Beside the key folders, an installed or Nix-built serbench keeps one shared `target`.
        let keys: Vec<PathBuf> = std::fs::read_dir(self.cache().join("typed"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| !path.ends_with("target"))
            .collect();
        assert_eq!(keys.len(), 1, "{keys:?}");
        keys[0].clone()
    }

    /// A script planted as the key folder's binary, which would leave `marker` if it ran.
    fn plant_binary(&self, key: &Path) -> PathBuf {
        let marker = self.dir.path().join("ran");
        script(
            &key.join("serbench-typed"),
            &format!("touch '{}'", marker.display()),
        );
        marker
    }
}

/// One line on stderr, exit 2.
fn assert_refused(output: &Output, words: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(text.contains(words), "{words:?} not in: {text}");
}

/// Defect 3: a cache folder of mode 1777 (a shared cache) is refused before anything in it runs.
#[test]
fn a_cache_others_can_write_is_refused_and_nothing_in_it_runs() {
    let setup = Setup::new();
    let key = setup.key_folder();
    let marker = setup.plant_binary(&key);
    chmod(&setup.cache(), 0o1777);
    let refused = setup.list_typed();
    assert_refused(&refused, "writable by its group and everyone (mode 1777)");
    assert!(!marker.exists(), "the planted binary ran");
    // The same cache made private again: the binary there is the user's own, and runs.
    chmod(&setup.cache(), 0o700);
    let ran = setup.list_typed();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(marker.exists(), "the user's own binary did not run");
}

/// Defect 3: a key folder or binary owned by another user is refused, and nothing runs.
#[test]
fn a_key_folder_or_binary_of_another_user_is_refused() {
    if !is_root() {
        return;
    }
    let setup = Setup::new();
    let key = setup.key_folder();
    let marker = setup.plant_binary(&key);
    let binary = key.join("serbench-typed");
    std::os::unix::fs::lchown(&binary, Some(65534), Some(65534)).unwrap();
    assert_refused(&setup.list_typed(), "owned by user 65534, not by you");
    assert!(!marker.exists(), "another user's binary ran");

    std::os::unix::fs::lchown(&binary, Some(0), Some(0)).unwrap();
    std::os::unix::fs::lchown(&key, Some(65534), Some(65534)).unwrap();
    assert_refused(&setup.list_typed(), "owned by user 65534, not by you");
    assert!(!marker.exists(), "a binary in another user's folder ran");
}

/// Defect 5: a build.log planted as a link to another file: refused, the file kept.
#[test]
fn a_build_log_link_is_refused_and_its_target_kept() {
    let setup = Setup::new();
    let key = setup.key_folder();
    let victim = setup.dir.path().join("victim.txt");
    std::fs::write(&victim, "the victim's words\n").unwrap();
    std::fs::remove_file(key.join("build.log")).unwrap();
    std::os::unix::fs::symlink(&victim, key.join("build.log")).unwrap();
    let refused = setup.list_typed();
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the victim's words\n",
        "{}",
        stderr(&refused)
    );
    assert_refused(&refused, "build.log: a symbolic link");
}

/// Defect 4: with HOME, XDG_CACHE_HOME and SERBENCH_CACHE unset, and a user the password database
/// does not know, the cache is a new folder of this process (mode 0700), never
/// `$TMPDIR/serbench-cache`, and serbench says where it is.
#[test]
fn without_a_home_the_cache_is_a_new_private_folder() {
    if !is_root() {
        return;
    }
    // A user with no entry in the password database.
    let uid: u32 = 3_987_654;
    // SAFETY: getpwuid's result is only compared with null.
    assert!(unsafe { libc::getpwuid(uid) }.is_null(), "user {uid} exists");
    let setup = Setup::new();
    chmod(setup.dir.path(), 0o755);
    chmod(&setup.data, 0o644);
    let tmp = setup.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::os::unix::fs::chown(&tmp, Some(uid), Some(uid)).unwrap();
    chmod(&tmp, 0o700);
    let output = Command::new(env!("CARGO_BIN_EXE_serbench"))
        .args(["list", "--typed", "--format", "postcard", "--data"])
        .arg(&setup.data)
        .env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("SERBENCH_CACHE")
        .env("TMPDIR", &tmp)
        .env("CARGO", &setup.failing_cargo)
        .current_dir(setup.dir.path())
        .uid(uid)
        .gid(uid)
        .output()
        .unwrap();
    let text = stderr(&output);
    // The build was attempted (and failed, as its fake cargo does) in the new folder.
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("for this process only"), "{text}");
    assert!(!tmp.join("serbench-cache").exists(), "{text}");
    let made: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let folder = &made[0];
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("serbench-cache-") && name.len() > "serbench-cache-".len(),
        "{name}"
    );
    assert!(text.contains(&folder.display().to_string()), "{text}");
    let metadata = std::fs::symlink_metadata(folder).unwrap();
    assert_eq!((metadata.uid(), metadata.mode() & 0o7777), (uid, 0o700));
    assert!(folder.join("typed").is_dir(), "{text}");
}

/// Reads `stderr`'s lines until one holds one of `words`; returns it (or what ended the output).
fn line_with(stderr: &mut BufReader<ChildStderr>, words: &[&str]) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            return "(the output ended)".to_string();
        }
        if words.iter().any(|word| line.contains(word)) {
            return line;
        }
    }
}

fn finish(child: Child, mut stderr: BufReader<ChildStderr>) -> (Output, String) {
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    (output, rest)
}

/// Defect 27: two `--typed` commands on one schema at once. The second waits for the first's
/// build (saying so), then runs the binary it made: one build, no crate rewritten under it.
#[test]
fn two_typed_commands_on_one_schema_build_once() {
    let setup = Setup::new();
    let dir = setup.dir.path();
    // A cargo that waits for `release`, then makes a "binary" where cargo would.
    let cargo = dir.join("slow-cargo");
    script(
        &cargo,
        &format!(
            r#"dir='{dir}'
name=; profile=debug; previous=
for argument in "$@"; do
  [ "$previous" = --bin ] && name=$argument
  [ "$previous" = --profile ] && profile=$argument
  [ "$argument" = --release ] && profile=release
  previous=$argument
done
echo "$name" >> "$dir/cargo-runs"
while [ ! -e "$dir/release" ]; do sleep 0.05; done
mkdir -p "$CARGO_TARGET_DIR/$profile"
printf '#!/bin/sh\necho the typed binary ran\n' > "$CARGO_TARGET_DIR/$profile/$name"
chmod 755 "$CARGO_TARGET_DIR/$profile/$name"
echo "$CARGO_TARGET_DIR/$profile/$name" > "$dir/built""#,
            dir = dir.display()
        ),
    );
    let spawn = || {
        let mut child = setup
            .command(&cargo)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        (child, stderr)
    };
    let (first, mut first_stderr) = spawn();
    let building = line_with(&mut first_stderr, &["building the typed crate"]);
    assert!(building.contains("building"), "{building}");
    // The first holds its key folder's lock until its binary is in place.
    let (second, mut second_stderr) = spawn();
    let said = line_with(
        &mut second_stderr,
        &["waiting for another build", "building the typed crate"],
    );
    std::fs::write(dir.join("release"), "").unwrap();
    let (first, _) = finish(first, first_stderr);
    let (second, second_rest) = finish(second, second_stderr);
    if let Ok(built) = std::fs::read_to_string(dir.join("built")) {
        let _ = std::fs::remove_file(built.trim());
    }
    assert!(
        said.contains("waiting for another build of this schema"),
        "the second command did not wait: {said}{second_rest}"
    );
    for output in [&first, &second] {
        assert!(output.status.success(), "{}", stderr(output));
        assert_eq!(String::from_utf8_lossy(&output.stdout), "the typed binary ran\n");
    }
    let runs = std::fs::read_to_string(dir.join("cargo-runs")).unwrap();
    assert_eq!(runs.lines().count(), 1, "cargo ran more than once: {runs}");
}

/// Defect 28: `gen --out .` is refused (the current folder is not the crate's to replace),
/// `--out X/.` is `X`; a link, a file and a folder holding anything are refused, unchanged.
#[test]
fn gen_writes_a_new_or_empty_folder_and_refuses_anything_else() {
    let setup = Setup::new();
    let work = setup.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("mine.txt"), "mine").unwrap();
    std::fs::create_dir(work.join("empty")).unwrap();
    std::fs::create_dir(work.join("target")).unwrap();
    std::os::unix::fs::symlink("target", work.join("link")).unwrap();
    std::fs::create_dir(work.join("full")).unwrap();
    std::fs::write(work.join("full/theirs.txt"), "theirs").unwrap();
    let generate_in = |cwd: &Path, out: &str| {
        Command::new(env!("CARGO_BIN_EXE_serbench"))
            .args(["gen", "--format", "postcard", "--out", out, "--data"])
            .arg(&setup.data)
            .current_dir(cwd)
            .output()
            .unwrap()
    };
    let generate = |out: &str| generate_in(&work, out);
    // `.` is refused even where the current folder is empty: the crate would replace the folder
    // the command runs in.
    let empty_cwd = setup.dir.path().join("empty-cwd");
    std::fs::create_dir(&empty_cwd).unwrap();
    assert_refused(&generate_in(&empty_cwd, "."), "the current folder");
    assert_eq!(walk(&empty_cwd), Vec::<String>::new());
    // `X/.` is X: a crate written as a new folder (before: "Device or resource busy").
    let written = generate("new/.");
    assert!(written.status.success(), "--out new/.: {}", stderr(&written));
    assert!(work.join("new/Cargo.toml").is_file());
    let listing = || {
        let mut names: Vec<String> = walk(&work);
        names.sort();
        names
    };
    let before = listing();
    for (out, words) in [
        (".", "the current folder"),
        ("./", "the current folder"),
        ("..", "through `..`"),
        ("link", "a symbolic link"),
        ("link/.", "a symbolic link"),
        ("mine.txt", "not a folder"),
        ("full", "not empty"),
        ("full/.", "not empty"),
    ] {
        assert_refused(&generate(out), words);
        assert_eq!(listing(), before, "--out {out} changed a file");
    }
    for out in ["empty/.", "deeper/crate"] {
        let written = generate(out);
        assert!(written.status.success(), "--out {out}: {}", stderr(&written));
        let folder = work.join(out.trim_end_matches("/."));
        assert!(folder.join("Cargo.toml").is_file(), "--out {out}");
        assert!(folder.join("src/main.rs").is_file(), "--out {out}");
    }
    let partial: Vec<String> = walk(&work)
        .into_iter()
        .filter(|name| name.contains(".partial-"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
    assert_eq!(std::fs::read_to_string(work.join("mine.txt")).unwrap(), "mine");
}

/// Every path under `dir` (links not followed), relative to it.
fn walk(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            names.push(path.strip_prefix(dir).unwrap().display().to_string());
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    names
}

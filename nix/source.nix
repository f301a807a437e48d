# What the flake's binaries build from: only the files cargo reads, so a commit that edits
# README.md or the flake itself rebuilds no binary and no size report: the binary gets its commit
# at run time (stamped.nix). What such a commit does cost: the wrapper (a one-line script), and
# `nix build .#results`, whose rows record the commit, measures again (as it should: a result
# names the commit it was measured at); `nix flake check` re-runs results-smoke (seconds), the
# formatting check and the tests (checks.nix: they read README.md, docs/, nix/ and results/, so
# they build from the whole tree).
{ cargoToml }:
let
  root = toString ../.;
  # Top-level entries cargo needs: the manifest, the lock, build.rs, the sources, the targets
  # Cargo.toml declares (benches, tests), the schemas build.rs and the formats compile,
  # scripts/ (the FlatBuffers test regenerates code with scripts/flatc-regen.sh), footprint/
  # (a member of the workspace, so cargo reads its manifest) and data/ (the public JSON corpora
  # the binary embeds with include_bytes!).
  kept = [
    "Cargo.toml"
    "Cargo.lock"
    "build.rs"
    "rust-toolchain.toml"
    "rustfmt.toml"
    "src"
    "benches"
    "tests"
    "schemas"
    "scripts"
    "data"
    "footprint"
  ];
  relative = path: builtins.substring (builtins.stringLength root + 1) (-1) (toString path);
  topLevel = path: builtins.head (builtins.split "/" (relative path));
in
{
  pname = cargoToml.package.name;
  inherit (cargoToml.package) version;
  src = builtins.path {
    name = "serbench-source";
    path = ../.;
    filter = path: _type: builtins.elem (topLevel path) kept;
  };
  cargoLock.lockFile = ../Cargo.lock;
}

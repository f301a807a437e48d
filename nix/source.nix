# What every Rust derivation of the flake builds from: only the files cargo reads, so editing
# README.md or the flake itself does not rebuild (and re-measure) anything.
{ cargoToml }:
let
  root = toString ../.;
  # Top-level entries cargo needs: the manifest, the lock, build.rs, the sources, the targets
  # Cargo.toml declares (benches, tests), the schemas build.rs and the formats compile, and
  # scripts/ (the FlatBuffers test regenerates code with scripts/flatc-regen.sh).
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

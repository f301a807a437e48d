# The serbench binary: a release build (fat LTO, one codegen unit, as Cargo.toml's profile says)
# with Cargo's default features, i.e. every format.
#
# Native needs: the zstd crate compiles its bundled C with the cc crate (the stdenv compiler);
# the protobuf format's build.rs compiles .proto files with pure-Rust protox, so no protoc.
#
# No commit goes in (build.rs finds no .git and compiles in `unknown`): stamped.nix sets it at run
# time, so this derivation changes only when a source does.
{
  rustPlatform,
  source,
}:
rustPlatform.buildRustPackage (
  source
  // {
    # The tests run in checks.test (debug profile); repeating them here in release would
    # double the build of every benchmark.
    doCheck = false;
    meta = {
      description = "A fair, reproducible benchmark of Rust serialization formats";
      mainProgram = "serbench";
    };
  }
)

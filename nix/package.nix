# The serbench binary: a release build (fat LTO, one codegen unit, as Cargo.toml's profile says)
# with Cargo's default features, i.e. every format.
#
# Native needs: the zstd crate compiles its bundled C with the cc crate (the stdenv compiler);
# the protobuf format's build.rs compiles .proto files with pure-Rust protox, so no protoc.
{
  rustPlatform,
  source,
  commit,
}:
rustPlatform.buildRustPackage (
  source
  // {
    env.SERBENCH_COMMIT = commit;
    # The tests run in checks.test (debug profile); repeating them here in release would
    # double the build of every benchmark.
    doCheck = false;
    meta = {
      description = "A fair, reproducible benchmark of Rust serialization formats";
      mainProgram = "serbench";
    };
  }
)

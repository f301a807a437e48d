# The serbench binary: a release build (fat LTO, one codegen unit, as Cargo.toml's profile says)
# with Cargo's default features, i.e. every format.
#
# Native needs: the zstd crate compiles its bundled C with the cc crate (the stdenv compiler);
# the protobuf format's build.rs compiles .proto files with pure-Rust protox, so no protoc.
#
# No commit goes in (build.rs finds no .git and compiles in `unknown`): stamped.nix sets it at run
# time, so this derivation changes only when a source does.
#
# `native = true` compiles for the build machine's own CPU (`-C target-cpu=native`): build.rs reads
# the flag from the compiler flags and every results row says `native`. Such a binary fits only
# the CPU it was built on, so it is built where it runs: never substituted from a cache, and
# preferably built locally rather than on a remote builder.
{
  lib,
  rustPlatform,
  source,
  native ? false,
}:
rustPlatform.buildRustPackage (
  source
  // {
    # The tests run in checks.test (debug profile); repeating them here in release would
    # double the build of every benchmark.
    doCheck = false;
    # build.rs keeps the release link for `serbench layouts` (lld's --reproduce tar) where rustc
    # links with its bundled lld; a store path outlives the build folder that tar is in, so a Nix
    # build keeps none and its runs say they have process-level randomization only.
    SERBENCH_KEEP_LINK = "0";
    meta = {
      description = "A fair, reproducible benchmark of Rust serialization formats";
      mainProgram = "serbench";
    };
  }
  // lib.optionalAttrs native {
    pname = "${source.pname}-native";
    RUSTFLAGS = "-C target-cpu=native";
    allowSubstitutes = false;
    preferLocalBuild = true;
    meta = {
      description = "serbench compiled for the build machine's CPU (-C target-cpu=native)";
      mainProgram = "serbench";
    };
  }
)

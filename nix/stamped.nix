# serbench with the commit stamped at run time: a wrapper sets SERBENCH_COMMIT, which the binary
# prefers to the `unknown` compiled into a Nix build (src/host/mod.rs). The binary itself is
# built from the sources alone (source.nix), so a commit that changes none of them rebuilds only
# this wrapper.
#
# `--typed` builds a crate of the data's types against serbench's library (src/typed,
# src/codegen): the wrapper gives it the source this binary was built from, the crates it was
# built with (vendored from Cargo.lock, so the build is offline), the pinned toolchain, a C
# compiler (zstd's bundled C) and the Cap'n Proto compiler, and flatc where nixpkgs has the
# version the flatbuffers crate needs.
{
  lib,
  runCommand,
  runtimeShell,
  stdenv,
  capnproto,
  flatbuffers,
  unwrapped,
  commit,
  toolchain,
  flatcVersion,
}:
let
  tools = [
    toolchain
    stdenv.cc
    capnproto
  ]
  ++ lib.optionals (flatbuffers.version == flatcVersion) [ flatbuffers ];
in
runCommand "${unwrapped.pname}-${unwrapped.version}"
  {
    passthru = { inherit unwrapped commit; };
    inherit (unwrapped) meta;
  }
  ''
    mkdir -p "$out/bin"
    cat > "$out/bin/serbench" <<'WRAPPER'
    #!${runtimeShell}
    export SERBENCH_COMMIT=${commit}
    export SERBENCH_SOURCE=${unwrapped.src}
    ${lib.optionalString (unwrapped ? cargoDeps) "export SERBENCH_VENDOR=${unwrapped.cargoDeps}"}
    export CARGO=${toolchain}/bin/cargo
    export PATH=${lib.makeBinPath tools}:$PATH
    exec ${lib.getExe unwrapped} "$@"
    WRAPPER
    chmod +x "$out/bin/serbench"
  ''

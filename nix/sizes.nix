# Encoded and zstd-compressed sizes, no timing: byte-identical on every host, so this is an
# ordinary pure derivation (and a check).
{ runCommand, serbench }:
runCommand "serbench-sizes"
  {
    nativeBuildInputs = [ serbench ];
    meta.description = "serbench sizes: encoded and zstd-compressed bytes of every payload";
  }
  ''
    serbench sizes --out "$out"
  ''

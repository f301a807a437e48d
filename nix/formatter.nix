# `nix fmt`: treefmt with the repository's treefmt.toml (found from the working directory
# upwards, like a plain `treefmt` in the dev shell) and the pinned formatters first on PATH.
{
  lib,
  writeShellScriptBin,
  treefmt,
  formatters,
}:
writeShellScriptBin "serbench-fmt" ''
  export PATH=${lib.makeBinPath ([ treefmt ] ++ formatters)}:$PATH
  exec treefmt "$@"
''

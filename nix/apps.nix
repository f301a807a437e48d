# `nix run .#bench` (every arm) and `nix run .#bench-<format>` for every format in Cargo.toml's
# default features. Extra arguments pass through: `nix run .#bench -- --profile full`.
{
  lib,
  writeShellScript,
  serbench,
  formats,
}:
let
  app = name: description: arguments: {
    type = "app";
    # exec, so serbench's exit status (2 for a bad name) is the app's.
    program = "${writeShellScript "serbench-${name}" ''
      exec ${lib.getExe serbench} ${arguments} "$@"
    ''}";
    meta.description = description;
  };
  formatApp = format: {
    name = "bench-${format}";
    value = app "bench-${format}" "serbench run --format ${format}" "run --format ${format}";
  };
in
{
  bench = app "bench" "serbench run: every arm" "run";
}
// builtins.listToAttrs (map formatApp formats)

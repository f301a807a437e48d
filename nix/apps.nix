# `nix run .#bench` (every arm), `nix run .#bench-native` (every arm, compiled for this machine's
# CPU) and `nix run .#bench-<format>` for every format in Cargo.toml's default features. Extra
# arguments pass through: `nix run .#bench -- --profile full`.
{
  lib,
  writeShellScript,
  serbench,
  serbench-native,
  formats,
}:
let
  app = package: name: description: arguments: {
    type = "app";
    # exec, so serbench's exit status (2 for a bad name) is the app's.
    program = "${writeShellScript "serbench-${name}" ''
      exec ${lib.getExe package} ${arguments} "$@"
    ''}";
    meta.description = description;
  };
  portable = app serbench;
  formatApp = format: {
    name = "bench-${format}";
    value = portable "bench-${format}" "serbench run --format ${format}" "run --format ${format}";
  };
in
{
  bench = portable "bench" "serbench run: every arm" "run";
  # Its rows say `native` and go to results/local/<system>-native/ by default, beside the
  # portable run's folder, for `serbench compare`.
  bench-native = app serbench-native "bench-native" "serbench run, native build: every arm" "run";
}
// builtins.listToAttrs (map formatApp formats)

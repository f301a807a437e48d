# `nix run .#bench` (every arm), `nix run .#bench-native` (every arm, compiled for this machine's
# CPU) and `nix run .#bench-<format>` for every format in Cargo.toml's default features. Extra
# arguments pass through: `nix run .#bench -- --profile full`. `nix run .#matrix -- SYSTEM...`
# builds `results` for each system through the user's Nix builders and writes one multi-host
# report (matrix.sh).
{
  lib,
  runtimeShell,
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
  matrix = {
    type = "app";
    program = "${writeShellScript "serbench-matrix" ''
      export SERBENCH=${lib.getExe serbench}
      exec ${runtimeShell} ${./matrix.sh} "$@"
    ''}";
    meta.description = "nix build packages.SYSTEM.results on your builders, one multi-host report";
  };
}
// builtins.listToAttrs (map formatApp formats)

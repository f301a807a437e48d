# `import nixpkgs { system, overlays }` of the stub (see flake.nix here for what it proves).
# host.json (the host's cargo home, rustup home and a cargo target dir) is written by
# nix/tests/offline.sh into its temporary copy of this folder.
{
  system,
  overlays ? [ ],
  ...
}:
let
  lib = import ./lib.nix;
  host =
    if builtins.pathExists ./host.json then
      builtins.fromJSON (builtins.readFile ./host.json)
    else
      throw "stub nixpkgs: no host.json; run nix/tests/offline.sh";
  base = final: import ./pkgs.nix { inherit final lib system host; };
  extend =
    previous: overlay: final:
    let
      prev = previous final;
    in
    prev // overlay final prev;
  fix =
    f:
    let
      fixed = f fixed;
    in
    fixed;
in
fix (builtins.foldl' extend base overlays)

# A stub of nixpkgs for nix/tests/offline.sh, passed with `--override-input nixpkgs`.
#
# It proves the flake's wiring, not nixpkgs: which attributes the flake uses, that every output
# evaluates on every system, that the apps, the results matrix and the dev shell run. Every
# builder is the host's /bin/bash, the tools are placeholders, and the Rust build wraps the
# host's rustup toolchain and cargo registry cache (impure, offline). Real nixpkgs is checked
# on a networked machine: `nix flake check`, `nix build .#results` (docs/nix.md).
{
  description = "offline test stub of nixpkgs (wiring only)";
  outputs =
    _:
    let
      lib = import ./lib.nix;
      # The flake's systems (flake.nix).
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
      ];
    in
    {
      inherit lib;
      # `nix develop` takes its interactive bash from here.
      legacyPackages = lib.genAttrs systems (system: import ./. { inherit system; });
    };
}

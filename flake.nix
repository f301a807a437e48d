{
  description = "serbench: a fair, reproducible benchmark of Rust serialization formats";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    rust-overlay = {
      url = "github:oxalica/rust-overlay";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      rust-overlay,
    }:
    let
      # x86_64-darwin is left out: nixpkgs announced in its 25.11 release notes that 26.11 drops
      # it, and Nix 2.36 ships no installer for it (nixpkgs' lib still lists it; docs/nix.md).
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
      ];
      cargoToml = builtins.fromTOML (builtins.readFile ./Cargo.toml);
      bySystem = nixpkgs.lib.genAttrs systems (
        system:
        import ./nix {
          inherit
            nixpkgs
            rust-overlay
            system
            cargoToml
            ;
          # One commit id for one commit, the one a cargo build stamps (nix/commit.nix).
          commit = import ./nix/commit.nix self;
        }
      );
      output = name: builtins.mapAttrs (_system: parts: parts.${name}) bySystem;
    in
    {
      packages = output "packages";
      apps = output "apps";
      devShells = output "devShells";
      formatter = output "formatter";
      checks = output "checks";
    };
}

# A stub of oxalica/rust-overlay for nix/tests/offline.sh, passed with
# `--override-input rust-overlay`. Like the stub nixpkgs next to it, it proves the flake's
# wiring, not the real overlay: `rust-bin.fromRustupToolchainFile` reads the same
# rust-toolchain.toml and returns wrappers around the host's rustup toolchain of that channel.
{
  description = "offline test stub of rust-overlay (wiring only)";
  # Declared like the real overlay's, so the flake's `follows` has something to redirect.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
  outputs = _: {
    overlays.default = final: _prev: {
      rust-bin.fromRustupToolchainFile =
        file:
        let
          toolchain = (builtins.fromTOML (builtins.readFile file)).toolchain;
          host = final.stubHost;
        in
        final.runCommand "rust-stub-${toolchain.channel}" { } ''
          mkdir -p "$out/bin"
          for tool in cargo rustc rustdoc rustfmt cargo-fmt cargo-clippy clippy-driver; do
            printf '#!/bin/bash\nexport RUSTUP_HOME=%s RUSTUP_TOOLCHAIN=%s\nexec %s/bin/%s "$@"\n' \
              ${host.rustupHome} ${toolchain.channel} ${host.cargoHome} "$tool" > "$out/bin/$tool"
            chmod +x "$out/bin/$tool"
          done
        '';
    };
  };
}

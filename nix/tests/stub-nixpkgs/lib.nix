# The stub's `lib`: the real nixpkgs lib when nix/tests/offline.sh copied ../shared/nixpkgs-lib
# into this (temporary) folder, so callPackage, makeOverridable, genAttrs and getExe are
# nixpkgs' own; otherwise (a user's clone, no ../shared) the few functions of fallback-lib.nix.
if builtins.pathExists ./nixpkgs-lib/default.nix then
  import ./nixpkgs-lib
else
  import ./fallback-lib.nix

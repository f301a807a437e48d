# Stub of nixpkgs pkgs/build-support/wrapper-common/utils.bash: the real rust-overlay names this script in its
# rustc build, which only real nixpkgs runs (nix/tests/offline.sh only evaluates it).
exit 1

# The commit id serbench stamps on its results, as build.rs computes it for a cargo build: the
# first 12 hex digits of the commit, `-dirty` when tracked files have uncommitted changes. Nix
# >= 2.16 gives a dirty tree's commit as `dirtyRev`; older Nix gives no commit at all for a dirty
# tree, hence `unknown`.
self:
if self ? rev then
  builtins.substring 0 12 self.rev
else if self ? dirtyRev then
  "${builtins.substring 0 12 self.dirtyRev}-dirty"
else
  "unknown"

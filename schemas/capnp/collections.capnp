# `map-*` and `vec-*`: the same flat item record keyed by a string and in a plain list.

@0x8cf0e8dd1310d69d;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

struct Item {
  id @0 :Int64;
  name @1 :Text;
  category @2 :Text;
  price @3 :Float64;
  stock @4 :Int64;
  active @5 :Bool;
}

struct Items {
  items @0 :List(Item);
}

# One entry of the keyed map: Cap'n Proto has no map type, so `Keyed` is a list of entries
# sorted by key (the model's BTreeMap order), which a reader can binary-search.
struct ItemEntry {
  key @0 :Text;
  value @1 :Item;
}

struct Keyed {
  entries @0 :List(ItemEntry);
}

# `order`: one flat order record of 15 scalar fields.

@0xf8c9f197977bd656;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

struct Order {
  orderId @0 :Int64;
  customerId @1 :Int64;
  createdAtMs @2 :Int64;
  quantity @3 :Int64;
  unitPrice @4 :Float64;
  discount @5 :Float64;
  taxRate @6 :Float64;
  total @7 :Float64;
  currency @8 :Text;
  sku @9 :Text;
  customerEmail @10 :Text;
  shippingCountry @11 :Text;
  status @12 :Text;
  isGift @13 :Bool;
  isPriority @14 :Bool;
}

# `checkout-request` and `checkout-response`: one CheckoutService.PlaceOrder call.

@0xebc0b7cbb6f16545;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

using Common = import "common.capnp";

# A Cap'n Proto enum's first enumerant is its default (the value of an unset field); the
# model has no "unset" state, so no extra zero value is added as proto3 needs.
enum OrderStatus {
  pending @0;
  confirmed @1;
  shipped @2;
  cancelled @3;
}

struct RequestMeta {
  requestId @0 :Text;
  traceId @1 :Text;
  client @2 :Text;
  timestampMs @3 :Int64;
}

struct LineItem {
  productId @0 :Text;
  name @1 :Text;
  quantity @2 :Int64;
  unitPriceCents @3 :Int64;
}

struct Address {
  street @0 :Text;
  city @1 :Text;
  region @2 :Text;
  postalCode @3 :Text;
  country @4 :Text;
}

struct PaymentMethod {
  kind @0 :Text;
  token @1 :Text;
  cardLast4 @2 :Text;
  expiryMonth @3 :Int64;
  expiryYear @4 :Int64;
}

struct CheckoutRequest {
  meta @0 :RequestMeta;
  customerId @1 :Text;
  sessionId @2 :Text;
  currency @3 :Text;
  items @4 :List(LineItem);
  shippingAddress @5 :Address;
  payment @6 :PaymentMethod;
  couponCodes @7 :List(Text);
  # Sorted by key.
  attributes @8 :List(Common.Attribute);
}

struct ResponseMeta {
  requestId @0 :Text;
  traceId @1 :Text;
  server @2 :Text;
  timestampMs @3 :Int64;
}

struct Shipment {
  shipmentId @0 :Text;
  carrier @1 :Text;
  trackingNumber @2 :Text;
  estimatedDeliveryMs @3 :Int64;
  productIds @4 :List(Text);
}

struct CheckoutResponse {
  meta @0 :ResponseMeta;
  orderId @1 :Text;
  status @2 :OrderStatus;
  subtotalCents @3 :Int64;
  discountCents @4 :Int64;
  taxCents @5 :Int64;
  shippingCents @6 :Int64;
  totalCents @7 :Int64;
  shipments @8 :List(Shipment);
  # Sorted by key.
  attributes @9 :List(Common.Attribute);
}

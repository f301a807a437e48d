//! `checkout-request` and `checkout-response`: one CheckoutService.PlaceOrder call of an
//! online shop, the typical RPC message pair (nested structs, lists, a map, an enum).

use super::{Payload, PayloadSpec, Shape, SplitMix64, attributes};
use std::collections::BTreeMap;
use std::sync::OnceLock;

owned_model! {
    pub struct CheckoutRequest {
        #[cfg_attr(feature = "cbor", n(0))]
        pub meta: RequestMeta,
        #[cfg_attr(feature = "cbor", n(1))]
        pub customer_id: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub session_id: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub currency: String,
        #[cfg_attr(feature = "cbor", n(4))]
        pub items: Vec<LineItem>,
        #[cfg_attr(feature = "cbor", n(5))]
        pub shipping_address: Address,
        #[cfg_attr(feature = "cbor", n(6))]
        pub payment: PaymentMethod,
        #[cfg_attr(feature = "cbor", n(7))]
        pub coupon_codes: Vec<String>,
        #[cfg_attr(feature = "cbor", n(8))]
        pub attributes: BTreeMap<String, String>,
    }
}

owned_model! {
    pub struct RequestMeta {
        #[cfg_attr(feature = "cbor", n(0))]
        pub request_id: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub trace_id: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub client: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub timestamp_ms: i64,
    }
}

owned_model! {
    pub struct LineItem {
        #[cfg_attr(feature = "cbor", n(0))]
        pub product_id: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub name: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub quantity: i64,
        #[cfg_attr(feature = "cbor", n(3))]
        pub unit_price_cents: i64,
    }
}

owned_model! {
    pub struct Address {
        #[cfg_attr(feature = "cbor", n(0))]
        pub street: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub city: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub region: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub postal_code: String,
        #[cfg_attr(feature = "cbor", n(4))]
        pub country: String,
    }
}

owned_model! {
    pub struct PaymentMethod {
        #[cfg_attr(feature = "cbor", n(0))]
        pub kind: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub token: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub card_last4: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub expiry_month: i64,
        #[cfg_attr(feature = "cbor", n(4))]
        pub expiry_year: i64,
    }
}

owned_model! {
    pub struct CheckoutResponse {
        #[cfg_attr(feature = "cbor", n(0))]
        pub meta: ResponseMeta,
        #[cfg_attr(feature = "cbor", n(1))]
        pub order_id: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub status: OrderStatus,
        #[cfg_attr(feature = "cbor", n(3))]
        pub subtotal_cents: i64,
        #[cfg_attr(feature = "cbor", n(4))]
        pub discount_cents: i64,
        #[cfg_attr(feature = "cbor", n(5))]
        pub tax_cents: i64,
        #[cfg_attr(feature = "cbor", n(6))]
        pub shipping_cents: i64,
        #[cfg_attr(feature = "cbor", n(7))]
        pub total_cents: i64,
        #[cfg_attr(feature = "cbor", n(8))]
        pub shipments: Vec<Shipment>,
        #[cfg_attr(feature = "cbor", n(9))]
        pub attributes: BTreeMap<String, String>,
    }
}

owned_model! {
    pub struct ResponseMeta {
        #[cfg_attr(feature = "cbor", n(0))]
        pub request_id: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub trace_id: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub server: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub timestamp_ms: i64,
    }
}

/// The order's state; every schema format has a native enum for it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyEnum))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "cbor", cbor(index_only))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
#[cfg_attr(feature = "wincode", derive(wincode::SchemaWrite, wincode::SchemaRead))]
#[cfg_attr(
    feature = "nanoserde",
    derive(nanoserde::SerBin, nanoserde::DeBin, nanoserde::SerJson, nanoserde::DeJson)
)]
#[cfg_attr(feature = "savefile", derive(savefile::prelude::Savefile))]
#[cfg_attr(feature = "bilrost", derive(bilrost::Enumeration))]
#[cfg_attr(feature = "msgpacker", derive(msgpacker::MsgPacker))]
pub enum OrderStatus {
    #[cfg_attr(feature = "cbor", n(0))]
    #[cfg_attr(feature = "bilrost", bilrost(0))]
    Pending,
    #[cfg_attr(feature = "cbor", n(1))]
    #[cfg_attr(feature = "bilrost", bilrost(1))]
    Confirmed,
    #[cfg_attr(feature = "cbor", n(2))]
    #[cfg_attr(feature = "bilrost", bilrost(2))]
    Shipped,
    #[cfg_attr(feature = "cbor", n(3))]
    #[cfg_attr(feature = "bilrost", bilrost(3))]
    Cancelled,
}

owned_model! {
    pub struct Shipment {
        #[cfg_attr(feature = "cbor", n(0))]
        pub shipment_id: String,
        #[cfg_attr(feature = "cbor", n(1))]
        pub carrier: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub tracking_number: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub estimated_delivery_ms: i64,
        #[cfg_attr(feature = "cbor", n(4))]
        pub product_ids: Vec<String>,
    }
}

pub static CHECKOUT_REQUEST: Payload<CheckoutRequest> = Payload {
    spec: &PayloadSpec {
        name: "checkout-request",
        description: "PlaceOrder request: metadata, 3 line items, address, payment, 4 attributes",
        records: 1,
        shape: Shape::Document,
    },
    value: || {
        static VALUE: OnceLock<CheckoutRequest> = OnceLock::new();
        VALUE.get_or_init(|| request(&mut SplitMix64::new(0x5EED_0004)))
    },
};

pub static CHECKOUT_RESPONSE: Payload<CheckoutResponse> = Payload {
    spec: &PayloadSpec {
        name: "checkout-response",
        description: "PlaceOrder response: status, 5 amounts, 2 shipments, 4 attributes",
        records: 1,
        shape: Shape::Document,
    },
    value: || {
        static VALUE: OnceLock<CheckoutResponse> = OnceLock::new();
        VALUE.get_or_init(|| response(&mut SplitMix64::new(0x5EED_0005)))
    },
};

fn request(rng: &mut SplitMix64) -> CheckoutRequest {
    CheckoutRequest {
        meta: RequestMeta {
            request_id: rng.word_id("req"),
            trace_id: format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64()),
            client: "web-frontend/4.2.0".to_string(),
            timestamp_ms: 1_767_225_600_000 + rng.range(0, 86_400_000),
        },
        customer_id: rng.word_id("cus"),
        session_id: rng.word_id("sess"),
        currency: "EUR".to_string(),
        items: (0..3)
            .map(|_| LineItem {
                product_id: rng.word_id("prod"),
                name: rng.sentence(3),
                quantity: rng.range(1, 4),
                unit_price_cents: rng.range(199, 25_000),
            })
            .collect(),
        shipping_address: Address {
            street: format!("{} Straße {}", rng.word(), rng.range(1, 200)),
            city: rng.pick(&["Zürich", "São Paulo", "Berlin", "Lisboa"]).to_string(),
            region: rng.word().to_string(),
            postal_code: format!("{:05}", rng.range(1000, 99_999)),
            country: rng.pick(&["CH", "BR", "DE", "PT"]).to_string(),
        },
        payment: PaymentMethod {
            kind: "card".to_string(),
            token: rng.word_id("tok"),
            card_last4: format!("{:04}", rng.range(0, 10_000)),
            expiry_month: rng.range(1, 13),
            expiry_year: rng.range(2027, 2032),
        },
        coupon_codes: (0..2).map(|_| rng.word().to_uppercase()).collect(),
        attributes: attributes(rng),
    }
}

fn response(rng: &mut SplitMix64) -> CheckoutResponse {
    let subtotal_cents = rng.range(5_000, 80_000);
    let discount_cents = rng.range(0, 1_000);
    let tax_cents = subtotal_cents / 5;
    let shipping_cents = rng.range(0, 1_500);
    CheckoutResponse {
        meta: ResponseMeta {
            request_id: rng.word_id("req"),
            trace_id: format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64()),
            server: "checkout-7d9f8".to_string(),
            timestamp_ms: 1_767_225_600_000 + rng.range(0, 86_400_000),
        },
        order_id: rng.word_id("ord"),
        status: OrderStatus::Confirmed,
        subtotal_cents,
        discount_cents,
        tax_cents,
        shipping_cents,
        total_cents: subtotal_cents - discount_cents + tax_cents + shipping_cents,
        shipments: (0..2)
            .map(|_| Shipment {
                shipment_id: rng.word_id("shp"),
                carrier: rng.pick(&["DHL", "UPS", "CTT"]).to_string(),
                tracking_number: format!("{:012}", rng.range(0, 999_999_999_999)),
                estimated_delivery_ms: 1_767_225_600_000 + rng.range(86_400_000, 604_800_000),
                product_ids: (0..rng.range(1, 3)).map(|_| rng.word_id("prod")).collect(),
            })
            .collect(),
        attributes: attributes(rng),
    }
}

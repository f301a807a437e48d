//! `order`: one flat order record of exactly 15 scalar fields (4 integers, 4 floats,
//! 5 strings, 2 booleans): the row every format, CSV included, can carry.

use super::{Payload, PayloadSpec, Shape, SplitMix64};
use std::sync::OnceLock;

#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "bincode", derive(bincode::Encode, bincode::Decode))]
#[cfg_attr(feature = "bitcode", derive(bitcode::Encode, bitcode::Decode))]
#[cfg_attr(feature = "dbus", derive(zbus::Type))]
#[cfg_attr(feature = "fory", derive(fory::ForyStruct))]
#[cfg_attr(feature = "rkyv", derive(rkyv::Archive, rkyv::Serialize, rkyv::Deserialize))]
#[cfg_attr(feature = "cbor", derive(minicbor::Encode, minicbor::Decode))]
#[cfg_attr(feature = "borsh", derive(borsh::BorshSerialize, borsh::BorshDeserialize))]
pub struct Order {
    #[cfg_attr(feature = "cbor", n(0))]
    pub order_id: i64,
    #[cfg_attr(feature = "cbor", n(1))]
    pub customer_id: i64,
    #[cfg_attr(feature = "cbor", n(2))]
    pub created_at_ms: i64,
    #[cfg_attr(feature = "cbor", n(3))]
    pub quantity: i64,
    #[cfg_attr(feature = "cbor", n(4))]
    pub unit_price: f64,
    #[cfg_attr(feature = "cbor", n(5))]
    pub discount: f64,
    #[cfg_attr(feature = "cbor", n(6))]
    pub tax_rate: f64,
    #[cfg_attr(feature = "cbor", n(7))]
    pub total: f64,
    #[cfg_attr(feature = "cbor", n(8))]
    pub currency: String,
    #[cfg_attr(feature = "cbor", n(9))]
    pub sku: String,
    #[cfg_attr(feature = "cbor", n(10))]
    pub customer_email: String,
    #[cfg_attr(feature = "cbor", n(11))]
    pub shipping_country: String,
    #[cfg_attr(feature = "cbor", n(12))]
    pub status: String,
    #[cfg_attr(feature = "cbor", n(13))]
    pub is_gift: bool,
    #[cfg_attr(feature = "cbor", n(14))]
    pub is_priority: bool,
}

pub static ORDER: Payload<Order> = Payload {
    spec: &PayloadSpec {
        name: "order",
        description: "one flat order: 15 scalar fields",
        records: 1,
        shape: Shape::FlatRecord,
    },
    value: || {
        static VALUE: OnceLock<Order> = OnceLock::new();
        VALUE.get_or_init(generate)
    },
};

fn generate() -> Order {
    let mut rng = SplitMix64::new(0x5EED_0002);
    Order {
        order_id: rng.range(1_000_000_000, 9_000_000_000),
        customer_id: rng.range(1, 50_000_000),
        created_at_ms: 1_767_225_600_000 + rng.range(0, 31_536_000_000),
        quantity: rng.range(1, 12),
        unit_price: rng.decimal(1, 500),
        discount: rng.decimal(0, 20),
        tax_rate: rng.range(0, 25) as f64 / 100.0,
        total: rng.decimal(10, 5000),
        currency: "EUR".to_string(),
        sku: format!("SKU-{}-{}", rng.word().to_uppercase(), rng.range(1000, 9999)),
        customer_email: format!("{}.{}@example.com", rng.word(), rng.word()),
        shipping_country: rng.pick(&["DE", "FR", "NL", "PT", "US"]).to_string(),
        status: "confirmed".to_string(),
        is_gift: rng.chance(20),
        is_priority: rng.chance(30),
    }
}

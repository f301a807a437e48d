//! `order`: one flat order record of exactly 15 scalar fields (4 integers, 4 floats,
//! 5 strings, 2 booleans): the row every format, CSV included, can carry.

use super::{Borrowed, Payload, PayloadSpec, Shape, SplitMix64};
use std::sync::OnceLock;

owned_model! {
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
}

borrowed_model! {
    /// [`Order`] with its strings borrowed from the decoded input (the borrowed mode).
    pub struct OrderRef<'a> {
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
        #[cfg_attr(feature = "cbor", b(8))]
        pub currency: &'a str,
        #[cfg_attr(feature = "cbor", b(9))]
        pub sku: &'a str,
        #[cfg_attr(feature = "cbor", b(10))]
        pub customer_email: &'a str,
        #[cfg_attr(feature = "cbor", b(11))]
        pub shipping_country: &'a str,
        #[cfg_attr(feature = "cbor", b(12))]
        pub status: &'a str,
        #[cfg_attr(feature = "cbor", n(13))]
        pub is_gift: bool,
        #[cfg_attr(feature = "cbor", n(14))]
        pub is_priority: bool,
    }
}

impl Borrowed for Order {
    type Ref<'a> = OrderRef<'a>;

    fn to_owned_model(order: &OrderRef<'_>) -> Order {
        Order {
            order_id: order.order_id,
            customer_id: order.customer_id,
            created_at_ms: order.created_at_ms,
            quantity: order.quantity,
            unit_price: order.unit_price,
            discount: order.discount,
            tax_rate: order.tax_rate,
            total: order.total,
            currency: order.currency.to_string(),
            sku: order.sku.to_string(),
            customer_email: order.customer_email.to_string(),
            shipping_country: order.shipping_country.to_string(),
            status: order.status.to_string(),
            is_gift: order.is_gift,
            is_priority: order.is_priority,
        }
    }

    fn strings<'s>(order: &'s OrderRef<'_>) -> Vec<&'s str> {
        vec![
            order.currency,
            order.sku,
            order.customer_email,
            order.shipping_country,
            order.status,
        ]
    }
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

//! `map-small`, `map-big`, `vec-small`, `vec-big`: the same flat `Item` record in a keyed map
//! (string key to record) and in a plain array, each at 32 and at 10,000 records.
//!
//! Maps are `BTreeMap`s, so every format writes the keys in sorted order and the encoded bytes
//! are deterministic (a `HashMap` would change order from run to run).

use super::{Batch, Borrowed, Payload, PayloadSpec, Shape, SplitMix64};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub const SMALL: usize = 32;
pub const BIG: usize = 10_000;

owned_model! {
    pub struct Item {
        #[cfg_attr(feature = "cbor", n(0))]
        pub id: i64,
        #[cfg_attr(feature = "cbor", n(1))]
        pub name: String,
        #[cfg_attr(feature = "cbor", n(2))]
        pub category: String,
        #[cfg_attr(feature = "cbor", n(3))]
        pub price: f64,
        #[cfg_attr(feature = "cbor", n(4))]
        pub stock: i64,
        #[cfg_attr(feature = "cbor", n(5))]
        pub active: bool,
    }
}

owned_model! {
    pub struct Items {
        #[cfg_attr(feature = "cbor", n(0))]
        pub items: Vec<Item>,
    }
}

impl Batch for Items {
    type Record = Item;

    fn records(&self) -> &[Item] {
        &self.items
    }

    fn from_records(items: Vec<Item>) -> Self {
        Items { items }
    }
}

borrowed_model! {
    /// [`Item`] with its strings borrowed from the decoded input (the borrowed mode).
    pub struct ItemRef<'a> {
        #[cfg_attr(feature = "cbor", n(0))]
        pub id: i64,
        #[cfg_attr(feature = "cbor", b(1))]
        pub name: &'a str,
        #[cfg_attr(feature = "cbor", b(2))]
        pub category: &'a str,
        #[cfg_attr(feature = "cbor", n(3))]
        pub price: f64,
        #[cfg_attr(feature = "cbor", n(4))]
        pub stock: i64,
        #[cfg_attr(feature = "cbor", n(5))]
        pub active: bool,
    }
}

borrowed_model! {
    /// [`Items`] borrowed from the decoded input.
    pub struct ItemsRef<'a> {
        #[serde(borrow)]
        #[cfg_attr(feature = "cbor", b(0))]
        pub items: Vec<ItemRef<'a>>,
    }
}

impl Borrowed for Items {
    type Ref<'a> = ItemsRef<'a>;

    fn to_owned_model(items: &ItemsRef<'_>) -> Items {
        let items = items
            .items
            .iter()
            .map(|item| Item {
                id: item.id,
                name: item.name.to_string(),
                category: item.category.to_string(),
                price: item.price,
                stock: item.stock,
                active: item.active,
            })
            .collect();
        Items { items }
    }

    fn strings<'s>(items: &'s ItemsRef<'_>) -> Vec<&'s str> {
        items
            .items
            .iter()
            .flat_map(|item| [item.name, item.category])
            .collect()
    }
}

owned_model! {
    pub struct Keyed {
        #[cfg_attr(feature = "cbor", n(0))]
        pub entries: BTreeMap<String, Item>,
    }
}

pub static MAP_SMALL: Payload<Keyed> = Payload {
    spec: &PayloadSpec {
        name: "map-small",
        description: "32 string keys to flat item records",
        records: SMALL,
        shape: Shape::Map,
    },
    value: || {
        static VALUE: OnceLock<Keyed> = OnceLock::new();
        VALUE.get_or_init(|| keyed(SMALL, 0x5EED_0006))
    },
};

pub static MAP_BIG: Payload<Keyed> = Payload {
    spec: &PayloadSpec {
        name: "map-big",
        description: "10,000 string keys to flat item records",
        records: BIG,
        shape: Shape::Map,
    },
    value: || {
        static VALUE: OnceLock<Keyed> = OnceLock::new();
        VALUE.get_or_init(|| keyed(BIG, 0x5EED_0007))
    },
};

pub static VEC_SMALL: Payload<Items> = Payload {
    spec: &PayloadSpec {
        name: "vec-small",
        description: "array of 32 flat item records",
        records: SMALL,
        shape: Shape::Batch { flat: true },
    },
    value: || {
        static VALUE: OnceLock<Items> = OnceLock::new();
        VALUE.get_or_init(|| items(SMALL, 0x5EED_0008))
    },
};

pub static VEC_BIG: Payload<Items> = Payload {
    spec: &PayloadSpec {
        name: "vec-big",
        description: "array of 10,000 flat item records",
        records: BIG,
        shape: Shape::Batch { flat: true },
    },
    value: || {
        static VALUE: OnceLock<Items> = OnceLock::new();
        VALUE.get_or_init(|| items(BIG, 0x5EED_0009))
    },
};

fn item(rng: &mut SplitMix64, id: i64) -> Item {
    Item {
        id,
        name: rng.sentence(2),
        category: rng
            .pick(&["books", "garden", "toys", "kitchen", "tools"])
            .to_string(),
        price: rng.decimal(1, 2_000),
        stock: rng.range(0, 10_000),
        active: rng.chance(85),
    }
}

fn items(count: usize, seed: u64) -> Items {
    let mut rng = SplitMix64::new(seed);
    let items = (0..count as i64).map(|id| item(&mut rng, id)).collect();
    Items { items }
}

fn keyed(count: usize, seed: u64) -> Keyed {
    let mut rng = SplitMix64::new(seed);
    let entries = (0..count as i64)
        .map(|id| (format!("item-{id:06}"), item(&mut rng, id)))
        .collect();
    Keyed { entries }
}

//! A tiny seeded generator (SplitMix64). It is written out here rather than taken from a crate
//! so that the payload bytes can never change under a dependency update.

pub struct SplitMix64(u64);

const WORDS: [&str; 24] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
    "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor",
    "whiskey", "zulu",
];

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `low..high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low) as u64;
        low + (self.next_u64() % span) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// A decimal with two fraction digits in `low..high`: exactly what a text format prints,
    /// so every format (JSON and CSV included) round-trips it bit for bit.
    pub fn decimal(&mut self, low: i64, high: i64) -> f64 {
        self.range(low * 100, high * 100) as f64 / 100.0
    }

    pub fn word(&mut self) -> &'static str {
        WORDS[self.next_u64() as usize % WORDS.len()]
    }

    pub fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.next_u64() as usize % choices.len()]
    }

    /// An identifier such as `ord-3f9a12c4d0e1b2a7`.
    pub fn word_id(&mut self, prefix: &str) -> String {
        format!("{prefix}-{:016x}", self.next_u64())
    }

    /// A few words joined by spaces.
    pub fn sentence(&mut self, words: usize) -> String {
        (0..words).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_is_fixed_forever() {
        // Reference values of SplitMix64 for seed 0 (Vigna's published sequence).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn decimals_have_two_fraction_digits() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..1000 {
            let value = rng.decimal(-50, 50);
            assert_eq!(format!("{value}").parse::<f64>().unwrap(), value);
            assert_eq!((value * 100.0).round() / 100.0, value);
        }
    }
}

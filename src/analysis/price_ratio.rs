//! Performance per unit of price, from a run's `price=` note
//! (`sledge run --note price=2400EUR`), as the reference articles' tables
//! showed what a server costs for what it does.
//!
//! A comparison gets per-price figures only when both runs carry a price
//! in the same currency: a ratio of prices in EUR and USD would need an
//! exchange rate sledge does not have.

use serde::Serialize;

use crate::results::RunRecord;
use crate::stats::Direction;
pub use crate::suite::notes::{PRICE_KEY, Price, parse_price, price_note};

/// The run's price: its first `price=` note that parses.
pub fn run_price(run: &RunRecord) -> Option<Price> {
    run.notes
        .iter()
        .filter_map(|n| price_note(n))
        .find_map(parse_price)
}

/// The two runs' prices, when both have one in the same currency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceComparison {
    /// The currency of both prices.
    pub currency: String,
    /// The baseline's price.
    pub baseline: f64,
    /// The candidate's price.
    pub candidate: f64,
}

/// The prices of `baseline` and `candidate`, when they can be compared.
pub fn compare_prices(baseline: &RunRecord, candidate: &RunRecord) -> Option<PriceComparison> {
    let (a, b) = (run_price(baseline)?, run_price(candidate)?);
    (a.currency.eq_ignore_ascii_case(&b.currency)).then_some(PriceComparison {
        currency: a.currency,
        baseline: a.amount,
        candidate: b.amount,
    })
}

/// A metric's ratio per unit of price, oriented as the ratio itself: for a
/// higher-is-better metric, value per unit of price (ratio × baseline
/// price / candidate price); for a lower-is-better one, value times price
/// (ratio × candidate price / baseline price).
pub fn ratio_per_price(ratio: f64, direction: Direction, prices: &PriceComparison) -> f64 {
    let cheaper = prices.baseline / prices.candidate;
    match direction {
        Direction::Higher => ratio * cheaper,
        Direction::Lower => ratio / cheaper,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(text: &str) -> Option<(f64, String)> {
        parse_price(text).map(|p| (p.amount, p.currency))
    }

    #[test]
    fn prices_in_the_usual_spellings() {
        let eur = |a: f64| Some((a, "EUR".to_string()));
        assert_eq!(price("2400EUR"), eur(2400.0));
        assert_eq!(price("2400 EUR"), eur(2400.0));
        assert_eq!(price("EUR 2,400"), eur(2400.0));
        assert_eq!(price("EUR 1,999.90"), eur(1999.9));
        assert_eq!(price("1999,90 EUR"), eur(1999.9));
        assert_eq!(price("1 299 EUR"), eur(1299.0));
        assert_eq!(price("€2400"), Some((2400.0, "€".to_string())));
        assert_eq!(price("2400"), Some((2400.0, String::new())));
        assert_eq!(price("abc"), None);
        assert_eq!(price("0 EUR"), None);
        assert_eq!(price("EUR 10 USD"), None);
        assert_eq!(price("1.2.3 EUR"), None);
        assert_eq!(price(""), None);
    }

    #[test]
    fn the_price_note_is_found_in_any_case() {
        assert_eq!(price_note("price=2400EUR"), Some("2400EUR"));
        assert_eq!(price_note("Price= 10 USD"), Some("10 USD"));
        assert_eq!(price_note("rack 3"), None);
        assert_eq!(price_note("pr"), None);
    }

    #[test]
    fn per_price_ratios_follow_the_direction() {
        // The candidate is 20% faster and costs 1.5 times as much.
        let prices = PriceComparison {
            currency: "EUR".into(),
            baseline: 2000.0,
            candidate: 3000.0,
        };
        let higher = ratio_per_price(1.2, Direction::Higher, &prices);
        assert!((higher - 0.8).abs() < 1e-12, "{higher}");
        // A time 20% shorter at 1.5x the price: 1.2x as much time × money.
        let lower = ratio_per_price(0.8, Direction::Lower, &prices);
        assert!((lower - 1.2).abs() < 1e-12, "{lower}");
    }
}

//! What a model costs (issue 18): prices per token in pico-dollars (10⁻¹² USD), read exactly
//! from the decimal text providers publish (OpenRouter: dollars per token) and people type
//! (dollars per million tokens), and an answer's cost from its tokens. Integers throughout, so
//! a conversation's total is exactly the sum of its answers' costs. Pure.

use serde::{Deserialize, Serialize};

/// Pico-dollars in one dollar.
const PICO: u64 = 1_000_000_000_000;

/// A model's price, in pico-dollars per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Price {
    #[ts(type = "number")]
    pub input: u64,
    #[ts(type = "number")]
    pub output: u64,
    /// Input read from the provider's cache, where it prices that apart.
    #[ts(type = "number | null")]
    pub cached_input: Option<u64>,
}

impl Price {
    /// What `input` and `output` tokens cost, in pico-dollars (saturating: never wraps).
    pub fn cost(&self, input: u64, output: u64) -> u64 {
        self.cost_with_cache(input, 0, output)
    }

    /// What `input` tokens (of which `cached` were read from the provider's cache) and
    /// `output` tokens cost: cached ones at the cached-input price where there is one, else at
    /// the input price (never guessed lower).
    pub fn cost_with_cache(&self, input: u64, cached: u64, output: u64) -> u64 {
        let cached = cached.min(input);
        (input - cached)
            .saturating_mul(self.input)
            .saturating_add(cached.saturating_mul(self.cached_input.unwrap_or(self.input)))
            .saturating_add(output.saturating_mul(self.output))
    }
}

/// Dollars per token as text ("0.0000025") in pico-dollars per token; `None` for what is not a
/// plain non-negative decimal (OpenRouter writes "-1" for a price it cannot say).
pub fn from_usd_per_token(text: &str) -> Option<u64> {
    decimal(text, 12)
}

/// Dollars per million tokens as text ("2.50") in pico-dollars per token.
pub fn from_usd_per_million(text: &str) -> Option<u64> {
    decimal(text, 6)
}

/// Why a price as a person typed it was refused, naming the field to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TypedPriceError {
    #[error("Write dollars per million tokens, such as 2.50.")]
    NotAPrice { field: &'static str },
    #[error("Give the {field} price too.")]
    Missing { field: &'static str },
}

impl TypedPriceError {
    /// The field to fix: `input`, `output` or `cached`.
    pub fn field(&self) -> &'static str {
        match self {
            TypedPriceError::NotAPrice { field } | TypedPriceError::Missing { field } => field,
        }
    }
}

/// A price as a person types it (the window's form, the command line's flags), in dollars per
/// million tokens such as `2.50`: input and output together, cached input optional. All three
/// blank is no price (the person's is forgotten).
///
/// # Errors
/// A field that is not such an amount; input without output, or output without input.
pub fn typed(
    input: Option<&str>,
    output: Option<&str>,
    cached: Option<&str>,
) -> Result<Option<Price>, TypedPriceError> {
    fn given(text: Option<&str>) -> Option<&str> {
        text.map(str::trim).filter(|t| !t.is_empty())
    }
    let read = |field: &'static str, text: &str| {
        from_usd_per_million(text).ok_or(TypedPriceError::NotAPrice { field })
    };
    match (given(input), given(output), given(cached)) {
        (None, None, None) => Ok(None),
        (Some(input), Some(output), cached) => Ok(Some(Price {
            input: read("input", input)?,
            output: read("output", output)?,
            cached_input: cached.map(|c| read("cached", c)).transpose()?,
        })),
        (None, ..) => Err(TypedPriceError::Missing { field: "input" }),
        (_, None, _) => Err(TypedPriceError::Missing { field: "output" }),
    }
}

/// Pico-dollars per token as dollars per million tokens, for a person ("2.5").
pub fn usd_per_million(pico_per_token: u64) -> String {
    trimmed(pico_per_token / 1_000_000, pico_per_token % 1_000_000, 6)
}

/// An amount of pico-dollars for a person, as the window shows it (docs/DESIGN.md, "Money"):
/// "$0" for nothing, else at most four significant digits, rounded half up, trailing zeros
/// trimmed ("$0.0001234", "$0.0123", "$1.234", "$12.35"), a fraction of a dollar to the cent at
/// least where four digits allow ("$0.50"), whole dollars without one ("$12"), and from $1,000 on
/// whole dollars with their thousands grouped ("$1,234"). `ui/src/shared/money.ts` is the same.
pub fn usd(pico: u64) -> String {
    if pico == 0 {
        return "$0".into();
    }
    let digits = pico.ilog10() + 1;
    let unit = if digits > 4 { 10u64.pow(digits - 4) } else { 1 };
    let rounded = pico.saturating_add(unit / 2) / unit * unit;
    if rounded >= 1000 * PICO {
        let whole = pico.saturating_add(PICO / 2) / PICO;
        return format!("${}", grouped(whole));
    }
    let dollars = rounded / PICO;
    let mut fraction = format!("{:012}", rounded % PICO)
        .trim_end_matches('0')
        .to_owned();
    if fraction.len() == 1 && dollars < 100 {
        fraction.push('0');
    }
    if fraction.is_empty() {
        format!("${dollars}")
    } else {
        format!("${dollars}.{fraction}")
    }
}

/// `n` with its thousands grouped by commas ("1,234,567").
#[must_use]
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `text` as a non-negative decimal times 10^`scale`, exactly (digits past `scale` are cut).
fn decimal(text: &str, scale: u32) -> Option<u64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if (whole.is_empty() && fraction.is_empty())
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut fraction: String = fraction.chars().take(scale as usize).collect();
    while fraction.len() < scale as usize {
        fraction.push('0');
    }
    let fraction: u64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    whole.checked_mul(10u64.pow(scale))?.checked_add(fraction)
}

/// `whole.fraction` (of `scale` digits) without trailing zeros.
fn trimmed(whole: u64, fraction: u64, scale: usize) -> String {
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:0scale$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_typed_price_needs_input_and_output_together_and_blank_is_none() {
        assert_eq!(typed(None, Some(" "), Some("")), Ok(None));
        assert_eq!(
            typed(Some("2.50"), Some("10"), None),
            Ok(Some(Price {
                input: 2_500_000,
                output: 10_000_000,
                cached_input: None,
            }))
        );
        assert_eq!(
            typed(Some(" 1 "), Some("2"), Some("0.5"))
                .unwrap()
                .unwrap()
                .cached_input,
            Some(500_000)
        );
        assert_eq!(
            typed(None, Some("2"), None),
            Err(TypedPriceError::Missing { field: "input" })
        );
        assert_eq!(
            typed(Some("2"), None, Some("1")),
            Err(TypedPriceError::Missing { field: "output" })
        );
        let wrong = typed(Some("2"), Some("two"), None).unwrap_err();
        assert_eq!(wrong.field(), "output");
        assert_eq!(
            wrong.to_string(),
            "Write dollars per million tokens, such as 2.50."
        );
        assert_eq!(
            typed(Some("2"), Some("3"), Some("-1")).unwrap_err().field(),
            "cached"
        );
    }
    use super::*;

    #[test]
    fn prices_are_read_exactly_from_decimal_text() {
        assert_eq!(from_usd_per_token("0.0000025"), Some(2_500_000));
        assert_eq!(from_usd_per_token("0"), Some(0));
        assert_eq!(from_usd_per_token("-1"), None);
        assert_eq!(from_usd_per_token("1e-6"), None);
        assert_eq!(from_usd_per_token(""), None);
        assert_eq!(from_usd_per_million("2.50"), Some(2_500_000));
        assert_eq!(from_usd_per_million("0.075"), Some(75_000));
        assert_eq!(from_usd_per_million(".5"), Some(500_000));
        assert_eq!(from_usd_per_million("15"), Some(15_000_000));
        assert_eq!(usd_per_million(2_500_000), "2.5");
        assert_eq!(usd_per_million(15_000_000), "15");
        assert_eq!(usd_per_million(75_000), "0.075");
    }

    #[test]
    fn a_cost_is_tokens_times_price_and_shown_in_dollars() {
        let gpt = Price {
            input: from_usd_per_million("2.5").unwrap(),
            output: from_usd_per_million("10").unwrap(),
            cached_input: None,
        };
        // 1 200 in, 300 out: $0.003 + $0.003.
        assert_eq!(gpt.cost(1_200, 300), 6_000_000_000);
        assert_eq!(usd(gpt.cost(1_200, 300)), "$0.006");
        // The same amounts as ui/tests/money.test.ts: the window and the command line agree.
        for (pico, shown) in [
            (0, "$0"),
            (1, "$0.000000000001"),
            (999, "$0.000000000999"),
            (12_345_678, "$0.00001235"),
            (123_400_000, "$0.0001234"),
            (9_999_499_999, "$0.009999"),
            (9_999_999_999, "$0.01"),
            (10_000_000_000, "$0.01"),
            (12_300_000_000, "$0.0123"),
            (500_000_000_000, "$0.50"),
            (1_234_000_000_000, "$1.234"),
            (1_234_499_999_999, "$1.234"),
            (1_234_567_890_123, "$1.235"),
            (12_000_000_000_000, "$12"),
            (12_300_000_000_000, "$12.30"),
            (12_345_000_000_000, "$12.35"),
            (120_000_000_000_000, "$120"),
            (123_449_000_000_000, "$123.4"),
            (999_949_999_999_999, "$999.9"),
            (999_950_000_000_000, "$1,000"),
            (1_234_000_000_000_000, "$1,234"),
            (8_999_500_000_000_000, "$9,000"),
            (1_234_567_000_000_000_000, "$1,234,567"),
        ] {
            assert_eq!(usd(pico), shown, "{pico}");
        }
        assert_eq!(gpt.cost(u64::MAX, 2), u64::MAX, "saturates");
    }

    #[test]
    fn cached_input_costs_its_own_price_or_the_input_price_when_there_is_none() {
        let price = Price {
            input: 2_500_000,
            output: 10_000_000,
            cached_input: Some(1_250_000),
        };
        assert_eq!(
            price.cost_with_cache(1000, 800, 10),
            200 * 2_500_000 + 800 * 1_250_000 + 10 * 10_000_000
        );
        // More cached than sent is read as all of it cached, never as negative input.
        assert_eq!(price.cost_with_cache(10, 50, 0), 10 * 1_250_000);
        let unpriced_cache = Price {
            cached_input: None,
            ..price
        };
        assert_eq!(
            unpriced_cache.cost_with_cache(1000, 800, 0),
            unpriced_cache.cost(1000, 0)
        );
    }
}

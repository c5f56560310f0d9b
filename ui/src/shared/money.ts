//! Money as the UI shows it (issue 18): amounts in pico-dollars (10⁻¹² USD) and prices in
//! pico-dollars per token, put in words exactly as Rust's `providers::price` does (`usd`,
//! `usd_per_million`). Integers throughout: a pico amount fits a JS number exactly up to 2⁵³
//! (about $9,000), and every division here is of integers, its remainder taken off first. Prices
//! the person types are never read here: Rust parses them. Pure functions.

/** Pico-dollars in one dollar. */
const PICO = 1_000_000_000_000;

/** `a / b` rounded down, for non-negative integers, exactly. */
function quotient(a: number, b: number): number {
  return (a - (a % b)) / b;
}

/** A count Rust sent (never negative, never fractional) as a safe integer. */
function whole(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/**
 * An amount of pico-dollars for a person, as Rust's `usd`: "$0" for nothing, dollars and cents
 * (rounded half up) from a cent on ("$1.23"), and below a cent enough places for four significant
 * digits, trailing zeros trimmed ("$0.00001235").
 */
export function usd(pico: number): string {
  const amount = whole(pico);
  if (amount === 0) return "$0";
  if (amount >= PICO / 100) {
    const cents = quotient(amount + PICO / 200, PICO / 100);
    return `$${quotient(cents, 100)}.${String(cents % 100).padStart(2, "0")}`;
  }
  // Below a cent: the amount has at most 10 digits, of the 12 places a pico-dollar needs.
  const zeros = 12 - String(amount).length;
  const places = Math.min(zeros + 4, 12);
  const unit = 10 ** (12 - places);
  const rounded = quotient(amount + quotient(unit, 2), unit);
  return `$0.${String(rounded).padStart(places, "0").replace(/0+$/, "")}`;
}

/** Pico-dollars per token as dollars per million tokens, as Rust's `usd_per_million` ("2.5", "15", "0.075"). */
export function perMillion(picoPerToken: number): string {
  const price = whole(picoPerToken);
  const dollars = quotient(price, 1_000_000);
  const fraction = price % 1_000_000;
  if (fraction === 0) return String(dollars);
  return `${dollars}.${String(fraction).padStart(6, "0").replace(/0+$/, "")}`;
}

/** A count of tokens or requests with its thousands grouped ("12,345"). */
export function count(n: number): string {
  return whole(n).toLocaleString("en-US");
}

//! Money as the UI shows it (issue 18): amounts in pico-dollars (10⁻¹² USD) and prices in
//! pico-dollars per token, put in words: amounts to at most four significant digits (DESIGN.md),
//! prices exactly as Rust's `price::usd_per_million` does. Integers throughout: a pico amount
//! fits a JS number exactly up to 2⁵³ (about $9,000), and every division here is of integers, its
//! remainder taken off first. Prices the person types are never read here: Rust parses them. Pure
//! functions.

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
 * An amount of pico-dollars for a person (DESIGN.md, "Money"): "$0" for nothing, else at most four
 * significant digits, rounded half up, trailing zeros trimmed — "$0.0001234", "$0.0123", "$1.234",
 * "$12.35", "$123.4" — with a fraction of a dollar shown to the cent at least where four digits
 * allow ("$0.50", "$12.30"), whole dollars without one ("$12"), and from $1,000 on whole dollars,
 * their thousands grouped ("$1,234").
 */
export function usd(pico: number): string {
  const amount = whole(pico);
  if (amount === 0) return "$0";
  // Four significant digits: an amount of 5 digits or more is rounded at its fourth.
  const digits = String(amount).length;
  const unit = digits > 4 ? 10 ** (digits - 4) : 1;
  const rounded = quotient(amount + quotient(unit, 2), unit) * unit;
  if (rounded >= 1000 * PICO) return `$${quotient(amount + PICO / 2, PICO).toLocaleString("en-US")}`;
  const dollars = quotient(rounded, PICO);
  let fraction = String(rounded % PICO).padStart(12, "0").replace(/0+$/, "");
  if (fraction.length === 1 && dollars < 100) fraction += "0";
  return fraction === "" ? `$${dollars}` : `$${dollars}.${fraction}`;
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

// Money in words, from integers only: amounts to at most four significant digits (DESIGN.md), prices as
// Rust's `usd_per_million` writes them.
import { describe, expect, it } from "vitest";
import { count, perMillion, usd } from "../src/shared/money";

describe("usd", () => {
  it("says nothing cost $0", () => {
    expect(usd(0)).toBe("$0");
  });

  it("shows at most four significant digits, rounded half up (DESIGN.md's examples)", () => {
    expect(usd(123_400_000)).toBe("$0.0001234");
    expect(usd(12_300_000_000)).toBe("$0.0123");
    expect(usd(1_234_000_000_000)).toBe("$1.234");
    expect(usd(12_345_000_000_000)).toBe("$12.35");
    expect(usd(1_234_000_000_000_000)).toBe("$1,234");
    expect(usd(1_234_567_890_123)).toBe("$1.235");
    expect(usd(1_234_499_999_999)).toBe("$1.234");
    expect(usd(123_449_000_000_000)).toBe("$123.4");
  });

  it("never shows more than four significant digits, however small or large", () => {
    for (const pico of [1, 999, 12_345_678, 6_543_210_987, 98_765_432_109, 1_234_567_890_123, 12_345_678_901_234, 987_654_321_098_765]) {
      const digits = usd(pico).replace(/[$.,]/g, "").replace(/^0+/, "");
      expect(digits.length, usd(pico)).toBeLessThanOrEqual(4);
    }
  });

  it("trims trailing zeros, but keeps a fraction of a dollar to the cent", () => {
    expect(usd(10_000_000_000)).toBe("$0.01");
    expect(usd(500_000_000_000)).toBe("$0.50");
    expect(usd(1_500_000_000_000)).toBe("$1.50");
    expect(usd(12_300_000_000_000)).toBe("$12.30");
    expect(usd(12_000_000_000_000)).toBe("$12");
    expect(usd(120_000_000_000_000)).toBe("$120");
  });

  it("shows less than a cent with four significant digits, trailing zeros trimmed", () => {
    expect(usd(6_000_000_000)).toBe("$0.006");
    expect(usd(12_345_678)).toBe("$0.00001235");
    expect(usd(155_000_000)).toBe("$0.000155");
    expect(usd(600_000_000)).toBe("$0.0006");
    expect(usd(999)).toBe("$0.000000000999");
    expect(usd(1)).toBe("$0.000000000001");
  });

  it("rounds just under a cent up to one", () => {
    expect(usd(9_999_999_999)).toBe("$0.01");
    expect(usd(9_999_499_999)).toBe("$0.009999");
  });

  it("shows whole dollars from $1,000 on, grouped, and stays exact up to the largest integers a number holds", () => {
    expect(usd(999_949_999_999_999)).toBe("$999.9");
    expect(usd(999_950_000_000_000)).toBe("$1,000");
    expect(usd(8_999_499_999_999_999)).toBe("$8,999");
    expect(usd(8_999_500_000_000_000)).toBe("$9,000");
  });
});

describe("perMillion", () => {
  it("shows pico-dollars per token as dollars per million tokens without trailing zeros", () => {
    expect(perMillion(2_500_000)).toBe("2.5");
    expect(perMillion(15_000_000)).toBe("15");
    expect(perMillion(75_000)).toBe("0.075");
    expect(perMillion(0)).toBe("0");
    expect(perMillion(1)).toBe("0.000001");
  });
});

describe("count", () => {
  it("groups thousands", () => {
    expect(count(0)).toBe("0");
    expect(count(1_234_567)).toBe("1,234,567");
  });
});

// Money in words: the same text Rust's `usd` and `usd_per_million` write, from integers only.
import { describe, expect, it } from "vitest";
import { count, perMillion, usd } from "../src/shared/money";

describe("usd", () => {
  it("says nothing cost $0", () => {
    expect(usd(0)).toBe("$0");
  });

  it("shows a cent or more as dollars and cents, rounded half up", () => {
    expect(usd(1_234_567_890_123)).toBe("$1.23");
    expect(usd(10_000_000_000)).toBe("$0.01");
    expect(usd(1_235_000_000_000)).toBe("$1.24");
    expect(usd(1_234_999_999_999)).toBe("$1.23");
    expect(usd(12_000_000_000_000)).toBe("$12.00");
    expect(usd(1_234_567_000_000_000)).toBe("$1234.57");
  });

  it("shows less than a cent with four significant digits, trailing zeros trimmed", () => {
    expect(usd(6_000_000_000)).toBe("$0.006");
    expect(usd(12_345_678)).toBe("$0.00001235");
    expect(usd(155_000_000)).toBe("$0.000155");
    expect(usd(600_000_000)).toBe("$0.0006");
    expect(usd(999)).toBe("$0.000000000999");
    expect(usd(1)).toBe("$0.000000000001");
  });

  it("rounds just under a cent up to one, as Rust does", () => {
    expect(usd(9_999_999_999)).toBe("$0.01");
    expect(usd(9_999_499_999)).toBe("$0.009999");
  });

  it("stays exact for thousands of dollars (the largest integers a number holds)", () => {
    expect(usd(8_999_994_999_999_999)).toBe("$8999.99");
    expect(usd(8_999_995_000_000_000)).toBe("$9000.00");
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

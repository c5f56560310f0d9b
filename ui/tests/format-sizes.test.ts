// Sizes, speeds and times left as a model's download shows them: decimal units, one decimal
// under 10, time left rounded up; the bytes across every file of the model begun when Rust says
// them, else the file's.
import { describe, expect, it } from "vitest";
import { pullLine, pullShare } from "../src/providers/pull-progress";
import { bytes, bytesPerSecond, timeLeft } from "../src/shared/format";

describe("sizes and times", () => {
  it("says bytes in decimal units, one decimal under 10", () => {
    expect(bytes(0)).toBe("0 B");
    expect(bytes(812)).toBe("812 B");
    expect(bytes(999_999)).toBe("1.0 MB");
    expect(bytes(2_019_393_189)).toBe("2.0 GB");
    expect(bytes(523_000_000)).toBe("523 MB");
    expect(bytes(12_345_678_901)).toBe("12 GB");
    expect(bytes(Number.NaN)).toBe("0 B");
    expect(bytesPerSecond(45_200_000)).toBe("45 MB/s");
  });

  it("says the time left in seconds, minutes or hours, rounded up", () => {
    expect(timeLeft(0.2)).toBe("1 s left");
    expect(timeLeft(12)).toBe("12 s left");
    expect(timeLeft(61)).toBe("2 min left");
    expect(timeLeft(3600)).toBe("1 h left");
    expect(timeLeft(3900)).toBe("1 h 5 min left");
  });
});

describe("a download's progress", () => {
  it("counts the bytes of every file begun when Rust says them, with the speed and time left of the file downloading", () => {
    const second = {
      status: "pulling 9f4e1c2a7b30",
      completed: 12_000_000,
      total: 123_000_000,
      all_completed: 412_000_000,
      all_total: 523_000_000,
      bytes_per_second: 45_200_000,
      seconds_left: 11.4,
    };
    expect(pullShare(second)).toEqual({ completed: 412_000_000, total: 523_000_000 });
    expect(pullLine(second)).toBe("412 MB of 523 MB · 45 MB/s · 12 s left");
  });

  it("falls back on the file's bytes, and says what it can of the rest", () => {
    const file = { status: "pulling 8934d96d3f08", completed: 100_000_000, total: 523_000_000 };
    expect(pullShare(file)).toEqual({ completed: 100_000_000, total: 523_000_000 });
    expect(pullLine(file)).toBe("100 MB of 523 MB");
    expect(pullShare({ ...file, completed: 600_000_000 })).toEqual({ completed: 523_000_000, total: 523_000_000 });
    expect(pullShare({ status: "verifying sha256 digest" })).toBeNull();
    expect(pullShare({ status: "pulling", completed: 0, total: 0 })).toBeNull();
    expect(pullLine({ status: "pulling manifest" })).toBe("Working…");
    expect(pullLine({ status: "pulling", bytes_per_second: 2_000_000 })).toBe("2.0 MB/s");
  });
});

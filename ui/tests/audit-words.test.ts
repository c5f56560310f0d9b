// An audit entry's arguments as the Activity page shows them: laid out as JSON.stringify lays
// them out, each token kept as it was written, text that is not JSON as it is, and only the
// start of arguments of megabytes.
import { describe, expect, it } from "vitest";
import { ARGUMENTS_SHOWN, argumentsShown, prettyJson } from "../src/activity/audit-words";

describe("an entry's arguments", () => {
  it("are laid out as JSON.stringify lays them out", () => {
    const values = [
      { path: "/tmp/a b", lines: [1, 2, { deep: [true, false, null] }], empty: {}, none: [], nested: { a: [[]] } },
      [],
      {},
      "just a string",
      42,
      null,
      { text: 'quote " and backslash \\ and \\" both', "key:with,delims{[": "]}" },
    ];
    for (const value of values) {
      const compact = JSON.stringify(value);
      expect(prettyJson(compact)).toBe(JSON.stringify(value, null, 2));
      // Spaced out as a model may write them: the same.
      expect(prettyJson(JSON.stringify(value, null, "\t").replace(/\n/g, "\r\n "))).toBe(JSON.stringify(value, null, 2));
    }
  });

  it("keep every number, escape and repeated key as written", () => {
    expect(prettyJson('{"id":12345678901234567890,"x":1.0,"s":"\\u202e\\n","k":1,"k":2}')).toBe(
      '{\n  "id": 12345678901234567890,\n  "x": 1.0,\n  "s": "\\u202e\\n",\n  "k": 1,\n  "k": 2\n}',
    );
    // A string ending in an escaped backslash ends there.
    expect(prettyJson('["a\\\\",{"b":"\\\\\\""}]')).toBe('[\n  "a\\\\",\n  {\n    "b": "\\\\\\""\n  }\n]');
  });

  it("are shown as they are when they are not JSON", () => {
    for (const raw of ["", "{not json", '{"a":1', "hello\tworld", '{"a":1}}']) expect(prettyJson(raw)).toBe(raw);
  });

  it("of megabytes show their start and say how many characters more there are, never half a character", () => {
    const huge = JSON.stringify({ text: "y".repeat(3_000_000) });
    const shown = argumentsShown(huge);
    expect(shown.text).toBe(`{\n  "text": "${"y".repeat(ARGUMENTS_SHOWN - 13)}`);
    expect(shown.text.length + shown.more).toBe(JSON.stringify(JSON.parse(huge), null, 2).length);

    expect(argumentsShown('{"a":"b"}')).toEqual({ text: '{\n  "a": "b"\n}', more: 0 });
    // A character beyond U+FFFF is two UTF-16 units: the cut is before it, not between them.
    expect(argumentsShown("ab😀cd", 3)).toEqual({ text: "ab", more: 4 });
    expect(argumentsShown("ab😀cd", 4)).toEqual({ text: "ab😀", more: 2 });
  });
});

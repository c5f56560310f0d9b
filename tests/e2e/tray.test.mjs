// The tray, seen (issue 61): with Settings' "keep running in the tray" on, closing the window
// hides it and the app goes on, its icon in a real XEmbed tray (trayer, under openbox, on an X
// display of its own: the suite's has neither); the icon's menu shows the window again, and
// quits. The steps are tray.sh's; its pictures, tray-icon and tray-menu, are in artifacts.
import assert from "node:assert/strict";
import { test } from "node:test";
import path from "node:path";
import { ARTIFACTS, BIN, run, tempHome } from "./harness.mjs";

const HERE = path.dirname(new URL(import.meta.url).pathname);

test("closing the window with the tray on leaves the app in the tray; its menu shows it and quits", () => {
  const missing = ["openbox", "trayer", "wmctrl", "xwininfo", "xprop", "xdotool", "import", "timeout"].filter((p) => run("sh", ["-c", `command -v ${p}`]).status !== 0);
  assert.deepEqual(missing, [], "the tray test's programs (the README's test command installs them)");
  const home = tempHome("tray");
  // `timeout` ends the whole group (xvfb-run, its X server, tray.sh and what it started) if
  // the steps, each bounded, still overrun; spawnSync's own limit is the last resort.
  const ran = run(
    "timeout",
    ["-k", "10", "270", "xvfb-run", "-a", "-s", "-screen 0 1280x800x24 -nolisten tcp", "bash", path.join(HERE, "tray.sh"), home, ARTIFACTS],
    { env: { ...process.env, SWITCHBOARD_BIN: BIN }, timeout: 295000 },
  );
  const said = `${ran.stdout}\n${ran.stderr}`;
  assert.equal(ran.status, 0, said);
  for (const step of ["closed to the tray", "shown again from the tray", "quit from the tray"]) {
    assert.match(ran.stdout, new RegExp(`ok: ${step}`), said);
  }
});

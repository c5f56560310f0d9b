// The app's own updates in the real window, against a local update server (Tauri's updater
// manifest) and keys made here with Tauri's own signer. The app runs as an AppImage would (its
// APPIMAGE a file of the test's), so the updater has a copy to replace: a release whose
// signature is from another key, or signed for another version than announced, is refused and
// leaves the copy as it was; one signed with the build's key replaces it. An AppImage also
// registers the switchboard:// scheme itself (no package did): its handler entry is checked.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import { once } from "node:events";
import path from "node:path";
import { test } from "node:test";
import { launch, run, tempHome, textOf, tid } from "./harness.mjs";

const TAURI = path.resolve("ui/node_modules/.bin/tauri");

function newKey(dir, name) {
  const key = path.join(dir, name);
  const made = run(TAURI, ["signer", "generate", "--ci", "-p", "", "-w", key]);
  assert.equal(made.status, 0, made.stderr);
  return { key, pubkey: fs.readFileSync(`${key}.pub`, "utf8").trim() };
}

/** The signature of `file` by `key`, bound to `version` (as `tauri build` signs a release). */
function signature(key, file, version) {
  const signed = run(TAURI, ["signer", "sign", "-f", key, "-p", "", "--app-version", version, file]);
  assert.equal(signed.status, 0, signed.stderr);
  return fs.readFileSync(`${file}.sig`, "utf8").trim();
}

/** Serves the manifest `/latest.json` (`release()` says what it holds) and the release `/app`. */
async function updateServer(payload, release) {
  const server = http.createServer((req, res) => {
    if (req.url === "/latest.json") {
      const { version, signature } = release();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          version,
          notes: "Faster start.\n<img src=x onerror=alert(1)> stays text.",
          pub_date: "2026-11-20T10:00:00Z",
          platforms: { "linux-x86_64": { signature, url: `http://127.0.0.1:${server.address().port}/app` } },
        }),
      );
    } else if (req.url === "/app") {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": payload.length });
      res.end(payload);
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

async function checkAndInstall(b) {
  await b.$(tid("update-check")).click();
  await b.$(tid("update-install")).waitForDisplayed({ timeout: 15000 });
  await b.$(tid("update-install")).click();
}

test("an update is installed only when its signature matches the build's key and names the version announced", async () => {
  const home = tempHome("updates");
  const keys = newKey(home, "release.key");
  const other = newKey(home, "other.key");
  // The release: an ELF executable, as an AppImage is; the copy it replaces is another one.
  const release = path.join(home, "Switchboard_0.2.0_amd64.AppImage");
  fs.copyFileSync("/usr/bin/true", release);
  const copy = path.join(home, "Switchboard.AppImage");
  fs.copyFileSync("/usr/bin/false", copy);
  fs.chmodSync(copy, 0o755);
  const before = fs.readFileSync(copy);

  const good = signature(keys.key, release, "0.2.0");
  const older = signature(keys.key, release, "0.1.5");
  const foreign = signature(other.key, release, "0.2.0");
  let served = { version: "0.2.0", signature: foreign };
  const server = await updateServer(fs.readFileSync(release), () => served);
  const port = server.address().port;

  const app = await launch(home, {
    SWITCHBOARD_UPDATE_URL: `http://127.0.0.1:${port}/latest.json`,
    SWITCHBOARD_UPDATE_PUBKEY: keys.pubkey,
    APPIMAGE: copy,
    XDG_DATA_HOME: path.join(home, "share"),
    XDG_CONFIG_HOME: path.join(home, "config"),
  });
  try {
    const b = app.browser;
    await b.$(tid("nav-settings")).click();
    await b.$(tid("updates-section")).waitForExist();
    // Settings' list of sections moves to Updates and marks it.
    await b.$(tid("settings-nav-updates")).click();
    assert.equal(await b.$(tid("settings-nav-updates")).getAttribute("aria-current"), "true");

    // Another key's signature: refused, nothing replaced.
    await checkAndInstall(b);
    assert.match(await textOf(b, tid("update-status")), /Switchboard 0\.2\.0 is available \(you have 0\.1\.0\), published 2026-11-20/);
    assert.equal(await textOf(b, tid("update-notes")), "Faster start.\n<img src=x onerror=alert(1)> stays text.");
    await b.$(tid("update-error")).waitForDisplayed({ timeout: 15000 });
    assert.match(await textOf(b, tid("update-error")), /signature does not match this app's update key, so nothing was installed/);
    assert.deepEqual(fs.readFileSync(copy), before);
    // What was refused is not offered again: the one action is to check again.
    assert.equal(await b.$(tid("update-install")).isExisting(), false);
    assert.equal(await textOf(b, tid("update-check")), "Check again");

    // The build's key, but the signature names an older release than the one announced.
    served = { version: "0.2.0", signature: older };
    await checkAndInstall(b);
    await b.waitUntil(async () => /signed as 0\.1\.5/.test(await textOf(b, tid("update-error"))), {
      timeout: 15000,
      timeoutMsg: "a release signed for another version was not refused",
    });
    assert.deepEqual(fs.readFileSync(copy), before);
    await app.screenshot("update-refused");

    // Signed with the build's key for the version announced: installed over the copy.
    served = { version: "0.2.0", signature: good };
    await checkAndInstall(b);
    await b.$(tid("update-installed")).waitForDisplayed({ timeout: 15000 });
    assert.match(await textOf(b, tid("update-installed")), /Switchboard 0\.2\.0 is installed; its signature matched/);
    assert.deepEqual(fs.readFileSync(copy), fs.readFileSync(release));
    assert.ok(await b.$(tid("update-restart")).isDisplayed());
    await app.screenshot("update-installed");

    // An AppImage registers switchboard:// links itself.
    const handler = fs.readFileSync(path.join(home, "share", "applications", "switchboard-handler.desktop"), "utf8");
    assert.match(handler, /^MimeType=x-scheme-handler\/switchboard;?$/m);
    assert.ok(handler.includes(`Exec="${copy}" %u`), handler);
  } finally {
    await app.close();
    server.close();
  }
  assert.ok(!app.log.join().includes(keys.pubkey), "the update key is not logged");
});

test("an update address that is neither https nor this computer stops the app from starting", () => {
  const home = tempHome("updates-bad");
  const started = run(process.env.SWITCHBOARD_BIN, [], {
    env: { ...process.env, SWITCHBOARD_HOME: home, SWITCHBOARD_UPDATE_URL: "http://updates.example/latest.json", SWITCHBOARD_UPDATE_PUBKEY: "KEY" },
    timeout: 30000,
  });
  assert.equal(started.status, 1);
  assert.match(started.stderr, /The update address http:\/\/updates\.example\/latest\.json is not usable/);
});

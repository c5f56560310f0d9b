// MCP servers and the real app: approved servers start with the window, in the background, and
// no server process outlives the app — not after a normal quit, and not after `kill -9` of the
// app (the next start stops what the killed one left). New, edited, added, imported and remote
// servers, and changed tools, wait for Rust's native GTK dialog, answered here with xdotool.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { alive, BIN, chooseInFileDialog, cli, dropFilesOnWindow, everythingOverHttp, launch, listeningPort, nativeWindow, pasteInto, pressIn, run, screenshotScreen, tempHome, textOf, tid, windowGone } from "./harness.mjs";

async function until(what, check, ms = 30000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function lines(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : [];
}

/** Whether the Servers page shows the server of row `item` running, with its tool count. */
async function shownRunning(b, item) {
  const state = await textOf(b, `${item} ${tid("server-state")}`);
  return state === "Running" && /^\d+ tools?$/.test((await textOf(b, `${item} ${tid("server-tool-count")}`)) ?? "");
}

/** Opens the detail view of the server of row `item` on the Servers page (its row), unless it is open. */
async function openServer(b, item) {
  const row = b.$(`${item} ${tid("server-open")}`);
  if ((await row.getAttribute("aria-expanded")) !== "true") await row.click();
  await b.$(`${item} ${tid("server-detail")}`).waitForExist({ timeout: 5000 });
}

/** The Servers page shows the server running, with its tools and its exact command line. */
async function showsTheServerRunning(app) {
  await app.browser.$(tid("nav-servers")).click();
  const item = `${tid("server-item")}[data-name="everything"]`;
  await app.browser.$(item).waitForDisplayed({ timeout: 20000 });
  await app.browser.waitUntil(async () => shownRunning(app.browser, item), {
    timeout: 20000,
    timeoutMsg: "the Servers page does not show the server running",
  });
  await openServer(app.browser, item);
  assert.match(await textOf(app.browser, `${item} ${tid("server-command")}`), /sh -c .*mcp-server-everything.* stdio/);
  await app.screenshot("servers-page");
}

test("approved MCP servers start with the app and none outlives it, even after kill -9", async () => {
  const home = tempHome("mcp-servers");
  const marks = path.join(home, "grandchildren");
  const everything = path.resolve("tests/peers/node_modules/.bin/mcp-server-everything");
  // A server that leaves a grandchild of its own running, and says where it is.
  const script = `sleep 1000 & echo $! >> '${marks}'; exec '${everything}' stdio`;
  const added = run(BIN, ["mcp", "add", "everything", "--", "sh", "-c", script], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
  });
  assert.equal(added.status, 0, added.stderr);

  const appPid = () => JSON.parse(fs.readFileSync(path.join(home, "data", "instance.json"), "utf8")).pid;

  // A quit stops the server and everything it started. (Ending a WebDriver session kills the
  // app outright, so the quit is asked for as the OS does at logout: SIGTERM, which the app
  // turns into its normal exit, the same path as closing the window.)
  let app = await launch(home);
  try {
    await showsTheServerRunning(app);
  } catch (e) {
    await app.close();
    throw e;
  }
  await until("the server to start", () => lines(marks).length === 1);
  const first = lines(marks)[0];
  assert.ok(alive(first));
  const pid = appPid();
  process.kill(pid, "SIGTERM");
  await until(`the app ${pid} to exit`, () => !alive(pid), 15000);
  assert.ok(!fs.existsSync(path.join(home, "data", "instance.json")), "a clean exit removes instance.json");
  await app.close();
  await until(`grandchild ${first} to be stopped at quit`, () => !alive(first), 15000);

  // kill -9 of the app leaves its server behind; the next start stops it.
  app = await launch(home);
  await until("the server to start again", () => lines(marks).length === 2);
  const second = lines(marks)[1];
  const killed = appPid();
  process.kill(killed, "SIGKILL");
  await until(`the app ${killed} to be gone`, () => !alive(killed), 15000);
  assert.ok(alive(second), "a killed app cannot stop its servers itself");
  await app.close();

  app = await launch(home);
  try {
    await until(`the leftover ${second} to be stopped at the next start`, () => !alive(second), 15000);
    await until("the server to start a third time", () => lines(marks).length === 3);
    const last = appPid();
    process.kill(last, "SIGTERM");
    await until(`the app ${last} to exit`, () => !alive(last), 15000);
  } finally {
    await app.close();
  }
  const third = lines(marks)[2];
  await until(`grandchild ${third} to be stopped at quit`, () => !alive(third), 15000);
});

test("a server edited in mcp.json starts only once approved in the native dialog", async () => {
  const home = tempHome("mcp-approve");
  const everything = path.resolve("tests/peers/node_modules/.bin/mcp-server-everything");
  const added = run(BIN, ["mcp", "add", "everything", "--", everything, "stdio"], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
  });
  assert.equal(added.status, 0, added.stderr);
  // Someone edits the file: the approval given by adding no longer covers it.
  const file = path.join(home, "config", "mcp.json");
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  config.mcpServers.everything.args = ["stdio", "--edited-after-approval"];
  fs.writeFileSync(file, JSON.stringify(config, null, 2));

  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    const item = `${tid("server-item")}[data-name="everything"]`;
    await b.$(item).waitForDisplayed({ timeout: 20000 });
    assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");
    await openServer(b, item);
    assert.match(await textOf(b, `${item} ${tid("server-command")}`), /--edited-after-approval/);

    // Return takes the default, which is the safe choice: it leaves the server waiting.
    await b.$(`${item} ${tid("server-approve")}`).click();
    let dialog = await nativeWindow("Start the MCP server");
    screenshotScreen("mcp-approval-dialog");
    pressIn(dialog, "Return");
    await windowGone("Start the MCP server");
    // Rust's record, not only the row (which said so before the dialog): still not approved.
    const listed = JSON.parse(cli(home, ["mcp", "list", "--json"]).stdout);
    const everythingNow = (Array.isArray(listed) ? listed : listed.servers).find((s) => s.name === "everything");
    assert.equal(everythingNow.approved, false, "Return approved the server");
    assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");

    // So does declining by its mnemonic (Alt+D).
    await b.$(`${item} ${tid("server-approve")}`).click();
    dialog = await nativeWindow("Start the MCP server");
    pressIn(dialog, "alt+d");
    await windowGone("Start the MCP server");
    assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");

    // Approving (Alt+A) starts it.
    await b.$(`${item} ${tid("server-approve")}`).click();
    dialog = await nativeWindow("Start the MCP server");
    pressIn(dialog, "alt+a");
    await b.waitUntil(async () => shownRunning(b, item), {
      timeout: 30000,
      timeoutMsg: "the approved server does not show as running",
    });
    assert.equal(await textOf(b, `${item} ${tid("server-resolved")}`), everything);
    await app.screenshot("servers-approved");

    // Disable stops it; the log is there to read.
    await b.$(`${item} ${tid("server-toggle")}`).click();
    await b.waitUntil(async () => (await textOf(b, `${item} ${tid("server-state")}`)) === "Disabled", {
      timeout: 15000,
      timeoutMsg: "disabling does not show",
    });
    assert.equal(JSON.parse(fs.readFileSync(file, "utf8")).mcpServers.everything.disabled, true);
    await b.$(`${item} ${tid("server-log-toggle")}`).click();
    await b.$(`${item} ${tid("server-log")}`).waitForDisplayed({ timeout: 5000 });
    await app.screenshot("servers-log");

    // A server added in the window waits for the same native dialog: the page cannot approve.
    await b.$(tid("add-tab-manual")).click();
    await pasteInto(b, `${tid("server-form")} input[name="name"]`, "typed");
    await pasteInto(b, `${tid("server-form")} input[name="command_line"]`, `DEBUG=1 '${everything}' stdio`);
    await b.$(tid("server-submit")).click();
    dialog = await nativeWindow("Start the MCP server “typed”");
    screenshotScreen("mcp-approval-dialog-added");
    pressIn(dialog, "alt+a");
    const typed = `${tid("server-item")}[data-name="typed"]`;
    await b.waitUntil(async () => shownRunning(b, typed), {
      timeout: 30000,
      timeoutMsg: "the server added in the window does not run after approval",
    });
    await openServer(b, typed);
    assert.match(await textOf(b, `${typed} ${tid("server-command")}`), /^DEBUG=1 .*mcp-server-everything stdio$/);

    // Editing its command line stops it and asks again; declined, it waits.
    await b.$(`${typed} ${tid("server-menu")}`).click();
    await b.$(`${typed} ${tid("server-edit-toggle")}`).click();
    await pasteInto(b, `${typed} ${tid("server-edit")} input`, `'${everything}' stdio --edited-in-the-window`);
    await b.$(`${typed} ${tid("server-edit-save")}`).click();
    dialog = await nativeWindow("Start the MCP server “typed”");
    pressIn(dialog, "Escape");
    await b.waitUntil(async () => (await textOf(b, `${typed} ${tid("server-state")}`)) === "Needs approval", {
      timeout: 15000,
      timeoutMsg: "an edited server does not wait for approval",
    });
    assert.match(await textOf(b, `${typed} ${tid("server-command")}`), /^DEBUG=1 .*stdio --edited-in-the-window$/);

    // Imported servers are listed first, then wait for approval.
    const pasted = JSON.stringify({ mcpServers: { imported: { command: "uvx", args: ["mcp-server-time"] } } });
    await b.$(tid("add-tab-import")).click();
    await pasteInto(b, tid("import-text"), pasted);
    await b.$(tid("import-preview")).click();
    await b.$(tid("import-added")).waitForDisplayed({ timeout: 10000 });
    assert.equal(await textOf(b, tid("import-added")), "imported uvx mcp-server-time");
    await app.screenshot("servers-import-preview");
    await b.$(tid("import-confirm")).click();
    const imported = `${tid("server-item")}[data-name="imported"]`;
    await b.$(imported).waitForDisplayed({ timeout: 10000 });
    assert.equal(await textOf(b, `${imported} ${tid("server-state")}`), "Needs approval");
  } finally {
    await app.close();
  }
  // The approval given in the window is kept (SQLite), for the edited command line.
  const list = run(BIN, ["mcp", "list", "--json"], { env: { ...process.env, SWITCHBOARD_HOME: home } });
  assert.equal(list.status, 0, list.stderr);
  const listed = Object.fromEntries(JSON.parse(list.stdout).map((server) => [server.name, server]));
  assert.equal(listed.everything.approved, true);
  assert.match(listed.everything.command_line, /--edited-after-approval$/);
  assert.equal(listed.typed.approved, false, "declined after the edit");
  assert.equal(listed.imported.approved, false);
});

test("a tool changed since first seen is held back until its diff is accepted in the native dialog", async () => {
  const home = tempHome("mcp-tools");
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  const python = path.resolve("tests/peers/.venv/bin/python");
  const fault = path.resolve("tests/peers/fault_server.py");
  assert.equal(run(BIN, ["mcp", "add", "fault", "--", python, fault], { env }).status, 0);
  // First seen (and pinned) as the server is now…
  const first = run(BIN, ["mcp", "tools", "fault"], { env });
  assert.equal(first.status, 0, first.stderr);
  // …then the server changes echo's description (approved again: the command line changed).
  const file = path.join(home, "config", "mcp.json");
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  config.mcpServers.fault.args.push("--mutated");
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  assert.equal(run(BIN, ["mcp", "approve", "fault", "--yes"], { env }).status, 0);

  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    const item = `${tid("server-item")}[data-name="fault"]`;
    await b.waitUntil(async () => /^Running/.test(await textOf(b, `${item} ${tid("server-state")}`)), {
      timeout: 30000,
      timeoutMsg: "the fault server does not run",
    });
    await openServer(b, item);
    const echo = `${item} ${tid("tool-item")}[data-tool="echo"]`;
    await b.$(echo).waitForDisplayed({ timeout: 15000 });
    assert.equal(await textOf(b, `${echo} ${tid("tool-status")}`), "Changed · held back");
    assert.match(await textOf(b, `${echo} ${tid("tool-diff")}`), /read ~\/\.ssh\/id_rsa/);
    await app.screenshot("servers-tool-held-back");

    await b.$(`${echo} ${tid("tool-accept")}`).click();
    const dialog = await nativeWindow("Offer the changed tool");
    screenshotScreen("mcp-tool-change-dialog");
    pressIn(dialog, "alt+a");
    // Only a changed tool carries a badge: accepted, echo has none and is pinned.
    await b.waitUntil(async () => (await b.$(echo).getAttribute("data-status")) === "pinned" && !(await b.$(`${echo} ${tid("tool-status")}`).isExisting()), {
      timeout: 15000,
      timeoutMsg: "the accepted tool is not shown as pinned",
    });
  } finally {
    await app.close();
  }
  // The acceptance is kept: the command line sees echo pinned as it is now.
  const after = run(BIN, ["mcp", "tools", "fault"], { env });
  assert.equal(after.status, 0, after.stderr);
  assert.match(after.stdout, /^echo\s+fault__echo\s+pinned$/m);
});

test("a remote server added by its address connects after the native dialog and lists its tools", async () => {
  const home = tempHome("mcp-remote");
  // Port 0, and the port it got read back (tests/peers/loopback.cjs says it): no probe-then-bind race.
  const everything = everythingOverHttp("streamableHttp");
  const app = await launch(home);
  try {
    const port = await listeningPort(everything, 20000);
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    await b.$(tid("add-tab-manual")).click();
    await pasteInto(b, `${tid("server-form")} input[name="name"]`, "remote");
    await b.$(tid("server-kind-url")).click();
    await pasteInto(b, `${tid("server-form")} input[name="url"]`, `http://127.0.0.1:${port}/mcp`);
    await b.$(tid("server-submit")).click();
    const dialog = await nativeWindow("Start the MCP server “remote”");
    screenshotScreen("mcp-approval-dialog-remote");
    pressIn(dialog, "alt+a");
    const item = `${tid("server-item")}[data-name="remote"]`;
    await b.waitUntil(async () => shownRunning(b, item), {
      timeout: 30000,
      timeoutMsg: "the remote server does not show as running",
    });
    await openServer(b, item);
    assert.equal(await textOf(b, `${item} ${tid("server-command")}`), `streamable HTTP http://127.0.0.1:${port}/mcp`);
    await b.$(`${item} ${tid("tool-item")}[data-tool="echo"]`).waitForDisplayed({ timeout: 15000 });
    // Pinned as the app first saw the server list it, before anyone looked (and so not badged).
    assert.equal(await b.$(`${item} ${tid("tool-item")}[data-tool="echo"]`).getAttribute("data-status"), "pinned");
    assert.equal(await textOf(b, `${item} ${tid("tool-item")}[data-tool="echo"] ${tid("tool-status")}`), null);
    await app.screenshot("servers-remote");
    // Beside its tools, what it offers: resources, resource templates and prompts (issue 17).
    await b.$(`${item} ${tid("resource-item")}`).waitForExist({ timeout: 15000 });
    const offers = `${item} ${tid("server-offers")}`;
    await b.execute((selector) => document.querySelector(selector)?.scrollIntoView(), offers);
    assert.match(await textOf(b, offers), /demo:\/\/resource\/static\/document\//);
    assert.match(await textOf(b, offers), /demo:\/\/resource\/dynamic\/text\/\{resourceId\}/);
    const prompt = `${item} ${tid("prompt-item")}[data-prompt="args-prompt"]`;
    assert.equal(await textOf(b, `${prompt} ${tid("prompt-arguments")}`), "city*, state");
    await app.screenshot("servers-resources-and-prompts");
  } finally {
    await app.close();
    everything.kill("SIGTERM");
  }
});

/** tests/peers/registry_server.py (the MCP Registry's v0.1 API over recorded entries), and its address. */
async function scriptedRegistry() {
  const child = spawn("python3", [path.resolve("tests/peers/registry_server.py")], { stdio: ["ignore", "ignore", "pipe"] });
  const port = await new Promise((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => reject(new Error(`the registry said no port: ${said}`)), 15000);
    child.stderr.on("data", (chunk) => {
      said += chunk;
      const found = /registry: listening on 127\.0\.0\.1:(\d+)/.exec(said);
      if (found) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`the registry exited (${code}): ${said}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

test("a server found in the MCP Registry is installed from Browse, its secret to the keychain, and waits for the native dialog", async () => {
  const home = tempHome("mcp-registry");
  const registry = await scriptedRegistry();
  const app = await launch(home);
  try {
    const b = app.browser;
    // The registry is a setting (organisations run their own).
    await b.$(tid("nav-settings")).click();
    await pasteInto(b, tid("settings-mcp-registry"), registry.url);
    await b.$(tid("settings-save")).click();
    await b.$(tid("settings-saved")).waitForDisplayed({ timeout: 10000 });

    await b.$(tid("nav-servers")).click();
    await pasteInto(b, tid("registry-query"), "io.github");
    await b.$(tid("registry-search")).click();
    const github = `${tid("registry-item")}[data-name="io.github.github/github-mcp-server"]`;
    await b.$(github).waitForDisplayed({ timeout: 15000 });
    const names = await b.$$(tid("registry-item")).map((item) => item.getAttribute("data-name"));
    assert.deepEqual(names, [
      "io.github.modelcontextprotocol/server-everything",
      "io.github.modelcontextprotocol/server-filesystem",
      "io.github.modelcontextprotocol/server-time",
      "io.github.github/github-mcp-server",
    ]);
    assert.match(await textOf(b, `${github} ${tid("registry-source-line")}`), /^OCI image · ghcr\.io\/github\/github-mcp-server:1\.10\.1/);
    await b.$(github).scrollIntoView();
    await app.screenshot("registry-browse");

    // A failing registry says so on the page.
    await pasteInto(b, tid("registry-query"), "broken");
    await b.$(tid("registry-search")).click();
    await b.$(tid("registry-error")).waitForDisplayed({ timeout: 15000 });
    assert.match(await textOf(b, tid("registry-error")), /answered 500/);

    // A remote server that needs a secret header.
    await pasteInto(b, tid("registry-query"), "adadvisor");
    await b.$(tid("registry-search")).click();
    const ads = `${tid("registry-item")}[data-name="ai.adadvisor/mcp-server"]`;
    await b.$(ads).waitForDisplayed({ timeout: 15000 });
    await b.$(`${ads} ${tid("registry-install")}`).click();
    const token = `${ads} [data-need="Authorization"]`;
    await b.$(token).waitForDisplayed({ timeout: 5000 });
    assert.equal(await b.$(token).getAttribute("type"), "password");
    await pasteInto(b, token, "Bearer adv_sk_e2e_secret");
    await app.screenshot("registry-install-form");
    await b.$(`${ads} ${tid("registry-install-submit")}`).click();
    // Rust's own dialog shows the address it will reach; declined, the server waits.
    // Named from its title ("AdAdvisor MCP Server") by default.
    const dialog = await nativeWindow("Start the MCP server “adadvisor-mcp-server”");
    screenshotScreen("registry-consent");
    pressIn(dialog, "alt+d");
    await b.$(`${ads} ${tid("registry-installed")}`).waitForDisplayed({ timeout: 10000 });
    assert.equal(await textOf(b, `${ads} ${tid("registry-installed")}`), "Added “adadvisor-mcp-server” · Needs approval");
    const item = `${tid("server-item")}[data-name="adadvisor-mcp-server"]`;
    await b.$(item).waitForDisplayed({ timeout: 10000 });
    assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");
    await openServer(b, item);
    assert.match(await textOf(b, `${item} ${tid("server-command")}`), /https:\/\/api\.adadvisor\.ai\/mcp/);
    assert.equal(await b.$(token).getValue(), "", "the secret does not stay in the page");
  } finally {
    await app.close();
    registry.child.kill();
  }
  const file = fs.readFileSync(path.join(home, "config", "mcp.json"), "utf8");
  assert.ok(!file.includes("adv_sk_e2e_secret"), file);
  assert.match(JSON.parse(file).mcpServers["adadvisor-mcp-server"].headers.Authorization.keychain, /mcp-server/);
});

/** An MCP bundle at `file` around tests/peers/raw_server.py (stdlib-only Python; tool `echo`). */
function echoBundle(file) {
  const manifest = {
    manifest_version: "0.3",
    name: "Echo Bundle",
    version: "1.2.0",
    description: "Says back what it is given.",
    author: { name: "Someone" },
    server: {
      type: "python",
      entry_point: "server/main.py",
      mcp_config: { command: "python3", args: ["${__dirname}/server/main.py"], env: { ECHO_KEY: "${user_config.api_key}" } },
    },
    tools: [{ name: "echo", description: "Says it back" }],
    user_config: { api_key: { type: "string", title: "API key", sensitive: true, required: true } },
  };
  const made = run("python3", [
    "-c",
    "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n    z.writestr('manifest.json', sys.argv[2])\n    z.write(sys.argv[3], 'server/main.py')",
    file,
    JSON.stringify(manifest),
    path.resolve("tests/peers/raw_server.py"),
  ]);
  assert.equal(made.status, 0, made.stderr);
}

test("an MCP bundle chosen in the native dialog shows its consent screen, installs, and runs once approved", async () => {
  const home = tempHome("mcp-bundle");
  const file = path.join(home, "echo.mcpb");
  echoBundle(file);
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    await b.$(tid("add-tab-bundle")).click();
    await b.$(tid("bundle-open")).click();
    await chooseInFileDialog("Install an MCP bundle", file);
    await b.$(tid("bundle-consent")).waitForDisplayed({ timeout: 15000 });
    assert.equal(await textOf(b, tid("bundle-title")), "Echo Bundle");
    assert.match(await textOf(b, tid("bundle-command")), /^ECHO_KEY=\$\{user_config\.api_key\} python3 <bundle>\/server\/main\.py$/);
    const key = `${tid("bundle-form")} [data-option="api_key"]`;
    await pasteInto(b, key, "sk-bundle-e2e");
    await b.$(tid("bundle-consent")).scrollIntoView();
    await app.screenshot("bundle-consent");
    await b.$(tid("bundle-submit")).click();
    const dialog = await nativeWindow("Start the MCP server “echo-bundle”");
    screenshotScreen("bundle-approval");
    pressIn(dialog, "alt+a");
    const item = `${tid("server-item")}[data-name="echo-bundle"]`;
    await b.$(item).waitForDisplayed({ timeout: 10000 });
    await b.waitUntil(async () => (await shownRunning(b, item)) && (await textOf(b, `${item} ${tid("server-tool-count")}`)) === "1 tool", {
      timeout: 30000,
      timeoutMsg: "the bundle's server does not run",
    });
    assert.equal(await textOf(b, tid("bundle-installed")), "Added “echo-bundle” · Starting…");
    // What a bundle brings runs in a sandbox from the start, said in plain words.
    await openServer(b, item);
    assert.equal(
      await textOf(b, `${item} ${tid("server-sandbox-said")}`),
      "Can read and write: only its own folder; can read: the system; network: none",
    );
    await b.$(`${item} ${tid("server-sandbox")}`).scrollIntoView();
    await app.screenshot("servers-sandbox");

    // Only a list of hosts: typed in, said in words, and approved again in the native dialog.
    await b.$(`${item} ${tid("server-sandbox-network")}`).selectByAttribute("value", "hosts");
    await b.$(`${item} ${tid("server-sandbox-host-input")}`).waitForDisplayed({ timeout: 10000 });
    await b.$(`${item} ${tid("server-sandbox-host-input")}`).setValue("registry.npmjs.org, *.github.com");
    await b.$(`${item} ${tid("server-sandbox-host-add")}`).click();
    await b.waitUntil(async () => (await b.$$(`${item} ${tid("server-sandbox-host")}`)).length === 2, {
      timeout: 10000,
      timeoutMsg: "the hosts are not listed",
    });
    assert.equal(
      await textOf(b, `${item} ${tid("server-sandbox-said")}`),
      "Can read and write: only its own folder; can read: the system; network: registry.npmjs.org and *.github.com only",
    );
    await b.$(`${item} ${tid("server-sandbox")}`).scrollIntoView();
    await app.screenshot("servers-sandbox-hosts");
    await b.$(`${item} ${tid("server-approve")}`).click();
    const again = await nativeWindow("Start the MCP server “echo-bundle”");
    screenshotScreen("sandbox-hosts-approval");
    pressIn(again, "alt+a");
    await b.waitUntil(async () => shownRunning(b, item), { timeout: 30000, timeoutMsg: "it does not run again" });
  } finally {
    await app.close();
  }
  const config = JSON.parse(fs.readFileSync(path.join(home, "config", "mcp.json"), "utf8"));
  const entry = config.mcpServers["echo-bundle"];
  assert.equal(entry.cwd, path.join(home, "data", "bundles", "echo-bundle"));
  assert.ok(fs.existsSync(path.join(entry.cwd, "server", "main.py")));
  assert.ok(!JSON.stringify(config).includes("sk-bundle-e2e"));
  assert.deepEqual(entry.sandbox, { enabled: true, network: "hosts", hosts: ["registry.npmjs.org", "*.github.com"] });
});

test("what the sandbox refused a server shows on its card, and one Allow puts it on the list after the native dialog", async () => {
  const home = tempHome("mcp-sandbox-blocked");
  // A file of the person's home that no server was given.
  const planted = path.join(os.homedir(), `.switchboard-e2e-${path.basename(home)}`);
  fs.writeFileSync(planted, "PRIVATE");
  try {
    const python = path.resolve("tests/peers/.venv/bin/python");
    const script = path.resolve("tests/peers/hostile_server.py");
    const tries = JSON.stringify([
      ["read", planted],
      ["proxy", "evil.example:443"],
    ]);
    cli(home, ["mcp", "add", "hostile", "--env", `HOSTILE_AT_START=${tries}`, "--", python, script]);
    cli(home, ["mcp", "approve", "hostile", "--yes"]);
    cli(home, ["mcp", "sandbox", "hostile", "on", "--network", "registry.npmjs.org"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-servers")).click();
      const item = `${tid("server-item")}[data-name="hostile"]`;
      await b.$(item).waitForDisplayed({ timeout: 15000 });
      await b.waitUntil(async () => shownRunning(b, item), { timeout: 30000, timeoutMsg: "the hostile server does not run" });
      await openServer(b, item);
      const shown = `${item} ${tid("server-sandbox-refusal")}`;
      await b.waitUntil(async () => (await b.$$(shown)).length === 2, { timeout: 15000, timeoutMsg: "the refusals are not shown" });
      const refusals = await b.execute(
        (sel) => [...document.querySelectorAll(sel)].map((r) => r.querySelector(".refusal-text")?.textContent.trim() ?? ""),
        shown,
      );
      const home_ = os.homedir();
      // (Each is seen where it happens — the proxy, the server's stderr — in either order.)
      assert.deepEqual(refusals.sort(), [
        "Blocked: connect evil.example:443",
        `Blocked: read ${planted.replace(home_, "~")}`,
      ]);
      await b.$(`${item} ${tid("server-sandbox")}`).scrollIntoView();
      await app.screenshot("servers-sandbox-blocked");
      // Allow the host: Rust's dialog shows the widened sandbox; approved, it runs again with it.
      await b.$(`${item} ${tid("server-sandbox-allow")}[aria-label="Allow: connect evil.example:443"]`).click();
      const dialog = await nativeWindow("Start the MCP server “hostile”");
      screenshotScreen("sandbox-blocked-allow");
      pressIn(dialog, "alt+a");
      await b.waitUntil(async () => (await textOf(b, `${item} ${tid("server-sandbox-said")}`)).endsWith("network: registry.npmjs.org and evil.example:443 only"), {
        timeout: 30000,
        timeoutMsg: "the host is not on the list",
      });
      await b.waitUntil(async () => shownRunning(b, item), { timeout: 30000, timeoutMsg: "it does not run again" });
    } finally {
      await app.close();
    }
  } finally {
    fs.rmSync(planted, { force: true });
  }
});

test("an MCP bundle dropped on the window opens its consent screen from any page; a broken one is refused with the reason", async () => {
  const home = tempHome("mcp-bundle-drop");
  const file = path.join(home, "echo.mcpb");
  echoBundle(file);
  const broken = path.join(home, "broken.mcpb");
  fs.writeFileSync(broken, "not a zip at all");
  const app = await launch(home);
  try {
    const b = app.browser;
    await dropFilesOnWindow([file]);
    await b.$(tid("bundle-consent")).waitForDisplayed({ timeout: 15000 });
    assert.equal(await textOf(b, tid("bundle-title")), "Echo Bundle");
    assert.equal(await b.$(tid("bundle-name")).getValue(), "echo-bundle");
    await app.screenshot("bundle-dropped");

    await dropFilesOnWindow([broken]);
    await b.$(tid("bundle-open-error")).waitForDisplayed({ timeout: 15000 });
    assert.match(await textOf(b, tid("bundle-open-error")), /^broken\.mcpb: /);
    assert.ok(!(await b.$(tid("bundle-consent")).isExisting()));
  } finally {
    await app.close();
  }
  // Nothing was unpacked or added before consent.
  assert.ok(!fs.existsSync(path.join(home, "data", "bundles", "echo-bundle")));
  const config = path.join(home, "config", "mcp.json");
  assert.ok(!fs.existsSync(config) || !fs.readFileSync(config, "utf8").includes("echo-bundle"));
});

test("a switchboard:// link opened while the app runs is handed to it and only proposes the server", async () => {
  const home = tempHome("mcp-link");
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    const dialog = tid("confirm-dialog");
    // A link that brings a secret, or a variable that changes what the runtime loads, is
    // refused, and the window says why.
    const secret = JSON.stringify({ command: "uvx", args: ["mcp-server-time"], env: { TIME_KEY: "sk-link-secret" } });
    const refused = run(BIN, [`switchboard://install?name=leaky&config=${encodeURIComponent(secret)}`], { env });
    assert.equal(refused.status, 0, refused.stderr);
    await b.$(tid("proposal-refused")).waitForDisplayed({ timeout: 15000 });
    assert.match(await textOf(b, tid("proposal-refused")), /TIME_KEY.*a link cannot bring a secret/);
    await app.screenshot("link-refused");
    await b.$(tid("confirm-ok")).click();
    await b.$(dialog).waitForDisplayed({ timeout: 5000, reverse: true });
    const config = JSON.stringify({ command: "uvx", args: ["mcp-server-time"], env: { TZ: "Europe/Oslo" } });
    const link = `switchboard://install?name=linked&config=${encodeURIComponent(config)}`;
    // What the desktop does with a link: start the app with it; the running one takes it.
    const second = run(BIN, [link], { env });
    assert.equal(second.status, 0, second.stderr);
    await b.$(dialog).waitForDisplayed({ timeout: 15000 });
    assert.equal(await textOf(b, tid("proposal-name")), "linked");
    // Every value the link brings is shown whole.
    assert.equal(await textOf(b, tid("proposal-command")), "TZ=Europe/Oslo uvx mcp-server-time");
    assert.equal(await b.$$(tid("server-item")).length, 0, "a link adds nothing by itself");
    await app.screenshot("link-proposal");
    await b.$(tid("confirm-ok")).click();
    const approval = await nativeWindow("Start the MCP server “linked”");
    pressIn(approval, "alt+d");
    const item = `${tid("server-item")}[data-name="linked"]`;
    await b.$(item).waitForDisplayed({ timeout: 10000 });
    assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");
    await openServer(b, item);
    assert.match(await textOf(b, `${item} ${tid("server-command")}`), /uvx mcp-server-time$/);
  } finally {
    await app.close();
  }
  const file = fs.readFileSync(path.join(home, "config", "mcp.json"), "utf8");
  assert.ok(!file.includes("sk-link-secret"), "the refused link left nothing");
  assert.ok(!file.includes("leaky"), "the refused link added nothing");
  assert.ok(file.includes("Europe/Oslo"), "what the link showed is what was added");
});

// Local models in the real window (issue 58): a local server's models with their details, a
// model fetched with its progress, and a real model (llama.cpp serving SmolLM2-135M) answering
// in a conversation and calling a tool it was given in its prompt.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import readline from "node:readline";
import { test } from "node:test";
import { cli, launch, openProviders, sendInNewConversation, tempHome, textOf, tid, ANSWER } from "./harness.mjs";

/** A scripted Ollama on 127.0.0.1 (a port it chose): two models, and a pull that streams its
 *  steps slowly until told to stop. */
async function scriptedOllama() {
  const pulls = [];
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const asked = body ? JSON.parse(body) : {};
    const json = (value, status = 200) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.url === "/api/tags") {
      return json({
        models: [
          { name: "llama3.2:latest", size: 2019393189, details: { family: "llama", parameter_size: "3.2B", quantization_level: "Q4_K_M" } },
          { name: "qwen2.5vl:3b", size: 3200000000, details: { family: "qwen25vl", parameter_size: "3.8B", quantization_level: "Q4_K_M" } },
          { name: "smollm2:135m", size: 270898672, details: { family: "llama", parameter_size: "134.52M", quantization_level: "F16" } },
        ],
      });
    }
    if (req.url === "/api/show") {
      const can = {
        "llama3.2:latest": ["completion", "tools"],
        "qwen2.5vl:3b": ["completion", "vision", "tools"],
        "smollm2:135m": ["completion"],
      }[asked.model] ?? ["completion"];
      return json({ capabilities: can, model_info: { "general.architecture": "llama", "llama.context_length": asked.model === "smollm2:135m" ? 8192 : 131072 } });
    }
    if (req.url === "/api/ps") return json({ models: [] });
    if (req.url === "/api/pull") {
      pulls.push(asked.model);
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const total = 522_993_664;
      res.write(`${JSON.stringify({ status: "pulling manifest" })}\n`);
      for (let i = 1; i <= 2000 && !res.destroyed; i++) {
        res.write(`${JSON.stringify({ status: "pulling 8934d96d3f08", digest: "sha256:8934d96d3f08", total, completed: Math.min(total, i * 4_000_000) })}\n`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return res.end();
    }
    json({ error: "not found" }, 404);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    pulls,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

test("a local server's models show their details and tool calling, and Get a model… shows its download", async () => {
  const ollama = await scriptedOllama();
  const home = tempHome("local-models");
  try {
    cli(home, ["provider", "add", "Local", "--kind", "ollama", "--base-url", ollama.origin, "--model", "llama3.2:latest"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await openProviders(b);
      const item = `${tid("provider-item")}[data-name="Local"]`;
      await b.$(`${item} ${tid("provider-models-toggle")}`).click();
      await b.waitUntil(async () => (await b.$$(`${item} ${tid("model-row")}`)).length === 3, {
        timeout: 20000,
        timeoutMsg: "the three models are not listed",
      });
      const facts = await b.execute(
        (sel) => [...document.querySelectorAll(sel)].map((el) => el.textContent.replace(/\s+/g, " ").trim()),
        `${item} ${tid("model-row")}`,
      );
      const smol = facts.find((f) => f.includes("smollm2:135m"));
      assert.match(smol, /271 MB/);
      assert.match(smol, /F16/);
      assert.match(smol, /No tool calling/);
      assert.match(facts.find((f) => f.includes("qwen2.5vl")), /Images/);
      // What the server said is what applies: the model without tool calling gets them by prompt.
      await b.waitUntil(
        async () =>
          b.execute(
            (sel) =>
              [...document.querySelectorAll(sel)].some(
                (row) => row.textContent.includes("smollm2") && /Learned/i.test(row.textContent),
              ),
            `${item} ${tid("model-row")}`,
          ),
        { timeout: 20000, timeoutMsg: "the learned tool calling is not shown" },
      );
      // The listing taught Rust the default model's window: the card says it, not the table's.
      await b.waitUntil(async () => /16,384 tokens\s*From the provider/i.test(await textOf(b, item)), {
        timeout: 20000,
        timeoutMsg: "the card does not show the window the listing gave",
      });
      await app.screenshot("local-models");

      await b.$(`${item} ${tid("provider-get-model")}`).click();
      await b.$(tid("pull-dialog")).waitForDisplayed();
      await b.$(tid("pull-name")).setValue("qwen3:0.6b");
      await b.$(tid("pull-get")).click();
      await b.waitUntil(async () => /MB of 523 MB/.test(await textOf(b, tid("pull-progress-line")).catch(() => "")), {
        timeout: 20000,
        timeoutMsg: "the download's progress is not shown",
      });
      await app.screenshot("local-model-download");
      await b.$(tid("pull-cancel")).click();
      await b.$(tid("pull-cancelled")).waitForDisplayed({ timeout: 20000 });
      assert.deepEqual(ollama.pulls, ["qwen3:0.6b"]);
      await b.keys("Escape");
      await b.$(tid("pull-dialog")).waitForDisplayed({ reverse: true, timeout: 10000 });

      // Ollama's keep_alive is a setting, kept where Rust keeps settings.
      await b.$(tid("nav-settings")).click();
      await b.$(tid("settings-nav-local-models")).click();
      const keep = b.$('[name="keep_alive"]');
      await keep.waitForDisplayed();
      await keep.setValue("30m");
      await b.$(tid("settings-save")).click();
      const settingsFile = path.join(home, "config", "settings.json");
      await b.waitUntil(() => fs.existsSync(settingsFile) && JSON.parse(fs.readFileSync(settingsFile, "utf8")).keep_alive === "30m", {
        timeout: 10000,
        timeoutMsg: "the keep-alive was not saved to settings.json",
      });
      await app.screenshot("settings-local-models");
    } finally {
      await app.close();
    }
  } finally {
    await ollama.close();
  }
});

/** llama.cpp's server with SmolLM2-135M (tests/peers/llama_server.py): its origin, and stop(). */
async function realEngine() {
  const child = spawn(path.resolve("tests/peers/.venv/bin/python"), [path.resolve("tests/peers/llama_server.py"), "--ctx", "4096", "--predict", "64"], {
    stdio: ["pipe", "pipe", "ignore"],
  });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the engine did not start in 60 s")), 60000);
    readline.createInterface({ input: child.stdout }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => reject(new Error(`the engine exited (${code})`)));
  });
  const origin = /^LISTENING (\S+)/.exec(line)?.[1];
  assert.ok(origin, line);
  return { origin, stop: () => child.kill() };
}

test("a real local model answers in the window", async () => {
  const engine = await realEngine();
  const home = tempHome("real-model");
  try {
    cli(home, ["provider", "add", "Llama", "--kind", "openai_compatible", "--base-url", `${engine.origin}/v1`, "--model", "SmolLM2-135M-Instruct"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await sendInNewConversation(b, "Name three colours.");
      await b.waitUntil(async () => ((await textOf(b, ANSWER).catch(() => "")) ?? "").trim().length > 10, {
        timeout: 60000,
        timeoutMsg: "the real model did not answer",
      });
      await b.$(tid("composer-send")).waitForExist({ timeout: 60000 });
      await app.screenshot("real-local-model");
    } finally {
      await app.close();
    }
  } finally {
    engine.stop();
  }
});

//! Entry point: applies the theme before the first paint, builds the window's
//! stores, then mounts the app (which hands the stores to its components). Once the window
//! has shown, it warms up what opening the first conversation would otherwise pay for
//! (warmup.ts, then warm-chat.ts). Links anywhere in the window go to Rust's `open_link`, never
//! navigate the window; a built window shows no page menu of WebKit's own. Composers' drafts are saved when the window goes out of use.

import { mount } from "svelte";
import "./app.css";
import App from "./app/App.svelte";
import { Stores } from "./app/stores";
import { ThemeController } from "./app/theme";
import { answeringLately, browserClock, FACES, warmUp } from "./app/warmup";
import { chatWarmup } from "./chat/warm-chat";
import { storesContext } from "./app/context";
import { keepLinksInside } from "./app/links";
import { openLink } from "./lib/ipc";

const theme = new ThemeController();
theme.set("system");

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");

// Drop the static boot frame from index.html (painted while this script loaded).
target.replaceChildren();
const stores = new Stores(theme);
mount(App, { target, props: { stores } });

// A link opens in the browser, after Rust's dialog shows its address; never in this window.
keepLinksInside(document, (href) => {
  openLink(href).catch((err: unknown) => stores.ui.report(err));
});

// A built window offers no page menu of WebKit's own (Back, Reload, Inspect Element): a text
// field keeps its menu (cut, copy, paste), a link its own (copy its address; opening it goes
// through the navigation guard), and selected text its copy.
if (import.meta.env.PROD) {
  document.addEventListener("contextmenu", (event) => {
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, [contenteditable], a[href]")) return;
    if (window.getSelection()?.toString()) return;
    event.preventDefault();
  });
}

// What a composer holds goes to Rust at once when the window goes out of use (hidden, left for
// another window, closed or reloaded), not only when typing rests.
const keepDrafts = (): void => stores.chats.flush();
addEventListener("pagehide", keepDrafts);
addEventListener("blur", keepDrafts);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "hidden") keepDrafts();
});

// After the first frame and the start-up's own work (reading the list, the providers).
// Last, a made-up chat is opened out of sight a few times (warm-chat.ts).
requestAnimationFrame(() =>
  setTimeout(() => {
    const answering = answeringLately(() => stores.chats.running);
    warmUp(document, browserClock, FACES, chatWarmup(document, storesContext(stores), answering), answering);
  }, 300),
);

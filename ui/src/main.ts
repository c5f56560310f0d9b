//! Entry point: applies the theme before the first paint, builds the window's
//! stores, then mounts the app (which hands the stores to its components).

import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { Stores } from "./lib/stores/stores";
import { ThemeController } from "./lib/theme";

const theme = new ThemeController();
theme.set("system");

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");

// Drop the static boot frame from index.html (painted while this script loaded).
target.replaceChildren();
mount(App, { target, props: { stores: new Stores(theme) } });

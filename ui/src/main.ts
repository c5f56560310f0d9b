//! Entry point: applies the theme before the first paint, then mounts the app.

import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { AppState } from "./lib/app-state.svelte";
import { ThemeController } from "./lib/theme";

const theme = new ThemeController();
theme.set("system");

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");

// Drop the static boot frame from index.html (painted while this script loaded).
target.replaceChildren();
mount(App, { target, props: { app: new AppState(theme) } });

// Runs before every test file: a clean <html> (no theme left over).
import { afterEach } from "vitest";

afterEach(() => {
  delete document.documentElement.dataset.theme;
});

// Turns off Zod's code generation before any Zod schema is built (the MCP Apps bridge's libraries
// build theirs as they load). Without it Zod tries `new Function("")` once to see whether it may
// generate code, which the window's CSP (script-src 'self', no 'unsafe-eval') refuses and reports
// as a violation. Imported first by mcpAppBridge.ts, so it runs before those libraries do.

import { config } from "zod/v4/core";

config({ jitless: true });

//! The renderers an answer may need that are loaded only when first asked for (code
//! highlighting: highlight.ts; math: math.ts), so the first paint never waits for them, and
//! what answers rendered without them do when they arrive. A renderer asked for before it is
//! here notes a miss and starts loading; text is shown plain meanwhile. When one arrives,
//! `lazyRenderers.generation` moves on, and only the answers whose rendering noted a miss
//! render again (markdown-blocks.ts): an answer with neither code nor math keeps its HTML.

/** Reactive: an answer rendered with a miss reads it, so that it renders again on an arrival. */
export const lazyRenderers = $state({ generation: 0 });

let misses = 0;

/** How many times, since the page loaded, a renderer was asked for before it was here. */
export function missCount(): number {
  return misses;
}

/** A renderer loaded on first use: `get` gives it, or null (noting a miss and loading it). */
export interface LazyRenderer<T> {
  /** the renderer if it is here; else null, after noting a miss and asking for it */
  get(): T | null;
  /** the renderer if it is here, else null; asks for nothing */
  peek(): T | null;
  /** loads it once; resolves when it is here (or could not be loaded: text stays plain) */
  load(): Promise<void>;
}

/** A renderer `load` brings; `what` names it in the warning logged if it cannot be loaded. */
export function lazyRenderer<T>(what: string, load: () => Promise<T>): LazyRenderer<T> {
  let ready: T | null = null;
  let loading: Promise<void> | null = null;
  const start = (): Promise<void> => {
    loading ??= load().then(
      (renderer) => {
        ready = renderer;
        lazyRenderers.generation += 1;
      },
      (err: unknown) => console.warn(`${what} could not be loaded; its text stays plain`, err),
    );
    return loading;
  };
  return {
    get() {
      if (ready === null) {
        misses += 1;
        void start();
      }
      return ready;
    },
    peek: () => ready,
    load: start,
  };
}

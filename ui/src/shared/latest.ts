//! Latest-request-wins guard for responses that may arrive out of order.
//! Knows nothing of IPC or the UI.

/**
 * Each `begin()` starts a request and returns a check that stays true only
 * while no later request has begun. Apply a response only when its check
 * still holds, so a slow, stale answer never overwrites a newer one.
 */
export class LatestOnly {
  #issued = 0;

  begin(): () => boolean {
    const ticket = ++this.#issued;
    return () => ticket === this.#issued;
  }
}

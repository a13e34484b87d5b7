/** Current time in Unix seconds. Injected everywhere time matters, so tests can move it. */
export type Clock = () => number;

export const systemClock: Clock = () => Math.floor(Date.now() / 1000);

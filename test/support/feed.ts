/**
 * The event feed as a test reads it. On PostgreSQL a page stops before any write transaction still
 * open on the server (docs/webhooks.md, "The feed"), and other test files share that server:
 * a test waits until the events it made are there instead of trusting the first page.
 */
export async function pageWith<Page>(read: () => Promise<Page>, done: (page: Page) => boolean, timeoutMs = 10_000): Promise<Page> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await read();
    if (done(page) || Date.now() > deadline) return page;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

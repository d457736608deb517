// Memory of this test process, for the tests that prove a stalled peer cannot make it grow.

const rssMiB = () => process.memoryUsage().rss / (1 << 20);

/** Samples this process's RSS every 200 ms while `body` runs; the largest growth in MiB. */
export async function rssGrowthDuring(body: () => Promise<unknown>): Promise<number> {
  const base = rssMiB();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB())), 200);
  try {
    await body();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMiB()) - base;
}

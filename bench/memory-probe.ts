/**
 * Loaded with `node --expose-gc --import` into the server whose memory the serve benchmark measures:
 * on SIGUSR2 it collects the garbage, so that what is left is what the process holds, and writes its
 * memory as one JSON line on stderr (`{"benchMemory": {...}}`), beside the request log.
 */
const collect = (globalThis as { gc?: () => void }).gc;

process.on('SIGUSR2', () => {
  if (!collect) throw new Error('memory-probe needs node --expose-gc');
  // Twice: objects that the first pass finalized are reclaimed by the second.
  collect();
  collect();
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(
    `${JSON.stringify({ benchMemory: { rss, heapTotal, heapUsed, external, arrayBuffers } })}\n`,
  );
});

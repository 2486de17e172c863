import { useEffect, useState } from 'react';

/**
 * Milliseconds since `since`, read from `now` on every render; a one-second tick re-renders so the
 * status bar's clock moves while no events arrive.
 */
export function useElapsed(since: number, now: () => number = Date.now): number {
  const [, setTicks] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTicks((n) => n + 1), 1000);
    // The clock alone must not keep the process alive once the caller is done.
    timer.unref();
    return () => clearInterval(timer);
  }, []);
  return Math.max(now() - since, 0);
}

/**
 * A model download's progress on stderr. In a terminal, one line redrawn in place: a bar, the percent,
 * the size done of the total, the speed and the time left. Elsewhere (a log file, a CI job) a plain
 * line at each tenth, so a log keeps a dozen lines for a download instead of thousands.
 */
import { formatSize, type DownloadProgress } from '../llm/local/download.js';

/** A terminal is redrawn at most this often: chunks arrive far faster than anyone reads. */
const REDRAW_MS = 100;

/** The bar's width, when the terminal has room for it. */
const MAX_BAR = 30;
const MIN_BAR = 10;

export interface ProgressDisplay {
  update: (progress: DownloadProgress) => void;
  /** Ends the redrawn line, leaving its last state on screen. */
  end: () => void;
}

/** A display for the download `label` names (`downloading hf:…`), on stderr. */
export function downloadProgress(label: string): ProgressDisplay {
  const stream = process.stderr;
  const tty = stream.isTTY === true;
  let first: { at: number; received: number } | undefined;
  let drawnAt = -Infinity;
  let tenths = -1;
  return {
    update: (progress) => {
      const now = performance.now();
      first ??= { at: now, received: progress.received };
      if (tty) {
        if (now - drawnAt < REDRAW_MS && progress.received < progress.total) return;
        drawnAt = now;
        const line = fitted(label, progress, first, now, (stream.columns || 80) - 1);
        // Our own text, written as is: writeErr would escape the carriage return that redraws the line.
        stream.write(`\r${line}\u001b[K`);
        return;
      }
      const tenth = progress.total === 0 ? 10 : Math.floor((progress.received * 10) / progress.total);
      if (tenths < 0) {
        const resumed = progress.resumedFrom > 0 ? `, resuming at ${formatSize(progress.resumedFrom)}` : '';
        stream.write(`${label} (${formatSize(progress.total)}${resumed})\n`);
        tenths = tenth;
      } else if (tenth > tenths) {
        tenths = tenth;
        stream.write(
          `${label}: ${tenth * 10}% (${formatSize(progress.received)} of ${formatSize(progress.total)})\n`,
        );
      }
    },
    end: () => {
      if (tty && drawnAt > -Infinity) stream.write('\n');
    },
  };
}

/**
 * `downloading hf:… [██████░░░░] 42% 462.0 MB/1.1 GB 12.3 MB/s 0:52 left` in `width` columns: the bar
 * shrinks first, then goes, then the label loses its start (the file name, at its end, stays).
 */
function fitted(
  label: string,
  progress: DownloadProgress,
  first: { at: number; received: number },
  now: number,
  width: number,
): string {
  const { received, total } = progress;
  const share = total === 0 ? 1 : received / total;
  const seconds = (now - first.at) / 1000;
  const speed = seconds > 0.5 ? (received - first.received) / seconds : 0;
  const rate = speed > 0 ? `${formatSize(speed)}/s` : '';
  const left = speed > 0 && received < total ? `${clock((total - received) / speed)} left` : '';
  const stats = [`${Math.floor(share * 100)}%`, `${formatSize(received)}/${formatSize(total)}`, rate, left]
    .filter(Boolean)
    .join(' ');
  const barWidth = Math.min(MAX_BAR, width - label.length - stats.length - 4);
  if (barWidth >= MIN_BAR) {
    const filled = Math.round(share * barWidth);
    return `${label} [${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}] ${stats}`;
  }
  const room = width - stats.length - 1;
  const shown = label.length <= room ? label : `…${label.slice(label.length - room + 1)}`;
  return `${shown} ${stats}`.slice(0, Math.max(1, width));
}

/** `0:42`, `12:05`, `1:02:03`. */
function clock(seconds: number): string {
  const s = Math.ceil(seconds);
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

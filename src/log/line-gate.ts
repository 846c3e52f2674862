/**
 * A log destination that shares the terminal with a progress bar: while a bar holds the last line,
 * each log line clears it, is written above, and the bar is drawn again, so a line never lands in
 * the middle of the bar.
 */
export interface LineGate {
  write(chunk: string): boolean;
  /** The bar owns the last line from now on; `redraw` draws it again. */
  hold(redraw: () => void): void;
  release(): void;
}

/** Carriage return, then erase the whole line (ANSI EL 2). */
const CLEAR_LINE = '\r\x1b[2K';

/** `stream`: stderr, or anything that takes lines (no Node type: the declarations load in Workers too). */
export function lineGate(stream: { write(chunk: string): boolean }): LineGate {
  let redraw: (() => void) | undefined;
  return {
    write(chunk) {
      if (!redraw) return stream.write(chunk);
      stream.write(CLEAR_LINE);
      const written = stream.write(chunk);
      redraw();
      return written;
    },
    hold(draw) {
      redraw = draw;
    },
    release() {
      redraw = undefined;
    },
  };
}

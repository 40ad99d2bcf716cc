"""Progress lines for long derivations (anything over two seconds shows its stages on stderr)."""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Report the stages of a derivation once it has run for more than ``after`` seconds.

    ``Progress(label, enabled)``; ``stage(name)`` marks the start of a stage. Nothing is printed for
    derivations that finish within ``after`` seconds, so fast (and cached) work stays silent.
    ``enabled="auto"`` reports when the stream is a terminal (an interactive session), not in
    scripts, pipes or logs.
    """

    def __init__(self, label, enabled, after=2.0, stream=None):
        self.stream = stream
        if enabled == "auto":
            target = stream or sys.stderr
            isatty = getattr(target, "isatty", None)
            enabled = bool(isatty and isatty())
        self.label, self.enabled, self.after = label, bool(enabled), float(after)
        self.t0 = time.perf_counter()
        self.pending = []
        self.shown = False

    def stage(self, name):
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.t0
        self.pending.append((name, elapsed))
        if elapsed >= self.after:
            for item, t in self.pending:
                self._print(f"{item} (at {t:.1f} s)")
            self.pending = []

    def done(self):
        if self.enabled and time.perf_counter() - self.t0 >= self.after:
            for item, t in self.pending:
                self._print(f"{item} (at {t:.1f} s)")
            self._print(f"done in {time.perf_counter() - self.t0:.1f} s")

    def _print(self, text):
        stream = self.stream or sys.stderr
        print(f"spectralkit: {self.label}: {text}", file=stream, flush=True)

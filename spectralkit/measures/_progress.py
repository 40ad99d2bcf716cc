"""Progress lines for long derivations (anything over a second shows its stages on stderr)."""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Report the stages of a derivation once it has run for more than ``after`` seconds.

    ``Progress(label, enabled)``; ``stage(name)`` marks the start of a stage. Nothing is printed for
    derivations that finish within ``after`` seconds, so fast (and cached) work stays silent.
    """

    def __init__(self, label, enabled, after=1.0, stream=None):
        self.label, self.enabled, self.after = label, bool(enabled), float(after)
        self.stream = stream
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

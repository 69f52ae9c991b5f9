"""The load governor: how many OCR workers a batch runs, following the host's 1-minute load average.

The envelope is the hard stop; the governor acts first and softly. Above its target (set below the envelope's
ceiling) it takes one worker away, never going below `min_workers`; once load has stayed at or under the target
for `settle_seconds` it gives one back, up to `max_workers` (the OCR slot cap). After any step it waits
`cooldown_seconds` before the next, because the load average lags what the workers do. `explain()` says in one
line how many workers the batch ran and why (cap, target, peak load, each step with its reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GovernorStep:
    """One change of the worker count, and why."""

    at_seconds: float  # since the governor started
    workers: int
    load: float
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"at_s": round(self.at_seconds, 1), "workers": self.workers, "load": round(self.load, 2),
                "reason": self.reason}


@dataclass
class Governor:
    target: float
    max_workers: int
    min_workers: int = 1
    cooldown_seconds: float = 15.0
    settle_seconds: float = 30.0
    started: float = 0.0
    workers: int = field(init=False)
    steps: list[GovernorStep] = field(default_factory=list)
    load_peak: float | None = field(default=None, init=False)  # the highest load read, None before any reading
    _last_step: float | None = field(default=None, init=False)
    _calm_since: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.max_workers < 1 or self.min_workers < 1:
            raise ValueError("a governor runs at least one worker")
        self.min_workers = min(self.min_workers, self.max_workers)
        self.workers = self.max_workers

    def observe(self, load: float | None, now: float) -> GovernorStep | None:
        """Take one load reading (None: unreadable, nothing changes) at monotonic time `now`; the step taken, if
        any. `workers` is the count to run from now on."""
        if load is None:
            return None
        self.load_peak = load if self.load_peak is None else max(self.load_peak, load)
        cooled = self._last_step is None or now - self._last_step >= self.cooldown_seconds
        if load > self.target:
            self._calm_since = None
            if cooled and self.workers > self.min_workers:
                return self._step(now, -1, load, f"load {load:.2f} > target {self.target:g}")
            return None
        if self._calm_since is None:
            self._calm_since = now
        calm = now - self._calm_since
        if cooled and self.workers < self.max_workers and calm >= self.settle_seconds:
            self._calm_since = now
            return self._step(now, +1, load, f"load <= target {self.target:g} for {calm:.0f} s")
        return None

    def explain(self) -> str:
        """Why the batch ran the workers it ran: the cap, the target, the peak load read and every step's reason."""
        head = f"up to {self.max_workers} OCR worker(s) (the slot cap), load target {self.target:g}"
        if self.load_peak is None:
            return f"{head}; load unreadable, no step"
        head += f", peak load {self.load_peak:.2f}"
        if not self.steps:
            if self.load_peak > self.target and self.workers == self.min_workers:
                return f"{head}; no step: already at the floor of {self.min_workers}"
            return f"{head}; no step"
        before = self.max_workers
        moves = []
        for step in self.steps:
            moves.append(f"{before}->{step.workers} at {step.at_seconds:.0f} s ({step.reason})")
            before = step.workers
        return f"{head}; " + "; ".join(moves)

    def _step(self, now: float, delta: int, load: float, reason: str) -> GovernorStep:
        self.workers += delta
        self._last_step = now
        step = GovernorStep(now - self.started, self.workers, load, reason)
        self.steps.append(step)
        return step

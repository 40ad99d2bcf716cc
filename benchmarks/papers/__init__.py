"""Reproduction of the indefinite-kernel random-feature papers' experiments on real data.

Modules: :mod:`.datasets` (offline loaders, splits, scaling), :mod:`.protocol` (kernels,
approximation-error and learning protocols), :mod:`.baselines` (the papers' biased estimator,
the paper's GORF directions, Nystroem, RBFSampler, Krein ridge), :mod:`.run` (the runner:
``python -m benchmarks.papers.run``), :mod:`.report` (``docs/benchmarks.md`` and plots) and
:mod:`.learning` (kernel learning in hyper-RKHS: Tables 1-3 of the hyper-RKHS paper).
"""

__all__ = ["datasets", "protocol", "baselines", "run", "report", "learning"]

"""Reproduction of the indefinite-kernel random-feature papers' experiments on real data.

Modules: :mod:`.datasets` (offline loaders, splits, scaling), :mod:`.protocol` (kernels,
approximation-error and learning protocols), :mod:`.baselines` (the papers' biased estimator,
the paper's GORF directions, Nystroem, RBFSampler, Krein ridge), :mod:`.run` (the runner:
``python -m benchmarks.papers.run``) and :mod:`.report` (``docs/benchmarks.md`` and plots).
"""

__all__ = ["datasets", "protocol", "baselines", "run", "report"]

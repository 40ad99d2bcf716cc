"""Shared test configuration: hypothesis profiles and seeds."""

import os

from hypothesis import HealthCheck, settings

# "ci": bounded and deterministic; "dev": the same, the default; "thorough": many more examples.
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

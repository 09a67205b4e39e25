import os

import numpy as np
import pytest

# numba compiles on first use; make hypothesis tolerate that first slow example
from hypothesis import settings

settings.register_profile("cdcore", deadline=None, max_examples=60, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cdcore"))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

"""VLPSO's settings as users give them: refused where they can only give nothing, fitted where
a default does not fit, errors that name the argument or job key to change."""

import pytest

from hpcswarm.errors import ParameterError
from hpcswarm.run.jobfile import read_job
from hpcswarm.selection.methods import algorithm_params


@pytest.mark.parametrize("algorithm", ["vlpso", "pso", "cso", "fsipso"])
def test_a_threshold_of_one_is_refused_as_it_selects_nothing(algorithm):
    assert algorithm_params(algorithm, {"theta": 0.999})["theta"] == 0.999
    with pytest.raises(ParameterError, match=r"'theta' must be in \[0, 1\), got 1.0"):
        algorithm_params(algorithm, {"theta": 1.0})
    with pytest.raises(ParameterError, match=r"'theta' must be in \[0, 1\)"):
        algorithm_params(algorithm, {"theta": "1"})


def test_a_job_with_a_threshold_of_one_names_the_key(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text('data = "builtin:srbct"\nalgorithm = "vlpso"\n[params]\ntheta = 1.0\n')
    with pytest.raises(ParameterError, match=r"params.theta.*\[0, 1\)"):
        read_job(path)

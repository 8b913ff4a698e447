"""Every gene-selection method by name: the swarms of the papers and the baselines.

This registry sits above :mod:`hpcswarm.swarm` and :mod:`hpcswarm.baselines` (the greedy
baselines run on the swarms' loop), so that neither package imports the other's registry.
"""

from hpcswarm.baselines.greedy import BASELINES
from hpcswarm.errors import ParameterError
from hpcswarm.params import did_you_mean
from hpcswarm.swarm.methods.bpso import BPSO, CBPSO
from hpcswarm.swarm.methods.cso import CSO
from hpcswarm.swarm.methods.fsipso import FSIPSO
from hpcswarm.swarm.methods.pso import PSO, PSOLS, PSOLSRG, PSORG
from hpcswarm.swarm.methods.subset_ranking import FSR, SFR
from hpcswarm.swarm.methods.vlpso.algorithm import VLPSO
from hpcswarm.swarm.params import resolve_params

ALGORITHMS = {
    cls.name: cls for cls in (PSOLSRG, CSO, PSO, BPSO, PSORG, PSOLS, CBPSO, FSIPSO, SFR, FSR,
                              VLPSO)
}
"""The swarm methods by their command-line names, in help order."""

METHODS = {**ALGORITHMS, **BASELINES}
"""Every method: the swarms, then the baselines (``all-genes``, ``sfs``, ``sbs``, ``lfs``,
``gsbs``: greedy searches on the same loop)."""


def algorithm_class(name):
    """The class of the method called ``name`` (:data:`METHODS`); ParameterError listing
    the known names."""
    if isinstance(name, str) and name in METHODS:
        return METHODS[name]
    hint = did_you_mean(name, METHODS) if isinstance(name, str) else ""
    raise ParameterError(f"unknown algorithm {name!r}{hint}; choose one of {', '.join(METHODS)}")


def algorithm_params(name, overrides=None):
    """Complete, checked parameters of ``name``: its paper defaults updated by ``overrides``.

    Parameters
    ----------
    name : str
    overrides : mapping of str to object, optional
        Native values or strings (``--param key=value``).

    Returns
    -------
    dict

    Raises
    ------
    ParameterError
        Unknown algorithm or key, ill-typed or out-of-range value, inconsistent values.
    """
    cls = algorithm_class(name)
    params = resolve_params(name, cls.PARAMS, overrides)
    cls.validate(params)
    return params

"""Algorithm names -> classes, and their checked parameters."""

from hpcswarm.errors import ParameterError
from hpcswarm.swarm.bpso import BPSO, CBPSO
from hpcswarm.swarm.cso import CSO
from hpcswarm.swarm.fsipso import FSIPSO
from hpcswarm.swarm.params import resolve_params
from hpcswarm.swarm.pso import PSO, PSOLS, PSOLSRG, PSORG
from hpcswarm.swarm.subset_ranking import FSR, SFR

#: Every method by its command-line name, in help order.
ALGORITHMS = {
    cls.name: cls for cls in (PSOLSRG, CSO, PSO, BPSO, PSORG, PSOLS, CBPSO, FSIPSO, SFR, FSR)
}


def algorithm_class(name):
    """The class of the method called ``name``; ParameterError listing the known names.

    Besides the swarms of :data:`ALGORITHMS`, the baselines of :mod:`hpcswarm.baselines`
    (``all-genes``, ``sfs``, ``sbs``, ``lfs``, ``gsbs``: greedy searches on the same loop).
    """
    # -- baselines (issue 8, hpcswarm/baselines): imported here, hpcswarm.baselines imports swarm
    from hpcswarm.baselines.greedy import BASELINES

    known = {**ALGORITHMS, **BASELINES}
    # -- end baselines
    try:
        return known[name]
    except KeyError:
        raise ParameterError(
            f"unknown algorithm {name!r}; choose one of {', '.join(known)}"
        ) from None


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

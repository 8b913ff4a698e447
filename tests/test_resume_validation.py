"""A resumed job checks every value of every snapshot in its checkpoint before it writes
anything: a damaged snapshot of any method (any field out of range, duplicated, of another
shape or out of step with the others) is one damaged-checkpoint line, exit status 2, and the
checkpoint is left byte for byte as it was."""

import numpy as np
import pytest

from cli_checks import assert_one_error, folder_state, run_cli
from search_snapshots import taken_at, through_checkpoint
from synthetic import SMALL, small_data

from hpcswarm.selection.methods import METHODS, algorithm_class
from hpcswarm.selection.search import run_search
from hpcswarm.selection.spec import SearchSpec
from hpcswarm.swarm.engine.loop import SearchHooks
from hpcswarm.swarm.engine.snapshot import SWARM_ARRAYS, check_snapshot, take_snapshot
from hpcswarm.swarm.engine.statetree import decode_state, encode_state

SNAPSHOT_ROUND = 2
"""The round whose snapshot the checkpoints hold (every method below plays it)."""

METHOD_PARAMS = {
    "pso": SMALL["pso"], "pso-lsrg": SMALL["pso-lsrg"], "cbpso": SMALL["cbpso"],
    "cso": SMALL["cso"], "fsipso": SMALL["fsipso"], "sfr": SMALL["sfr"], "fsr": SMALL["fsr"],
    "vlpso": {**SMALL["vlpso"], "n_iterations": 8, "change_after": 1},
    "sfs": {}, "sbs": {}, "lfs": {"n_ranked": 6},
}
"""The methods whose snapshots are damaged field by field, with settings that make each
play past :data:`SNAPSHOT_ROUND`."""

N_SAMPLES, N_GENES = 30, 24


def _big(spec):
    return 10 ** 9 if spec.kind == "i" else 1e9


def _spec_damage(spec, value):
    """A value no search holds, from what ``spec`` allows: a value twice where values are
    distinct, else one past the range, else another shape."""
    if spec.shape == ():
        if spec.high == np.inf:
            return type(value)(spec.low - 1)
        return type(value)(_big(spec))
    value = np.array(value)
    if spec.distinct:
        value[1] = value[0]
    elif spec.kind in "if" and spec.high != np.inf:
        value.flat[0] = _big(spec)
    else:
        value = value[..., :-1]
    return value


def _replace(key, damage):
    """A damage of the method state's ``key``."""
    def change(arrays, state):
        state[key] = damage(state[key])
    return change


def _mask_bit_flipped(arrays, state):
    """Particle 0's first gene selected or not against its position (its size follows)."""
    arrays["mask"][0, 0] = ~arrays["mask"][0, 0]
    arrays["size"][0] = arrays["mask"][0].sum()


def _set_beyond(name, where):
    """A damage of the swarm array ``name``: 0.5 at (particle 0, ``where(state)``)."""
    def change(arrays, state):
        arrays[name][0, where(state)] = 0.5
    return change


OTHER_DAMAGES = {
    "history": lambda rows: rows[:-1],
    "events": lambda events: events + [{"iteration": 10 ** 6, "event": "gbest_reset"}],
    "archive": lambda archive: {**archive, "maxsize": archive["maxsize"] + 1},
    "_seen": lambda seen: {key[:8] for key in seen},
    "front": lambda front: {**front, "n_genes": front["n_genes"] + 1},
    "subspaces": lambda parts: [parts[1], parts[0], *parts[2:]],
    "curve": lambda curve: curve + [2.0],
    "streams": lambda streams: (streams[0][:-1], streams[1]),
    "subsets": lambda subsets: subsets + subsets[-1:],
    "path": lambda path: path + path[:1],
    "path_fitness": lambda values: values + [0.5],
    "stopped": lambda stopped: "bored",
    "cached": lambda cached: "yes",
}
"""Damage of the method-state fields that no :class:`~hpcswarm.swarm.engine.snapshot.ArraySpec`
declares (records, sets, generators, lists)."""

EXTRA_DAMAGES = {
    "vlpso": {
        "division-past-the-divisions": _replace("division", lambda d: np.where(d == d.max(),
                                                                                 99, d)),
        "division-not-its-particles": _replace("division", lambda d: np.sort(d)[::-1].copy()),
        "lengths-of-another-division": _replace("lengths", lambda l: np.where(
            l == l.max(), l.min(), l)),
        "order-gene-twice": _replace("order", lambda o: np.concatenate([o[:1], o[:-1]])),
        "max-length-not-the-longest": _replace("max_length", lambda m: type(m)(m - 1)),
        "exemplar-past-a-length": _replace("exemplars", lambda e: np.where(e == -1, 0, e)),
        "pc-off-the-curve": _replace("pc", lambda pc: pc * 0.5),
        "length-changes-not-the-events": _replace("n_changes", lambda n: type(n)(n + 1)),
        "position-beyond-the-length": _set_beyond(
            "velocity", lambda state: state["order"][state["lengths"][0]]),
        "mask-not-its-position": _mask_bit_flipped,
    },
    "fsipso": {
        "phase-not-the-round's": _replace("phase", lambda p: type(p)(p + 1)),
        "active-not-the-sub-spaces": _replace("active", lambda a: a[:-1]),
        "pbest-outside-the-search-space": _set_beyond(
            "pbest_position", lambda state: np.setdiff1d(state["order"], state["active"])[0]),
    },
    "cso": {"losers-not-increasing": _replace("last_losers", lambda l: l[::-1].copy()),
            "mask-not-its-position": _mask_bit_flipped},
    "pso": {"mask-not-its-position": _mask_bit_flipped},
    "cbpso": {"mask-not-its-position": _mask_bit_flipped},
    "sfr": {"prefix-not-the-order's": _replace("prefix", lambda p: ~p)},
    "fsr": {"subset-not-the-last-record": _replace("subset", lambda s: ~s)},
    "sfs": {"mask-not-the-path": _replace("mask", lambda m: np.roll(m, 1)),
            "value-not-the-last-step": _replace("value", lambda v: v / 2 - 0.1)},
    "pso-lsrg": {"gbest-above-the-best": _replace("gbest_fitness", lambda v: 1.0)},
}
"""Values each in range but out of step with the rest of the snapshot (of the method state
and the swarm's arrays)."""


def _cases():
    cases = []
    for method in METHOD_PARAMS:
        cls = algorithm_class(method)
        specs = cls.state_values()
        if method not in ("sfr", "fsr", "sfs", "sbs", "lfs"):
            cases += [(method, "array", name) for name in SWARM_ARRAYS]
        cases += [(method, "state", name) for name in cls.state_names()]
        cases += [(method, "extra", name) for name in EXTRA_DAMAGES.get(method, {})]
        assert set(cls.state_names()) <= set(specs) | set(OTHER_DAMAGES), method
    return cases


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """Per method: a job file, its data, identity, tasks and a snapshot of round
    :data:`SNAPSHOT_ROUND` (made once; each test writes its own checkpoint)."""
    from hpcswarm.data import Dataset, load_dataset, write_dataset
    from hpcswarm.data.sources import dataset_sha256
    from hpcswarm.run.checkpoint import checkpoint_identity
    from hpcswarm.run.jobfile import read_job
    from hpcswarm.run.plan import draw_tasks

    folder = tmp_path_factory.mktemp("resume")
    X, y = small_data(3, N_SAMPLES, N_GENES)
    write_dataset(Dataset(X=X, y=y, class_names=["a", "b", "c"],
                          gene_names=[f"g{i}" for i in range(N_GENES)]), folder / "d.h5")
    made = {}
    for method, params in METHOD_PARAMS.items():
        lines = [f'data = "{folder / "d.h5"}"', f'algorithm = "{method}"',
                 'protocol = "unbiased"', "folds = 3", "runs = 1", "seed = 4", "[params]",
                 *(f"{key} = {str(value).lower()}" for key, value in params.items())]
        job_file = folder / f"{method}.toml"
        job_file.write_text("\n".join(lines) + "\n")
        job = read_job(job_file, [f"output={folder / method}.h5"])
        dataset = load_dataset(job.data)
        tasks, _ = draw_tasks(job, dataset.y)
        snapshot = taken_at(X, y, method, params, SNAPSHOT_ROUND, seed=7)
        made[method] = (job_file, job, checkpoint_identity(job, dataset_sha256(dataset)),
                        tasks, snapshot)
    return made


def _damaged(snapshot, kind, name, method):
    """``snapshot`` with its field ``name`` damaged (``kind``: a swarm array, a method-state
    field, or one of :data:`EXTRA_DAMAGES`)."""
    attributes = decode_state(snapshot["method_state"])
    arrays = {key: array.copy() for key, array in snapshot["arrays"].items()}
    state = attributes["search"]
    if kind == "array":
        arrays[name] = _spec_damage(SWARM_ARRAYS[name], arrays[name])
    elif kind == "extra":
        EXTRA_DAMAGES[method][name](arrays, state)
    elif name in OTHER_DAMAGES:
        state[name] = OTHER_DAMAGES[name](state[name])
    else:
        state[name] = _spec_damage(algorithm_class(method).state_values()[name], state[name])
    return {**snapshot, "arrays": arrays, "method_state": encode_state(attributes)}


@pytest.mark.slow
@pytest.mark.parametrize("method, kind, name", _cases(),
                         ids=[f"{m}-{k}-{n}" for m, k, n in _cases()])
def test_run_resume_refuses_a_damaged_snapshot_before_writing_anything(
        fresh, tmp_path, capsys, method, kind, name):
    from hpcswarm.run.checkpoint import write_checkpoint

    job_file, job, identity, tasks, snapshot = fresh[method]
    checkpoint = tmp_path / "job.checkpoint.h5"
    output = tmp_path / "out.h5"
    write_checkpoint(checkpoint, identity, len(tasks), {},
                     {1: (tasks[1], _damaged(snapshot, kind, name, method))})
    before, stored = folder_state(tmp_path), checkpoint.read_bytes()
    status, out, err = run_cli(capsys, "run", job_file, "--quiet", "--resume", "--set",
                               f"output={output}", "--set", f"checkpoint={checkpoint}")
    assert_one_error(status, err, f"{checkpoint}: damaged checkpoint", "--overwrite")
    assert checkpoint.read_bytes() == stored and folder_state(tmp_path) == before
    assert out == ""


@pytest.mark.parametrize("method", sorted(METHOD_PARAMS))
def test_the_check_passes_the_snapshot_a_search_takes(fresh, method):
    """The undamaged snapshot of every case above is accepted by the check the plan makes,
    so each refusal above is its damage's."""
    from hpcswarm.run.plan import snapshot_check

    _, job, _, _, snapshot = fresh[method]
    snapshot_check(job, N_GENES)(through_checkpoint(snapshot))


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_round_of_every_method_passes_the_check(method):
    """The snapshot of each round of a search, through a checkpoint file, passes
    :func:`check_snapshot` for the method, its parameters and genes: the checks refuse no
    state a search reaches (VLPSO through several length changes)."""
    X, y = small_data(3, N_SAMPLES, N_GENES)
    params = {**SMALL.get(method, {}), **METHOD_PARAMS.get(method, {})}
    checked = SearchSpec.build(method, params).params
    rounds = []

    def hook(search):
        check_snapshot(type(search), checked, N_GENES, through_checkpoint(take_snapshot(search)))
        rounds.append(search.iteration)

    run_search(X, y, method, params, seed=5, hooks=SearchHooks(checkpoint=hook))
    assert rounds == list(range(len(rounds))) and rounds


@pytest.mark.parametrize("steps", [(), (("zscore", None),), (("top_variance", 10),),
                                   (("top_variance", 40), ("top_anova", 7)),
                                   (("top_anova", 12), ("log2", 1.0), ("top_variance", 30))])
def test_the_genes_a_task_searches_are_known_before_any_fit(steps):
    """The check of a resumed snapshot needs the number of genes a task's search reads: the
    preprocessing's filters fix it before they are fitted."""
    from hpcswarm.selection.preprocess import fit, kept_genes

    X, y = small_data(3, N_SAMPLES, N_GENES)
    fitted, rows = fit(list(steps), X - X.min() + 1.0, y)
    assert kept_genes(steps, N_GENES) == fitted.genes.size == rows.shape[1]

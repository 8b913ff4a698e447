"""k-NN cross-validation fitness engine: folds, exact distances, incremental updates, archive.

The searches see it through :class:`Scorer` (built by :func:`make_scorer`, on the CPU or a
GPU, see :data:`DEVICES`) and :class:`SubsetFitness`.

No MPI here: the engine is a function of plain arrays; the swarm and the protocols
distribute its calls.

May import: :mod:`hpcswarm.store` (below it, not used) and the root's foundation: errors,
and :mod:`hpcswarm.comm` for its block partitions only. Never the parameters, the data layer,
the swarm or anything above: the engine is a function of plain arrays.
"""

from hpcswarm.fitness.archive import DEFAULT_ARCHIVE_SIZE, Archive
from hpcswarm.fitness.evaluator import KnnEvaluator, score_split
from hpcswarm.fitness.folds import FoldWarning, fold_rule, make_folds
from hpcswarm.fitness.genemajor import GeneMajor
from hpcswarm.fitness.gpu import DeviceScorer
from hpcswarm.fitness.incremental import DistanceState
from hpcswarm.fitness.objectives import OBJECTIVES, WORST_FITNESS, make_objective
from hpcswarm.fitness.score import Score
from hpcswarm.fitness.scorer import DEVICES, CachedState, Scorer, make_scorer
from hpcswarm.fitness.subset import SubsetFitness

__all__ = [
    "Archive", "CachedState", "DEFAULT_ARCHIVE_SIZE", "DEVICES", "DeviceScorer", "DistanceState",
    "FoldWarning", "GeneMajor", "KnnEvaluator", "OBJECTIVES", "Score", "Scorer", "SubsetFitness",
    "WORST_FITNESS", "fold_rule", "make_folds", "make_objective", "make_scorer",
    "score_split",
]

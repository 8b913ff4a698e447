"""Baselines of the papers on the same fitness engine: all genes, greedy wrappers, PCA + k-NN.

* :mod:`hpcswarm.baselines.greedy`: ``all-genes``, ``sfs``, ``sbs``, ``lfs``, ``gsbs``, search
  algorithms on the swarms' loop (``run_search(X, y, "sfs")``, ``hpcswarm run --algorithm sfs``).
* :mod:`hpcswarm.baselines.pca`: PCA + k-NN keeping 95 % of the variance (Gu et al. 2018), not a
  gene selector, hence its own evaluation functions, PCA fitted on training rows only.

May import: :mod:`hpcswarm.swarm` (the greedy baselines run on its loop) and every package
below it (:mod:`hpcswarm.data`, :mod:`hpcswarm.datasets`, :mod:`hpcswarm.params`,
:mod:`hpcswarm.fitness`, :mod:`hpcswarm.store`, the root's foundation). Never the method
registry (:mod:`hpcswarm.selection`) or anything above.

>>> from hpcswarm.baselines import BASELINES
>>> sorted(BASELINES)
['all-genes', 'gsbs', 'lfs', 'sbs', 'sfs']
"""

from hpcswarm.baselines.greedy import BASELINES, GSBS, LFS, SBS, SFS, AllGenes, GreedySearch
from hpcswarm.baselines.pca import PcaKnnResult, fit_pca, pca_knn_cv, pca_knn_split

__all__ = ["AllGenes", "BASELINES", "GSBS", "GreedySearch", "LFS", "PcaKnnResult", "SBS", "SFS",
           "fit_pca", "pca_knn_cv", "pca_knn_split"]

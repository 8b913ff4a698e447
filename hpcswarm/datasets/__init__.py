"""Example datasets bundled with hpcswarm, as hpcswarm HDF5 files (use ``builtin:NAME``).

``srbct.h5``
    SRBCT (Khan et al., Nature Medicine 2001): 83 samples x 2308 genes, float64 raw values,
    classes BL 11, EWS 29, NB 18, RMS 25; all-genes 1-NN leave-one-out accuracy 76/83. Made by
    hpcswarm's own converter from ``SRBCT.arff`` of the supplementary data of Mramor et al.,
    Bioinformatics 23(16), 2007 (mirrored in the GitHub repository
    mmayo888/GeneExpressionDatasets, ``biolab/arff/02_SRBCT.arff``), run in the folder holding
    that file so that the ``source`` attribute records just its name::

        python -m hpcswarm convert SRBCT.arff hpcswarm/datasets/srbct.h5

    The file's ``source_sha256`` attribute is the SHA-256 of that ARFF file.

:mod:`hpcswarm.datasets.panel`
    The generated design sets (``panel:NAME``): many small classes, parity, correlated
    modules, heavy imbalance, each drawn from a fixed seed with its planted genes known.

May import: nothing of hpcswarm but the root's foundation (errors, system, comm); it uses none
of it. The data layer (:mod:`hpcswarm.data.sources`) reads it.
"""

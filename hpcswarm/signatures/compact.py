"""Whether a signature is compact, and what to say when it is not.

A wrapper search stops where its fitness stops improving, and on a microarray many large
subsets reach the best inner accuracy: a small swarm or few rounds return one of them.
The signatures these methods publish hold tens of genes at most (Tran et al. 2016, Table 5:
15 genes on average on SRBCT with PSO-LSRG; Tran, Xue & Zhang 2019 report tens of genes
for VLPSO), so a subset above :data:`COMPACT_GENES` genes is called far from compact: its
inner accuracy says nothing about the genes it could do without, and a refinement or a
longer search finds a smaller subset of the same accuracy.
"""

COMPACT_GENES = 50
"""The most genes a compact signature holds (above it, :func:`compact_note` speaks)."""


def compact_note(n_genes, inner_accuracy, remedy):
    """One line saying that a subset of ``n_genes`` genes is far from compact, or None.

    Parameters
    ----------
    n_genes : float
        Genes of the subset (a mean over tasks allowed).
    inner_accuracy : float or None
        Its inner validation accuracy, in [0, 1], shown when known.
    remedy : str
        What gives a compact one, in the caller's words (a keyword, a job key).

    Returns
    -------
    str or None
        None when ``n_genes <= COMPACT_GENES``.
    """
    if n_genes <= COMPACT_GENES:
        return None
    accuracy = "" if inner_accuracy is None else f" at inner accuracy {inner_accuracy:.2f}"
    return (f"{n_genes:.4g} genes{accuracy} is far from a compact signature (more than "
            f"{COMPACT_GENES} genes: a small swarm or few rounds stop at a large subset); "
            f"{remedy}")

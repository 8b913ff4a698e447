"""``repr(Selection)`` is one short line, whatever the signature's size."""

import numpy as np

from hpcswarm.api import REPR_GENES, Selection


def _selection(n_genes):
    names = [f"gene{i}" for i in range(n_genes)]
    return Selection(genes=np.arange(n_genes), gene_names=names, inner_accuracy=0.987654,
                     chosen_from="search", front={}, history=[], algorithm="vlpso", params={},
                     settings={"random_state": 0}, selector=None)


def test_a_large_signature_shows_its_first_genes_and_how_many_more():
    text = repr(_selection(456))
    assert text == ("Selection(vlpso: 456 genes ['gene0', 'gene1', 'gene2', 'gene3', 'gene4', "
                    "... 451 more], inner_accuracy=0.9877, chosen_from='search')")
    assert "gene5'" not in text and "\n" not in text


def test_a_small_signature_shows_every_gene():
    assert repr(_selection(REPR_GENES)).count("'gene") == REPR_GENES
    assert "more" not in repr(_selection(2))

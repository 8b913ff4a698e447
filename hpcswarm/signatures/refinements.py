"""The registry of refinements: what turns a task's search into the signature it reports.

One row per rule (:class:`Refinement`), naming its kind, what it reads, its report label and
the function that applies it; the job key ``refine``, the selector's ``refine``, the report's
row names and what :func:`hpcswarm.selection.search.run_search` runs derive from
:data:`REFINEMENTS`. The functions live with their kind (:mod:`hpcswarm.signatures.refine`,
:mod:`hpcswarm.signatures.relevance`, :mod:`hpcswarm.signatures.saturation`,
:mod:`hpcswarm.signatures.subsample`); a row names its
function as ``module:name``, imported only when the rule runs, so that reading a results file
never loads the engine. How a rule of each kind is called is one row of :data:`KINDS`.

The kinds:

``trim``
    Trims the search's own subset on the task's training samples (pruning,
    :mod:`hpcswarm.signatures.refine`; the subset ranked by relevance,
    :mod:`hpcswarm.signatures.relevance`). The signature is a part of what the swarm selected.
    Reported as ``NAME+RULE``.
``saturation``
    Keeps the search's subset unless it classifies every inner prediction correctly, when the
    fitness has no signal left but the size; then chooses the signature anew by the 1-NN
    margin from the genes VLPSO's first division searches, or exchanges the subset's genes
    for them at the same size
    (:mod:`hpcswarm.signatures.saturation`). Reported as ``NAME+RULE``.
``swarm``
    Chooses among the swarm's own answers, the search's subset and its particles' personal
    bests at the search's end, and for some rules the ANOVA filter's genes of the same size, by
    a validation of its own (:mod:`hpcswarm.signatures.purity`). Reported as ``NAME+RULE``.
``rank``
    Ranks every gene by a filter statistic and cuts the ranking by the inner validation; it
    reads no subset, so two different searches on the same fold give the same genes. It is a
    filter, not the swarm's answer, and is reported as a baseline row beside ``All`` and
    ``PCA-kNN`` under its own label, never as ``NAME+RULE``.
``subsample``
    Runs the same search again on halves of the training samples and combines what they
    selected (:mod:`hpcswarm.signatures.subsample`). Reported as ``NAME+RULE``.
"""

import importlib
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Kind:
    """One kind of rule of :data:`REFINEMENTS`.

    Attributes
    ----------
    name : str
    summary : str
        What a rule of this kind does, as the docs and ``--help`` say it.
    call : callable
        ``(rule, inputs) -> Refined``: a rule of this kind applied to the inputs of a task
        (:class:`hpcswarm.selection.search.RefineInputs`).
    """

    name: str
    summary: str
    call: Callable


KINDS = {kind.name: kind for kind in (
    Kind("trim", "trims the search's subset",
         lambda rule, inputs: rule(inputs.scorer, inputs.data, inputs.y, inputs.mask)),
    Kind("saturation", "keeps the search's subset unless it classifies every inner "
         "prediction, then chooses by the margin, anew or by exchanges at its size",
         lambda rule, inputs: rule(inputs.scorer, inputs.data, inputs.y, inputs.mask,
                                   inputs.params, inputs.max_genes)),
    Kind("swarm", "chooses among the search's subset and its particles' personal bests (and, "
         "for some rules, the ANOVA filter's genes of the same size)",
         lambda rule, inputs: rule(inputs.scorer, inputs.data, inputs.y, inputs.mask,
                                   inputs.personal_bests(), inputs.params, inputs.root,
                                   inputs.grid)),
    Kind("rank", "ranks every gene by a filter statistic (reads no subset; a baseline)",
         lambda rule, inputs: rule(inputs.scorer, inputs.data, inputs.y)),
    Kind("subsample", "runs the search again on subsamples of the training samples",
         lambda rule, inputs: rule(inputs.scorer, inputs.data, inputs.y, inputs.selections())),
)}
"""Every kind of rule, by name."""


@dataclass(frozen=True)
class Refinement:
    """One rule of :data:`REFINEMENTS`.

    Attributes
    ----------
    name : str
        The value of ``refine``.
    kind : {"trim", "saturation", "swarm", "rank", "subsample"}
        See the module notes (:data:`KINDS`).
    needs : tuple of str
        What the rule reads besides the scorer: ``"subset"`` (the search's selected
        genes), ``"samples"`` (the training values and labels), ``"searches"`` (further
        searches of the same spec on subsamples), ``"settings"`` (the search's parameters
        and size cap), ``"swarm"`` (its particles' personal bests and the task's seed).
    summary : str
        One sentence for ``--help`` and the docs.
    rule : str
        The function that applies it, ``module:name``, called as its kind says
        (:attr:`Kind.call`) and returning a :class:`~hpcswarm.signatures.refine.Refined`.
    baseline_label : str
        The report row of a ``rank`` rule ("" for the other kinds, reported as
        ``NAME+RULE``).
    """

    name: str
    kind: str
    needs: tuple
    summary: str
    rule: str
    baseline_label: str = ""

    def function(self):
        """The function :attr:`rule` names (its module imported now)."""
        module, _, name = self.rule.partition(":")
        return getattr(importlib.import_module(module), name)

    def apply(self, inputs):
        """This rule applied to a task's ``inputs``
        (:class:`hpcswarm.selection.search.RefineInputs`): a ``Refined``."""
        return KINDS[self.kind].call(self.function(), inputs)

    def row_label(self, method_label):
        """The report row of this rule applied to the method labelled ``method_label``."""
        return self.baseline_label or f"{method_label}+{self.name}"


REFINEMENTS = {rule.name: rule for rule in (
    Refinement("prune", "trim", ("subset",),
               "removes genes one at a time while the inner accuracy does not drop",
               "hpcswarm.signatures.refine:prune_subset"),
    Refinement("prune-margin", "trim", ("subset", "samples"),
               "the same backward path with ties broken by the training samples' 1-NN "
               "margins, keeping the best subset of the path",
               "hpcswarm.signatures.refine:prune_margin"),
    Refinement("prune-compact", "trim", ("subset", "samples"),
               "keeps the subset of that path with the largest margin relative to the "
               "samples' spread",
               "hpcswarm.signatures.refine:prune_compact"),
    Refinement("relevance-subset", "trim", ("subset", "samples"),
               "ranks the search's genes one class against the rest, round robin over the "
               "classes, and keeps the shortest prefix that classifies the training samples "
               "best",
               "hpcswarm.signatures.relevance:relevance_subset"),
    Refinement("relevance-subset-1se", "trim", ("subset", "samples"),
               "the same ranking cut at the shortest prefix within one standard error of the "
               "best inner count (the one-standard-error rule)",
               "hpcswarm.signatures.relevance:relevance_subset_1se"),
    Refinement("saturation-margin", "saturation", ("subset", "samples", "settings"),
               "keeps the search's subset unless it classifies every inner prediction; then "
               "walks prune-compact's path from the genes of VLPSO's first division and keeps "
               "its point of largest relative margin that still does",
               "hpcswarm.signatures.saturation:saturation_margin"),
    Refinement("saturation-exchange", "saturation", ("subset", "samples", "settings"),
               "keeps the search's subset unless it classifies every inner prediction; then "
               "exchanges its genes one for one with genes of VLPSO's first division towards "
               "the largest relative margin, keeping its size and every inner prediction",
               "hpcswarm.signatures.saturation:saturation_exchange"),
    Refinement("neighbour-purity", "swarm", ("subset", "samples", "swarm", "settings"),
               "validates the search's subset and every particle's personal best again on a "
               "fresh split of the training samples and keeps the one with the most correct "
               "predictions, then the most same-class samples among each held-out sample's 5 "
               "nearest, then the fewest genes",
               "hpcswarm.signatures.purity:neighbour_purity"),
    Refinement("neighbour-purity-1se", "swarm", ("subset", "samples", "swarm", "settings"),
               "validates the same candidates on the same fresh split and keeps the one "
               "with the fewest genes among those whose correct predictions and same-class "
               "neighbours are each within one standard error of the purest's",
               "hpcswarm.signatures.purity:neighbour_purity_1se"),
    Refinement("neighbour-purity-anova", "swarm", ("subset", "samples", "swarm", "settings"),
               "the same choice with, beside the swarm's answers, the genes of highest ANOVA "
               "F on the training samples at each of their sizes as candidates",
               "hpcswarm.signatures.purity:neighbour_purity_anova"),
    Refinement("neighbour-purity-1se-anova", "swarm", ("subset", "samples", "swarm", "settings"),
               "neighbour-purity-1se's choice, replaced by the genes of highest ANOVA F at its "
               "size where the fresh split gives those more correct predictions, or as many "
               "and more same-class neighbours",
               "hpcswarm.signatures.purity:neighbour_purity_1se_anova"),
    Refinement("relevance", "rank", ("samples",),
               "a filter, not the search's answer: every gene ranked one class against the "
               "rest, round robin over the classes, cut where the inner validation is best; "
               "reported as the baseline row 'Welch-RR filter'",
               "hpcswarm.signatures.relevance:relevance_prefix",
               baseline_label="Welch-RR filter"),
    Refinement("stability", "subsample", ("samples", "searches"),
               "repeats the search (then prune-compact) on 'subsamples' halves of the "
               "training samples and keeps the prefix of the genes ranked by how often they "
               "were kept that the inner validation cannot tell from the best",
               "hpcswarm.signatures.subsample:stability_prefix"),
    Refinement("consensus", "subsample", ("samples", "searches"),
               "prunes the union of those halves' genes by prune-compact",
               "hpcswarm.signatures.subsample:consensus_prune"),
)}
"""Every refinement by its ``refine`` value."""

CHOICES = ("none", *REFINEMENTS)
"""The values of ``refine`` (``"none"``: the search's subset as it is)."""

SUBSAMPLING = tuple(name for name, rule in REFINEMENTS.items() if "searches" in rule.needs)
"""The refinements that run further searches on subsamples (they read ``subsamples``)."""

SIGNATURE_METHOD = "vlpso"
"""The search that makes the default signature: :func:`hpcswarm.select`'s method. The rule
fixed before the design panel was measured (``docs/signatures.md``) kept the candidates never
significantly below PSO-LSRG on any panel set (per-fold paired one-sided Wilcoxon, alpha
0.05) and took the smallest mean size among them: VLPSO (Tran, Xue & Zhang 2019)."""

SIGNATURE_REFINE = "neighbour-purity-1se-anova"
"""The refinement that turns :data:`SIGNATURE_METHOD`'s search into the default signature:
the smallest of its subset and its particles' personal bests that a fresh split of the
training samples cannot tell from the purest, replaced by the ANOVA filter's genes at its
size where the split ranks those first (:mod:`hpcswarm.signatures.purity`). The tenth rule of
``docs/signatures.md``, fixed before its runs, chose it on twenty-four fresh generated sets
and confirmed it on the ten panel sets against scikit-learn's selectors; before it, the
signature was VLPSO's subset as it is."""

DEFAULT = "relevance-subset-1se"
"""The refinement of the final signature of a search of any other method (a job or a call
that names its method): among the candidates that read that search's subset, the one the
same rule ranks first."""


def final_refine(algorithm):
    """The final signature's refinement of a search by ``algorithm`` when none is named:
    :data:`SIGNATURE_REFINE` for :data:`SIGNATURE_METHOD`, :data:`DEFAULT` for the other
    methods."""
    return SIGNATURE_REFINE if algorithm == SIGNATURE_METHOD else DEFAULT


def final_refine_doc():
    """The sentence of the help texts that says :func:`final_refine`'s rule."""
    return (f"'{SIGNATURE_REFINE}' for method '{SIGNATURE_METHOD}' (the default signature), "
            f"'{DEFAULT}' for the other methods")


def row_label(name, method_label):
    """The report row of refinement ``name`` of the method ``method_label`` (a rule unknown
    to this version, read from an older or newer file, is shown as ``NAME+RULE``)."""
    rule = REFINEMENTS.get(name)
    return rule.row_label(method_label) if rule else f"{method_label}+{name}"


def doc():
    """The ``refine`` setting's help text, one clause per rule."""
    return ("after each search: " + "; ".join(f"'{rule.name}' ({rule.kind}) {rule.summary}"
                                             for rule in REFINEMENTS.values())
            + f"; reported as its own row (NAME+RULE, or the filter's baseline row); "
              f"default in the final-signature protocol, select() and the selector: "
              f"{final_refine_doc()}; else none")

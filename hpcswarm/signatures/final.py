"""The final signature of a job: one search on every sample, beside the cross-validated
estimate of the method that produced it and the stability of the per-fold selections.

The ``final-signature`` protocol (:mod:`hpcswarm.run.protocols`) runs ``unbiased``'s outer
cross-validation and then the same method (and refinement) once more on all samples. The two
answer different questions (Ambroise & McLachlan 2002):

- the outer folds estimate how well the *method* generalises: each fold's search never saw
  its test fold, so their pooled test accuracy is unbiased;
- the extra search gives the *signature* to publish, selected with every sample. No sample
  is left to test it on, so its own inner cross-validation accuracy is optimistic (the
  biased figure of Tran et al. 2016, Experiment I) and is shown only beside the estimate.

How solid each gene of the signature is comes from the folds: its selection frequency is the
fraction of the outer folds' selections (refined subsets when the job refines) that hold it.
The stability of those selections is :func:`hpcswarm.signatures.stability.stability_summary`
(Kuncheva's and Jaccard's indices within runs and between runs; Nogueira et al.'s 2018
estimator with its confidence interval).

With a refinement by subsample searches (``stability``, ``consensus``:
:mod:`hpcswarm.signatures.subsample`) each gene also carries its *subsample frequency*: the fraction
of the searches on halves of all the samples that kept it, how solid the gene is within the
signature's own selection.

Layout of ``/final`` in a results file (``encoding-type`` ``hpcswarm-final-signature``):
datasets ``genes`` (the signature, int64 columns), ``search_genes`` (the search's own subset),
``frequency`` (float64, per signature gene) and, with a subsample refinement,
``subsample_frequency`` (float64, per signature gene); attributes ``refine``, ``spawn_key``,
``inner_correct``, ``inner_total``, ``estimate`` and ``stability`` (JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hpcswarm.signatures.genelist import gene_table
from hpcswarm.signatures.stability import stability_summary
from hpcswarm.store.encoding import check_tag, decode_value, json_text, tag
from hpcswarm.store.reading import checked_read, parse_json
from hpcswarm.store.records import TaskRecord

ENCODING = ("hpcswarm-final-signature", "0.1.0")


@dataclass(frozen=True)
class FinalSignature:
    """The signature to publish, with the estimate and stability it is reported beside.

    Attributes
    ----------
    genes : ndarray of int64
        The signature: the refined subset of the search on all samples (its own subset
        without a refinement), 0-based columns of the dataset.
    search_genes : ndarray of int64
        The subset the search on all samples selected, before any refinement.
    refine : str
        The refinement (``"none"`` without one).
    spawn_key : tuple of int
        The search's seed under the job seed.
    inner_correct, inner_total : int
        The signature's inner cross-validation counts on all samples (optimistic).
    frequency : ndarray of float64
        Per signature gene, the fraction of the outer folds' selections holding it.
    estimate : dict
        The outer cross-validation's test accuracy of the same rule over runs
        (:func:`hpcswarm.results.files.describe`'s keys) and the row it comes from (``row``).
    stability : dict
        :func:`hpcswarm.signatures.stability.stability_summary` of the outer folds' selections.
    subsample_frequency : ndarray of float64 or None
        Per signature gene, the fraction of the subsample searches on all samples that kept
        it (refinements by subsample searches only).
    """

    genes: np.ndarray
    search_genes: np.ndarray
    refine: str
    spawn_key: tuple
    inner_correct: int
    inner_total: int
    frequency: np.ndarray
    estimate: dict
    stability: dict
    subsample_frequency: np.ndarray = None

    @property
    def inner_accuracy(self) -> float:
        return self.inner_correct / self.inner_total

    def to_hdf5(self, parent) -> None:
        """Write the group ``final`` under ``parent`` (see the module notes)."""
        group = parent.create_group("final")
        tag(group, ENCODING)
        for name in ("genes", "search_genes"):
            group.create_dataset(name, data=np.asarray(getattr(self, name), dtype=np.int64))
        group.create_dataset("frequency", data=np.asarray(self.frequency, dtype=np.float64))
        if self.subsample_frequency is not None:
            group.create_dataset("subsample_frequency",
                                 data=np.asarray(self.subsample_frequency, dtype=np.float64))
        group.attrs["refine"] = self.refine
        group.attrs["spawn_key"] = np.asarray(self.spawn_key, dtype=np.int64)
        group.attrs["inner_correct"] = self.inner_correct
        group.attrs["inner_total"] = self.inner_total
        group.attrs["estimate"] = json_text(self.estimate)
        group.attrs["stability"] = json_text(self.stability)

    @classmethod
    def from_hdf5(cls, group, path="", n_genes=None) -> FinalSignature:
        """Read the group written by :meth:`to_hdf5`; with ``n_genes`` (the results file's
        genes), its gene lists may declare at most that many genes, and its frequencies one
        per signature gene (checked before they are read)."""
        check_tag(group, ENCODING, path, "final signature")
        attrs = {key: decode_value(value) for key, value in group.attrs.items()}
        lengths = (None if n_genes is None else range(n_genes + 1),)

        def read(name, shape, kinds):
            return checked_read(group[name], f"'final/{name}'", shape, kinds)

        genes = read("genes", lengths, "iu").astype(np.int64)
        return cls(genes, read("search_genes", lengths, "iu").astype(np.int64),
                   str(attrs["refine"]), tuple(int(v) for v in attrs["spawn_key"]),
                   int(attrs["inner_correct"]), int(attrs["inner_total"]),
                   read("frequency", genes.shape, "f").astype(np.float64),
                   parse_json(attrs["estimate"]), parse_json(attrs["stability"]),
                   read("subsample_frequency", genes.shape, "f").astype(np.float64)
                   if "subsample_frequency" in group else None)

    def as_json(self, gene_names: Sequence[str]) -> dict:
        """Plain values for the JSON summary and the report: each gene by name, with its
        column, fold frequency and (subsample refinements) subsample frequency."""
        subsample = self.subsample_frequency
        return {"size": int(self.genes.size), "refine": self.refine,
                "genes": [{"name": str(gene_names[g]), "index": int(g), "frequency": float(f)}
                          | ({} if subsample is None
                             else {"subsample_frequency": float(subsample[i])})
                          for i, (g, f) in enumerate(zip(self.genes, self.frequency))],
                "search_size": int(self.search_genes.size),
                "inner_accuracy": self.inner_accuracy, "estimate": self.estimate,
                "stability": self.stability, "spawn_key": list(self.spawn_key)}

    def gene_list(self, gene_names: Sequence[str]) -> str:
        """The signature as a gene list (:func:`hpcswarm.signatures.genelist.gene_table`: ``gene``,
        ``feature``, ``column``, then ``fold_frequency``, and ``subsample_frequency`` with a
        subsample refinement), most often selected first (subsample frequency first when
        there is one); ``evaluate --genes`` reads it. The method's estimate is in the JSON
        summary and the report, not in the list, so that the list pastes as a table."""
        subsample = self.subsample_frequency
        order = (np.lexsort((self.genes, -self.frequency)) if subsample is None
                 else np.lexsort((self.genes, -self.frequency, -subsample)))
        columns = ("fold_frequency",) + (() if subsample is None else ("subsample_frequency",))
        return gene_table(columns, [
            (gene_names[self.genes[i]], self.genes[i], f"{self.frequency[i]:.4f}",
             *(() if subsample is None else (f"{subsample[i]:.4f}",))) for i in order])


def final_signature(final: TaskRecord, folds: Sequence[TaskRecord], n_genes: int,
                    estimate: dict) -> FinalSignature:
    """The :class:`FinalSignature` of a job from its records.

    Parameters
    ----------
    final : TaskRecord
        The search on all samples (its refined subset, when the job refines, is the signature).
    folds : sequence of TaskRecord
        The outer cross-validation's tasks.
    n_genes : int
    estimate : dict
        The cross-validated test accuracy over runs of the rule the signature follows (the
        refined row with a refinement), with its row's name under ``row``.
    """
    refined = final.refined is not None
    genes = np.asarray(final.refined.genes if refined else final.genes, dtype=np.int64)
    inner = ((final.refined.train_correct, final.refined.train_total) if refined
             else (final.train_correct, final.train_total))
    selections = [np.asarray(t.refined.genes if refined else t.genes, dtype=np.int64)
                  for t in folds]
    member = np.zeros((len(selections), n_genes), dtype=bool)
    for row, selected in enumerate(selections):
        member[row, selected] = True
    frequency = member[:, genes].mean(axis=0) if selections else np.zeros(genes.size)
    return FinalSignature(genes, np.asarray(final.genes, dtype=np.int64),
                          final.refined.method if refined else "none", tuple(final.spawn_key),
                          int(inner[0]), int(inner[1]), frequency, estimate,
                          stability_summary(selections, [t.run for t in folds], n_genes),
                          final.refined.frequency if refined else None)

"""Stored settings of an earlier version, read as the behaviour they had.

A method that gains a parameter changes no stored file: a checkpoint's identity or a results
file's ``params`` written before the parameter existed simply lack it. Every reader fills it
in with the value that reproduces what the run did then (:data:`LATER_PARAMS`), so that such a
checkpoint resumes under a job that keeps that behaviour (and under no other) and such a
results file reads, compares and pools with the runs of today's equal job.
"""

LATER_PARAMS = {"vlpso": {"init": "normal", "gene_order": "su", "size_tiebreak": True}}
"""Method -> the parameters it gained after files of it were written, each with the value
that reproduces the behaviour before it existed: VLPSO's ``init`` (Tran et al. 2019,
Sec. IV; before it, every search started from the normal initialisation), ``gene_order``
(before it, every search ordered the genes by symmetric uncertainty, Sec. III-A) and
``size_tiebreak`` (before it, fewer genes broke every tie in fitness, Xue et al. 2014)."""


def with_later_params(stored):
    """``stored`` (a mapping with the method's ``algorithm`` and its ``params``: a checkpoint's
    identity, a results file's attributes) with the :data:`LATER_PARAMS` of its method that
    its ``params`` lack filled in; the same object when it lacks none (or holds no params)."""
    later = LATER_PARAMS.get(stored.get("algorithm"), {})
    params = stored.get("params")
    if not isinstance(params, dict) or not later.keys() - params.keys():
        return stored
    return {**stored, "params": {**later, **params}}

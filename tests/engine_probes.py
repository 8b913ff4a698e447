"""Probes into the fitness engine shared by the test modules (pytest puts ``tests/`` on the path)."""


def counting_decide(evaluator):
    """Count the candidates or tries decided one by one (the bound did not settle them)."""
    calls = []
    decide = evaluator._rows.correct

    def wrapped(*args):
        calls.append(1)
        return decide(*args)

    evaluator._rows.correct = wrapped
    return calls

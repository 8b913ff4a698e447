"""Run ``hpcswarm run`` on every rank with a failure injected on world rank 1 at round 1.

Used by tests/test_mpi_jobs.py under ``mpiexec -n 2``: rank 0 is then waiting in a collective
of the swarm, and the job must still end promptly with rank 1's message.
"""

import sys

from hpcswarm.comm import world_rank
from hpcswarm.swarm.engine.evaluation import EvaluationService


def main():
    settle = EvaluationService.settle
    rounds = []

    def failing_settle(self):  # pso-lsrg settles once per round: round 0 is the first call
        rounds.append(len(rounds))
        if world_rank() == 1 and rounds[-1] >= 1:
            raise RuntimeError("injected failure on rank 1")
        return settle(self)

    EvaluationService.settle = failing_settle
    from hpcswarm.__main__ import main as entry

    return entry(["run", "--data", "builtin:srbct", "--algorithm", "pso-lsrg", "--threads", "1",
                  "--param", "n_particles=4", "--param", "n_iterations=50",
                  "--param", "ls_tries=2"])


if __name__ == "__main__":
    sys.exit(main())

"""argparse subcommands, each turned into a plain function call.

Sections below belong to one subcommand each: ``_add_<command>(subparsers)`` declares the
subparser and its options and sets ``run_command=_run_<command>``, which calls into the package;
``SUBCOMMANDS`` at the bottom lists the ``_add_*`` functions in help order. Output to the terminal is written by world rank 0
only, so that ``mpiexec -n N`` prints every line once.
"""

import argparse

from hpcswarm import __version__


def build_parser():
    """The ``hpcswarm`` parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="hpcswarm",
        description="Particle-swarm gene selection on gene-expression matrices, serial or under MPI.",
    )
    parser.add_argument("--version", action="version", version=f"hpcswarm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_command in SUBCOMMANDS:
        add_command(sub)
    return parser


def main(argv=None):
    """Parse ``argv`` and run the chosen subcommand; returns the exit status."""
    args = build_parser().parse_args(argv)
    status = args.run_command(args)
    return 0 if status is None else status


def _print0(*lines):
    from hpcswarm.comm import world_rank

    if world_rank() == 0:
        for line in lines:
            print(line, flush=True)


# --------------------------------------------------------------------------- convert
# (owned by the data layer: hpcswarm/data/)
# --------------------------------------------------------------------------- info
# (owned by the data layer: hpcswarm/data/)
# --------------------------------------------------------------------------- evaluate
# (owned by the fitness engine: hpcswarm/fitness/)
# --------------------------------------------------------------------------- run
# (owned by the search: hpcswarm/swarm/)


SUBCOMMANDS = ()

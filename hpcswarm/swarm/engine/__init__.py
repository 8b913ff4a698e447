"""The engine every method runs on: the loop, the evaluation service and the run's state.

:mod:`~hpcswarm.swarm.engine.loop` is the loop shared by every method (initialise, step until
the :mod:`~hpcswarm.swarm.engine.termination` rule says done);
:mod:`~hpcswarm.swarm.engine.evaluation` scores the subsets a method proposes, through the
replicated archive (:mod:`~hpcswarm.swarm.engine.archived`), the deal of the particles to
the ranks (:mod:`~hpcswarm.swarm.engine.deal`, particles handed over on a new deal by
:mod:`~hpcswarm.swarm.engine.handover`), the exchange between ranks
(:mod:`~hpcswarm.swarm.engine.exchange`), a round's ledger
(:mod:`~hpcswarm.swarm.engine.ledger`) and the trade-off front
(:mod:`~hpcswarm.swarm.engine.front`). The swarm's arrays and random streams are in
:mod:`~hpcswarm.swarm.engine.state`; a round's complete state, for checkpoints, in
:mod:`~hpcswarm.swarm.engine.snapshot` and :mod:`~hpcswarm.swarm.engine.statetree`.
Nothing here knows a method.
"""

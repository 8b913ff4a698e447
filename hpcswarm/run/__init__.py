"""A job: job file, plan and pre-flight, protocols, task farm, checkpoint, lock, progress, stop.

- :mod:`~hpcswarm.run.jobfile`: job files (TOML) checked into a
  :class:`~hpcswarm.run.jobfile.Job`.
- :mod:`~hpcswarm.run.plan` and :mod:`~hpcswarm.run.preflight`: every check and decision made
  before any computation, with the same verdict on every rank.
- :mod:`~hpcswarm.run.protocols`: the evaluation protocols of the papers
  (:data:`~hpcswarm.run.protocols.PROTOCOLS`) as tasks, and a task's run.
- :mod:`~hpcswarm.run.job`: a job's lifecycle: the plan, the task farm and its hooks,
  checkpoint and stop, results.
- :mod:`~hpcswarm.run.taskfarm`: rank groups and the task counter they share.
- :mod:`~hpcswarm.run.checkpoint`: the checkpoint file of a job.
- :mod:`~hpcswarm.run.joblock`: one job, one writer (a lock file beside the output).
- :mod:`~hpcswarm.run.progress`: progress lines and their JSON-lines file.
- :mod:`~hpcswarm.run.interrupt`: stop requests (SIGTERM, SIGUSR1) and Ctrl-C.
- :mod:`~hpcswarm.run.launch`: a launcher's N tasks that MPI made N worlds of one rank,
  refused before any subcommand reads or writes.
- :mod:`~hpcswarm.run.cost_model` and :mod:`~hpcswarm.run.dry_run`: the time and memory a
  VLPSO search is expected to take, and the plan of a search stated before it runs.

Why together: what exists because many searches run as one job, on many ranks, for hours,
under a batch system: a search (:mod:`hpcswarm.selection`) knows none of it. The selector
reports progress and the command line installs the stop signals and the launch check
through this package, from above.

May import: every package below it: :mod:`hpcswarm.selection`, :mod:`hpcswarm.results`,
:mod:`hpcswarm.signatures`, :mod:`hpcswarm.baselines`, :mod:`hpcswarm.swarm`,
:mod:`hpcswarm.data`, :mod:`hpcswarm.datasets`, :mod:`hpcswarm.params`,
:mod:`hpcswarm.fitness`, :mod:`hpcswarm.store` and the root's foundation (errors, system,
comm). Never the public API (:mod:`hpcswarm.api`, :mod:`hpcswarm.selector`,
:mod:`hpcswarm.inputs`) or the command line.
"""

"""What hpcswarm writes and how: whole files, allowed outputs, encoding tags, typed records.

- :mod:`~hpcswarm.store.atomic`: the one file writer (a temporary name beside the target,
  ``fsync``, rename; a command's several files together or none); one-line errors for write
  faults.
- :mod:`~hpcswarm.store.outputs`: where a command may write: never over one of its inputs,
  over an existing file only with ``--overwrite``, in a folder that takes a new file.
- :mod:`~hpcswarm.store.encoding`: the ``encoding-type`` / ``encoding-version`` tags of every
  stored object, values made plain for JSON and HDF5 attributes.
- :mod:`~hpcswarm.store.records`: typed results (a task's record, its Pareto front, its refined
  subset, its history) and their HDF5 and JSON encodings.
- :mod:`~hpcswarm.store.figures`: the checks every reader makes of a task's stored figures
  (counts, accuracies, sizes) before trusting them: the results file and the checkpoint.
- :mod:`~hpcswarm.store.reading`: what every reader of a file trusts only once checked: an
  array's declared shape and type (before it is read) and JSON's nesting depth.
- :mod:`~hpcswarm.store.settings`: a stored method's parameters as they ran, filled in
  where a file predates a parameter.
- :mod:`~hpcswarm.store.objectives`: the objectives, one row each: how counts become the
  fitness a search maximises, and how a stored fitness is read back as an accuracy.

Why together, and why at the bottom: every file hpcswarm writes, from a converted dataset to
a job's results and checkpoint, goes through these, and every file it reads back through the
last, so that the data layer (which writes datasets) and the swarm (whose history rows are the
records' fields) use them without reaching up; reading a results file reads records and loads
no engine.

May import: the root's foundation only (:mod:`hpcswarm.errors`, :mod:`hpcswarm.system`,
:mod:`hpcswarm.comm`); it uses :mod:`hpcswarm.errors`. Every other package may import it.
"""

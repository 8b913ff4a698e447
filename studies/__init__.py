"""Method-choice studies: the measurements that the defaults of hpcswarm cite as their reason.

Each study is one module, run from the repository root as ``python -m studies.NAME`` (under
``mpiexec`` where its docstring says so); its docstring says what it compares, on which data,
and the rule that reads the figures. A study imports the installed package, ``hpcswarm``,
and calls its Python functions (never the command line with argument strings); what two
studies share is in :mod:`studies.design_sets`, never imported from another study.

- :mod:`studies.study_prune`: the pruning rules on planted-signal data (a known answer).
- :mod:`studies.study_wine`: how often CBPSO and PSO-LSRG reach the exhaustive optimum.
- :mod:`studies.study_refine`: which refinement of PSO-LSRG's subsets holds from fold to fold
  (Tran et al.'s Experiment II on the design sets).
- :mod:`studies.study_relevance_variants`: ``relevance``'s cut, statistic and order beside
  their alternatives, on the searches :mod:`studies.study_refine` cached.
- :mod:`studies.study_signature`: the rule that chose the default signature.
- :mod:`studies.study_peers`: the default signature beside scikit-learn's selectors.
- :mod:`studies.study_vlpso_default`: the rule that kept VLPSO's settings (the paper's text
  against its authors' code).
- :mod:`studies.srbct_pso_lsrg`: a reproduction of Tran et al. (2016), PSO-LSRG on SRBCT.

``tests/test_studies.py`` runs each of them on tiny data. Speed benchmarks are in
``benchmarks/``.
"""

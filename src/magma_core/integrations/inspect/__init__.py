"""A MAGMA benchmark suite as an Inspect AI task (optional extra ``magma[inspect]``).

::

    inspect eval "$(python -m magma_core.integrations.inspect)" -T suite=suites/smoke \\
        --model openai-api/local/MODEL --epochs 2      # LOCAL_BASE_URL, LOCAL_API_KEY

- :mod:`.mapping`: what maps to what (samples, tools, messages, verdicts, pass^k), plain data,
  no Inspect import;
- :mod:`.episodes`: the MAGMA side, a suite's trials played through the live environment
  (:class:`~magma_core.rl.TrainingEnv`) over the one engine, no Inspect import;
- :mod:`.task` (``magma_suite``), :mod:`.solver` (``magma_agent``) and :mod:`.scorers`
  (``magma_verdict``, ``magma_stages``, ``magma_budget``, the ``pass_hat`` reducer): the
  Inspect objects; they import ``inspect_ai``.

The guide is ``docs/guides/inspect.md``. ``python -m magma_core.integrations.inspect`` prints
the task file's path, for ``inspect eval``.
"""

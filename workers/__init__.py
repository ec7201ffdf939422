"""The judging workers: a Celery app with one queue per device kind, the task that
judges one run, the reaper, and the `opjudge serve` / `opjudge worker` commands.

judge/ knows nothing of this package; the API reaches it only through the
`api.dispatch.RunDispatcher` seam.
"""

"""Grading a class: `viewcopy grade`'s local pool of workers (`grade`, each process in `worker`),
each hand-in's outcome and the record (`record`), and on a Dask cluster the coordinator
(`cluster`), what travels (`task`) and the worker's side (`remote`)."""

"""nbgrader plug-ins: the grader's own verdict, restored cells, feedback, the output cap, and the
sandboxed kernel every graded notebook runs in."""

"""The instructor's own: the master's solution (`master`, named by the master notebook: never part
of the students' API)."""

"""The class report of a graded course: its numbers (`build`) and its CSV and figures (`files`)."""

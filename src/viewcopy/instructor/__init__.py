"""What an instructor runs on a course: viewcopy grade, the class report, the demo and its
synthetic class."""

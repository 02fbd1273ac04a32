"""The demo: a whole nbgrader cycle (`cycle`) on a synthetic class (`synthetic`, what it writes
for the five in `answers`)."""

"""Questions 21-25, graded by hand: answers grouped by what they say (`groups`), read from a graded
course (`questions`), a group's grade written once for all its members (`grades`), and the
notebook's widget board (`board`)."""

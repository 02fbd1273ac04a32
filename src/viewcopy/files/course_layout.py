"""The names of a course folder's entries, as nbgrader and the package lay them out, spelled here
alone. `course.folder.Course` joins them onto a course; the hub's permissions and the lock's check
for the master's folder read them here, in the lowest layer, a module that imports nothing (a
student's kernel imports it)."""

CONFIG_FILE = "nbgrader_config.py"
"""The course's nbgrader config, which every command reads (`course.assignment.course_config`)."""
SOURCE = "source"
RELEASE = "release"
SUBMITTED = "submitted"
AUTOGRADED = "autograded"
FEEDBACK = "feedback"
GRADE_LOGS = "grade_logs"
"""Where `viewcopy grade` and `viewcopy five` keep their records, a folder an assignment."""
LMS = "lms"
"""The course's LMS files: the registration, the tool's private key, the link, the journal."""
GRADEBOOK_FILE = "gradebook.db"
"""nbgrader's default gradebook, a SQLite file (the gradebook unless the config names another)."""
TIMESTAMP = "timestamp.txt"
"""The hand-in's time, as `nbgrader collect` writes it into a submitted folder (and autograde
copies into the autograded one)."""

COURSE_DATA = (
    SOURCE,
    RELEASE,
    SUBMITTED,
    AUTOGRADED,
    FEEDBACK,
    GRADE_LOGS,
    LMS,
    GRADEBOOK_FILE,
)
"""What a course folder holds beyond its config, none of it for a student's code or account: the
master and its release as generated, every hand-in and its grading, the grading records, the LMS's
files (the tool's key) and the gradebook."""

"""The LMS: LTI 1.3 registration, the tool's key, the course's link to its LMS context, grade
passback (AGS) and the roster (NRPS), and the LMS's own import files.

A course keeps its LMS files in `<course>/lms/`: `registration.json` (what the LMS gave),
`tool_key.pem` (the course's private key), `link.json` (what launches told) and `journal.jsonl`
(what `viewcopy lms push` sent).
"""

"""The lock: predictions written before looking, kept so that grading can prove it.

One record per hand-in (`record`) holds a lock for every part the student predicts, each the
fingerprint of its answers under one canonical JSON (`canonical`). One flow locks and reveals any
part (`flow`), with the course's lock service when it runs one: its client (`client`, standard
library only, for student kernels), the service (`service`), its data folder (`store`) and the
receipts it signs (`receipts`). Grading judges a lock with `judge`.
"""

"""The lab's content and policy: the twenty, the variants and the five; reading and locking
predictions; the twenty measured; which predictions are right."""

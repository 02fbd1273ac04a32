"""The synthetic students' kernels: what each one's environment holds."""

from __future__ import annotations

from viewcopy.demo.synthetic import Student, hand_in_environment
from viewcopy.sandbox.limits import THREADS


def test_a_kernel_gets_its_share_of_threads_and_the_student_s_own_variables(monkeypatch):
    for key in THREADS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("VIEWCOPY_LOCK_SERVICE", "http://instructor")
    student = Student("s", "served", environment={"VIEWCOPY_LOCK_SERVICE": "http://course"})
    shared = hand_in_environment(student, threads=1)
    assert {key: shared[key] for key in THREADS} == dict.fromkeys(THREADS, "1")
    assert shared["VIEWCOPY_LOCK_SERVICE"] == "http://course"  # the student's own wins
    assert not set(THREADS) & set(hand_in_environment(student, threads=None))


def test_an_instructor_s_thread_count_is_kept(monkeypatch):
    for key in THREADS:
        monkeypatch.setenv(key, "3")
    kept = hand_in_environment(Student("s", "alone"), threads=1)
    assert {key: kept[key] for key in THREADS} == dict.fromkeys(THREADS, "3")

# Copyright 2026 The HAL Authors.
"""The sanitizer reports the hal-run checks look for in any output."""

REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
           "WARNING: ThreadSanitizer", "runtime error:")


def sanitizer_problems(text):
    """One problem line per line of |text| that holds a sanitizer's report
    (a report cut short by a process's exit still shows its first line)."""
    return [f"a sanitizer's report: {line}" for line in text.splitlines()
            if any(report in line for report in REPORTS)]

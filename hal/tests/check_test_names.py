#!/usr/bin/env python3
"""Checks the test-case naming rule and the test-list convention.

Every cmocka case is named Rule_Behavior: before the underscore the
contract rule it proves (S2, Q4, K13, ...) or the subject of its program
(Loader, Buffer, Knob), after it what must hold, both in PascalCase. Every
program lists its cases once, in the `tests[]` array of its main, one
CASE(Name) entry each (CASE binds the program's fixture; a case with another
fixture spells the cmocka call out).

Usage: check_test_names.py SOURCE_ROOT
"""
import pathlib
import re
import sys

NAME = re.compile(r"^[A-Z][A-Za-z0-9]*_[A-Z][A-Za-z0-9]*$")
ENTRY = re.compile(
    r"\b(?:CASE|cmocka_unit_test(?:_setup_teardown|_setup|_teardown)?)"
    r"\(\s*([A-Za-z0-9_]+)")
ARRAY = re.compile(r"const struct CMUnitTest (\w+)\[\] = \{(.*?)\n  \};",
                   re.S)


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    problems = []
    programs = 0
    for path in sorted(root.rglob("*.c")):
        if any(part.startswith("build") for part in path.relative_to(root).parts):
            continue
        text = path.read_text(errors="replace")
        if "cmocka_unit_test" not in text:
            continue
        programs += 1
        where = path.relative_to(root)
        arrays = ARRAY.findall(text)
        if len(arrays) != 1 or arrays[0][0] != "tests":
            problems.append(f"{where}: one `tests[]` array expected, found "
                            f"{[a[0] for a in arrays]}")
            continue
        body = arrays[0][1]
        names = [n for n in ENTRY.findall(body) if n != "name"]
        if "CASE(" not in body:
            problems.append(f"{where}: entries are not written CASE(Name)")
        for name in names:
            if not NAME.match(name):
                problems.append(f"{where}: case {name} is not Rule_Behavior")
        for name in set(names):
            if names.count(name) > 1:
                problems.append(f"{where}: case {name} is listed twice")
    for problem in problems:
        print(problem)
    print(f"{programs} test programs checked, {len(problems)} problem(s)")
    return 1 if problems or programs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Two pytest runs of the same tests side by side: one against an old build of
the Python module, one against today's (JUnit XML files, pytest --junitxml).
Prints the counts (fails on the old module and passes on today's; passes on
both; an API the old module did not have yet), the first check each failing
bad-input case broke on the old module, and the old failure of the tests that
carry issue 52's Python items. scripts/old_module_check.sh runs it.

usage: old_module_compare.py OLD.xml TODAY.xml
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

# The tests of issue 52's Python items ("Ctrl-C waits until sample/forward
# return; pathlib.Path refused; TypeErrors that list a whole signature instead
# of naming the argument; mh.Instance() four lines") and the bad-input lines
# (tests/cli/bad_inputs.txt) that carry them.
ISSUE_ITEMS = {
    "Ctrl-C waits until sample/forward return": [
        "test_interrupts::test_ctrl_c_is_answered_within_half_a_second[sample]",
        "test_interrupts::test_ctrl_c_is_answered_within_half_a_second[forward fast]",
        "test_interrupts::test_ctrl_c_is_answered_within_half_a_second[forward reference]",
        "test_interrupts::test_ctrl_c_is_answered_within_half_a_second[learn]",
    ],
    "pathlib.Path refused": [
        "test_basics::test_paths_may_be_pathlike",
        "test_bad_inputs::test_bad_input[line419]",
        "test_bad_inputs::test_bad_input[line510]",
    ],
    "a TypeError listing a whole signature instead of naming the argument": [
        "test_bad_inputs::test_bad_input[line473]",
        "test_bad_inputs::test_bad_input[line437]",
    ],
    "mh.Instance() four lines": ["test_bad_inputs::test_bad_input[line418]"],
}

# An API the old module did not have: a missing attribute, or a builtin without
# the signature inspect reads today.
API_ABSENT = re.compile(r"has no attribute|no signature found")


def load(path):
    """{test id: (outcome, first line of the failure's message)}; the id is
    file::name without the python.tests. prefix."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("classname").rsplit(".", 1)[-1] + "::" + case.get("name")
        bad = next((case.find(t) for t in ("failure", "error") if case.find(t) is not None), None)
        if case.find("skipped") is not None:
            out[name] = ("skipped", case.find("skipped").get("message") or "")
        elif bad is None:
            out[name] = ("passed", "")
        else:
            out[name] = ("failed", (bad.get("message") or "").replace("\n", "\\n"))
    return out


def first_broken_check(message):
    """Which of test_bad_input's checks (in its order) a failure message is from."""
    for pattern, check in [("DID NOT RAISE", "raised nothing"),
                           (r"^AssertionError: .*: \w+: .*\\nassert '\w+' == '\w+'", "another exception type"),
                           ("a multi-line message", "a message of several lines"),
                           ("' not in: ", "the message lacks the fragment"),
                           ("does not begin with mhalearn", "only the 'mhalearn.<call>: ' prefix missing"),
                           ("the folder changed", "the folder changed")]:
        if re.search(pattern, message):
            return check
    return "other: " + message[:120]


def main(old_path, today_path):
    old, today = load(old_path), load(today_path)
    assert set(old) == set(today), "the two runs ran different tests"
    pairs = collections.Counter((old[n][0], today[n][0]) for n in old)
    fixed = [n for n in old if old[n][0] != "passed" and today[n][0] == "passed"]
    absent = [n for n in fixed if API_ABSENT.search(old[n][1])]
    print(f"tests run on both modules: {len(old)}")
    for (o, t), count in sorted(pairs.items()):
        print(f"  old {o:7s} today {t:7s} {count}")
    print(f"fail on the old module, pass on today's: {len(fixed)} "
          f"({len(absent)} of them because the old module lacked the API they call)")
    print(f"pass on both (regression tests, not evidence for the issue): {pairs[('passed', 'passed')]}")
    for name in absent:
        print(f"  API absent: {name}: {old[name][1][:140]}")
    by_file = collections.Counter(n.split("::")[0] for n in fixed)
    both_by_file = collections.Counter(n.split("::")[0] for n in old if (old[n][0], today[n][0]) == ("passed", "passed"))
    for f in sorted(set(by_file) | set(both_by_file)):
        print(f"  {f}: {by_file[f]} fail on old and pass today, {both_by_file[f]} pass on both")
    cases = [n for n in fixed if n.startswith("test_bad_inputs::test_bad_input[")]
    print(f"bad-input cases failing on the old module, by the first check they broke: {len(cases)}")
    for check, count in collections.Counter(first_broken_check(old[n][1]) for n in cases).most_common():
        print(f"  {count:3d}  {check}")
    print("issue 52's Python items: the old failure of each test that carries one")
    for item, names in ISSUE_ITEMS.items():
        print(f"  {item}")
        for name in names:
            print(f"    old {old[name][0]}, today {today[name][0]}: {name}: {old[name][1][:220]}")
    bad = [n for n in old if today[n][0] != "passed"]
    if bad:
        print(f"not passing on today's module: {len(bad)}: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

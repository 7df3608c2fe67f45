"""Run one CPython test module under unittest and write the outcome of every single test.

    rustpython [--plugin NAME ...] run_module.py MODULE OUT

OUT gets one line per test: `OUTCOME<TAB>TEST_ID`, where OUTCOME is ok, fail, error, skip,
xfail (expected failure) or xpass (unexpected success); a failing or erroring subtest is
reported under its own id. A module that cannot be loaded gets the single line
`load-error<TAB>MODULE`. The transparency harness compares these files between a plain run and
a run with a plugin.
"""
import sys
import unittest


class Recorder(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = []

    def _add(self, outcome, test):
        self.outcomes.append((outcome, test.id()))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add("ok", test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add("fail", test)

    def addError(self, test, err):
        super().addError(test, err)
        self._add("error", test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add("skip", test)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._add("xfail", test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._add("xpass", test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._add("fail" if failed else "error", subtest)


def main():
    module, out_path = sys.argv[1], sys.argv[2]
    try:
        suite = unittest.TestLoader().loadTestsFromName(module)
    except Exception as exc:  # the module itself does not load
        with open(out_path, "w") as out:
            out.write(f"load-error\t{module}\t{type(exc).__name__}\n")
        return
    result = Recorder()
    suite.run(result)
    with open(out_path, "w") as out:
        for outcome, test_id in result.outcomes:
            out.write(f"{outcome}\t{test_id}\n")


main()
